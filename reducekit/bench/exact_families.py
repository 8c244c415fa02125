"""method="exact" on every data family of the exact issue (issue 22), against auto and CUB's
reproducible sum (RFA) measured in the same run, for float32, bfloat16, float16 and float64 at
2^24, 2^26 and 2^28 values; and exact over dims (rows, columns) against auto.

    bash benchmarks/rfa/build.sh            # CUB's RFA (CCCL main), optional: without it, no RFA column
    python benchmarks/bench_exact_families.py --out benchmarks/results/h100

writes results_exact_families.json (every figure) and .md (tables, target verdicts and the
decision of the issue's item 4). Method as reducekit/bench/timing.py: inputs rotated over more
than 4x the L2 (copies of one family's data), warm-up, CUDA events, medians; graph = interleaved
CUDA-graph replay (GPU time per call), eager = calls back to back as a user makes them.

Families (generated on the GPU, seeded):
  normal     randn + 1
  gradient   |x| log-uniform in [1e-8, 1e3], random signs
  wide       magnitudes over the dtype's whole exponent range, subnormals included, both signs
  cancel     +-1e30 pairs (float16: +-3e4) around small values, shuffled
  equal      one value (0.1) repeated
  int2e20    integers in [-1000, 1000] times 2^20 (float16: times 2^-4)
  nan_spread the binned path's worst case: normal data with a NaN every 4096 values, so that every
             block holding one reads its values a second time (the path's one data-dependent cost)
"""
from __future__ import annotations

import ctypes
import math
import os

import torch

import reducekit

from .exact import _n, target_lines, write_files
from .timing import Rotation, environment, read_ceiling, time_cuda_eager, time_cuda_graph

FILE = "results_exact_families"
SCRIPT = "bench_exact_families"
DTYPES = ("float32", "bfloat16", "float16", "float64")
SIZES = (2**24, 2**26, 2**28)
FAMILIES = ("normal", "gradient", "wide", "cancel", "equal", "int2e20", "nan_spread")
SMALL_SIZES = (2**10, 2**12, 2**14, 2**16, 2**18, 2**20)
# Rows, then columns (read in place by exact's columns paths): wide, 32 and 3 kept columns.
DIMS_SHAPES = (((16384, 4096), 1), ((4096, 16384), 1), ((64, 2**20), 1), ((16384, 4096), 0), ((2**19, 32), 0), ((5592405, 3), 0))
DIMS_DTYPES = ("float32", "bfloat16", "float16")
DIMS_FAMILIES = ("gradient", "wide")
RFA_CODES = {"float32": 0, "float64": 1, "bfloat16": 2, "float16": 3}
RFA_LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks", "rfa", "librk_rfa.so")


def family_data(family: str, n: int, dtype: torch.dtype, device, seed: int = 22) -> torch.Tensor:
    """n values of one family (see the module docstring), on device."""
    g = torch.Generator(device=device).manual_seed(seed)
    f64 = dict(device=device, dtype=torch.float64)
    fi = torch.finfo(dtype)
    if family in ("normal", "nan_spread"):
        x = torch.randn(n, generator=g, **f64) + 1
        if family == "nan_spread":
            x[2047::4096] = math.nan
    elif family == "gradient":
        mag = torch.pow(10.0, torch.rand(n, generator=g, **f64) * 11 - 8)
        x = torch.where(torch.rand(n, generator=g, device=device) < 0.5, -mag, mag)
        if dtype == torch.float16:
            x = x / 64  # the float16 sum stays finite
    elif family == "wide":
        lo = math.log2(fi.smallest_normal) - {torch.float16: 10, torch.bfloat16: 7, torch.float32: 23, torch.float64: 52}[dtype]
        hi = math.log2(fi.max) - 4 - math.ceil(math.log2(n + 1))
        e = torch.randint(int(lo), int(hi), (n,), generator=g, device=device).double()
        x = torch.randn(n, generator=g, **f64) * torch.pow(2.0, e)
    elif family == "cancel":
        big = 3e4 if dtype == torch.float16 else 1e30
        k = n // 3
        b = (torch.rand(k, generator=g, **f64) + 0.5) * big
        x = torch.cat([b, -b, torch.randn(n - 2 * k, generator=g, **f64)])
        x = x[torch.randperm(n, generator=g, device=device)]
    elif family == "equal":
        x = torch.full((n,), 0.1, **f64)
    elif family == "int2e20":
        x = torch.randint(-1000, 1001, (n,), generator=g, device=device).double() * (2.0**-4 if dtype == torch.float16 else 2.0**20)
    else:
        raise ValueError(f"family: no such family {family!r}; one of {FAMILIES}")
    return x.to(dtype)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal bits, any NaN equal to any NaN."""
    if a.isnan().item() or b.isnan().item():
        return bool(a.isnan().item() and b.isnan().item())
    ints = {2: torch.int16, 4: torch.int32, 8: torch.int64}
    return a.dtype == b.dtype and a.reshape(1).view(ints[a.element_size()]).item() == b.reshape(1).view(ints[b.element_size()]).item()


class Rfa:
    """CUB's RFA through benchmarks/rfa/librk_rfa.so (None where it is not built)."""

    def __init__(self, path: str = RFA_LIB):
        self.lib = ctypes.CDLL(path)
        self.lib.rk_rfa_sum.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong, ctypes.c_int, ctypes.c_void_p]
        self.lib.rk_rfa_sum.restype = ctypes.c_int
        self.cub_version = int(self.lib.rk_rfa_cub_version())
        self.outs = {}

    def fn(self, dtype: str):
        code = RFA_CODES[dtype]

        def call(x: torch.Tensor) -> torch.Tensor:
            out = self.outs.get((x.device, dtype))
            if out is None:
                out = self.outs[(x.device, dtype)] = torch.empty((), device=x.device, dtype=x.dtype if code < 2 else torch.float32)
            e = self.lib.rk_rfa_sum(x.data_ptr(), out.data_ptr(), x.numel(), code, torch.cuda.current_stream(x.device).cuda_stream)
            if e != 0:
                raise RuntimeError(f"CUB RFA failed: cudaError {e}")
            return out
        return call


def load_rfa():
    try:
        return Rfa()
    except OSError:
        return None


def run(device=None, budget_s: float = 0.25, quick: bool = False, dtypes=None, sizes=None, dims_only: bool = False) -> dict:
    device = torch.device(device or "cuda")
    env = environment(device)
    env["read_ceiling"] = read_ceiling(device)
    rfa = load_rfa()
    env["rfa"] = {"cub_version": rfa.cub_version} if rfa else None
    cold = 4 * torch.cuda.get_device_properties(device).L2_cache_size
    sizes = sizes or ((2**20, 2**22) if quick else SIZES)
    dtypes = dtypes or DTYPES
    # Warm-up of every contender (lazy initialisation, CUB's memory pool, clocks): the first row's
    # eager figures were 3x the others without it.
    warm = Rotation(family_data("normal", sizes[0], torch.float32, device), cold)
    for fn in [lambda v: reducekit.sum(v, method="exact"), reducekit.sum] + ([rfa.fn("float32")] if rfa else []):
        time_cuda_eager(fn, warm, budget_s)
    del warm
    rows = []
    for dt in [] if dims_only else dtypes:
        dtype = getattr(torch, dt)
        for n in sizes:
            for family in FAMILIES:
                x = family_data(family, n, dtype, device)
                got = reducekit.sum(x, method="exact").cpu()
                same = same_bits(got, reducekit.sum(x.cpu(), method="exact"))
                rot = Rotation(x, cold)
                del x
                fns = {"exact": lambda v: reducekit.sum(v, method="exact"), "auto": lambda v: reducekit.sum(v)}
                if rfa:
                    fns["rfa"] = rfa.fn(dt)
                row = {"dtype": dt, "n": n, "data": family, "cpu_bits_equal": bool(same), "graph_us": {}, "eager_us": {}}
                for name, fn in fns.items():
                    row["graph_us"][name] = time_cuda_graph(fn, rot)
                    row["eager_us"][name] = time_cuda_eager(fn, rot, budget_s)[0]
                if rfa and family == "normal":  # a check that RFA ran: it is not exact, but close
                    r, e = float(fns["rfa"](rot.views[0])), float(got)
                    row["rfa_rel_diff"] = abs(r - e) / max(abs(e), 1e-30)
                rows.append(row)
                print(f"{dt:9s} 2^{int(math.log2(n))} {family:10s} exact {row['graph_us']['exact']:8.1f} auto {row['graph_us']['auto']:8.1f} "
                      f"rfa {row['graph_us'].get('rfa', float('nan')):8.1f} us (graph); eager exact/auto "
                      f"{row['eager_us']['exact'] / row['eager_us']['auto']:.2f}; CPU bits {'equal' if same else 'DIFFER'}", flush=True)
                del rot
                torch.cuda.empty_cache()
    small = []
    for dt in [] if dims_only else dtypes:
        dtype = getattr(torch, dt)
        for n in SMALL_SIZES[:2] if quick else SMALL_SIZES:
            rot = Rotation(family_data("normal", n, dtype, device), min(cold, 64 * n * dtype.itemsize))
            small.append({"dtype": dt, "n": n, "eager_us": {
                name: time_cuda_eager(fn, rot, budget_s)[0] for name, fn in
                (("exact", lambda v: reducekit.sum(v, method="exact")), ("torch.sum", torch.sum), ("auto", reducekit.sum))}})
    dims = []
    for dt in [d for d in DIMS_DTYPES if d in dtypes]:
        dtype = getattr(torch, dt)
        for shape, dim in DIMS_SHAPES:
            if quick:
                shape = (max(1, shape[0] // 16), shape[1])
            for family in DIMS_FAMILIES:
                rot = Rotation(family_data(family, math.prod(shape), dtype, device).view(shape), cold)
                d = {"dtype": dt, "shape": list(shape), "dim": dim, "data": family, "graph_us": {}, "eager_us": {}}
                for name, fn in (("exact", lambda v: reducekit.sum(v, dim, method="exact")), ("auto", lambda v: reducekit.sum(v, dim))):
                    d["graph_us"][name] = time_cuda_graph(fn, rot)
                    d["eager_us"][name] = time_cuda_eager(fn, rot, budget_s)[0]
                dims.append(d)
                print(f"{dt:9s} {str(tuple(shape)):16s} dim {dim} {family:9s} exact {d['graph_us']['exact']:8.1f} auto "
                      f"{d['graph_us']['auto']:8.1f} us (graph), eager {d['eager_us']['exact']:8.1f} / {d['eager_us']['auto']:8.1f}", flush=True)
                del rot
    return {"env": env, "rows": rows, "small": small, "dims": dims}


def _limit(n: int) -> float:
    return 1.25 if n < 2**26 else 1.10


def targets(run: dict) -> list[dict]:
    """Each target of the issue: value, limit, met."""
    out = []
    for r in run["rows"]:
        for mode in ("graph", "eager"):
            t = r[f"{mode}_us"]
            out.append({"target": f"exact / auto ({mode})", "dtype": r["dtype"], "n": r["n"], "data": r["data"],
                        "value": t["exact"] / t["auto"], "limit": _limit(r["n"]), "met": t["exact"] / t["auto"] <= _limit(r["n"])})
            if "rfa" in t:
                out.append({"target": f"exact / CUB RFA ({mode})", "dtype": r["dtype"], "n": r["n"], "data": r["data"],
                            "value": t["exact"] / t["rfa"], "limit": 1.0, "met": t["exact"] < t["rfa"]})
        out.append({"target": "CUDA bits = CPU bits", "dtype": r["dtype"], "n": r["n"], "data": r["data"],
                    "value": float(r["cpu_bits_equal"]), "limit": 1.0, "met": r["cpu_bits_equal"]})
    for s in run["small"]:
        e = s["eager_us"]
        out.append({"target": "exact / torch.sum (eager, small)", "dtype": s["dtype"], "n": s["n"], "data": "normal",
                    "value": e["exact"] / e["torch.sum"], "limit": 1.0, "met": e["exact"] <= e["torch.sum"]})
    for d in run["dims"]:
        for mode in ("graph", "eager"):
            g = d.get(f"{mode}_us")
            if not g:  # results of before session 42: graph only
                continue
            out.append({"target": f"exact / auto over dim {d['dim']} of {tuple(d['shape'])} ({mode})", "dtype": d["dtype"],
                        "n": math.prod(d["shape"]), "data": d.get("data", "gradient"), "value": g["exact"] / g["auto"], "limit": 1.15,
                        "met": g["exact"] / g["auto"] <= 1.15})
    return out


def decision(run: dict) -> dict:
    """The issue's item 4: make auto's float sums correctly rounded only if float32 exact costs at
    most 3% more than auto at every size from 2^20 up, on every family (finite families: a sum
    with a NaN is NaN either way)."""
    worst = None
    for r in run["rows"]:
        if r["dtype"] != "float32" or r["data"] == "nan_spread":
            continue
        for mode in ("graph", "eager"):
            v = r[f"{mode}_us"]["exact"] / r[f"{mode}_us"]["auto"]
            if worst is None or v > worst["ratio"]:
                worst = {"ratio": v, "n": r["n"], "data": r["data"], "mode": mode}
    return {"worst": worst, "switch_auto": worst is not None and worst["ratio"] <= 1.03}


def markdown(run: dict) -> str:
    env = run["env"]
    ceiling = env["read_ceiling"]["gbps"]
    rfa = env.get("rfa")
    lines = [f"# method='exact' by data family on {env.get('gpu', '?')} ({env.get('date', '?')}, torch {env.get('torch', '?')})", "",
             f"Read ceiling measured in this run: {ceiling / 1e3:.3f} TB/s. Times in us, medians; graph = interleaved CUDA-graph "
             "replay (GPU time), eager = back-to-back calls. % = exact's share of the read ceiling (graph). "
             + (f"RFA = CUB's reproducible sum (gpu_to_gpu determinism, CUB {rfa['cub_version']}, CCCL main; 16-bit input "
                "widened to float32 on the fly), timed in the same process." if rfa else "RFA: not built in this run (no column)."),
             "", "| dtype | N | data | exact | auto | RFA | exact / auto | exact / RFA | exact % | eager: exact | auto | RFA | exact / auto | CPU bits |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in run["rows"]:
        g, e = r["graph_us"], r["eager_us"]
        nbytes = r["n"] * torch.empty((), dtype=getattr(torch, r["dtype"])).element_size()
        pct = nbytes / (g["exact"] * 1e-6) / 1e9 / ceiling * 100
        rg, re_ = g.get("rfa"), e.get("rfa")
        rfa_g = f"{rg:.1f}" if rg else "—"
        ratio_rfa = f"{g['exact'] / rg:.2f}" if rg else "—"
        rfa_e = f"{re_:.1f}" if re_ else "—"
        lines.append(f"| {r['dtype']} | {_n(r['n'])} | {r['data']} | {g['exact']:.1f} | {g['auto']:.1f} | {rfa_g} | "
                     f"{g['exact'] / g['auto']:.2f} | {ratio_rfa} | {pct:.0f}% | {e['exact']:.1f} | {e['auto']:.1f} | {rfa_e} | "
                     f"{e['exact'] / e['auto']:.2f} | {'equal' if r['cpu_bits_equal'] else 'DIFFER'} |")
    lines += ["", "Small sizes, eager (us per call):", "", "| dtype | N | exact | torch.sum | auto |", "|---|---|---:|---:|---:|"]
    for s in run["small"]:
        e = s["eager_us"]
        lines.append(f"| {s['dtype']} | {_n(s['n'])} | {e['exact']:.2f} | {e['torch.sum']:.2f} | {e['auto']:.2f} |")
    lines += ["", "Over dims (us; graph, and eager where measured):", "",
              "| dtype | shape | dim | data | exact | auto | exact / auto | eager: exact | auto | exact / auto |",
              "|---|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for d in run["dims"]:
        g, e = d["graph_us"], d.get("eager_us")
        eager = f"{e['exact']:.1f} | {e['auto']:.1f} | {e['exact'] / e['auto']:.2f}" if e else "— | — | —"
        lines.append(f"| {d['dtype']} | {tuple(d['shape'])} | {d['dim']} | {d.get('data', 'gradient')} | {g['exact']:.1f} | {g['auto']:.1f} | "
                     f"{g['exact'] / g['auto']:.2f} | {eager} |")
    dec = decision(run)
    w = dec["worst"]
    lines += ["", "## Decision (item 4)", "",
              (f"float32 exact / auto at its worst, 2^24 and up, finite families: {w['ratio']:.3f} ({w['data']}, {_n(w['n'])}, {w['mode']}). "
               if w else "No float32 rows. ")
              + ("At most 1.03: auto's float sums may become correctly rounded." if dec["switch_auto"]
                 else "Above 1.03: auto stays as it is."),
              "", "## Targets", ""]
    ts = targets(run)
    met = sum(t["met"] for t in ts)
    lines += [f"{met} of {len(ts)} met.", "", "| target | dtype | N | data | value | limit | verdict |", "|---|---|---|---|---:|---:|---|"]
    lines += target_lines(ts)
    return "\n".join(lines) + "\n"


def write(run: dict, out_dir: str) -> list[str]:
    return write_files(out_dir, FILE, {**run, "targets": targets(run), "decision": decision(run)}, markdown(run))


__all__ = ["FAMILIES", "family_data", "run", "targets", "decision", "markdown", "write"]
