"""Regenerates README.md's generated blocks from committed result files, so that no figure in
README.md is typed in: each comes from a file under benchmarks/results/ through this script.

    python benchmarks/report.py            # rewrites README.md in place
    python benchmarks/report.py --check    # exits 1 and prints a diff where README.md differs

Blocks, each between `<!-- report:NAME:begin -->` and `<!-- report:NAME:end -->`:
- results: the environment of the H200 sweep and its float32 and int32 eager tables
  (benchmarks/results/h200/results.json);
- targets: `auto` against its targets (benchmarks/results/h200/perf.json, written by
  tests/test_perf.py under REDUCEKIT_PERF_JSON; while none is committed, the targets alone, read
  from tests/test_perf.py's TARGETS);
- ranking: our H200 ranking against the study's A6000 ranking at 2^25 elements (results.json and
  benchmarks/results/a6000_seed001.md, a verbatim quote of seed document 001);
- dims: reductions over dims against torch.sum and against the same-bytes full sum
  (benchmarks/results/h200/results_dims.json, written by `bench.py --dims`; while none is
  committed, one line saying so);
- faults: the planted-fault campaign (benchmarks/results/h200/faults.json);
- exact: method="exact" (results_exact.json, written by bench_exact.py) and its fault campaigns;
- ops: every other torch reduction on the engine (results_ops.json, written by bench_ops.py) and
  its fault campaign (faults_ops.json);
- special: the special-value rules (tests/special_values.py RULES, which tests/test_special_values.py
  judges by);
- patches: the campaigns of the faults planted by another hand (benchmarks/fault_patches.py; CPU
  under benchmarks/results/cpu/, H200 under benchmarks/results/h200/fault_patches/).
"""
from __future__ import annotations

import argparse
import ast
import difflib
import json
import math
import os
import re
import shlex
import statistics
import sys
import textwrap

from reducekit.bench import (DIMS_FILE, DIMS_MODE_TITLES, GRAPH_MAX_N, MISSING_LEGEND, MODE_TITLES, TORCH, _fmt_time, _n_label,
                             dims_table, dims_target_summary, host_lines, load_run, time_table)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = "README.md"
RESULTS_DIR = "benchmarks/results/h200"
RESULTS = f"{RESULTS_DIR}/results.json"
PERF = f"{RESULTS_DIR}/perf.json"
A6000 = "benchmarks/results/a6000_seed001.md"
FAULTS = f"{RESULTS_DIR}/faults.json"
DIMS = f"{RESULTS_DIR}/{DIMS_FILE}.json"
DIMS_PLOT = f"{RESULTS_DIR}/dims_pct_ceiling_eager.png"
TEST_PERF = "tests/test_perf.py"
BLOCKS = ("results", "targets", "ranking", "dims", "faults", "exact", "ops", "special", "patches")
README_DTYPES = ("float32", "int32")
STUDY_N = 2**25  # the study's largest size
# The study's kernels and the reducekit methods that implement them (README's Methods table,
# "source" column: 001 global atomic, 001 block shared atomic, 001 shared, ...).
STUDY_METHODS = {
    "Torch": TORCH, "Atomic (global)": "atomic_global", "Atomic (shared)": "atomic_block", "Shared": "tree_sequential",
    "Shuffle": "shuffle", "Unroll": "warp_unroll", "CG": "cg", "CG (unroll 2)": "cg_unroll2", "CUB": "cub_device",
}
WARP_LEVEL = ("Shuffle", "Unroll", "CG", "CG (unroll 2)")  # the study's one-element-per-thread warp kernels


def marker(name: str, end: bool = False) -> str:
    return f"<!-- report:{name}:{'end' if end else 'begin'} -->"


def para(text: str) -> str:
    """A prose paragraph wrapped like the rest of README.md (100 columns, words unbroken)."""
    return textwrap.fill(text, 100, break_long_words=False, break_on_hyphens=False)


# ------------------------------------------------------------------------------------------------
# results: environment and eager tables


def _dates(env: dict) -> str:
    """The days of the runs behind a (possibly merged) results.json."""
    days = dict.fromkeys(re.findall(r"\d{4}-\d{2}-\d{2}", env["date"] + " " + env.get("merged", "")))
    return " and ".join(days)


def _ceilings(env: dict) -> list[dict]:
    return [c for c in (env.get("ceilings") or [env.get("ceiling")]) if c]


def results_block(run: dict) -> str:
    env, rows = run["env"], run["rows"]
    ceilings = _ceilings(env)
    runs = f"{len(ceilings)} runs" if len(ceilings) > 1 else "run"
    tbps = " and ".join(f"{c['gbps'] / 1e3:.3f}" for c in ceilings) + " TB/s" + (" (one per run)" if len(ceilings) > 1 else "")
    if env.get("graph_timing") == "interleaved":
        graph = "with a foreign kernel between calls (interleaved), GPU time only"
    else:
        graph = ("GPU time only; this sweep predates issue 8, so its graph tables are chained (back-to-back calls, "
                 "which lets PDL overlap a call with the next), not interleaved with a foreign kernel as the "
                 "targets below are")
    top = _n_label(GRAPH_MAX_N)
    cold = env["cold_l2"].replace(" (4x L2)", ", 4x the L2,")
    out = [para(
        f"Measured on one {env['gpu']} ({env['sms']} SMs, {env['l2_mb']:g} MB L2, driver {env['driver']}, CUDA "
        f"{env['cuda']}, torch {env['torch']}) on {_dates(env)} with `benchmarks/device_run.sh` (`python "
        f"benchmarks/bench.py`): cold L2 ({cold}), CUDA events, medians of batch averages; eager mode times "
        f"back-to-back calls as a user makes them, graph mode (up to {top}) times CUDA-graph replays, {graph}. "
        f"The read ceiling, measured in the same {runs} by a pure read kernel over "
        f"{ceilings[0]['bytes'] / 2**30:g} GiB, was {tbps}. Every figure, all "
        f"{len(set(r['dtype'] for r in rows))} dtypes, graph-mode tables and the plots are in "
        f"[`{RESULTS_DIR}/`]({RESULTS_DIR}/results.md); the `auto` tuning sweep is `tune.log` there. This section is "
        f"generated from `{RESULTS}` by `benchmarks/report.py`."),
        "",
        f"![float32 bandwidth]({RESULTS_DIR}/bandwidth_float32.png)",
        "",
    ]
    missing = False
    for d in README_DTYPES:
        table, dashes = time_table(rows, d, "eager")
        missing = missing or dashes
        out += [f"#### {d}: time per call (us), {MODE_TITLES['eager']}", ""] + table + [""]
    if missing:
        out.append(para(MISSING_LEGEND))
    return "\n".join(out).rstrip("\n") + "\n"


# ------------------------------------------------------------------------------------------------
# targets: tests/test_perf.py's records


def read_targets(path: str) -> dict:
    """tests/test_perf.py's TARGETS literal, read without importing the test module."""
    with open(path) as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TARGETS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise ValueError(f"{path} has no TARGETS literal")


def _fmt_value(v: float, unit: str) -> str:
    if unit == "%":
        return f"{v:.1f}%"
    if unit == "us":
        return f"{v:+.2f} us"
    return f"{v:.2f}{unit}"


def target_row(text: str, records: list[dict]) -> str:
    """| target | measured | met | for one target's records: the range over its cases, the worst case,
    and how many missed."""
    if not records:
        return f"| {text} | not run | — |"
    unit, key, higher = records[0]["unit"], records[0]["key"], records[0]["better"] == "higher"
    vals = sorted(records, key=lambda r: r["figures"][key])
    worst = vals[0] if higher else vals[-1]
    lo, hi = vals[0]["figures"][key], vals[-1]["figures"][key]
    span = _fmt_value(lo, unit) if len(vals) == 1 else f"{_fmt_value(lo, unit)} to {_fmt_value(hi, unit)} over {len(vals)} cases"
    measured = f"{span}; worst: {worst['case']}, {_fmt_value(worst['figures'][key], unit)}"
    missed = [r for r in records if not r["passed"]]
    if not missed:
        met = f"yes ({len(records)} of {len(records)})"
    else:
        shown = ", ".join(r["case"] for r in missed[:4]) + (", ..." if len(missed) > 4 else "")
        met = f"no: {len(missed)} of {len(records)} missed ({shown})"
    return f"| {text} | {measured} | {met} |"


def faults_block(faults: dict | None, path: str = FAULTS, tool: str = "benchmarks/faults.py") -> str:
    """The planted-fault campaign (benchmarks/faults.py): how many faults the ordinary suite
    caught, the control run, and which test caught each."""
    if faults is None:
        return f"No planted-fault campaign committed yet (`{path}` does not exist).\n"
    env, rows = faults["env"], faults["rows"]
    planted = [r for r in rows if r["fault"] != "none"]
    caught = [r for r in planted if r["result"].startswith("caught")]
    control = next((r for r in rows if r["fault"] == "none"), None)
    out = [para(f"Planted faults (`{path}`, generated by `{tool}` on {env['date']}, {env['gpu']}): "
                f"**{len(caught)} of {len(planted)} caught** by the ordinary suite (`pytest -x "
                f"{shlex.join(env['pytest_args'])}`); the control, the normal build under the same suite and data seed, "
                f"{control['result'] if control else 'was not run'}" + (f" ({control['detail']})." if control else ".")),
           "", "| fault | what it plants | result | first failing test |", "|---|---|---|---|"]
    for r in planted:
        what = r["what"].replace("|", "\\|")  # |x| in a description would split the cell
        out.append(f"| `{r['fault']}` | {what} | {r['result']} | `{r['caught_by']}` |")
    return "\n".join(out) + "\n"


def targets_block(perf: dict | None, targets: dict) -> str:
    texts = {k: v["text"].format(**v) for k, v in targets.items()}
    if perf is None:
        out = [
            f"### `auto` against its targets (perf tests in `{TEST_PERF}`)",
            "",
            para(f"No perf run committed yet: `{PERF}` does not exist, so no target is reported met or missed here. "
                 f"The targets, as `{TEST_PERF}` asserts them (no margins):"),
            "",
            "| target | measured | met |",
            "|---|---|---|",
        ] + [f"| {t} | no perf run committed yet | — |" for t in texts.values()]
    else:
        env = perf["env"]
        by_target: dict[str, list] = {}
        for rec in perf["tests"]:
            by_target.setdefault(rec["target_id"], []).append(rec)
        extra = [k for k in by_target if k not in texts]  # records of targets since renamed or removed
        out = [
            f"### `auto` against its targets ({env.get('gpu', env.get('device'))}, same-process ratios; perf tests in "
            f"`{TEST_PERF}`)",
            "",
            para(f"Generated from `{PERF}` (recorded by `{TEST_PERF}` under `REDUCEKIT_PERF_JSON`, latest run "
                 f"{env['date']}, torch {env['torch']}, graph timing {env.get('graph_timing', 'chained')}): per target, "
                 "the range of the asserted figure over its cases and the worst case."),
            "",
            "| target | measured | met |",
            "|---|---|---|",
        ] + [target_row(texts[k], by_target.get(k, [])) for k in texts] \
          + [target_row(by_target[k][0]["target"], by_target[k]) for k in extra]
    out += ["", para("Determinism run to run and accuracy against torch.sum are correctness targets, asserted by "
                     "`tests/test_cuda.py` rather than timed.")]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------------------
# ranking: the study's A6000 tables against our H200 sweep


def read_study(path: str) -> dict:
    """{"float32": {n: {column: text}}, "int32": ...} from the quoted tables, figures as quoted."""
    tables: dict[str, dict] = {}
    dtype, header = None, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            m = re.match(r"#+\s*(Float32|Int32)\b", line)
            if m:
                dtype, header = m.group(1).lower(), None
                tables[dtype] = {}
            elif dtype and line.startswith("|"):
                cells = [c.strip() for c in line.strip("|").split("|")]
                if header is None:
                    header = cells
                elif not set(cells[0]) <= set("-:"):
                    tables[dtype][int(cells[0].replace(",", ""))] = dict(zip(header, cells))
    if set(tables) != {"float32", "int32"}:
        raise ValueError(f"{path}: expected a Float32 and an Int32 table, found {sorted(tables)}")
    return tables


def ranking_block(run: dict, study: dict) -> str:
    rows = run["rows"]
    gpu = run["env"]["gpu"]
    eager = {(r["dtype"], r["n"], r["method"]): r["time_us"] for r in rows if r["mode"] == "eager"}
    # Our size: the study's, or where the sweep skipped it, the next size up it measured.
    sizes = sorted({n for (d, n, m) in eager if d == "float32"})
    ours_n = STUDY_N if STUDY_N in sizes else min([n for n in sizes if n > STUDY_N] or [max(sizes)])

    def ours(dtype, method):
        return eager.get((dtype, ours_n, method))

    def ours_cell(dtype, method):
        t = ours(dtype, method)
        if t is not None:
            return _fmt_time(t), f"{t / ours(dtype, TORCH):.2f}"
        timed = [n for (d, n, m) in eager if d == dtype and m == method and n < ours_n]
        return (f"— ({_n_label(max(timed))}: {_fmt_time(eager[(dtype, max(timed), method)])})" if timed else "—"), "—"

    def study_ms(dtype, kernel):
        return study[dtype][STUDY_N][kernel]

    def study_ratio(dtype, kernel):
        return float(study_ms(dtype, kernel)) / float(study_ms(dtype, "Torch"))

    short = gpu.replace("NVIDIA ", "")
    kernels = sorted(STUDY_METHODS, key=lambda k: float(study_ms("float32", k)))
    others = sorted({m for (d, n, m) in eager if d == "float32" and n == ours_n} - set(STUDY_METHODS.values()),
                    key=lambda m: ours("float32", m))
    where = "" if ours_n == STUDY_N else f" at {_n_label(ours_n)}, the sweep's nearest size (it did not time {_n_label(STUDY_N)})"
    intro = (f"At the study's largest size, {STUDY_N:,} ({_n_label(STUDY_N)}) elements: the study's A6000 times (ms, "
             f"quoted in [`{A6000}`]({A6000}) from seed document 001) and ours on the {gpu}{where} (us, eager, `{RESULTS}`), "
             "each with its time over torch.sum's in the same table (below 1: faster than torch.sum). Study kernels "
             f"first, fastest on the A6000 first; then the methods the study does not have, fastest on the {short} first.")
    out = [
        f"### Our {short} ranking against the study's A6000 ranking",
        "",
        para(intro),
        "",
        f"| study kernel | A6000 float32 | / Torch | A6000 int32 | / Torch | reducekit method | {short} float32 | / torch.sum "
        f"| {short} int32 | / torch.sum |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for k in kernels:
        m = STUDY_METHODS[k]
        f32, f32r = ours_cell("float32", m)
        i32, i32r = ours_cell("int32", m)
        out.append(f"| {k} | {study_ms('float32', k)} | {study_ratio('float32', k):.2f} | {study_ms('int32', k)} | "
                   f"{study_ratio('int32', k):.2f} | `{m}` | {f32} | {f32r} | {i32} | {i32r} |")
    for m in others:
        f32, f32r = ours_cell("float32", m)
        i32, i32r = ours_cell("int32", m)
        out.append(f"| — | — | — | — | — | `{m}` | {f32} | {f32r} | {i32} | {i32r} |")
    out.append("")
    if any("— (" in line for line in out):
        out += [para(f"— (2^k: t): not timed at {_n_label(ours_n)} (slower than the cut-off at a smaller N); t is its "
                     "time at 2^k, the largest size it was timed at."), ""]

    def order(times: dict) -> str:
        timed = sorted((t, k) for k, t in times.items() if t is not None)
        return ", ".join(k for _, k in timed) + "".join(f", {k} (not timed)" for k, t in times.items() if t is None)

    def span(ratios) -> str:
        return f"{min(ratios):.2f}-{max(ratios):.2f}x"

    torch_f32 = ours("float32", TORCH)
    a6000 = {k: float(study_ms("float32", k)) for k in STUDY_METHODS}
    h200 = {k: ours("float32", m) for k, m in STUDY_METHODS.items()}
    near_torch = sorted((m for m in others + [STUDY_METHODS[k] for k in kernels]
                         if m != TORCH and ours("float32", m) is not None and ours("float32", m) <= 1.1 * torch_f32),
                        key=lambda m: ours("float32", m))
    best_i32 = min((k for k in STUDY_METHODS if k != "Torch"), key=lambda k: float(study_ms("int32", k)))
    torch_over_best_i32 = float(study_ms("int32", "Torch")) / float(study_ms("int32", best_i32))
    out += [
        para(f"Order of the study's kernels, fastest first, float32: on the A6000 {order(a6000)}; on the {gpu} "
             f"{order(h200)}."),
        "",
        para(f"The study's one-element-per-thread warp kernels ({', '.join(WARP_LEVEL)}) take "
             f"{span([study_ratio('float32', k) for k in WARP_LEVEL])} torch.sum's float32 time on the A6000 and "
             f"{span([h200[k] / torch_f32 for k in WARP_LEVEL])} on the {gpu}. A sum streams its input once, so a "
             f"faster memory needs more bytes in flight per thread; within 1.1x of torch.sum on the {gpu} (float32): "
             f"{', '.join(f'`{m}`' for m in near_torch)}."),
        "",
        para(f"int32: torch.sum takes {ours('int32', TORCH) / ours('int32', 'auto'):.1f}x `auto`'s time on the {gpu}; "
             f"on the A6000, Torch took {torch_over_best_i32:.1f}x the time of the study's fastest int32 kernel, "
             f"{best_i32}."),
    ]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------------------
# dims: reductions over dims (bench.py --dims)


def dims_block(run: dict | None, plot: bool = False) -> str:
    """The dims run's environment, its eager table, the target verdicts of every mode and the host
    times; one line while no dims run is committed. `plot`: whether DIMS_PLOT is committed."""
    head = ["### Reductions over dims", ""]
    if run is None:
        return "\n".join(head + [para(f"No H200 dims results are committed yet (`{DIMS}` does not exist); "
                                      f"`python benchmarks/bench.py --dims --out {RESULTS_DIR}` on the H200 writes them.")]) + "\n"
    env, rows = run["env"], run["rows"]
    where = (f"one {env['gpu']} ({env.get('sms', '?')} SMs, {env.get('l2_mb', '?'):g} MB L2, driver {env.get('driver', '?')}, "
             f"CUDA {env.get('cuda', '?')}, torch {env['torch']})" if "gpu" in env
             else f"the CPU ({env.get('cpu', '?')}, {env.get('threads', '?')} threads, torch {env['torch']}; shapes scaled down)")
    ceilings = _ceilings(env)
    ceiling = ""
    if ceilings:
        given = any(c.get("given") for c in ceilings)
        ceiling = (f" Read ceiling {'given' if given else 'measured in the same run' + ('s' if len(ceilings) > 1 else '')}: "
                   + " and ".join(f"{c['gbps'] / 1e3:.3f}" for c in ceilings) + " TB/s.")
    cold = f"cold L2: {env['cold_l2']}; CUDA events; " if "cold_l2" in env else ""
    rounds = f"medians over {env['rounds']} interleaved rounds" if "rounds" in env else "medians"
    out = head + [para(
        f"Measured on {where} on {_dates(env)} with `python benchmarks/bench.py --dims`: per case and dtype, "
        "`torch.sum(x, dim, dtype=...)`, `reducekit.sum(x, dim, dtype=...)` (auto) and `reducekit.sum(flat)`, the full "
        f"sum of the same buffers seen as one flat tensor (same dtype, same bytes), timed in the same run; {cold}{rounds}."
        f"{ceiling} % of ceiling: bytes read / time / read ceiling. Every figure, the graph-mode table and the plots are "
        f"in [`{RESULTS_DIR}/{DIMS_FILE}.md`]({RESULTS_DIR}/{DIMS_FILE}.md). This section is generated from `{DIMS}` by "
        "`benchmarks/report.py`."), ""]
    if plot:
        out += [f"![dims: % of the read ceiling]({DIMS_PLOT})", ""]
    table = dims_table(rows, "eager")
    if table:
        out += [f"#### {DIMS_MODE_TITLES['eager']}", ""] + table + [""]
    for mode in DIMS_MODE_TITLES:
        summary = dims_target_summary(rows, mode)
        if summary:
            out += [f"Targets, {mode} mode:", ""] + [f"- {line}" for line in summary] + [""]
    host = host_lines(run.get("host"))
    if host:
        out += [para(host[0])] + host[1:]
    return "\n".join(out).rstrip("\n") + "\n"


# ------------------------------------------------------------------------------------------------
# README


# exact: method="exact" against auto, torch.sum and CUB (bench_exact.py)
EXACT = f"{RESULTS_DIR}/results_exact.json"
# Planted-fault campaigns of the exact kernels: the limbs' faults, then those of the CUDA-only paths.
# Then issue 22's part 3 (float16's HalfRun, the chunked path's carry) and, in the first of them,
# issue 21's misaligned columns (columns_misaligned_vectors), with the control of both; the last two,
# every fault of the value-independent paths after part 4, on an H100 (session 39; their control is
# the whole suite of the same seed, s39_validation/README.md).
EXACT_FAULTS = (f"{RESULTS_DIR}/faults_exact.json", f"{RESULTS_DIR}/faults_exact_2.json", f"{RESULTS_DIR}/faults_exact_3.json",
                f"{RESULTS_DIR}/faults_s36/run6/faults.json", f"{RESULTS_DIR}/faults_s36/run7/faults.json",
                "benchmarks/results/h100/s39_validation/faults_run2/faults.json",
                "benchmarks/results/h100/s39_validation/faults_run3/faults.json",
                "benchmarks/results/h200/exact_s42/faults/faults.json")


# ops: every other torch reduction on the engine (bench_ops.py), and its planted-fault campaigns
# (the second re-ran the rows-lanes and argmax faults after the up-front lanes kernel, the third the
# finish's fault after the one-launch finish of a split row; then issue 21's packed column batches
# and 8-row column batches, the second on an H100; the last, one column a thread and the older
# columns faults under its rule, on an H100, control in s39_columns/README.md; then the gather step's
# fault on an H100 and the multi-dim order's on the CPU, session 40, no control run: the same suite
# passed on the normal build of the same code, s40_multidim/run6_final/tests.log; the gather faults
# re-run in session 41, one per form, s41_validation/run3_faults, the suite passing in run1; then
# session 41's CPU vector paths (logsumexp's tree and tails, CUDA's exp, columns, integer extrema,
# argmax), no control run: the same suite passed on the normal build); then session 43's columns
# kernel faults (tile divider, short batches) and session 44's staged gather, on an H100, no control
# run: the same suite passed on the normal build of the same code (columns_lab_s43/README.md,
# s44_staged/run3/tests_tail.txt); then session 47's one-launch finish and output map, on an H100,
# no control run: the same suite passed on the normal build of the same code
# (h100/s47/host_cost_run4/tests_run4.log, h100/s47/run9_outmap_fixed/tests_run9.log).
OPS = f"{RESULTS_DIR}/results_ops.json"
OPS_FAULTS = (f"{RESULTS_DIR}/faults_ops.json", f"{RESULTS_DIR}/faults_ops_2.json", f"{RESULTS_DIR}/faults_ops_3.json",
              f"{RESULTS_DIR}/faults_s37/run3/faults.json", "benchmarks/results/h100/faults_s37/run8/faults.json",
              "benchmarks/results/h100/s39_columns/faults_run6/faults.json",
              "benchmarks/results/h100/s41_validation/run3_faults/faults/faults.json", "benchmarks/results/cpu/faults_s40/faults.json",
              "benchmarks/results/cpu/faults_s41/faults.json",
              "benchmarks/results/cpu/faults_s41_tiletree/faults.json",
              "benchmarks/results/cpu/faults_s42/faults.json",
              "benchmarks/results/h100/columns_lab_s43/faults_run7/faults.json",
              "benchmarks/results/h100/columns_lab_s43/faults_run12/faults.json",
              "benchmarks/results/h100/s44_staged/run4/faults/faults.json",
              "benchmarks/results/h100/s47/faults_run7/faults.json",
              "benchmarks/results/h100/s47/faults_run10/faults.json")


def bench_block(bench, path: str, what: str, run: dict | None, campaigns: list[tuple[str, dict | None]]) -> str:
    """A benchmark module's (reducekit.bench.exact, reducekit.bench.ops) tables and target verdicts
    (its markdown, headings one level down), and the planted-fault campaigns of its kernels."""
    if run is None:
        script = bench.SCRIPT
        return para(f"No H200 results for {what} are committed yet (`{path}` does not exist); "
                    f"`python benchmarks/{script}.py --out {RESULTS_DIR}` on the H200 writes them.") + "\n"
    md = bench.markdown(run).split("\n")
    md[0] = "#### " + md[0].lstrip("# ")
    md = ["#" + line if line.startswith("## ") else line for line in md]
    met = [t for t in bench.targets(run) if t["met"]]
    head = [f"Targets met: {len(met)} of {len(bench.targets(run))} (the table at the end names each).", ""]
    return "\n".join(head + md).rstrip() + "\n\n" + "\n".join(faults_block(f, path) for path, f in campaigns)


def splice(text: str, name: str, body: str) -> str:
    """`text` with the lines between block `name`'s markers replaced by `body`."""
    begin, end = marker(name), marker(name, end=True)
    if text.count(begin) != 1 or text.count(end) != 1:
        raise ValueError(f"README.md must hold exactly one '{begin}' and one '{end}'")
    i = text.index(begin) + len(begin)
    j = text.index(end)
    if j < i:
        raise ValueError(f"'{end}' comes before '{begin}'")
    return text[:i] + "\n" + body.rstrip("\n") + "\n" + text[j:]


# The latest campaigns of the faults planted by another hand (benchmarks/fault_patches.py), on the
# tree issue 20 left: every CPU-reachable patch on this machine's CPU build, then the CUDA-reaching
# ones on the H200 (two calls). The earlier campaigns stay committed beside them
# (benchmarks/results/cpu/fault_patches*.json, benchmarks/results/h200/fault_patches/).
PATCH_RUNS = ("benchmarks/results/cpu/fault_patches_issue20.json",
              f"{RESULTS_DIR}/issue20/part3/fault_patches_09_11_13_31.json",
              f"{RESULTS_DIR}/issue20/part3/fault_patches_03_07_15.json",
              # issue 21's CPU rows loop (8 lanes at once): 43 and 44, with their control
              "benchmarks/results/cpu/fault_patches_issue21_rows/fault_patches.json")


# The sharded 2^30 table on two H200s (issue 25).
DIST_WORLD2 = "benchmarks/results/h200x2/results_distributed_world2.json"


def patches_block(runs: list[tuple[str, dict | None]]) -> str:
    return "\n".join(faults_block(f, path, "benchmarks/fault_patches.py") for path, f in runs)


def world_table(res: dict, path: str) -> str:
    """bench_distributed.py --world N's table (timings and world-size invariance) from its JSON."""
    w, inv = res["world_size"], res["invariance"]
    clock = "CUDA events" if res["backend"] == "nccl" else "host clock"
    lines = [f"reducekit.distributed on {w} ranks ({res['device']}, {res['backend']}, torch {res['torch']}): one "
             f"float32 tensor of 2^{res['log2']} values (normal + 1), {w} equal shards along dim 0, one per rank. "
             f"Medians of {res['reps']} calls ({clock}), in us; each figure is the slowest rank's. From `{path}` "
             f"(`benchmarks/bench_distributed.py --world {w}`).", "",
             "| op | shard alone | shard, all ranks at once | plain API | plain / (alone + all-reduce) | "
             "reducekit DTensor | torch DTensor | torch / reducekit DTensor | whole tensor, one GPU | one GPU / plain |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        t = r["torch_dtensor_us"]
        torch_cells = (f"{t:.1f} | {t / r['dtensor_us']:.2f}" if t is not None
                       else f"none ({(r['torch_dtensor_note'] or 'torch has no such op').split(':')[0]}) | -")
        lines.append(f"| {r['op']} | {r['local_alone_us']:.1f} | {r['local_together_us']:.1f} | {r['plain_us']:.1f} | "
                     f"{r['plain_us'] / (r['local_alone_us'] + r['allreduce_small_us']):.2f} | {r['dtensor_us']:.1f} | "
                     f"{torch_cells} | {r['single_us']:.1f} | {r['single_us'] / r['plain_us']:.2f} |")
    lines += ["", f"One all-reduce of the plain API's 4 KiB slot, alone: {res['rows'][0]['allreduce_small_us']:.1f} us. "
              f"World-size invariance (float32 bits; every rank returned the same: "
              f"{res['invariance_same_on_every_rank']}):", "",
              f"| result | {w} ranks | one GPU | equal |", "|---|---|---|---|"]
    for label, key, one in (("reducekit exact, plain API", "exact_plain", "exact_single"),
                            ("reducekit exact, DTensor", "exact_dtensor", "exact_single"),
                            ("torch.sum of the DTensor", "torch_dtensor", "torch_single"),
                            ("reducekit auto, plain API", "auto_plain", "auto_single")):
        lines.append(f"| {label} | {inv[key]} | {inv[one]} | {'yes' if inv[key] == inv[one] else 'no'} |")
    return "\n".join(lines)


def distributed_block(res: dict | None, path: str) -> str:
    if res is None:
        return f"(no result file yet: `{path}`)"
    return world_table(res, path)


# method="exact" by data family with CUB's RFA in the same run, and misaligned rows (issues 22 and
# 21), on the H200 (the same runs on an H100: benchmarks/results/h100/).
EXACT_FAMILIES = "benchmarks/results/h200/exact_families/results_exact_families.json"
# The same benchmark's previous H200 run (session 56's code, 2026-11-28: float64's chunks before
# session 57's shorter add and 16 vectors a sweep), for the README's "before" column. Session 38's
# run is in exact_families_s38/.
EXACT_FAMILIES_BEFORE = ["benchmarks/results/h200/exact_families_s57/results_exact_families.json"]
MISALIGNED = "benchmarks/results/h200/misaligned/results_misaligned.json"
# The random-shape sweep (issue 21): the current GPU run, the same draw on the H200 two days of
# sessions before (commit bd4c507, session 37), the same draw on an H100 (session 50's code), and the CPU's.
SWEEP = "benchmarks/results/h200/sweep/sweep_cuda.json"
SWEEP_BEFORE = "benchmarks/results/h200/sweep_bd4c507/sweep_cuda.json"
SWEEP_BEFORE_WHAT = "on the H200 with session 37's code (commit bd4c507)"
SWEEP_LATER = "benchmarks/results/h100/sweep/sweep_cuda.json"  # session 50's code, on an H100
SWEEP_LATER_WHAT = "Session 50's code on another card"
SWEEP_LATER_BEFORE = "benchmarks/results/h100/sweep_before_s47/sweep_cuda.json"  # the same card type, session 46's final code
SWEEP_LATER_BEFORE_WHAT = ("before split steps finished in their own kernel and permuted results were written in place "
                           "(sessions 47-49: one launch where there were two)")
SWEEP_CPU = "benchmarks/results/cpu/sweep_cpu.json"
SWEEP_CPU_BEFORE = "benchmarks/results/cpu/sweep_cpu_before_s38/sweep_cpu.json"  # before the operators' vector rows (session 38)


def _merge_runs(runs: list) -> dict | None:
    """The first run, each later run's rows replacing the earlier rows of the same dtype."""
    runs = [r for r in runs if r is not None]
    if not runs:
        return None
    run = runs[0]
    for lr in runs[1:]:
        redone = {r["dtype"] for r in lr["rows"]}
        run = {**run, "rows": [r for r in run["rows"] if r["dtype"] not in redone] + lr["rows"]}
    return run


def _worst_by_group(run: dict) -> dict:
    """(dtype, n) -> the largest exact / key ratio over the families, graph (eager), and its family,
    for key auto and rfa."""
    groups: dict = {}
    for r in run["rows"]:
        groups.setdefault((r["dtype"], r["n"]), []).append(r)
    out = {}
    for g, rs in groups.items():
        for key in ("auto", "rfa"):
            best = max(rs, key=lambda r: r["graph_us"]["exact"] / r["graph_us"][key] if key in r["graph_us"] else 0)
            if key not in best["graph_us"]:
                out[g, key] = None
            else:
                out[g, key] = (best["graph_us"]["exact"] / best["graph_us"][key], best["eager_us"]["exact"] / best["eager_us"][key],
                               best["data"])
        out[g, "bits"] = all(r["cpu_bits_equal"] for r in rs)
    return out


def exact_families_block(run: dict | None, path: str, before: list | None = None) -> str:
    """Per dtype and size, the worst family's exact / auto and the worst exact / RFA, from the
    family benchmark's JSON (every row is in the .md beside it), beside the worst exact / auto of an
    earlier run: `before`, a list of (run, path) merged by _merge_runs."""
    if run is None:
        return f"(no result file yet: `{path}`)"
    from reducekit.bench import exact_families as ef
    before = [(br, bp) for br, bp in (before or []) if br is not None]
    old = _merge_runs([br for br, _ in before])
    old_worst = _worst_by_group(old) if old else {}
    env = run["env"]
    rfa_measured = any("rfa" in r["graph_us"] for r in run["rows"])  # ef.targets has RFA rows exactly then
    lines = [para(f"{env.get('gpu', '?')}, {env.get('date', '?')}, torch {env.get('torch', '?')}; read ceiling "
                  f"{env['read_ceiling']['gbps'] / 1e3:.2f} TB/s. Per dtype and size, over the {len(ef.FAMILIES)} families "
                  f"({', '.join(ef.FAMILIES)}): the largest exact / auto and exact / RFA (CUB's reproducible sum, same process"
                  + ("" if rfa_measured else "; not measured in this run") + "), "
                  f"graph (eager), and the family where it is largest. Every row: `{path[:-5]}.md`; generated from `{path}`"
                  + (f". Before: the same benchmark's largest exact / auto (graph) before this code, from "
                     + ", ".join(f"`{bp}` ({br['env'].get('date', '?')})" for br, bp in before) + " (later files' dtypes replace earlier ones')"
                     if before else "") + "."), "",
             "| dtype | N | path | exact / auto, worst | family | before | exact / RFA, worst | family | CUDA bits = CPU bits |",
             "|---|---|---|---:|---|---:|---:|---|---|"]
    worst = _worst_by_group(run)
    for g in sorted({g for g, _ in worst}, key=lambda g: (["float32", "bfloat16", "float16", "float64"].index(g[0]), g[1])):
        dt, n = g
        a, f = worst[g, "auto"], worst[g, "rfa"]
        o = old_worst.get((g, "auto"))
        path_name = {"float32": "binned", "bfloat16": "binned", "float64": "chunked", "float16": "counted runs"}[dt]
        lines.append(f"| {dt} | 2^{int(math.log2(n))} | {path_name} | {a[0]:.2f} ({a[1]:.2f}) | {a[2]} | "
                     f"{f'{o[0]:.2f}' if o else '—'} | "
                     + (f"{f[0]:.2f} ({f[1]:.2f}) | {f[2]}" if f else "— | —")
                     + f" | {'all equal' if worst[g, 'bits'] else 'DIFFER'} |")
    dec = ef.decision(run)
    w = dec["worst"]
    tg = ef.targets(run)
    met = sum(t["met"] for t in tg)

    def groups_where(pred, each):
        """'dtype 2^k' of the (dtype, n) groups whose targets matching pred all meet (each=True) or not."""
        seen: dict = {}
        for t in tg:
            if pred(t["target"]):
                seen[t["dtype"], t["n"]] = seen.get((t["dtype"], t["n"]), True) and t["met"]
        return [f"{dt} 2^{int(math.log2(n))}" for (dt, n), ok in seen.items() if ok == each]

    fam = lambda name: (lambda k: k.startswith(name) and "small" not in k and "over dim" not in k)  # noqa: E731
    rfa_missed = groups_where(fam("exact / CUB RFA"), False)
    auto_met = groups_where(fam("exact / auto"), True)
    small = [t for t in tg if "small" in t["target"]]
    small_missed = [f"{t['dtype']} 2^{int(math.log2(t['n']))}" for t in small if not t["met"]]
    dims = [t for t in tg if "over dim" in t["target"]]
    lines += ["", para(
        "Targets, every family, graph and eager: "
        + ("faster than RFA " + ("everywhere" if not rfa_missed else f"except {', '.join(rfa_missed)}") if rfa_measured
           else "RFA not measured in this run")
        + "; exact / auto within the issue's limit (1.25 at 2^24, 1.10 above) "
        + (f"in {', '.join(auto_met)} only" if auto_met else "nowhere")
        + f". Eager calls of 2^10 to 2^20 values at or below torch.sum: {len(small) - len(small_missed)} of {len(small)}"
        + (f" (missed: {', '.join(small_missed)})" if small_missed else "")
        + f". Rows and columns over dims within 1.15x auto: {sum(t['met'] for t in dims)} of {len(dims)}.")]
    lines += ["", para(f"Targets met: {met} of {len(tg)}. Decision (item 4): float32 exact costs up to "
                       f"{w['ratio']:.2f}x auto ({w['data']}, 2^{int(math.log2(w['n']))}, {w['mode']}), above 1.03, so `auto` "
                       f"stays as it is.")]
    return "\n".join(lines)


# exact over dims: the current family run's rows and columns, against session 42's H200 dims-only run.
EXACT_DIMS = EXACT_FAMILIES
EXACT_DIMS_BEFORE = "benchmarks/results/h200/exact_s42/results_exact_families.json"
EXACT_DIMS_BEFORE_WHAT = "session 42's code: before the pool, the ticket and bfloat16's word walk of columns"


def exact_dims_block(run: dict | None, path: str, before: dict | None, before_path: str, before_what: str) -> str:
    """exact over dims (rows and columns) against auto, per dtype, shape and family, from a run of
    bench_exact_families.py, beside an earlier run's exact / auto of the same case (graph)."""
    if run is None:
        return f"(no result file yet: `{path}`)"
    env = run["env"]

    def key(d):
        return d["dtype"], tuple(d["shape"]), d["dim"], d.get("data", "gradient")

    old = {key(d): d["graph_us"]["exact"] / d["graph_us"]["auto"] for d in (before or {}).get("dims", [])}
    lines = [para(f"{env.get('gpu', '?')}, {env.get('date', '?')}, torch {env.get('torch', '?')}; read ceiling "
                  f"{env['read_ceiling']['gbps'] / 1e3:.2f} TB/s. exact / auto over dims, graph (eager), same process; "
                  f"generated from `{path}`. Before: the same case's exact / auto (graph) in `{before_path}` "
                  f"({(before or {}).get('env', {}).get('date', '?')}, {before_what})."), "",
             "| dtype | shape | dim | data | path | exact us | auto us | exact / auto | before |",
             "|---|---|---|---|---|---:|---:|---:|---:|"]
    met = 0
    for d in run["dims"]:
        g, e = d["graph_us"], d.get("eager_us") or d["graph_us"]
        k = key(d)
        rows = d["dim"] in (1, -1)
        n = d["shape"][1] if rows else d["shape"][0]
        path_name = ("columns" if not rows else "warp a row" if n < 2**14
                     else "counted runs" if d["dtype"] == "float16" else "binned")
        r, re_ = g["exact"] / g["auto"], e["exact"] / e["auto"]
        met += (r <= 1.15) + (re_ <= 1.15)
        lines.append(f"| {d['dtype']} | {tuple(d['shape'])} | {d['dim']} | {d.get('data', 'gradient')} | {path_name} | "
                     f"{g['exact']:.1f} | {g['auto']:.1f} | {r:.2f} ({re_:.2f}) | {f'{old[k]:.2f}' if k in old else '—'} |")
    lines += ["", para(f"Within the issue's 1.15x auto: {met} of {2 * len(run['dims'])} (graph and eager).")]
    return "\n".join(lines)


# Rows that end in a short lane (benchmarks/rows_fill.py, sessions 53-54): the same lane counts with
# three endings, the short lane by vectors and by element loads in one build; the sweep's rows cases
# with each form; short rows of 1- and 2-byte values.
ROWS_FILL_ENDINGS = (("whole lanes", "benchmarks/results/h100/s54/runA_uniform_loads/fill_t0/rows_fill.json"),
                     ("16 bytes short", "benchmarks/results/h100/s54/runA_uniform_loads/fill_t16/rows_fill.json"),
                     ("one value short", "benchmarks/results/h100/s54/runA_uniform_loads/fill_t-1/rows_fill.json"))
ROWS_FILL_SWEEP = ("benchmarks/results/h200/s54/runC_rows_ab/sweep_rows_m1/sweep_cuda.json",
                   "benchmarks/results/h200/s54/runC_rows_ab/sweep_rows_m-1/sweep_cuda.json")
ROWS_FILL_SMALL = "benchmarks/results/h200/s54/runD_small_fault/fill_small/rows_fill.json"


def rows_fill_block(endings: list, sweep_ab: tuple | None, small: dict | None) -> str:
    """endings: (label, path, run) per ending, each run timing the short lane by vectors (`us`) and by
    element loads (`old_us`) in one build; sweep_ab: the sweep's rows cases with short lanes by
    vectors and by element loads (two runs of one draw); small: rows of a few lanes, both forms."""
    gm = _bench_script("sweep").geomean
    if any(run is None for _, _, run in endings):
        return f"(no result file yet: `{endings[0][1]}`)"
    env = endings[0][2]["env"]
    rows = {}
    for label, _, run in endings:
        for r in run["rows"]:
            rows.setdefault((r["op"], r["dtype"], r["lanes"]), {})[label] = r
    labels = [label for label, _, _ in endings]
    same = all(r["same_bits"] for _, _, run in endings for r in run["rows"])
    lines = [para(f"{env.get('gpu', '?')}, {env.get('date', '?')}, torch {env.get('torch', '?')}; rows of the same lane counts "
                  f"(lanes of 64 bytes) with three endings, about {endings[0][2]['mib']:g} MiB each, over dim 1, graph timing; each "
                  f"case with the short lane by vectors and by element loads in the same build (bits "
                  f"{'the same in every case' if same else 'DIFFERENT in some case'}); time / the whole-lane row's; generated from "
                  + ", ".join(f"`{path}`" for _, path, _ in endings) + "."), "",
             f"| op | dtype | lanes | {labels[0]} us | " + " | ".join(f"{lab}: vectors | {lab}: elements" for lab in labels[1:]) + " |",
             "|---|---|---:|---:|" + "---:|---:|" * (len(labels) - 1)]
    for (op, dt, lanes), t in rows.items():
        w = t[labels[0]]["us"]
        lines.append(f"| {op} | {dt} | {lanes} | {w:.1f} | "
                     + " | ".join(f"{t[lab]['us'] / w:.2f} | {t[lab]['old_us'] / w:.2f}" for lab in labels[1:]) + " |")
    if sweep_ab is not None and all(sweep_ab):
        va, ea = ({(r["op"], r["dtype"], str(r["shape"]), str(r["dims"]), r["layout"]): r for r in run["rows"] if "ours_graph_us" in r}
                  for run in sweep_ab)
        by = {}
        for k, r in va.items():
            if k in ea:
                by.setdefault(r["op"], []).append(r["ours_graph_us"] / ea[k]["ours_graph_us"])
        allr = [x for v in by.values() for x in v]
        lines += ["", para(f"The random-shape sweep's one-step rows cases ({len(allr)} of seed {sweep_ab[0]['seed']}'s 400; "
                           f"{sweep_ab[0]['device_name']}, {sweep_ab[0]['date']}), our graph time with short lanes by vectors / by "
                           f"element loads, two runs on one machine; generated from `{ROWS_FILL_SWEEP[0]}` and `{ROWS_FILL_SWEEP[1]}`: "
                           f"geometric mean {gm(allr):.3f}."), "",
                  "| op | cases | vectors / element loads, geometric mean | best | worst |", "|---|---:|---:|---:|---:|"]
        for op in sorted(by):
            v = by[op]
            lines.append(f"| {op} | {len(v)} | {gm(v):.3f} | {min(v):.2f} | {max(v):.2f} |")
    if small is not None:
        senv = small["env"]
        lines += ["", para(f"Short rows of 1- and 2-byte values ({senv.get('gpu', '?')}, {senv.get('date', '?')}; rows one value short "
                           f"of the lane count, about {small['mib']:g} MiB; generated from `{ROWS_FILL_SMALL}`), vectors / element loads:"),
                  "", "| op | dtype | " + " | ".join(f"{n} lanes" for n in sorted({r["lanes"] for r in small["rows"]})) + " |",
                  "|---|---|" + "---:|" * len({r["lanes"] for r in small["rows"]})]
        cases = {}
        for r in small["rows"]:
            cases.setdefault((r["op"], r["dtype"]), []).append(r)
        for (op, dt), rs in cases.items():
            lines.append(f"| {op} | {dt} | " + " | ".join(f"{r['us'] / r['old_us']:.2f}" for r in sorted(rs, key=lambda r: r["lanes"])) + " |")
    return "\n".join(lines)


# Two stripes (session 55): rows one value short timed with the landed rule and with one lane a
# thread in one build, and the sweep's rows cases of a fresh draw with the rule and without stripes.
STRIPES_FILL = "benchmarks/results/h200/s55/run3_rule/rows_fill/rows_fill.json"
STRIPES_SWEEP = ("benchmarks/results/h200/s55/run3_rule/sweep_seed55_stripes_m0/sweep_cuda.json",
                 "benchmarks/results/h200/s55/run3_rule/sweep_seed55_stripes_m-1/sweep_cuda.json")
# The refit of rows of more than 64 threads (session 60): the batched operators' rows at 65-180 lanes,
# 256 MiB, with session 59's rule (which striped all of them) and with one lane a thread, one build.
STRIPES_REFIT_FILL = "benchmarks/results/h200/s60/run_b_build_tests_sweep_rows_fill/rows_fill/rows_fill.json"


def stripes_block(fill: dict | None, sweep_ab: tuple | None, fill_path: str = STRIPES_FILL,
                  sweep_paths: tuple = STRIPES_SWEEP, rule: str = "the rule") -> str:
    """fill: rows_fill.py --old-too --old-stripes (`us` with the rule, `old_us` one lane a thread);
    sweep_ab: the sweep's rows cases with the rule (_rows_stripes(0)) and without stripes (-1)."""
    if fill is None:
        return f"(no result file yet: `{fill_path}`)"
    gm = _bench_script("sweep").geomean
    env = fill["env"]
    lanes = sorted({r["lanes"] for r in fill["rows"]})
    same = all(r["same_bits"] for r in fill["rows"])
    tail = "one value" if fill["tail"] < 0 else f"{fill['tail']} bytes"
    lines = [para(f"{env.get('gpu', '?')}, {env.get('date', '?')}, torch {env.get('torch', '?')}; rows {tail} short of whole lanes "
                  f"of 64 bytes, about {fill['mib']:g} MiB each, over dim 1, graph timing, cold L2; time with {rule} / time with one "
                  f"lane a thread, in one build (bits {'the same in every case' if same else 'DIFFERENT in some case'}); generated "
                  f"from `{fill_path}`."), "",
             "| op | dtype | " + " | ".join(f"{n} lanes" for n in lanes) + " |", "|---|---|" + "---:|" * len(lanes)]
    cases = {}
    for r in fill["rows"]:
        cases.setdefault((r["op"], r["dtype"]), {})[r["lanes"]] = r
    for (op, dt), rs in cases.items():
        lines.append(f"| {op} | {dt} | " + " | ".join(f"{rs[n]['us'] / rs[n]['old_us']:.2f}" if n in rs else "—" for n in lanes) + " |")
    if sweep_ab is not None and all(sweep_ab):
        key = lambda r: (r["op"], r["dtype"], str(r["shape"]), str(r["dims"]), r["layout"])  # noqa: E731
        a, b = ({key(r): r for r in run["rows"] if "ours_graph_us" in r} for run in sweep_ab)
        pairs = [(a[k], a[k]["ours_graph_us"] / b[k]["ours_graph_us"]) for k in a if k in b]
        moved = sorted((p for p in pairs if abs(p[1] - 1) > 0.03), key=lambda p: p[1])
        lines += ["", para(f"The random-shape sweep's one-step rows cases of another draw ({len(pairs)} of seed "
                           f"{sweep_ab[0]['seed']}'s 400; {sweep_ab[0]['device_name']}, {sweep_ab[0]['date']}), our graph time with "
                           f"the rule / without stripes, two runs on one machine; generated from `{sweep_paths[0]}` and "
                           f"`{sweep_paths[1]}`: geometric mean {gm([x for _, x in pairs]):.3f}; the cases that moved by more "
                           f"than 3%:"), "", "| op | dtype | shape | dims | MiB | rule / no stripes |", "|---|---|---|---|---:|---:|"]
        for r, x in moved:
            lines.append(f"| {r['op']} | {r['dtype']} | {tuple(r['shape'])} | {r['dims']} | {r['bytes'] / 2**20:.0f} | {x:.2f} |")
    return "\n".join(lines)


# The rows of argmax and var_mean float32 (session 61): the columns lab's rows step, this build's rule
# against the tree kernels (LAB_ROWS_SELECT=-1: argmax's previous rule) and one lane a thread (var_mean's
# previous rule), 256 MiB of rows one value short of whole lanes, two repeats, one build.
SELECT_ROWS_LAB = "benchmarks/results/h200/s61/lab5_select"


def select_rows_block(d: str, root: str = ROOT) -> str:
    """The lab's rows: time with the rule / the previous rule, and the rule's time / a read of the bytes."""
    path = os.path.join(root, d)
    if not os.path.isdir(path):
        return f"(no result directory yet: `{d}`)"
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "columns_lab"))
    try:
        import rows_table
    finally:
        sys.path.pop(0)
    _, runs = rows_table.load(path)
    med = statistics.median
    names = {"f32": "float32", "f64": "float64", "bf16": "bfloat16", "f16": "float16", "i32": "int32"}
    rows: dict = {}
    same = True
    for (op, dt, K, L), v in runs.items():
        before = "tree" if op == "argmax" else "old"  # the previous rule of each operator
        G = 64 // rows_table.SIZE[dt]
        if "rule" not in v or before not in v or L % G != G - 1 or not 250 <= K * L * rows_table.SIZE[dt] / 2**20 <= 257:
            continue  # the lab's other cases (whole lanes, 512 MiB, a full reduction): not this table's
        same = same and len({t[3] for n in v for t in v[n]}) == 1
        rule, prev = med(t[0] for t in v["rule"]), med(t[0] for t in v[before])
        read = med(t[1] for n in v for t in v[n])
        rows.setdefault((op, names[dt]), {})[rows_table.lanes_of(dt, L)] = (rule / prev, rule / read, K)
    lanes = sorted({n for r in rows.values() for n in r})
    head = "| op | dtype | " + " | ".join(f"{n}" for n in lanes) + " |"
    sep = "|---|---|" + "---:|" * len(lanes)
    out = [para("NVIDIA H200 (session 61), the columns lab's rows step (`LAB_KIND=rows`): rows one value short of whole lanes "
                "of 64 bytes, about 256 MiB each, events, inputs rotated "
                "over 512 MiB, medians of two repeats of 9; columns are lanes a row. Time with this build's rule / time with "
                "the previous rule in the same build (argmax: the tree kernels, `LAB_ROWS_SELECT=-1`; var_mean: one lane a thread "
                "and the stripes' rule), then the rule's time / a read of the same bytes. var_mean's 256 lanes ran with the bound "
                "at 256 lanes and 16-bit argmax's 2 lanes with the strided form; the landed rule keeps both on their previous "
                "form (var_mean's bound is 180 lanes, 16-bit values start at 4), so they keep their previous time. Bits "
                f"{'the same in every case and variant' if same else 'DIFFERENT in some case'}; generated from `{d}`."),
           "", "Time / previous rule's time:", "", head, sep]
    for (op, dt), r in rows.items():
        out.append(f"| {op} | {dt} | " + " | ".join(f"{r[n][0]:.2f}" if n in r else "—" for n in lanes) + " |")
    out += ["", "Time / a read of the same bytes:", "", head, sep]
    for (op, dt), r in rows.items():
        out.append(f"| {op} | {dt} | " + " | ".join(f"{r[n][1]:.2f}" if n in r else "—" for n in lanes) + " |")
    return "\n".join(out)


# Welford's one-column columns held to 3 blocks an SM (session 62): the sweep's var_mean cases of
# several draws, one build, the rule against the 2-blocks build everywhere (_columns_wide(-1), the
# previous build's kernel) and against the 3-blocks build wherever compiled (_columns_wide(1)).
COLUMNS_WIDE_AB = "benchmarks/results/h100/s62/run1_build_ab/ab"


def columns_wide_block(d: str, root: str = ROOT) -> str:
    """Per dtype and plan class: the var_mean cases' graph time with the rule / with -1 and with 1 / with
    -1 (geometric means), and the cases the rule moved by more than 3%."""
    path = os.path.join(root, d)
    seeds = sorted(int(m.group(1)) for f in (os.listdir(path) if os.path.isdir(path) else [])
                   if (m := re.fullmatch(r"a_(\d+)", f)) and os.path.exists(os.path.join(path, f, "sweep_cuda.json")))
    if not seeds:
        return f"(no result directory yet: `{d}`)"
    gm = _bench_script("sweep").geomean
    key = lambda r: (r["op"], r["dtype"], str(r["shape"]), str(r["dims"]), r["layout"])  # noqa: E731

    def rows_of(side, seed):
        with open(os.path.join(path, f"{side}_{seed}", "sweep_cuda.json")) as f:
            run = json.load(f)
        return run, {key(r): r for r in run["rows"] if "ours_graph_us" in r}

    groups: dict = {}
    moved = []
    env = None
    for seed in seeds:
        (env, a), (_, never), (_, always) = rows_of("a", seed), rows_of("b0", seed), rows_of("b1", seed)
        for k, r in a.items():
            if k in never and k in always:
                q = (r["ours_graph_us"] / never[k]["ours_graph_us"], always[k]["ours_graph_us"] / never[k]["ours_graph_us"])
                groups.setdefault((r["dtype"], r["plan"]), []).append(q)
                if abs(q[0] - 1) > 0.03:
                    moved.append((seed, r, q, never[k]))
    n = sum(len(v) for v in groups.values())
    lines = [para(f"{env['device_name']}, {env['date']}, torch {env['torch']}: the random-shape sweep's var_mean cases of seeds "
                  f"{', '.join(map(str, seeds))} ({n} cases), graph timing, one build, three runs a seed back to back: the rule, "
                  "the build held to 2 blocks an SM everywhere (`--columns-wide -1`: the previous build's kernel) and the one "
                  "held to 3 wherever it is compiled (`--columns-wide 1`). Our time over the 2-blocks run's, geometric means; "
                  f"generated from `{d}`."), "",
             "| dtype | plan | cases | rule / 2 blocks | 3 blocks / 2 blocks | lowest, highest (rule) |", "|---|---|---:|---:|---:|---:|"]
    for (dt, plan), v in sorted(groups.items()):
        lines.append(f"| {dt} | {plan} | {len(v)} | {gm([x for x, _ in v]):.3f} | {gm([y for _, y in v]):.3f} | "
                     f"{min(x for x, _ in v):.2f}, {max(x for x, _ in v):.2f} |")
    lines += ["", para("The cases the rule moved by more than 3% (rule / 2 blocks; graph ratio to torch with the 2-blocks build and "
                       "with the rule, each against its own run's torch):"), "",
              "| seed | dtype | shape | dims | layout | MiB | 2 blocks us | rule / 2 blocks | 3 blocks / 2 blocks | vs torch, 2 blocks -> rule |",
              "|---:|---|---|---|---|---:|---:|---:|---:|---|"]
    for seed, r, q, b in sorted(moved, key=lambda m: m[2][0]):
        lines.append(f"| {seed} | {r['dtype']} | {tuple(r['shape'])} | {r['dims']} | {r['layout']} | {r['bytes'] / 2**20:.1f} | "
                     f"{b['ours_graph_us']:.1f} | {q[0]:.2f} | {q[1]:.2f} | {b['ratio_graph']:.3f} -> {r['ratio_graph']:.3f} |")
    return "\n".join(lines)


def _bench_script(name: str):
    """A module of benchmarks/ (a script beside this one), imported by name."""
    import importlib
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def misaligned_block(run: dict | None, path: str) -> str:
    if run is None:
        return f"(no result file yet: `{path}`)"
    md = _bench_script("bench_misaligned").markdown(run).split("\n")
    return "\n".join(md[2:]).rstrip() + f"\n\nGenerated from `{path}`."


def sweep_block(cur: dict | None, before: dict | None, cpu: dict | None, cpu_before: dict | None, later: dict | None = None,
                later_before: dict | None = None) -> str:
    if cur is None:
        return f"(no result file yet: `{SWEEP}`)"
    chunks = _bench_script("sweep").summary_block(cur, SWEEP, before, SWEEP_BEFORE, cpu, SWEEP_CPU, cpu_before,
                                                   SWEEP_CPU_BEFORE, later, SWEEP_LATER, later_before,
                                                   SWEEP_LATER_BEFORE, SWEEP_LATER_BEFORE_WHAT, SWEEP_BEFORE_WHAT,
                                                   SWEEP_LATER_WHAT).split("\n\n")
    return "\n\n".join(c if c.startswith("|") else para(c) for c in chunks)


def special_block(root: str = ROOT) -> str:
    """The special-value rules table, from tests/special_values.py (the test's own list)."""
    sys.path.insert(0, os.path.join(root, "tests"))
    try:
        import special_values
    finally:
        sys.path.pop(0)
    return special_values.rules_table()


def blocks(root: str = ROOT) -> dict[str, str]:
    """Every generated block's text, from the committed files under `root`."""
    def load(path):
        """A committed JSON result, or None while it does not exist."""
        if not os.path.exists(os.path.join(root, path)):
            return None
        with open(os.path.join(root, path)) as f:
            return json.load(f)

    run = load_run(os.path.join(root, RESULTS))
    perf, faults, dims = load(PERF), load(FAULTS), load(DIMS)
    from reducekit.bench import exact, ops

    return {
        "exact": bench_block(exact, EXACT, "method='exact'", load(EXACT), [(p, load(p)) for p in EXACT_FAULTS]),
        "ops": bench_block(ops, OPS, "the reduction ops", load(OPS), [(p, load(p)) for p in OPS_FAULTS]),
        "faults": faults_block(faults),
        "results": results_block(run),
        "targets": targets_block(perf, read_targets(os.path.join(root, TEST_PERF))),
        "ranking": ranking_block(run, read_study(os.path.join(root, A6000))),
        "dims": dims_block(dims, plot=os.path.exists(os.path.join(root, DIMS_PLOT))),
        "special": special_block(root),
        "patches": patches_block([(p, load(p)) for p in PATCH_RUNS]),
        "distributed": distributed_block(load(DIST_WORLD2), DIST_WORLD2),
        "exact_families": exact_families_block(load(EXACT_FAMILIES), EXACT_FAMILIES, [(load(p), p) for p in EXACT_FAMILIES_BEFORE]),
        "stripes": stripes_block(load(STRIPES_FILL), tuple(load(p) for p in STRIPES_SWEEP)),
        "stripes_refit": stripes_block(load(STRIPES_REFIT_FILL), None, STRIPES_REFIT_FILL,
                                       rule="session 59's rule (two stripes in every case here)"),
        "select_rows": select_rows_block(SELECT_ROWS_LAB, root),
        "columns_wide": columns_wide_block(COLUMNS_WIDE_AB, root),
        "sweep": sweep_block(load(SWEEP), load(SWEEP_BEFORE), load(SWEEP_CPU), load(SWEEP_CPU_BEFORE), load(SWEEP_LATER),
                             load(SWEEP_LATER_BEFORE)),
        "misaligned": misaligned_block(load(MISALIGNED), MISALIGNED),
        "exact_dims": exact_dims_block(load(EXACT_DIMS), EXACT_DIMS, load(EXACT_DIMS_BEFORE), EXACT_DIMS_BEFORE,
                                       EXACT_DIMS_BEFORE_WHAT),
        "rows_fill": rows_fill_block([(label, path, load(path)) for label, path in ROWS_FILL_ENDINGS],
                                     tuple(load(p) for p in ROWS_FILL_SWEEP), load(ROWS_FILL_SMALL)),
    }


def generate(readme: str, root: str = ROOT) -> str:
    """README text with every block regenerated."""
    for name, body in blocks(root).items():
        readme = splice(readme, name, body)
    return readme


def check(root: str = ROOT) -> str:
    """A unified diff from README.md to what this script generates; empty when they agree."""
    path = os.path.join(root, README)
    with open(path) as f:
        current = f.read()
    wanted = generate(current, root)
    return "".join(difflib.unified_diff(current.splitlines(True), wanted.splitlines(True), README, f"{README} (generated)"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Regenerate README.md's result blocks from benchmarks/results/.")
    p.add_argument("--check", action="store_true", help="do not write: exit 1 and print a diff if README.md is out of date")
    a = p.parse_args(argv)
    if a.check:
        diff = check()
        if diff:
            sys.stdout.write(diff)
            print(f"\n{README} differs from what benchmarks/report.py generates: run python benchmarks/report.py",
                  file=sys.stderr)
            return 1
        print(f"{README} is up to date")
        return 0
    path = os.path.join(ROOT, README)
    with open(path) as f:
        current = f.read()
    wanted = generate(current)
    if wanted != current:
        with open(path, "w") as f:
            f.write(wanted)
        print(f"rewrote {README}")
    else:
        print(f"{README} is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
