"""Benchmark command: reducekit methods x dtypes x N against torch.sum and CUB.

    python benchmarks/bench.py                       # full sweep, all methods and dtypes, 2^16..2^30
    python benchmarks/bench.py --quick               # float32 and int32, four sizes (< 1 min on an H200)
    python benchmarks/bench.py --out benchmarks/results/h200
    python benchmarks/bench.py --chained             # also the chained graph figure (back-to-back calls)
    python benchmarks/bench.py --merge a/results.json b/results.json --out DIR   # no timing: one report
    python benchmarks/bench.py --dims --out DIR      # reductions over dims (float32, bfloat16, int32)
    python benchmarks/bench.py --dims --merge a/results_dims.json b/results_dims.json --out DIR

Writes results.md (tables laid out like the reference study's), results.json and results.csv
(every figure) and PNG plots with --out. See reducekit/bench/timing.py for the timing method:
graph mode is timed interleaved with a foreign kernel; --chained adds mode graph_chained, labelled
as such.
README's result blocks are regenerated from the committed results by benchmarks/report.py.

--dims (options: --dims --help): the cases of the dims issue, each timed as torch.sum(x, dim,
dtype=...), reducekit.sum(x, dim, dtype=...) and reducekit.sum of the same buffers seen flat (the
full sum of the same bytes), in eager and interleaved-graph modes on cold L2, with the read ceiling
measured in the same run, plus the host time of eager calls on 1024 elements. Writes
results_dims.json (every figure), results_dims.md (tables and target verdicts) and
dims_pct_ceiling_<mode>.png. Without a GPU: CPU tensors, shapes scaled down (--cpu-max-mib), eager.
"""
from reducekit.bench import main

if __name__ == "__main__":
    main()
