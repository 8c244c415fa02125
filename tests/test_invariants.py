"""Invariants between the ops, as properties over drawn shapes, reduced dims, layouts and dtypes
(hypothesis), plus the CPU's promises about threads and instruction sets:
  - nansum == sum and nanmean == mean, bitwise, on NaN-free data (CPU; on CUDA over dims);
  - amax == aminmax.max, amin == aminmax.min; var_mean[0] == var, std_mean[0] == std;
  - vector_norm(x, 1) and mean(x) are the engine's sum in its documented order (a model of the
    order written in Python, numpy's IEEE additions, on the CPU);
  - count_nonzero agrees with any and all;
  - every op's bits are the same with 1, 2 and 4 CPU threads, every dtype, rows of several chunks;
  - the baseline and AVX2 CPU kernels give the same bits (a fresh process per instruction set).
Settings profiles: REDUCEKIT_HYPOTHESIS_PROFILE as in test_properties.py.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reducekit
from helpers import CUDA, engine_order_sum, same_bits, seed_for

_COMMON = dict(deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=60, **_COMMON)
settings.register_profile("h200", max_examples=200, **_COMMON)
settings.register_profile("dev", max_examples=10, **_COMMON)
settings.register_profile("soak", max_examples=2000, **_COMMON)
settings.load_profile(os.environ.get("REDUCEKIT_HYPOTHESIS_PROFILE", "ci"))

FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


@st.composite
def tensors(draw, dtypes=FLOATS, max_numel=60_000):
    """A drawn tensor (shape of 1-4 dims, a layout: contiguous, permuted or channels_last, a
    nonzero mean, seeded values) and a reduced set (None, one dim, or several)."""
    dtype = draw(st.sampled_from(dtypes))
    nd = draw(st.integers(1, 4))
    shape = [draw(st.integers(1, 40)) for _ in range(nd)]
    if draw(st.booleans()):  # one long dim: several lanes and blocks
        shape[draw(st.integers(0, nd - 1))] = draw(st.integers(100, 5000))
    while math.prod(shape) > max_numel:
        k = max(range(nd), key=lambda i: shape[i])
        shape[k] = max(1, shape[k] // 2)
    layouts = ["contiguous", "permuted", "sliced"] + (["channels_last"] if nd == 4 else [])
    layout = draw(st.sampled_from(layouts))
    red = draw(st.one_of(st.none(), st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True)))
    seed = draw(st.integers(0, 2**31 - 1))
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(shape, generator=g, dtype=torch.float64) * 2 + 0.75).to(dtype)
    if layout == "permuted":
        perm = draw(st.permutations(range(nd)))
        x = x.permute(list(perm)).contiguous().permute([list(perm).index(i) for i in range(nd)])
    elif layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    elif layout == "sliced":  # a view with gaps: every other index of a dim (a dense one if it has 1)
        k = draw(st.integers(0, nd - 1))
        big = list(x.shape)
        big[k] = 2 * big[k]
        x = (torch.randn(big, generator=g, dtype=torch.float64) * 2 + 0.75).to(dtype)
        x = x[tuple(slice(None, None, 2) if i == k else slice(None) for i in range(nd))]
    return x, (None if red is None else sorted(red))


def _call(f, x, dims, **kw):
    return f(x, **kw) if dims is None else f(x, dims, **kw)


def _dense(x) -> bool:
    """Whether x's elements fill its memory without gaps, in some order of its dims."""
    step = 1
    for size, stride in sorted(((sz, st) for sz, st in zip(x.shape, x.stride()) if sz != 1), key=lambda p: p[1]):
        if stride != step:
            return False
        step *= size
    return True


def _one_dim(dims):
    return None if dims is None else dims[0]


def _nansum_is_sums(device, x, dims):
    """Where nansum(x) runs in sum(x)'s order (see below)."""
    if device == "cpu" and x.dtype != torch.float64:
        return True
    return dims is not None and (device == "cpu" or _dense(x))


@pytest.mark.parametrize("device", DEVICES)
@given(case=tensors())
@settings()
def test_nan_ops_equal_plain_ops_without_nan(device, case):
    x, dims = case
    x = x.to(device)
    # CPU, float32 and 16-bit: nansum is sum's (the CPU's sum kernels), of a copy laid out as sum
    # reads x (every layout here). CUDA, and the CPU's float64 (engine/op_desc.h cpu_sum_kernels):
    # nansum runs the operators' engine, in sum's order over dims; not over the whole tensor (sum's
    # single_pass, or the CPU's whole-tensor kernel) nor, on CUDA, on a view with gaps (the engines
    # differ: one engine is issue 20's).
    if _nansum_is_sums(device, x, dims):
        assert same_bits(_call(reducekit.nansum, x, dims), _call(reducekit.sum, x, dims)), "nansum != sum"
    assert same_bits(_call(reducekit.nanmean, x, dims), _call(reducekit.mean, x, dims)), "nanmean != mean"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nansum_is_sum_on_every_layout(device, dtype):
    """The property above on a fixed grid that always holds the layouts where it broke (a CPU
    nansum read a contiguous copy of a permuted input, and its dim=None took the dims engine):
    permuted and sliced views and channels_last, reduced over none, one, two, three and all dims,
    with keepdim. Hypothesis draws these only now and then."""
    g = torch.Generator().manual_seed(seed_for("nansum-layouts", str(dtype)))
    base = (torch.randn(13, 74, 21, 5, generator=g, dtype=torch.float64) * 2 + 0.75).to(dtype).to(device)
    views = {"contiguous": base[:, :37], "permuted": base[:, :37].contiguous().permute(2, 0, 3, 1),
             "permuted2": base[:, :37].permute(3, 1, 0, 2).contiguous().permute(2, 1, 3, 0),
             "sliced": base[:, ::2], "channels_last": base[:, :37].contiguous(memory_format=torch.channels_last)}
    for name, x in views.items():
        for dims in (None, [], [1], [1, 2], [0, 3], [0, 1, 3]):
            if not _nansum_is_sums(device, x, dims):
                continue  # CUDA, CPU float64: the operators' engine, in sum's order over dims
            for keepdim in (False, True):
                a = reducekit.nansum(x, keepdim=keepdim) if dims is None else reducekit.nansum(x, dims, keepdim=keepdim)
                b = reducekit.sum(x, keepdim=keepdim) if dims is None else reducekit.sum(x, dims, keepdim=keepdim)
                assert a.shape == b.shape and same_bits(a, b), f"nansum != sum: {name} dims={dims} keepdim={keepdim}"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nansum_over_unit_dims_reads_nan_as_zero(device, dtype):
    """Reduced dims that are all of size 1 leave the plan without a step: each output is one input
    value, copied. nansum must still read NaN as 0 there (and keep +-inf), and sum and nansum must
    turn -0.0 into torch's +0.0, with or without keepdim, and with dtype= widening."""
    x = torch.tensor([[[float("nan")], [1.5]], [[-2.0], [float("inf")]], [[float("-inf")], [-0.0]]],
                     dtype=dtype).to(device)  # (3, 2, 1)
    for name in ("nansum", "sum"):
        # torch's sums start from +0.0: the sum of the one value -0.0 is +0.0
        ref = getattr(torch, name)(x.cpu().double(), dim=2)
        assert same_bits(ref[2, 1], torch.tensor(0.0, dtype=torch.float64))
        for keepdim in (False, True):
            for dims in ([2], [-1]):
                r = getattr(reducekit, name)(x, dims, keepdim=keepdim)
                want = ref.unsqueeze(2) if keepdim else ref
                assert r.dtype == dtype and r.shape == want.shape
                assert same_bits_but_nan(r.cpu().double(), want), f"{name} over a unit dim: {r.cpu().tolist()} != {want.tolist()}"
        if dtype in (torch.float16, torch.bfloat16):
            w = getattr(reducekit, name)(x, [2], dtype=torch.float32)
            assert w.dtype == torch.float32 and same_bits_but_nan(w.cpu().double(), ref), f"{name} dtype=float32 over a unit dim"


def same_bits_but_nan(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise equality, where any NaN equals any NaN (payloads differ between casts and devices)."""
    return torch.equal(a.isnan(), b.isnan()) and same_bits(torch.where(a.isnan(), 7.0, a), torch.where(b.isnan(), 7.0, b))


@pytest.mark.parametrize("device", DEVICES)
@given(case=tensors())
def test_paired_outputs_equal_single_ops(device, case):
    x, dims = case
    x = x.to(device)
    d1 = _one_dim(dims)
    mn, mx = reducekit.aminmax(x, dim=d1)
    assert same_bits(mx, reducekit.amax(x, () if d1 is None else d1)), "aminmax.max != amax"
    assert same_bits(mn, reducekit.amin(x, () if d1 is None else d1)), "aminmax.min != amin"
    v, m = _call(reducekit.var_mean, x, dims)
    assert same_bits(v, _call(reducekit.var, x, dims)), "var_mean[0] != var"
    assert same_bits(m, _call(reducekit.var_mean, x, dims)[1]), "var_mean not run to run"
    s, m2 = _call(reducekit.std_mean, x, dims)
    assert same_bits(s, _call(reducekit.std, x, dims)), "std_mean[0] != std"
    assert same_bits(m, m2), "std_mean's mean != var_mean's mean"


@pytest.mark.parametrize("device", DEVICES)
@given(case=tensors(dtypes=FLOATS + [torch.int32, torch.bool]))
def test_count_nonzero_agrees_with_any_and_all(device, case):
    x, dims = case
    if x.dtype == torch.int32:
        x = (x.float() * 0).to(torch.int32) + (x.float() > 0.5).to(torch.int32)
    elif x.dtype == torch.bool:
        x = x
    else:
        x = torch.where(x.float() > 0.5, x, torch.zeros((), dtype=x.dtype))
    x = x.to(device)
    cnt = reducekit.count_nonzero(x, None if dims is None else tuple(dims))
    n = x.numel() if dims is None else math.prod(x.shape[d] for d in dims)
    anyr = reducekit.any(x) if dims is None else reducekit.any(x, tuple(dims))
    allr = reducekit.all(x) if dims is None else reducekit.all(x, tuple(dims))
    assert torch.equal(anyr.cpu(), (cnt > 0).cpu()), "any != (count_nonzero > 0)"
    assert torch.equal(allr.cpu(), (cnt == n).cpu()), "all != (count_nonzero == n)"


# ------------------------------------------------------------------------------------------------
# The engine's documented order (csrc/cpu/reduce_cpu.cpp, engine/reduce_ops.h), as a model: a
# slice of n values in its memory order is cut into lanes of 64 bytes of input, each summed from 0
# in index order in the accumulator, and the lane sums are combined by a perfect pairwise tree
# (padded with zeros to a power of two).

def _model_sum(vals: np.ndarray, itemsize: int, acc) -> np.ndarray:
    return engine_order_sum(vals, 64 // itemsize, acc)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,dim", [((7, 1000), 1), ((3, 4097), 1), ((5000,), 0), ((33, 2, 9), 0)])
def test_engine_order_model_cpu(dtype, shape, dim):
    """vector_norm(x, 1) is the engine's sum of |x| in the documented order, and mean is that sum
    over n, bitwise (CPU: the model is the CPU loops' order)."""
    g = torch.Generator().manual_seed(seed_for("order", str(dtype), shape))
    x = (torch.randn(shape, generator=g, dtype=torch.float64) * 3 + 1).to(dtype)
    acc = np.float32 if dtype in (torch.float16, torch.bfloat16) else np.float64
    vals = x.movedim(dim, -1).float().numpy() if dtype == torch.bfloat16 else x.movedim(dim, -1).numpy()
    model = _model_sum(np.abs(vals), x.element_size(), acc)
    got = reducekit.linalg.vector_norm(x, 1, dim)
    assert np.array_equal(got.float().numpy() if dtype == torch.bfloat16 else got.numpy(),
                          torch.from_numpy(np.asarray(model)).to(dtype).float().numpy() if dtype == torch.bfloat16
                          else np.asarray(model).astype(got.numpy().dtype)), "vector_norm(1) is not the engine's order"
    n = x.shape[dim]
    mean_model = (_model_sum(vals, x.element_size(), acc) / acc(n)).astype(acc)
    got = reducekit.mean(x, dim)
    want = torch.from_numpy(np.asarray(mean_model)).to(dtype)
    assert same_bits(got, want), "mean is not the engine's sum over n"


# ------------------------------------------------------------------------------------------------
# Thread counts and instruction sets.

THREAD_CASES = [((3, 3 * 4096 * 16 + 77), 1), ((3 * 4096 * 16 + 77,), None), ((2, 3 * 65536 + 5), 1), ((131075, 3), 0)]
ALL_DTYPES = [torch.float64, torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.int8, torch.bool]


def _all_ops(x, dim):
    """Every op of reducekit.OPS that takes x's dtype, over dim."""
    out = {}
    fl = x.is_floating_point()
    d = dim
    out["sum"] = reducekit.sum(x) if d is None else reducekit.sum(x, d)
    out["prod"] = reducekit.prod(x, d) if d is not None else reducekit.prod(x)
    out["amax"] = reducekit.amax(x, () if d is None else d)
    out["aminmax"] = reducekit.aminmax(x, dim=d)
    if x.dtype != torch.bool:  # torch's argmax refuses bool input, and so does reducekit's
        out["argmax"] = reducekit.argmax(x, d)
    out["count_nonzero"] = reducekit.count_nonzero(x, d)
    out["all"] = reducekit.all(x) if d is None else reducekit.all(x, d)
    if fl:
        for name in ("mean", "nansum", "nanmean", "var", "std_mean"):
            f = getattr(reducekit, name)
            out[name] = f(x) if d is None else f(x, d)
        out["logsumexp"] = reducekit.logsumexp(x, list(range(x.dim())) if d is None else d)
        for o in (0, 1, 2, 3, 3.5, math.inf):
            out[f"norm{o}"] = reducekit.linalg.vector_norm(x, o, d)
    return out


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_bits_independent_of_thread_count(dtype):
    """Every op gives the same bits with 1, 2 and 4 threads, on rows of several chunks (CPU)."""
    old = torch.get_num_threads()
    try:
        for shape, dim in THREAD_CASES:
            g = torch.Generator().manual_seed(seed_for("threads", str(dtype), shape))
            x = torch.randn(shape, generator=g, dtype=torch.float64) * 3 + 0.5
            x = (x > 0) if dtype == torch.bool else (x * 1e3).to(dtype) if not dtype.is_floating_point else x.to(dtype)
            results = {}
            for t in (1, 2, 4):
                torch.set_num_threads(t)
                results[t] = _all_ops(x, dim)
            for t in (2, 4):
                for name, r in results[t].items():
                    a = tuple(r) if isinstance(r, tuple) else (r,)
                    b = tuple(results[1][name]) if isinstance(results[1][name], tuple) else (results[1][name],)
                    for u, v in zip(a, b):
                        assert same_bits(u, v), f"{name} {dtype} {shape} dim={dim}: {t} threads changed the bits"
    finally:
        torch.set_num_threads(old)


_ISA_SCRIPT = r"""
import hashlib, json, math, sys, torch, reducekit
sys.path.insert(0, sys.argv[1])
from test_invariants import _all_ops, ALL_DTYPES
out = {}
for dt in ALL_DTYPES:
    # (37, 45) and (19, 64): rows of fewer than 8 whole lanes, 8 rows a block (and rows left over);
    # (9, 740), (13, 133), (6, 4245): the lanes a row leaves after its blocks of 8 (bfloat16 7 and a
    # partial one, float64 4; float64 a partial one only; float32 1 and a partial one), which the
    # sum-like operators take as one padded block from 3 lanes up, the 2-norm always (session 48)
    # (5, 37), (16, 45) over 0: columns of at most 16 rows, whose sums read their lanes from the rows
    # and build the tree in registers, the empty lanes skipped (session 59); (65537, 5): a last chunk
    # of 1 row the same way ((1, 37) takes the size-1 copy); (17, 9), (64, 11), (65, 9): the lane
    # array. (float64 sums take the operators' loops: one order on both builds.)
    for shape, dim in [((5, 70001), 1), ((70001, 5), 0), ((131077,), None), ((3, 33, 17), 1), ((2, 3, 65539), (0, 2)), ((37, 45), 1),
                       ((19, 64), 1), ((9, 740), 1), ((13, 133), 1), ((6, 4245), 1), ((1, 37), 0), ((5, 37), 0), ((16, 45), 0),
                       ((65537, 5), 0), ((17, 9), 0), ((64, 11), 0), ((65, 9), 0)]:
        g = torch.Generator().manual_seed(7)
        x = torch.randn(shape, generator=g, dtype=torch.float64) * 3 + 0.5
        x = (x > 0) if dt == torch.bool else (x * 1e3).to(dt) if not dt.is_floating_point else x.to(dt)
        if isinstance(dim, tuple):
            r = {"sum": reducekit.sum(x, dim)}
        else:
            r = _all_ops(x, dim)
        for k, v in r.items():
            for i, t in enumerate(v if isinstance(v, tuple) else (v,)):
                out[f"{dt} {shape} {dim} {k} {i}"] = hashlib.sha1(t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()).hexdigest()
    if dt.is_floating_point:  # logsumexp's exponentials at their edges: spreads past 708 (float64: subnormal terms), -inf
        g = torch.Generator().manual_seed(9)
        w = torch.randn(7, 4099, generator=g, dtype=torch.float64) * 300
        w[1, ::5] = -math.inf
        w[2, 100:200] = -745.0
        w[3] = torch.linspace(-746.0, -700.0, 4099, dtype=torch.float64)  # every term near the edges, the max 0
        w[3, 77] = 0.0
        for d in (1, 0):
            out[f"{dt} wide logsumexp {d}"] = hashlib.sha1(reducekit.logsumexp(w.to(dt), d).contiguous().view(torch.uint8).numpy().tobytes()).hexdigest()
        # columns of many lanes: the tile's trees combined in vectors (16 or 8 columns and a scalar rest)
        v = torch.randn(1000, 37, generator=g, dtype=torch.float64) * 300
        v[::7, 3] = -math.inf
        v[:, 5] = -math.inf
        v[500, 6], v[10, 8], v[900, 20] = math.inf, math.nan, math.inf
        out[f"{dt} wide logsumexp columns"] = hashlib.sha1(reducekit.logsumexp(v.to(dt), 0).contiguous().view(torch.uint8).numpy().tobytes()).hexdigest()
    if dt.is_floating_point:  # sum's columns of few rows: -0.0 everywhere, NaN, infinities, cancellations
        g = torch.Generator().manual_seed(10)
        # 22 columns: the last ones (float32's 2, the 16-bit floats' 6) take the scalar tail
        for R in (3, 8, 16, 17, 40, 64):
            c = torch.full((R, 22), -0.0, dtype=torch.float64)
            c[:, 1] = torch.arange(R, dtype=torch.float64) - R / 2
            c[R // 2, 2] = math.nan
            c[0, 3], c[R - 1, 4] = math.inf, -math.inf
            c[0, 5], c[R - 1, 5] = math.inf, -math.inf
            c[:, 6] = torch.tensor([(-1.0) ** i * 2.0 ** (i % 30) for i in range(R)], dtype=torch.float64)
            c[R - 1, 7] = 1.0
            for j in range(8, 20):
                c[:, j] = torch.randn(R, generator=g, dtype=torch.float64) * 10 ** (j - 14)
            c[0, 21], c[R // 2, 21] = math.inf, math.nan  # column 20 stays -0.0: both in the tail
            out[f"{dt} small columns {R}"] = hashlib.sha1(reducekit.sum(c.to(dt), 0).contiguous().view(torch.uint8).numpy().tobytes()).hexdigest()
    if dt.is_floating_point:  # the vector max's and min's rules: ties of -0 and +0 (either first), NaN, infinities
        G = 64 // torch.empty((), dtype=dt).element_size()  # values a lane: the first lane decides a tie (left kept)
        g = torch.Generator().manual_seed(8)
        x = -torch.randn(11, 4099, generator=g, dtype=torch.float64).abs() - 1
        x[0, 0], x[0, 5] = -0.0, 0.0                   # a tie in lane 0: -0 met first
        x[1, 0], x[1, 5] = 0.0, -0.0                   # mirrored
        x[2, 9 * G + 1], x[2, 9 * G + 4] = -0.0, 0.0   # first met in the second block of 8 lanes
        x[3, ::7] = -0.0
        x[3, 3::7] = 0.0
        x[4, 1000] = math.nan
        x[5, 2000], x[5, 3000] = math.inf, -math.inf
        x[6, ::2] = -0.0
        x[7, 1::2] = 0.0
        x[8, 4000], x[8, 4001] = math.nan, math.inf
        x[9, 5], x[9, 37] = 0.0, -0.0                  # the tie 32 values apart: one position of a vertical max's vectors
        x[10, 5], x[10, 37] = -0.0, 0.0
        for y, tag in ((x, "max"), (-x, "min")):  # -x: the same ties for the min
            y = y.to(dt)
            r = _all_ops(y, 1)
            r["amin"] = reducekit.amin(y, 1)
            r["norm-inf"] = reducekit.linalg.vector_norm(y, -math.inf, 1)
            for k, v in r.items():
                for i, t in enumerate(v if isinstance(v, tuple) else (v,)):
                    out[f"{dt} specials {tag} {k} {i}"] = hashlib.sha1(t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()).hexdigest()
print(json.dumps(out))
"""


def _isa_hashes(isa):
    env = dict(os.environ)
    env.pop("REDUCEKIT_CPU_ISA", None)
    if isa:
        env["REDUCEKIT_CPU_ISA"] = isa
    p = subprocess.run([sys.executable, "-c", _ISA_SCRIPT, os.path.dirname(__file__)], env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_baseline_and_avx2_kernels_same_bits():
    """The plain C++ CPU kernels (REDUCEKIT_CPU_ISA=baseline), the AVX2 loops (REDUCEKIT_CPU_ISA=avx2)
    and the default (AVX-512 for the sum-like operators' rows of float32 and 16-bit values and for
    logsumexp's rows and columns as well, where the CPU has AVX-512F) give the same bits for every op, dtype and shape here, in fresh processes; rows with
    ties of -0 and +0 for the max and the min, NaN and infinities take the operators' vector rows."""
    flags = open("/proc/cpuinfo").read().split() if os.path.exists("/proc/cpuinfo") else []
    if not all(f in flags for f in ("avx2", "fma", "f16c")):
        pytest.skip("no AVX2, FMA and F16C here: the builds are one")
    builds = {"baseline": _isa_hashes("baseline"), "avx2": _isa_hashes("avx2")}
    if "avx512f" in flags:
        builds["avx512"] = _isa_hashes(None)
    base = builds["baseline"]
    for name, h in builds.items():
        assert h.keys() == base.keys()
        diff = [k for k in base if base[k] != h[k]]
        assert not diff, f"{len(diff)} results differ between the baseline and the {name} kernels: {diff[:8]}"
