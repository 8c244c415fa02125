"""Tuning sweep for `auto`: every compiled single_pass configuration (block, unroll) and grid
against torch.sum and CUB, per dtype and size, timed as the issue's targets are judged (CUDA graph
replay up to 2^22 elements, eager cold-L2 above). Prints, per cell, the best configuration and its
ratio to torch.sum and CUB; writes tune.json and tuning_sm90.inc (the rows of csrc/tuning.h, each
with the figure that chose it; copy it over csrc/tuning_sm90.inc).

    python benchmarks/tune.py --out DIR [--dtypes float32 int8 ...] [--sizes 2**12 ...]
    python benchmarks/tune.py --from-json benchmarks/results/h200/tune.json --out DIR   # rows only
"""
import argparse
import json
import os

import torch

import reducekit
from reducekit.bench import DTYPES, GRAPH_MAX_N, Buffers, time_cuda_eager, time_cuda_graph



DTYPE_ENUM = {"bool": "Bool", "uint8": "UInt8", "int8": "Int8", "int16": "Int16", "int32": "Int32", "int64": "Int64",
              "float16": "Float16", "bfloat16": "BFloat16", "float32": "Float32", "float64": "Float64"}


def parse_config(key: str) -> tuple[int, int, int]:
    """'512x4@264' -> (block, unroll, grid)."""
    block, rest = key.split("x")
    unroll, grid = rest.split("@")
    return int(block), int(unroll), int(grid)


INC_HEADER = """// sm_90 rows of kTuningTable, measured on the H200 (132 SMs) by benchmarks/tune.py on 2026-11-21
// (benchmarks/results/h200/tune.log). Per dtype, by increasing size: the fastest of the compiled
// single_pass configurations (block x unroll @ grid, 0 = one wave) and CUB, timed as the targets
// are judged: CUDA graph replay up to 2^22 elements, eager cold-L2 above. Each row ends with its
// time and the torch.sum and CUB times of the same run. Sizes between rows take the next row up;
// the last row of each dtype covers everything larger.
// clang-format off
"""


def inc_rows(results) -> list[str]:
    """csrc/tuning_sm90.inc rows: per dtype and size, CUB where it beats the best single_pass
    configuration by more than 1%, else that configuration."""
    by_dtype: dict[str, list] = {}
    for r in results:
        by_dtype.setdefault(r["dtype"], []).append(r)
    lines = []
    for dt, rows in by_dtype.items():
        rows.sort(key=lambda r: r["n"])
        for k, r in enumerate(rows):
            bt = r["configs"][r["best"]]
            if r["cub"] < bt * 0.99:
                choice, t, what = "{Method::CubDevice, 0, 0, 0}", r["cub"], "CUB"
            else:
                b, u, g = parse_config(r["best"])
                choice, t, what = f"{{Method::SinglePass, {b}, {u}, {g}}}", bt, r["best"]
            max_n = "INT64_MAX" if k == len(rows) - 1 else str(r["n"])
            lines.append(f"{{90, DType::{DTYPE_ENUM[dt]}, {max_n}, {choice}}},  // 2^{r['n'].bit_length() - 1} {r['mode']} "
                         f"{t:.2f} us ({what}); torch.sum {r['torch']:.2f}, CUB {r['cub']:.2f}")
    return lines


def write_inc(results, path: str) -> None:
    with open(path, "w") as f:
        f.write(INC_HEADER + "\n".join(inc_rows(results)) + "\n// clang-format on\n")
    print(f"wrote {path}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16", "int8", "int32", "float64"])
    p.add_argument("--sizes", nargs="+", type=lambda s: int(eval(s, {"__builtins__": {}})),
                   default=[2**k for k in range(12, 31, 2)])
    p.add_argument("--out", default=".")
    p.add_argument("--from-json", metavar="TUNE_JSON", help="no timing: write tuning_sm90.inc from an earlier tune.json into --out")
    a = p.parse_args()
    if a.from_json:
        os.makedirs(a.out, exist_ok=True)
        with open(a.from_json) as f:
            write_inc(json.load(f)["rows"], os.path.join(a.out, "tuning_sm90.inc"))
        return
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    sms = props.multi_processor_count
    cold = 4 * props.L2_cache_size
    grids = [0, sms, 2 * sms, 4 * sms]

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
            b, u, g = parse_config(best)
            row["best_without_pdl"] = t(lambda x: torch.ops.reducekit._single_pass(x, b, u, g, False))
            results.append(row)
            bt = row["configs"][best]
            print(f"{dname:9} 2^{n.bit_length() - 1:<4} {mode:5} {row['torch']:9.2f} {row['cub']:9.2f} {row['auto']:9.2f} {bt:9.2f} "
                  f"{best:>16} {bt / row['torch']:10.3f} {bt / row['cub']:9.3f} {row['best_without_pdl']:9.2f}", flush=True)
            del bufs
            torch.cuda.empty_cache()
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "tune.json"), "w") as f:
        json.dump({"gpu": props.name, "sms": sms, "rows": results}, f, indent=1)
    write_inc(results, os.path.join(a.out, "tuning_sm90.inc"))


if __name__ == "__main__":
    main()
