"""Named cases with three finishes, in one process on one build: the rule's (a rows step of at most
kFusedRowBlocks blocks finishes in its last block, larger ones in a second launch), the one-launch
finish at any number of blocks (`_dims_fused_row_blocks(1 << 30)`), and two launches always
(`_dims_fused_finish(False)`). Eager and graph times (reducekit/bench/timing.py, inputs rotated over
4x the L2), torch's beside them, and whether the three give the same bits (they must: the same
tree). For the fused tail of issue 21 (NOTES.md, sessions 48-50), where the sweep's pair
(`sweep_pair.py`) covers only its own draw.

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

KGROUP_SLOTS = 64  # csrc/cuda/launchers.h: kGroupSlots, the stream slots with counters for the one-launch finish

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
              ("sum", "float64", [3265329], [0]),
              # Welford within the bound: the fused kernel's launch bounds (session 49's branch)
              ("var_mean", "float32", [1 << 19], [0]), ("var_mean", "float32", [1 << 20], [0]),
              ("var_mean", "float32", [4, 1 << 18], [1]), ("var_mean", "float64", [1 << 19], [0])],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", choices=tuple(CASE_SETS), default="welford")
    ap.add_argument("--budget", type=float, default=0.05, help="seconds of eager timing per contender and case")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    head = ("| op | dtype | shape | dims | rule graph us | fused graph us | two-launch graph us | fused / two | rule / two | "
            "rule eager us | fused eager us | two-launch eager us | torch graph us | same bits |\n"
            "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    modes = {  # name: (one-launch finish allowed, the rows step's bound on it; 0 = kFusedRowBlocks)
        "rule": (True, 0),
        "fused": (True, 1 << 30),
        "two": (False, 0),
    }
    for op, dtype, shape, dims in CASE_SETS[args.cases]:
        case = {"op": op, "dtype": dtype, "shape": shape, "dims": dims, "layout": "contiguous"}
        x = make(case, "cuda", 21)
        ours, theirs = calls(case)
        eager, graph = cuda_timers(x, args.budget)
        r, outs = dict(case), {}
        for name, (allowed, bound) in modes.items():
            reducekit._C._dims_fused_finish(allowed)
            reducekit._C._dims_fused_row_blocks(bound)
            try:
                outs[name] = ours(x)
                r[f"{name}_graph_us"], r[f"{name}_eager_us"] = graph(ours), eager(ours)
            finally:
                reducekit._C._dims_fused_finish(True)
                reducekit._C._dims_fused_row_blocks(0)
        r["torch_graph_us"] = graph(theirs)
        # Each graph capture takes a stream slot, and only the first KGROUP_SLOTS have counters:
        # past them every finish takes two launches, and "rule" and "fused" time nothing fused.
        r["slots_used"] = reducekit._C._single_pass_slots(torch.cuda.current_device(), -1)[0]
        if r["slots_used"] >= KGROUP_SLOTS:
            print(f"WARNING: {r['slots_used']} stream slots used (counters in the first {KGROUP_SLOTS}): this row and later ones "
                  "may not have fused; run fewer cases a process", flush=True)
        r["same_bits"] = same_results(outs["rule"], outs["two"]) and same_results(outs["fused"], outs["two"])
        rows.append(r)
        print(f"{op} {dtype} {shape} {dims}: rule {r['rule_graph_us']:.2f} / fused {r['fused_graph_us']:.2f} / two "
              f"{r['two_graph_us']:.2f} us (graph), eager {r['rule_eager_us']:.2f} / {r['fused_eager_us']:.2f} / "
              f"{r['two_eager_us']:.2f}, torch {r['torch_graph_us']:.2f}, same bits {r['same_bits']}", flush=True)
        env = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cases": args.cases, "rows": rows}
        with open(os.path.join(args.out, "fused_pair.json"), "w") as f:
            json.dump(env, f, indent=1)
        with open(os.path.join(args.out, "fused_pair.md"), "w") as f:
            f.write(f"{env['device']}, torch {env['torch']}\n\n{head}\n")
            for q in rows:
                f.write(f"| {q['op']} | {q['dtype']} | {tuple(q['shape'])} | {q['dims']} | {q['rule_graph_us']:.2f} | "
                        f"{q['fused_graph_us']:.2f} | {q['two_graph_us']:.2f} | {q['fused_graph_us'] / q['two_graph_us']:.3f} | "
                        f"{q['rule_graph_us'] / q['two_graph_us']:.3f} | {q['rule_eager_us']:.2f} | {q['fused_eager_us']:.2f} | "
                        f"{q['two_eager_us']:.2f} | {q['torch_graph_us']:.2f} | {q['same_bits']} |\n")
    return 0 if all(r["same_bits"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
