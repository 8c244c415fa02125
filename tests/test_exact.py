"""method="exact": correctly rounded sums (csrc/engine/exact.h), on CPU and CUDA.

The oracle is exact_ref: the exact rational sum (integer arithmetic) rounded once to the result
dtype. Correct rounding implies the bitwise equalities tested here: CPU against CUDA, every
compiled CUDA configuration and grid, any permutation, and any split into shards combined
through exact_partial / exact_round. Planted faults exact_drop_carry, exact_truncate and
exact_spill_low (benchmarks/results/h200/faults.md), on the chunked path (float64) exact_chunk_shift,
exact_no_carry (test_chunked_path_worst_case) and exact_chunk_special, on float16 exact_half_field
and exact_half_special, on the binned path (float32 and bfloat16) exact_bin_shift, exact_no_recount
and exact_drop_block, and on all the value-independent paths exact_bin_cap
(test_value_caps_worst_case, test_columns_caps), exact_keep_words
(test_stream_words_graph_and_streams) and exact_pool_unit (test_value_independent_paths_small, whose
forced grids of three blocks give rows a pool), and on the columns paths exact_columns_tail
(test_columns_in_place), exact_columns_pairs (test_columns_in_place, test_columns_pairs_small: the
bfloat16 columns' word walk by pairs of threads), exact_warp_rows_lane (test_short_rows) and
exact_warp_sticky (test_binned_ends_rounding), must fail these tests.
"""
import math

import pytest
import torch

import reducekit
from exact_ref import FAMILIES, correctly_rounded, exact_sum, family_tensor, round_fraction, same_value
from helpers import CUDA, FLOAT_DTYPES, generator, same_bits, seed_for

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
SIZES = [1, 2, 3, 33, 1000, 4097, 70001]


def data(family, n, dtype, *key):
    return family_tensor(family, n, dtype, torch.Generator().manual_seed(seed_for("exact", family, n, str(dtype), *key)))


def check(x, device, dtype=None, **kw):
    """reducekit.sum(x, method='exact') on device equals the correctly rounded sum."""
    r = reducekit.sum(x.to(device), method="exact", dtype=dtype, **kw)
    want_dtype = dtype or x.dtype
    assert r.dtype == want_dtype and r.dim() == 0 and r.device.type == device
    want = correctly_rounded(x, want_dtype)
    got = r.item()
    assert same_value(got, want), f"got {got!r}, correctly rounded {want!r} (n={x.numel()}, {x.dtype})"
    return r


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("family", FAMILIES)
def test_correctly_rounded(device, dtype, family):
    for n in SIZES:
        check(data(family, n, dtype), device)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("family", ["normal", "mean1e4", "wide", "cancel"])
def test_correctly_rounded_large(dtype, family):
    """Many blocks and the last block's combine; 2^24 + 5 values for the common families."""
    sizes = [2**20 + 3] + ([2**24 + 5] if family in ("normal", "mean1e4") else [])
    for n in sizes:
        x = data(family, n, dtype)
        r = check(x, "cuda")
        assert same_bits(r.cpu(), reducekit.sum(x, method="exact")), "CPU and CUDA differ"


def test_fraction_reference_agrees_with_fsum():
    """The integer reference against Python's exact Fraction sum and, for float64, math.fsum
    (correctly rounded to float64 itself)."""
    from fractions import Fraction

    for family in FAMILIES:
        x = data(family, 500, torch.float64, "ref")
        fr = sum((Fraction(v) for v in x.tolist()), Fraction(0))
        assert exact_sum(x) == fr, family
        assert round_fraction(fr, torch.float64) == math.fsum(x.tolist()), family


@pytest.mark.parametrize("device", DEVICES)
def test_rounding_edges(device):
    def s(vals, in_dtype=torch.float32, **kw):
        return reducekit.sum(torch.tensor(vals, dtype=torch.float64).to(in_dtype).to(device), method="exact", **kw).item()

    assert s([1e30, 1.0, -1e30]) == 1.0
    assert s([2.0**100, 1.0, -2.0**100, 2.0**-100]) == 1.0 + 0.0  # 1 + 2^-100 rounds to 1
    assert s([1.0, 2.0**-24]) == 1.0                                 # a tie: to even
    assert s([1.0, 2.0**-24, 2.0**-80]) == 1.0 + 2.0**-23            # just above the tie: up
    assert s([1.0 + 2.0**-23, 2.0**-24]) == 1.0 + 2.0**-22           # a tie from odd: up to even
    assert s([-1.0, -(2.0**-24), -(2.0**-80)]) == -(1.0 + 2.0**-23)
    assert s([3.4e38, 3.4e38]) == math.inf and s([-3.4e38, -3.4e38]) == -math.inf
    fmax = float(torch.finfo(torch.float32).max)  # the overflow threshold is fmax + 2^103, a tie that goes to inf
    assert s([fmax, 2.0**103]) == math.inf and s([fmax, 2.0**103, 2.0**-60]) == math.inf
    assert s([fmax, 2.0**103, -(2.0**-60)]) == fmax and s([-fmax, -(2.0**103), 2.0**-60]) == -fmax
    assert s([3.4e38, 3.4e38], dtype=torch.float64) == 2 * float(torch.tensor(3.4e38, dtype=torch.float32))
    assert s([65504.0, 15.0], torch.float16) == 65504.0 and s([65504.0, 16.0], torch.float16) == math.inf
    assert s([2.0**-149] * 3) == 3 * 2.0**-149                         # subnormals add exactly
    assert s([2.0**-24] * 3, torch.float16) == 3 * 2.0**-24             # float16 subnormals too
    assert s([2048.0, 1.0], torch.float16) == 2048.0 and s([2050.0, 1.0], torch.float16) == 2052.0  # ties to even
    z = s([-0.0, -0.0])
    assert z == 0.0 and math.copysign(1.0, z) == 1.0
    assert math.isnan(s([math.inf, -math.inf, 1.0])) and math.isnan(s([1.0, math.nan]))
    assert s([math.inf, 1e38, 1e38]) == math.inf and s([-math.inf, 5.0]) == -math.inf
    for dt in FLOAT_DTYPES:
        assert reducekit.sum(torch.empty(0, dtype=dt, device=device), method="exact").item() == 0.0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_permutation_and_shards(device, dtype):
    """Any order and any split into shards (2, 3, 7, uneven, and single elements) give the same
    bits, through exact_partial / exact_round; partials of CPU and CUDA shards mix."""
    for family in ("wide", "cancel", "normal"):
        x = data(family, 30011, dtype, "shards").to(device)
        whole = reducekit.sum(x, method="exact")
        g = generator(device, "exact-perm", family, str(dtype))
        assert same_bits(reducekit.sum(x[torch.randperm(x.numel(), device=device, generator=g)], method="exact"), whole)
        for k in (2, 3, 7):
            cuts = sorted(torch.randint(0, x.numel(), (k - 1,), generator=torch.Generator().manual_seed(k)).tolist())
            parts = torch.tensor_split(x, cuts)
            words = torch.stack([reducekit.exact_partial(p) for p in parts]).sum(0)
            assert same_bits(reducekit.exact_round(words, dtype), whole), (family, k)
        singles = reducekit.exact_partial(x[:50].reshape(50, 1), dim=1).sum(0)
        assert same_bits(reducekit.exact_round(singles, dtype), reducekit.sum(x[:50], method="exact"))
        if device == "cuda":
            mixed = reducekit.exact_partial(x[:1000].cpu()) + reducekit.exact_partial(x[1000:]).cpu()
            assert same_bits(reducekit.exact_round(mixed, dtype), whole.cpu())


BINNED_DTYPES = [torch.float32, torch.bfloat16, torch.float64, torch.float16]  # float64: the chunked path; float16: its counts


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", BINNED_DTYPES, ids=str)
@pytest.mark.parametrize("family", FAMILIES)
def test_binned_path(family, dtype):
    """float32 and bfloat16 rows of 2^22 values and more take the binned path, float64 rows the
    chunked one, float16 rows the integer counts of their float64 runs (csrc/cuda/engine/exact.cu):
    every data family correctly rounded and equal to the CPU's bits, as one row (the stream's
    accumulator words) and as rows over dims (a memset workspace)."""
    n = 2**22 + 5
    x = data(family, n, dtype, "binned")
    r = check(x, "cuda")
    assert same_bits(r.cpu(), reducekit.sum(x, method="exact")), "CPU and CUDA differ"
    rows = torch.stack([x[: 2**22], x[5:]]).cuda()  # two rows of 2^22: both binned, one launch
    got = reducekit.sum(rows, 1, method="exact").cpu()
    assert same_bits(got, reducekit.sum(rows.cpu(), 1, method="exact"))
    # dtype= casts the input first, as torch does (float64 narrows: 'wide' overflows to inf + -inf,
    # 'equal' repeats the cast's error), then the float32 exact sum: the CPU's bits.
    wide = reducekit.sum(x.cuda(), method="exact", dtype=torch.float32)
    assert same_value(wide.item(), correctly_rounded(x.to(torch.float32), torch.float32))
    assert same_bits(wide.cpu(), reducekit.sum(x, method="exact", dtype=torch.float32))


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", BINNED_DTYPES, ids=str)
def test_binned_path_specials(dtype):
    """inf and NaN on the binned path: the sum is torch's class of result (+inf, -inf or NaN) and
    the CPU's bits, finite values around them not mattering (a sum reads the special from the last
    bin); exact_partial's words carry the specials' counts (the blocks holding them read their
    values again), the CPU's words."""
    base = data("wide", 2**22 + 3, dtype, "binned specials")
    inf = float("inf")
    for plant, want in [({7: inf}, inf), ({2**21: -inf}, -inf), ({5: inf, 2**22: -inf}, math.nan), ({99: math.nan}, math.nan),
                        ({0: inf, 1: inf, 2**22 + 2: inf}, inf)]:
        x = base.clone()
        for i, v in plant.items():
            x[i] = v
        got = reducekit.sum(x.cuda(), method="exact").cpu()
        assert same_bits(got, reducekit.sum(x, method="exact")), (plant, got.item())
        assert (math.isnan(want) and math.isnan(got.item())) or got.item() == want, (plant, got.item())
        words = reducekit.exact_partial(x.cuda()).cpu()
        assert torch.equal(words, reducekit.exact_partial(x)), (plant, words[-3:].tolist())


@pytest.mark.cuda
def test_float16_specials():
    """float16 on CUDA (HalfRun): inf and NaN anywhere (inside a 16-byte vector, in a row's head or
    tail) give torch's special and the CPU's bits, and exact_partial's last three words count the
    NaN, +inf and -inf values, as the CPU's words do."""
    base = data("normal", 70001, torch.float16, "half specials")
    inf, nan = float("inf"), float("nan")
    for plant in [{7: inf}, {8: -inf}, {9: nan}, {0: inf, 70000: -inf}, {3: nan, 4: inf, 5: inf, 6: -inf}, {11: inf, 12: inf}]:
        x = base.clone()
        for i, v in plant.items():
            x[i] = v
        for view in (x, x[1:], x[:-1]):  # x[1:]: misaligned, its first values a head
            got = reducekit.sum(view.cuda(), method="exact").cpu()
            assert same_bits(got, reducekit.sum(view, method="exact")), (plant, got.item())
            want = torch.sum(view.double()).item()
            assert (math.isnan(want) and math.isnan(got.item())) or got.item() == want, (plant, got.item(), want)
            words = reducekit.exact_partial(view.cuda()).cpu()
            assert torch.equal(words, reducekit.exact_partial(view)), (plant, words[-3:].tolist())
            counts = [int(torch.isnan(view).sum()), int((view == inf).sum()), int((view == -inf).sum())]
            assert words[-3:].tolist() == counts, (plant, words[-3:].tolist(), counts)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_every_config_and_grid(dtype):
    """Every compiled (block, unroll) and forced blocks-per-row, down to one block: same bits."""
    for family in ("wide", "normal", "cancel"):
        x = data(family, 2**20 + 7, dtype, "configs").cuda()
        want = reducekit.sum(x, method="exact")
        try:
            for block, unroll in reducekit._C._exact_configs():
                for bpr in (0, 1, 2, 7, 333, 2000):
                    reducekit._C._exact_config(block, unroll, bpr)
                    got = reducekit.sum(x, method="exact")
                    assert same_bits(got, want), (family, block, unroll, bpr, got.item(), want.item())
        finally:
            reducekit._C._exact_config(0, 0, 0)
        assert same_value(want.item(), correctly_rounded(x))


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_value_independent_paths_small(dtype):
    """The value-independent paths (binned, chunked, float16 counts) forced onto short rows with
    heads and tails (a misaligned view), one to a few blocks per row and the rule's grid, with
    their stream words (one row) and a memset workspace (two rows): the CPU's bits, sums and
    exact_partial's words. Small enough for compute-sanitizer (device_run.sh sanitize_exact)."""
    paths = [c for c in reducekit._C._exact_configs() if c in ((128, 4), (64, 4))]
    assert paths, reducekit._C._exact_configs()
    try:
        for family in ("wide", "normal", "cancel"):
            x = data(family, 70001, dtype, "small paths")
            xc = x.cuda()
            for view, vc in ((x[1:], xc[1:]), (x[:33], xc[:33])):  # sliced on the device: xc[1:] has a head
                want = reducekit.sum(view, method="exact")
                words = reducekit.exact_partial(view)
                rows = torch.stack([view, view.flip(0)])
                want_rows = reducekit.sum(rows, 1, method="exact")
                for block, unroll in paths:
                    for bpr in (1, 3, 0):
                        reducekit._C._exact_config(block, unroll, bpr)
                        got = reducekit.sum(vc, method="exact").cpu()
                        assert same_bits(got, want), (family, view.numel(), block, bpr, got.item(), want.item())
                        assert torch.equal(reducekit.exact_partial(vc).cpu(), words), (family, block, bpr)
                        assert same_bits(reducekit.sum(rows.cuda(), 1, method="exact").cpu(), want_rows), (family, block, bpr)
    finally:
        reducekit._C._exact_config(0, 0, 0)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_value_caps_worst_case(dtype):
    """The grid's caps on the values a thread (bfloat16's float32 bins: 2^13) or a block (float16's
    int64 counts: 2^22) may take. bfloat16: the largest and the smallest significand of one bin,
    interleaved, so that a thread's bin passes 2^24 units with odd partial sums once it holds more
    than 2^13 of them; float16: 65504 over and over, a block's count past 2^63 beyond 2^22 values.
    Forced to one block per row (and the rule's grid), every compiled configuration must still
    give the correctly rounded sum: the caps raise the grid."""
    if dtype == torch.bfloat16:
        n = 2**21 + 7
        x = torch.full((n,), 31.875, dtype=dtype)  # 1.1111111b x 2^4: the top of its bin (exponents 128..131)
        x[1::2] = 2.015625  # 1.0000001b x 2^1: the bottom of the same bin
        # float32 shows the error (a thread's bin past 2^24 units rounds its odd adds: about -900
        # without the cap, where the bfloat16 result rounds both sums alike); a widening dtype=
        # keeps the bfloat16 bins.
        out = torch.float32
    else:
        n = 2**23 + 2**21
        x = torch.full((n,), 65504.0, dtype=dtype)
        x[::3] = 65472.0
        out = torch.float32  # the float16 sum overflows to inf; float32 shows every bit
    want = correctly_rounded(x, out)
    xc = x.cuda()
    try:
        for block, unroll in reducekit._C._exact_configs():
            for bpr in (1, 0):
                reducekit._C._exact_config(block, unroll, bpr)
                for sign in (1, -1):
                    got = reducekit.sum(sign * xc, method="exact", dtype=out).item()
                    assert same_value(got, sign * want), (block, unroll, bpr, sign, got, want)
    finally:
        reducekit._C._exact_config(0, 0, 0)


@pytest.mark.cuda
def test_chunked_path_worst_case():
    """The chunked path's (float64) worst case: every value adds nearly 2^52 into the same chunk
    (significands near 2^53 with the exponent's low 5 bits all set, one sign), so a chunk
    overflows after 2^11 of them unless its thread carries. One block per row puts 2^13 to 2^14
    of them on each thread; every compiled configuration, and the default grid, gives the
    correctly rounded sum, for both signs."""
    g = torch.Generator().manual_seed(seed_for("exact", "chunk worst case"))
    n = 2**20 + 7
    # [2, 4): biased exponent 1024, q = 1023 (low 5 bits 31); the top 20 significand bits set.
    x = 4.0 - torch.randint(1, 2**32, (n,), generator=g, dtype=torch.int64).double() * 2.0**-51
    x[::2] -= 2.0**-40  # two distinct significand patterns
    assert bool(((x >= 3.999) & (x < 4)).all())
    want = correctly_rounded(x)
    xc = x.cuda()
    try:
        for block, unroll in reducekit._C._exact_configs():
            for bpr in (1, 2, 0):
                reducekit._C._exact_config(block, unroll, bpr)
                for sign in (1, -1):
                    got = reducekit.sum(sign * xc, method="exact").item()
                    assert same_value(got, sign * want), (block, unroll, bpr, sign, got, want)
    finally:
        reducekit._C._exact_config(0, 0, 0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_dims(device, dtype):
    """Over dims (rows after moving the reduced dims last): each output slice correctly rounded,
    torch.sum's shapes and keepdim; views and permutations read correctly."""
    x = data("wide", 6 * 5 * 37, dtype, "dims").reshape(6, 5, 37).to(device)
    for dim, keepdim in [(0, False), (1, True), (-1, False), ((0, 2), False), ((2, 0), True), ((0, 1, 2), False), ((), False)]:
        r = reducekit.sum(x, dim=dim, keepdim=keepdim, method="exact")
        t = torch.sum(x.double(), dim=dim, keepdim=keepdim)
        assert r.shape == t.shape and r.dtype == dtype and r.is_contiguous()
        dims = [d % 3 for d in ((dim,) if isinstance(dim, int) else dim)] or [0, 1, 2]
        kept = [d for d in range(3) if d not in dims]
        xp = x.permute(kept + dims).reshape(-1, math.prod(x.shape[d] for d in dims)).cpu()
        flat = r.reshape(-1).cpu()
        for i in range(xp.shape[0]):
            assert same_value(flat[i].item(), correctly_rounded(xp[i])), (dim, i)
    xt = x.transpose(0, 2)[:, 1:]
    r = reducekit.sum(xt, dim=1, method="exact")
    for i in range(xt.shape[0]):
        for j in range(xt.shape[2]):
            assert same_value(r[i, j].item(), correctly_rounded(xt[i, :, j].cpu()))


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_short_rows(dtype):
    """Rows shorter than the value-independent block paths' 2^14 values, several of them: float32,
    bfloat16 and float16 take a warp a row (exact.cu's warp_rows_kernel) from 64 values
    (kExactWarpRowsMinValues), float64 and shorter rows the checked path. Every family, lengths
    around the edges (63, 64, 65, 1000, 4097, 16383: odd lengths put rows' heads and tails in
    scalars), 2 to 5000 rows (5000: a warp takes several rows in turn), a strided view's rows, inf
    and NaN in some rows: the CPU's bits, the block path's bits (forced: one block a row), a few
    rows against the exact rational sum; float16's exact_partial words: the CPU's."""
    inf, nan = float("inf"), float("nan")
    for family in FAMILIES:
        for rows, length in ((2, 63), (5000, 64), (7, 65), (1000, 1000), (65, 4097), (3, 16383)):
            x = data(family, rows * (length + 1), dtype, "short rows", rows, length).reshape(rows, length + 1)
            if family == "normal" and rows > 2:
                x[1, 3], x[2, length - 1] = inf, nan
                x[rows - 1, 0], x[rows - 1, length // 2] = inf, -inf
            xc = x.cuda()
            for cols in (slice(0, length), slice(1, length + 1)):
                view, vc = x[:, cols], xc[:, cols]
                want = reducekit.sum(view, 1, method="exact")
                got = reducekit.sum(vc, 1, method="exact").cpu()
                assert same_bits(got, want), (family, rows, length)
                try:
                    reducekit._C._exact_config(0, 0, 1)
                    assert same_bits(reducekit.sum(vc, 1, method="exact").cpu(), want), (family, rows, length, "one block a row")
                finally:
                    reducekit._C._exact_config(0, 0, 0)
                if dtype == torch.float16:
                    assert torch.equal(reducekit.exact_partial(vc, 1).cpu(), reducekit.exact_partial(view, 1)), (family, rows, length)
            if family != "normal":
                for i in (0, rows - 1):
                    assert same_value(want[i].item(), correctly_rounded(view[i])), (family, rows, length, i)


def rounding_cases(dtype):
    """Rows whose exact sums sit on the output's rounding edges, for the warp ends of the binned and
    chunked paths (exact.cu's warp_round_digits): midpoints with a sticky bit far below the top three 32-bit
    digits (either sign), bare midpoints (ties to even), negative sums (two's complement digits),
    cancellation to exactly zero (+0), to a subnormal and to 1, overflow at and beyond the largest
    finite value's midpoint."""
    fi = torch.finfo(dtype)
    half, tiny, big = fi.eps / 2, fi.smallest_normal * fi.eps, fi.max  # tiny: the smallest subnormal
    top_half = 2.0 ** (math.floor(math.log2(fi.max)) - math.log2(1 / fi.eps) - 1)  # half an ulp of max
    cases = [[1, half, tiny], [1, half, -tiny], [1, half], [1 + fi.eps, half], [-1, -half, -tiny], [-1, -half, tiny],
             [fi.smallest_normal, -tiny], [tiny, tiny, tiny], [big, top_half, 2.0**-100], [big, top_half], [big, top_half, -2.0**-100],
             [1, -1], [-tiny, tiny], [2.0**100, 1, -(2.0**100)], [tiny, -(2.0**100), 2.0**100], [1, -tiny], [-1, tiny]]
    return [[float(torch.tensor(v, dtype=dtype)) for v in c] for c in cases]


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_binned_ends_rounding(dtype):
    """The binned paths' warp ends round correctly on every edge of rounding_cases: as rows of 100
    values (a warp a row), as columns of a (100, cases) tensor (the columns paths' second launch),
    and as rows of 2^14 values (the block path's end), into the input dtype and (dtype=float64) into
    float64: the CPU's bits, and the exact rational sum rounded once."""
    cases = rounding_cases(dtype)
    rows = torch.zeros(len(cases), 100, dtype=dtype)
    for i, c in enumerate(cases):
        rows[i, 7:7 + len(c)] = torch.tensor(c, dtype=torch.float64).to(dtype)
    long_rows = torch.zeros(len(cases), 2**14, dtype=dtype)
    long_rows[:, 1000:1100] = rows
    for out in (None, torch.float64):
        for x, dim in ((rows, 1), (rows.t().contiguous(), 0), (long_rows, 1)):
            got = reducekit.sum(x.cuda(), dim, method="exact", dtype=out).cpu()
            want = reducekit.sum(x, dim, method="exact", dtype=out)
            assert same_bits(got, want), (out, x.shape, dim, got.tolist(), want.tolist())
            for i in range(len(cases)):
                ref = correctly_rounded(rows[i], out or dtype)
                assert same_value(got[i].item(), ref), (out, x.shape, cases[i], got[i].item(), ref)


@pytest.mark.cuda
def test_chunked_end_rounding():
    """float64's chunked path forced onto rows of 2^16 values (one block a row, and three, whose
    rows then have a pool of units: 16 units of 4096 values, 4 static a block), rows and single
    rows (the stream's words): every edge of rounding_cases goes through its warp end
    (warp_round_digits over the 66 chunk sums: a borrow through every digit above a negative sum's,
    a sticky bit 2^1000 below the top digit, overflow): the CPU's bits, and the exact rational sum
    rounded once."""
    dtype = torch.float64
    cases = rounding_cases(dtype)
    rows = torch.zeros(len(cases), 2**16, dtype=dtype)
    for i, c in enumerate(cases):
        rows[i, 1000:1000 + len(c)] = torch.tensor(c, dtype=dtype)
    want = reducekit.sum(rows, 1, method="exact")
    for i in range(len(cases)):
        assert same_value(want[i].item(), correctly_rounded(rows[i], dtype)), (cases[i], want[i].item())
    xc = rows.cuda()
    try:
        for bpr in (1, 3):
            reducekit._C._exact_config(128, 4, bpr)
            got = reducekit.sum(xc, 1, method="exact").cpu()
            assert same_bits(got, want), (bpr, got.tolist(), want.tolist())
            for i in range(len(cases)):
                one = reducekit.sum(xc[i], method="exact").cpu()
                assert same_bits(one, want[i]), (bpr, cases[i], one.item(), want[i].item())
    finally:
        reducekit._C._exact_config(0, 0, 0)


# (shape, dim, layout): reduced dims that merge into one strided run, read in place on CUDA by the
# columns paths. Kept extents of 3 and 37 (a block takes whole rows), 200 (tiles of 32 columns for
# float32, whole rows for 16-bit dtypes) and 4101 (tiles, the last one partial), a batch (outer 3),
# and layouts that merge so: a transposed view, channels_last over (0, 2, 3), and two reduced dims in
# a row. Extents leave threads a partial group
# of loads (8 or 16 rows), and the long one takes several splits of the extent by the rule.
COLUMN_CASES = [((4099, 3), 0, "contiguous"), ((1031, 37), 0, "contiguous"), ((517, 200), 0, "contiguous"),
                ((300, 4101), 0, "contiguous"), ((3, 1500, 70), 1, "contiguous"), ((37, 901), 1, "transposed"),
                ((5, 24, 7, 9), (0, 2, 3), "channels_last"), ((9, 13, 40), (0, 1), "contiguous"),
                ((70001, 5), 0, "contiguous"),
                # bfloat16 columns read as words by pairs of threads (exact.cu walk_pairs: an even row
                # length, tiles of a multiple of 32 columns): whole groups of loads and a tail, an odd
                # number of rows a thread (forced splits), a partial last tile, whole rows of 96, and
                # an input 2 bytes off a 4-byte boundary (the 2-byte walk again).
                ((1000, 64), 0, "contiguous"), ((77, 160), 0, "contiguous"), ((3, 517, 96), 1, "contiguous"),
                ((1000, 64), 0, "offset")]


def offset_copy(x):
    """x's values in a contiguous tensor that starts one element into its storage (on x's device)."""
    return torch.cat([x.reshape(-1)[:1], x.reshape(-1)])[1:].view(x.shape)


def column_input(shape, layout, family, dtype):
    n = math.prod(shape)
    x = data(family, n, dtype, "columns", str(shape), layout)
    if layout == "transposed":
        return x.reshape(shape[::-1]).t()
    if layout == "offset":  # contiguous, one element past the start of its storage
        return offset_copy(x.reshape(shape))
    x = x.reshape(shape)
    return x.to(memory_format=torch.channels_last) if layout == "channels_last" else x


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_columns_in_place(dtype):
    """Columns (the reduced dims one strided run) on CUDA: float32, bfloat16 and float16 read in
    place (exact.cu's columns paths: bins or counted runs per thread, each block's counts added into
    its outputs' words, a second launch rounding), float64 copied into rows. Every family, every
    case of COLUMN_CASES, the rule's splits of the extent and forced ones (1, 2, 7): the CPU's bits
    (correctly rounded, so the same), dense results, and three outputs of the last case against the
    exact rational sum."""
    for family in FAMILIES:
        for shape, dim, layout in COLUMN_CASES:
            x = column_input(shape, layout, family, dtype)
            want = reducekit.sum(x, dim, method="exact")
            xc = offset_copy(x.cuda()) if layout == "offset" else x.cuda()
            assert layout != "offset" or xc.storage_offset() == 1
            try:
                for splits in (0, 1, 2, 7):
                    reducekit._C._exact_config(0, 0, splits)
                    got = reducekit.sum(xc, dim, method="exact")
                    assert got.is_contiguous() and got.shape == want.shape
                    assert same_bits(got.cpu(), want), (family, shape, dim, layout, splits)
            finally:
                reducekit._C._exact_config(0, 0, 0)
        dims = tuple(d % x.dim() for d in ((dim,) if isinstance(dim, int) else dim))
        xp = x.permute([d for d in range(x.dim()) if d not in dims] + list(dims)).reshape(want.numel(), -1)
        for i in (0, want.numel() // 2, want.numel() - 1):
            assert same_value(want.reshape(-1)[i].item(), correctly_rounded(xp[i])), (family, i)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_columns_pairs_small(dtype):
    """bfloat16 columns' word walk by pairs of threads (float16 takes the 2-byte walk on the same
    cases) on inputs small enough for compute-sanitizer (device_run.sh sanitize_pick): an odd and
    an even number of rows a thread, a partial last tile, an input off a 4-byte boundary, inf and
    NaN in a column's last row (the even thread's lone load); the CPU's bits."""
    for shape, splits in (((203, 64), 1), ((203, 64), 3), ((64, 160), 0)):
        x = data("gradient", math.prod(shape), dtype, "columns pairs", str(shape)).reshape(shape)
        x[-1, 5], x[-1, 6], x[0, 7] = float("inf"), float("nan"), float("-inf")
        want = reducekit.sum(x, 0, method="exact")
        try:
            reducekit._C._exact_config(0, 0, splits)
            for xc in (x.cuda(), offset_copy(x.cuda())):
                assert same_bits(reducekit.sum(xc, 0, method="exact").cpu(), want), (shape, splits, xc.storage_offset())
        finally:
            reducekit._C._exact_config(0, 0, 0)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
def test_columns_specials(dtype):
    """inf and NaN on the columns paths, in some columns of a (1031, 37) tensor (one column meeting
    +inf and -inf, one a NaN, one -inf twice, one +inf twice): each column torch's class of result
    and the CPU's bits, the other columns finite; dtype=float32 rounds the exact sum of 16-bit
    columns once. Small enough for compute-sanitizer (device_run.sh sanitize_exact)."""
    inf, nan = float("inf"), float("nan")
    x = data("gradient", 1031 * 37, dtype, "columns specials").reshape(1031, 37)
    x[5, 0], x[900, 0] = inf, -inf
    x[17, 1] = nan
    x[0, 2], x[1030, 2] = -inf, -inf
    x[512, 36], x[513, 36] = inf, inf
    for out in (None, torch.float32):
        got = reducekit.sum(x.cuda(), 0, method="exact", dtype=out).cpu()
        assert same_bits(got, reducekit.sum(x, 0, method="exact", dtype=out)), out
        assert got[0].isnan() and got[1].isnan() and got[2].item() == -inf and got[36].item() == inf
        assert bool(got[3:36].isfinite().all())


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_columns_caps(dtype):
    """The columns paths' caps on the values a thread (bfloat16's float32 bins: 2^13) and a block's
    column (float16's int64 counts: 2^22) may take. bfloat16: the top and bottom significands of one
    bin alternating down each column of a kept extent of 3 (a block's 85 row-groups: a thread meets
    both), 2^21 + 7 rows; float16: 65504 and 65472 over 2^23 + 2^21 rows (a block's column count
    past 2^63 without the cap). Forced to one split of the extent, and the rule's splits: the plan
    raises them, and each column is the correctly rounded float32 sum, the CPU's bits."""
    if dtype == torch.bfloat16:
        x = torch.full((2**21 + 7, 3), 31.875, dtype=dtype)  # the top of its bin (exponents 128..131)
        x[1::2] = 2.015625  # the bottom of the same bin
    else:
        x = torch.full((2**23 + 2**21, 3), 65504.0, dtype=dtype)
        x[::3] = 65472.0
    want = [correctly_rounded(x[:, j], torch.float32) for j in range(3)]
    xc = x.cuda()
    try:
        for splits in (1, 0):
            reducekit._C._exact_config(0, 0, splits)
            for sign in (1, -1):
                got = reducekit.sum(sign * xc, 0, method="exact", dtype=torch.float32).tolist()
                assert all(same_value(g, sign * w) for g, w in zip(got, want)), (splits, sign, got, want)
    finally:
        reducekit._C._exact_config(0, 0, 0)


@pytest.mark.parametrize("device", DEVICES)
def test_dtype_and_complex(device):
    """dtype= widening rounds the exact sum once into the wider type; complex sums are two real
    exact sums; integers are summed exactly as by auto."""
    for dt in (torch.float16, torch.bfloat16):
        x = data("normal", 4097, dt, "widen")
        r = reducekit.sum(x.to(device), method="exact", dtype=torch.float32)
        assert r.dtype == torch.float32 and same_value(r.item(), correctly_rounded(x, torch.float32))
    x = data("wide", 2 * 1001, torch.float64, "complex").reshape(1001, 2)
    c = torch.view_as_complex(x.contiguous()).to(device)
    r = reducekit.sum(c, method="exact")
    assert r.dtype == torch.complex128
    assert same_value(r.real.item(), correctly_rounded(x[:, 0])) and same_value(r.imag.item(), correctly_rounded(x[:, 1]))
    i = torch.randint(-2**40, 2**40, (5000,), generator=generator("cpu", "exact-int")).to(device)
    assert reducekit.sum(i, method="exact").item() == int(i.sum().item())
    assert reducekit.sum(i.int(), dim=0, method="exact").dtype == torch.int64


@pytest.mark.parametrize("device", DEVICES)
def test_partial_format(device):
    """exact_partial: torch.sum's shape plus EXACT_WORDS int64; normalized limbs (each but the top
    in [0, 2^32)); the NaN/+inf/-inf counts; errors name the argument and the fix."""
    W = reducekit.EXACT_WORDS
    x = data("wide", 4 * 9, torch.float32, "partial").reshape(4, 9).to(device)
    p = reducekit.exact_partial(x, dim=1, keepdim=True)
    assert p.shape == (4, 1, W) and p.dtype == torch.int64
    limbs = p[..., : W - 4]
    assert bool(((limbs >= 0) & (limbs < 2**32)).all())
    assert reducekit.exact_partial(x).shape == (W,)
    sp = reducekit.exact_partial(torch.tensor([math.nan, math.inf, math.inf, -math.inf, 1.0], device=device))
    assert sp[-3:].tolist() == [1, 2, 1]
    assert torch.equal(reducekit.exact_partial(torch.empty(0, 3, device=device), dim=0), torch.zeros(3, W, dtype=torch.int64, device=device))
    with pytest.raises(TypeError, match="exact_partial.*int32.*float16, bfloat16, float32 or float64"):
        reducekit.exact_partial(torch.ones(3, dtype=torch.int32, device=device))
    with pytest.raises(ValueError, match=f"last dim of {W}.*got shape"):
        reducekit.exact_round(torch.zeros(3, 5, dtype=torch.int64, device=device), torch.float32)
    with pytest.raises(TypeError, match="int64"):
        reducekit.exact_round(torch.zeros(W, device=device), torch.float32)
    with pytest.raises(TypeError, match="dtype=.*round to float16"):
        reducekit.exact_round(torch.zeros(W, dtype=torch.int64, device=device), torch.int32)
    assert reducekit.exact_round(torch.zeros(2, 0, W, dtype=torch.int64, device=device), torch.float64).shape == (2, 0)


@pytest.mark.parametrize("device", DEVICES)
def test_machinery(device):
    """Autograd, torch.compile(fullgraph=True), opcheck, deterministic mode, the input untouched."""
    x = data("normal", 64, torch.float64, "grad").reshape(8, 8).to(device).requires_grad_()
    torch.autograd.gradcheck(lambda t: reducekit.sum(t, dim=1, method="exact"), (x,))
    y = data("wide", 1000, torch.float32, "compile").to(device)
    pristine = y.clone()
    f = torch.compile(lambda t: (reducekit.sum(t, method="exact"), reducekit.exact_round(reducekit.exact_partial(t), t.dtype)),
                      fullgraph=True)
    a, b = f(y)
    assert same_bits(a, reducekit.sum(y, method="exact")) and same_bits(a, b)
    torch.library.opcheck(torch.ops.reducekit.sum.default, (y,), {"method": "exact"})
    torch.library.opcheck(torch.ops.reducekit.exact_partial.default, (y.reshape(10, 100), [1], False))
    torch.library.opcheck(torch.ops.reducekit.exact_round.default, (reducekit.exact_partial(y.reshape(10, 100), 1), torch.float32))
    old = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            reducekit.sum(y, method="exact")  # deterministic: neither raises nor warns
    finally:
        torch.use_deterministic_algorithms(old)
    assert same_bits(y, pristine)


def test_registry_records_exact():
    m = reducekit.method("exact")
    assert m.devices == ("cpu", "cuda") and m.deterministic == "yes"
    assert "correctly rounded" in m.idea


def _exact_sum_graph(x):
    """reducekit.sum(x, method='exact') captured in a CUDA graph on a side stream, after one call
    there: (the graph, the stream, the graph's output)."""
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        reducekit.sum(x, method="exact")
        with torch.cuda.graph(g):
            out = reducekit.sum(x, method="exact")
    return g, s, out


@pytest.mark.skipif(not CUDA, reason="needs CUDA")
@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_stream_words_graph_and_streams(dtype):
    """The value-independent paths (rows of 2^22 values and more) add into their stream's
    accumulator words, which the last block zeroes for the next launch: calls one after another on
    one stream, a CUDA graph replayed over new data (the graph keeps the words of its capture), and
    calls on a side stream and on the default stream in between all give the CPU's bits."""
    n = 2**22 + 9
    xs = [data(f, n, dtype, "stream words") for f in ("wide", "normal", "cancel")]
    want = [reducekit.sum(x, method="exact") for x in xs]
    x = xs[0].cuda()
    xcs = [t.cuda() for t in xs]
    seq = (0, 1, 2, 1, 0) * 4  # one stream, launches back to back: each starts from zeroed words
    outs = [reducekit.sum(xcs[k], method="exact") for k in seq]
    torch.cuda.synchronize()
    for o, k in zip(outs, seq):
        assert same_bits(o.cpu(), want[k]), k
    g, s, out = _exact_sum_graph(x)
    for k in (1, 2, 0, 2):
        x.copy_(xs[k].cuda())
        g.replay()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            side = reducekit.sum(x, method="exact")
        plain = reducekit.sum(x, method="exact")
        torch.cuda.synchronize()
        assert same_bits(out.cpu(), want[k]), ("graph", k)
        assert same_bits(side.cpu(), want[k]) and same_bits(plain.cpu(), want[k]), ("streams", k)


@pytest.mark.skipif(not CUDA, reason="needs CUDA")
@pytest.mark.cuda
def test_graph_capture_and_streams():
    """Inside a CUDA graph (the per-stream counter of the one-launch finish) and on side streams."""
    x = data("wide", 2**20 + 1, torch.float32, "graph").cuda()
    want = reducekit.sum(x, method="exact")
    g, s, out = _exact_sum_graph(x)
    for _ in range(3):
        g.replay()
        torch.cuda.synchronize()
        assert same_bits(out, want)
    with torch.cuda.stream(s):
        r = reducekit.sum(x, method="exact")
    torch.cuda.synchronize()
    assert same_bits(r, want)
