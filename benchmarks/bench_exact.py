"""method="exact" against auto, torch.sum and CUB on the GPU, with the exact issue's targets.

    python benchmarks/bench_exact.py --out benchmarks/results/h200

writes results_exact.json and results_exact.md (reducekit/bench_exact.py documents the method).
Exits 1 if a target is missed (the figures are written anyway).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from reducekit import bench_exact  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("bench_exact: needs a CUDA GPU", file=sys.stderr)
        return 2
    run = bench_exact.run()
    for path in bench_exact.write(run, args.out):
        print("wrote", path)
    print(bench_exact.markdown(run))
    return 0 if all(t["met"] for t in bench_exact.targets(run)) else 1


if __name__ == "__main__":
    sys.exit(main())
