"""Benchmark command: reducekit methods x dtypes x N against torch.sum and CUB.

    python benchmarks/bench.py                       # full sweep, all methods and dtypes, 2^16..2^30
    python benchmarks/bench.py --quick               # float32 and int32, four sizes (< 1 min on an H200)
    python benchmarks/bench.py --out benchmarks/results/h200
    python benchmarks/bench.py --chained             # also the chained graph figure (back-to-back calls)
    python benchmarks/bench.py --merge a/results.json b/results.json --out DIR   # no timing: one report

Writes results.md (tables laid out like the reference study's), results.json and results.csv
(every figure) and PNG plots with --out. See reducekit/bench.py for the timing method: graph mode
is timed interleaved with a foreign kernel; --chained adds mode graph_chained, labelled as such.
README's result blocks are regenerated from the committed results by benchmarks/report.py.
"""
from reducekit.bench import main

if __name__ == "__main__":
    main()
