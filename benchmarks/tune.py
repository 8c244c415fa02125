"""Tuning sweep for `auto`: every compiled single_pass configuration (block, unroll) and grid
against torch.sum and CUB, per dtype and size, timed as the issue's targets are judged (CUDA graph
replay up to 2^22 elements, eager cold-L2 above). Writes tune.json and prints, per cell, the best
configuration and its ratio to torch.sum and CUB. The winners go into csrc/tuning.h, each row with
the figure that chose it.

    python benchmarks/tune.py --out DIR [--dtypes float32 int8 ...] [--sizes 2**12 ...]
"""
import argparse
import json
import os

import torch

import reducekit
from reducekit.bench import GRAPH_MAX_N, Buffers, time_cuda_eager, time_cuda_graph



DTYPE_ENUM = {"bool": "Bool", "uint8": "UInt8", "int8": "Int8", "int16": "Int16", "int32": "Int32", "int64": "Int64",
              "float16": "Float16", "bfloat16": "BFloat16", "float32": "Float32", "float64": "Float64"}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16", "int8", "int32", "float64"])
    p.add_argument("--sizes", nargs="+", type=lambda s: int(eval(s, {"__builtins__": {}})),
                   default=[2**k for k in range(12, 31, 2)])
    p.add_argument("--out", default=".")
    a = p.parse_args()
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    sms = props.multi_processor_count
    cold = 4 * props.L2_cache_size
    grids = [0, sms, 2 * sms, 4 * sms]
    from reducekit.bench import DTYPES

    results = []
    print(f"{'dtype':9} {'N':>6} {'mode':5} {'torch':>9} {'cub':>9} {'default':>9} {'best':>9} {'config':>16} {'best/torch':>10} {'best/cub':>9} {'no PDL':>9}")
    for dname in a.dtypes:
        for n in a.sizes:
            bufs = Buffers(n, DTYPES[dname], dev, cold)
            mode = "graph" if n <= GRAPH_MAX_N else "eager"

            def t(fn):
                return time_cuda_graph(fn, bufs) if mode == "graph" else time_cuda_eager(fn, bufs, 0.15)[0]

            row = {"dtype": dname, "n": n, "mode": mode, "torch": t(torch.sum),
                   "cub": t(lambda x: reducekit.sum(x, method="cub_device")), "auto": t(reducekit.sum), "configs": {}}
            for block, unroll in reducekit._C.single_pass_configs():
                for g in grids:
                    row["configs"][f"{block}x{unroll}@{g}"] = t(lambda x, b=block, u=unroll, g=g: torch.ops.reducekit._single_pass(x, b, u, g))
            best = min(row["configs"], key=row["configs"].get)
            row["best"] = best
            b, rest = best.split("x")
            u, g = rest.split("@")
            row["best_without_pdl"] = t(lambda x: torch.ops.reducekit._single_pass(x, int(b), int(u), int(g), False))
            results.append(row)
            bt = row["configs"][best]
            print(f"{dname:9} 2^{n.bit_length() - 1:<4} {mode:5} {row['torch']:9.2f} {row['cub']:9.2f} {row['auto']:9.2f} {bt:9.2f} "
                  f"{best:>16} {bt / row['torch']:10.3f} {bt / row['cub']:9.3f} {row['best_without_pdl']:9.2f}", flush=True)
            del bufs
            torch.cuda.empty_cache()
    print("\nSuggested csrc/tuning.h rows (fastest of single_pass configs and CUB per cell):")
    for row in results:
        best = row["best"]
        bt = row["configs"][best]
        if row["cub"] < bt * 0.99:
            choice, t_best = "{Method::CubDevice, 0, 0, 0}", row["cub"]
        else:
            b, rest = best.split("x")
            u, g = rest.split("@")
            choice, t_best = f"{{Method::SinglePass, {b}, {u}, {g}}}", bt
        print(f"    {{90, DType::{DTYPE_ENUM[row['dtype']]}, {row['n']}LL, {choice}}},  // {row['mode']}: {t_best:.2f} us; "
              f"torch.sum {row['torch']:.2f}, CUB {row['cub']:.2f}")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "tune.json"), "w") as f:
        json.dump({"gpu": props.name, "sms": sms, "rows": results}, f, indent=1)


if __name__ == "__main__":
    main()
