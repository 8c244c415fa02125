"""Named cases with the one-launch finish (split steps finished by their last blocks) and with two
launches (`_dims_fused_finish(False)`), in one process on one build: eager and graph times
(reducekit/bench/timing.py, inputs rotated over 4x the L2), torch's beside them, and whether the
two paths give the same bits (they must: the same tree). For the fused tail of issue 21 (NOTES.md,
sessions 48-49), where the sweep's pair (`sweep_pair.py`) covers only its own draw.

    python benchmarks/fused_pair.py --out DIR [--cases welford]

Writes DIR/fused_pair.json and DIR/fused_pair.md, a row at a time (a run cut short keeps its rows).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reducekit  # noqa: E402
from sweep import calls, cuda_timers, make  # noqa: E402
from tune_columns import same_results  # noqa: E402  (the tests' bitwise equality over one or two outputs)

# Single split rows of at most 64 MiB (the fused rows kernel) of the operators whose fused kernel
# took more registers than the plain one (ptxas, session 49), and controls whose registers are equal.
CASE_SETS = {
    "welford": [
        ("var_mean", "float32", [10420069], [0]),
        ("var_mean", "float32", [4, 2097152], [1]),
        ("logsumexp", "float32", [4, 2097152], [1]),
        ("argmax", "float32", [1 << 23], [0]),
        ("var_mean", "float64", [1 << 21], [0]),
        ("sum", "float64", [3265329], [0]),
    ],
    # One split row of float64 sum from one wave of blocks to many: where the last-block finish
    # starts to cost more than a second launch.
    "waves": [("sum", "float64", [n], [0]) for n in (1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 21, 1 << 22)]
    + [("sum", "float32", [n], [0]) for n in (1 << 18, 1 << 20, 1 << 22)],
    # Both sides of kFusedRowBlocks (512 blocks a rows step): one row and 4 rows of float32 amax
    # (one lane of 16 values a thread, 256 lanes a block), and run 4's cases past it.
    "bound": [("amax", "float32", [1 << 21], [0]), ("amax", "float32", [(1 << 21) + (1 << 16)], [0]),
              ("amax", "float32", [4, 1 << 19], [1]), ("amax", "float32", [4, 1 << 21], [1]),
              ("var_mean", "float32", [4, 2097152], [1]), ("logsumexp", "float32", [4, 2097152], [1]),
              ("argmax", "float32", [1 << 23], [0]), ("var_mean", "float64", [1 << 21], [0]),
              ("sum", "float64", [3265329], [0])],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", choices=tuple(CASE_SETS), default="welford")
    ap.add_argument("--budget", type=float, default=0.05, help="seconds of eager timing per contender and case")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    head = ("| op | dtype | shape | dims | fused graph us | two-launch graph us | fused / two | fused eager us | "
            "two-launch eager us | torch graph us | same bits |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|---|")
    for op, dtype, shape, dims in CASE_SETS[args.cases]:
        case = {"op": op, "dtype": dtype, "shape": shape, "dims": dims, "layout": "contiguous"}
        x = make(case, "cuda", 21)
        ours, theirs = calls(case)
        eager, graph = cuda_timers(x, args.budget)
        r = dict(case)
        reducekit._C._dims_fused_finish(True)
        fused_out = ours(x)
        r["fused_graph_us"], r["fused_eager_us"] = graph(ours), eager(ours)
        reducekit._C._dims_fused_finish(False)
        two_out = ours(x)
        r["two_graph_us"], r["two_eager_us"] = graph(ours), eager(ours)
        reducekit._C._dims_fused_finish(True)
        r["torch_graph_us"] = graph(theirs)
        r["same_bits"] = same_results(fused_out, two_out)
        rows.append(r)
        print(f"{op} {dtype} {shape} {dims}: fused {r['fused_graph_us']:.2f} / two {r['two_graph_us']:.2f} us (graph), "
              f"eager {r['fused_eager_us']:.2f} / {r['two_eager_us']:.2f}, torch {r['torch_graph_us']:.2f}, same bits {r['same_bits']}", flush=True)
        env = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cases": args.cases, "rows": rows}
        with open(os.path.join(args.out, "fused_pair.json"), "w") as f:
            json.dump(env, f, indent=1)
        with open(os.path.join(args.out, "fused_pair.md"), "w") as f:
            f.write(f"{env['device']}, torch {env['torch']}\n\n{head}\n")
            for q in rows:
                f.write(f"| {q['op']} | {q['dtype']} | {tuple(q['shape'])} | {q['dims']} | {q['fused_graph_us']:.2f} | "
                        f"{q['two_graph_us']:.2f} | {q['fused_graph_us'] / q['two_graph_us']:.3f} | {q['fused_eager_us']:.2f} | "
                        f"{q['two_eager_us']:.2f} | {q['torch_graph_us']:.2f} | {q['same_bits']} |\n")
    return 0 if all(r["same_bits"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
