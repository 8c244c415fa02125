"""Benchmark harness: reducekit methods against torch.sum and CUB, per dtype and size; and
reductions over dims (dims_run, `bench.py --dims`) against torch.sum and the same-bytes full sum.

Timing method (see README "H200 results"):
- warm-up calls first, then CUDA events around batches of calls; the figure is the median of the
  batch averages;
- the input rotates over several buffers whose total is at least 4x the L2 cache, so every call
  reads from HBM (cold L2); a buffer larger than that is used alone;
- eager mode times calls as a user makes them (host launch overhead included when it exceeds the
  GPU time);
- graph mode ("graph", interleaved) captures the calls in a CUDA graph with a small foreign kernel
  (an in-place add on a separate tiny tensor, the same for every contender) between consecutive
  calls, and subtracts the replay time of a graph of the foreign kernels alone: GPU time per call,
  with no call overlapping the previous one. Back-to-back captured calls ("graph_chained", opt-in)
  let kernels launched with programmatic dependent launch (PDL: ours, CUB's) start while the
  previous call still runs, which no model that does work between two sums sees; that figure is
  kept only as a separately labelled mode;
- the read ceiling (best bandwidth of a pure read kernel over 4 GiB) is measured in the same run,
  so "percent of ceiling" and every ratio come from one process on one GPU.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import torch

import reducekit

DTYPES = {
    "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
    "int64": torch.int64, "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
    "float64": torch.float64,
}
DEFAULT_SIZES = [2**k for k in range(16, 31)]
QUICK_SIZES = [2**16, 2**20, 2**24, 2**28]
CPU_SIZES = [2**k for k in range(12, 25, 4)]  # without a GPU, quick or not
GRAPH_MAX_N = 2**22
TORCH = "torch.sum"
CUB = "cub_device"
# Timing modes. "graph" is the interleaved graph timing (issue 8); "graph_chained" the old
# back-to-back one, timed only on request.
MODES = ("eager", "graph", "graph_chained")
GRAPH_MODES = ("graph", "graph_chained")
# env["graph_timing"] of every run since issue 8. Runs without it timed "graph" chained: load_run()
# relabels their rows.
GRAPH_TIMING = "interleaved"
MODE_TITLES = {
    "eager": "eager, cold L2",
    "graph": "CUDA graph replay, interleaved with a foreign kernel (GPU time only), cold L2",
    "graph_chained": "CUDA graph replay, chained: back-to-back calls, PDL overlap allowed (GPU time only), cold L2",
}


def _cuda_methods():
    return [m.name for m in reducekit.methods() if "cuda" in m.devices]


def environment(device: torch.device) -> dict:
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "torch": torch.__version__, "reducekit": reducekit.__version__, "python": platform.python_version(),
        "device": str(device),
    }
    if device.type == "cuda":
        p = torch.cuda.get_device_properties(device)
        env.update(gpu=p.name, sms=p.multi_processor_count, l2_mb=round(p.L2_cache_size / 2**20, 1),
                   memory_gb=round(p.total_memory / 2**30, 1), cuda=torch.version.cuda, cc=f"{p.major}.{p.minor}")
        try:
            env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                           capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
        except Exception:  # noqa: BLE001 - informational only
            env["driver"] = "unknown"
    else:
        env.update(cpu=platform.processor() or platform.machine(), threads=torch.get_num_threads())
    return env


def random_input(total: int, dtype: torch.dtype, device) -> torch.Tensor:
    """Random data (never zeros), in ranges whose sums cannot overflow."""
    if dtype == torch.bool:
        return torch.rand(total, device=device) < 0.5
    if dtype.is_floating_point:
        x = torch.randn(total, device=device, dtype=torch.float32 if dtype != torch.float64 else dtype)
        return (x * 0.01).to(dtype) if dtype == torch.float16 else x.to(dtype)
    hi = 2**20 if dtype == torch.int64 else torch.iinfo(dtype).max
    return torch.randint(-hi if dtype != torch.uint8 else 0, hi, (total,), device=device, dtype=dtype)


class Buffers:
    """`count` inputs of n elements laid out in one allocation, 256-byte aligned each, totalling
    at least `cold_bytes` (unless that would need more than max_count buffers)."""

    def __init__(self, n: int, dtype: torch.dtype, device, cold_bytes: int, max_count: int = 1024):
        item = torch.empty((), dtype=dtype).element_size()
        stride = max(1, math.ceil(n * item / 256)) * 256 // item
        self.count = max(1, min(max_count, math.ceil(cold_bytes / max(1, n * item))))
        self.pool = random_input(stride * (self.count - 1) + n, dtype, device)
        self.views = [self.pool[i * stride: i * stride + n] for i in range(self.count)]
        self.total_bytes = self.count * n * item


def _median_us(samples):
    return statistics.median(samples)


def time_cuda_eager(fn, bufs: Buffers, budget_s: float) -> tuple[float, int]:
    """Median per-call time (us) over batches of calls, inputs rotating; and the calls timed."""
    views = bufs.views
    for i in range(3):
        fn(views[i % len(views)])
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn(views[0])
    end.record()
    end.synchronize()
    t1 = start.elapsed_time(end) * 1e3  # us, includes launch latency: an upper estimate
    batch = int(min(64, max(1, 2000 // max(t1, 1.0))))
    batches = int(min(15, max(3, (budget_s * 1e6) // max(t1 * batch, 1.0))))
    samples, k = [], 0
    for _ in range(batches):
        start.record()
        for _ in range(batch):
            fn(views[k % len(views)])
            k += 1
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / batch)
    return _median_us(samples), batch * batches


def foreign_kernel(device):
    """A zero-argument callable launching one small kernel that is not reducekit's: an in-place add
    on a separate one-element tensor. Graph timing puts one before every timed call, so that
    no call can overlap the previous one through PDL; every contender gets the same kernel."""
    scratch = torch.zeros(1, device=device)
    return lambda: scratch.add_(1.0)


def time_cuda_graph(fn, bufs: Buffers, replays: int = 9, chained: bool = False) -> float:
    """Median per-call GPU time (us) from replays of a CUDA graph of calls over the rotating inputs.

    Interleaved (the default, mode "graph"): the graph holds `calls` pairs (foreign kernel, call);
    a second graph holds the `calls` foreign kernels alone; per-call time is the difference of the
    two medians over `calls`, clamped at 0. The two graphs are replayed alternately, so drift
    affects both. Chained (mode "graph_chained"): the calls back to back, as before issue 8.
    """
    views = bufs.views
    calls = max(len(views), 64)
    foreign = None if chained else foreign_kernel(views[0].device)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up outside capture: lazy initialisation, workspaces
        for i in range(3):
            if foreign is not None:
                foreign()
            fn(views[i % len(views)])
    torch.cuda.current_stream().wait_stream(s)

    def capture(body):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            body()
        return g

    def timed_calls():
        for i in range(calls):
            if foreign is not None:
                foreign()
            fn(views[i % len(views)])

    def foreign_only():
        for _ in range(calls):
            foreign()

    graphs = [capture(timed_calls)] + ([capture(foreign_only)] if foreign is not None else [])
    for g in graphs:
        g.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = [[] for _ in graphs]
    for _ in range(replays):
        for g, out in zip(graphs, samples):
            start.record()
            g.replay()
            end.record()
            end.synchronize()
            out.append(start.elapsed_time(end) * 1e3)
    del graphs
    if foreign is None:
        return _median_us(samples[0]) / calls
    return max(0.0, (_median_us(samples[0]) - _median_us(samples[1])) / calls)


def time_cpu(fn, x: torch.Tensor, budget_s: float) -> tuple[float, int]:
    fn(x)
    t0 = time.perf_counter()
    fn(x)
    t1 = time.perf_counter() - t0
    batch = int(min(100, max(1, 0.01 // max(t1, 1e-7))))
    batches = int(min(15, max(3, budget_s // max(t1 * batch, 1e-7))))
    samples = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn(x)
        samples.append((time.perf_counter() - t0) * 1e6 / batch)
    return _median_us(samples), batch * batches


def read_ceiling(device, gib: float = 4.0) -> dict:
    """Best read bandwidth (GB/s) of the pure read probe over `gib` GiB, over its configurations."""
    free = torch.cuda.mem_get_info(device)[0]
    nbytes = int(min(gib * 2**30, free * 0.4)) // 4096 * 4096
    x = torch.randint(-(2**31), 2**31 - 1, (nbytes // 4,), dtype=torch.int32, device=device)
    best = {"gbps": 0.0}
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for block in (256, 512, 1024):
        for unroll in (4, 8, 16):
            for waves in (1, 2, 4):
                f = torch.ops.reducekit._read_probe
                f(x, block, unroll, waves)
                samples = []
                for _ in range(5):
                    start.record()
                    f(x, block, unroll, waves)
                    end.record()
                    end.synchronize()
                    samples.append(start.elapsed_time(end) * 1e-3)
                t = statistics.median(samples)
                if nbytes / t / 1e9 > best["gbps"]:
                    best = {"gbps": nbytes / t / 1e9, "bytes": nbytes, "block": block, "unroll": unroll, "waves": waves,
                            "time_us": t * 1e6}
    del x
    torch.cuda.empty_cache()
    return best


def _callable(method: str):
    if method == TORCH:
        return torch.sum
    return lambda x: reducekit.sum(x, method=method)


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm import tqdm

        return tqdm(total=total, unit="cell", file=sys.stderr, dynamic_ncols=True)
    except ImportError:
        class _Plain:
            def __init__(self):
                self.n = 0

            def update(self, k=1):
                self.n += k
                if self.n % 25 == 0 or self.n == total:
                    print(f"  {self.n}/{total} cells", file=sys.stderr, flush=True)

            def set_description(self, _):
                pass

            def close(self):
                pass

        return _Plain()


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


def _bench_device(device) -> torch.device:
    """The device to time on: the one given, else the current GPU when reducekit was built with
    CUDA, else the CPU; a bare "cuda" becomes the current GPU."""
    if device is None:
        device = "cuda" if torch.cuda.is_available() and reducekit._C.cuda_built else "cpu"
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


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


# ------------------------------------------------------------------------------------------------
# Reports


def _fmt_time(us: float) -> str:
    return f"{us:,.1f}" if us < 1e4 else f"{us:,.0f}"


def _n_label(n: int) -> str:
    return f"2^{int(math.log2(n))}" if n & (n - 1) == 0 else f"{n:,}"


# Legends printed under tables that need them (results.md, README via benchmarks/report.py).
MISSING_LEGEND = ("— : not timed (a method slower than the cut-off at a smaller N is not run at larger N; "
                  f"graph modes stop at {_n_label(GRAPH_MAX_N)}; host_final cannot be captured in a graph).")
GRAPH_LEGEND = ("Graph modes. *Interleaved* (`graph`): a small foreign kernel (an in-place add on a separate tiny "
                "tensor, the same for every method) sits between consecutive timed calls in the captured graph, and "
                "the replay time of a graph of those foreign kernels alone is subtracted; no call can overlap the "
                "previous one, as in a model that does work between two sums. *Chained* (`graph_chained`): the calls "
                "back to back, which lets kernels launched with programmatic dependent launch (ours, CUB's) overlap "
                "each call with the next; shown only where labelled chained.")


def time_table(rows, dtype: str, mode: str) -> tuple[list[str], bool]:
    """Markdown lines of the time-per-call table (N x method, us) of one dtype and mode, and whether
    some cell shows "—" (not timed). Empty when the run has no such rows."""
    sub = [r for r in rows if r["dtype"] == dtype and r["mode"] == mode]
    if not sub:
        return [], False
    methods = list(dict.fromkeys(r["method"] for r in sub))
    cell = {(r["n"], r["method"]): r for r in sub}
    out = ["| N | " + " | ".join(methods) + " |", "|---:|" + "---:|" * len(methods)]
    missing = False
    for n in sorted(set(r["n"] for r in sub)):
        missing = missing or any((n, m) not in cell for m in methods)
        out.append(f"| {_n_label(n)} | " + " | ".join(_fmt_time(cell[(n, m)]["time_us"]) if (n, m) in cell else "—" for m in methods) + " |")
    return out, missing


def load_run(path: str) -> dict:
    """A results.json, its rows labelled by today's modes: runs from before issue 8 (no
    env["graph_timing"]) timed mode "graph" back to back, so their graph rows become
    "graph_chained" and env["graph_timing"] says "chained"."""
    with open(path) as f:
        return relabel_chained(json.load(f))


def relabel_chained(run: dict) -> dict:
    """See load_run(); a run that has env["graph_timing"] is returned as it is."""
    if "graph_timing" in run["env"]:
        return run
    env = dict(run["env"], graph_timing="chained")
    rows = [dict(r, mode="graph_chained") if r["mode"] == "graph" else r for r in run["rows"]]
    return dict(run, env=env, rows=rows)


def markdown(run: dict) -> str:
    env, rows = run["env"], run["rows"]
    out = ["# reducekit benchmark", ""]
    keys = ["gpu", "sms", "l2_mb", "cc", "driver", "cuda", "torch", "reducekit", "python", "date", "cpu", "threads"]
    out.append("| " + " | ".join(k for k in keys if k in env) + " |")
    out.append("|" + "---|" * len([k for k in keys if k in env]))
    out.append("| " + " | ".join(str(env[k]) for k in keys if k in env) + " |")
    out.append("")
    if "ceiling" in env:
        c = env["ceiling"]
        out.append(f"Read ceiling, measured in this run: **{c['gbps'] / 1e3:.3f} TB/s** (pure read probe over "
                   f"{c['bytes'] / 2**30:.1f} GiB, block {c['block']}, unroll {c['unroll']}, {c['waves']} wave(s)). "
                   f"Cold L2: {env['cold_l2']}. Times are medians of batch averages, CUDA events.")
    if len([c for c in env.get("ceilings", []) if c]) > 1:
        out.append("This report merges " + env["merged"] + "; read ceilings measured in each run: "
                   + ", ".join(f"{c['gbps'] / 1e3:.3f} TB/s" for c in env["ceilings"] if c)
                   + ". Each row's percent of ceiling uses its own run's ceiling.")
    if "note" in env:
        out.append(f"**{env['note']}.**")
    if env.get("graph_timing") == "chained":
        out.append("**This run predates issue 8: its graph-mode figures were timed chained (back-to-back calls).**")
    out.append("")
    dtypes = list(dict.fromkeys(r["dtype"] for r in rows))
    missing = False  # some time cell shows "—"
    for mode in MODES:
        for d in dtypes:
            table, dashes = time_table(rows, d, mode)
            if not table:
                continue
            missing = missing or dashes
            sub = [r for r in rows if r["dtype"] == d and r["mode"] == mode]
            methods = list(dict.fromkeys(r["method"] for r in sub))
            sizes = sorted(set(r["n"] for r in sub))
            cell = {(r["n"], r["method"]): r for r in sub}
            out += [f"### {d}: time per call (us), {MODE_TITLES[mode]}", ""] + table + [""]
            out.append(f"### {d}: speedup over torch.sum ({mode}); GB/s and % of read ceiling for auto")
            out.append("")
            out.append("| N | " + " | ".join(methods) + " | auto GB/s | auto % ceiling |")
            out.append("|---:|" + "---:|" * (len(methods) + 2))
            for n in sizes:
                a = cell.get((n, "auto"))
                tail = f" | {a['gbps']:,.0f} | {a['pct_ceiling'] if a and a['pct_ceiling'] is not None else '—'}" if a else " | — | —"
                out.append(f"| {_n_label(n)} | " + " | ".join(f"{cell[(n, m)]['speedup']:.2f}" if (n, m) in cell and cell[(n, m)]["speedup"] else "—" for m in methods) + tail + " |")
            out.append("")
    if any(r["mode"] in GRAPH_MODES for r in rows):
        out.append(GRAPH_LEGEND)
        out.append("")
    if missing:
        out.append(MISSING_LEGEND)
    return "\n".join(out) + "\n"


def write_results(run: dict, out_dir: str, plots: bool = True) -> list[str]:
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    md = os.path.join(out_dir, "results.md")
    with open(md, "w") as f:
        f.write(markdown(run))
    paths.append(md)
    js = os.path.join(out_dir, "results.json")
    with open(js, "w") as f:
        json.dump(run, f, indent=1)
    paths.append(js)
    csv = os.path.join(out_dir, "results.csv")
    cols = ["dtype", "n", "log2n", "method", "mode", "time_us", "gbps", "pct_ceiling", "speedup", "buffers", "calls"]
    with open(csv, "w") as f:
        f.write(",".join(cols) + "\n")
        for r in run["rows"]:
            f.write(",".join("" if r.get(c) is None else str(r[c]) for c in cols) + "\n")
    paths.append(csv)
    if plots:
        paths += _plots("save_plots", run, out_dir)
    return paths


def _plots(saver: str, run: dict, out_dir: str) -> list[str]:
    """reducekit.plotting.<saver>(run, out_dir), or nothing (with a note) without matplotlib."""
    from . import plotting

    try:
        return getattr(plotting, saver)(run, out_dir)
    except ImportError as e:
        print(f"plots skipped: {e}", file=sys.stderr)
        return []


def summary(run: dict) -> str:
    """A short table for the terminal: auto, torch.sum and CUB per dtype and size ("-": not timed)."""
    rows = run["rows"]
    idx = {(r["dtype"], r["n"], r["mode"], r["method"]): r for r in rows}

    def us(r):
        return f"{r['time_us']:9.1f}us" if r else f"{'-':>11}"

    lines = [f"{'dtype':9} {'N':>6} {'mode':13} {'torch.sum':>11} {'cub':>11} {'auto':>11} {'auto/torch':>10} {'auto %ceil':>10}"]
    for r in rows:
        if r["method"] != "auto":
            continue
        key = (r["dtype"], r["n"], r["mode"])
        t, c = idx.get(key + (TORCH,)), idx.get(key + (CUB,))
        ratio = f"{r['time_us'] / t['time_us']:10.3f}" if t else f"{'-':>10}"
        pct = f"{r['pct_ceiling']:10.1f}" if r["pct_ceiling"] is not None else f"{'-':>10}"
        lines.append(f"{r['dtype']:9} {_n_label(r['n']):>6} {r['mode']:13} {us(t)} {us(c)} {us(r)} {ratio} {pct}")
    return "\n".join(lines)


def merge_runs(runs: list[dict]) -> dict:
    """One report from several sweeps (for example dtypes split over two GPU calls). Each row keeps
    the percent-of-ceiling of its own run; env["ceilings"] lists every run's ceiling. Runs from
    before issue 8 have their graph rows relabelled "graph_chained" first (see load_run)."""
    runs = [relabel_chained(r) for r in runs]
    env = dict(runs[0]["env"])
    if len({r["env"]["graph_timing"] for r in runs}) > 1:
        env["graph_timing"] = "mixed"  # each row's mode says how it was timed
    env["ceilings"] = [r["env"].get("ceiling") for r in runs]
    if len(runs) > 1:
        env["merged"] = f"{len(runs)} runs: " + "; ".join(
            f"{', '.join(dict.fromkeys(x['dtype'] for x in r['rows']))} at {r['env']['date']}" for r in runs)
    return {"env": env, "rows": [row for r in runs for row in r["rows"]]}


# ------------------------------------------------------------------------------------------------
# Reductions over dims: torch.sum(x, dim, dtype=...) against reducekit.sum(x, dim, dtype=...) (method
# auto) and against reducekit's full sum of a flat tensor of the same dtype and byte count, timed in
# the same run on the same memory (the flat input is the same buffers seen as 1-D).

DIMS_DTYPES = ("float32", "bfloat16", "int32")
DIMS_FILE = "results_dims"  # results_dims.json, results_dims.md
DIMS_CONTENDERS = ("torch", "reducekit", "full")
DIMS_CALLS = {"torch": "torch.sum(x, dim, dtype=...)", "reducekit": "reducekit.sum(x, dim, dtype=...)",
              "full": "reducekit.sum(flat)"}
# The cases of the dims issue: shape, reduced dim(s), sum dtype (torch.sum's dtype=), and the input
# dtypes a case runs for (absent: every dtype of the run).
DIMS_CASES = (
    {"shape": (4096, 4096), "dim": 1},
    {"shape": (4096, 4096), "dim": 0},
    {"shape": (32, 2**22), "dim": 1},
    {"shape": (2**22, 32), "dim": 0},
    {"shape": (2**20, 64), "dim": 1},
    {"shape": (64, 2**20), "dim": 0},
    {"shape": (64, 256, 1024), "dim": (0, 2)},
    {"shape": (8192, 8192), "dim": -1, "only": ("bfloat16",)},
    {"shape": (8192, 8192), "dim": -1, "sum_dtype": "float32", "only": ("bfloat16",)},
)
DIMS_CPU_MAX_MIB = 64  # CPU runs scale each case's largest dim down to at most this many MiB at 4 bytes/element
DIMS_GRAPH_MAX_MS = 2.0  # a contender slower than this in eager mode is not timed in graph mode (GPU-bound there)
# The targets, checked per row (case, dtype, mode). `key` names the row's figure; `devices` where
# the target applies; `integers`: integer dtypes only (not bool).
DIMS_TARGETS = {
    "vs_full": {"text": "reducekit over dims <= {bound:g}x its full sum of the same bytes", "short": "<= {bound:g}x full sum",
                "key": "ratio_full", "bound": 1.05, "better": "lower", "devices": ("cuda",)},
    "not_slower": {"text": "never slower than torch.sum (torch.sum time / reducekit time >= {bound:g})",
                   "short": "not slower than torch.sum", "key": "speedup", "bound": 1.0, "better": "higher",
                   "devices": ("cuda", "cpu")},
    "int_speedup": {"text": "integer dtypes >= {bound:g}x torch.sum", "short": ">= {bound:g}x torch.sum (integers)",
                    "key": "speedup", "bound": 5.0, "better": "higher", "devices": ("cuda",), "integers": True},
}
DIMS_MODE_TITLES = {"eager": MODE_TITLES["eager"], "graph": MODE_TITLES["graph"]}


def dims_target_text(tid: str, short: bool = False) -> str:
    t = DIMS_TARGETS[tid]
    return t["short" if short else "text"].format(**t)


def _dim_size_label(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n >= 2**16 and n & (n - 1) == 0 else str(n)


def _shape_label(shape) -> str:
    return f"({', '.join(_dim_size_label(int(s)) for s in shape)})"


def dims_case_label(shape, dim, sum_dtype=None) -> str:
    """'(32, 2^22) dim 1', '(64, 256, 1024) dims (0, 2)', '(8192, 8192) dim -1, dtype=float32'."""
    dims = f"dims ({', '.join(map(str, dim))})" if isinstance(dim, (tuple, list)) else f"dim {dim}"
    return f"{_shape_label(shape)} {dims}" + (f", dtype={sum_dtype}" if sum_dtype else "")


def scale_shape(shape, max_elems: int) -> tuple:
    """`shape` with its (first) largest dim divided by the smallest power of two that brings the
    element count to at most max_elems (not below 1): the CPU variant of a GPU case keeps the
    number and length of the other dims."""
    shape = list(shape)
    i = shape.index(max(shape))
    while math.prod(shape) > max_elems and shape[i] > 1:
        shape[i] = max(1, shape[i] // 2)
    return tuple(shape)


def dims_cases(dtypes, max_elems: int | None = None) -> list[dict]:
    """The cases of a run: one per DIMS_CASES entry and dtype (in dtype order), shapes scaled to
    max_elems when given (CPU)."""
    out = []
    for d in dtypes:
        for c in DIMS_CASES:
            if "only" in c and d not in c["only"]:
                continue
            shape = scale_shape(c["shape"], max_elems) if max_elems else tuple(c["shape"])
            label = dims_case_label(shape, c["dim"], c.get("sum_dtype"))
            if shape != tuple(c["shape"]):
                label += f" (scaled from {_shape_label(c['shape'])})"
            out.append({"shape": shape, "issue_shape": tuple(c["shape"]), "dim": c["dim"], "sum_dtype": c.get("sum_dtype"),
                        "dtype": d, "case": label})
    return out


def _reduced_shape(shape, dim) -> list[int]:
    dims = {d % len(shape) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
    return [s for i, s in enumerate(shape) if i not in dims]


def _sum_fns(dim, sum_dtype):
    """(torch.sum over dim, reducekit.sum over dim): each a one-argument callable."""
    dim = tuple(dim) if isinstance(dim, list) else dim
    if sum_dtype is None:
        return (lambda v: torch.sum(v, dim)), (lambda v: reducekit.sum(v, dim=dim))
    dt = DTYPES[sum_dtype]
    return (lambda v: torch.sum(v, dim, dtype=dt)), (lambda v: reducekit.sum(v, dim=dim, dtype=dt))


def _err(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0][:200] if lines else ''}"


def dims_check(x: torch.Tensor, dim, sum_dtype=None) -> str:
    """'ok' when reducekit.sum(x, dim, dtype=...) has torch.sum's shape and dtype and its values
    (integers exactly; floats within 2 ulps of the output dtype plus 1e-5, relative to the sum of
    |x| over the same dims), else what differs. A sanity check of what is timed, not a test."""
    tfn, rfn = _sum_fns(dim, sum_dtype)
    try:
        got = rfn(x)
    except Exception as e:  # noqa: BLE001 - reported in the row
        return f"error: {_err(e)}"
    want = tfn(x)
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"mismatch: shape {tuple(got.shape)} {got.dtype}, torch.sum gives {tuple(want.shape)} {want.dtype}"
    if not want.dtype.is_floating_point:
        bad = int((got != want).sum())
        return "ok" if bad == 0 else f"mismatch: {bad} of {want.numel()} values differ"
    d = tuple(dim) if isinstance(dim, (tuple, list)) else dim
    scale = torch.sum(x.abs(), d, dtype=torch.float64)
    tol = (2 * torch.finfo(want.dtype).eps + 1e-5) * scale + torch.finfo(want.dtype).tiny
    diff = (got.double() - want.double()).abs()
    bad = int((~(diff <= tol)).sum())  # NaN counts as bad
    return "ok" if bad == 0 else f"mismatch: {bad} of {want.numel()} values beyond the bound (max |diff| {float(diff.max()):.3g})"


def dims_derive(row: dict, ceiling_gbps: float | None, device_type: str) -> dict:
    """Fills a row's derived figures from its times (torch_us, reducekit_us, full_us; None where
    not measured): GB/s and % of the read ceiling per contender (bytes read / time), speedup
    (torch.sum time / reducekit's), ratio_full (reducekit's time / its same-bytes full sum's), and
    targets {id: True (met) / False (missed) / None (not applicable or not measured)}."""
    for k in DIMS_CONTENDERS:
        t = row.get(f"{k}_us")
        gbps = row["bytes_read"] / (t * 1e-6) / 1e9 if t else None
        row[f"{k}_gbps"] = round(gbps, 2) if gbps is not None else None
        row[f"{k}_pct"] = round(100 * gbps / ceiling_gbps, 1) if gbps is not None and ceiling_gbps else None
    t, r, f = row.get("torch_us"), row.get("reducekit_us"), row.get("full_us")
    row["speedup"] = round(t / r, 3) if t and r else None
    row["ratio_full"] = round(r / f, 3) if r and f else None
    # Noise: the largest relative spread (max - min) / median of a contender's per-round figures.
    spreads = [(max(v) - min(v)) / statistics.median(v) for v in (row.get("samples_us") or {}).values() if len(v) > 1 and min(v) > 0]
    row["spread"] = round(max(spreads), 4) if spreads else None
    integer = not DTYPES[row["dtype"]].is_floating_point and row["dtype"] != "bool"
    targets = {}
    for tid, spec in DIMS_TARGETS.items():
        value = row.get(spec["key"])
        if device_type not in spec["devices"] or (spec.get("integers") and not integer) or value is None:
            targets[tid] = None
        else:
            targets[tid] = bool(value >= spec["bound"] if spec["better"] == "higher" else value <= spec["bound"])
    row["targets"] = targets
    return row


def _device_type(env: dict) -> str:
    return str(env.get("device", "cpu")).split(":")[0]


class _Views:
    """Other views of a Buffers' memory (time_cuda_eager and time_cuda_graph read only .views)."""

    def __init__(self, views):
        self.views = views
        self.count = len(views)


def host_us(fns: dict, x: torch.Tensor, calls: int = 200, samples: int = 25) -> dict:
    """Median host time per call (us) of each fn: wall time of `calls` back-to-back calls, few
    enough for the launch queue to hold them all, so that the host never waits for the GPU. The
    fns alternate sample by sample; the GPU is drained between samples, outside the timing (the
    method of tests/test_perf.py's host_us). On a CPU tensor: wall time per call."""
    sync = torch.cuda.synchronize if x.is_cuda else (lambda: None)
    out = {k: [] for k in fns}
    for fn in fns.values():
        for _ in range(calls):
            fn(x)
    sync()
    for _ in range(samples):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                fn(x)
            out[k].append((time.perf_counter() - t0) / calls * 1e6)
            sync()
    return {k: statistics.median(v) for k, v in out.items()}


HOST_N = 1024
HOST_CALLS = {  # call -> the torch.sum call it is compared with (None: a baseline)
    "torch.sum(x)": None, "reducekit.sum(x)": "torch.sum(x)",
    "torch.sum(x, dim=0)": None, "reducekit.sum(x, dim=0)": "torch.sum(x, dim=0)",
}


def host_run(device, calls: int = 200, samples: int = 25) -> dict:
    """Host time of eager calls on HOST_N float32 elements (1-D, so dim=0 reduces everything, through
    the dims path): torch.sum and reducekit.sum, full and dim=0. A call that raises is left out and
    its error kept."""
    x = random_input(HOST_N, torch.float32, device)
    fns = {"torch.sum(x)": torch.sum, "reducekit.sum(x)": reducekit.sum,
           "torch.sum(x, dim=0)": lambda v: torch.sum(v, 0), "reducekit.sum(x, dim=0)": lambda v: reducekit.sum(v, dim=0)}
    errors = {}
    for k in list(fns):
        try:
            fns[k](x)
        except Exception as e:  # noqa: BLE001 - reported
            errors[k] = _err(e)
            del fns[k]
    t = host_us(fns, x, calls, samples) if fns else {}
    excess = {k: round(t[k] - t[base], 3) for k, base in HOST_CALLS.items() if base and k in t and base in t}
    return {"n": HOST_N, "dtype": "float32", "device": str(x.device), "calls": calls, "samples": samples,
            "us": {k: round(v, 3) for k, v in t.items()}, "excess_us": excess, "errors": errors}


def _recover(on_gpu: bool):
    if on_gpu:
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001 - a sticky error shows in the next cells' errors
            pass


def dims_run(dtypes=None, modes=("eager", "graph"), device=None, budget_s: float = 0.25, rounds: int = 3,
             ceiling: dict | None = None, host: bool = True, cpu_max_mib: float = DIMS_CPU_MAX_MIB,
             graph_max_ms: float = DIMS_GRAPH_MAX_MS, progress: bool = True) -> dict:
    """Times every dims case (dims_cases) for each dtype and mode: torch.sum(x, dim, dtype=...),
    reducekit.sum(x, dim, dtype=...) (auto) and reducekit.sum(flat), flat being the same buffers
    seen as 1-D (same dtype, same bytes). `rounds` interleaved rounds (torch, reducekit, full, torch,
    ...), each contender's figure the median over rounds of time_cuda_eager's (budget_s / rounds
    each) or time_cuda_graph's medians. GPU: cold L2, inputs rotated over at least 4x the L2 and
    at least 2 buffers; graph mode interleaved with a foreign kernel; a contender whose eager time
    exceeds graph_max_ms is not timed in graph mode. CPU: shapes scaled to cpu_max_mib (float32
    bytes), eager only, time_cpu. Returns {"env", "rows", "host"}; a contender that raises has no
    time and its error in row["errors"]."""
    modes = list(dict.fromkeys(modes))
    unknown = [m for m in modes if m not in DIMS_MODE_TITLES]
    if unknown:
        raise ValueError(f"unknown mode(s) {unknown}; dims modes are {list(DIMS_MODE_TITLES)}")
    modes = [m for m in DIMS_MODE_TITLES if m in modes]  # eager first: graph mode uses its times
    device = _bench_device(device)
    on_gpu = device.type == "cuda"
    env = environment(device)
    env.update(graph_timing=GRAPH_TIMING, rounds=rounds, budget_s=budget_s, benchmark="dims")
    dtypes = list(dtypes) if dtypes else list(DIMS_DTYPES)
    if on_gpu:
        torch.cuda.set_device(device)
        env["ceiling"] = ceiling or read_ceiling(device)
        cold_bytes = int(4 * torch.cuda.get_device_properties(device).L2_cache_size)
        env["cold_l2"] = (f"inputs rotated over >= {cold_bytes / 1e6:.0f} MB (4x L2) and >= 2 buffers per case; "
                          "the flat full-sum input is the same buffers seen as 1-D")
        cases = dims_cases(dtypes)
    else:
        modes = ["eager"]
        cold_bytes = 0
        max_elems = int(cpu_max_mib * 2**20 // 4)
        env["note"] = (f"no CUDA GPU: CPU tensors, shapes scaled to at most {cpu_max_mib:g} MiB of float32 "
                       "(the largest dim divided by a power of two)")
        cases = dims_cases(dtypes, max_elems)
    env["graph_max_ms"] = graph_max_ms
    ceiling_gbps = env.get("ceiling", {}).get("gbps")
    bar = _progress(len(cases) * len(modes), progress)
    rows = []
    for case in cases:
        shape, dim, sd, dname = case["shape"], case["dim"], case["sum_dtype"], case["dtype"]
        dtype = DTYPES[dname]
        numel = math.prod(shape)
        item = torch.empty((), dtype=dtype).element_size()
        out_dtype = DTYPES[sd] if sd else (dtype if dtype.is_floating_point else torch.int64)
        out_numel = math.prod(_reduced_shape(shape, dim))
        if on_gpu:
            flat = Buffers(numel, dtype, device, max(cold_bytes, 2 * numel * item))
            shaped = _Views([v.view(shape) for v in flat.views])
        else:
            flat = _Views([random_input(numel, dtype, "cpu")])
            shaped = _Views([flat.views[0].view(shape)])
        tfn, rfn = _sum_fns(dim, sd)
        fns = {"torch": tfn, "reducekit": rfn, "full": reducekit.sum}
        inputs = {"torch": shaped, "reducekit": shaped, "full": flat}
        check = dims_check(shaped.views[0], dim, sd)
        _recover(on_gpu)
        eager_us: dict = {}
        for mode in modes:
            if bar:
                bar.set_description(f"{dname} {case['case']} {mode}")
                bar.update()
            samples = {k: [] for k in fns}
            errors = {}
            for k in fns:
                if mode == "graph" and eager_us.get(k, 0) > graph_max_ms * 1e3:
                    errors[k] = f"not timed in graph mode: eager {eager_us[k] / 1e3:.1f} ms > {graph_max_ms:g} ms"
            for _ in range(rounds):
                for k, fn in fns.items():
                    if k in errors:
                        continue
                    try:
                        if on_gpu and mode == "graph":
                            t = time_cuda_graph(fn, inputs[k])
                        elif on_gpu:
                            t = time_cuda_eager(fn, inputs[k], budget_s / rounds)[0]
                        else:
                            t = time_cpu(fn, inputs[k].views[0], budget_s / rounds)[0]
                        samples[k].append(t)
                    except Exception as e:  # noqa: BLE001 - reported in the row
                        errors[k] = _err(e)
                        _recover(on_gpu)
            row = {"case": case["case"], "shape": list(shape), "issue_shape": list(case["issue_shape"]),
                   "dim": list(dim) if isinstance(dim, (tuple, list)) else dim, "sum_dtype": sd, "dtype": dname,
                   "out_dtype": str(out_dtype).replace("torch.", ""), "mode": mode, "numel": numel,
                   "bytes_read": numel * item, "bytes_written": out_numel * torch.empty((), dtype=out_dtype).element_size(),
                   "buffers": flat.count, "check": check}
            for k in fns:
                t = statistics.median(samples[k]) if samples[k] and k not in errors else None
                row[f"{k}_us"] = round(t, 3) if t is not None else None
                if mode == "eager" and t is not None:
                    eager_us[k] = t
            row["samples_us"] = {k: [round(v, 3) for v in s] for k, s in samples.items() if k not in errors}
            row["errors"] = errors
            rows.append(dims_derive(row, ceiling_gbps, device.type))
        del flat, shaped, inputs
        if on_gpu:
            torch.cuda.empty_cache()
    if bar:
        bar.close()
    run = {"env": env, "rows": rows}
    if host:
        try:
            run["host"] = host_run(device)
        except Exception as e:  # noqa: BLE001 - the timings above are kept
            run["host"] = {"error": _err(e)}
    return run


def merge_dims_runs(runs: list[dict]) -> dict:
    """One dims report from several runs (say dtypes split over two GPU calls): rows keep their own
    run's percent of ceiling and verdicts; env["ceilings"] lists every run's ceiling; the host
    figures are the last run's that has them."""
    env = dict(runs[0]["env"])
    env["ceilings"] = [r["env"].get("ceiling") for r in runs]
    if len(runs) > 1:
        env["merged"] = f"{len(runs)} runs: " + "; ".join(
            f"{', '.join(dict.fromkeys(x['dtype'] for x in r['rows']))} at {r['env']['date']}" for r in runs)
    out = {"env": env, "rows": [row for r in runs for row in r["rows"]]}
    hosts = [r["host"] for r in runs if r.get("host")]
    if hosts:
        out["host"] = hosts[-1]
    return out


def _fmt_x(v) -> str:
    return f"{v:.2f}" if v is not None else "—"


def _fmt_pct(v) -> str:
    return f"{v:.1f}" if v is not None else "—"


def _within_spread(row: dict, tid: str) -> bool:
    """Whether a missed target's figure is closer to its bound than the row's round-to-round spread."""
    spec, spread = DIMS_TARGETS[tid], row.get("spread")
    return bool(spread) and abs(row[spec["key"]] / spec["bound"] - 1) < spread


def _missed_text(row: dict, tid: str) -> str:
    fig = f"{row[DIMS_TARGETS[tid]['key']]:.3f}x"
    if _within_spread(row, tid):
        fig += f", within the rounds' spread of {100 * row['spread']:.1f}%"
    return fig


def dims_verdict(row: dict) -> str:
    """The targets cell of a row: 'met (k of k)', 'missed: target (figure); ...', '—' (none applies),
    plus a failed result check and contenders not timed."""
    check = row.get("check", "ok")
    parts = [f"**wrong result: {check}**"] if check.startswith("mismatch") else []
    missed, met = [], 0
    for tid, ok in row["targets"].items():
        if ok is False:
            missed.append(f"{dims_target_text(tid, short=True)} ({_missed_text(row, tid)})")
        elif ok:
            met += 1
    if missed:
        parts.append("missed: " + "; ".join(missed))
    elif met:
        parts.append(f"met ({met} of {met})")
    unmeasured = [k for k in DIMS_CONTENDERS if row.get(f"{k}_us") is None]
    if unmeasured:
        parts.append("not timed: " + ", ".join(unmeasured))
    elif check.startswith("error"):
        parts.append(f"result check {check}")
    return "; ".join(parts) or "—"


def dims_table(rows, mode: str) -> list[str]:
    """Markdown lines of one mode's table: per case and dtype, the three times (us), % of the read
    ceiling (GB/s where no ceiling was measured: CPU), speedup over torch.sum, ratio to the
    same-bytes full sum, and the targets. Empty without rows of that mode."""
    sub = [r for r in rows if r["mode"] == mode]
    if not sub:
        return []
    pct = any(r.get("reducekit_pct") is not None or r.get("torch_pct") is not None for r in sub)
    unit, fmt, suffix = ("% of ceiling", _fmt_pct, "pct") if pct else ("GB/s", lambda v: f"{v:,.1f}" if v is not None else "—", "gbps")
    out = [f"| case | dtype | torch.sum us | reducekit us | full sum us | torch.sum {unit} | reducekit {unit} "
           f"| speedup vs torch.sum | reducekit / full sum | targets |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in sub:
        times = " | ".join(_fmt_time(r[f"{k}_us"]) if r.get(f"{k}_us") is not None else "—" for k in DIMS_CONTENDERS)
        out.append(f"| {r['case']} | {r['dtype']} | {times} | {fmt(r.get(f'torch_{suffix}'))} | {fmt(r.get(f'reducekit_{suffix}'))} "
                   f"| {_fmt_x(r.get('speedup'))} | {_fmt_x(r.get('ratio_full'))} | {dims_verdict(r)} |")
    return out


def dims_target_summary(rows, mode: str) -> list[str]:
    """Per target, over one mode's rows: 'text: k of n met (missed: case dtype, figure; ...)';
    targets that apply to no row are left out."""
    out = []
    sub = [r for r in rows if r["mode"] == mode]
    for tid, spec in DIMS_TARGETS.items():
        judged = [r for r in sub if r["targets"].get(tid) is not None]
        if not judged:
            continue
        missed = [r for r in judged if not r["targets"][tid]]
        line = f"{dims_target_text(tid)}: {len(judged) - len(missed)} of {len(judged)} met"
        if missed:
            line += " (missed: " + "; ".join(f"{r['case']} {r['dtype']}, {_missed_text(r, tid)}" for r in missed) + ")"
        out.append(line)
    wrong = [r for r in sub if r.get("check", "ok").startswith("mismatch")]
    if wrong:
        out.append("wrong results: " + "; ".join(f"{r['case']} {r['dtype']}: {r['check']}" for r in wrong))
    untimed = [r for r in sub if any(r.get(f"{k}_us") is None for k in DIMS_CONTENDERS)]
    if untimed:
        out.append(f"{len(untimed)} of {len(sub)} rows with a contender not timed (see \"Not timed\")")
    return out


def host_lines(host: dict | None) -> list[str]:
    """Markdown lines of the host-time table (dims_run's run["host"])."""
    if not host:
        return []
    if "error" in host:
        return [f"Host time not measured: {host['error']}"]
    where = "GPU" if host["device"].startswith("cuda") else "CPU"
    out = [f"Host time of an eager call, {host['n']} {host['dtype']} elements ({host['device']}): median over "
           f"{host['samples']} samples of {host['calls']} back-to-back calls, wall time per call"
           + (" (the launch queue holds them all: the GPU is not the bottleneck)." if where == "GPU" else "."),
           "", "| call | us per call | minus the torch.sum call's |", "|---|---:|---:|"]
    for k in HOST_CALLS:
        if k in host["us"]:
            ex = host["excess_us"].get(k)
            out.append(f"| `{k}` | {host['us'][k]:.2f} | {f'{ex:+.2f}' if ex is not None else '—'} |")
        elif k in host.get("errors", {}):
            out.append(f"| `{k}` | error: {host['errors'][k]} | — |")
    return out


def _errors_lines(rows) -> list[str]:
    """'Not timed' list: each distinct (call, error) once, with the rows it hit."""
    by_error: dict[tuple, list] = {}
    for r in rows:
        for k, e in r.get("errors", {}).items():
            by_error.setdefault((k, e), []).append(f"{r['case']} {r['dtype']} {r['mode']}")
    if not by_error:
        return []
    out = ["Not timed:", ""]
    for (k, e), where in by_error.items():
        out.append(f"- `{DIMS_CALLS[k]}`, {len(where)} row(s) ({'; '.join(where[:3])}{'; ...' if len(where) > 3 else ''}): {e}")
    return out + [""]


def _ceiling_line(env: dict) -> str | None:
    c = env.get("ceiling")
    if not c:
        return None
    if c.get("given"):
        return f"Read ceiling: **{c['gbps'] / 1e3:.3f} TB/s**, given on the command line (not measured in this run)."
    return (f"Read ceiling, measured in this run: **{c['gbps'] / 1e3:.3f} TB/s** (pure read probe over "
            f"{c['bytes'] / 2**30:.1f} GiB, block {c['block']}, unroll {c['unroll']}, {c['waves']} wave(s)).")


DIMS_METHOD = ("Per case and dtype, three contenders timed in the same run on the same memory: "
               "`torch.sum(x, dim, dtype=...)`, `reducekit.sum(x, dim, dtype=...)` (method auto), and "
               "`reducekit.sum(flat)`, the full sum of the same buffers seen as one flat contiguous tensor "
               "(same dtype, same bytes). Rounds interleave the three; each figure is the median over rounds of the "
               "timing functions' medians (CUDA events over batches, or interleaved graph replays). % of ceiling: "
               "bytes read (the input once) / time / read ceiling. Speedup: torch.sum's time / reducekit's. "
               "reducekit / full sum: reducekit's time over dims / its full sum's time on the same bytes.")


def dims_markdown(run: dict) -> str:
    env, rows = run["env"], run["rows"]
    out = ["# reducekit benchmark: reductions over dims", ""]
    keys = ["gpu", "sms", "l2_mb", "cc", "driver", "cuda", "torch", "reducekit", "python", "date", "cpu", "threads"]
    shown = [k for k in keys if k in env]
    out += ["| " + " | ".join(shown) + " |", "|" + "---|" * len(shown), "| " + " | ".join(str(env[k]) for k in shown) + " |", ""]
    c = _ceiling_line(env)
    if c:
        out.append(c + (f" Cold L2: {env['cold_l2']}." if "cold_l2" in env else ""))
    if len([c for c in env.get("ceilings", []) if c]) > 1:
        out.append("This report merges " + env["merged"] + "; read ceilings of each run: "
                   + ", ".join(f"{c['gbps'] / 1e3:.3f} TB/s" for c in env["ceilings"] if c)
                   + ". Each row's percent of ceiling uses its own run's ceiling.")
    if "note" in env:
        out.append(f"**{env['note']}.**")
    out += ["", DIMS_METHOD, "", "Targets, per row:", ""]
    out += [f"- {dims_target_text(t)} ({', '.join(s['devices'])})" for t, s in DIMS_TARGETS.items()] + [""]
    for mode in DIMS_MODE_TITLES:
        table = dims_table(rows, mode)
        if not table:
            continue
        out += [f"## {DIMS_MODE_TITLES[mode]}", ""] + table + [""]
        summary = dims_target_summary(rows, mode)
        if summary:
            out += [f"Targets ({mode}):", ""] + [f"- {s}" for s in summary] + [""]
    if any(r["mode"] == "graph" for r in rows):
        out += [GRAPH_LEGEND, ""]
    out += _errors_lines(rows)
    h = host_lines(run.get("host"))
    if h:
        out += ["## Host time", ""] + h + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def dims_summary(run: dict) -> str:
    """A short table for the terminal."""
    w = max([len(r["case"]) for r in run["rows"]] + [4])
    lines = [f"{'case':{w}} {'dtype':9} {'mode':6} {'torch':>10} {'reducekit':>10} {'full':>10} {'%ceil':>6} "
             f"{'speedup':>8} {'/full':>6}  targets"]

    def us(v):
        return f"{v:10.1f}" if v is not None else f"{'-':>10}"

    for r in run["rows"]:
        pct = r.get("reducekit_pct")
        lines.append(f"{r['case']:{w}} {r['dtype']:9} {r['mode']:6} {us(r['torch_us'])} {us(r['reducekit_us'])} {us(r['full_us'])} "
                     f"{pct if pct is not None else '-':>6} {_fmt_x(r['speedup']):>8} {_fmt_x(r['ratio_full']):>6}  "
                     f"{dims_verdict(r).replace('**', '')}")
    host = run.get("host") or {}
    for k, v in host.get("us", {}).items():
        ex = host["excess_us"].get(k)
        lines.append(f"host {k:26} {v:8.2f} us" + (f" ({ex:+.2f} us vs torch.sum)" if ex is not None else ""))
    if host.get("error"):
        lines.append(f"host: {host['error']}")
    return "\n".join(lines)


def write_dims_results(run: dict, out_dir: str, plots: bool = True) -> list[str]:
    """results_dims.json (every figure and the environment), results_dims.md and, with plots,
    dims_pct_ceiling_<mode>.png (dims_gbps_<mode>.png without a ceiling)."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    js = os.path.join(out_dir, DIMS_FILE + ".json")
    with open(js, "w") as f:
        json.dump(run, f, indent=1)
    paths.append(js)
    md = os.path.join(out_dir, DIMS_FILE + ".md")
    with open(md, "w") as f:
        f.write(dims_markdown(run))
    paths.append(md)
    if plots:
        paths += _plots("save_dims_plots", run, out_dir)
    return paths


def dims_main(argv=None):
    p = argparse.ArgumentParser(prog="bench.py --dims", description=(
        "Reductions over dims: torch.sum(x, dim, dtype=...) against reducekit.sum(x, dim, dtype=...) and "
        "against reducekit's full sum of the same bytes; eager and interleaved-graph modes, cold L2, read ceiling "
        "measured in the same run. Without a GPU: CPU tensors, shapes scaled down, eager only."))
    p.add_argument("--dtypes", nargs="+", choices=list(DTYPES), default=list(DIMS_DTYPES),
                   help="input dtypes (default: float32 bfloat16 int32); the (8192, 8192) cases run for bfloat16 only")
    p.add_argument("--modes", nargs="+", default=["eager", "graph"], choices=list(DIMS_MODE_TITLES))
    p.add_argument("--budget", type=float, default=0.25, help="seconds of eager timing per contender and case, split over the rounds")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the three contenders (median over rounds)")
    p.add_argument("--ceiling", type=float, default=None, metavar="GBPS",
                   help="read ceiling in GB/s, given instead of measured in this run (GPU)")
    p.add_argument("--graph-max-ms", type=float, default=DIMS_GRAPH_MAX_MS,
                   help="a contender slower than this (eager) is not timed in graph mode")
    p.add_argument("--cpu-max-mib", type=float, default=DIMS_CPU_MAX_MIB,
                   help="CPU: scale each case's largest dim down to at most this many MiB of float32")
    p.add_argument("--device", default=None, help="cuda, cuda:N or cpu (default: cuda when present)")
    p.add_argument("--no-host", action="store_true", help="skip the host-time measurement")
    p.add_argument("--out", default=None, help="directory for results_dims.json/.md and the plots")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--merge", nargs="+", metavar="RESULTS_DIMS_JSON",
                   help="no timing: merge earlier results_dims.json files (or regenerate one) into --out")
    a = p.parse_args(argv)
    if a.merge:
        runs = []
        for path in a.merge:
            with open(path) as f:
                runs.append(json.load(f))
        run = merge_dims_runs(runs)
    else:
        ceiling = {"gbps": a.ceiling, "given": True} if a.ceiling else None
        run = dims_run(a.dtypes, tuple(a.modes), a.device, a.budget, a.rounds, ceiling, not a.no_host, a.cpu_max_mib,
                       a.graph_max_ms, progress=not a.no_progress)
    if a.out:
        for path in write_dims_results(run, a.out, plots=not a.no_plots):
            print(f"wrote {path}")
    env = run["env"]
    print(f"\n{env.get('gpu', env.get('cpu', 'cpu'))}, torch {env['torch']}" + (f", CUDA {env['cuda']}" if "cuda" in env else ""))
    c = _ceiling_line(env)
    if c:
        print(c.replace("**", ""))
    if "note" in env:
        print(env["note"])
    print(dims_summary(run))
    for mode in DIMS_MODE_TITLES:
        for line in dims_target_summary(run["rows"], mode):
            print(f"[{mode}] {line}")
    return run


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--dims" in argv:  # the reductions-over-dims benchmark: its own options (dims_main)
        return dims_main([a for a in argv if a != "--dims"])
    p = argparse.ArgumentParser(description="Time reducekit methods against torch.sum and CUB "
                                            "(--dims: reductions over dims, see --dims --help).")
    p.add_argument("--quick", action="store_true", help="float32 and int32 at 2^16, 2^20, 2^24, 2^28, all methods (under a minute on an H200)")
    p.add_argument("--methods", nargs="+", help="methods to time (default: all); torch.sum is always timed")
    p.add_argument("--dtypes", nargs="+", choices=list(DTYPES), help="default: all (quick: float32 int32)")
    p.add_argument("--sizes", nargs="+", type=lambda s: int(eval(s, {"__builtins__": {}})), help="element counts, e.g. 2**20 1000")
    p.add_argument("--modes", nargs="+", default=["eager", "graph"], choices=["eager", "graph"],
                   help="graph: CUDA graph replay interleaved with a foreign kernel (GPU time per call, no PDL overlap between calls)")
    p.add_argument("--chained", action="store_true",
                   help="also time mode graph_chained: back-to-back calls in the graph (PDL may overlap a call with the next); "
                        "reported separately, labelled chained")
    p.add_argument("--slow-ms", type=float, default=20.0, help="stop timing a method at larger N once it exceeds this")
    p.add_argument("--budget", type=float, default=0.25, help="seconds of eager timing per cell (batches, medians)")
    p.add_argument("--out", default=None, help="directory for results.md/json/csv and plots")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--merge", nargs="+", metavar="RESULTS_JSON", help="no timing: merge earlier results.json files into --out")
    a = p.parse_args(argv)
    if a.merge:
        run = merge_runs([load_run(f) for f in a.merge])
    else:
        run = benchmark_run(a.methods, a.dtypes, a.sizes, modes=tuple(a.modes), quick=a.quick, progress=not a.no_progress,
                            slow_ms=a.slow_ms, budget_s=a.budget, chained=a.chained)
    if a.out:
        for path in write_results(run, a.out, plots=not a.no_plots):
            print(f"wrote {path}")
    env = run["env"]
    print(f"\n{env.get('gpu', env.get('cpu', 'cpu'))}, torch {env['torch']}" + (f", CUDA {env['cuda']}" if "cuda" in env else ""))
    if "ceiling" in env:
        print(f"read ceiling {env['ceiling']['gbps'] / 1e3:.3f} TB/s; {env['cold_l2']}")
    if "note" in env:
        print(env["note"])
    print(summary(run))
    return run


if __name__ == "__main__":
    main()


def targets_main(module, doc: str) -> int:
    """The command line of a benchmark with targets (reducekit.bench_exact, reducekit.bench_ops):
    --out DIR; runs module.run() on the GPU, writes its results there, prints its markdown.
    Returns 0 if every target is met, 1 if one is missed (the figures are written anyway), 2
    without a CUDA GPU."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print(f"{module.__name__.rsplit('.', 1)[-1]}: needs a CUDA GPU", file=sys.stderr)
        return 2
    run = module.run()
    for path in module.write(run, args.out):
        print("wrote", path)
    print(module.markdown(run))
    return 0 if all(t["met"] for t in module.targets(run)) else 1
