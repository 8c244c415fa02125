"""Every torch reduction on the engine against reducekit.sum and torch, with issue 10's targets.

    python benchmarks/bench_ops.py --out benchmarks/results/h200

writes results_ops.json and results_ops.md (reducekit/bench_ops.py documents the method).
Exits 1 if a target is missed (the figures are written anyway).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from reducekit import bench_ops  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("bench_ops: needs a CUDA GPU", file=sys.stderr)
        return 2
    run = bench_ops.run()
    for path in bench_ops.write(run, args.out):
        print("wrote", path)
    print(bench_ops.markdown(run))
    return 0 if all(t["met"] for t in bench_ops.targets(run)) else 1


if __name__ == "__main__":
    sys.exit(main())
