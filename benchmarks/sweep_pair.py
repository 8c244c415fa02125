"""Two sweep.py runs of the same draw (same code with a hook set one way, then the other, or two
builds), case by case: each run's share of cases at or above torch and geometric mean, eager and
graph, and our own time in run A over run B (graph and eager) with the cases that moved most.

    python benchmarks/sweep_pair.py A/sweep_cuda.json B/sweep_cuda.json --names fused two-launch --out PAIR.md
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sweep_ab import gm, key  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--names", nargs=2, default=("A", "B"))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    ra, rb = json.load(open(args.a)), json.load(open(args.b))
    A = {key(r): r for r in ra["rows"] if "ratio" in r}
    B = {key(r): r for r in rb["rows"] if "ratio" in r}
    ks = [k for k in A if k in B]
    na, nb = args.names
    lines = [f"# {na} against {nb}: {len(ks)} cases of one draw", "",
             f"{na}: `{args.a}` ({ra['device_name']}, {ra['date']}); {nb}: `{args.b}` ({rb['device_name']}, {rb['date']}). "
             "Ratio = torch's time / ours (same run); eager: CUDA events over back-to-back calls; graph: replays with a "
             "foreign kernel between calls.", "",
             "| timing | run | cases at or above torch | geometric mean | worst |", "|---|---|---:|---:|---:|"]
    for mode in ("ratio", "ratio_graph"):
        for name, R in ((na, A), (nb, B)):
            v = [R[k][mode] for k in ks]
            lines.append(f"| {'eager' if mode == 'ratio' else 'graph'} | {name} | {sum(x >= 1 for x in v)} ({100 * sum(x >= 1 for x in v) / len(v):.0f}%) "
                         f"| {gm(v):.3f} | {min(v):.3f} |")
    lines.append("")
    for mode, field in (("eager", "ours_us"), ("graph", "ours_graph_us")):
        q = {k: A[k][field] / B[k][field] for k in ks}
        v = list(q.values())
        lines += [f"Our {mode} time, {na} / {nb}: geometric mean {gm(v):.3f}, median {statistics.median(v):.3f}, "
                  f"{sum(x > 1.10 for x in v)} cases above 1.10, {sum(x < 0.90 for x in v)} below 0.90.", ""]
        if mode == "graph":
            lines += [f"The {mode} cases that moved most ({na} / {nb}):", "",
                      f"| op | dtype | shape | dims | layout | plan | {na} us | {nb} us | / |", "|---|---|---|---|---|---|---:|---:|---:|"]
            for k in sorted(ks, key=lambda k: q[k])[:5] + sorted(ks, key=lambda k: q[k])[-8:]:
                lines.append(f"| {' | '.join(k)} | {A[k]['plan']} | {A[k][field]:.2f} | {B[k][field]:.2f} | {q[k]:.2f} |")
            lines.append("")
    open(args.out, "w").write("\n".join(lines))
    print("\n".join(lines[:12]))


if __name__ == "__main__":
    main()
