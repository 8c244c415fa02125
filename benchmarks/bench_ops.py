"""Every torch reduction on the engine against reducekit.sum and torch, with issue 10's targets.

    python benchmarks/bench_ops.py --out benchmarks/results/h200

writes results_ops.json and results_ops.md (reducekit/bench/ops.py documents the method).
Exits 1 if a target is missed (the figures are written anyway).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from reducekit.bench import ops, targets_main  # noqa: E402

if __name__ == "__main__":
    sys.exit(targets_main(ops, __doc__))
