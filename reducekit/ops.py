"""reducekit.sum and its fake (meta) kernels for torch.compile. The op itself,
torch.ops.reducekit.sum, and its autograd formula are defined in C++ (csrc/ops.cpp)."""
from __future__ import annotations

import torch

from . import _C

_INTEGRAL_RESULT = torch.int64


def result_dtype(dtype: torch.dtype) -> torch.dtype:
    """torch.sum's result dtype: int64 for bool and integer inputs, the input dtype for floats."""
    return dtype if dtype.is_floating_point else _INTEGRAL_RESULT


@torch.library.register_fake("reducekit::sum")
def _sum_fake(self, method="auto"):
    return self.new_empty((), dtype=result_dtype(self.dtype))


@torch.library.register_fake("reducekit::_single_pass")
def _single_pass_fake(self, block, unroll, grid, pdl=True):
    return self.new_empty((), dtype=result_dtype(self.dtype))


@torch.library.register_fake("reducekit::_read_probe")
def _read_probe_fake(self, block, unroll, waves):
    return self.new_empty((), dtype=torch.int64)


# The autograd formula is registered in C++ (csrc/ops.cpp, SumBackward): no Python on the
# Autograd key, so calls that need no gradient pay nothing for it.

_compiling = torch.compiler.is_compiling
_fast_sum = _C.sum


def sum(input: torch.Tensor, method: str = "auto") -> torch.Tensor:  # noqa: A001 - mirrors torch.sum
    """Sum of all elements of `input`, as a 0-dim tensor, with torch.sum's dtype rules.

    `method` names a strategy from reducekit.methods(); "auto" (the default) picks the fastest
    deterministic kernel for the dtype and size. The input is never modified.
    """
    if _compiling():
        return torch.ops.reducekit.sum.default(input, method)
    try:
        return _fast_sum(input, method)
    except TypeError:
        # Argument errors are diagnosed here, off the fast path: pybind11 alone would say
        # "incompatible function arguments".
        if not isinstance(input, torch.Tensor):
            raise TypeError(f"reducekit.sum: input must be a torch.Tensor, got {type(input).__name__}") from None
        if not isinstance(method, str):
            raise TypeError(f"reducekit.sum: method must be a str naming a method (see reducekit.methods()), "
                            f"got {type(method).__name__} {method!r}") from None
        raise
