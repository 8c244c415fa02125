"""The shortest row method="exact" gives a warp (csrc/cuda/engine/exact.cu, warp_rows_kernel)
rather than the checked float64 path, swept: rows of 64 to 16383 values, 2^25 values in all,
float32, bfloat16 and float16, normal, gradient-like and whole-range data. Each case timed with the
interleaved graph timing on cold L2 (inputs rotated over 4x the L2): `auto`, exact with every row a
warp (reducekit._C._exact_warp_rows_min(1)) and exact with none (2^30: the checked path), and the
two exact results compared bitwise. kExactWarpRowsMinValues in csrc/tuning/tuning.h is set from
this output; NOTES.md quotes the run.

    python benchmarks/tune_exact_rows.py [--json OUT.json]
"""
import argparse
import json
import math

import torch

import reducekit
from reducekit.bench import time_cuda_graph
from reducekit.bench.exact_families import family_data
from reducekit.bench.timing import Rotation, environment

LENGTHS = [64, 128, 256, 512, 1024, 4096, 16383]
DTYPES = ["float32", "bfloat16", "float16"]
FAMILIES = ["normal", "gradient", "wide"]
TOTAL = 2**25


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json", default=None)
    args = p.parse_args()
    dev = torch.device("cuda")
    cold = 4 * torch.cuda.get_device_properties(dev).L2_cache_size
    rows_out = []
    print("| dtype | data | len | rows | auto us | exact warp us | exact checked us | warp / auto | checked / auto | bits |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for dt in DTYPES:
        dtype = getattr(torch, dt)
        for family in FAMILIES:
            for length in LENGTHS:
                rows = TOTAL // length
                x = family_data(family, rows * length, dtype, dev).view(rows, length)
                rot = Rotation(x, cold)
                t = {"auto": time_cuda_graph(lambda v: reducekit.sum(v, 1), rot)}
                res = {}
                for name, n in (("warp", 1), ("checked", 1 << 30)):
                    old = reducekit._C._exact_warp_rows_min(n)
                    try:
                        res[name] = reducekit.sum(x, 1, method="exact")
                        t[name] = time_cuda_graph(lambda v: reducekit.sum(v, 1, method="exact"), rot)
                    finally:
                        reducekit._C._exact_warp_rows_min(old)
                same = bool(torch.equal(res["warp"].view(torch.int16 if dtype.itemsize == 2 else torch.int32),
                                        res["checked"].view(torch.int16 if dtype.itemsize == 2 else torch.int32)))
                rows_out.append({"dtype": dt, "data": family, "len": length, "rows": rows, "graph_us": t, "bits_equal": same})
                print(f"| {dt} | {family} | {length} | {rows} | {t['auto']:.1f} | {t['warp']:.1f} | {t['checked']:.1f} | "
                      f"{t['warp'] / t['auto']:.2f} | {t['checked'] / t['auto']:.2f} | {'equal' if same else 'DIFFER'} |", flush=True)
                del rot, x
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"env": environment(dev), "total": TOTAL, "rows": rows_out}, f, indent=1)
    return 0 if all(r["bits_equal"] for r in rows_out) else 1


if __name__ == "__main__":
    raise SystemExit(main())
