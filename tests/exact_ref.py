"""Exact references for method="exact": the exact sum of a float tensor as a Fraction (integer
arithmetic, any n), and its correct rounding to a float dtype (to nearest, ties to even).

Why not math.fsum: fsum returns the float64 nearest to the exact sum, and rounding that again to
float32 (or 16 bits) is a double rounding, which is wrong when the exact sum lies just off a
float32 midpoint and fsum's float64 lands on the midpoint. The sum of n values can carry any
number of bits, so no width argument saves it; these references round the exact rational once.
For a float64 result fsum's answer is the correct one, and the tests use both as a cross-check.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import torch

# (precision incl. the implicit bit, exponent of the smallest normal) per float dtype.
FORMATS = {torch.float16: (11, -14), torch.bfloat16: (8, -126), torch.float32: (24, -126), torch.float64: (53, -1022)}


def specials(x: torch.Tensor):
    """'nan', 'inf', '-inf' or None: what IEEE addition (and torch.sum) makes of x's non-finite values."""
    x = x.detach().double().reshape(-1).cpu()
    nan = bool(torch.isnan(x).any())
    pinf = bool((x == math.inf).any())
    ninf = bool((x == -math.inf).any())
    if nan or (pinf and ninf):
        return "nan"
    if pinf:
        return "inf"
    return "-inf" if ninf else None


def exact_sum(x: torch.Tensor) -> Fraction:
    """The exact sum of the finite values of x (every float dtype converts to float64 exactly)."""
    a = x.detach().double().reshape(-1).cpu().numpy()
    a = a[np.isfinite(a)]
    if a.size == 0:
        return Fraction(0)
    m, e = np.frexp(a)                      # a = m * 2^e, 0.5 <= |m| < 1
    mi = np.ldexp(m, 53).astype(np.int64)   # exact: 53-bit integers
    sh = e.astype(np.int64) - 53 + 1127     # a = mi * 2^sh * 2^-1127, sh >= 1 for every double
    hi, lo = mi >> 26, mi & ((1 << 26) - 1)  # int64 group sums cannot overflow below 2^36 values
    total = 0
    for s in np.unique(sh):
        sel = sh == s
        total += ((int(hi[sel].sum()) << 26) + int(lo[sel].sum())) << int(s)
    return Fraction(total, 1 << 1127)


def round_fraction(fr: Fraction, dtype: torch.dtype) -> float:
    """fr rounded to dtype, to nearest, ties to even, beyond the range to an infinity; exact zero
    is +0.0. Returned as a Python float (exact: every value of dtype is a float64)."""
    if fr == 0:
        return 0.0
    p, emin = FORMATS[dtype]
    sign = -1.0 if fr < 0 else 1.0
    a = abs(fr)
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2^e <= a < 2^(e+2)
    if Fraction(2) ** (e + 1) <= a:
        e += 1
    lsb = max(e, emin) - p + 1
    q = a / Fraction(2) ** lsb
    n = q.numerator // q.denominator
    rem = q - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    v = Fraction(n) * Fraction(2) ** lsb
    if v > Fraction(torch.finfo(dtype).max):
        return sign * math.inf
    return sign * float(v)


def correctly_rounded(x: torch.Tensor, dtype: torch.dtype | None = None) -> float:
    """The correctly rounded sum of x in dtype (x's own by default), NaN and infinities as torch."""
    dtype = dtype or x.dtype
    s = specials(x)
    if s is not None:
        return float(s)
    return round_fraction(exact_sum(x), dtype)


def same_value(got: float, want: float) -> bool:
    """Equal as values, NaN equal to NaN, and a zero's sign compared too."""
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


FAMILIES = ("normal", "mean1e4", "uniform", "wide", "cancel", "equal", "subnormal", "halfway", "gradient", "int2e20")


def family_tensor(family: str, n: int, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    """Seeded data of one family (CPU), n values of dtype:
    normal (mean 1), mean1e4 (normal plus 1e4), uniform [0, 1); the adversarial ones: wide
    (magnitudes over the dtype's whole exponent range, subnormals included, both signs), cancel
    (1e30 / -1e30 pairs, scaled to the dtype's range, around small values, shuffled), equal (one
    value repeated), subnormal (only subnormals), halfway (values whose sum lies near rounding
    midpoints of the dtype: 1 plus multiples of a quarter ulp), gradient (|x| log-uniform in
    [1e-8, 1e3], random signs; float16 divided by 64), int2e20 (integers in [-1000, 1000] times 2^20;
    float16 times 2^-4): the exact issue's families (issue 22)."""
    fi = torch.finfo(dtype)
    if family == "normal":
        x = torch.randn(n, generator=gen, dtype=torch.float64) + 1
    elif family == "mean1e4":
        x = torch.randn(n, generator=gen, dtype=torch.float64) + 1e4
        if dtype == torch.float16:
            x = x / 16
    elif family == "uniform":
        x = torch.rand(n, generator=gen, dtype=torch.float64)
    elif family == "wide":
        lo = math.log2(fi.smallest_normal) - {torch.float16: 10, torch.bfloat16: 7, torch.float32: 23, torch.float64: 52}[dtype]
        hi = math.log2(fi.max) - 4 - math.ceil(math.log2(n + 1))  # the sum stays finite (overflow has its own tests)
        e = torch.randint(int(lo), int(hi), (n,), generator=gen).double()
        x = torch.randn(n, generator=gen, dtype=torch.float64) * torch.pow(2.0, e)
    elif family == "cancel":
        big = 1e30 if dtype in (torch.float32, torch.bfloat16, torch.float64) else 3e4
        k = n // 3
        b = (torch.rand(k, generator=gen, dtype=torch.float64) + 0.5) * big
        small = torch.randn(n - 2 * k, generator=gen, dtype=torch.float64)
        x = torch.cat([b, -b, small])
        x = x[torch.randperm(n, generator=gen)]
    elif family == "equal":
        v = float(torch.randn(1, generator=gen, dtype=torch.float64)) * (1 if dtype == torch.float16 else 1e3)
        x = torch.full((n,), v, dtype=torch.float64)
    elif family == "subnormal":
        x = (torch.rand(n, generator=gen, dtype=torch.float64) - 0.5) * fi.smallest_normal
    elif family == "gradient":
        mag = torch.pow(10.0, torch.rand(n, generator=gen, dtype=torch.float64) * 11 - 8)
        x = torch.where(torch.rand(n, generator=gen) < 0.5, -mag, mag)
        if dtype == torch.float16:
            x = x / 64
    elif family == "int2e20":
        x = torch.randint(-1000, 1001, (n,), generator=gen).double() * (2.0**-4 if dtype == torch.float16 else 2.0**20)
    elif family == "halfway":
        q = torch.randint(-3, 4, (n,), generator=gen).double() * (fi.eps / 4)
        x = torch.where(torch.arange(n) % 2 == 0, torch.ones(n, dtype=torch.float64), q)
    else:
        raise ValueError(family)
    return x.to(dtype)
