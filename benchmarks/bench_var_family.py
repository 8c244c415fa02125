"""The var family (var, std, var_mean, std_mean) alone, on bench_ops' cases plus a bfloat16 columns
case, timed as bench_ops times them (interleaved CUDA graphs, cold L2, medians; op / reducekit.sum
in the same run). For a check after a change to Welford (engine/reduce_ops.h) without the whole
bench_ops sweep:

    python benchmarks/bench_var_family.py --out DIR     # writes DIR/results_var_family.json

and compare with results_ops.json's rows of the same case, dtype and op.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from reducekit.bench import environment, ops  # noqa: E402

FAMILY = ("var", "std", "var_mean", "std_mean")
CASES = [("full", (ops.FULL_N,), None, "float32"), ("full", (ops.FULL_N,), None, "bfloat16")] + \
        [(label, shape, dim, dt) for label, shape, dim, dt, _ in ops.DIMS_CASES] + \
        [("(2^22, 32) dim 0", (2**22, 32), 0, "bfloat16")]

if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    dev = torch.device("cuda")
    rows = []
    for label, shape, dim, dt in CASES:
        ops._case(label, shape, dim, dt, dev, rows, FAMILY)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results_var_family.json"), "w") as f:
        json.dump({"env": environment(dev), "rows": rows}, f, indent=1)
    for r in rows:
        g = r["graph_us"]
        print(f"{r['case']:22} {r['dtype']:9} {r['op']:9} ours {g['reducekit']:8.1f} torch {g['torch']:8.1f} "
              f"sum {r['sum_us']:8.1f} op/sum {g['reducekit'] / r['sum_us']:.3f} vs torch {g['torch'] / g['reducekit']:.2f}")
