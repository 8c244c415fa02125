"""reducekit.compare: one reducekit reduction against torch's on the reader's own shapes (issue 23).

No timing code of its own: the calls of each op come from ops._ops (the table bench_ops.py times),
the value check is ops._check, and the figures are dims._time_rounds's (interleaved rounds of
time_cuda_eager / time_cuda_graph / time_cpu over Buffers, cold L2 on a GPU), as in the dims
benchmark."""
from __future__ import annotations

import math

import torch

import reducekit

from . import ops as _opsmod
from .dims import _medians, _recover, _time_rounds, _Views
from .timing import DTYPES, Buffers, _bench_device, _err, _progress, environment, random_input, read_ceiling

COMPARE_MODES = ("eager", "graph")
ONE_DIM_OPS = ("prod", "aminmax", "argmax", "argmin")  # torch takes an int or None, not a tuple


def _op_name(op) -> str:
    """'var_mean', 'linalg.vector_norm' or 'vector_norm' -> the name of ops._ops' table ('vector_norm')."""
    if not isinstance(op, str):
        raise TypeError(f"compare(): op={op!r} must be the name of a reduction (a str), one of reducekit.OPS: "
                        f"{', '.join(reducekit.OPS)}")
    name = op.removeprefix("reducekit.").removeprefix("torch.").removeprefix("linalg.")
    known = {o.removeprefix("linalg.") for o in reducekit.OPS}
    if name not in known:
        raise ValueError(f"compare(): op={op!r} is not a reducekit reduction; use one of reducekit.OPS: "
                         f"{', '.join(reducekit.OPS)}")
    return name


def _calls(name: str, dim):
    """(reducekit call, torch call) of op `name` over `dim`: ops._ops' table, plus sum."""
    if name == "sum":
        if dim is None:
            return (lambda x: reducekit.sum(x)), (lambda x: torch.sum(x))
        return (lambda x: reducekit.sum(x, dim)), (lambda x: torch.sum(x, dim))
    for n, ours, theirs in _opsmod._ops(dim):
        if n == name:
            return ours, theirs
    raise AssertionError(name)  # _op_name checked it


def _shapes(shapes) -> list[tuple]:
    """A list is a list of shapes (each an int or a tuple); an int or a tuple is one shape, as dims."""
    if isinstance(shapes, (int, tuple, torch.Size)):
        shapes = [shapes]  # one shape: 4096 or (4096, 4096)
    if not isinstance(shapes, list) or not shapes:
        raise ValueError(f"compare(): shapes={shapes!r} must be a shape or a list of shapes, e.g. [(4096, 4096), (32, 2**20)]")
    out = []
    for s in shapes:
        s = (s,) if isinstance(s, int) else s
        if not isinstance(s, (tuple, list, torch.Size)) or not s or not all(isinstance(k, int) and k > 0 for k in s):
            raise ValueError(f"compare(): shapes contains {s!r}; each shape must be an int or a tuple of positive ints, "
                             "e.g. (8192, 4096)")
        out.append(tuple(s))
    return out


def _dims(dims) -> list:
    """A list is a list of dim arguments; anything else (None, an int, a tuple of ints) is one."""
    dims = list(dims) if isinstance(dims, list) else [dims]
    for d in dims:
        ok = d is None or isinstance(d, int) or (isinstance(d, tuple) and d and all(isinstance(k, int) for k in d))
        if not ok:
            raise ValueError(f"compare(): dims contains {d!r}; a dim is None (the whole tensor), an int or a tuple of "
                             "ints, and dims=[-1, 0] compares each")
    return dims


def _dtypes(dtypes) -> list[str]:
    dtypes = [dtypes] if isinstance(dtypes, (str, torch.dtype)) else list(dtypes)
    out = []
    for d in dtypes:
        name = str(d).removeprefix("torch.") if isinstance(d, torch.dtype) else d
        if name not in DTYPES:
            raise ValueError(f"compare(): dtypes contains {d!r}; use dtype names or torch dtypes among {', '.join(DTYPES)}")
        out.append(name)
    return out


def _device(device) -> torch.device:
    try:
        dev = torch.device(device) if device is not None else None
    except (RuntimeError, TypeError) as e:
        raise ValueError(f"compare(): device={device!r} is not a device ({_err(e)}); use 'cpu', 'cuda' or 'cuda:1'") from None
    if dev is not None and dev.type not in ("cpu", "cuda"):
        raise ValueError(f"compare(): device={device!r}; reducekit runs on 'cpu' and 'cuda'")
    if dev is not None and dev.type == "cuda" and not (torch.cuda.is_available() and reducekit._C.cuda_built):
        why = "torch sees no CUDA GPU" if not torch.cuda.is_available() else "reducekit was built without CUDA"
        raise ValueError(f"compare(): device={device!r} but {why}; use device='cpu' (or leave device=None: the GPU when "
                         "there is one)")
    return _bench_device(dev)


def _dim_label(dim) -> str:
    return "all" if dim is None else str(dim)


def _dim_arg(name: str, dim, shape: tuple):
    """The dim passed to the calls: logsumexp has no whole-tensor form in torch, so None is every dim."""
    return tuple(range(len(shape))) if name == "logsumexp" and dim is None else dim


def _validate(name: str, op: str, shape: tuple, dim, dtype: str):
    """Both calls on a tiny tensor of the case's rank and dtype (every dim of size <= 2): an error
    here names the argument instead of surfacing halfway through a sweep."""
    if dim is not None and name in ONE_DIM_OPS and not isinstance(dim, int):
        raise ValueError(f"compare(): dims contains {dim!r} but {op} takes one dim (an int or None); "
                         f"pass dims=[{', '.join(map(str, dim))}] to compare each")
    for d in (dim if isinstance(dim, tuple) else (dim,)):
        if d is not None and not -len(shape) <= d < len(shape):
            raise ValueError(f"compare(): dims contains {dim!r}, out of range for shape {shape} "
                             f"(dims go from {-len(shape)} to {len(shape) - 1})")
    tiny = random_input(math.prod(min(s, 2) for s in shape), DTYPES[dtype], "cpu").view(tuple(min(s, 2) for s in shape))
    ours, theirs = _calls(name, _dim_arg(name, dim, shape))
    for who, fn in (("torch", theirs), ("reducekit", ours)):
        try:
            fn(tiny)
        except Exception as e:  # noqa: BLE001 - re-raised with the arguments named
            raise ValueError(f"compare(): {who}'s {op} refuses dtype {dtype!r} with dim={dim!r} ({_err(e)}); "
                             f"drop {dtype!r} from dtypes or pick another op") from None


def _sig(x: float, digits: int = 4) -> float:
    """x to `digits` significant digits: a CPU case reads well under 1 GB/s, where two decimals keep one digit."""
    return float(f"{x:.{digits}g}")


def _check_text(name, ours, theirs, x) -> str:
    """ops._check as a row's cell: 'ok', 'not checked (prod)', or what differs."""
    if name == "prod":
        return "not checked (prod: an order-dependent product)"
    try:
        _opsmod._check(name, ours, theirs, x)
    except AssertionError as e:
        return "mismatch: " + " ".join(str(e).split())[:200]
    except Exception as e:  # noqa: BLE001 - reported in the row
        return f"error: {_err(e)}"
    return "ok"


def _ceiling(ceiling, device: torch.device):
    if device.type != "cuda":
        return None
    if ceiling is None:
        return read_ceiling(device)
    if isinstance(ceiling, (int, float)):
        return {"gbps": float(ceiling)}
    if isinstance(ceiling, dict) and "gbps" in ceiling:
        return ceiling
    raise ValueError(f"compare(): ceiling={ceiling!r}; pass None (measured), GB/s as a number, or a read_ceiling() dict")


def compare(op, shapes, dims=None, dtypes=("float32",), device=None, mode: str = "eager", budget_s: float = 0.2,
            rounds: int = 3, ceiling=None, check: bool = True, progress: bool = True, as_dataframe: bool = True):
    """Time reducekit's `op` against torch's on each shape, dim and dtype; check that the values agree.

    op: a name of reducekit.OPS ("sum", "var_mean", "logsumexp", "argmax", "linalg.vector_norm", ...).
    shapes: one shape ((8192, 4096), or an int for 1-D) or a list of them ([(8192, 4096), 2**20]: a
    list is always several shapes, as for dims).
    dims: one dim argument (None: the whole tensor; an int; a tuple of ints) or a list of them,
    each compared: dims=[-1, 0]. prod, aminmax, argmax and argmin take an int or None.
    dtypes: dtype names or torch dtypes. device: None (the GPU when there is one, else the CPU),
    "cpu", "cuda", "cuda:1". mode: "eager" (calls as a user makes them) or "graph" (CUDA graph
    replay interleaved with a foreign kernel: GPU time only; CUDA only).

    The timing is the benchmarks' (reducekit.bench): on a GPU, inputs rotated over at least 4x the
    L2 (cold L2) and CUDA events; on a CPU, wall time; `rounds` interleaved rounds of torch and
    reducekit, budget_s / rounds each, the median kept. ceiling: the read ceiling for
    "% of ceiling" (None: measured with reducekit's probe on a GPU; none on a CPU).

    Returns one row per (shape, dim, dtype): op, shape, dim, dtype, device, mode, torch_us,
    reducekit_us, ratio (reducekit time / torch time: < 1 is faster), speedup (torch / reducekit),
    reducekit_gbps, torch_gbps (bytes of input read per second), pct_ceiling (reducekit's GB/s as %
    of the read ceiling; None on a CPU) and check ("ok", or what differs: values within rtol 2e-2,
    integers exactly). A pandas DataFrame (env in .attrs["env"]) when pandas is installed and
    as_dataframe, else a list of dicts. reducekit.plot(rows) draws it.
    """
    name = _op_name(op)
    shapes, dims, dtypes = _shapes(shapes), _dims(dims), _dtypes(dtypes)
    device = _device(device)
    if mode not in COMPARE_MODES:
        raise ValueError(f"compare(): mode={mode!r}; use one of {COMPARE_MODES}")
    if mode == "graph" and device.type != "cuda":
        raise ValueError("compare(): mode='graph' times CUDA graph replays; on device='cpu' use mode='eager'")
    if not (isinstance(rounds, int) and rounds >= 1):
        raise ValueError(f"compare(): rounds={rounds!r} must be an int >= 1")
    if not (isinstance(budget_s, (int, float)) and budget_s > 0):
        raise ValueError(f"compare(): budget_s={budget_s!r} must be a positive number of seconds")
    cases = [(s, d, t) for s in shapes for d in dims for t in dtypes]
    for s, d, t in cases:
        _validate(name, op, s, d, t)
    on_gpu = device.type == "cuda"
    if on_gpu:
        torch.cuda.set_device(device)
    env = environment(device)
    ceil = _ceiling(ceiling, device)
    if ceil:
        env["ceiling"] = ceil
    cold_bytes = int(4 * torch.cuda.get_device_properties(device).L2_cache_size) if on_gpu else 0
    bar = _progress(len(cases), progress)
    rows = []
    for shape, dim, dname in cases:
        if bar:
            bar.set_description(f"{op} {shape} dim={_dim_label(dim)} {dname}")
        dtype = DTYPES[dname]
        numel = math.prod(shape)
        item = torch.empty((), dtype=dtype).element_size()
        if on_gpu:
            flat = Buffers(numel, dtype, device, max(cold_bytes, 2 * numel * item))
            inputs = _Views([v.view(shape) for v in flat.views])
        else:
            inputs = _Views([random_input(numel, dtype, "cpu").view(shape)])
        if name == "prod":  # a product of random values under/overflows: values near 1 (as bench_ops)
            inputs = _Views([(1 + 1e-4 * v.to(torch.float32)).to(dtype) if dtype.is_floating_point else v for v in inputs.views])
        ours, theirs = _calls(name, _dim_arg(name, dim, shape))
        verdict = _check_text(name, ours, theirs, inputs.views[0]) if check else "not checked"
        _recover(on_gpu)
        samples, errors = _time_rounds({"torch": theirs, "reducekit": ours}, {"torch": inputs, "reducekit": inputs},
                                       mode, rounds, budget_s, on_gpu, {})
        us = _medians(samples, errors)
        t, r = us["torch"], us["reducekit"]
        nbytes = numel * item
        gbps = {k: (nbytes / (v * 1e-6) / 1e9 if v else None) for k, v in us.items()}
        rows.append({
            "op": op, "shape": shape, "dim": _dim_label(dim), "dtype": dname, "device": str(device), "mode": mode,
            "torch_us": round(t, 3) if t else None, "reducekit_us": round(r, 3) if r else None,
            "ratio": round(r / t, 3) if t and r else None, "speedup": round(t / r, 3) if t and r else None,
            "reducekit_gbps": _sig(gbps["reducekit"]) if gbps["reducekit"] else None,
            "torch_gbps": _sig(gbps["torch"]) if gbps["torch"] else None,
            "pct_ceiling": round(100 * gbps["reducekit"] / ceil["gbps"], 1) if ceil and gbps["reducekit"] else None,
            "check": verdict if not errors else "error: " + "; ".join(f"{k}: {v}" for k, v in errors.items()),
        })
        del inputs
        if on_gpu:
            del flat
            torch.cuda.empty_cache()
        if bar:
            bar.update()
    if bar:
        bar.close()
    if as_dataframe:
        try:
            import pandas as pd
        except ImportError:
            return rows
        df = pd.DataFrame(rows)
        df.attrs["env"] = env
        return df
    return rows
