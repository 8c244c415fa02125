"""Shared test helpers: seeded inputs, exact references, and error bounds derived from each
method's real accumulation structure.

The float bound. Any summation tree in which every input passes through at most D additions in
an accumulator with unit roundoff u errs by at most gamma_D * sum|x|, gamma_D = D*u / (1 - D*u)
(Higham, Accuracy and Stability of Numerical Algorithms, 4.2). D is the method's per-thread
chain plus the depths of its block and grid trees: small for tree and grid-stride methods
(tens to hundreds at 2^24 elements), the whole chain for the atomic ones. A narrower output
dtype adds one rounding, u_out * |result|. The reference is exact (math.fsum), so it adds at
most one double rounding. This is the bound that catches a dropped block: the (n+1)*eps*sum|x|
bound it replaces allowed returning 0 at 2^24 elements.
"""
from __future__ import annotations

import math
import os
import random
import zlib

import torch

import reducekit

ALL_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
              torch.float16, torch.bfloat16, torch.float32, torch.float64]
FLOAT_DTYPES = [d for d in ALL_DTYPES if d.is_floating_point]
# Empty, tiny, around a warp, around blocks, 2^k +- 1, past 2^24.
SIZES = [0, 1, 2, 31, 32, 33, 1023, 1025, 4097, 65537, 2**20 + 3, 2**24 + 5]

CUDA = torch.cuda.is_available() and reducekit._C.cuda_built

# One seed per test session: fresh data every run, reproducible with REDUCEKIT_SEED=<seed>
# (conftest prints it in the header and in every failure report).
BASE_SEED = int(os.environ.get("REDUCEKIT_SEED") or random.SystemRandom().randrange(2**31))


def seed_for(*key) -> int:
    """The seed of the data named by `key` (any reprs), derived from the session seed."""
    return (zlib.crc32(repr(key).encode()) ^ BASE_SEED) & 0x7FFFFFFF


def generator(device, *key) -> torch.Generator:
    """A torch.Generator on `device` seeded by seed_for(*key)."""
    dev = torch.device(device)
    return torch.Generator(device=dev).manual_seed(seed_for(*key))


def random_tensor(n: int, dtype: torch.dtype, device, generator: torch.Generator | None = None,
                  mean: float = 1.0) -> torch.Tensor:
    """Seeded random data over the dtype's useful range, never all zeros.

    Floats: normal with mean `mean` and deviation 1 (about 16% negative at mean 1): the sum grows
    like n*mean, so dropping any block of elements moves it by far more than the bound. float16 is
    scaled so that the sum stays inside float16's range. Integers: the full range of narrow types;
    int64 within +-2^40 so that sums cannot overflow (wrap-around has its own tests).
    """
    if generator is None:
        generator = torch.Generator(device=torch.device(device)).manual_seed(seed_for(n, str(dtype), "random_tensor"))
    if dtype == torch.bool:
        return torch.rand(n, device=device, generator=generator) < 0.5
    if dtype.is_floating_point:
        # float64 draws its own 53-bit values: float32 values cast up sum exactly in float64 far too
        # often, which would hide any change of summation order.
        x = torch.randn(n, device=device, generator=generator, dtype=torch.float64 if dtype == torch.float64 else torch.float32)
        x += mean
        if dtype == torch.float16:  # keep the sum (about n*mean +- 4 sqrt(n)) inside float16's range
            x *= min(1.0, 16384.0 / (abs(mean) * n + 4 * n**0.5 + 1))
        return x.to(dtype)
    if dtype == torch.int64:
        lo, hi = -(2**40), 2**40
    else:
        info = torch.iinfo(dtype)
        lo, hi = info.min, info.max + 1
    return torch.randint(lo, hi, (n,), device=device, dtype=dtype, generator=generator)


def cancelling_tensor(n: int, device, generator: torch.Generator) -> torch.Tensor:
    """float32 data whose sum is small but whose partial sums are large: n/4 values of magnitude
    1e6..1e7, their n/4 negatives, and n/2 values in [0, 1), shuffled. The exact sum is about n/4,
    so half an ulp of it is tiny next to the rounding of any float32 partial sum (ulps of 1..8):
    a float32 accumulator misses the float64-accumulator bound by orders of magnitude."""
    q = n // 4
    big = torch.empty(q, device=device, dtype=torch.float32).uniform_(1e6, 1e7, generator=generator)
    small = torch.rand(n - 2 * q, device=device, generator=generator)
    x = torch.cat([big, -big, small])
    return x[torch.randperm(n, device=device, generator=generator)]


def torch_result_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype torch.sum returns for this input dtype (asked of torch itself)."""
    return torch.sum(torch.zeros(1, dtype=dtype)).dtype


def exact_sum(x: torch.Tensor) -> float:
    """The exact sum of x's values, correctly rounded to float64 (math.fsum)."""
    return math.fsum(x.detach().double().reshape(-1).cpu().tolist())


# ------------------------------------------------------------------------------------------------
# The accumulation structure of each method (csrc/cuda/**/*.cu), as the largest number D of
# additions any one input passes through.

GALLERY_BLOCK = 256        # kBlock of trees.cu, warp.cu, grid_stride.cu, atomics.cu
GALLERY_WAVE = 2048 // 256  # blocks per SM of the bounded grids
BLOCK_REDUCE = 10          # common.cuh block_reduce: 5 shuffle steps per warp + 5 across warps
CUB_SLACK = 128            # CUB's item loop, block reduction and single-block second pass


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _finish(grid: int, threads: int = 1024) -> int:
    """finish_partials (or a last block of `threads`): a chain over the partials, then a block."""
    return 0 if grid <= 1 else _ceil(grid, threads) + BLOCK_REDUCE


def _device_props(device) -> tuple[int, int]:
    p = torch.cuda.get_device_properties(torch.device(device))
    return p.multi_processor_count, p.major * 10 + p.minor


def single_pass_depth(n: int, itemsize: int, block: int, unroll: int, grid: int, sms: int) -> int:
    """single_pass.cu: per-thread chain of 16-byte vectors (full sweeps of the grid, then an even
    share of the last sweep), head/tail elements, the block reduce, the last block's combine."""
    kvec = 16 // itemsize
    nvec = _ceil(n, kvec)
    needed = max(1, _ceil(nvec, block * unroll))
    g_lo = grid if grid > 0 else min(needed, sms)                       # fewest blocks: longest chains
    g_hi = grid if grid > 0 else min(needed, sms * max(1, 2048 // block))  # most blocks: longest combine
    vecs = unroll * (nvec // (g_lo * block * unroll) + 1)
    return vecs * kvec + 2 + BLOCK_REDUCE + _finish(g_hi, block)


def resolve(method: str, n: int, dtype: torch.dtype, device, config=None, captured: bool = False):
    """(method, config) that really runs: `auto` on CUDA is looked up in the tuning table (the
    same table the op reads; `captured`: inside CUDA graph capture, which may pick another
    kernel), on CPU it is the CPU kernel ("cpu")."""
    if method == "exact":  # correctly rounded: no accumulation error, one rounding (out_round)
        return "exact", None
    if torch.device(device).type == "cpu":
        return "cpu", None
    if method == "auto":
        name, *cfg = reducekit._C.auto_choice(str(dtype).removeprefix("torch."), n, _device_props(device)[1], captured)
        return name, tuple(cfg)
    return method, config


def depth(method: str, n: int, dtype: torch.dtype, device, config: tuple[int, int, int] | None = None) -> int:
    """Upper bound on the additions any input passes through in `method`'s sum of n elements."""
    method, config = resolve(method, n, dtype, device, config)
    if n <= 1 or method == "exact":
        return 0
    itemsize = torch.empty((), dtype=dtype).element_size()
    if method == "cpu":  # csrc/torch/library.cpp cpu_sum: 16 lanes per 2^16-element chunk, chunks in a chain
        return _ceil(min(n, 1 << 16), 16) + 15 + 4 + _ceil(n, 1 << 16)
    sms, _ = _device_props(device)
    if method == "single_pass":
        block, unroll, grid = config if config else (0, 0, 0)
        return single_pass_depth(n, itemsize, block or 512, unroll or 4, grid, sms)
    b = GALLERY_BLOCK
    bounded = min(_ceil(n, b), sms * GALLERY_WAVE)     # grid of the grid-stride methods
    chain = _ceil(n, bounded * b)                       # their per-thread chain
    if method in ("tree_interleaved", "tree_strided", "tree_sequential", "shuffle", "butterfly", "cg"):
        return BLOCK_REDUCE + _finish(_ceil(n, b))
    if method in ("first_add", "warp_unroll", "full_unroll", "cg_unroll2"):
        return 1 + BLOCK_REDUCE + _finish(_ceil(n, 2 * b))
    if method == "coarsened":
        return 8 + BLOCK_REDUCE + _finish(_ceil(n, 8 * b))
    if method == "two_pass":
        return chain + BLOCK_REDUCE + _finish(bounded)
    if method == "vectorized":
        kvec = 16 // itemsize
        g = min(_ceil(_ceil(n, kvec), b), sms * GALLERY_WAVE)
        return kvec * _ceil(_ceil(n, kvec), g * b) + 2 + BLOCK_REDUCE + _finish(g)
    if method == "host_final":
        return chain + BLOCK_REDUCE + bounded           # the host adds the partials in a chain
    # The atomic finishes keep the long chain they really have: the order atomics land in is free.
    if method == "atomic_global":
        return n
    if method == "atomic_block":
        return b + _ceil(n, b)
    if method == "warp_atomic":
        return chain + 5 + bounded * (b // 32)
    if method in ("block_atomic", "lock"):
        return chain + BLOCK_REDUCE + bounded
    if method == "cub_block":
        return 12 + _ceil(n, b)
    if method == "cub_device":
        return _ceil(n, sms * 128) + CUB_SLACK
    raise ValueError(f"no accumulation model for method {method!r}")


# Float atomics flush subnormal operands and results to zero in hardware (float32 atomicAdd, in
# global and in shared memory): each atomic add may lose one value below float32's smallest normal.
FLUSHING_ATOMICS = {"atomic_global", "atomic_block", "warp_atomic", "block_atomic", "cub_block"}


def acc_dtype(method: str, dtype: torch.dtype) -> torch.dtype:
    """The accumulator a resolved method really uses: single_pass and the CPU kernel sum float32
    in float64; every method accumulates float16/bfloat16 in float32 and float64 in float64; the
    gallery accumulates float32 in float32."""
    if method == "exact" or dtype == torch.float64 or (dtype == torch.float32 and method in ("single_pass", "cpu")):
        return torch.float64
    return torch.float32


def unit_roundoff(dtype: torch.dtype) -> float:
    return torch.finfo(dtype).eps / 2


def sum_bound(x: torch.Tensor, method: str, ref: float, abs_sum: float | None = None,
              config: tuple[int, int, int] | None = None, captured: bool = False) -> float:
    """Largest error `method` may make on x, from its accumulation structure (module docstring)."""
    n = x.numel()
    if abs_sum is None:
        abs_sum = x.detach().double().abs().sum().item()
    real, config = resolve(method, n, x.dtype, x.device, config, captured)
    acc = acc_dtype(real, x.dtype)
    d = depth(real, n, x.dtype, x.device, config)
    du = d * unit_roundoff(acc)
    tree = du / (1 - du) * abs_sum if du < 1 else math.inf
    if real in FLUSHING_ATOMICS and acc == torch.float32:
        tree += (d + 1) * torch.finfo(torch.float32).tiny
    out_round = unit_roundoff(x.dtype) * (abs(ref) + tree) if acc != x.dtype else 0.0
    return tree + out_round + unit_roundoff(torch.float64) * abs(ref)


def assert_sum_ok(result: torch.Tensor, x: torch.Tensor, method: str = "auto", expected_int=None, ref: float | None = None,
                  abs_sum: float | None = None, config=None, seed_key=None, captured: bool = False):
    """`result` is torch.sum(x) computed by `method`: 0-dim, torch.sum's dtype, on x's device;
    integers exact; floats within sum_bound of the exact sum."""
    where = f" (method {method}, n={x.numel()}, dtype {x.dtype}, data seed key {seed_key!r}, REDUCEKIT_SEED={BASE_SEED})"
    assert result.dim() == 0, f"result has shape {tuple(result.shape)}, expected (){where}"
    assert result.dtype == torch_result_dtype(x.dtype), f"result dtype {result.dtype}, torch.sum gives {torch_result_dtype(x.dtype)}{where}"
    assert result.device == x.device, where
    if not x.dtype.is_floating_point:
        expected = torch.sum(x.cpu()).item() if expected_int is None else expected_int
        got = result.item()
        assert got == expected, f"got {got}, expected {expected} (diff {got - expected}){where}"
        return
    if ref is None:
        ref = exact_sum(x)
    got = result.double().item()
    b = sum_bound(x, method, ref, abs_sum, config, captured)
    assert abs(got - ref) <= b, f"got {got!r}, exact {ref!r}, error {abs(got - ref):.3e} > bound {b:.3e}{where}"


def poison_allocator(device) -> None:
    """Fill freed blocks of the caching allocator with 0xff bytes (NaN for floats, -1 for
    integers), so an op that forgets to write its output, or reads past its input, returns
    garbage instead of a stale correct value or zeros."""
    if torch.device(device).type != "cuda":
        return
    bufs = [torch.full((k,), -1, dtype=torch.int8, device=device) for k in (512, 4096, 65536, 1 << 20, 1 << 24)]
    del bufs


def gamma(d: int, u: float) -> float:
    """Higham's gamma_d = d u / (1 - d u): the relative error bound of d roundings of unit roundoff u."""
    return d * u / (1 - d * u)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise equality (NaN-safe)."""
    if a.dtype == torch.bool:
        return torch.equal(a, b)
    # contiguous copies: reshape(-1) of an empty expanded tensor keeps a zero stride view() refuses
    return torch.equal(a.contiguous().reshape(-1).view(torch.uint8), b.contiguous().reshape(-1).view(torch.uint8))


def engine_order_sum(vals, g: int, acc):
    """Rows of a numpy array reduced in the engine's documented order (csrc/engine/plan.h): lanes of
    g values, each summed from 0 in index order in the accumulator dtype `acc`, the lane sums
    combined by a perfect pairwise tree (padded with zeros to a power of two)."""
    import numpy as np
    n = vals.shape[-1]
    lanes = []
    for l0 in range(0, n, g):
        s = np.zeros(vals.shape[:-1], dtype=acc)
        for k in range(l0, min(n, l0 + g)):
            s = (s + vals[..., k].astype(acc)).astype(acc)
        lanes.append(s)
    while len(lanes) > 1:
        if len(lanes) % 2:
            lanes.append(np.zeros_like(lanes[0]))
        lanes = [(lanes[i] + lanes[i + 1]).astype(acc) for i in range(0, len(lanes), 2)]
    return lanes[0]
