"""How the columns kernel should read its columns (issue 21): for every single-columns-step case of
the random-shape sweep's draw (benchmarks/sweep.py, same distribution and seeds), time the kernel
forced to 16-byte vectors (realigned where the rows are misaligned) and forced to one column a
thread (reducekit._C._dims_columns_config(..., loads=1 or 2)), and torch, by graph replay on cold
L2 (the sweep's timers). The two forms must give the same bits: a case where they differ is an
error. Prints one line a case and writes JSON with what the rule in csrc/tuning/tuning.h
(columns_scalar) reads: the vector form's thread count, the element size and the alignment.

    python benchmarks/tune_columns.py --seeds 21 22 --cases 400 --json OUT.json
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

import reducekit  # noqa: E402
import sweep  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from helpers import same_bits  # noqa: E402


def same_results(a, b) -> bool:
    """The tests' bitwise equality (tests/helpers.py), over an operator's one or two outputs."""
    pairs = zip(a, b) if isinstance(a, (tuple, list)) else [(a, b)]
    return all(same_bits(u, v) for u, v in pairs)


def columns_step(case: dict):
    """The case's engine plan when it is one columns step: (B, R, C), else None."""
    x = sweep.layout_of(case)
    dims = case["dims"] or []
    if case["op"] == "argmax" and dims:
        dims = dims[:1]
    steps = reducekit._C.dims_plan(list(x.shape), list(x.stride()), dims, x.element_size())
    if len(steps) != 1 or steps[0]["kind"] != "columns":
        return None
    s = steps[0]
    return s["outer"], s["extent"], s["inner"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[21, 22])
    ap.add_argument("--cases", type=int, default=400, help="cases drawn per seed (the columns ones are kept)")
    ap.add_argument("--max-mib", type=float, default=1024, help="skip cases larger than this")
    ap.add_argument("--json", required=True)
    a = ap.parse_args()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows, bad = [], 0
    for seed in a.seeds:
        rng = random.Random(seed)
        for i in range(a.cases):
            case = sweep.draw(rng, None)
            bcr = columns_step(case)
            if bcr is None:
                continue
            x = sweep.make(case, "cuda", seed * 100003 + i)
            if x.numel() * x.element_size() > a.max_mib * 2**20:
                continue
            B, R, C = bcr
            e = x.element_size()
            # Alignment as the engine sees it: the columns step reads the tensor from its first element.
            aligned = x.data_ptr() % 16 == 0 and (C * e) % 16 == 0
            vthreads = math.ceil(C / (16 // e)) * math.ceil(R / (64 // e)) * B
            ours, theirs = sweep.calls(case)
            _, graph = sweep.cuda_timers(x, 0.1)
            res = {}
            try:
                for loads in (1, 2):
                    reducekit._C._dims_columns_config(0, 0, 0, loads)
                    res[loads] = ours(x)
                ok = same_results(res[1], res[2])
                t = {}
                for loads in (1, 2):
                    reducekit._C._dims_columns_config(0, 0, 0, loads)
                    t[loads] = graph(ours)
                reducekit._C._dims_columns_config(0, 0, 0, 0)
                t_torch = graph(theirs)
            finally:
                reducekit._C._dims_columns_config(0, 0, 0, 0)
            bad += not ok
            r = {**case, "seed": seed, "B": B, "R": R, "C": C, "elem": e, "aligned": aligned, "vector_threads": vthreads,
                 "threads_per_sm": vthreads / sms, "vector_us": t[1], "scalar_us": t[2], "torch_us": t_torch,
                 "same_bits": ok, "bytes": x.numel() * e}
            rows.append(r)
            print(f"{seed}:{i:3d} {case['op']:13s} {case['dtype']:9s} B={B:<7d} R={R:<8d} C={C:<8d} {'al' if aligned else 'mis'} "
                  f"vthr/SM={vthreads / sms:9.1f} vector {t[1]:8.1f} scalar {t[2]:8.1f} (x{t[1] / t[2]:5.2f}) "
                  f"torch {t_torch:8.1f}" + ("" if ok else "  BITS DIFFER"), flush=True)
            del x, res
            torch.cuda.empty_cache()
    with open(a.json, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "sms": sms, "rows": rows}, f, indent=1)
    print(f"{len(rows)} cases, {bad} with different bits")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
