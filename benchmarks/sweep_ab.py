"""Same-run comparison of two sweep.py runs of the same draw (`--only-multi` with and without
`--no-gather`, or any two): for the cases both timed, our graph time in run A over run B by the
length of the innermost reduced run in lanes (n0 / G, after merging dims; -1 where the innermost
memory dim is kept), and each run's ratio against torch.

    python benchmarks/sweep_ab.py A/sweep_cuda.json B/sweep_cuda.json
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import sweep  # noqa: E402
from test_dims import merged_runs  # noqa: E402

BINS = [(-2, 0, "innermost kept (columns form)"), (0, 1, "under 1 lane"), (1, 2, "1-2 lanes"), (2, 4, "2-4 lanes"),
        (4, 16, "4-16 lanes"), (16, math.inf, "16 lanes and more")]


def gm(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def key(r):
    return (r["op"], r["dtype"], str(r["shape"]), str(r["dims"]), r["layout"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    args = ap.parse_args()
    a = [r for r in json.load(open(args.a))["rows"] if "ratio_graph" in r]
    bm = {key(r): r for r in json.load(open(args.b))["rows"] if "ratio_graph" in r}
    pairs = [(r, bm[key(r)]) for r in a if key(r) in bm]
    rows = []
    for x, y in pairs:
        m = sweep.layout_of(x)
        runs = merged_runs(m, x["dims"] or list(range(m.dim())))
        lanes = runs[-1][0] / (64 // m.element_size()) if runs and runs[-1][1] else -1
        rows.append((lanes, x["ours_graph_us"] / y["ours_graph_us"], x, y))
    print(f"{len(pairs)} cases timed by both runs (A: {args.a}, B: {args.b}); graph time A / B, geometric mean:")
    print("| innermost reduced run | cases | A / B | worst | best |\n|---|---:|---:|---:|---:|")
    for lo, hi, name in BINS:
        s = [r for r in rows if lo <= r[0] < hi]
        if s:
            v = [r[1] for r in s]
            print(f"| {name} | {len(s)} | {gm(v):.3f} | {max(v):.2f} | {min(v):.2f} |")
    for name, i in (("A", 2), ("B", 3)):
        v = [r[i]["ratio_graph"] for r in rows]
        print(f"{name} against torch (graph): geometric mean {gm(v):.2f}, {sum(x >= 1 for x in v)} of {len(v)} at or above torch")


if __name__ == "__main__":
    main()
