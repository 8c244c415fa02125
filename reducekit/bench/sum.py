"""The whole-tensor sum benchmark: reducekit methods against torch.sum and CUB, per dtype and size
(`benchmarks/bench.py`). Its reports are in report.py (markdown, summary, write_results, merge_runs)."""
from __future__ import annotations

import math

import torch

import reducekit

from .timing import (DTYPES, GRAPH_MAX_N, GRAPH_MODES, GRAPH_TIMING, MODES, Buffers, _bench_device, _progress,
                     environment, random_input, read_ceiling, time_cpu, time_cuda_eager, time_cuda_graph)

DEFAULT_SIZES = [2**k for k in range(16, 31)]
QUICK_SIZES = [2**16, 2**20, 2**24, 2**28]
CPU_SIZES = [2**k for k in range(12, 25, 4)]  # without a GPU, quick or not
TORCH = "torch.sum"
CUB = "cub_device"


def _cuda_methods():
    return [m.name for m in reducekit.methods() if "cuda" in m.devices]


def _callable(method: str):
    if method == TORCH:
        return torch.sum
    return lambda x: reducekit.sum(x, method=method)


def benchmark(methods=None, dtypes=None, sizes=None, device=None, modes=("eager", "graph"), quick: bool = False,
              progress: bool = True, slow_ms: float = 20.0, budget_s: float = 0.25, ceiling: dict | None = None,
              as_dataframe: bool = True, chained: bool = False):
    """Time `methods` (default: all, plus torch.sum) for each dtype and size.

    Modes: "eager" (calls as a user makes them), "graph" (CUDA graph replay, interleaved with a
    foreign kernel: GPU time per call, no overlap between consecutive calls; up to GRAPH_MAX_N
    elements). chained=True also times "graph_chained" (back-to-back captured calls, where PDL
    lets a call overlap the previous one): a separately labelled figure, never the default.

    Returns rows (a pandas DataFrame when pandas is installed and as_dataframe, else a list of
    dicts) with: dtype, n, method, mode, time_us, gbps, pct_ceiling, speedup (torch.sum time over
    this method's, same dtype/size/mode). `rows.attrs` / the `env` key of benchmark_run() carry the
    environment and the read ceiling. Without a GPU: CPU tensors, `auto` against torch.sum.
    A method slower than `slow_ms` at some size is not timed at larger sizes (its later cells are
    absent).
    """
    run = benchmark_run(methods, dtypes, sizes, device, modes, quick, progress, slow_ms, budget_s, ceiling, chained=chained)
    rows = run["rows"]
    if as_dataframe:
        try:
            import pandas as pd

            df = pd.DataFrame(rows)
            df.attrs["env"] = run["env"]
            return df
        except ImportError:
            pass
    return rows


def benchmark_run(methods=None, dtypes=None, sizes=None, device=None, modes=("eager", "graph"), quick=False,
                  progress=True, slow_ms=20.0, budget_s=0.25, ceiling=None, chained=False) -> dict:
    """As benchmark(), returning {"env": ..., "rows": [...]}."""
    modes = list(dict.fromkeys(list(modes) + (["graph_chained"] if chained else [])))
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ValueError(f"unknown mode(s) {unknown}; modes are {list(MODES)}")
    device = _bench_device(device)
    on_gpu = device.type == "cuda"
    env = environment(device)
    env["graph_timing"] = GRAPH_TIMING
    if on_gpu:
        torch.cuda.set_device(device)
        methods = list(methods) if methods else ([TORCH] + _cuda_methods())
        env["ceiling"] = ceiling or read_ceiling(device)
        cold_bytes = int(4 * torch.cuda.get_device_properties(device).L2_cache_size)
        env["cold_l2"] = f"inputs rotated over >= {cold_bytes / 1e6:.0f} MB (4x L2) per size"
    else:
        methods = [m for m in (list(methods) if methods else [TORCH, "auto"]) if m == TORCH or "cpu" in reducekit.method(m).devices]
        env["note"] = "no CUDA GPU: CPU tensors, auto against torch.sum"
        modes = ["eager"]
        cold_bytes = 0
    if TORCH not in methods:
        methods = [TORCH] + methods
    dtypes = list(dtypes) if dtypes else (["float32", "int32"] if quick else list(DTYPES))
    if not sizes:
        sizes = (QUICK_SIZES if quick else DEFAULT_SIZES) if on_gpu else CPU_SIZES
    sizes = list(sizes)
    if quick:
        budget_s = min(budget_s, 0.1)
    ceiling_gbps = env.get("ceiling", {}).get("gbps")

    cells = sum(len(methods) * len([m for m in modes if m not in GRAPH_MODES or (on_gpu and n <= GRAPH_MAX_N)]) for n in sizes) * len(dtypes)
    bar = _progress(cells, progress)
    rows = []
    too_slow: set[tuple] = set()
    for dname in dtypes:
        dtype = DTYPES[dname]
        for n in sorted(sizes):
            item = torch.empty((), dtype=dtype).element_size()
            if on_gpu:
                bufs = Buffers(n, dtype, device, cold_bytes)
                nbuf = bufs.count
            else:
                x = random_input(n, dtype, "cpu")
                nbuf = 1
            cell_rows = []
            for mode in modes:
                if mode in GRAPH_MODES and not (on_gpu and n <= GRAPH_MAX_N):
                    continue
                for method in methods:
                    if bar:
                        bar.set_description(f"{dname} 2^{int(math.log2(n))} {mode} {method}")
                        bar.update()
                    key = (dname, method, mode)
                    if key in too_slow:
                        continue
                    if mode in GRAPH_MODES and method != TORCH and reducekit.method(method).host_sync:
                        continue
                    fn = _callable(method)
                    if on_gpu and mode in GRAPH_MODES:
                        t, calls = time_cuda_graph(fn, bufs, chained=mode == "graph_chained"), None
                    elif on_gpu:
                        t, calls = time_cuda_eager(fn, bufs, budget_s)
                    else:
                        t, calls = time_cpu(fn, x, budget_s)
                    if t > slow_ms * 1e3:
                        too_slow.add(key)
                    gbps = n * item / (t * 1e-6) / 1e9
                    cell_rows.append({
                        "dtype": dname, "n": n, "log2n": round(math.log2(n), 2), "method": method, "mode": mode,
                        "time_us": round(t, 3), "gbps": round(gbps, 2),
                        "pct_ceiling": round(100 * gbps / ceiling_gbps, 1) if ceiling_gbps else None,
                        "buffers": nbuf, "calls": calls,
                    })
            for r in cell_rows:
                base = next((b for b in cell_rows if b["method"] == TORCH and b["mode"] == r["mode"]), None)
                r["speedup"] = round(base["time_us"] / r["time_us"], 3) if base else None
            rows.extend(cell_rows)
            if on_gpu:
                del bufs
                torch.cuda.empty_cache()
    if bar:
        bar.close()
    return {"env": env, "rows": rows}
