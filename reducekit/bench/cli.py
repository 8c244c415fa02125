"""The command lines: `benchmarks/bench.py` (main; with --dims, dims_main) and the benchmarks with
targets (targets_main: `benchmarks/bench_ops.py`, `benchmarks/bench_exact.py`)."""
from __future__ import annotations

import argparse
import json
import sys

import torch

from .dims import DIMS_CPU_MAX_MIB, DIMS_DTYPES, DIMS_GRAPH_MAX_MS, DIMS_MODE_TITLES, dims_run, dims_target_summary
from .report import (_ceiling_line, dims_summary, load_run, merge_dims_runs, merge_runs, summary, write_dims_results,
                     write_results)
from .sum import benchmark_run
from .timing import DTYPES


def dims_main(argv=None):
    p = argparse.ArgumentParser(prog="bench.py --dims", description=(
        "Reductions over dims: torch.sum(x, dim, dtype=...) against reducekit.sum(x, dim, dtype=...) and "
        "against reducekit's full sum of the same bytes; eager and interleaved-graph modes, cold L2, read ceiling "
        "measured in the same run. Without a GPU: CPU tensors, shapes scaled down, eager only."))
    p.add_argument("--dtypes", nargs="+", choices=list(DTYPES), default=list(DIMS_DTYPES),
                   help="input dtypes (default: float32 bfloat16 int32); the (8192, 8192) cases run for bfloat16 only")
    p.add_argument("--modes", nargs="+", default=["eager", "graph"], choices=list(DIMS_MODE_TITLES))
    p.add_argument("--budget", type=float, default=0.25, help="seconds of eager timing per contender and case, split over the rounds")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the three contenders (median over rounds)")
    p.add_argument("--ceiling", type=float, default=None, metavar="GBPS",
                   help="read ceiling in GB/s, given instead of measured in this run (GPU)")
    p.add_argument("--graph-max-ms", type=float, default=DIMS_GRAPH_MAX_MS,
                   help="a contender slower than this (eager) is not timed in graph mode")
    p.add_argument("--cpu-max-mib", type=float, default=DIMS_CPU_MAX_MIB,
                   help="CPU: scale each case's largest dim down to at most this many MiB of float32")
    p.add_argument("--device", default=None, help="cuda, cuda:N or cpu (default: cuda when present)")
    p.add_argument("--no-host", action="store_true", help="skip the host-time measurement")
    p.add_argument("--out", default=None, help="directory for results_dims.json/.md and the plots")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--merge", nargs="+", metavar="RESULTS_DIMS_JSON",
                   help="no timing: merge earlier results_dims.json files (or regenerate one) into --out")
    a = p.parse_args(argv)
    if a.merge:
        runs = []
        for path in a.merge:
            with open(path) as f:
                runs.append(json.load(f))
        run = merge_dims_runs(runs)
    else:
        ceiling = {"gbps": a.ceiling, "given": True} if a.ceiling else None
        run = dims_run(a.dtypes, tuple(a.modes), a.device, a.budget, a.rounds, ceiling, not a.no_host, a.cpu_max_mib,
                       a.graph_max_ms, progress=not a.no_progress)
    if a.out:
        for path in write_dims_results(run, a.out, plots=not a.no_plots):
            print(f"wrote {path}")
    env = run["env"]
    print(f"\n{env.get('gpu', env.get('cpu', 'cpu'))}, torch {env['torch']}" + (f", CUDA {env['cuda']}" if "cuda" in env else ""))
    c = _ceiling_line(env)
    if c:
        print(c.replace("**", ""))
    if "note" in env:
        print(env["note"])
    print(dims_summary(run))
    for mode in DIMS_MODE_TITLES:
        for line in dims_target_summary(run["rows"], mode):
            print(f"[{mode}] {line}")
    return run


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--dims" in argv:  # the reductions-over-dims benchmark: its own options (dims_main)
        return dims_main([a for a in argv if a != "--dims"])
    p = argparse.ArgumentParser(description="Time reducekit methods against torch.sum and CUB "
                                            "(--dims: reductions over dims, see --dims --help).")
    p.add_argument("--quick", action="store_true", help="float32 and int32 at 2^16, 2^20, 2^24, 2^28, all methods (under a minute on an H200)")
    p.add_argument("--methods", nargs="+", help="methods to time (default: all); torch.sum is always timed")
    p.add_argument("--dtypes", nargs="+", choices=list(DTYPES), help="default: all (quick: float32 int32)")
    p.add_argument("--sizes", nargs="+", type=lambda s: int(eval(s, {"__builtins__": {}})), help="element counts, e.g. 2**20 1000")
    p.add_argument("--modes", nargs="+", default=["eager", "graph"], choices=["eager", "graph"],
                   help="graph: CUDA graph replay interleaved with a foreign kernel (GPU time per call, no PDL overlap between calls)")
    p.add_argument("--chained", action="store_true",
                   help="also time mode graph_chained: back-to-back calls in the graph (PDL may overlap a call with the next); "
                        "reported separately, labelled chained")
    p.add_argument("--slow-ms", type=float, default=20.0, help="stop timing a method at larger N once it exceeds this")
    p.add_argument("--budget", type=float, default=0.25, help="seconds of eager timing per cell (batches, medians)")
    p.add_argument("--out", default=None, help="directory for results.md/json/csv and plots")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--merge", nargs="+", metavar="RESULTS_JSON", help="no timing: merge earlier results.json files into --out")
    a = p.parse_args(argv)
    if a.merge:
        run = merge_runs([load_run(f) for f in a.merge])
    else:
        run = benchmark_run(a.methods, a.dtypes, a.sizes, modes=tuple(a.modes), quick=a.quick, progress=not a.no_progress,
                            slow_ms=a.slow_ms, budget_s=a.budget, chained=a.chained)
    if a.out:
        for path in write_results(run, a.out, plots=not a.no_plots):
            print(f"wrote {path}")
    env = run["env"]
    print(f"\n{env.get('gpu', env.get('cpu', 'cpu'))}, torch {env['torch']}" + (f", CUDA {env['cuda']}" if "cuda" in env else ""))
    if "ceiling" in env:
        print(f"read ceiling {env['ceiling']['gbps'] / 1e3:.3f} TB/s; {env['cold_l2']}")
    if "note" in env:
        print(env["note"])
    print(summary(run))
    return run


def targets_main(module, doc: str) -> int:
    """The command line of a benchmark with targets (reducekit.bench.exact, reducekit.bench.ops):
    --out DIR; runs module.run() on the GPU, writes its results there, prints its markdown.
    Returns 0 if every target is met, 1 if one is missed (the figures are written anyway), 2
    without a CUDA GPU."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print(f"{module.SCRIPT}: needs a CUDA GPU", file=sys.stderr)
        return 2
    run = module.run()
    for path in module.write(run, args.out):
        print("wrote", path)
    print(module.markdown(run))
    return 0 if all(t["met"] for t in module.targets(run)) else 1
