"""Rows whose lanes leave threads idle: time against the row's lane count, at fixed bytes.

    python3 benchmarks/rows_fill.py --out benchmarks/results/h100/rows_fill [--mib 256] [--old-too]

The engine's rows kernel reads a row in lanes of 64 bytes, W threads a row (W the power of two at
or above the row's groups of lanes, so a row of 65 lanes runs on 128 threads), and a row's last
lane is short unless the row is a whole number of lanes. For each operator and dtype below and
each lane count, K rows of that length totalling about --mib MiB (inputs rotated over more than the
L2, interleaved graph timing: reducekit/bench/timing.py) are reduced over dim 1, beside our full
sum of the same bytes. --tail sets how the rows end: whole lanes, 16 bytes short (aligned rows, a
short last lane) or one value short (misaligned rows too). With --old-too each case is timed again
with a short last lane read by element loads (the _rows_short_lanes(-1) hook: the loads before
session 53), and the two results' bits compared; --vectors times the first with a whole lane's
vectors for every operator (_rows_short_lanes(1)) rather than the rule.

Writes rows_fill.json and rows_fill.md under --out.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import types  # noqa: E402

import torch  # noqa: E402

import reducekit  # noqa: E402
from reducekit.bench.timing import Rotation, environment, read_ceiling, time_cuda_graph  # noqa: E402
from sweep import calls  # noqa: E402  (the sweep's reducekit call of an op over dims)

# (op, dtype): among the sweep's rows cases farthest above our full sum (NOTES.md, session 53).
CASES = [("mean", "float16"), ("count_nonzero", "float64"), ("var_mean", "float16"), ("amax", "bfloat16"),
         ("sum", "float32"), ("argmax", "float32")]
LANES = [8, 9, 12, 16, 17, 24, 32, 33, 48, 64, 65, 75, 96, 128, 129, 136, 192, 256]


def bits(r):
    """The results' bytes (a tuple's outputs in turn)."""
    return [t.contiguous().view(torch.uint8) for t in (r if isinstance(r, tuple) else (r,))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mib", type=float, default=256)
    ap.add_argument("--lanes", type=int, nargs="+", default=LANES)
    ap.add_argument("--tail", type=int, default=-1, help="bytes short of whole lanes of 64 bytes: -1 (default) one value "
                    "(misaligned rows with a short last lane), 0 whole lanes, 16 aligned rows with a short last lane")
    ap.add_argument("--cases", nargs="+", help="op:dtype pairs (default: CASES)")
    ap.add_argument("--old-too", action="store_true", help="also time each case with short lanes by element loads (_rows_short_lanes(-1))")
    ap.add_argument("--old-stripes", action="store_true", help="with --old-too, the 'before' run takes one lane a thread "
                    "(_rows_stripes(-1)) instead of element loads for short lanes")
    ap.add_argument("--vectors", action="store_true", help="short lanes by a whole lane's vectors for every operator (_rows_short_lanes(1)), "
                    "not the rule")
    args = ap.parse_args()
    dev = torch.device("cuda")
    env = environment(dev)
    env["read_ceiling"] = read_ceiling(dev)
    cold = 4 * torch.cuda.get_device_properties(dev).L2_cache_size
    hook = reducekit._C._rows_short_lanes
    mode = 1 if args.vectors else 0
    hook(mode)
    rows = []
    for op, dt in [tuple(c.split(":")) for c in args.cases] if args.cases else CASES:
        dtype = getattr(torch, dt)
        item = torch.empty((), dtype=dtype).element_size()
        for lanes in args.lanes:
            L = (lanes * 64 - (item if args.tail < 0 else args.tail)) // item
            K = max(1, int(args.mib * 2**20 // (L * item)))
            g = torch.Generator(device=dev).manual_seed(53 + lanes)
            x = (torch.randn((K, L), device=dev, generator=g) + 1).to(dtype)
            rot = Rotation(x, cold)
            full = types.SimpleNamespace(views=[v.view(-1) for v in rot.views])  # the same copies, as one row
            fn = calls({"op": op, "dims": [1]})[0]
            r = {"op": op, "dtype": dt, "lanes": lanes, "K": K, "L": L, "bytes": K * L * item}
            r["us"] = time_cuda_graph(fn, rot)
            r["full_sum_us"] = time_cuda_graph(lambda v: reducekit.sum(v), full)
            if args.old_too:
                new = bits(fn(x))
                if args.old_stripes:
                    reducekit._C._rows_stripes(-1)
                else:
                    hook(-1)
                try:
                    r["old_us"] = time_cuda_graph(fn, rot)
                    old = bits(fn(x))
                finally:
                    if args.old_stripes:
                        reducekit._C._rows_stripes(0)
                    else:
                        hook(mode)
                r["same_bits"] = all(torch.equal(a, b) for a, b in zip(new, old))
            r["pct_ceiling"] = 100 * r["bytes"] / (r["us"] * 1e-6) / 1e9 / env["read_ceiling"]["gbps"]
            rows.append(r)
            extra = f" old {r['old_us']:8.1f} new/old {r['us'] / r['old_us']:.3f} bits {'same' if r['same_bits'] else 'DIFFER'}" \
                if "old_us" in r else ""
            print(f"{op:13s} {dt:9s} lanes {lanes:4d} K {K:8d} L {L:6d}  {r['us']:8.1f} us  full {r['full_sum_us']:8.1f}  "
                  f"/full {r['us'] / r['full_sum_us']:.2f}  {r['pct_ceiling']:5.1f}% ceiling{extra}", flush=True)
            del rot, full, x
            torch.cuda.empty_cache()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "rows_fill.json"), "w") as f:
        json.dump({"env": env, "mib": args.mib, "tail": args.tail, "short_lanes": "vectors" if args.vectors else "rule",
                   "before": "one lane a thread" if args.old_stripes else "short lanes by element loads", "rows": rows}, f, indent=1)
    both = any("old_us" in r for r in rows)
    lines = [f"{env.get('gpu', '')}, {env.get('date', '')}; rows of K x L values ({'one value' if args.tail < 0 else f'{args.tail} bytes'} short of whole lanes of 64 bytes), "
             f"about {args.mib:g} MiB, over dim 1; interleaved graph timing, cold L2; us.", "",
             "| op | dtype | lanes | K | L | us | full sum us | / full sum | % ceiling |" + (" before us | new / before | bits |" if both else ""),
             "|---|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---|" if both else "")]
    for r in rows:
        extra = f" {r['old_us']:.1f} | {r['us'] / r['old_us']:.3f} | {'same' if r['same_bits'] else 'DIFFER'} |" if "old_us" in r else ""
        lines.append(f"| {r['op']} | {r['dtype']} | {r['lanes']} | {r['K']} | {r['L']} | {r['us']:.1f} | {r['full_sum_us']:.1f} | "
                     f"{r['us'] / r['full_sum_us']:.2f} | {r['pct_ceiling']:.1f} |{extra}")
    with open(os.path.join(args.out, "rows_fill.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
