"""Property-based tests: reducekit.sum(x, method) behaves like torch.sum(x) on drawn inputs.

Inputs (strategies.py): ranks 0-4 with zero-size dims, every dtype, views with strides, storage
offsets, expanded (stride-0) dims, channels_last (as strides and after .contiguous(memory_format=
channels_last)) and permutations, and values with extremes: nonzero means, +-max, tiny,
subnormals, +-0, +-inf, NaN, float16 sums past 65504, int64 sums that wrap, narrow integers over
their full range.

The oracle (check_sum): torch.sum's dtype, shape () and device; integers equal to torch.sum on
the CPU (and to the wrapped exact sum); floats:
  - a NaN, or both infinities, in the input: NaN; one infinity only: that infinity (or NaN where
    the finite rest may overflow the accumulator to the other infinity);
  - if sum|x| (plus the method's error bound) exceeds the accumulator's finite range, intermediate
    overflow is implementation-defined (torch differs too): any non-finite result, or a finite one
    within the bound;
  - else if the exact sum rounds past the result dtype's largest finite value (|sum| >= max +
    ulp(max)/2, 65520 for float16): inf of its sign, and
  - else: within helpers.sum_bound of the exact sum; near the overflow threshold (within the
    bound) both are fine;
  - a zero result is +0.0 (torch's sums start from +0.0, so it never returns -0.0).
Every definite requirement is also checked against torch.sum's own result on the CPU (where
torch's accumulator cannot overflow), so a mistake in the oracle shows up as such.

The drawn tests are parametrized by dtype, so that every dtype gets its own example budget; the
method is drawn from those registered for the device ("auto" and "exact" on the CPU). A failure prints
the drawn method and Case (strategies.py) and a @reproduce_failure blob; the data comes from the
Case's own seed, not from REDUCEKIT_SEED. Hypothesis keeps failing examples in .hypothesis/ in the
working directory and replays them first on the next run.
Settings profiles (REDUCEKIT_HYPOTHESIS_PROFILE): "ci" (the default: 100 examples per dtype),
"h200" (400 per dtype, for the GPU run), "dev" (10, quick local iteration), "soak" (3000).
"""
from __future__ import annotations

import math
import os
from fractions import Fraction

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import event as _event
from hypothesis import note as _note
from hypothesis.control import currently_in_test_context
from hypothesis import strategies as st

import reducekit
from exact_ref import FAMILIES, correctly_rounded, family_tensor, same_value
from helpers import ALL_DTYPES, acc_dtype, assert_sum_ok, poison_allocator, resolve, same_bits, sum_bound, torch_result_dtype
from strategies import Case, build, cases

_COMMON = dict(deadline=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=100, **_COMMON)
settings.register_profile("h200", max_examples=400, **_COMMON)
settings.register_profile("dev", max_examples=10, **_COMMON)
settings.register_profile("soak", max_examples=3000, **_COMMON)
PROFILE = settings.get_profile(os.environ.get("REDUCEKIT_HYPOTHESIS_PROFILE", "ci"))


def event(label: str) -> None:
    """hypothesis.event inside a drawn example (statistics), nothing in the plain tests."""
    if currently_in_test_context():
        _event(label)


def note(text: str) -> None:
    if currently_in_test_context():
        _note(text)


def overflow_threshold(dtype: torch.dtype) -> Fraction:
    """Smallest magnitude that rounds to inf in `dtype` (round to nearest even): max + ulp(max)/2."""
    fi = torch.finfo(dtype)
    eps, mx = Fraction(fi.eps), Fraction(fi.max)
    return mx + eps * mx / (2 * (2 - eps))  # ulp(max) = eps * 2^emax, max = (2 - eps) * 2^emax


def exact_fraction(vals: list[float]) -> Fraction:
    """The exact sum of finite floats (math.fsum raises OverflowError past float64's range)."""
    scale = 2**1074
    return Fraction(sum(n * (scale // d) for n, d in (v.as_integer_ratio() for v in vals)), scale)


def describe(x: torch.Tensor, method: str) -> str:
    return (f"method={method} dtype={x.dtype} shape={tuple(x.shape)} strides={x.stride()} "
            f"storage_offset={x.storage_offset()} numel={x.numel()} device={x.device}")


def _abs_sum(vals) -> float:
    """sum|v| correctly rounded to float64, inf past float64's range."""
    try:
        return math.fsum(abs(v) for v in vals)
    except OverflowError:
        return math.inf


def _acc_may_overflow(x: torch.Tensor, method: str, abs_sum: float, bound: float | None = None) -> bool:
    """Whether some partial sum of `method`'s accumulator may overflow: sum|x| plus the rounding
    error of the partial sums reaches its largest finite value."""
    if bound is None:
        bound = sum_bound(x, method, 0.0, abs_sum) if math.isfinite(abs_sum) else math.inf
    acc = acc_dtype(resolve(method, x.numel(), x.dtype, x.device)[0], x.dtype)
    return not abs_sum + bound < torch.finfo(acc).max


def _torch_acc_ok(x: torch.Tensor, abs_sum: float) -> bool:
    """Whether torch.sum's own CPU accumulation cannot overflow on this input: then its result is
    held to the oracle too. torch accumulates 16- and 32-bit floats in float32 and float64 in
    float64, but past 32768 elements (its parallel grain) with more than one thread it keeps the
    per-thread partials of float16 in float16: [inf] + [-8188] * 32768 is NaN there."""
    if x.dtype == torch.float16 and x.numel() > 32768:
        acc = torch.float16
    else:
        acc = torch.float64 if x.dtype == torch.float64 else torch.float32
    return abs_sum < 0.5 * torch.finfo(acc).max


def check_sum(r: torch.Tensor, x: torch.Tensor, method: str, where: str) -> None:
    assert r.shape == (), f"result shape {tuple(r.shape)}, expected (); {where}"
    assert r.dtype == torch_result_dtype(x.dtype), f"result dtype {r.dtype}, torch.sum gives {torch_result_dtype(x.dtype)}; {where}"
    assert r.device == x.device, f"result on {r.device}, input on {x.device}; {where}"
    xc = x.detach().cpu()
    t = torch.sum(xc)  # torch's own answer, for integers the expected value, for floats a cross-check of the oracle
    if not x.dtype.is_floating_point:
        wrapped = (sum(xc.reshape(-1).tolist()) + 2**63) % 2**64 - 2**63
        assert t.item() == wrapped, f"oracle: torch.sum {t.item()} != wrapped exact sum {wrapped}; {where}"
        event("int: wrapped" if wrapped != sum(xc.reshape(-1).tolist()) else "int")
        assert_sum_ok(r, x, method, seed_key=where)
        return

    got, tv = r.double().item(), t.double().item()
    vals = xc.double().reshape(-1).tolist()
    nan = any(math.isnan(v) for v in vals)
    pinf, ninf = math.inf in vals, -math.inf in vals
    if nan or (pinf and ninf):
        event("float: NaN input")
        assert math.isnan(got), f"got {got!r}, expected NaN (input has {'NaN' if nan else '+inf and -inf'}); {where}"
        assert math.isnan(tv), f"oracle: torch.sum gives {tv!r}, not NaN; {where}"
        return
    if pinf or ninf:
        want = math.inf if pinf else -math.inf
        finite_abs = _abs_sum(v for v in vals if math.isfinite(v))
        if _acc_may_overflow(x, method, finite_abs):  # the finite part may overflow to -want: inf + -inf = NaN
            event("float: inf input, accumulator may overflow")
            assert got == want or math.isnan(got), f"got {got!r}, expected {want} or NaN (input has {want}, no NaN, " \
                f"sum|finite x| = {finite_abs!r} may overflow the accumulator); {where}"
            return
        event("float: inf input")
        assert got == want, f"got {got!r}, expected {want} (input has {want} and no NaN); {where}"
        if _torch_acc_ok(x, finite_abs):
            assert tv == want, f"oracle: torch.sum gives {tv!r}, not {want}; {where}"
        return

    try:
        exact = Fraction(math.fsum(vals))  # the exact sum correctly rounded to float64
    except OverflowError:  # past float64's range, or an intermediate overflow of fsum
        exact = exact_fraction(vals)
    abs_sum = _abs_sum(vals)
    limit = overflow_threshold(x.dtype)
    overflow = abs(exact) >= limit
    sign = 1.0 if exact >= 0 else -1.0
    ref = float(exact) if abs(exact) < overflow_threshold(torch.float64) else sign * torch.finfo(torch.float64).max
    bound = sum_bound(x, method, ref, abs_sum)
    if math.isnan(bound):  # 0 * inf: n <= 1 with an infinite sum|x| cannot happen, but stay safe
        bound = math.inf
    acc_overflow = _acc_may_overflow(x, method, abs_sum, bound)
    near = bound == math.inf or abs(abs(exact) - limit) <= Fraction(bound)
    close = math.isfinite(got) and abs(got - ref) <= bound
    info = f"got {got!r}, exact {float(exact) if abs(exact) < overflow_threshold(torch.float64) else exact!r}, sum|x| {abs_sum!r}, bound {bound:.3e}; {where}"
    torch_acc_ok = _torch_acc_ok(x, abs_sum)

    if acc_overflow:
        event("float: accumulator may overflow")
        assert not math.isfinite(got) or close, f"finite result outside the bound where the accumulator may overflow: {info}"
        return
    if overflow:
        event("float: result overflows" + (" (near threshold)" if near else ""))
        assert got == sign * math.inf or (near and close), f"expected {sign * math.inf} (|exact sum| >= {float(limit)}): {info}"
        if torch_acc_ok and bound < math.inf and abs(exact) - limit > max(Fraction(bound), limit / 64):  # torch errs more
            assert tv == sign * math.inf, f"oracle: torch.sum gives {tv!r}, not {sign * math.inf}; {where}"
        return
    if near:
        event("float: near overflow threshold")
        assert got == sign * math.inf or close, f"expected {sign * math.inf} or a result within the bound: {info}"
        return
    event("float: finite")
    assert math.isfinite(got), f"expected a finite result: {info}"
    assert_sum_ok(r, x, method, ref=ref, abs_sum=abs_sum, seed_key=where)
    if got == 0:
        assert math.copysign(1.0, got) == 1.0, f"got -0.0, torch.sum's sums are +0.0; {where}"
    if torch_acc_ok and abs(exact) < limit * Fraction(63, 64):
        assert math.isfinite(tv), f"oracle: torch.sum gives {tv!r}, not a finite value; {where}"
        if tv == 0:
            assert math.copysign(1.0, tv) == 1.0, f"oracle: torch.sum gives -0.0; {where}"


def _dense(t: torch.Tensor) -> torch.Tensor:
    """A dense copy: helpers.same_bits cannot byte-view an empty tensor with stride 0."""
    return t.clone(memory_format=torch.contiguous_format)


def run_case(case: Case, device: str, method: str) -> None:
    x, buf = build(case, device)
    x_before, buf_before = _dense(x), buf.clone()
    where = describe(x, method)
    note(where)
    event(f"dtype {str(x.dtype).removeprefix('torch.')}")
    event("numel " + ("0" if x.numel() == 0 else "1" if x.numel() == 1 else "<=4096" if x.numel() <= 4096 else ">4096"))
    for label, used in (("expanded", case.expand), ("permuted storage", case.order and case.order != (0, 2, 3, 1)),
                        ("channels_last strides", case.order == (0, 2, 3, 1)), (".contiguous(channels_last)", case.to_channels_last),
                        ("sliced with steps", case.steps), ("storage offset", x.storage_offset()), ("permuted view", case.post_perm),
                        ("non-contiguous", not x.is_contiguous()), ("specials", case.specials), ("explicit values", case.values)):
        if used:
            event(f"recipe: {label}")
    poison_allocator(device)
    r = reducekit.sum(x, method=method)
    assert same_bits(buf, buf_before) and same_bits(_dense(x), x_before), f"the input was modified; {where}"
    check_sum(r, x, method, where)


F16 = torch.float16
# float16: 3000 * 30 = 90000 > 65504 is inf, as torch's; 65504 + 16 = 65520 is the tie that rounds to inf (to even),
# 65504 + 8 rounds down to 65504; int64 wrap-around; a NaN and an inf outside the view must not reach the sum;
# channels_last strides with an expanded dim and a permutation on top.
KNOWN = [
    Case(F16, (3000,), mean=30.0, scale=0.0),
    Case(F16, (2,), values=(65504.0, 16.0)),
    Case(F16, (2,), values=(65504.0, 8.0)),
    Case(F16, (3,), values=(-65504.0, -16.0, 0.0)),
    Case(torch.bfloat16, (3,), values=(3.3895e38, 3.3895e38, -3.3895e38)),
    Case(torch.float64, (3,), values=(1.7e308, 1.7e308, -1.7e308)),
    Case(torch.float64, (2,), values=(1.7e308, 1.7e308)),
    Case(torch.float32, (4,), values=(1e30, 1.0, -1e30, 0.0)),
    Case(torch.float32, (3,), values=(-0.0, -0.0, -0.0)),
    Case(torch.int64, (5,), values=(2**63 - 1, 2**63 - 1, 2**62, -(2**63), 7)),
    Case(torch.int64, (2000,), fill="high", seed=1),
    Case(torch.float32, (4, 3), steps=(2, 1), offset=3, tail=2, specials=((0, "nan", False), (7, "inf", False))),
    Case(torch.float32, (2, 3, 4, 5), order=(0, 2, 3, 1), expand=(0,), post_perm=(3, 1, 0, 2)),
    Case(torch.bfloat16, (2, 3, 4, 5), to_channels_last=True, post_perm=(0, 2, 3, 1), offset=1),
]


KNOWN_IDS = [f"{i}-{str(c.dtype).removeprefix('torch.')}-{'x'.join(map(str, c.shape))}" for i, c in enumerate(KNOWN)]


@pytest.mark.parametrize("case", KNOWN, ids=KNOWN_IDS)
def test_known_cases_cpu(case):
    run_case(case, "cpu", "auto")


@pytest.mark.cuda
@pytest.mark.parametrize("method", [m.name for m in reducekit.methods() if "cuda" in m.devices])
@pytest.mark.parametrize("case", KNOWN, ids=KNOWN_IDS)
def test_known_cases_cuda(case, method):
    run_case(case, "cuda", method)


def drawn_case(dtype: torch.dtype, data, device: str) -> None:
    """One drawn example: a method that runs on `device`, then a Case of `dtype`."""
    method = data.draw(st.sampled_from([m.name for m in reducekit.methods() if device in m.devices]), label="method")
    run_case(data.draw(cases(dtypes=(dtype,)), label="case"), device, method)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: str(d).removeprefix("torch."))
@PROFILE
@given(data=st.data())
def test_sum_matches_torch_sum_cpu(dtype, data):
    drawn_case(dtype, data, "cpu")


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: str(d).removeprefix("torch."))
@PROFILE
@given(data=st.data())
def test_sum_matches_torch_sum_cuda(dtype, data):
    drawn_case(dtype, data, "cuda")


# method="exact" on adversarial data (exact_ref.FAMILIES: the whole exponent range with subnormals,
# 1e30 / -1e30 cancellation, all-equal values, sums near rounding midpoints, ...): the result is the
# correctly rounded sum, and the CPU and CUDA give the same bits.
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
@PROFILE
@given(family=st.sampled_from(FAMILIES), dtype=st.sampled_from([d for d in ALL_DTYPES if d.is_floating_point]),
       n=st.one_of(st.integers(1, 70), st.sampled_from([1023, 4099, 70001])), seed=st.integers(0, 2**31 - 1))
def test_exact_adversarial(device, family, dtype, n, seed):
    x = family_tensor(family, n, dtype, torch.Generator().manual_seed(seed))
    r = reducekit.sum(x.to(device), method="exact")
    want = correctly_rounded(x)
    assert same_value(r.item(), want), f"{family} n={n} {dtype} seed={seed}: got {r.item()!r}, correctly rounded {want!r}"
    if device == "cuda":
        assert same_bits(r.cpu(), reducekit.sum(x, method="exact")), "CPU and CUDA differ"
