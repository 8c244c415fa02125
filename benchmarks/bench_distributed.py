"""reducekit.distributed at world size 1 (NCCL on one GPU; gloo with --device cpu): what the
sharded path costs over the single-device op.

    NCCL_NVLS_ENABLE=0 python benchmarks/bench_distributed.py --out benchmarks/results/h200
    python benchmarks/bench_distributed.py --device cpu --quick --out /tmp/rk   # the script's own check

For each op and size it times (median of --reps, CUDA events around each call after warm-up):
- local: the single-device reducekit op on the whole tensor;
- plain: reducekit.distributed.<op>(tensor, group=WORLD): the same local pass and one collective of
  the check header and the partial, in a fixed 4 KiB slot (a second collective for partials beyond
  it; one rank: the collective is a copy, so this is the fixed cost);
- dtensor: the reducekit op on a DTensor (Shard(0) on a 1-rank mesh), resolved to a plain tensor
  (full_tensor(): Partial results pay their all-reduce there);
- torch_dtensor: torch's own op on the same DTensor, resolved, where torch has one.
and counts the collectives each call makes and their bytes (the partial, never the shard). A small
tensor (1024 values) gives the DTensor dispatch overhead: dtensor - local, host-bound.
Writes results_distributed.json (and prints a table). NVLink multicast stays off (NCCL_NVLS_ENABLE=0).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ["NCCL_NVLS_ENABLE"] = "0"  # NVLink multicast off, whatever the caller set

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.distributed.tensor import Shard, distribute_tensor, init_device_mesh  # noqa: E402

import reducekit  # noqa: E402
import reducekit.distributed as rd  # noqa: E402


class Counter:
    """Counts the c10d collectives reducekit.distributed makes, and their bytes."""

    def __init__(self):
        self.calls, self.bytes = 0, 0
        self._orig = {}

    def __enter__(self):
        for name in ("all_reduce", "all_gather_single", "all_gather_into_tensor"):
            f = getattr(dist, name, None)
            if f is None:
                continue
            self._orig[name] = f

            def wrapped(*a, _f=f, _name=name, **k):
                t = a[0] if _name == "all_reduce" else a[1]
                self.calls += 1
                self.bytes += t.numel() * t.element_size()
                return _f(*a, **k)
            setattr(dist, name, wrapped)
        rd._gather_single = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        return self

    def __exit__(self, *exc):
        for name, f in self._orig.items():
            setattr(dist, name, f)
        rd._gather_single = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor


def timeit(fn, reps, device):
    for _ in range(3):
        fn()
    ts = []
    for _ in range(reps):
        if device == "cuda":
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b) * 1e3)
        else:
            t0 = time.perf_counter()
            fn()
            ts.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(ts)


def full(r):
    if isinstance(r, (tuple, list)):
        return [full(t) for t in r]
    return r.full_tensor() if hasattr(r, "full_tensor") else r


def ops(x):
    """(name, local call, plain-API call, reducekit on DTensor, torch on DTensor or None)."""
    d = 0
    return [
        ("sum", lambda t: reducekit.sum(t), lambda t: rd.sum(t), lambda t: torch.sum(t)),
        ("sum dim=0", lambda t: reducekit.sum(t, d), lambda t: rd.sum(t, d), lambda t: torch.sum(t, d)),
        ("sum exact", lambda t: reducekit.sum(t, method="exact"), lambda t: rd.sum(t, method="exact"), None),
        ("sum exact dim=0", lambda t: reducekit.sum(t, d, method="exact"), lambda t: rd.sum(t, d, method="exact"), None),
        ("mean", lambda t: reducekit.mean(t), lambda t: rd.mean(t), lambda t: torch.mean(t)),
        ("amax dim=0", lambda t: reducekit.amax(t, d), lambda t: rd.amax(t, d), lambda t: torch.amax(t, d)),
        ("vector_norm", lambda t: reducekit.linalg.vector_norm(t), lambda t: rd.vector_norm(t), lambda t: torch.linalg.vector_norm(t)),
        ("var_mean dim=0", lambda t: reducekit.var_mean(t, d), lambda t: rd.var_mean(t, d), lambda t: torch.var_mean(t, d)),
        ("logsumexp dim=0", lambda t: reducekit.logsumexp(t, d), lambda t: rd.logsumexp(t, d), lambda t: torch.logsumexp(t, d)),
        ("argmax", lambda t: reducekit.argmax(t), lambda t: rd.argmax(t), lambda t: torch.argmax(t)),
        ("count_nonzero dim=0", lambda t: reducekit.count_nonzero(t, d), lambda t: rd.count_nonzero(t, d),
         lambda t: torch.count_nonzero(t, d)),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "h200"))
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--quick", action="store_true", help="small sizes and few repetitions (a check of the script)")
    args = ap.parse_args()
    dev = args.device
    backend = "nccl" if dev == "cuda" else "gloo"
    init = tempfile.mktemp(prefix="rk_bench_dist_")
    dist.init_process_group(backend, init_method=f"file://{init}", rank=0, world_size=1)
    if dev == "cuda":
        torch.cuda.set_device(0)
    mesh = init_device_mesh(dev, (1,))
    shapes = [(1024,), (8191, 1023)] if args.quick else [(1024,), (4093, 4099), (16411, 4099)]
    reps = 5 if args.quick else args.reps
    g = torch.Generator(device="cpu").manual_seed(24)
    rows = []
    for shape in shapes:
        x = (torch.randn(shape, generator=g) + 1.0).to(dev)
        dt = distribute_tensor(x, mesh, [Shard(0)])
        for name, local, plain, tfn in ops(x):
            torch_dt_us, torch_dt_note = None, None
            if tfn:
                try:  # torch's own DTensor may have no sharding strategy for the op (var_mean in torch 2.11)
                    torch_dt_us = timeit(lambda: full(tfn(dt)), reps, dev)
                except NotImplementedError as e:
                    torch_dt_note = str(e).splitlines()[0]
            with Counter() as c:
                plain(x)
            row = {"op": name, "shape": list(shape), "numel": x.numel(), "dtype": str(x.dtype),
                   "local_us": timeit(lambda: local(x), reps, dev),
                   "plain_us": timeit(lambda: plain(x), reps, dev),
                   "dtensor_us": timeit(lambda: full(local(dt)), reps, dev),
                   "dtensor_call_us": timeit(lambda: local(dt), reps, dev),
                   "torch_dtensor_us": torch_dt_us, "torch_dtensor_note": torch_dt_note,
                   "torch_local_us": timeit(lambda: tfn(x), reps, dev) if tfn else None,
                   "plain_collectives": c.calls, "plain_collective_bytes": c.bytes,
                   "shard_bytes": x.numel() * x.element_size()}
            rows.append(row)
            print(f"{name:22s} {str(shape):16s} local {row['local_us']:9.1f} us  plain {row['plain_us']:9.1f}  dtensor "
                  f"{row['dtensor_us']:9.1f} (call {row['dtensor_call_us']:8.1f})  torch dtensor "
                  f"{row['torch_dtensor_us'] if row['torch_dtensor_us'] is not None else float('nan'):9.1f}  "
                  f"collectives {c.calls} ({c.bytes} B of a {row['shard_bytes']} B shard)", flush=True)
    res = {"device": torch.cuda.get_device_name() if dev == "cuda" else "cpu", "backend": backend, "world_size": 1,
           "torch": torch.__version__, "nccl_nvls_enable": os.environ["NCCL_NVLS_ENABLE"], "reps": reps,
           "unit": "microseconds, median", "rows": rows}
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "results_distributed.json")
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print(f"wrote {path}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
