"""Accuracy bounds for every op, against exact (or float64 two-pass) references, on data built so that
a narrower accumulator than the documented one fails: large cancelling sums (1e6..1e7 and their
negatives beside small values), a large mean beside a small spread (var), values near 1 (prod).

The bound of each op follows from the engine's order (engine/reduce_ops.h): a slice of n values is
cut into lanes of G = 64 / itemsize values summed in order, and the lanes are combined by a
pairwise tree: every value passes through at most D = G + ceil(log2(n / G)) + 1 additions in the
op's accumulator of unit roundoff u, so a sum errs by at most gamma_D * sum|x| (Higham 4.2), and
the result's rounding adds u_out * |result|. The accumulators are the documented ones (ACC): a
narrower one makes the error orders of magnitude larger than the bound on this data.
"""
from __future__ import annotations

import math

import pytest
import torch

import reducekit
import special_values as sv
from helpers import exact_sum, gamma, generator

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
U = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8, torch.float32: 2.0**-24, torch.float64: 2.0**-53}


def acc_u(op: str, dtype: torch.dtype) -> float:
    """Unit roundoff of the accumulator each op documents: sums, means, the 1- and 2-norms and
    Welford's state accumulate 16-bit floats in float32 (Welford: float64) and float32 in float64;
    prod, logsumexp and the other p-norms in the value type (float32 for 16-bit and float32)."""
    wide = dtype == torch.float64 or (dtype == torch.float32 and op in ("sum", "nansum", "mean", "nanmean", "norm1", "norm2"))
    if op == "var":
        return 2.0**-53
    return 2.0**-53 if wide else 2.0**-24


def depth(n: int, dtype: torch.dtype) -> int:
    g = 64 // torch.empty((), dtype=dtype).element_size()
    return g + math.ceil(math.log2(max(1, -(-n // g)))) + 1


def cancelling(n: int, dtype, device, key):
    """Half values of magnitude 1e6..1e7 (1e2..1e3 for float16) with their negatives, half in [0, 1):
    the exact sum is about n/4, the partial sums are large."""
    g = generator(device, "acc", key, n, str(dtype))
    big = 1e3 if dtype == torch.float16 else 1e7
    q = n // 4
    b = torch.empty(q, device=device, dtype=torch.float64).uniform_(big / 10, big, generator=g)
    small = torch.rand(n - 2 * q, device=device, generator=g, dtype=torch.float64) * (0.05 if dtype == torch.float16 else 1)
    x = torch.cat([b, -b, small])  # float16: the sum (about n/40) stays inside its range
    x = x[torch.randperm(n, device=device, generator=g)].to(dtype)
    return x


SIZES = [4099, 2**16 + 3, 2**20 + 1]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_sums_and_means_on_cancelling_data(device, dtype):
    """sum, nansum (with NaNs placed among the values), mean and nanmean within gamma_D * sum|x| of
    the exact sum: a float32 accumulator for float32 data errs by about 1e3 here, the bound is about 1e-3."""
    for n in SIZES:
        x = cancelling(n, dtype, device, "sums")
        s_abs = x.double().abs().sum().item()
        ref = exact_sum(x)
        u_out = U[dtype]
        for op in ("sum", "nansum", "mean", "nanmean"):
            xx = x
            if op.startswith("nan"):
                xx = x.clone()
                xx[torch.arange(7, n, 997, device=device)] = float("nan")
            keep = ~xx.isnan()
            r = exact_sum(xx[keep])
            m = int(keep.sum())
            b = gamma(depth(n, dtype), acc_u(op, dtype)) * xx[keep].double().abs().sum().item()
            got = float(getattr(reducekit, op)(xx))
            if op.endswith("mean"):
                r, b = r / m, b / m + acc_u(op, dtype) * abs(r / m)
            b += u_out * abs(r)
            assert abs(got - r) <= b, f"{op} {dtype} n={n}: error {abs(got - r):.3e} > bound {b:.3e} (got {got}, exact {r})"
        assert s_abs > 0 and ref == ref


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_var_std_large_mean(device, dtype):
    """var and std on data of mean 1e4 (1e2 for 16-bit) and spread 1: the shifted runs and Chan's
    merges keep the error at the spread's scale; a sum of squares minus a squared sum (or a float32
    state for float32) loses every digit here."""
    mean = 1e2 if dtype in (torch.float16, torch.bfloat16) else 1e4
    for n in (4099, 2**16 + 3, 2**20 + 1):
        g = generator(device, "var", n, str(dtype))
        x = (torch.randn(n, device=device, generator=g, dtype=torch.float64) + mean).to(dtype)
        xd = x.double()
        m = exact_sum(xd) / n
        ref = math.fsum(((xd - m) ** 2).cpu().tolist()) / (n - 1)
        # the runs are two-pass in the value type: each value's deviation carries its value-type
        # rounding (u_v * |x|), squared and summed: 2 * u_v * mean / spread relative, plus the merges
        u_v = 2.0**-53 if dtype == torch.float64 else 2.0**-24
        rel = 2 * u_v * mean * 4 + gamma(depth(n, dtype), 2.0**-53) * 4 + 4 * U[dtype]
        v = float(reducekit.var(x))
        s = float(reducekit.std(x))
        assert abs(v - ref) <= rel * ref, f"var {dtype} n={n}: {v} vs {ref} (rel {abs(v - ref) / ref:.2e} > {rel:.2e})"
        assert abs(s - math.sqrt(ref)) <= rel * math.sqrt(ref), f"std {dtype} n={n}: {s} vs {math.sqrt(ref)}"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_logsumexp_prod_and_norms(device, dtype):
    """logsumexp of large values (a naive exp overflows), prod of values near 1, and vector_norm of
    every ord (0, 0.5, 1, 2, 3, 3.5, -1, inf, -inf) on cancelling data, against float64 references
    within the accumulator's bound."""
    n = 2**16 + 3
    g = generator(device, "lse", str(dtype))
    x = (torch.randn(n, device=device, generator=g, dtype=torch.float64) * 3 + 80).to(dtype)
    xd = x.double()
    ref = (xd.max() + torch.log(torch.exp(xd - xd.max()).sum())).item()
    u = acc_u("logsumexp", dtype)
    # s = sum exp(x - m) >= 1 with terms <= 1: relative error gamma_D + 2^-21 (the GPU's ex2.approx),
    # and log(s) turns it into an absolute error; plus the result's rounding
    b = gamma(depth(n, dtype), u) + 2.0**-21 + 2 * U[dtype] * abs(ref)
    got = float(reducekit.logsumexp(x, 0))
    assert abs(got - ref) <= b, f"logsumexp {dtype}: {got} vs {ref} (err {abs(got - ref):.2e} > {b:.2e})"

    p = (1 + 1e-3 * torch.randn(4099, device=device, generator=g, dtype=torch.float64)).to(dtype)
    pref = math.exp(math.fsum(math.log(v) for v in p.double().cpu().tolist()))
    pb = (p.numel() * acc_u("prod", dtype) + U[dtype]) * abs(pref)
    got = float(reducekit.prod(p))
    assert abs(got - pref) <= pb, f"prod {dtype}: {got} vs {pref} (err {abs(got - pref):.2e} > {pb:.2e})"

    c = cancelling(n, dtype, device, "norms")
    a = c.double().abs()
    for o in (0, 0.5, 1, 2, 3, 3.5, -1, math.inf, -math.inf):
        got = float(reducekit.linalg.vector_norm(c, o))
        if o == 0:
            assert got == float(torch.tensor(float((c != 0).sum())).to(dtype)), f"norm0 {dtype}"
            continue
        if math.isinf(o):
            assert got == float(a.max() if o > 0 else a.min()), f"norm{o} {dtype}"
            continue
        terms = (a ** o).cpu().tolist()
        sref = math.fsum(terms)
        ref = sref ** (1 / o)
        if ref >= torch.finfo(dtype).max:  # past the result dtype's range (float16's 0.5-norm here)
            assert got == math.inf, f"norm{o} {dtype}: {got}, the reference {ref} is past the dtype's range"
            continue
        key = "norm1" if o == 1 else "norm2" if o == 2 else "normp"
        u = acc_u(key, dtype)
        # the sum of positive terms errs by gamma_D (relative), each term by its pow (a few ulps of
        # the value type, p - 1 products for integer p); the root divides that by |p|, and adds its
        # own rounding and the result's
        rel_sum = gamma(depth(n, dtype), u) + (abs(o) + 2) * (2.0**-53 if dtype == torch.float64 or key != "normp" else 2.0**-24)
        rel = rel_sum / abs(o) + 4 * (2.0**-53 if dtype == torch.float64 else 2.0**-24) + U[dtype]
        sub = torch.finfo(dtype).smallest_normal * torch.finfo(dtype).eps  # a subnormal result's spacing
        assert abs(got - ref) <= rel * abs(ref) + sub, f"norm{o} {dtype}: {got} vs {ref} (rel {abs(got - ref) / ref:.2e} > {rel:.2e})"


INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", INTS, ids=lambda d: str(d).removeprefix("torch."))
def test_integer_ops_over_the_full_range(device, dtype):
    """Every op that takes integers (torch's verdict: an op torch refuses for the dtype is skipped)
    on values spread over the dtype's whole range, compared exactly with torch: a narrower compare
    or accumulator (int64 extremes read as int32, an int8 sum in int8) changes the answer, where
    OpInfo's small samples agree. Full, rows and columns, contiguous and transposed; the extreme
    values sit at random positions, and sums and products wrap as torch's do."""
    info = torch.iinfo(dtype)
    g = generator(device, "int-range", str(dtype))
    shapes = [((5001,), None), ((37, 259), [1]), ((259, 37), [0]), ((7, 33, 65), [0, 2])]
    checked = 0
    for shape, dims in shapes:
        x = torch.randint(info.min, info.max, shape, device=device, generator=g, dtype=torch.int64).to(dtype)
        flat = x.view(-1)
        pos = torch.randperm(flat.numel(), device=device, generator=g)[:2]
        flat[pos[0]], flat[pos[1]] = info.max, info.min
        for layout in ("contiguous", "transposed"):
            y = x if layout == "contiguous" or x.dim() < 2 else x.transpose(0, -1).contiguous().transpose(0, -1)
            for op in reducekit.OPS:
                try:
                    exp = sv.call_op(torch, op, y, dims)
                except (RuntimeError, TypeError, NotImplementedError):
                    continue  # torch has no such op for the dtype or dims (argmax over two dims)
                got = sv.call_op(reducekit, op, y, dims)
                exps = exp if isinstance(exp, tuple) else (exp,)
                gots = got if isinstance(got, tuple) else (got,)
                for k, (a, b) in enumerate(zip(gots, exps)):
                    assert a.dtype == b.dtype and a.shape == b.shape, f"{op} {shape} {dims} {layout} output {k}"
                    if b.is_floating_point():
                        # a float result of integer input (logsumexp, in the default float dtype)
                        torch.testing.assert_close(a, b, rtol=4 * torch.finfo(b.dtype).eps, atol=0,
                                                   msg=f"{op} {shape} {dims} {layout} output {k}")
                    else:
                        assert torch.equal(a, b), f"{op} {shape} dims={dims} {layout} output {k}: {a.flatten()[:4].tolist()} vs torch {b.flatten()[:4].tolist()}"
                checked += 1
    assert checked >= 4 * 8, checked  # at least the extremes, sums, prod and counts ran everywhere


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=lambda d: str(d).removeprefix("torch."))
def test_dtype_argument_accumulates_in_the_wider_type(device, dtype):
    """dtype=torch.float64 on a narrower input: the op runs in float64 (torch reads the input as
    float64 first), so a float32 (or 16-bit) intermediate must not show. Four factors of 1e30 side
    by side (in one 64-byte lane) overflow a float32 product (1e60 > 3.4e38) and fit float64 (1e120)
    in any order; cancelling sums lose everything but their largest terms in float32. Both within
    float64's bound here."""
    g = generator(device, "dtype-arg", str(dtype))
    n = 4099
    big = 1e30 if dtype != torch.float16 else 1e3  # float16 holds up to 65504: its factors are smaller
    k = 4
    exps = torch.randint(-2, 3, (n - 2 * k,), device=device, generator=g).to(torch.float64)
    factors = torch.cat([torch.full((k,), big, device=device, dtype=torch.float64),
                         torch.full((k,), 1 / big, device=device, dtype=torch.float64), 2.0 ** exps])
    x_prod = factors.to(dtype)
    x_sum = cancelling(n, dtype, device, "dtype-arg")
    for op, x in (("prod", x_prod), ("sum", x_sum), ("nansum", x_sum), ("mean", x_sum), ("nanmean", x_sum)):
        got = getattr(reducekit, op)(x, dtype=torch.float64)
        ref = getattr(torch, op)(x.double())
        assert got.dtype == torch.float64
        if op == "prod":
            bound = n * 2.0**-53 * abs(float(ref))  # n - 1 roundings of a float64 product
        else:
            bound = gamma(depth(n, torch.float64), 2.0**-53) * float(x.double().abs().sum()) / (n if "mean" in op else 1)
        assert abs(float(got) - float(ref)) <= bound, f"{op} {dtype} dtype=float64: {float(got)!r}, float64 {float(ref)!r}, bound {bound:.3e}"
