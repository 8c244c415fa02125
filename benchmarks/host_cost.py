"""Where an eager call's host time goes: the sweep's cases whose eager ratio trails their graph ratio.

    python benchmarks/host_cost.py --sweep benchmarks/results/h100/sweep/sweep_cuda.json --worst 24 --out DIR

An eager call of a small case is host-bound: CUDA events over back-to-back calls measure the host's
rate, not the kernels'. For each case (the --worst cases of a committed sweep by eager ratio, the
same draw rebuilt by benchmarks/sweep.py's make(), plus reference cases), on reducekit and torch:
- eager_us: reducekit/bench/timing.py's eager timer (CUDA events, inputs rotated);
- host_us: wall-clock time per call of back-to-back calls (perf_counter, one sync at the end), the
  median of 7 batches;
- the profiler's CPU-side events per call (torch.profiler, CPU and CUDA activities): each aten op
  and CUDA runtime call the op makes (cudaLaunchKernel, cudaMemsetAsync, ...), count per call and
  host us per call.
Writes host_cost.json and host_cost.md.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import reducekit  # noqa: E402
from sweep import calls, make  # noqa: E402

REFERENCE = [  # small cases whose host path is the simplest one
    {"op": "sum", "dtype": "float32", "shape": [1 << 16], "dims": None, "layout": "contiguous", "perm": None},
    {"op": "sum", "dtype": "float32", "shape": [256, 256], "dims": [1], "layout": "contiguous", "perm": None},
    {"op": "amax", "dtype": "float32", "shape": [256, 256], "dims": [0], "layout": "contiguous", "perm": None},
]


def host_us(fn, x, n=200, batches=7):
    for _ in range(20):
        fn(x)
    torch.cuda.synchronize()
    s = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(n):
            fn(x)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        s.append((t1 - t0) / n * 1e6)
    return statistics.median(s)


def profile(fn, x, n=50):
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as prof
    for _ in range(10):
        fn(x)
    torch.cuda.synchronize()
    with prof(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for _ in range(n):
            fn(x)
        torch.cuda.synchronize()
    out = {}
    for e in p.key_averages():
        if e.key.startswith("cudaDeviceSynchronize") or e.key.startswith("cudaStreamSynchronize"):
            continue
        cpu = getattr(e, "self_cpu_time_total", 0) or 0
        if e.count >= n or e.key.startswith("cuda"):
            out[e.key] = {"per_call": e.count / n, "self_cpu_us_per_call": cpu / n,
                          "device": getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweep", required=True)
    ap.add_argument("--worst", type=int, default=24)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    sweep = json.load(open(args.sweep))
    rows = [r for r in sweep["rows"] if "ratio" in r]
    index = {id(r): i for i, r in enumerate(sweep["rows"])}
    picked = sorted(rows, key=lambda r: r["ratio"] / r["ratio_graph"])[: args.worst]
    cases = [({k: r[k] for k in ("op", "dtype", "shape", "dims", "layout", "perm")}, index[id(r)]) for r in picked]
    cases += [(c, None) for c in REFERENCE]
    from reducekit.bench.timing import Rotation, time_cuda_eager
    res = []
    for case, i in cases:
        # The sweep seeds case i's data with seed * 100003 + i over its whole draw; rows are in draw order.
        x = make(case, "cuda", args.seed * 100003 + (i if i is not None else 0))
        ours, theirs = calls(case)
        rot = Rotation(x, 4 * torch.cuda.get_device_properties(x.device).L2_cache_size)
        r = {"case": case, "sweep_row": i}
        for name, fn in (("ours", ours), ("torch", theirs)):
            r[name] = {"eager_us": time_cuda_eager(fn, rot, 0.1)[0], "host_us": host_us(fn, x), "events": profile(fn, x)}
        res.append(r)
        o, t = r["ours"], r["torch"]
        print(f"{case['op']:12s} {case['dtype']:9s} {str(case['shape']):26s} {str(case['dims']):12s} {case['layout']:13s} "
              f"eager {o['eager_us']:6.1f} / {t['eager_us']:6.1f}  host {o['host_us']:6.1f} / {t['host_us']:6.1f}", flush=True)
        for k, v in sorted(o["events"].items(), key=lambda kv: -kv[1]["self_cpu_us_per_call"])[:12]:
            print(f"      {k[:70]:70s} x{v['per_call']:.2f} {v['self_cpu_us_per_call']:7.2f} us")
    os.makedirs(args.out, exist_ok=True)
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "sweep": args.sweep}
    json.dump({**meta, "rows": res}, open(os.path.join(args.out, "host_cost.json"), "w"), indent=1)
    lines = [f"# Host cost of eager calls, {meta['device']} ({meta['date']}, torch {meta['torch']})", "",
             "eager = CUDA events over back-to-back calls (rotated inputs); host = wall time per call of back-to-back "
             "calls; events: the profiler's CPU-side events per call (count, self host us).", "",
             "| op | dtype | shape | dims | layout | ours eager | torch eager | ours host | torch host | ours' events (count, us) |",
             "|---|---|---|---|---|---:|---:|---:|---:|---|"]
    for r in res:
        c, o, t = r["case"], r["ours"], r["torch"]
        ev = "; ".join(f"{k} x{v['per_call']:.1f} {v['self_cpu_us_per_call']:.1f}"
                       for k, v in sorted(o["events"].items(), key=lambda kv: -kv[1]["self_cpu_us_per_call"])[:6])
        lines.append(f"| {c['op']} | {c['dtype']} | {tuple(c['shape'])} | {c['dims']} | {c['layout']} | {o['eager_us']:.1f} | "
                     f"{t['eager_us']:.1f} | {o['host_us']:.1f} | {t['host_us']:.1f} | {ev} |")
    open(os.path.join(args.out, "host_cost.md"), "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
