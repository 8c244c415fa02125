"""torch's calling conventions beyond the signatures: `out=`, numpy's `axis=`/`keepdims=` aliases,
and more than 64 dims. One rule per op of core/op_table.h (checked at import, as the fake kernels).

out= follows torch's rules for each op:
- "compute": out's dtype is the dtype the op computes in, as torch's sum/mean/prod/nansum/nanmean
  (the call runs with dtype=out.dtype);
- "cast": the result, computed as without out=, is cast into out (torch's var, std, logsumexp);
- "same": out must already have the result's dtype (amax, amin, aminmax, vector_norm; argmax and
  argmin int64; all and any bool, uint8 for uint8 input); otherwise RuntimeError, as torch;
- None: torch's function takes no out= (count_nonzero, var_mean, std_mean): TypeError, as torch.

Then, as torch: an out on another device is a RuntimeError; an out of the wrong shape is resized
(with torch's warning if it had elements); out= with an argument that requires grad is a
RuntimeError (for the ops torch differentiates); the two-output ops take a tuple and return it; the returned tensor is `out` itself.
In an eager call, out's tensors are lent to the engine (torch/frontend.h OutLoan): where out
already has the result's shape, strides and dtype, the kernels write into it and no copy is made;
otherwise (a resize, a cast, a strided out) the result reaches out by one copy, as under
torch.compile, where the functional op and a copy are what is traced.
"""
from __future__ import annotations

import warnings

import torch

from . import _C

OUT_RULES = {
    "sum": "compute", "mean": "compute", "prod": "compute", "nansum": "compute", "nanmean": "compute",
    "var": "cast", "std": "cast", "logsumexp": "cast",
    "amax": "same", "amin": "same", "aminmax": "same", "vector_norm": "same", "argmax": "same", "argmin": "same",
    "all": "same", "any": "same",
    "count_nonzero": None, "var_mean": None, "std_mean": None,
}

MAX_DIMS = 64  # csrc/engine/plan.h kMaxDims
_DIFFERENTIABLE = {t["name"]: t["differentiable"] for t in _C.op_table()}


def _check_out_rules():
    names = list(_DIFFERENTIABLE)
    missing = [n for n in names if n not in OUT_RULES]
    extra = [n for n in OUT_RULES if n not in names]
    if missing or extra:
        raise ImportError(f"reducekit: core/op_table.h and reducekit/_dropin.py disagree: no out= rule for {missing}, "
                          f"rules of no op {extra}")


_check_out_rules()


def dim_alias(op: str, dim, axis, default):
    """numpy's axis= for dim= (torch accepts both names; both given is a TypeError, as torch)."""
    if axis is None:
        return dim
    if dim is not default:
        raise TypeError(f"reducekit.{op}: got both dim={dim!r} and its alias axis={axis!r}; pass one")
    return axis


def keepdim_alias(op: str, keepdim, keepdims):
    """numpy's keepdims= for keepdim=."""
    if keepdims is None:
        return keepdim
    if keepdim is not False:
        raise TypeError(f"reducekit.{op}: got both keepdim={keepdim!r} and its alias keepdims={keepdims!r}; pass one")
    return keepdims


def check_out_allowed(op: str, public: str, out, input) -> None:
    """Before the call: out= where torch has none, or with an argument that requires grad."""
    if OUT_RULES[op] is None:
        raise TypeError(f"reducekit.{public}() got an unexpected keyword argument 'out': torch.{public} takes no out= "
                        f"either; assign the result instead")
    outs = out if isinstance(out, (tuple, list)) else (out,)
    for o in outs:
        if not isinstance(o, torch.Tensor):
            raise TypeError(f"reducekit.{public}: out must be a torch.Tensor"
                            f"{' or a tuple of two' if op == 'aminmax' else ''}, got {type(o).__name__}")
    # torch refuses out= with an argument that requires grad for the ops it differentiates only
    if _DIFFERENTIABLE[op] and torch.is_grad_enabled() and (input.requires_grad or any(o.requires_grad for o in outs)):
        raise RuntimeError(f"{public}(): functions with out=... arguments don't support automatic differentiation, "
                           f"but one of the arguments requires grad.")


def compute_dtype(op: str, out, dtype):
    """The dtype= of a "compute" op called with out= (an explicit dtype= must then match out's)."""
    if OUT_RULES[op] != "compute":
        return dtype
    if dtype is not None and dtype != out.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {dtype}, but got {out.dtype} instead "
                           f"(reducekit.{op}: dtype= and out= disagree)")
    return out.dtype


def _write(op: str, public: str, r: torch.Tensor, out: torch.Tensor, lent: bool) -> torch.Tensor:
    if lent and r.data_ptr() == out.data_ptr() and r.numel() > 0:
        if r.shape == out.shape and r.stride() == out.stride() and r.dtype == out.dtype:
            return out  # the engine wrote into out (it was lent): nothing to copy
        r = r.clone()  # a view of out (out was taken by an intermediate step): copy it out of the way first
    if out.device != r.device:
        raise RuntimeError(f"reducekit.{public}: Expected out tensor to be on device {r.device}, but got {out.device}; "
                           f"allocate out on the input's device")
    if OUT_RULES[op] == "same" and out.dtype != r.dtype:
        if op in ("all", "any"):
            raise RuntimeError(f"{public} only supports bool tensor for result, got: {out.dtype} "
                               f"(reducekit.{public}: out must be {r.dtype})")
        raise RuntimeError(f"Expected out tensor to have dtype {r.dtype}, but got {out.dtype} instead "
                           f"(reducekit.{public}: allocate out with dtype={r.dtype})")
    if out.shape != r.shape:
        if out.numel() != 0:
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, which "
                          f"does not match the required output shape {list(r.shape)}. This behavior is deprecated, and in a "
                          f"future PyTorch release outputs will not be resized unless they have zero elements. You can "
                          f"explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                          UserWarning, stacklevel=4)
        out.resize_(r.shape)
    return out.copy_(r)


def write_out(op: str, public: str, r, out, lent: bool = False):
    """Writes the result (a tensor, or a pair for the two-output ops) into out and returns out
    (lent: out was lent to the call, which may have written into it already)."""
    if isinstance(r, torch.Tensor):
        if isinstance(out, (tuple, list)):
            raise TypeError(f"reducekit.{public}: out must be one tensor, got a {type(out).__name__}")
        return _write(op, public, r, out, lent)
    if not isinstance(out, (tuple, list)) or len(out) != len(r):
        raise TypeError(f"reducekit.{public}: out must be a tuple of {len(r)} tensors, got {type(out).__name__}")
    return tuple(_write(op, public, a, o, lent) for a, o in zip(r, out))


def call(f, op: str, public: str, input, dim, keepdim, out, axis, keepdims, default_dim, **kw):
    """A call of public function f with out= or numpy's axis=/keepdims=: the aliases resolved, then
    f itself, its result written into out by torch's rule for op."""
    dim = dim_alias(public, dim, axis, default_dim)
    keepdim = keepdim_alias(public, keepdim, keepdims)
    if out is None:
        return f(input, dim=dim, keepdim=keepdim, **kw)
    check_out_allowed(op, public, out, input)
    if "dtype" in kw:
        kw["dtype"] = compute_dtype(op, out, kw["dtype"])
    if torch.compiler.is_compiling() or not isinstance(input, torch.Tensor):
        return write_out(op, public, f(input, dim=dim, keepdim=keepdim, **kw), out)
    _C._lend_out(list(out) if isinstance(out, (tuple, list)) else [out], input)
    try:
        r = f(input, dim=dim, keepdim=keepdim, **kw)
    finally:
        _C._end_loan()
    return write_out(op, public, r, out, lent=True)


def reduce_flattened(op: str, input, dim, keepdim: bool, error: RuntimeError, full):
    """The engine refused an input with `error`. If it has more than 64 dims and every dim is
    reduced, the result is full(flattened input) (one tensor or a list), as torch's; over some of
    more than 64 dims, torch's RuntimeError; any other refusal is raised as it was."""
    if not (isinstance(input, torch.Tensor) and input.dim() > MAX_DIMS):
        raise error
    every = dim is None or (not isinstance(dim, int) and len(dim) == 0)
    if not every:
        raise RuntimeError(f"reducekit.{op}: only tensors with up to {MAX_DIMS} dims are supported (input has "
                           f"{input.dim()}); reduce over every dim (dim=None), or reshape to fewer dims first") from None
    r = full(input.reshape(-1))
    if not keepdim:
        return r
    keep = [1] * input.dim()
    return r.reshape(keep) if isinstance(r, torch.Tensor) else [t.reshape(keep) for t in r]
