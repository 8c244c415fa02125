"""Results of the sum and dims benchmarks: markdown tables, terminal summaries, loading, merging and
writing result files (results.md/.json/.csv, results_dims.json/.md, plots), and the formatting they
share (_fmt_time, _n_label, legends)."""
from __future__ import annotations

import json
import math
import os
import sys

from .dims import (DIMS_CALLS, DIMS_CONTENDERS, DIMS_MODE_TITLES, DIMS_TARGETS, dims_target_summary, dims_target_text,
                   dims_verdict)
from .host import HOST_CALLS
from .sum import CUB, TORCH
from .timing import GRAPH_MAX_N, GRAPH_MODES, MODE_TITLES, MODES

DIMS_FILE = "results_dims"  # results_dims.json, results_dims.md



def _merged(env: dict, label: str) -> str:
    """The sentence of a report merged from several runs with their read ceilings ("" if not merged)."""
    ceilings = [c for c in env.get("ceilings", []) if c]
    if len(ceilings) < 2:
        return ""
    return (f"This report merges {env['merged']}; {label}: " + ", ".join(f"{c['gbps'] / 1e3:.3f} TB/s" for c in ceilings)
            + ". Each row's percent of ceiling uses its own run's ceiling.")

def _fmt_time(us: float) -> str:
    return f"{us:,.1f}" if us < 1e4 else f"{us:,.0f}"


def _n_label(n: int) -> str:
    return f"2^{int(math.log2(n))}" if n & (n - 1) == 0 else f"{n:,}"


# Legends printed under tables that need them (results.md, README via benchmarks/report.py).
MISSING_LEGEND = ("— : not timed (a method slower than the cut-off at a smaller N is not run at larger N; "
                  f"graph modes stop at {_n_label(GRAPH_MAX_N)}; host_final cannot be captured in a graph).")
GRAPH_LEGEND = ("Graph modes. *Interleaved* (`graph`): a small foreign kernel (an in-place add on a separate tiny "
                "tensor, the same for every method) sits between consecutive timed calls in the captured graph, and "
                "the replay time of a graph of those foreign kernels alone is subtracted; no call can overlap the "
                "previous one, as in a model that does work between two sums. *Chained* (`graph_chained`): the calls "
                "back to back, which lets kernels launched with programmatic dependent launch (ours, CUB's) overlap "
                "each call with the next; shown only where labelled chained.")


# ------------------------------------------------------------------------------------------------
# The whole-tensor sum benchmark (sum.py)


def time_table(rows, dtype: str, mode: str) -> tuple[list[str], bool]:
    """Markdown lines of the time-per-call table (N x method, us) of one dtype and mode, and whether
    some cell shows "—" (not timed). Empty when the run has no such rows."""
    sub = [r for r in rows if r["dtype"] == dtype and r["mode"] == mode]
    if not sub:
        return [], False
    methods = list(dict.fromkeys(r["method"] for r in sub))
    cell = {(r["n"], r["method"]): r for r in sub}
    out = ["| N | " + " | ".join(methods) + " |", "|---:|" + "---:|" * len(methods)]
    missing = False
    for n in sorted(set(r["n"] for r in sub)):
        missing = missing or any((n, m) not in cell for m in methods)
        out.append(f"| {_n_label(n)} | " + " | ".join(_fmt_time(cell[(n, m)]["time_us"]) if (n, m) in cell else "—" for m in methods) + " |")
    return out, missing


def load_run(path: str) -> dict:
    """A results.json, its rows labelled by today's modes: runs from before issue 8 (no
    env["graph_timing"]) timed mode "graph" back to back, so their graph rows become
    "graph_chained" and env["graph_timing"] says "chained"."""
    with open(path) as f:
        return relabel_chained(json.load(f))


def relabel_chained(run: dict) -> dict:
    """See load_run(); a run that has env["graph_timing"] is returned as it is."""
    if "graph_timing" in run["env"]:
        return run
    env = dict(run["env"], graph_timing="chained")
    rows = [dict(r, mode="graph_chained") if r["mode"] == "graph" else r for r in run["rows"]]
    return dict(run, env=env, rows=rows)


def markdown(run: dict) -> str:
    env, rows = run["env"], run["rows"]
    out = ["# reducekit benchmark", ""]
    keys = ["gpu", "sms", "l2_mb", "cc", "driver", "cuda", "torch", "reducekit", "python", "date", "cpu", "threads"]
    out.append("| " + " | ".join(k for k in keys if k in env) + " |")
    out.append("|" + "---|" * len([k for k in keys if k in env]))
    out.append("| " + " | ".join(str(env[k]) for k in keys if k in env) + " |")
    out.append("")
    if "ceiling" in env:
        c = env["ceiling"]
        out.append(f"Read ceiling, measured in this run: **{c['gbps'] / 1e3:.3f} TB/s** (pure read probe over "
                   f"{c['bytes'] / 2**30:.1f} GiB, block {c['block']}, unroll {c['unroll']}, {c['waves']} wave(s)). "
                   f"Cold L2: {env['cold_l2']}. Times are medians of batch averages, CUDA events.")
    merged = _merged(env, "read ceilings measured in each run")
    if merged:
        out.append(merged)
    if "note" in env:
        out.append(f"**{env['note']}.**")
    if env.get("graph_timing") == "chained":
        out.append("**This run predates issue 8: its graph-mode figures were timed chained (back-to-back calls).**")
    out.append("")
    dtypes = list(dict.fromkeys(r["dtype"] for r in rows))
    missing = False  # some time cell shows "—"
    for mode in MODES:
        for d in dtypes:
            table, dashes = time_table(rows, d, mode)
            if not table:
                continue
            missing = missing or dashes
            sub = [r for r in rows if r["dtype"] == d and r["mode"] == mode]
            methods = list(dict.fromkeys(r["method"] for r in sub))
            sizes = sorted(set(r["n"] for r in sub))
            cell = {(r["n"], r["method"]): r for r in sub}
            out += [f"### {d}: time per call (us), {MODE_TITLES[mode]}", ""] + table + [""]
            out.append(f"### {d}: speedup over torch.sum ({mode}); GB/s and % of read ceiling for auto")
            out.append("")
            out.append("| N | " + " | ".join(methods) + " | auto GB/s | auto % ceiling |")
            out.append("|---:|" + "---:|" * (len(methods) + 2))
            for n in sizes:
                a = cell.get((n, "auto"))
                tail = f" | {a['gbps']:,.0f} | {a['pct_ceiling'] if a and a['pct_ceiling'] is not None else '—'}" if a else " | — | —"
                out.append(f"| {_n_label(n)} | " + " | ".join(f"{cell[(n, m)]['speedup']:.2f}" if (n, m) in cell and cell[(n, m)]["speedup"] else "—" for m in methods) + tail + " |")
            out.append("")
    if any(r["mode"] in GRAPH_MODES for r in rows):
        out.append(GRAPH_LEGEND)
        out.append("")
    if missing:
        out.append(MISSING_LEGEND)
    return "\n".join(out) + "\n"


def write_results(run: dict, out_dir: str, plots: bool = True) -> list[str]:
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    md = os.path.join(out_dir, "results.md")
    with open(md, "w") as f:
        f.write(markdown(run))
    paths.append(md)
    js = os.path.join(out_dir, "results.json")
    with open(js, "w") as f:
        json.dump(run, f, indent=1)
    paths.append(js)
    csv = os.path.join(out_dir, "results.csv")
    cols = ["dtype", "n", "log2n", "method", "mode", "time_us", "gbps", "pct_ceiling", "speedup", "buffers", "calls"]
    with open(csv, "w") as f:
        f.write(",".join(cols) + "\n")
        for r in run["rows"]:
            f.write(",".join("" if r.get(c) is None else str(r[c]) for c in cols) + "\n")
    paths.append(csv)
    if plots:
        paths += _plots("save_plots", run, out_dir)
    return paths


def _plots(saver: str, run: dict, out_dir: str) -> list[str]:
    """reducekit.plotting.<saver>(run, out_dir), or nothing (with a note) without matplotlib."""
    from .. import plotting

    try:
        return getattr(plotting, saver)(run, out_dir)
    except ImportError as e:
        print(f"plots skipped: {e}", file=sys.stderr)
        return []


def summary(run: dict) -> str:
    """A short table for the terminal: auto, torch.sum and CUB per dtype and size ("-": not timed)."""
    rows = run["rows"]
    idx = {(r["dtype"], r["n"], r["mode"], r["method"]): r for r in rows}

    def us(r):
        return f"{r['time_us']:9.1f}us" if r else f"{'-':>11}"

    lines = [f"{'dtype':9} {'N':>6} {'mode':13} {'torch.sum':>11} {'cub':>11} {'auto':>11} {'auto/torch':>10} {'auto %ceil':>10}"]
    for r in rows:
        if r["method"] != "auto":
            continue
        key = (r["dtype"], r["n"], r["mode"])
        t, c = idx.get(key + (TORCH,)), idx.get(key + (CUB,))
        ratio = f"{r['time_us'] / t['time_us']:10.3f}" if t else f"{'-':>10}"
        pct = f"{r['pct_ceiling']:10.1f}" if r["pct_ceiling"] is not None else f"{'-':>10}"
        lines.append(f"{r['dtype']:9} {_n_label(r['n']):>6} {r['mode']:13} {us(t)} {us(c)} {us(r)} {ratio} {pct}")
    return "\n".join(lines)


def merge_runs(runs: list[dict]) -> dict:
    """One report from several sweeps (for example dtypes split over two GPU calls). Each row keeps
    the percent-of-ceiling of its own run; env["ceilings"] lists every run's ceiling. Runs from
    before issue 8 have their graph rows relabelled "graph_chained" first (see load_run)."""
    runs = [relabel_chained(r) for r in runs]
    env = dict(runs[0]["env"])
    if len({r["env"]["graph_timing"] for r in runs}) > 1:
        env["graph_timing"] = "mixed"  # each row's mode says how it was timed
    env["ceilings"] = [r["env"].get("ceiling") for r in runs]
    if len(runs) > 1:
        env["merged"] = f"{len(runs)} runs: " + "; ".join(
            f"{', '.join(dict.fromkeys(x['dtype'] for x in r['rows']))} at {r['env']['date']}" for r in runs)
    return {"env": env, "rows": [row for r in runs for row in r["rows"]]}


# ------------------------------------------------------------------------------------------------
# Reductions over dims (dims.py)


def merge_dims_runs(runs: list[dict]) -> dict:
    """One dims report from several runs (say dtypes split over two GPU calls): rows keep their own
    run's percent of ceiling and verdicts; env["ceilings"] lists every run's ceiling; the host
    figures are the last run's that has them."""
    env = dict(runs[0]["env"])
    env["ceilings"] = [r["env"].get("ceiling") for r in runs]
    if len(runs) > 1:
        env["merged"] = f"{len(runs)} runs: " + "; ".join(
            f"{', '.join(dict.fromkeys(x['dtype'] for x in r['rows']))} at {r['env']['date']}" for r in runs)
    out = {"env": env, "rows": [row for r in runs for row in r["rows"]]}
    hosts = [r["host"] for r in runs if r.get("host")]
    if hosts:
        out["host"] = hosts[-1]
    return out


def _fmt_x(v) -> str:
    return f"{v:.2f}" if v is not None else "—"


def _fmt_pct(v) -> str:
    return f"{v:.1f}" if v is not None else "—"


def dims_table(rows, mode: str) -> list[str]:
    """Markdown lines of one mode's table: per case and dtype, the three times (us), % of the read
    ceiling (GB/s where no ceiling was measured: CPU), speedup over torch.sum, ratio to the
    same-bytes full sum, and the targets. Empty without rows of that mode."""
    sub = [r for r in rows if r["mode"] == mode]
    if not sub:
        return []
    pct = any(r.get("reducekit_pct") is not None or r.get("torch_pct") is not None for r in sub)
    unit, fmt, suffix = ("% of ceiling", _fmt_pct, "pct") if pct else ("GB/s", lambda v: f"{v:,.1f}" if v is not None else "—", "gbps")
    out = [f"| case | dtype | torch.sum us | reducekit us | full sum us | torch.sum {unit} | reducekit {unit} "
           f"| speedup vs torch.sum | reducekit / full sum | targets |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in sub:
        times = " | ".join(_fmt_time(r[f"{k}_us"]) if r.get(f"{k}_us") is not None else "—" for k in DIMS_CONTENDERS)
        out.append(f"| {r['case']} | {r['dtype']} | {times} | {fmt(r.get(f'torch_{suffix}'))} | {fmt(r.get(f'reducekit_{suffix}'))} "
                   f"| {_fmt_x(r.get('speedup'))} | {_fmt_x(r.get('ratio_full'))} | {dims_verdict(r)} |")
    return out


def host_lines(host: dict | None) -> list[str]:
    """Markdown lines of the host-time table (dims_run's run["host"])."""
    if not host:
        return []
    if "error" in host:
        return [f"Host time not measured: {host['error']}"]
    where = "GPU" if host["device"].startswith("cuda") else "CPU"
    out = [f"Host time of an eager call, {host['n']} {host['dtype']} elements ({host['device']}): median over "
           f"{host['samples']} samples of {host['calls']} back-to-back calls, wall time per call"
           + (" (the launch queue holds them all: the GPU is not the bottleneck)." if where == "GPU" else "."),
           "", "| call | us per call | minus the torch.sum call's |", "|---|---:|---:|"]
    for k in HOST_CALLS:
        if k in host["us"]:
            ex = host["excess_us"].get(k)
            out.append(f"| `{k}` | {host['us'][k]:.2f} | {f'{ex:+.2f}' if ex is not None else '—'} |")
        elif k in host.get("errors", {}):
            out.append(f"| `{k}` | error: {host['errors'][k]} | — |")
    return out


def _errors_lines(rows) -> list[str]:
    """'Not timed' list: each distinct (call, error) once, with the rows it hit."""
    by_error: dict[tuple, list] = {}
    for r in rows:
        for k, e in r.get("errors", {}).items():
            by_error.setdefault((k, e), []).append(f"{r['case']} {r['dtype']} {r['mode']}")
    if not by_error:
        return []
    out = ["Not timed:", ""]
    for (k, e), where in by_error.items():
        out.append(f"- `{DIMS_CALLS[k]}`, {len(where)} row(s) ({'; '.join(where[:3])}{'; ...' if len(where) > 3 else ''}): {e}")
    return out + [""]


def _ceiling_line(env: dict) -> str | None:
    c = env.get("ceiling")
    if not c:
        return None
    if c.get("given"):
        return f"Read ceiling: **{c['gbps'] / 1e3:.3f} TB/s**, given on the command line (not measured in this run)."
    return (f"Read ceiling, measured in this run: **{c['gbps'] / 1e3:.3f} TB/s** (pure read probe over "
            f"{c['bytes'] / 2**30:.1f} GiB, block {c['block']}, unroll {c['unroll']}, {c['waves']} wave(s)).")


DIMS_METHOD = ("Per case and dtype, three contenders timed in the same run on the same memory: "
               "`torch.sum(x, dim, dtype=...)`, `reducekit.sum(x, dim, dtype=...)` (method auto), and "
               "`reducekit.sum(flat)`, the full sum of the same buffers seen as one flat contiguous tensor "
               "(same dtype, same bytes). Rounds interleave the three; each figure is the median over rounds of the "
               "timing functions' medians (CUDA events over batches, or interleaved graph replays). % of ceiling: "
               "bytes read (the input once) / time / read ceiling. Speedup: torch.sum's time / reducekit's. "
               "reducekit / full sum: reducekit's time over dims / its full sum's time on the same bytes.")


def dims_markdown(run: dict) -> str:
    env, rows = run["env"], run["rows"]
    out = ["# reducekit benchmark: reductions over dims", ""]
    keys = ["gpu", "sms", "l2_mb", "cc", "driver", "cuda", "torch", "reducekit", "python", "date", "cpu", "threads"]
    shown = [k for k in keys if k in env]
    out += ["| " + " | ".join(shown) + " |", "|" + "---|" * len(shown), "| " + " | ".join(str(env[k]) for k in shown) + " |", ""]
    c = _ceiling_line(env)
    if c:
        out.append(c + (f" Cold L2: {env['cold_l2']}." if "cold_l2" in env else ""))
    merged = _merged(env, "read ceilings of each run")
    if merged:
        out.append(merged)
    if "note" in env:
        out.append(f"**{env['note']}.**")
    out += ["", DIMS_METHOD, "", "Targets, per row:", ""]
    out += [f"- {dims_target_text(t)} ({', '.join(s['devices'])})" for t, s in DIMS_TARGETS.items()] + [""]
    for mode in DIMS_MODE_TITLES:
        table = dims_table(rows, mode)
        if not table:
            continue
        out += [f"## {DIMS_MODE_TITLES[mode]}", ""] + table + [""]
        summary = dims_target_summary(rows, mode)
        if summary:
            out += [f"Targets ({mode}):", ""] + [f"- {s}" for s in summary] + [""]
    if any(r["mode"] == "graph" for r in rows):
        out += [GRAPH_LEGEND, ""]
    out += _errors_lines(rows)
    h = host_lines(run.get("host"))
    if h:
        out += ["## Host time", ""] + h + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def dims_summary(run: dict) -> str:
    """A short table for the terminal."""
    w = max([len(r["case"]) for r in run["rows"]] + [4])
    lines = [f"{'case':{w}} {'dtype':9} {'mode':6} {'torch':>10} {'reducekit':>10} {'full':>10} {'%ceil':>6} "
             f"{'speedup':>8} {'/full':>6}  targets"]

    def us(v):
        return f"{v:10.1f}" if v is not None else f"{'-':>10}"

    for r in run["rows"]:
        pct = r.get("reducekit_pct")
        lines.append(f"{r['case']:{w}} {r['dtype']:9} {r['mode']:6} {us(r['torch_us'])} {us(r['reducekit_us'])} {us(r['full_us'])} "
                     f"{pct if pct is not None else '-':>6} {_fmt_x(r['speedup']):>8} {_fmt_x(r['ratio_full']):>6}  "
                     f"{dims_verdict(r).replace('**', '')}")
    host = run.get("host") or {}
    for k, v in host.get("us", {}).items():
        ex = host["excess_us"].get(k)
        lines.append(f"host {k:26} {v:8.2f} us" + (f" ({ex:+.2f} us vs torch.sum)" if ex is not None else ""))
    if host.get("error"):
        lines.append(f"host: {host['error']}")
    return "\n".join(lines)


def write_dims_results(run: dict, out_dir: str, plots: bool = True) -> list[str]:
    """results_dims.json (every figure and the environment), results_dims.md and, with plots,
    dims_pct_ceiling_<mode>.png (dims_gbps_<mode>.png without a ceiling)."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    js = os.path.join(out_dir, DIMS_FILE + ".json")
    with open(js, "w") as f:
        json.dump(run, f, indent=1)
    paths.append(js)
    md = os.path.join(out_dir, DIMS_FILE + ".md")
    with open(md, "w") as f:
        f.write(dims_markdown(run))
    paths.append(md)
    if plots:
        paths += _plots("save_dims_plots", run, out_dir)
    return paths
