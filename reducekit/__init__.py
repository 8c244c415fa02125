"""reducekit: GPU sum reductions for PyTorch.

    reducekit.sum(x)                         # fastest deterministic kernel for x's dtype and size
    reducekit.sum(x, method="tree_sequential")  # any classic strategy, see reducekit.methods()
    reducekit.sum(x, method="exact")         # correctly rounded: the same bits everywhere
    reducekit.var_mean(x, dim=-1), reducekit.amax(x, 0), reducekit.linalg.vector_norm(x, 3), ...
                                             # every torch reduction, torch's signatures (reducekit.OPS)
    reducekit.exact_round(reducekit.exact_partial(x), x.dtype)  # its shard-combinable intermediate
    reducekit.benchmark(...), reducekit.plot(rows)
    reducekit.compare("var_mean", [(8192, 4096)], dims=-1)   # your shapes: reducekit vs torch, timed
                                                             # and checked; reducekit.plot draws it
    benchmarks/notebooks/tour.ipynb                          # the tour: strategies, auto, accuracy, ...
    import reducekit.distributed             # DTensor inputs, and reducekit.distributed.sum(shard, group=...)
"""
from __future__ import annotations

import torch  # noqa: F401  (loads libtorch before the extension)

from . import _C  # noqa: F401  (registers torch.ops.reducekit)
from ._registry import MethodInfo, method, methods
from .ops import EXACT_WORDS, exact_partial, exact_round, result_dtype, sum
from .reductions import (all, amax, amin, aminmax, any, argmax, argmin, count_nonzero, linalg, logsumexp, mean,  # noqa: A004
                         nanmean, nansum, prod, std, std_mean, var, var_mean)

__version__ = "0.1.0"

# DTensor support (reducekit/distributed.py) registers itself with DTensor on import. Importing
# torch.distributed.tensor costs about half a second, so reducekit's import does it only when
# DTensor is loaded already; otherwise `import reducekit.distributed` does.
if "torch.distributed.tensor" in __import__("sys").modules:
    from . import distributed  # noqa: F401


def benchmark(*args, **kwargs):
    """Time methods against torch.sum and CUB; see reducekit.bench.benchmark."""
    from .bench import benchmark as _benchmark

    return _benchmark(*args, **kwargs)


def compare(*args, **kwargs):
    """Time reducekit's op against torch's on your shapes and check the values; see reducekit.bench.compare.compare."""
    from .bench.compare import compare as _compare

    return _compare(*args, **kwargs)


def auto_choice(dtype, n: int, cc=None, captured: bool = False) -> dict:
    """What method="auto" runs on CUDA for a whole-tensor sum of n elements of `dtype`: the row of
    the tuning table for compute capability `cc` (90 for an H200; None: the current GPU's), in an
    eager call or (captured=True) inside CUDA graph capture. Returns {"method", "block", "unroll",
    "grid"} (0: the kernel's default). Works on any machine: the table is compiled in."""
    name = str(dtype).removeprefix("torch.")
    if name not in _C.dtypes():
        raise ValueError(f"auto_choice(): dtype={dtype!r}; use one of {', '.join(_C.dtypes())}")
    if cc is None:
        if not torch.cuda.is_available():
            raise ValueError("auto_choice(): cc=None means the current GPU's compute capability, but there is no GPU; "
                             "pass cc=90 for an H200")
        major, minor = torch.cuda.get_device_capability()
        cc = 10 * major + minor
    method, block, unroll, grid = _C.auto_choice(name, int(n), int(cc), bool(captured))
    return {"method": method, "block": block, "unroll": unroll, "grid": grid}


def plot(*args, **kwargs):
    """Plot benchmark or compare rows; see reducekit.plotting.plot."""
    from .plotting import plot as _plot

    return _plot(*args, **kwargs)


# Every operator of core/op_table.h (reducekit._C.op_table()), sum first, by its public name.
OPS = tuple(t["public_name"] for t in _C.op_table())

__all__ = ["sum", "mean", "prod", "amax", "amin", "aminmax", "nansum", "nanmean", "all", "any", "count_nonzero", "var", "std",
           "var_mean", "std_mean", "logsumexp", "argmax", "argmin", "linalg", "OPS", "exact_partial", "exact_round", "EXACT_WORDS", "methods", "method", "MethodInfo", "result_dtype", "benchmark", "compare", "auto_choice", "plot",
           "__version__"]
