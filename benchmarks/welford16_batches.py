"""Why CUDA's 16-bit var/std columns can differ from the CPU's in the last output bit (session 62).

CUDA's columns kernel enters a lane of G = 32 rows of 16-bit values as two batches of 16
(reduce.cuh: column_lane, kColumnBatch = 16 for Welford), each run through Welford::lane and the
two combined; the CPU (and CUDA's rows kernel) run the lane's 32 values through Welford::lane at
once. The two differ in the float64 accumulator's low bits; a 16-bit output hides that but where
the variance lies near a rounding boundary. This script emulates both orders in NumPy (float32
lane arithmetic, float64 merges, engine/reduce_ops.h's Welford), checks the 32-value emulation
against reducekit's CPU result bit for bit, and counts the columns whose bfloat16 (float16)
output the two orders give differently, for the shapes of tests/test_ops.py's WIDE_CASES.

    python benchmarks/welford16_batches.py --out benchmarks/results/cpu/s62_welford16_batches
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import reducekit  # noqa: E402

f32, f64 = np.float32, np.float64


def lane(v):
    """Welford::lane over the rows of v (rows x columns, float32): (mean, m2, n) per column."""
    c = v[0]
    s = np.zeros(v.shape[1], f32)
    for k in range(v.shape[0]):
        s = (s + (v[k] - c)).astype(f32)
    ms = (s / f32(v.shape[0])).astype(f32)
    m2 = np.zeros(v.shape[1], f32)
    for k in range(v.shape[0]):
        d = ((v[k] - c).astype(f32) - ms).astype(f32)
        m2 = (d.astype(f64) * d.astype(f64) + m2.astype(f64)).astype(f32)  # float32 fma (d * d exact in float64)
    return c.astype(f64) + ms.astype(f64), m2.astype(f64), v.shape[0]


def combine(a, b):
    n = a[2] + b[2]
    d = b[0] - a[0]
    fb = 0.5 if a[2] == b[2] else b[2] / n
    corr = d * d * f64(a[2]) * fb
    mean = (np.longdouble(d) * np.longdouble(fb) + np.longdouble(a[0])).astype(f64)  # fma(d, fb, a.mean)
    return mean, a[1] + b[1] + corr, n


def tree(leaves):
    """The perfect pairwise tree over the lanes (identity padding: a missing right child)."""
    while len(leaves) > 1:
        leaves = [combine(leaves[i], leaves[i + 1]) if i + 1 < len(leaves) else leaves[i] for i in range(0, len(leaves), 2)]
    return leaves[0]


def variance(v, batch):
    """var over the rows of v: lanes of 32 rows, each lane's rows in runs of `batch` merged in order."""
    lanes = []
    for l0 in range(0, v.shape[0], 32):
        lv = v[l0:l0 + 32]
        runs = [lane(lv[b:b + batch]) for b in range(0, lv.shape[0], batch)]
        acc = runs[0]
        for r in runs[1:]:
            acc = combine(acc, r)
        lanes.append(acc)
    _, m2, n = tree(lanes)
    return m2 / (n - 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=62)
    args = ap.parse_args()
    g = torch.Generator().manual_seed(args.seed)
    rows = []
    # (R, C) of the columns cases (WIDE_CASES over dim 0 and the R of the others), mean 7, spread 3.
    for dt in (torch.bfloat16, torch.float16):
        for R, C in ((11, 15005), (300, 517), (37, 771), (4097, 45), (300, 18), (33, 70000), (10, 281600), (153, 20000)):
            x = (torch.randn(R, C, generator=g, dtype=torch.float64) * 3 + 7).to(dt)
            v = x.float().numpy()
            cpu = reducekit.var(x, 0)
            e32, e16 = (torch.from_numpy(variance(v, b)).to(dt) for b in (32, 16))
            same = lambda a, b: int((a.view(torch.int16) != b.view(torch.int16)).sum())  # noqa: E731
            rows.append({"dtype": str(dt).split(".")[1], "R": R, "C": C, "emulated_32_vs_cpu": same(e32, cpu),
                         "batches_16_vs_32": same(e16, e32)})
            print(rows[-1], flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "welford16_batches.json"), "w") as f:
        json.dump({"seed": args.seed, "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
