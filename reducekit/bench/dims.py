"""The reductions-over-dims benchmark (`benchmarks/bench.py --dims`): torch.sum(x, dim, dtype=...)
against reducekit.sum(x, dim, dtype=...) (method auto) and against reducekit's full sum of a flat
tensor of the same dtype and byte count, timed in the same run on the same memory (the flat input
is the same buffers seen as 1-D). The cases, the result check, the runner (dims_run), the derived
figures and the target verdicts; its reports are in report.py."""
from __future__ import annotations

import math
import statistics

import torch

import reducekit

from .host import host_run
from .timing import (DTYPES, GRAPH_TIMING, MODE_TITLES, Buffers, _bench_device, _err, _progress, environment,
                     random_input, read_ceiling, time_cpu, time_cuda_eager, time_cuda_graph)

DIMS_DTYPES = ("float32", "bfloat16", "int32")
DIMS_CONTENDERS = ("torch", "reducekit", "full")
DIMS_CALLS = {"torch": "torch.sum(x, dim, dtype=...)", "reducekit": "reducekit.sum(x, dim, dtype=...)",
              "full": "reducekit.sum(flat)"}
# The cases of the dims issue: shape, reduced dim(s), sum dtype (torch.sum's dtype=), and the input
# dtypes a case runs for (absent: every dtype of the run).
DIMS_CASES = (
    {"shape": (4096, 4096), "dim": 1},
    {"shape": (4096, 4096), "dim": 0},
    {"shape": (32, 2**22), "dim": 1},
    {"shape": (2**22, 32), "dim": 0},
    {"shape": (2**20, 64), "dim": 1},
    {"shape": (64, 2**20), "dim": 0},
    {"shape": (64, 256, 1024), "dim": (0, 2)},
    {"shape": (8192, 8192), "dim": -1, "only": ("bfloat16",)},
    {"shape": (8192, 8192), "dim": -1, "sum_dtype": "float32", "only": ("bfloat16",)},
)
DIMS_CPU_MAX_MIB = 64  # CPU runs scale each case's largest dim down to at most this many MiB at 4 bytes/element
DIMS_GRAPH_MAX_MS = 2.0  # a contender slower than this in eager mode is not timed in graph mode (GPU-bound there)
# The targets, checked per row (case, dtype, mode). `key` names the row's figure; `devices` where
# the target applies; `integers`: integer dtypes only (not bool).
DIMS_TARGETS = {
    "vs_full": {"text": "reducekit over dims <= {bound:g}x its full sum of the same bytes", "short": "<= {bound:g}x full sum",
                "key": "ratio_full", "bound": 1.05, "better": "lower", "devices": ("cuda",)},
    "not_slower": {"text": "never slower than torch.sum (torch.sum time / reducekit time >= {bound:g})",
                   "short": "not slower than torch.sum", "key": "speedup", "bound": 1.0, "better": "higher",
                   "devices": ("cuda", "cpu")},
    "int_speedup": {"text": "integer dtypes >= {bound:g}x torch.sum", "short": ">= {bound:g}x torch.sum (integers)",
                    "key": "speedup", "bound": 5.0, "better": "higher", "devices": ("cuda",), "integers": True},
}
DIMS_MODE_TITLES = {"eager": MODE_TITLES["eager"], "graph": MODE_TITLES["graph"]}


def dims_target_text(tid: str, short: bool = False) -> str:
    t = DIMS_TARGETS[tid]
    return t["short" if short else "text"].format(**t)


def _dim_size_label(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n >= 2**16 and n & (n - 1) == 0 else str(n)


def _shape_label(shape) -> str:
    return f"({', '.join(_dim_size_label(int(s)) for s in shape)})"


def dims_case_label(shape, dim, sum_dtype=None) -> str:
    """'(32, 2^22) dim 1', '(64, 256, 1024) dims (0, 2)', '(8192, 8192) dim -1, dtype=float32'."""
    dims = f"dims ({', '.join(map(str, dim))})" if isinstance(dim, (tuple, list)) else f"dim {dim}"
    return f"{_shape_label(shape)} {dims}" + (f", dtype={sum_dtype}" if sum_dtype else "")


def scale_shape(shape, max_elems: int) -> tuple:
    """`shape` with its (first) largest dim divided by the smallest power of two that brings the
    element count to at most max_elems (not below 1): the CPU variant of a GPU case keeps the
    number and length of the other dims."""
    shape = list(shape)
    i = shape.index(max(shape))
    while math.prod(shape) > max_elems and shape[i] > 1:
        shape[i] = max(1, shape[i] // 2)
    return tuple(shape)


def dims_cases(dtypes, max_elems: int | None = None) -> list[dict]:
    """The cases of a run: one per DIMS_CASES entry and dtype (in dtype order), shapes scaled to
    max_elems when given (CPU)."""
    out = []
    for d in dtypes:
        for c in DIMS_CASES:
            if "only" in c and d not in c["only"]:
                continue
            shape = scale_shape(c["shape"], max_elems) if max_elems else tuple(c["shape"])
            label = dims_case_label(shape, c["dim"], c.get("sum_dtype"))
            if shape != tuple(c["shape"]):
                label += f" (scaled from {_shape_label(c['shape'])})"
            out.append({"shape": shape, "issue_shape": tuple(c["shape"]), "dim": c["dim"], "sum_dtype": c.get("sum_dtype"),
                        "dtype": d, "case": label})
    return out


def _reduced_shape(shape, dim) -> list[int]:
    dims = {d % len(shape) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
    return [s for i, s in enumerate(shape) if i not in dims]


def _sum_fns(dim, sum_dtype):
    """(torch.sum over dim, reducekit.sum over dim): each a one-argument callable."""
    dim = tuple(dim) if isinstance(dim, list) else dim
    if sum_dtype is None:
        return (lambda v: torch.sum(v, dim)), (lambda v: reducekit.sum(v, dim=dim))
    dt = DTYPES[sum_dtype]
    return (lambda v: torch.sum(v, dim, dtype=dt)), (lambda v: reducekit.sum(v, dim=dim, dtype=dt))


def dims_check(x: torch.Tensor, dim, sum_dtype=None) -> str:
    """'ok' when reducekit.sum(x, dim, dtype=...) has torch.sum's shape and dtype and its values
    (integers exactly; floats within 2 ulps of the output dtype plus 1e-5, relative to the sum of
    |x| over the same dims), else what differs. A sanity check of what is timed, not a test."""
    tfn, rfn = _sum_fns(dim, sum_dtype)
    try:
        got = rfn(x)
    except Exception as e:  # noqa: BLE001 - reported in the row
        return f"error: {_err(e)}"
    want = tfn(x)
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"mismatch: shape {tuple(got.shape)} {got.dtype}, torch.sum gives {tuple(want.shape)} {want.dtype}"
    if not want.dtype.is_floating_point:
        bad = int((got != want).sum())
        return "ok" if bad == 0 else f"mismatch: {bad} of {want.numel()} values differ"
    d = tuple(dim) if isinstance(dim, (tuple, list)) else dim
    scale = torch.sum(x.abs(), d, dtype=torch.float64)
    tol = (2 * torch.finfo(want.dtype).eps + 1e-5) * scale + torch.finfo(want.dtype).tiny
    diff = (got.double() - want.double()).abs()
    bad = int((~(diff <= tol)).sum())  # NaN counts as bad
    return "ok" if bad == 0 else f"mismatch: {bad} of {want.numel()} values beyond the bound (max |diff| {float(diff.max()):.3g})"


def dims_derive(row: dict, ceiling_gbps: float | None, device_type: str) -> dict:
    """Fills a row's derived figures from its times (torch_us, reducekit_us, full_us; None where
    not measured): GB/s and % of the read ceiling per contender (bytes read / time), speedup
    (torch.sum time / reducekit's), ratio_full (reducekit's time / its same-bytes full sum's), and
    targets {id: True (met) / False (missed) / None (not applicable or not measured)}."""
    for k in DIMS_CONTENDERS:
        t = row.get(f"{k}_us")
        gbps = row["bytes_read"] / (t * 1e-6) / 1e9 if t else None
        row[f"{k}_gbps"] = round(gbps, 2) if gbps is not None else None
        row[f"{k}_pct"] = round(100 * gbps / ceiling_gbps, 1) if gbps is not None and ceiling_gbps else None
    t, r, f = row.get("torch_us"), row.get("reducekit_us"), row.get("full_us")
    row["speedup"] = round(t / r, 3) if t and r else None
    row["ratio_full"] = round(r / f, 3) if r and f else None
    # Noise: the largest relative spread (max - min) / median of a contender's per-round figures.
    spreads = [(max(v) - min(v)) / statistics.median(v) for v in (row.get("samples_us") or {}).values() if len(v) > 1 and min(v) > 0]
    row["spread"] = round(max(spreads), 4) if spreads else None
    integer = not DTYPES[row["dtype"]].is_floating_point and row["dtype"] != "bool"
    targets = {}
    for tid, spec in DIMS_TARGETS.items():
        value = row.get(spec["key"])
        if device_type not in spec["devices"] or (spec.get("integers") and not integer) or value is None:
            targets[tid] = None
        else:
            targets[tid] = bool(value >= spec["bound"] if spec["better"] == "higher" else value <= spec["bound"])
    row["targets"] = targets
    return row


def _within_spread(row: dict, tid: str) -> bool:
    """Whether a missed target's figure is closer to its bound than the row's round-to-round spread."""
    spec, spread = DIMS_TARGETS[tid], row.get("spread")
    return bool(spread) and abs(row[spec["key"]] / spec["bound"] - 1) < spread


def _missed_text(row: dict, tid: str) -> str:
    fig = f"{row[DIMS_TARGETS[tid]['key']]:.3f}x"
    if _within_spread(row, tid):
        fig += f", within the rounds' spread of {100 * row['spread']:.1f}%"
    return fig


def dims_verdict(row: dict) -> str:
    """The targets cell of a row: 'met (k of k)', 'missed: target (figure); ...', '—' (none applies),
    plus a failed result check and contenders not timed."""
    check = row.get("check", "ok")
    parts = [f"**wrong result: {check}**"] if check.startswith("mismatch") else []
    missed, met = [], 0
    for tid, ok in row["targets"].items():
        if ok is False:
            missed.append(f"{dims_target_text(tid, short=True)} ({_missed_text(row, tid)})")
        elif ok:
            met += 1
    if missed:
        parts.append("missed: " + "; ".join(missed))
    elif met:
        parts.append(f"met ({met} of {met})")
    unmeasured = [k for k in DIMS_CONTENDERS if row.get(f"{k}_us") is None]
    if unmeasured:
        parts.append("not timed: " + ", ".join(unmeasured))
    elif check.startswith("error"):
        parts.append(f"result check {check}")
    return "; ".join(parts) or "—"


def dims_target_summary(rows, mode: str) -> list[str]:
    """Per target, over one mode's rows: 'text: k of n met (missed: case dtype, figure; ...)';
    targets that apply to no row are left out."""
    out = []
    sub = [r for r in rows if r["mode"] == mode]
    for tid, spec in DIMS_TARGETS.items():
        judged = [r for r in sub if r["targets"].get(tid) is not None]
        if not judged:
            continue
        missed = [r for r in judged if not r["targets"][tid]]
        line = f"{dims_target_text(tid)}: {len(judged) - len(missed)} of {len(judged)} met"
        if missed:
            line += " (missed: " + "; ".join(f"{r['case']} {r['dtype']}, {_missed_text(r, tid)}" for r in missed) + ")"
        out.append(line)
    wrong = [r for r in sub if r.get("check", "ok").startswith("mismatch")]
    if wrong:
        out.append("wrong results: " + "; ".join(f"{r['case']} {r['dtype']}: {r['check']}" for r in wrong))
    untimed = [r for r in sub if any(r.get(f"{k}_us") is None for k in DIMS_CONTENDERS)]
    if untimed:
        out.append(f"{len(untimed)} of {len(sub)} rows with a contender not timed (see \"Not timed\")")
    return out


# ------------------------------------------------------------------------------------------------
# The runner


class _Views:
    """Other views of a Buffers' memory (time_cuda_eager and time_cuda_graph read only .views)."""

    def __init__(self, views):
        self.views = views
        self.count = len(views)


def _recover(on_gpu: bool):
    if on_gpu:
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001 - a sticky error shows in the next cells' errors
            pass


def _dims_modes(modes) -> list[str]:
    """The modes asked for, checked, eager first (graph mode uses the eager times)."""
    modes = list(dict.fromkeys(modes))
    unknown = [m for m in modes if m not in DIMS_MODE_TITLES]
    if unknown:
        raise ValueError(f"unknown mode(s) {unknown}; dims modes are {list(DIMS_MODE_TITLES)}")
    return [m for m in DIMS_MODE_TITLES if m in modes]


def _dims_env(device: torch.device, rounds: int, budget_s: float, ceiling: dict | None, cpu_max_mib: float,
              graph_max_ms: float) -> tuple[dict, int]:
    """The run's environment and the bytes each case's inputs rotate over (0 on the CPU). GPU: the
    device made current and its read ceiling measured, unless given."""
    env = environment(device)
    env.update(graph_timing=GRAPH_TIMING, rounds=rounds, budget_s=budget_s, benchmark="dims")
    if device.type == "cuda":
        torch.cuda.set_device(device)
        env["ceiling"] = ceiling or read_ceiling(device)
        cold_bytes = int(4 * torch.cuda.get_device_properties(device).L2_cache_size)
        env["cold_l2"] = (f"inputs rotated over >= {cold_bytes / 1e6:.0f} MB (4x L2) and >= 2 buffers per case; "
                          "the flat full-sum input is the same buffers seen as 1-D")
    else:
        cold_bytes = 0
        env["note"] = (f"no CUDA GPU: CPU tensors, shapes scaled to at most {cpu_max_mib:g} MiB of float32 "
                       "(the largest dim divided by a power of two)")
    env["graph_max_ms"] = graph_max_ms
    return env, cold_bytes


def _dims_inputs(case: dict, device: torch.device, cold_bytes: int) -> tuple:
    """(flat, shaped): a case's input buffers seen flat (the full sum's input) and in the case's shape,
    the same memory. GPU: rotated over at least cold_bytes and at least 2 buffers; CPU: one."""
    shape, dtype = case["shape"], DTYPES[case["dtype"]]
    numel = math.prod(shape)
    if device.type == "cuda":
        item = torch.empty((), dtype=dtype).element_size()
        flat = Buffers(numel, dtype, device, max(cold_bytes, 2 * numel * item))
        return flat, _Views([v.view(shape) for v in flat.views])
    flat = _Views([random_input(numel, dtype, "cpu")])
    return flat, _Views([flat.views[0].view(shape)])


def _time_once(fn, bufs, mode: str, on_gpu: bool, budget_s: float) -> float:
    """One figure (us) of fn over bufs: time_cuda_graph's, time_cuda_eager's or (CPU) time_cpu's."""
    if on_gpu and mode == "graph":
        return time_cuda_graph(fn, bufs)
    if on_gpu:
        return time_cuda_eager(fn, bufs, budget_s)[0]
    return time_cpu(fn, bufs.views[0], budget_s)[0]


def _graph_skips(fns: dict, eager_us: dict, graph_max_ms: float) -> dict:
    """{contender: why} for the contenders whose eager time exceeds graph_max_ms: not timed in graph mode."""
    return {k: f"not timed in graph mode: eager {eager_us[k] / 1e3:.1f} ms > {graph_max_ms:g} ms"
            for k in fns if eager_us.get(k, 0) > graph_max_ms * 1e3}


def _time_rounds(fns: dict, inputs: dict, mode: str, rounds: int, budget_s: float, on_gpu: bool,
                 skip: dict) -> tuple[dict, dict]:
    """(samples, errors): `rounds` interleaved rounds of the contenders (torch, reducekit, full, torch,
    ...), budget_s / rounds each. A contender in `skip` is not timed (its reason kept as its error);
    one that raises keeps its error and is not timed again."""
    samples = {k: [] for k in fns}
    errors = dict(skip)
    for _ in range(rounds):
        for k, fn in fns.items():
            if k in errors:
                continue
            try:
                samples[k].append(_time_once(fn, inputs[k], mode, on_gpu, budget_s / rounds))
            except Exception as e:  # noqa: BLE001 - reported in the row
                errors[k] = _err(e)
                _recover(on_gpu)
    return samples, errors


def _medians(samples: dict, errors: dict) -> dict:
    """Each contender's figure: the median over its rounds; None where it raised or was not timed."""
    return {k: statistics.median(s) if s and k not in errors else None for k, s in samples.items()}


def _dims_row(case: dict, mode: str, buffers: int, check: str, us: dict, samples: dict, errors: dict) -> dict:
    """A row of the run, before dims_derive: the case, its sizes, the result check and the times."""
    shape, dim, sd, dname = case["shape"], case["dim"], case["sum_dtype"], case["dtype"]
    dtype = DTYPES[dname]
    numel = math.prod(shape)
    item = torch.empty((), dtype=dtype).element_size()
    out_dtype = DTYPES[sd] if sd else (dtype if dtype.is_floating_point else torch.int64)
    out_numel = math.prod(_reduced_shape(shape, dim))
    row = {"case": case["case"], "shape": list(shape), "issue_shape": list(case["issue_shape"]),
           "dim": list(dim) if isinstance(dim, (tuple, list)) else dim, "sum_dtype": sd, "dtype": dname,
           "out_dtype": str(out_dtype).replace("torch.", ""), "mode": mode, "numel": numel,
           "bytes_read": numel * item, "bytes_written": out_numel * torch.empty((), dtype=out_dtype).element_size(),
           "buffers": buffers, "check": check}
    for k, t in us.items():
        row[f"{k}_us"] = round(t, 3) if t is not None else None
    row["samples_us"] = {k: [round(v, 3) for v in s] for k, s in samples.items() if k not in errors}
    row["errors"] = errors
    return row


def _dims_case(case: dict, modes: list[str], device: torch.device, cold_bytes: int, budget_s: float, rounds: int,
               graph_max_ms: float, ceiling_gbps: float | None, bar) -> list[dict]:
    """One case's rows, one per mode: its inputs made, reducekit's result checked, the three contenders
    timed (in graph mode, not those slower than graph_max_ms in eager mode), the figures derived."""
    on_gpu = device.type == "cuda"
    flat, shaped = _dims_inputs(case, device, cold_bytes)
    tfn, rfn = _sum_fns(case["dim"], case["sum_dtype"])
    fns = {"torch": tfn, "reducekit": rfn, "full": reducekit.sum}
    inputs = {"torch": shaped, "reducekit": shaped, "full": flat}
    check = dims_check(shaped.views[0], case["dim"], case["sum_dtype"])
    _recover(on_gpu)
    rows, eager_us = [], {}
    for mode in modes:
        if bar:
            bar.set_description(f"{case['dtype']} {case['case']} {mode}")
            bar.update()
        skip = _graph_skips(fns, eager_us, graph_max_ms) if mode == "graph" else {}
        samples, errors = _time_rounds(fns, inputs, mode, rounds, budget_s, on_gpu, skip)
        us = _medians(samples, errors)
        if mode == "eager":
            eager_us = {k: t for k, t in us.items() if t is not None}
        rows.append(dims_derive(_dims_row(case, mode, flat.count, check, us, samples, errors), ceiling_gbps, device.type))
    del flat, shaped, inputs
    if on_gpu:
        torch.cuda.empty_cache()
    return rows


def dims_run(dtypes=None, modes=("eager", "graph"), device=None, budget_s: float = 0.25, rounds: int = 3,
             ceiling: dict | None = None, host: bool = True, cpu_max_mib: float = DIMS_CPU_MAX_MIB,
             graph_max_ms: float = DIMS_GRAPH_MAX_MS, progress: bool = True) -> dict:
    """Times every dims case (dims_cases) for each dtype and mode: torch.sum(x, dim, dtype=...),
    reducekit.sum(x, dim, dtype=...) (auto) and reducekit.sum(flat), flat being the same buffers
    seen as 1-D (same dtype, same bytes). `rounds` interleaved rounds (torch, reducekit, full, torch,
    ...), each contender's figure the median over rounds of time_cuda_eager's (budget_s / rounds
    each) or time_cuda_graph's medians. GPU: cold L2, inputs rotated over at least 4x the L2 and
    at least 2 buffers; graph mode interleaved with a foreign kernel; a contender whose eager time
    exceeds graph_max_ms is not timed in graph mode. CPU: shapes scaled to cpu_max_mib (float32
    bytes), eager only, time_cpu. Returns {"env", "rows", "host"}; a contender that raises has no
    time and its error in row["errors"]."""
    modes = _dims_modes(modes)
    device = _bench_device(device)
    env, cold_bytes = _dims_env(device, rounds, budget_s, ceiling, cpu_max_mib, graph_max_ms)
    dtypes = list(dtypes) if dtypes else list(DIMS_DTYPES)
    if device.type == "cuda":
        cases = dims_cases(dtypes)
    else:
        modes = ["eager"]
        cases = dims_cases(dtypes, int(cpu_max_mib * 2**20 // 4))
    ceiling_gbps = env.get("ceiling", {}).get("gbps")
    bar = _progress(len(cases) * len(modes), progress)
    rows = []
    for case in cases:
        rows += _dims_case(case, modes, device, cold_bytes, budget_s, rounds, graph_max_ms, ceiling_gbps, bar)
    if bar:
        bar.close()
    run = {"env": env, "rows": rows}
    if host:
        try:
            run["host"] = host_run(device)
        except Exception as e:  # noqa: BLE001 - the timings above are kept
            run["host"] = {"error": _err(e)}
    return run
