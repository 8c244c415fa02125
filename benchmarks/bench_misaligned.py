"""Rows whose length is not a multiple of 16 bytes (issue 21): every row but some starts off a
16-byte boundary. Each case is timed beside its aligned twin (the row length rounded to 16 bytes)
and torch, on the same GPU in the same process.

    python benchmarks/bench_misaligned.py --out benchmarks/results/h100 [--label new]
    python benchmarks/bench_misaligned.py --compare base.json new.json --out DIR   # two builds' runs

Method (reducekit/bench/timing.py): inputs rotated over more than 4x the L2, warm-up, CUDA events;
graph = interleaved CUDA-graph replay (GPU time per call), eager = calls as a user makes them.
Figures are medians in us; "GB/s" is the input's bytes over the graph time; "per byte, mis/aligned"
is the misaligned case's time per byte over its twin's (1.00 = the same speed).
Writes results_misaligned[_LABEL].json and .md. --quick: small shapes, a check of the script.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

import reducekit  # noqa: E402
from reducekit.bench.timing import Buffers, environment, read_ceiling, time_cuda_eager, time_cuda_graph  # noqa: E402

# (op, dtype, rows, row length): the two confirmed cases first, then row ops real models
# run on odd lengths (a 50257-word vocabulary, LayerNorm widths, odd feature counts).
CASES = [
    ("sum", "float16", 540, 323087),
    ("mean", "bfloat16", 16586, 1042),
    ("logsumexp", "float32", 2048, 50257),
    ("argmax", "float32", 1024, 50257),
    ("amax", "float32", 8191, 1023),
    ("var_mean", "bfloat16", 32768, 4099),
    ("vector_norm", "float16", 12345, 777),
    ("sum", "float32", 100003, 333),
    ("sum", "int8", 4099, 40009),
]
QUICK = [("sum", "float16", 54, 3231), ("mean", "bfloat16", 166, 1042), ("argmax", "float32", 64, 2057)]

OPS = {
    "sum": (lambda x: reducekit.sum(x, 1), lambda x: torch.sum(x, 1)),
    "mean": (lambda x: reducekit.mean(x, 1), lambda x: torch.mean(x, 1)),
    "logsumexp": (lambda x: reducekit.logsumexp(x, 1), lambda x: torch.logsumexp(x, 1)),
    "argmax": (lambda x: reducekit.argmax(x, 1), lambda x: torch.argmax(x, 1)),
    "amax": (lambda x: reducekit.amax(x, 1), lambda x: torch.amax(x, 1)),
    "var_mean": (lambda x: reducekit.var_mean(x, 1), lambda x: torch.var_mean(x, 1)),
    "vector_norm": (lambda x: reducekit.linalg.vector_norm(x, 2, 1), lambda x: torch.linalg.vector_norm(x, 2, 1)),
}


def twin_length(length: int, item: int) -> int:
    """The row length rounded down to whole 16-byte vectors (the aligned twin)."""
    per = 16 // item
    return length // per * per


def time_case(op: str, dtype: torch.dtype, rows: int, length: int, cold: int, budget: float) -> dict:
    ours, theirs = OPS[op]
    bufs = Buffers(rows * length, dtype, "cuda", cold)
    res = {"shape": [rows, length], "bytes": rows * length * bufs.views[0].element_size()}
    for who, f in (("reducekit", ours), ("torch", theirs)):
        fn = (lambda g: (lambda v: g(v.view(rows, length))))(f)
        res[f"{who}_graph_us"] = time_cuda_graph(fn, bufs)
        res[f"{who}_eager_us"] = time_cuda_eager(fn, bufs, budget)[0]
    x = bufs.views[-1].view(rows, length)  # a sanity check of the values against torch
    a, b = ours(x), theirs(x)
    if isinstance(a, (tuple, list)):
        a, b = a[0], b[0]
    res["max_abs_diff_vs_torch"] = float((a.double() - b.double()).abs().max()) if a.is_floating_point() else \
        int((a.long() - b.long()).abs().max())
    del bufs
    torch.cuda.empty_cache()
    return res


def run(args) -> dict:
    dev = torch.device("cuda")
    env = environment(dev)
    ceiling = read_ceiling(dev)
    cold = 4 * torch.cuda.get_device_properties(dev).L2_cache_size
    rows_out = []
    for op, dt, rows, length in (QUICK if args.quick else CASES):
        dtype = getattr(torch, dt)
        item = torch.empty((), dtype=dtype).element_size()
        twin = twin_length(length, item)
        mis = time_case(op, dtype, rows, length, cold, 0.3 if args.quick else 1.0)
        ali = time_case(op, dtype, rows, twin, cold, 0.3 if args.quick else 1.0)
        r = {"op": op, "dtype": dt, "misaligned": mis, "aligned": ali}
        for m in ("graph", "eager"):
            r[f"per_byte_mis_over_aligned_{m}"] = (mis[f"reducekit_{m}_us"] / mis["bytes"]) / (ali[f"reducekit_{m}_us"] / ali["bytes"])
            r[f"torch_over_reducekit_{m}"] = mis[f"torch_{m}_us"] / mis[f"reducekit_{m}_us"]
        r["pct_ceiling_graph"] = 100 * mis["bytes"] / (mis["reducekit_graph_us"] * 1e-6) / 1e9 / ceiling["gbps"]
        rows_out.append(r)
        print(f"{op:12s} {dt:9s} {rows}x{length}: graph {mis['reducekit_graph_us']:8.1f} us (aligned twin {ali['reducekit_graph_us']:8.1f}, "
              f"torch {mis['torch_graph_us']:8.1f}) per byte mis/aligned {r['per_byte_mis_over_aligned_graph']:.2f}, "
              f"torch/ours {r['torch_over_reducekit_graph']:.2f}, {r['pct_ceiling_graph']:.0f}% of ceiling", flush=True)
    return {"env": env, "ceiling": ceiling, "label": args.label, "rows": rows_out}


def markdown(res: dict, base: dict | None = None) -> str:
    e = res["env"]
    lines = [f"# Misaligned rows ({e.get('gpu', e.get('device', '?'))}, torch {e.get('torch', '?')})", "",
             f"Read ceiling in this run: {res['ceiling']['gbps']:.0f} GB/s. Medians in us (graph: interleaved CUDA-graph "
             "replay; eager: calls as a user makes them). Generated by `benchmarks/bench_misaligned.py`.", ""]
    head = "| op | dtype | shape | graph | aligned twin | per byte, mis/aligned | torch | torch / ours | % ceiling | eager | torch eager | torch / ours, eager |"
    sep = "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    if base:
        head += " before (graph) | before / now |"
        sep += "---:|---:|"
        prev = {(r["op"], r["dtype"], tuple(r["misaligned"]["shape"])): r for r in base["rows"]}
    lines += [head, sep]
    for r in res["rows"]:
        m, a = r["misaligned"], r["aligned"]
        row = (f"| {r['op']} | {r['dtype']} | {m['shape'][0]}x{m['shape'][1]} | {m['reducekit_graph_us']:.1f} | "
               f"{a['reducekit_graph_us']:.1f} | {r['per_byte_mis_over_aligned_graph']:.2f} | {m['torch_graph_us']:.1f} | "
               f"{r['torch_over_reducekit_graph']:.2f} | {r['pct_ceiling_graph']:.0f}% | {m['reducekit_eager_us']:.1f} | "
               f"{m['torch_eager_us']:.1f} | {r['torch_over_reducekit_eager']:.2f} |")
        if base:
            p = prev.get((r["op"], r["dtype"], tuple(m["shape"])))
            row += (f" {p['misaligned']['reducekit_graph_us']:.1f} | {p['misaligned']['reducekit_graph_us'] / m['reducekit_graph_us']:.2f} |"
                    if p else " - | - |")
        lines.append(row)
    if base:
        lines += ["", f"Before: the build labelled `{base['label']}`, run on the same machine just before (its torch figures: "
                  "see its own file)."]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--compare", nargs=2, metavar=("BASE_JSON", "NEW_JSON"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.compare:
        with open(args.compare[0]) as f:
            base = json.load(f)
        with open(args.compare[1]) as f:
            new = json.load(f)
        text = markdown(new, base)
        path = os.path.join(args.out, "results_misaligned.md")
    else:
        new = run(args)
        stem = "results_misaligned" + (f"_{args.label}" if args.label else "")
        with open(os.path.join(args.out, stem + ".json"), "w") as f:
            json.dump(new, f, indent=1)
        text = markdown(new)
        path = os.path.join(args.out, stem + ".md")
    with open(path, "w") as f:
        f.write(text)
    print(text)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
