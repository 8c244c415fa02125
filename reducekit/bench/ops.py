"""Benchmark of every torch reduction on reducekit's engine (issue 10) against reducekit's own sum
of the same tensor over the same dims and against torch's op, with the issue's targets. Same
method as bench.py: cold L2 (inputs rotated over more than the L2), CUDA events, medians, every
ratio from figures of the same run; "graph" = interleaved CUDA-graph replay (a foreign kernel
before each call), GPU time only; "eager" = calls back to back as a user makes them.

    python benchmarks/bench_ops.py --out benchmarks/results/h200

writes results_ops.json (every figure) and results_ops.md (tables and target verdicts).
"""
from __future__ import annotations

import json
import math
import os

import torch

import reducekit

from .timing import Buffers, environment, read_ceiling, time_cuda_eager, time_cuda_graph

FILE = "results_ops"
SCRIPT = "bench_ops"  # its command line: benchmarks/bench_ops.py
COLD_BYTES = 4 * 60 * 2**20
R = reducekit


def _ops(dim):
    """(name, reducekit call, torch call) for every op over `dim` (None: the whole tensor)."""
    d = dim
    full = d is None
    one = None if full else d  # argmax/argmin/aminmax/prod take one dim
    lse_dim = 0 if full else d
    return [
        ("mean", lambda x: R.mean(x, d), lambda x: torch.mean(x) if full else torch.mean(x, d)),
        ("prod", lambda x: R.prod(x, one), lambda x: torch.prod(x) if full else torch.prod(x, one)),
        ("amax", lambda x: R.amax(x, () if full else d), lambda x: torch.amax(x, () if full else d)),
        ("amin", lambda x: R.amin(x, () if full else d), lambda x: torch.amin(x, () if full else d)),
        ("aminmax", lambda x: R.aminmax(x, dim=one), lambda x: torch.aminmax(x, dim=one)),
        ("nansum", lambda x: R.nansum(x, d), lambda x: torch.nansum(x) if full else torch.nansum(x, d)),
        ("nanmean", lambda x: R.nanmean(x, d), lambda x: torch.nanmean(x) if full else torch.nanmean(x, d)),
        ("all", lambda x: R.all(x, d), lambda x: torch.all(x) if full else torch.all(x, d)),
        ("any", lambda x: R.any(x, d), lambda x: torch.any(x) if full else torch.any(x, d)),
        ("count_nonzero", lambda x: R.count_nonzero(x, d), lambda x: torch.count_nonzero(x, d)),
        ("var", lambda x: R.var(x, d), lambda x: torch.var(x, d)),
        ("std", lambda x: R.std(x, d), lambda x: torch.std(x, d)),
        ("var_mean", lambda x: R.var_mean(x, d), lambda x: torch.var_mean(x, d)),
        ("std_mean", lambda x: R.std_mean(x, d), lambda x: torch.std_mean(x, d)),
        ("vector_norm", lambda x: R.linalg.vector_norm(x, 2, d), lambda x: torch.linalg.vector_norm(x, 2, d)),
        ("vector_norm(1)", lambda x: R.linalg.vector_norm(x, 1, d), lambda x: torch.linalg.vector_norm(x, 1, d)),
        ("vector_norm(inf)", lambda x: R.linalg.vector_norm(x, math.inf, d), lambda x: torch.linalg.vector_norm(x, math.inf, d)),
        ("vector_norm(3)", lambda x: R.linalg.vector_norm(x, 3, d), lambda x: torch.linalg.vector_norm(x, 3, d)),
        ("logsumexp", lambda x: R.logsumexp(x, lse_dim), lambda x: torch.logsumexp(x, lse_dim)),
        ("argmax", lambda x: R.argmax(x, one), lambda x: torch.argmax(x, one)),
        ("argmin", lambda x: R.argmin(x, one), lambda x: torch.argmin(x, one)),
    ]


def _check_op_table():
    """Every operator of core/op_table.h is timed (a row added without a call here fails at import);
    sum is the reference every op is compared with."""
    timed = {name.split("(")[0] for name, _, _ in _ops(None)}
    table = {t["name"] for t in R._C.op_table()} - {"sum"}
    if timed != table:
        raise ImportError(f"reducekit/bench/ops.py times {sorted(timed - table)} beyond core/op_table.h and misses "
                          f"{sorted(table - timed)}")


_check_op_table()

# (label, shape, dim, dtype, ops to time: None = all) — the table.
DIMS_CASES = [
    ("(8192, 8192) dim -1", (8192, 8192), -1, "bfloat16", None),
    ("(8192, 8192) dim -1", (8192, 8192), -1, "float32", None),
    ("(2^22, 32) dim 0", (2**22, 32), 0, "float32", None),
]
FULL_N = 2**26
SMALL = (2**10, 2**12, 2**14, 2**16, 2**18, 2**20)
# Targets of the issue against torch (speedup = torch time / reducekit time).
VS_TORCH = {("full", "var_mean", "float32"): 1.3, ("full", "logsumexp", "float32"): 6.0, ("full", "count_nonzero", "float32"): 5.0,
            ("(8192, 8192) dim -1", "var_mean", "bfloat16"): 4.0, ("(8192, 8192) dim -1", "amax", "bfloat16"): 2.0}


def _check(name, ours, theirs, x):
    """A sanity check that the timed call computes torch's result (the tests are the judge; a
    float32 product of 2^26 values depends on the order at the percent level, so prod is not)."""
    if name == "prod":
        return
    a = ours(x)
    b = theirs(x)
    a = tuple(a) if isinstance(a, tuple) else (a,)
    b = tuple(b) if isinstance(b, tuple) else (b,)
    for u, v in zip(a, b):
        if u.is_floating_point():
            torch.testing.assert_close(u.float(), v.float(), rtol=2e-2, atol=1e-3, msg=f"{name}")
        else:
            assert torch.equal(u.cpu(), v.cpu()), name


def _case(label, shape, dim, dt, device, rows, only=None):
    dtype = getattr(torch, dt)
    n = math.prod(shape)
    bufs = Buffers(n, dtype, device, COLD_BYTES)
    bufs.views = [v.view(shape) for v in bufs.views]
    sum_fn = (lambda x: R.sum(x)) if dim is None else (lambda x: R.sum(x, dim))
    base = time_cuda_graph(sum_fn, bufs)
    for name, ours, theirs in _ops(dim):
        if only and name not in only:
            continue
        x0 = bufs.views[0]
        if name == "prod":  # a product of random normals under/overflows: values near 1
            xs = Buffers(n, dtype, device, COLD_BYTES)
            xs.views = [(1 + 1e-4 * v).view(shape).to(dtype) for v in xs.views]
            b = xs
        else:
            b = bufs
        try:
            theirs(x0)
        except RuntimeError:
            continue  # torch has no such op for this dtype
        _check(name, ours, theirs, b.views[0])
        row = {"case": label, "dtype": dt, "op": name, "n": n, "sum_us": base,
               "graph_us": {"reducekit": time_cuda_graph(ours, b), "torch": time_cuda_graph(theirs, b)}}
        rows.append(row)
        del b
    del bufs
    torch.cuda.empty_cache()


def run(device=None, budget_s: float = 0.2) -> dict:
    device = torch.device(device or "cuda")
    env = environment(device)
    env["read_ceiling"] = read_ceiling(device)
    rows = []
    for dt in ("float32", "bfloat16"):
        _case("full", (FULL_N,), None, dt, device, rows)
    for label, shape, dim, dt, only in DIMS_CASES:
        _case(label, shape, dim, dt, device, rows, only)
    small = []
    for n in SMALL:
        bufs = Buffers(n, torch.float32, device, COLD_BYTES, max_count=64)
        for name, ours, theirs in _ops(None):
            small.append({"op": name, "n": n, "dtype": "float32",
                          "eager_us": {"reducekit": time_cuda_eager(ours, bufs, budget_s)[0],
                                       "torch": time_cuda_eager(theirs, bufs, budget_s)[0]}})
    return {"env": env, "rows": rows, "small": small}


def targets(run: dict) -> list[dict]:
    out = []
    for r in run["rows"]:
        g = r["graph_us"]
        ratio = g["reducekit"] / r["sum_us"]
        out.append({"target": "op / reducekit.sum, same tensor and dims (graph)", "case": r["case"], "dtype": r["dtype"],
                    "op": r["op"], "value": ratio, "limit": 1.05, "met": ratio <= 1.05})
        need = VS_TORCH.get((r["case"], r["op"], r["dtype"]))
        if need:
            sp = g["torch"] / g["reducekit"]
            out.append({"target": f"speedup vs torch >= {need}x (graph)", "case": r["case"], "dtype": r["dtype"], "op": r["op"],
                        "value": sp, "limit": need, "met": sp >= need})
    for s in run["small"]:
        e = s["eager_us"]
        out.append({"target": "not slower than torch, eager", "case": f"full 2^{int(math.log2(s['n']))}", "dtype": s["dtype"],
                    "op": s["op"], "value": e["reducekit"] / e["torch"], "limit": 1.0, "met": e["reducekit"] <= e["torch"]})
    return out


def markdown(run: dict) -> str:
    env = run["env"]
    ceil = env["read_ceiling"]["gbps"] if isinstance(env.get("read_ceiling"), dict) and "gbps" in env["read_ceiling"] else None
    lines = ["# reducekit benchmark: every torch reduction on the engine (issue 10)", "",
             f"{env.get('gpu', '')}, torch {env.get('torch', '')}, {env.get('date', '')}. Cold L2, CUDA events, medians; "
             "graph = interleaved CUDA-graph replay (GPU time). `sum` = reducekit.sum of the same tensor over the same dims, "
             "in the same run. Speedup = torch time / reducekit time.", ""]
    lines += ["| case | dtype | op | reducekit us | torch us | reducekit.sum us | op / sum | speedup vs torch |"
              + (" % of ceiling |" if ceil else ""),
              "|---|---|---|---:|---:|---:|---:|---:|" + ("---:|" if ceil else "")]
    for r in run["rows"]:
        g = r["graph_us"]
        item = torch.empty((), dtype=getattr(torch, r["dtype"])).element_size()
        pct = f" {r['n'] * item / (g['reducekit'] * 1e-6) / (ceil * 1e9) * 100:.1f} |" if ceil else ""
        lines.append(f"| {r['case']} | {r['dtype']} | {r['op']} | {g['reducekit']:.1f} | {g['torch']:.1f} | {r['sum_us']:.1f} | "
                     f"{g['reducekit'] / r['sum_us']:.3f} | {g['torch'] / g['reducekit']:.2f} |" + pct)
    lines += ["", "## Small sizes, eager (float32, whole tensor): reducekit / torch", "",
              "| op | " + " | ".join(f"2^{int(math.log2(n))}" for n in SMALL) + " |", "|---|" + "---:|" * len(SMALL)]
    by_op = {}
    for s in run["small"]:
        by_op.setdefault(s["op"], {})[s["n"]] = s["eager_us"]["reducekit"] / s["eager_us"]["torch"]
    for op, v in by_op.items():
        lines.append(f"| {op} | " + " | ".join(f"{v[n]:.2f}" for n in SMALL) + " |")
    t = targets(run)
    met = sum(x["met"] for x in t)
    lines += ["", f"## Targets: {met} of {len(t)} met", ""]
    missed = [x for x in t if not x["met"]]
    if missed:
        lines += ["Missed:", ""]
        for x in missed:
            lines.append(f"- {x['target']}: {x['case']} {x['dtype']} {x['op']}: {x['value']:.3f} (limit {x['limit']})")
    return "\n".join(lines) + "\n"


def write(run: dict, out_dir: str) -> list[str]:
    os.makedirs(out_dir, exist_ok=True)
    pj, pm = os.path.join(out_dir, FILE + ".json"), os.path.join(out_dir, FILE + ".md")
    with open(pj, "w") as f:
        json.dump({**run, "targets": targets(run)}, f, indent=1)
    with open(pm, "w") as f:
        f.write(markdown(run))
    return [pj, pm]
