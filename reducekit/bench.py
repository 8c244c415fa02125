"""Benchmark harness: reducekit methods against torch.sum and CUB, per dtype and size.

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


def benchmark_run(methods=None, dtypes=None, sizes=None, device=None, modes=("eager", "graph"), quick=False,
                  progress=True, slow_ms=20.0, budget_s=0.25, ceiling=None, chained=False) -> dict:
    """As benchmark(), returning {"env": ..., "rows": [...]}."""
    modes = list(dict.fromkeys(list(modes) + (["graph_chained"] if chained else [])))
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ValueError(f"unknown mode(s) {unknown}; modes are {list(MODES)}")
    if device is None:
        device = "cuda" if torch.cuda.is_available() and reducekit._C.cuda_built else "cpu"
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
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
        try:
            from .plotting import save_plots

            paths += save_plots(run, out_dir)
        except ImportError as e:
            print(f"plots skipped: {e}", file=sys.stderr)
    return paths


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


def main(argv=None):
    p = argparse.ArgumentParser(description="Time reducekit methods against torch.sum and CUB.")
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
