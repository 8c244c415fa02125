"""Two CPU builds of reducekit on the same cases, in alternating processes (A B A B ...), each case
timed in-process (median of calls after warm-up, torch's own time beside it): the per-case medians
over the runs, and new/old time ratios. The shapes are the ones session 46's changes reach (rows,
columns, short rows, narrow columns, several reduced dims, nansum), in float64, float32 and bfloat16.

    python benchmarks/cpu_ab.py --old /path/to/old/checkout --new . --runs 3 --out DIR

Each checkout must hold a built reducekit (setup.py build_ext --inplace). Writes DIR/cpu_ab.json
and DIR/cpu_ab.md.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CASES = []
for _dt in ("float64", "float32", "bfloat16"):
    for _op in ("sum", "mean", "nansum"):
        CASES += [(_op, _dt, (2048, 2048), [1], None), (_op, _dt, (2048, 2048), [0], None),
                  (_op, _dt, (1 << 17, 32), [0], None), (_op, _dt, (1 << 17, 32), [1], None),
                  (_op, _dt, (256, 256), [0], None), (_op, _dt, (1000, 100), [0], None),
                  (_op, _dt, (32, 64, 32, 64), [1, 3], None), (_op, _dt, (32, 64, 32, 64), [0, 2], None),
                  (_op, _dt, (64, 28, 25, 14, 7), [0, 1, 3, 4], [0, 4, 1, 2, 3])]
    CASES += [("vector_norm", _dt, (2048, 2048), [1], None), ("amax", _dt, (32, 64, 32, 64), [1, 3], None),
              ("logsumexp", _dt, (32, 64, 32, 64), [1, 3], None), ("var_mean", _dt, (32, 64, 32, 64), [1, 3], None)]
# --cases outmap (session 47): results whose kept dims lie in another order in memory (a
# channels_last view over N; a reversed (A, 3 or 96, B) over its middle dim), which the operators'
# loops write in place through the output map instead of a strided result and a copy.
OUTMAP_CASES = []
for _dt in ("float64", "float32", "bfloat16"):
    OUTMAP_CASES += [("mean", _dt, (64, 48, 48, 128), [0], [0, 3, 1, 2]), ("var_mean", _dt, (64, 48, 48, 128), [0], [0, 3, 1, 2]),
                     ("amax", _dt, (512, 96, 100), [1], [2, 1, 0]), ("logsumexp", _dt, (2000, 3, 700), [1], [2, 1, 0])]

# --cases tail (session 48): contiguous rows whose lanes (64 bytes of values each) are not a
# multiple of 8, of the sum-like operators: the lanes left after the AVX2 blocks, and each row's
# partial last lane, which joint_lanes now takes as one padded block (the sweep's vector_norm
# bfloat16 (973, 740) at 0.17x torch); rows of a multiple of 8 lanes as controls.
TAIL_CASES = []
for _dt, _lens in (("bfloat16", (740, 1175, 7411, 1024)), ("float32", (740, 69, 4245, 1024)), ("float64", (740, 133, 5645, 1024))):
    for _L in _lens:
        for _op in ("vector_norm", "mean", "sum"):
            TAIL_CASES.append((_op, _dt, (max(1, (1 << 20) // _L), _L), [1], None))

# --cases short (session 52): rows of 17 to 64 lanes, which the short-rows path (8 rows at once,
# every row's tree in vectors) now takes, where they went through joint_lanes a row at a time; rows
# of at most 16 lanes (the path before) as controls.
SHORT_CASES = []
for _dt, _lens in (("bfloat16", (740, 1175, 2000, 500)), ("float32", (500, 300, 1000, 250)), ("float64", (355, 200, 300, 120))):
    for _L in _lens:
        for _op in ("vector_norm", "mean"):
            SHORT_CASES.append((_op, _dt, (max(1, (1 << 21) // _L), _L), [1], None))

# --cases columns (session 55): columns of the map-reduce operators (joint_columns: four vectors of
# a row at a time) and of bool and integer amax and amin (whole columns), among them the CPU
# sweep's columns cases below torch; a case with few columns (under four vectors) as a control.
COLUMN_CASES = [("amax", "float64", (96, 40, 112), [1], None), ("amax", "float32", (96, 40, 112), [1], None),
                ("mean", "float32", (25, 32, 4245), [0], None), ("mean", "float64", (608, 417), [0], None),
                ("mean", "float32", (18984, 246), [0], None), ("mean", "bfloat16", (2048, 2048), [0], None),
                ("vector_norm", "float32", (4096, 1024), [0], None), ("mean", "float64", (76, 72, 35), [2], None),
                ("mean", "float64", (1 << 17, 12), [0], None),
                ("amax", "int32", (644, 612), [0], None), ("amax", "int8", (57, 21, 24, 132), [1, 2], None),
                ("amin", "int8", (4096, 4096), [0], None), ("amax", "int32", (1 << 16, 20), [0], None),
                ("amax", "bool", (2000, 3000), [0], None)]

# --cases lse_short (session 56): logsumexp rows of at most 4 lanes (64 bytes of values a lane), several
# rows as the lanes of a block a lane (lse_short_rows), among them the CPU sweep's worst case; rows
# of 5 lanes as controls.
LSE_SHORT_CASES = [("logsumexp", "float64", (10, 28, 29, 23, 7), [4], None), ("logsumexp", "float64", (1 << 18, 8), [1], None),
                   ("logsumexp", "float64", (1 << 18, 3), [1], None), ("logsumexp", "float32", (1 << 18, 16), [1], None),
                   ("logsumexp", "float32", (1 << 18, 9), [1], None), ("logsumexp", "bfloat16", (1 << 18, 32), [1], None),
                   ("logsumexp", "float16", (1 << 18, 5), [1], None),
                   ("logsumexp", "float64", (1 << 17, 9), [1], None), ("logsumexp", "float32", (1 << 17, 17), [1], None),
                   ("logsumexp", "float64", (1 << 16, 32), [1], None), ("logsumexp", "float32", (1 << 16, 50), [1], None),
                   ("logsumexp", "bfloat16", (1 << 16, 100), [1], None),
                   ("logsumexp", "float64", (1 << 16, 33), [1], None), ("logsumexp", "float32", (1 << 16, 70), [1], None)]

# --cases lse_mid (session 57): logsumexp rows of 5 to 8 lanes (lse_short_rows up to 8 lanes), whole
# and partial last lanes; rows of 9 lanes as controls.
LSE_MID_CASES = [("logsumexp", "float64", (1 << 16, 33), [1], None), ("logsumexp", "float64", (1 << 16, 48), [1], None),
                 ("logsumexp", "float64", (1 << 16, 61), [1], None), ("logsumexp", "float64", (1 << 16, 64), [1], None),
                 ("logsumexp", "float32", (1 << 16, 70), [1], None), ("logsumexp", "float32", (1 << 16, 100), [1], None),
                 ("logsumexp", "float32", (1 << 16, 128), [1], None), ("logsumexp", "bfloat16", (1 << 15, 200), [1], None),
                 ("logsumexp", "float16", (1 << 15, 250), [1], None),
                 ("logsumexp", "float64", (1 << 16, 72), [1], None), ("logsumexp", "float32", (1 << 16, 144), [1], None)]

# --cases small_columns (session 59): sum over dim 0 of R x C matrices, 4 MiB each: 1 to 16 rows
# (dims_cpu.cpp's few_rows_chunk: each column vector's lanes read from the rows, the tree in
# registers), 17 to 64 rows (the lane array in blocks that fit L1 where the accumulator is wider than
# the input), 65 to 128 rows as controls (as before); the sweep's (25, 32, 4245) and (61, 9948) over 0.
SMALL_COLUMN_CASES = []
for _dt, _elem in (("float64", 8), ("float32", 4), ("bfloat16", 2)):
    for _R in (1, 2, 3, 5, 8, 12, 16, 17, 25, 33, 48, 64, 65, 96, 128):
        SMALL_COLUMN_CASES.append(("sum", _dt, (_R, (4 << 20) // (_R * _elem)), [0], None))
SMALL_COLUMN_CASES += [("sum", "float32", (25, 32, 4245), [0], None), ("sum", "float64", (61, 9948), [0], None),
                       ("sum", "float16", (8, 1 << 18), [0], None), ("sum", "float32", (16, 4096), [0], None)]

# --cases NAME: the list, and the session that added it (the help text is made from this table).
CASE_LISTS = {"s46": CASES, "outmap": OUTMAP_CASES, "tail": TAIL_CASES, "short": SHORT_CASES, "columns": COLUMN_CASES,
              "lse_short": LSE_SHORT_CASES, "lse_mid": LSE_MID_CASES, "small_columns": SMALL_COLUMN_CASES}
CASE_SESSIONS = {"s46": 46, "outmap": 47, "tail": 48, "short": 52, "columns": 55, "lse_short": 56, "lse_mid": 57, "small_columns": 59}
assert set(CASE_SESSIONS) == set(CASE_LISTS), "every case list names its session"


def case_name(c) -> str:
    op, dt, shape, dims, perm = c
    return f"{op} {dt} {tuple(shape)} over {tuple(dims)}" + (f" permuted {tuple(perm)}" if perm else "")


def child(out: str, budget: float, cases: list, threads: int = 2) -> None:
    import torch
    import reducekit
    torch.set_num_threads(threads)

    def t(f):
        f(), f()
        ts, t0 = [], time.perf_counter()
        while time.perf_counter() - t0 < budget or len(ts) < 5:
            a = time.perf_counter()
            f()
            ts.append(time.perf_counter() - a)
        return statistics.median(ts) * 1e6

    res = {}
    for c in cases:
        op, dt, shape, dims, perm = c
        g = torch.Generator().manual_seed(46)
        x = (torch.randn(shape, generator=g, dtype=torch.float64) + 0.5).to(getattr(torch, dt))
        if perm:
            x = x.permute(perm)
        fn = {"vector_norm": (lambda m: lambda: m.linalg.vector_norm(x, 2, dims))}.get(op, lambda m: lambda: getattr(m, op)(x, dims))
        res[case_name(c)] = {"ours_us": t(fn(reducekit)), "torch_us": t(fn(torch))}
    with open(out, "w") as f:
        json.dump(res, f)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--budget", type=float, default=0.3, help="seconds of calls per case and contender")
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", choices=tuple(CASE_LISTS), default="s46",
                    help="the case list, by the session that added it: " + ", ".join(f"{k} ({v})" for k, v in CASE_SESSIONS.items()))
    ap.add_argument("--threads", type=int, default=2, help="torch's threads in each process (1: the kernels alone, "
                    "where another process holds the cores and a parallel region would wait for a second thread)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    cases = CASE_LISTS[args.cases]
    if args.child:
        return child(args.child, args.budget, cases, args.threads)
    os.makedirs(args.out, exist_ok=True)
    runs = {"old": [], "new": []}
    for i in range(args.runs):
        for side in ("old", "new"):
            path = os.path.join(args.out, f"run_{side}_{i}.json")
            env = dict(os.environ, PYTHONPATH=os.path.abspath(getattr(args, side)))
            subprocess.run([sys.executable, os.path.abspath(__file__), "--old", "-", "--new", "-", "--out", "-", "--child", path,
                            "--budget", str(args.budget), "--cases", args.cases, "--threads", str(args.threads)],
                           env=env, check=True)
            with open(path) as f:
                runs[side].append(json.load(f))
            os.remove(path)
    rows = []
    for c in cases:
        k = case_name(c)
        med = {s: {m: statistics.median(r[k][m] for r in runs[s]) for m in ("ours_us", "torch_us")} for s in runs}
        rows.append({"case": k, "old_us": med["old"]["ours_us"], "new_us": med["new"]["ours_us"],
                     "new_over_old": med["new"]["ours_us"] / med["old"]["ours_us"],
                     "torch_over_old": med["old"]["torch_us"] / med["old"]["ours_us"],
                     "torch_over_new": med["new"]["torch_us"] / med["new"]["ours_us"]})
    res = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "runs": args.runs, "budget_s": args.budget, "cases": args.cases,
           "threads": args.threads, "old": os.path.abspath(args.old), "new": os.path.abspath(args.new), "rows": rows}
    with open(os.path.join(args.out, "cpu_ab.json"), "w") as f:
        json.dump(res, f, indent=1)
    lines = [f"# CPU A/B ({res['date']}, {args.runs} alternating runs a build, {args.threads} thread{'s' if args.threads > 1 else ''})", "",
             "Median over the runs of each case's in-process median; torch's time taken in the same process as each build's.", "",
             "| case | old us | new us | new / old | torch / old | torch / new |", "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['case']} | {r['old_us']:.1f} | {r['new_us']:.1f} | {r['new_over_old']:.2f} | {r['torch_over_old']:.2f} | "
              f"{r['torch_over_new']:.2f} |" for r in rows]
    with open(os.path.join(args.out, "cpu_ab.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
