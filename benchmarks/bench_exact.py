"""method="exact" against auto, torch.sum and CUB on the GPU, with the exact issue's targets.

    python benchmarks/bench_exact.py --out benchmarks/results/h200

writes results_exact.json and results_exact.md (reducekit/bench/exact.py documents the method).
Exits 1 if a target is missed (the figures are written anyway).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from reducekit.bench import exact, targets_main  # noqa: E402

if __name__ == "__main__":
    sys.exit(targets_main(exact, __doc__))
