"""Tuning sweep of the operators' rows kernel (H200): lanes per thread for a full reduction and for
long rows, each op timed with the interleaved graph timing on cold L2 against reducekit.sum of the
same tensor. kOpsRowsTable in csrc/tuning/tuning.h is written from this output; NOTES.md quotes the run.

    python benchmarks/tune_ops.py [--json OUT.json]
"""
import argparse
import copy
import json
import statistics

import torch

import reducekit
from reducekit.bench import DTYPES, Buffers, time_cuda_graph

# (shape, dim, dtype): a full reduction is one long row; (8192, 8192) rows are 256 or 512 lanes.
CASES = [((2**26,), None, "float32"), ((2**26,), None, "bfloat16"), ((8192, 8192), -1, "float32"),
         ((8192, 8192), -1, "bfloat16")]
# The operators with a costly combine (csrc/cuda/engine/reduce.cuh, kHeavyCombine): the others always
# take one lane per thread.
OPS = {
    "nanmean": lambda v, d: reducekit.nanmean(v, d),
    "var_mean": lambda v, d: reducekit.var_mean(v, d),
    "logsumexp": lambda v, d: reducekit.logsumexp(v, 0 if d is None else d),
    "argmax": lambda v, d: reducekit.argmax(v, d),
}
LPTS = [0, 1, 2, 4, 8, 16]  # 0: the rule in csrc/cuda/engine/shapes.cu (rows_shape)
# --set float64 (kOpsRowsTable's 8-byte row, first swept in session 41): a full reduction and rows of
# 2422 (a sweep case at 0.54x torch: 303 lanes, two blocks a row at one lane a thread), 4096 and 512.
CASES_FLOAT64 = [((2**25,), None, "float64"), ((14691, 2422), -1, "float64"), ((8192, 4096), -1, "float64"),
                 ((65536, 512), -1, "float64"), ((14691, 2422), -1, "float32")]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json", default=None)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--set", default="default", choices=("default", "float64"))
    args = p.parse_args()
    cold = 4 * torch.cuda.get_device_properties(0).L2_cache_size
    rows = []
    for shape, dim, dt in (CASES_FLOAT64 if args.set == "float64" else CASES):
        n = 1
        for s in shape:
            n *= s
        flat = Buffers(n, DTYPES[dt], "cuda", cold)
        shaped = copy.copy(flat)
        shaped.views = [v.view(shape) for v in flat.views]
        sum_us = statistics.median(time_cuda_graph(lambda v: reducekit.sum(v, dim), shaped) for _ in range(args.reps))
        for op, fn in OPS.items():
            res = {}
            for lpt in LPTS:
                reducekit._C._ops_rows_lanes(lpt)
                res[lpt] = statistics.median(time_cuda_graph(lambda v: fn(v, dim), shaped) for _ in range(args.reps))
            reducekit._C._ops_rows_lanes(0)
            best = min(res, key=res.get)
            rows.append({"shape": list(shape), "dim": dim, "dtype": dt, "op": op, "sum_us": sum_us,
                         "us": {str(k): v for k, v in res.items()}, "best": best})
            print(f"{dt:9s} {str(shape):14s} {op:10s} sum {sum_us:6.1f} | rule {res[0]:6.1f} ({res[0] / sum_us:4.2f}x) | "
                  + " ".join(f"{k}:{v:.1f}" for k, v in res.items() if k) + f" | best {best}", flush=True)
        del flat, shaped
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
