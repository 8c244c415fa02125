"""Shared test helpers: fresh random inputs, references and the error bound."""
from __future__ import annotations

import torch

import reducekit

ALL_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
              torch.float16, torch.bfloat16, torch.float32, torch.float64]
FLOAT_DTYPES = [d for d in ALL_DTYPES if d.is_floating_point]
# The foundation issue's sizes: empty, tiny, around a warp, around blocks, 2^k +- 1, past 2^24.
SIZES = [0, 1, 2, 31, 32, 33, 1023, 1025, 4097, 65537, 2**20 + 3, 2**24 + 5]

CUDA = torch.cuda.is_available() and reducekit._C.cuda_built


def acc_dtype(dtype: torch.dtype) -> torch.dtype:
    """The accumulator of the gallery methods (the documented bound uses its epsilon)."""
    if dtype in (torch.float16, torch.bfloat16, torch.float32):
        return torch.float32
    return torch.float64 if dtype == torch.float64 else torch.int64


def random_tensor(n: int, dtype: torch.dtype, device, generator=None) -> torch.Tensor:
    """Fresh random data over the dtype's useful range, never all zeros.

    Floats: normal with a nonzero mean (sums do not cancel to ~0, so relative errors mean
    something), float16 scaled so that the sum stays below its maximum (65504). Integers: the full range of narrow types; int32 full range (its sum fits int64
    for n < 2^32); int64 within +-2^40 so that sums cannot overflow.
    """
    if dtype == torch.bool:
        return torch.rand(n, device=device, generator=generator) < 0.5
    if dtype.is_floating_point:
        x = torch.randn(n, device=device, generator=generator, dtype=torch.float32) + 0.25
        if dtype == torch.float16:  # keep the sum (about n/4 +- 4 sqrt(n)) inside float16's range
            x *= min(1.0, 8192.0 / (0.25 * n + 4 * n**0.5 + 1))
        return x.to(dtype)
    if dtype == torch.int64:
        lo, hi = -(2**40), 2**40
    else:
        info = torch.iinfo(dtype)
        lo, hi = info.min, info.max + 1
    return torch.randint(lo, hi, (n,), device=device, dtype=dtype, generator=generator)


def bound(x: torch.Tensor, ref: float, acc: torch.dtype) -> float:
    """Worst-case error bound of any summation order in `acc`, plus the final rounding to the
    output dtype: (n+1)*eps(acc)*sum|x| + eps(out)*|ref|."""
    n = x.numel()
    abs_sum = x.double().abs().sum().item()
    eps_acc = torch.finfo(acc).eps
    eps_out = torch.finfo(x.dtype).eps if x.dtype in (torch.float16, torch.bfloat16) else 0.0
    b = (n + 1) * eps_acc * abs_sum + eps_out * abs(ref)
    if x.dtype == torch.float64:
        b *= 2  # the float64 reference has an error of the same order
    return b


def assert_sum_ok(result: torch.Tensor, x: torch.Tensor, acc: torch.dtype | None = None, expected_int=None):
    """`result` is torch.sum(x): 0-dim, torch's dtype, on x's device; exact for integers, within
    `bound` of a float64 reference for floats."""
    assert result.dim() == 0, f"result has shape {tuple(result.shape)}, expected ()"
    assert result.dtype == reducekit.result_dtype(x.dtype), f"result dtype {result.dtype}"
    assert result.device == x.device
    if not x.dtype.is_floating_point:
        expected = torch.sum(x).item() if expected_int is None else expected_int
        assert result.item() == expected, f"got {result.item()}, expected {expected} (diff {result.item() - expected})"
        return
    ref = x.double().sum().item()
    got = result.double().item()
    b = bound(x, ref, acc or acc_dtype(x.dtype))
    assert abs(got - ref) <= b, f"got {got!r}, float64 reference {ref!r}, error {abs(got - ref):.3e} > bound {b:.3e}"


def poison_allocator(device) -> None:
    """Fill freed blocks of the caching allocator with NaN-like bytes, so an op that forgets to
    write its output returns garbage instead of a stale correct value or zeros."""
    if torch.device(device).type != "cuda":
        return
    bufs = [torch.full((k,), -1, dtype=torch.int8, device=device) for k in (512, 4096, 65536, 1 << 20)]
    del bufs


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise equality (NaN-safe)."""
    if a.dtype == torch.bool:
        return torch.equal(a, b)
    return torch.equal(a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8))
