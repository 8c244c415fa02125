"""CPU reductions over leading dims (columns) and short rows: reducekit beside torch, and two builds
of reducekit beside each other (issue 21's small CPU cases).

    python benchmarks/cpu_columns.py --build new=. --build base=/tmp/base [--rounds 3] \
        [--out benchmarks/results/cpu] [--set rows]

Each round starts one fresh Python process per build, in turn (new, base, new, base, ...), so that
drift on the machine touches every build alike. A process times every case (50 warm-up calls, then
the median of 300) for reducekit and for torch's same call. The report gives, per case, the median
over rounds of each build's time, torch's time (from the first build's processes), and the ratios.
Writes cpu_columns.md and .json (--set rows: the operators' rows loop, cpu_rows.md and .json).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (name, shape, reducekit call, torch call): the columns loops (dim 0 of a 2-d tensor) of every
# operator family, the three slow cases first, and a few short-row and large cases.
# --set rows: the operators' rows loop (the reduced dim last, and whole tensors), non-batched
# operators first (their lanes run kJoint at a time), then batched ones (unchanged: a control).
ROWS_CASES = r"""
CASES = [
    ("amax (1000, 4096) dim 1", (1000, 4096), lambda a: rk.amax(a, 1), lambda a: torch.amax(a, 1)),
    ("amax (107, 36, 596) float64, all", (107, 36, 596), lambda a: rk.amax(a.double()), lambda a: torch.amax(a.double())),
    ("mean (1000, 4096) dim 1", (1000, 4096), lambda a: rk.mean(a, 1), lambda a: torch.mean(a, 1)),
    ("mean (2^22,) all", (2**22,), lambda a: rk.mean(a), lambda a: torch.mean(a)),
    ("vector_norm (1000, 4096) dim 1", (1000, 4096), lambda a: rk.linalg.vector_norm(a, 2, 1), lambda a: torch.linalg.vector_norm(a, 2, 1)),
    ("count_nonzero (1000, 4096) dim 1", (1000, 4096), lambda a: rk.count_nonzero(a, 1), lambda a: torch.count_nonzero(a, 1)),
    ("nanmean (1000, 4096) dim 1", (1000, 4096), lambda a: rk.nanmean(a, 1), lambda a: torch.nanmean(a, 1)),
    ("amin (300, 333) dim 1", (300, 333), lambda a: rk.amin(a, 1), lambda a: torch.amin(a, 1)),
    ("var_mean (1000, 4096) dim 1 (batched)", (1000, 4096), lambda a: rk.var_mean(a, 1), lambda a: torch.var_mean(a, 1)),
    ("logsumexp (1000, 4096) dim 1 (batched)", (1000, 4096), lambda a: rk.logsumexp(a, 1), lambda a: torch.logsumexp(a, 1)),
]
"""

CASES = r"""
CASES = [
    ("amax (10, 775) dim 0", (10, 775), lambda a: rk.amax(a, 0), lambda a: torch.amax(a, 0)),
    ("mean (7, 3000) dim 0", (7, 3000), lambda a: rk.mean(a, 0), lambda a: torch.mean(a, 0)),
    ("logsumexp (300, 40) dim 1", (300, 40), lambda a: rk.logsumexp(a, 1), lambda a: torch.logsumexp(a, 1)),
    ("vector_norm (10, 775) dim 0", (10, 775), lambda a: rk.linalg.vector_norm(a, 2, 0), lambda a: torch.linalg.vector_norm(a, 2, 0)),
    ("var_mean (64, 100) dim 0", (64, 100), lambda a: rk.var_mean(a, 0), lambda a: torch.var_mean(a, 0)),
    ("argmax (100, 1000) dim 0", (100, 1000), lambda a: rk.argmax(a, 0), lambda a: torch.argmax(a, 0)),
    ("aminmax (33, 4097) dim 0", (33, 4097), lambda a: rk.aminmax(a, dim=0), lambda a: torch.aminmax(a, dim=0)),
    ("count_nonzero (1000, 512) dim 0", (1000, 512), lambda a: rk.count_nonzero(a, 0), lambda a: torch.count_nonzero(a, 0)),
    ("nanmean (50, 3001) dim 0", (50, 3001), lambda a: rk.nanmean(a, 0), lambda a: torch.nanmean(a, 0)),
    ("logsumexp (2048, 64) dim 0", (2048, 64), lambda a: rk.logsumexp(a, 0), lambda a: torch.logsumexp(a, 0)),
    ("amax (4096, 1024) dim 0", (4096, 1024), lambda a: rk.amax(a, 0), lambda a: torch.amax(a, 0)),
    ("mean (1000, 1000) dim 0", (1000, 1000), lambda a: rk.mean(a, 0), lambda a: torch.mean(a, 0)),
]
"""

TIMER = r"""
import json, statistics, sys, time
sys.path.insert(0, {root!r})
import torch, reducekit as rk
{cases}
torch.manual_seed(21)
out = {{}}
def med(f, a):
    for _ in range(50):
        f(a)
    ts = []
    for _ in range(300):
        t0 = time.perf_counter()
        f(a)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6
for name, shape, ours, theirs in CASES:
    a = torch.randn(shape) + 1.0
    out[name] = {{"ours": med(ours, a), "torch": med(theirs, a)}}
print(json.dumps(out))
"""


def run_build(path: str, cases: str = CASES) -> dict:
    code = TIMER.format(root=os.path.abspath(path), cases=cases)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(path))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", action="append", required=True, help="LABEL=PATH of a repository with a built reducekit")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "cpu"))
    ap.add_argument("--set", choices=("columns", "rows"), default="columns", help="the case list (rows: the operators' rows loop)")
    args = ap.parse_args()
    cases, stem = (CASES, "cpu_columns") if args.set == "columns" else (ROWS_CASES, "cpu_rows")
    builds = [b.split("=", 1) for b in args.build]
    runs = {label: [] for label, _ in builds}
    for _ in range(args.rounds):
        for label, path in builds:
            runs[label].append(run_build(path, cases))
    first = builds[0][0]
    names = list(runs[first][0])
    rows = []
    for n in names:
        row = {"case": n, "torch_us": statistics.median(r[n]["torch"] for r in runs[first])}
        for label, _ in builds:
            row[f"{label}_us"] = statistics.median(r[n]["ours"] for r in runs[label])
        rows.append(row)
    import torch
    res = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "torch": torch.__version__,
           "threads": torch.get_num_threads(), "cpus": os.cpu_count(), "rounds": args.rounds, "builds": dict(builds),
           "rows": rows}
    labels = [label for label, _ in builds]
    lines = [f"# CPU {'columns and short rows' if args.set == 'columns' else 'rows of the operators'} ({res['date']}, torch {res['torch']}, {res['cpus']} CPUs)", "",
             f"Medians over {args.rounds} rounds of fresh processes (builds alternating), each the median of 300 calls after 50; "
             "in us. Generated by `benchmarks/cpu_columns.py`.", "",
             "| case | " + " | ".join(labels) + " | torch | " + " | ".join(f"torch / {x}" for x in labels)
             + (f" | {labels[1]} / {labels[0]} |" if len(labels) > 1 else " |"),
             "|---|" + "---:|" * (2 * len(labels) + 1 + (1 if len(labels) > 1 else 0))]
    for r in rows:
        cells = [f"{r[f'{x}_us']:.1f}" for x in labels] + [f"{r['torch_us']:.1f}"] + [f"{r['torch_us'] / r[f'{x}_us']:.2f}" for x in labels]
        if len(labels) > 1:
            cells.append(f"{r[f'{labels[1]}_us'] / r[f'{labels[0]}_us']:.2f}")
        lines.append(f"| {r['case']} | " + " | ".join(cells) + " |")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, stem + ".json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(args.out, stem + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
