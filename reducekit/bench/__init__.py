"""Benchmark harness, one module per concern:

    timing   timing primitives every benchmark shares: inputs (random_input, Buffers), environment,
             the eager, graph and CPU timers, the read ceiling; the timing method is in its docstring
    sum      the whole-tensor sum benchmark: reducekit methods against torch.sum and CUB, per dtype
             and size (benchmark, benchmark_run)
    dims     reductions over dims against torch.sum and the same-bytes full sum: cases, result
             check, the runner (dims_run), derived figures, target verdicts
    host     host time of small eager calls (host_us, host_run)
    report   markdown tables, terminal summaries, loading, merging and writing result files of sum
             and dims, and their shared formatting
    ops      every torch reduction on the engine, with issue 10's targets (benchmarks/bench_ops.py)
    exact    method="exact", with the exact issue's targets (benchmarks/bench_exact.py)
    compare  reducekit.compare: one op against torch's on the caller's shapes, with the timers above
             and dims' interleaved rounds (no timing code of its own)
    cli      the command lines (benchmarks/bench.py: main, dims_main; targets_main); `python -m
             reducekit.bench` runs main (__main__.py)

The names below are the ones the repository imports from reducekit.bench (benchmarks/, tests/,
reducekit.benchmark). ops, exact and compare are imported on their own (`from reducekit.bench import ops`):
ops checks its op list against the extension's op table at import.
"""
from .cli import main, targets_main
from .dims import (DIMS_CASES, DIMS_CONTENDERS, DIMS_DTYPES, DIMS_MODE_TITLES, dims_cases, dims_derive, dims_run,
                   dims_target_summary, dims_verdict, scale_shape)
from .host import HOST_CALLS, host_us
from .report import (DIMS_FILE, MISSING_LEGEND, _fmt_time, _n_label, dims_markdown, dims_table, host_lines, load_run,  # noqa: F401
                     markdown, merge_runs, relabel_chained, time_table, write_results)
from .sum import TORCH, benchmark, benchmark_run
from .timing import (DTYPES, GRAPH_MAX_N, GRAPH_TIMING, MODE_TITLES, Buffers, environment, random_input, read_ceiling,
                     time_cuda_eager, time_cuda_graph)

__all__ = [
    "DIMS_CASES", "DIMS_CONTENDERS", "DIMS_DTYPES", "DIMS_FILE", "DIMS_MODE_TITLES", "DTYPES", "GRAPH_MAX_N", "GRAPH_TIMING",
    "HOST_CALLS", "MISSING_LEGEND", "MODE_TITLES", "TORCH", "Buffers", "benchmark", "benchmark_run", "dims_cases",
    "dims_derive", "dims_markdown", "dims_run", "dims_table", "dims_target_summary", "dims_verdict", "environment",
    "host_lines", "host_us", "load_run", "main", "markdown", "merge_runs", "random_input", "read_ceiling",
    "relabel_chained", "scale_shape", "targets_main", "time_cuda_eager", "time_cuda_graph", "time_table", "write_results",
]
