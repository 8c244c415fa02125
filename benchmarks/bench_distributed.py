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

With --world N (N processes, one GPU each; gloo processes with --device cpu) it times instead one
tensor of 2^--log2 float32 values (normal + 1, seeded per rank) sharded in N equal pieces along
dim 0, for the full sum, exact sum, vector_norm and var_mean:
- local_alone: the reducekit op on this rank's shard while the other ranks wait on a host barrier
  (the single-GPU time of the same shard);
- local_together: the same op with every rank running it at once (ranks released by a host
  barrier before each call; the time is the slowest rank's);
- plain / dtensor / torch_dtensor: as above, over the N ranks, each the slowest rank's median;
- allreduce_small: one all-reduce of the 4 KiB slot the plain API exchanges, alone;
- single: the op on the whole tensor on one GPU (rank 0, every other rank waiting).
It also checks world-size invariance: exact's bits on N GPUs (plain and DTensor) against the single
GPU's, and torch's DTensor sum against torch.sum of the whole tensor on one GPU.
Writes results_distributed_world<N>.json and .md.
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
from torch.distributed.tensor import DTensor, Shard, distribute_tensor, init_device_mesh  # noqa: E402

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


def time_call(fn, device) -> float:
    """One call's time in us: CUDA events around it (after the device is idle), else the host clock."""
    if device == "cuda":
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        return a.elapsed_time(b) * 1e3
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e6


def timeit(fn, reps, device):
    for _ in range(3):
        fn()
    return statistics.median(time_call(fn, device) for _ in range(reps))


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


RANK_OPS = [  # (name, reducekit local op, plain API, torch op on a DTensor or None)
    ("sum", lambda t: reducekit.sum(t), lambda t: rd.sum(t), lambda t: torch.sum(t)),
    ("sum exact", lambda t: reducekit.sum(t, method="exact"), lambda t: rd.sum(t, method="exact"), None),
    ("vector_norm", lambda t: reducekit.linalg.vector_norm(t), lambda t: rd.vector_norm(t),
     lambda t: torch.linalg.vector_norm(t)),
    ("var_mean", lambda t: reducekit.var_mean(t), lambda t: rd.var_mean(t), lambda t: torch.var_mean(t)),
]


def _bits(t: torch.Tensor) -> str:
    return hex(t.detach().float().cpu().view(torch.int32).item() & 0xFFFFFFFF)


def rank_main(rank: int, world: int, init: str, args) -> None:
    """One process of --world: times RANK_OPS over the ranks; rank 0 writes the files."""
    for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
        os.environ[k] = v
    dev = args.device
    backend = "nccl" if dev == "cuda" else "gloo"
    if dev == "cuda":
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, init_method=f"file://{init}", rank=rank, world_size=world)
    host = dist.new_group(backend="gloo")  # host barriers that put no kernel on any GPU
    mesh = init_device_mesh(dev, (world,))
    n = 1 << args.log2
    per = n // world
    g = torch.Generator(device=dev).manual_seed(25 + rank)
    shard = torch.randn(per, generator=g, device=dev).add_(1.0)
    whole = torch.empty(n, device=dev)
    dist.all_gather_into_tensor(whole, shard)
    dt = DTensor.from_local(shard, mesh, [Shard(0)], run_check=False)
    reps = 5 if args.quick else args.reps
    slot = torch.zeros(512, dtype=torch.float64, device=dev)

    def sync():
        if dev == "cuda":
            torch.cuda.synchronize()
        dist.barrier(group=host)

    def timed(fn, who=None):
        """Median of reps calls of fn on the ranks in `who` (all if None), the others waiting."""
        for _ in range(3):
            sync()
            if who is None or rank in who:
                fn()
        ts = []
        for _ in range(reps):
            sync()
            if who is None or rank in who:
                ts.append(time_call(fn, dev))
        sync()
        return statistics.median(ts) if ts else None

    def slowest(v):
        got = [None] * world
        dist.all_gather_object(got, v, group=host)
        return max(x for x in got if x is not None), got

    rows = []
    ar_us, _ = slowest(timed(lambda: dist.all_reduce(slot)))
    for name, local, plain, tfn in RANK_OPS:
        alone = [timed(lambda: local(shard), who={r}) for r in range(world)]
        alone_us, alone_ranks = slowest(next(a for a in alone if a is not None))
        row = {"op": name, "numel": n, "shard_numel": per, "dtype": "torch.float32",
               "local_alone_us": alone_us, "local_alone_per_rank_us": alone_ranks}
        row["local_together_us"], row["local_together_per_rank_us"] = slowest(timed(lambda: local(shard)))
        row["plain_us"], row["plain_per_rank_us"] = slowest(timed(lambda: full(plain(shard))))
        row["dtensor_us"], _ = slowest(timed(lambda: full(local(dt))))
        row["torch_dtensor_us"], row["torch_dtensor_note"] = None, None
        if tfn is not None:
            try:
                row["torch_dtensor_us"], _ = slowest(timed(lambda: full(tfn(dt))))
            except Exception as e:  # noqa: BLE001 - torch may have no sharding strategy (var_mean)
                row["torch_dtensor_note"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
                sync()
        row["single_us"], _ = slowest(timed(lambda: local(whole), who={0}))
        row["allreduce_small_us"] = ar_us
        rows.append(row)
        if rank == 0:
            print(f"{name:12s} 2^{args.log2}: alone {alone_us:9.1f} together {row['local_together_us']:9.1f} "
                  f"plain {row['plain_us']:9.1f} dtensor {row['dtensor_us']:9.1f} torch dtensor "
                  f"{row['torch_dtensor_us'] or float('nan'):9.1f} single GPU {row['single_us']:9.1f} "
                  f"(all-reduce of the slot {ar_us:.1f})", flush=True)
    inv = {
        "exact_plain": _bits(rd.sum(shard, method="exact")),
        "exact_dtensor": _bits(full(reducekit.sum(dt, method="exact"))),
        "exact_single": _bits(reducekit.sum(whole, method="exact")),
        "torch_dtensor": _bits(full(torch.sum(dt))),
        "torch_single": _bits(torch.sum(whole)),
        "auto_plain": _bits(rd.sum(shard)),
        "auto_single": _bits(reducekit.sum(whole)),
    }
    every = [None] * world
    dist.all_gather_object(every, inv, group=host)
    if rank == 0:
        res = {"device": torch.cuda.get_device_name() if dev == "cuda" else "cpu", "backend": backend,
               "world_size": world, "torch": torch.__version__, "reps": reps, "log2": args.log2,
               "env": {k: os.environ[k] for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
                                                  "NVSHMEM_DISABLE_NVLS")},
               "unit": "microseconds, median; each figure is the slowest rank's", "rows": rows,
               "invariance": every[0], "invariance_same_on_every_rank": all(e == every[0] for e in every)}
        write_world(res, args.out)
    dist.destroy_process_group()


def write_world(res: dict, out: str) -> None:
    """results_distributed_world<N>.json, and .md with the table README.md shows (report.world_table)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from report import world_table
    os.makedirs(out, exist_ok=True)
    base = os.path.join(out, f"results_distributed_world{res['world_size']}")
    with open(base + ".json", "w") as f:
        json.dump(res, f, indent=1)
    text = world_table(res, f"results_distributed_world{res['world_size']}.json")
    with open(base + ".md", "w") as f:
        f.write(text + "\n")
    print(text)
    print(f"wrote {base}.json and .md")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "h200"))
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--quick", action="store_true", help="small sizes and few repetitions (a check of the script)")
    ap.add_argument("--world", type=int, default=1, help="ranks (one GPU each); above 1, the sharded 2^--log2 table")
    ap.add_argument("--log2", type=int, default=30, help="log2 of the whole tensor's values with --world")
    args = ap.parse_args()
    if args.world > 1:
        if args.device == "cuda" and torch.cuda.device_count() < args.world:
            raise SystemExit(f"--world {args.world} needs {args.world} GPUs; this machine has {torch.cuda.device_count()}")
        import torch.multiprocessing as mp
        init = tempfile.mktemp(prefix="rk_bench_dist_")
        mp.spawn(rank_main, args=(args.world, init, args), nprocs=args.world, join=True)
        return
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
