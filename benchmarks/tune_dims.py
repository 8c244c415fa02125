"""Tuning sweep of the dims engine's columns kernel (H200): for each column shape class, time every
(tx0, lanes per thread) pair with the interleaved graph timing on cold L2, against the full sum of
the same bytes, and print the best pair per case. The rule in csrc/cuda/engine/shapes.cu (columns_shape)
is written from this output; NOTES.md quotes the run.

    python benchmarks/tune_dims.py [--dtypes float32 bfloat16 int32] [--json OUT.json]
"""
import argparse
import copy
import json
import statistics

import torch

import reducekit
from reducekit.bench import DTYPES, Buffers, time_cuda_graph

CASES = [((4096, 4096), 0), ((2**22, 32), 0), ((64, 2**20), 0), ((1024, 16384), 0), ((256, 2**16), 0)]


# (tx0, lanes per thread); (0, 0) is the built-in rule. The kernel variants of the 22:4x runs in
# NOTES.md (registers against loads in flight) were compiled in temporarily; this build has one.
CONFIGS = [(0, 0)] + [(tx0, lpt) for tx0 in (8, 32) for lpt in (1, 2, 4, 8)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16", "int32"])
    p.add_argument("--json", default=None)
    args = p.parse_args()
    cold = 4 * torch.cuda.get_device_properties(0).L2_cache_size
    rows = []
    for dt in args.dtypes:
        for shape, dim in CASES:
            n = shape[0] * shape[1]
            flat = Buffers(n, DTYPES[dt], "cuda", cold)
            shaped = copy.copy(flat)
            shaped.views = [v.view(shape) for v in flat.views]
            full = statistics.median(time_cuda_graph(reducekit.sum, flat) for _ in range(3))
            res = {}
            for tx0, lpt in CONFIGS:
                reducekit._C._dims_columns_config(tx0, lpt)
                res[(tx0, lpt)] = statistics.median(time_cuda_graph(lambda v: reducekit.sum(v, dim), shaped) for _ in range(3))
            reducekit._C._dims_columns_config(0, 0)
            best = min(res, key=res.get)
            row = {"dtype": dt, "shape": shape, "full_us": full, "rule_us": res[(0, 0)], "best": best, "best_us": res[best],
                   "all": {f"{k[0]}x{k[1]}": v for k, v in res.items()}}
            rows.append(row)
            print(f"{dt:9s} {str(shape):16s} full {full:7.1f}  rule {res[(0, 0)]:7.1f} ({res[(0, 0)] / full:4.2f}x)  "
                  f"best {best} {res[best]:7.1f} ({res[best] / full:4.2f}x)  | "
                  + " ".join(f"{k[0]}x{k[1]}:{v:.1f}" for k, v in sorted(res.items()) if k != (0, 0)), flush=True)
            del flat, shaped
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows}, f, indent=1, default=str)


if __name__ == "__main__":
    main()
