"""reducekit.sum and its fake (meta) kernels for torch.compile. The op itself,
torch.ops.reducekit.sum, and its autograd formula are defined in C++ (csrc/torch/library.cpp)."""
from __future__ import annotations

import torch

from . import _C, _dropin

_INTEGRAL_RESULT = torch.int64
# Words per exact intermediate: the universal limbs, then the NaN, +inf and -inf counts.
EXACT_WORDS: int = _C.EXACT_WORDS


def result_dtype(dtype: torch.dtype) -> torch.dtype:
    """torch.sum's result dtype: int64 for bool and integer inputs, the input dtype for floats."""
    return dtype if dtype.is_floating_point else _INTEGRAL_RESULT


@torch.library.register_fake("reducekit::sum")
def _sum_fake(self, dim=None, keepdim=False, *, dtype=None, method="auto"):
    # torch.sum's own meta function gives the result's shape, dtype and layout (and raises torch's
    # errors for bad dims); the op's checks of its own arguments run in the real kernels.
    if dim is not None and len(dim) == 0:
        dim = None if not keepdim else list(range(self.dim()))
    return torch.sum(self, dim, keepdim=keepdim, dtype=dtype)


@torch.library.register_fake("reducekit::exact_partial")
def _exact_partial_fake(self, dim=None, keepdim=False):
    if dim is not None and len(dim) == 0:
        dim = None if not keepdim else list(range(self.dim()))
    shape = torch.sum(self, dim, keepdim=keepdim).shape
    return self.new_empty((*shape, EXACT_WORDS), dtype=torch.int64)


@torch.library.register_fake("reducekit::exact_round")
def _exact_round_fake(words, dtype):
    return words.new_empty(words.shape[:-1], dtype=dtype)


@torch.library.register_fake("reducekit::_single_pass")
def _single_pass_fake(self, block, unroll, grid, pdl=True):
    return self.new_empty((), dtype=result_dtype(self.dtype))


@torch.library.register_fake("reducekit::_read_probe")
def _read_probe_fake(self, block, unroll, waves):
    return self.new_empty((), dtype=torch.int64)


# The autograd formula is registered in C++ (csrc/torch/library.cpp, SumBackward): no Python on the
# Autograd key, so calls that need no gradient pay nothing for it.

_compiling = torch.compiler.is_compiling
# torch.sum also takes Python's scalar types as dtype=.
_PY_DTYPES = {float: torch.float64, int: torch.int64, bool: torch.bool, complex: torch.complex128}
_fast_sum = _C.sum


def sum(input: torch.Tensor, dim=None, keepdim: bool = False, *, dtype: torch.dtype | None = None,  # noqa: A001
        method: str = "auto", out: torch.Tensor | None = None, axis=None, keepdims: bool | None = None) -> torch.Tensor:
    """torch.sum with a choice of method: the sum of `input` over `dim` (every dim when None).

    Same signature, result dtype, shape and errors as torch.sum: `dim` an int or a tuple/list of
    ints (negative allowed), `keepdim`, `dtype=` (the input is summed as that dtype; float16 and
    bfloat16 with dtype=torch.float32 are read and accumulated without a cast kernel). Integers
    sum to int64; complex inputs sum their real and imaginary parts.

    `method` names a strategy from reducekit.methods(); "auto" (the default) picks the fastest
    deterministic kernel, and is the one method that reduces over some dims (the others reduce
    the whole tensor). With an explicit `dim`, every output's bits depend only on its own slice:
    sum(x, dim=-1)[i] equals sum(x[i:i+1], dim=-1)[0] bit for bit. The input is never modified.

    As torch.sum it takes out= (summed in out's dtype, resized as torch resizes it) and numpy's
    axis=/keepdims= aliases (reducekit/_dropin.py), and tensors of more than 64 dims when every
    dim is reduced.
    """
    if out is not None or axis is not None or keepdims is not None:
        return _dropin.call(sum, "sum", "sum", input, dim, keepdim, out, axis, keepdims, None, dtype=dtype, method=method)
    if _compiling():
        return torch.ops.reducekit.sum.default(input, dim, keepdim, dtype=dtype, method=method)
    try:
        return _fast_sum(input, dim, keepdim, dtype=dtype, method=method)
    except TypeError:
        # Argument errors are diagnosed here, off the fast path: pybind11 alone would say
        # "incompatible function arguments".
        if not isinstance(input, torch.Tensor):
            raise TypeError(f"reducekit.sum: input must be a torch.Tensor, got {type(input).__name__}") from None
        if not isinstance(method, str):
            raise TypeError(f"reducekit.sum: method must be a str naming a method (see reducekit.methods()), "
                            f"got {type(method).__name__} {method!r}") from None
        if dtype in _PY_DTYPES:
            return sum(input, dim, keepdim, dtype=_PY_DTYPES[dtype], method=method)
        if dtype is not None and not isinstance(dtype, torch.dtype):
            raise TypeError(f"reducekit.sum: dtype must be a torch.dtype or None, got {type(dtype).__name__} {dtype!r}") from None
        if not isinstance(keepdim, bool):
            raise TypeError(f"reducekit.sum: keepdim must be a bool, got {type(keepdim).__name__} {keepdim!r}") from None
        raise
    except RuntimeError as e:  # more than 64 dims (off the fast path): every dim sums the flattened tensor
        return _dropin.reduce_flattened("sum", input, dim, keepdim, e, lambda x: sum(x, None, False, dtype=dtype, method=method))


def exact_partial(input: torch.Tensor, dim=None, keepdim: bool = False) -> torch.Tensor:
    """The exact sum of `input` over `dim` (every dim when None), unrounded: int64 words, with a
    last dim of EXACT_WORDS added to the shape reducekit.sum would return.

    The words are a fixed-point number (limb i, i < EXACT_WORDS - 3, weighs 2^(32 i - 1088)) and
    the counts of NaN, +inf and -inf. Partials of shards combine by integer addition (for example
    `torch.stack(parts).sum(0)`, or an all-reduce with SUM; up to 2^31 of them), and
    `exact_round(words, dtype)` then gives the correctly rounded sum of all the shards: the same
    bits as reducekit.sum(whole, method="exact"), whatever the split. Floats only (float16,
    bfloat16, float32, float64).
    """
    if isinstance(dim, int):
        dim = [dim]
    return torch.ops.reducekit.exact_partial.default(input, dim, keepdim)


def exact_round(words: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Rounds exact partials (exact_partial's words, possibly summed over shards) to `dtype`,
    to nearest, ties to even: NaN if any NaN or both infinities were summed, else the infinity,
    else the finite sum (an infinity beyond the dtype's range). Shape: words.shape[:-1]."""
    return torch.ops.reducekit.exact_round.default(words, dtype)
