"""Timing primitives shared by every benchmark: inputs (random_input, Buffers), the environment
record, the eager, graph and CPU timers, the read ceiling, and the device, progress bar and error
text the runners share.

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

import datetime
import math
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
GRAPH_MAX_N = 2**22  # the largest N timed in the graph modes (larger: eager only)
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


class Rotation:
    """Copies of one given input (Buffers draws its own random data), totalling at least
    cold_bytes, layout kept (clone preserves strides): views[i] for call i % count."""

    def __init__(self, x: torch.Tensor, cold_bytes: int):
        count = max(1, math.ceil(cold_bytes / max(1, x.numel() * x.element_size())))
        self.views = [x] + [x.clone() for _ in range(count - 1)]


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


# ------------------------------------------------------------------------------------------------
# Shared by the runners (sum.py, dims.py, host.py)


def _bench_device(device) -> torch.device:
    """The device to time on: the one given, else the current GPU when reducekit was built with
    CUDA, else the CPU; a bare "cuda" becomes the current GPU."""
    if device is None:
        device = "cuda" if torch.cuda.is_available() and reducekit._C.cuda_built else "cpu"
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


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


def _err(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0][:200] if lines else ''}"
