"""Every torch reduction but sum, with torch's signatures, on reducekit's engine.

Each function reads its input once (var_mean and std_mean included), with torch's result dtype,
shape and errors (judged by torch's OpInfo samples in tests/test_ops.py), autograd where torch
has a gradient, and the engine's determinism: the bits of each output depend only on its own
slice. `method` is "auto" (the engine, any dims) or, for prod, amax, amin, all and any over the
whole tensor, a gallery strategy from reducekit.methods() that serves the op.

All of them call one custom op, torch.ops.reducekit.reduce(input, op, dim, keepdim, dtype=, ord=,
correction=, method=), which returns a list of one or two tensors.
"""
from __future__ import annotations

import math

import torch

from . import _C, _dropin
from .ops import _sum_fake
from .ops import sum as _sum

_compiling = torch.compiler.is_compiling
_fast = _C.reduce
_fast1 = _C.reduce1


def _dims(dim):
    """dim as the custom op takes it: None, or a list of ints."""
    if dim is None:
        return None
    if isinstance(dim, int) and not isinstance(dim, bool):
        return [dim]
    return list(dim)


def _diagnose(op, input, keepdim, dtype, method):
    """A TypeError of the fast entry: name the argument, as pybind11 alone would not."""
    if not isinstance(keepdim, bool):
        raise TypeError(f"reducekit.{op}: keepdim must be a bool, got {type(keepdim).__name__} {keepdim!r}") from None
    if not isinstance(input, torch.Tensor):
        raise TypeError(f"reducekit.{op}: input must be a torch.Tensor, got {type(input).__name__}") from None
    if not isinstance(method, str):
        raise TypeError(f"reducekit.{op}: method must be a str naming a method (see reducekit.methods()), got {method!r}") from None
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise TypeError(f"reducekit.{op}: dtype must be a torch.dtype or None, got {dtype!r}") from None


# The calls pass every argument by position, and bad types are diagnosed only after the fast entry
# refused them: an eager call of a small tensor is all host time (as sum in ops.py). `first`: the
# first output alone (_C.reduce1, no list), else both outputs as a list.
def _call(op, input, dim, keepdim=False, dtype=None, ord=2.0, correction=1.0, method="auto", first=True):
    if _compiling():
        r = torch.ops.reducekit.reduce.default(input, op, _dims(dim), keepdim, dtype=dtype, ord=float(ord),
                                               correction=float(correction), method=method)
        return r[0] if first else r
    try:
        return (_fast1 if first else _fast)(op, input, dim, keepdim, dtype, ord, correction, method)
    except TypeError:
        _diagnose(op, input, keepdim, dtype, method)
        raise
    except RuntimeError as e:  # more than 64 dims (off the fast path): every dim reduces the flattened tensor
        return _dropin.reduce_flattened(op, input, dim, keepdim, e,
                                        lambda x: _call(op, x, None, False, dtype, ord, correction, method, first))


_compat = _dropin.call  # a call with out= or numpy's axis=/keepdims= (torch's rules: reducekit/_dropin.py)


def _all_dims(dim):
    """amax/amin/logsumexp/count_nonzero: dim=() means every dim."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return None
    return dim


# Each function takes torch's out= (reducekit/_dropin.py: OUT_RULES, torch's rule per op) and
# numpy's axis=/keepdims= aliases; those calls go through _compat, off the common path.


def mean(input, dim=None, keepdim=False, *, dtype=None, method="auto", out=None, axis=None, keepdims=None):
    """torch.mean: float and complex inputs (integers with dtype=); 16-bit floats accumulate in
    float32, float32 in float64."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(mean, "mean", "mean", input, dim, keepdim, out, axis, keepdims, None, dtype=dtype, method=method)
    return _call("mean", input, dim, keepdim, dtype, method=method)


def nansum(input, dim=None, keepdim=False, *, dtype=None, method="auto", out=None, axis=None, keepdims=None):
    """torch.nansum: the sum with NaN counted as zero."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(nansum, "nansum", "nansum", input, dim, keepdim, out, axis, keepdims, None, dtype=dtype, method=method)
    return _call("nansum", input, dim, keepdim, dtype, method=method)


def nanmean(input, dim=None, keepdim=False, *, dtype=None, method="auto", out=None, axis=None, keepdims=None):
    """torch.nanmean: the mean of the non-NaN values (NaN where there are none)."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(nanmean, "nanmean", "nanmean", input, dim, keepdim, out, axis, keepdims, None, dtype=dtype, method=method)
    return _call("nanmean", input, dim, keepdim, dtype, method=method)


def prod(input, dim=None, keepdim=False, *, dtype=None, method="auto", out=None, axis=None, keepdims=None):
    """torch.prod: every value (dim=None) or one dim. Integers multiply in int64, wrapping."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(prod, "prod", "prod", input, dim, keepdim, out, axis, keepdims, None, dtype=dtype, method=method)
    if dim is not None and not (isinstance(dim, int) and not isinstance(dim, bool)):
        raise TypeError(f"reducekit.prod: dim must be an int or None (torch.prod reduces one dim), got {dim!r}")
    return _call("prod", input, dim, keepdim, dtype, method=method)


def amax(input, dim=(), keepdim=False, *, method="auto", out=None, axis=None, keepdims=None):
    """torch.amax: the largest value over dim (every dim for ()); NaN propagates."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(amax, "amax", "amax", input, dim, keepdim, out, axis, keepdims, (), method=method)
    return _call("amax", input, _all_dims(dim), keepdim, method=method)


def amin(input, dim=(), keepdim=False, *, method="auto", out=None, axis=None, keepdims=None):
    """torch.amin: the smallest value over dim (every dim for ()); NaN propagates."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(amin, "amin", "amin", input, dim, keepdim, out, axis, keepdims, (), method=method)
    return _call("amin", input, _all_dims(dim), keepdim, method=method)


def aminmax(input, *, dim=None, keepdim=False, method="auto", out=None, axis=None, keepdims=None):
    """torch.aminmax: (min, max) in one read, as torch.return_types.aminmax."""
    if out is not None or axis is not None or keepdims is not None:
        r = _compat(aminmax, "aminmax", "aminmax", input, dim, keepdim, out, axis, keepdims, None, method=method)
        return torch.return_types.aminmax(tuple(r))
    if dim is not None and not (isinstance(dim, int) and not isinstance(dim, bool)):
        raise TypeError(f"reducekit.aminmax: dim must be an int or None, got {dim!r}")
    mn, mx = _call("aminmax", input, dim, keepdim, method=method, first=False)
    return torch.return_types.aminmax((mn, mx))


def _truth(input):
    """torch.all/any over dim=(): no dim reduced, each value's truth."""
    t = input != 0
    return t.to(torch.uint8) if input.dtype == torch.uint8 else t


def all(input, dim=None, keepdim=False, *, method="auto", out=None, axis=None, keepdims=None):  # noqa: A001
    """torch.all: whether every value is nonzero (bool; uint8 for uint8 input)."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(all, "all", "all", input, dim, keepdim, out, axis, keepdims, None, method=method)
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        return _truth(input)
    return _call("all", input, dim, keepdim, method=method)


def any(input, dim=None, keepdim=False, *, method="auto", out=None, axis=None, keepdims=None):  # noqa: A001
    """torch.any: whether some value is nonzero (bool; uint8 for uint8 input)."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(any, "any", "any", input, dim, keepdim, out, axis, keepdims, None, method=method)
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        return _truth(input)
    return _call("any", input, dim, keepdim, method=method)


def count_nonzero(input, dim=None, *, method="auto", out=None, axis=None):
    """torch.count_nonzero: the number of nonzero values (int64)."""
    if out is not None:
        _dropin.check_out_allowed("count_nonzero", "count_nonzero", out, input)
    if axis is not None:
        dim = _dropin.dim_alias("count_nonzero", dim, axis, None)
    return _call("count_nonzero", input, _all_dims(dim), False, method=method)


def _correction(name, dim, unbiased, correction):
    """torch's var/std argument rules: var(x, unbiased), var(x, dim, unbiased, keepdim) and
    var(x, dim, *, correction=1, keepdim)."""
    if isinstance(dim, bool):  # var(x, True): the legacy unbiased overload
        if unbiased is not None:
            raise TypeError(f"reducekit.{name}: unbiased given twice")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError(f"reducekit.{name}: cannot specify both unbiased and correction; pass correction only "
                           f"(unbiased=True is correction=1, False is 0)")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if isinstance(correction, bool) or not isinstance(correction, (int, float)):
        raise TypeError(f"reducekit.{name}: correction must be a number, got {correction!r}")
    return dim, float(correction)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, method="auto", out=None, axis=None, keepdims=None):
    """torch.var: Welford/Chan in one read; divides by max(0, n - correction)."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(var, "var", "var", input, dim, keepdim, out, axis, keepdims, None, unbiased=unbiased, correction=correction,
                       method=method)
    dim, c = _correction("var", dim, unbiased, correction)
    return _call("var", input, dim, keepdim, correction=c, method=method)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, method="auto", out=None, axis=None, keepdims=None):
    """torch.std: the square root of var."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(std, "std", "std", input, dim, keepdim, out, axis, keepdims, None, unbiased=unbiased, correction=correction,
                       method=method)
    dim, c = _correction("std", dim, unbiased, correction)
    return _call("std", input, dim, keepdim, correction=c, method=method)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, method="auto", out=None, axis=None,
             keepdims=None):
    """torch.var_mean: (var, mean) from one read of the input."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(var_mean, "var_mean", "var_mean", input, dim, keepdim, out, axis, keepdims, None, unbiased=unbiased,
                       correction=correction, method=method)
    dim, c = _correction("var_mean", dim, unbiased, correction)
    return tuple(_call("var_mean", input, dim, keepdim, correction=c, method=method, first=False))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, method="auto", out=None, axis=None,
             keepdims=None):
    """torch.std_mean: (std, mean) from one read of the input."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(std_mean, "std_mean", "std_mean", input, dim, keepdim, out, axis, keepdims, None, unbiased=unbiased,
                       correction=correction, method=method)
    dim, c = _correction("std_mean", dim, unbiased, correction)
    return tuple(_call("std_mean", input, dim, keepdim, correction=c, method=method, first=False))


_NO_DIM = object()  # logsumexp's dim is required, as torch's (or its alias axis=); dim=None is every dim


def logsumexp(input, dim=_NO_DIM, keepdim=False, *, method="auto", out=None, axis=None, keepdims=None):
    """torch.logsumexp in one pass: a running max and a rescaled sum of exponentials."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(logsumexp, "logsumexp", "logsumexp", input, dim, keepdim, out, axis, keepdims, _NO_DIM, method=method)
    if dim is _NO_DIM:
        raise TypeError("reducekit.logsumexp() missing required argument 'dim' (as torch.logsumexp): pass dim= or axis=")
    return _call("logsumexp", input, dim, keepdim, method=method)


def argmax(input, dim=None, keepdim=False, *, method="auto", out=None, axis=None, keepdims=None):
    """torch.argmax: the first index of the largest value (of the first NaN, if any)."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(argmax, "argmax", "argmax", input, dim, keepdim, out, axis, keepdims, None, method=method)
    if dim is not None and not (isinstance(dim, int) and not isinstance(dim, bool)):
        raise TypeError(f"reducekit.argmax: dim must be an int or None, got {dim!r}")
    return _call("argmax", input, dim, keepdim, method=method)


def argmin(input, dim=None, keepdim=False, *, method="auto", out=None, axis=None, keepdims=None):
    """torch.argmin: the first index of the smallest value (of the first NaN, if any)."""
    if out is not None or axis is not None or keepdims is not None:
        return _compat(argmin, "argmin", "argmin", input, dim, keepdim, out, axis, keepdims, None, method=method)
    if dim is not None and not (isinstance(dim, int) and not isinstance(dim, bool)):
        raise TypeError(f"reducekit.argmin: dim must be an int or None, got {dim!r}")
    return _call("argmin", input, dim, keepdim, method=method)


class linalg:  # noqa: N801  (reducekit.linalg.vector_norm, as torch.linalg.vector_norm)
    """reducekit.linalg.vector_norm."""

    @staticmethod
    def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, method="auto", out=None, axis=None,  # noqa: A002
                    keepdims=None):
        """torch.linalg.vector_norm: ord 0 (nonzeros), 1, 2, inf, -inf or any other p; complex
        inputs give the norm of their absolute values."""
        if out is not None or axis is not None or keepdims is not None:
            return _compat(lambda t, **kw: linalg.vector_norm(t, ord, **kw), "vector_norm", "linalg.vector_norm", x, dim,
                           keepdim, out, axis, keepdims, None, dtype=dtype, method=method)
        if isinstance(ord, bool) or not isinstance(ord, (int, float)):
            raise TypeError(f"reducekit.linalg.vector_norm: ord must be a number, got {ord!r}")
        return _call("vector_norm", x, dim, keepdim, dtype, ord=float(ord), method=method)


# What each op computes on fake tensors (torch.compile, opcheck): torch's own op gives the shapes
# and dtypes (and raises torch's errors for bad dims). One entry per row of core/op_table.h,
# checked at import.
def _full_or(f, x, dim, keepdim, dtype):
    """torch's f over dim, or over every dim (keepdim: all dims kept as 1) when dim is empty."""
    if dim:
        return f(x, dim[0] if len(dim) == 1 else tuple(dim), keepdim, dtype=dtype)
    return f(x, dtype=dtype).reshape([1] * x.dim() if keepdim else [])


_FAKE_REF = {
    "sum": lambda x, dim, keepdim, dtype, ord, c: _sum_fake(x, dim, keepdim, dtype=dtype),
    "mean": lambda x, dim, keepdim, dtype, ord, c: _full_or(torch.mean, x, dim, keepdim, dtype),
    "nansum": lambda x, dim, keepdim, dtype, ord, c: torch.nansum(x, dim if dim else None, keepdim, dtype=dtype),
    "nanmean": lambda x, dim, keepdim, dtype, ord, c: torch.nanmean(x, dim if dim else None, keepdim, dtype=dtype),
    "prod": lambda x, dim, keepdim, dtype, ord, c: _full_or(torch.prod, x, dim, keepdim, dtype),
    "amax": lambda x, dim, keepdim, dtype, ord, c: torch.amax(x, dim if dim else (), keepdim),
    "amin": lambda x, dim, keepdim, dtype, ord, c: torch.amin(x, dim if dim else (), keepdim),
    "aminmax": lambda x, dim, keepdim, dtype, ord, c: tuple(torch.aminmax(x, dim=None if dim is None else dim[0], keepdim=keepdim)),
    "all": lambda x, dim, keepdim, dtype, ord, c: torch.all(x, tuple(dim), keepdim) if dim else torch.all(x).reshape([1] * x.dim() if keepdim else []),
    "any": lambda x, dim, keepdim, dtype, ord, c: torch.any(x, tuple(dim), keepdim) if dim else torch.any(x).reshape([1] * x.dim() if keepdim else []),
    "count_nonzero": lambda x, dim, keepdim, dtype, ord, c: torch.count_nonzero(x, tuple(dim) if dim else None),
    "var": lambda x, dim, keepdim, dtype, ord, c: torch.var(x, dim, correction=c, keepdim=keepdim),
    "std": lambda x, dim, keepdim, dtype, ord, c: torch.std(x, dim, correction=c, keepdim=keepdim),
    "var_mean": lambda x, dim, keepdim, dtype, ord, c: torch.var_mean(x, dim, correction=c, keepdim=keepdim),
    "std_mean": lambda x, dim, keepdim, dtype, ord, c: torch.std_mean(x, dim, correction=c, keepdim=keepdim),
    "vector_norm": lambda x, dim, keepdim, dtype, ord, c: torch.linalg.vector_norm(x, ord, dim, keepdim, dtype=dtype),
    "logsumexp": lambda x, dim, keepdim, dtype, ord, c: torch.logsumexp(x, dim if dim else list(range(x.dim())), keepdim),
    "argmax": lambda x, dim, keepdim, dtype, ord, c: torch.argmax(x, None if dim is None else dim[0], keepdim),
    "argmin": lambda x, dim, keepdim, dtype, ord, c: torch.argmin(x, None if dim is None else dim[0], keepdim),
}


def _torch_ref(op, x, dim, keepdim, dtype, ord, correction):
    if op not in _FAKE_REF:
        raise ValueError(f"unknown op {op!r}")
    return _FAKE_REF[op](x, dim, keepdim, dtype, ord, correction)


def _check_op_table():
    """Every operator of core/op_table.h has its public function here and a fake-kernel entry, and
    nothing else does: a row added without them fails at import, not at its first call."""
    names = [t["name"] for t in _C.op_table()]
    missing = [n for n in names if n not in _FAKE_REF]
    extra = [n for n in _FAKE_REF if n not in names]
    funcs = [t["public_name"] for t in _C.op_table()]
    public = {"sum": _sum, "linalg.vector_norm": linalg.vector_norm}  # the two that are not this module's globals
    unbound = [f for f in funcs if not callable(public.get(f, globals().get(f)))]
    if missing or extra or unbound:
        raise ImportError(f"reducekit: core/op_table.h and reducekit/reductions.py disagree: no fake kernel for {missing}, "
                          f"fake kernels of no op {extra}, no function for {unbound}")


_check_op_table()


@torch.library.register_fake("reducekit::reduce")
def _reduce_fake(self, op, dim=None, keepdim=False, *, dtype=None, ord=2.0, correction=1.0, method="auto"):
    if math.isnan(ord):
        ord = 2.0
    r = _torch_ref(op, self, dim, keepdim, dtype, ord, correction)
    r = list(r) if isinstance(r, tuple) else [r]
    return [t.contiguous() for t in r]
