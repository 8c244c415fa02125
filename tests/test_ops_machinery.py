"""The machinery around the reductions of reducekit/reductions.py (every torch reduction but sum,
on the one custom op torch.ops.reducekit.reduce), on CPU and, where there is one, on CUDA:

1. autograd: gradcheck in float64 for every differentiable op, dim=None and dims, keepdim both;
   the input gradient equals torch's own for the same call (ties of amax/amin/aminmax and of the
   inf-norms split evenly, exactly as torch splits them);
2. torch.compile(fullgraph=True) of several ops (forward and backward) with the eager bits, and
   torch.library.opcheck of torch.ops.reducekit.reduce.default;
3. determinism: torch.use_deterministic_algorithms(True) accepts method="auto", fresh calls (and
   other CPU thread counts) give the same bits;
4. batch invariance: a row (column) of a matrix reduced with its batch has the bits of the same row
   (column) reduced alone;
5. accuracy: float32 var on data with a large mean (normal + 1e4) within the bound its order
   gives (on CUDA also no worse than torch.var);
   16-bit mean/var/vector_norm accumulate in float32 at least;
6. clear errors, of torch's exception types;
7. no call modifies its input and no result aliases it.

Data: seeded per session (helpers.generator; REDUCEKIT_SEED reproduces a run), nonzero mean.

Known library bugs are strict xfails (each reason says inputs, expected and got).
"""
from __future__ import annotations

import math
import warnings

import pytest
import torch

import reducekit
from helpers import gamma, generator, poison_allocator, same_bits

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


# ------------------------------------------------------------------------------------------------
# Calls: the same reduction through reducekit or torch


def call(lib, name: str, t: torch.Tensor, dim=None, keepdim: bool = False, **kw):
    """`name` of `lib` (reducekit or torch) over dim (None: every dim) as a list of outputs. torch
    needs help for the whole-tensor forms it spells differently (prod, logsumexp)."""
    nd = t.dim()
    if name == "vector_norm":
        r = lib.linalg.vector_norm(t, kw.get("ord", 2), dim, keepdim)
    elif name == "aminmax" and lib is torch:
        # torch's reference as amin and amax: torch.aminmax has no derivative before torch 2.13
        # ("derivative for aten::aminmax is not implemented" on the H200 image's 2.11), and from
        # 2.13 on its gradient is theirs (ties split evenly). reducekit's aminmax has its own.
        d = () if dim is None else dim
        r = (torch.amin(t, d, keepdim), torch.amax(t, d, keepdim))
    elif name == "aminmax":
        r = lib.aminmax(t, dim=dim, keepdim=keepdim)
    elif name in ("var", "std", "var_mean", "std_mean"):
        r = getattr(lib, name)(t, dim, keepdim=keepdim, correction=kw.get("correction", 1))
    elif name == "prod" and dim is None and lib is torch:
        r = torch.prod(t)
        if keepdim:
            r = r.reshape([1] * nd)
    elif name == "logsumexp" and dim is None and lib is torch:
        r = torch.logsumexp(t, tuple(range(nd)), keepdim)
    elif name == "count_nonzero":
        r = lib.count_nonzero(t, dim)
    else:
        r = getattr(lib, name)(t, dim, keepdim)
    return list(r) if isinstance(r, (tuple, list)) else [r]


def signed_data(shape, device, *key, dtype=torch.float64):
    """Magnitudes in [0.5, 2], a quarter negative: mean about 0.6, away from zero (the norms'
    gradients), no ties (continuous draws)."""
    g = generator(device, *key)
    mag = torch.rand(shape, generator=g, device=device, dtype=torch.float64) * 1.5 + 0.5
    sign = torch.where(torch.rand(shape, generator=g, device=device, dtype=torch.float64) < 0.25, -1.0, 1.0)
    return (mag * sign).to(dtype)


def normal_data(shape, device, *key, dtype=torch.float32, mean=1.0, std=1.0):
    g = generator(device, *key)
    x = torch.randn(shape, generator=g, device=device, dtype=torch.float64 if dtype == torch.float64 else torch.float32)
    return (x * std + mean).to(dtype)


# ------------------------------------------------------------------------------------------------
# 1. Autograd

SHAPE = (2, 3, 4)
# (op, extra keywords, dims): None and one dim always, and a dim tuple where torch takes one.
GRAD_CASES = {
    "mean": ({}, [None, 1, (0, 2)]),
    "nansum": ({}, [None, -1, (0, 2)]),
    "nanmean": ({}, [None, 1, (0, 2)]),
    "prod": ({}, [None, 1, -1]),
    "amax": ({}, [None, 1, (0, 2)]),
    "amin": ({}, [None, 0, (1, 2)]),
    "aminmax": ({}, [None, 1, -1]),
    "logsumexp": ({}, [None, 1, (0, 2)]),
    **{f"{v}-c{c}": ({"correction": c}, [None, 1, (0, 2)]) for v in ("var", "std", "var_mean", "std_mean") for c in (0, 1)},
    **{f"vector_norm-ord{o}": ({"ord": o}, [None, 1, (0, 2)]) for o in (1, 2, 3, 0.5, math.inf, -math.inf)},
}


def _grads_against_torch(op, x, dim, keepdim, kw, g, where):
    """reducekit's and torch's outputs of op on copies of x, one random incoming gradient per
    output (drawn from g), and the input gradients each gives: (ours, torch's, incoming, our
    gradient, torch's gradient)."""
    a = x.clone().requires_grad_()
    b = x.clone().requires_grad_()
    ra = call(reducekit, op, a, dim, keepdim, **kw)
    rb = call(torch, op, b, dim, keepdim, **kw)
    assert len(ra) == len(rb), where
    gos = [torch.randn(v.shape, generator=g, device=x.device, dtype=v.dtype) for v in rb]
    (ga,) = torch.autograd.grad(ra, a, gos)
    (gb,) = torch.autograd.grad(rb, b, gos)
    return ra, rb, gos, ga, gb


@pytest.mark.parametrize("case", list(GRAD_CASES))
@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck_and_grad_matches_torch(device, case):
    """gradcheck in float64, and d(output)/d(input) for a random incoming gradient equals torch's
    (torch.autograd.grad of torch's op on the same input), for every dim form and keepdim."""
    op = case.split("-")[0]
    kw, dims = GRAD_CASES[case]
    x = signed_data(SHAPE, device, "grad", case)
    g = generator(device, "grad_out", case)
    for dim in dims:
        for keepdim in (False, True):
            where = f"{case} dim={dim!r} keepdim={keepdim}"
            ra, rb, gos, ga, gb = _grads_against_torch(op, x, dim, keepdim, kw, g, where)
            for u, v in zip(ra, rb):
                assert u.requires_grad, f"{where}: output does not require grad"
                assert u.shape == v.shape and u.dtype == v.dtype, f"{where}: {u.shape} {u.dtype} vs torch {v.shape} {v.dtype}"
                torch.testing.assert_close(u, v, msg=lambda m: f"{where}: forward differs from torch: {m}")
            assert ga.shape == x.shape and ga.dtype == x.dtype, where
            torch.testing.assert_close(ga, gb, msg=lambda m: f"{where}: input gradient differs from torch's: {m}")
            # one output of a pair used alone: the other's incoming gradient is undefined
            if len(ra) == 2:
                for k in range(2):
                    a2 = x.clone().requires_grad_()
                    b2 = x.clone().requires_grad_()
                    (ga2,) = torch.autograd.grad(call(reducekit, op, a2, dim, keepdim, **kw)[k], a2, gos[k])
                    (gb2,) = torch.autograd.grad(call(torch, op, b2, dim, keepdim, **kw)[k], b2, gos[k])
                    torch.testing.assert_close(ga2, gb2, msg=lambda m: f"{where}: gradient of output {k} alone: {m}")
            torch.autograd.gradcheck(lambda t: tuple(call(reducekit, op, t, dim, keepdim, **kw)), (x.clone().requires_grad_(),))


def _tie_data(device):
    """Rows with ties for the max, the min and |x|'s max and min (opposite signs)."""
    x = torch.tensor([[1.0, 3.0, 3.0, 0.5, -3.0],
                      [2.0, 2.0, 2.0, -1.0, -1.0],
                      [5.0, -5.0, 5.0, -0.25, 0.25],
                      [0.75, 0.75, 0.75, 0.75, 0.75]], dtype=torch.float64, device=device)
    return x


TIE_CASES = [("amax", {}), ("amin", {}), ("aminmax", {}), ("vector_norm", {"ord": math.inf}),
             ("vector_norm", {"ord": -math.inf})]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op,kw", TIE_CASES, ids=[f"{o}{kw.get('ord', '')}" for o, kw in TIE_CASES])
def test_grad_ties_split_evenly_as_torch(device, op, kw):
    """With ties the gradient is split evenly among the tied values: bitwise torch's gradient, and
    for amax/amin explicitly g / (number of ties) at each tie, 0 elsewhere."""
    x = _tie_data(device)
    g = generator(device, "ties", op)
    dims = [None, 1, 0] if op == "aminmax" else [None, 1, 0, (0, 1)]
    for dim in dims:
        for keepdim in (False, True):
            where = f"{op}{kw} dim={dim!r} keepdim={keepdim}"
            _, _, gos, ga, gb = _grads_against_torch(op, x, dim, keepdim, kw, g, where)
            assert same_bits(ga, gb), f"{where}: gradient\n{ga}\ndiffers from torch's\n{gb}"
            if op in ("amax", "amin") and dim is not None:
                red = tuple(range(x.dim())) if dim == (0, 1) else (dim,)
                ext = getattr(torch, op)(x, red, keepdim=True)
                mask = x == ext
                go = gos[0] if keepdim else gos[0].reshape(ext.shape)
                expect = torch.where(mask, go / mask.sum(red, keepdim=True), torch.zeros((), dtype=x.dtype, device=device))
                torch.testing.assert_close(ga, expect, rtol=0, atol=0, msg=lambda m: f"{where}: not split evenly: {m}")


@pytest.mark.parametrize("device", DEVICES)
def test_grad_nan_inputs_match_torch(device):
    """NaN inputs: nansum/nanmean skip them in the gradient (an all-NaN row gives NaN for nanmean,
    as torch), amax propagates them: torch's gradients, NaN where torch has NaN."""
    x = signed_data((4, 5), device, "grad_nan")
    x[0, 1] = math.nan
    x[2, :] = math.nan
    for op in ("nansum", "nanmean", "amax", "mean"):
        for dim in (None, 1, 0):
            a = x.clone().requires_grad_()
            b = x.clone().requires_grad_()
            ra, rb = call(reducekit, op, a, dim), call(torch, op, b, dim)
            torch.testing.assert_close(ra[0], rb[0], equal_nan=True)
            go = torch.linspace(0.5, 2, rb[0].numel(), dtype=x.dtype, device=device).reshape(rb[0].shape)
            (ga,) = torch.autograd.grad(ra, a, [go])
            (gb,) = torch.autograd.grad(rb, b, [go])
            torch.testing.assert_close(ga, gb, equal_nan=True, msg=lambda m: f"{op} dim={dim}: {m}")


@pytest.mark.parametrize("device", DEVICES)
def test_grad_mixed_precision_and_no_grad(device):
    """float32/bfloat16 inputs get their own dtype's gradient, equal to torch's within the
    dtype's tolerance; under no_grad (or for argmax etc.) nothing records a graph."""
    for dtype in (torch.float32, torch.bfloat16):
        x = signed_data((3, 70), device, "grad_mixed", str(dtype), dtype=dtype)
        for op, kw in (("mean", {}), ("var_mean", {"correction": 1}), ("logsumexp", {}), ("vector_norm", {"ord": 2}),
                       ("amax", {}), ("std_mean", {"correction": 0})):
            a = x.clone().requires_grad_()
            b = x.clone().requires_grad_()
            ra, rb = call(reducekit, op, a, 1, **kw), call(torch, op, b, 1, **kw)
            gos = [torch.ones_like(v) for v in rb]
            (ga,) = torch.autograd.grad(ra, a, gos)
            (gb,) = torch.autograd.grad(rb, b, gos)
            assert ga.dtype == dtype, f"{op}: gradient dtype {ga.dtype}"
            tol = {"rtol": 2e-2, "atol": 2e-2} if dtype == torch.bfloat16 else {"rtol": 1e-4, "atol": 1e-5}
            torch.testing.assert_close(ga.float(), gb.float(), **tol, msg=lambda m: f"{op} {dtype}: {m}")
    x = torch.ones(3, 4, device=device, requires_grad=True)
    with torch.no_grad():
        assert not reducekit.mean(x, 1).requires_grad
        assert not reducekit.var_mean(x, 1)[0].requires_grad
    for f in (reducekit.argmax, reducekit.argmin):
        assert not f(x, 1).requires_grad
    assert not reducekit.count_nonzero(x, 1).requires_grad


# ------------------------------------------------------------------------------------------------
# 2. torch.compile and opcheck


def _compiled_fn(t):
    v, m = reducekit.var_mean(t, dim=-1, correction=0)
    s, m2 = reducekit.std_mean(t, (0, 2), keepdim=True)
    return (reducekit.mean(t, (0, 2), keepdim=True) * 2, v, m, s, m2, reducekit.amax(t, 1), reducekit.amin(t),
            reducekit.logsumexp(t, 2), reducekit.linalg.vector_norm(t, 3, dim=(0, 1)), reducekit.linalg.vector_norm(t),
            reducekit.argmax(t, 1), reducekit.argmin(t), reducekit.aminmax(t, dim=0).max, reducekit.prod(t[:, :3], 1),
            reducekit.nanmean(t, 0), reducekit.nansum(t, dtype=torch.float64), reducekit.count_nonzero(t > 3, 1),
            reducekit.all(t > -100, 2), reducekit.any(t > 6) + 1)


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_fullgraph_matches_eager(device):
    """One graph, no break, for a function calling many reductions; each output has the eager
    call's bits (CompileCounter and aot_eager backends)."""
    from torch._dynamo.testing import CompileCounter

    x = normal_data((6, 35, 46), device, "compile", mean=3.0)
    eager = _compiled_fn(x)
    torch._dynamo.reset()
    try:
        cnt = CompileCounter()
        got = torch.compile(_compiled_fn, backend=cnt, fullgraph=True)(x)
        assert cnt.frame_count == 1, f"{cnt.frame_count} frames compiled"
        for k, (a, b) in enumerate(zip(got, eager)):
            assert a.shape == b.shape and a.dtype == b.dtype and same_bits(a, b), f"CompileCounter output {k}"
        got = torch.compile(_compiled_fn, backend="aot_eager", fullgraph=True)(x)
        for k, (a, b) in enumerate(zip(got, eager)):
            assert a.shape == b.shape and a.dtype == b.dtype and same_bits(a, b), f"aot_eager output {k}"
    finally:
        torch._dynamo.reset()


def _loss(t):
    v, m = reducekit.var_mean(t, 1)
    s, _ = reducekit.std_mean(t, 0, correction=0)
    return (v.sum() + m.sum() + s.sum() + reducekit.amax(t, 0).sum() + reducekit.logsumexp(t, 1).sum()
            + reducekit.linalg.vector_norm(t, 3, 1).sum() + reducekit.linalg.vector_norm(t, math.inf)
            + reducekit.prod(t[:, :4], 1).sum() + reducekit.nanmean(t, 1).sum() + reducekit.aminmax(t, dim=1).min.sum()
            + reducekit.mean(t) + reducekit.nansum(t, 0).sum())


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_backward(device):
    """The compiled graph's gradient (aot_eager traces the C++ backward) equals eager's."""
    x = signed_data((5, 7), device, "compile_grad") + 1
    a = x.clone().requires_grad_()
    b = x.clone().requires_grad_()
    (ga,) = torch.autograd.grad(_loss(a), a)
    torch._dynamo.reset()
    try:
        (gb,) = torch.autograd.grad(torch.compile(_loss, backend="aot_eager", fullgraph=True)(b), b)
    finally:
        torch._dynamo.reset()
    torch.testing.assert_close(gb, ga)


OPCHECK_CASES = [
    ("mean", {"dim": [1]}, torch.float32, False),
    ("mean", {"dim": [0], "dtype": torch.float32}, torch.float16, False),
    ("mean", {"dim": None, "keepdim": True}, torch.float64, True),
    ("var_mean", {"dim": [0, 2], "correction": 0.0}, torch.float32, False),
    ("std_mean", {"dim": [-1], "keepdim": True}, torch.float64, True),
    ("amax", {"dim": None, "keepdim": True}, torch.bfloat16, False),
    ("amin", {"dim": [1]}, torch.float64, True),
    ("aminmax", {"dim": [0]}, torch.int16, False),
    ("argmax", {"dim": [1], "keepdim": True}, torch.float32, False),
    ("vector_norm", {"dim": [1], "ord": 3.0}, torch.float64, True),
    ("vector_norm", {"dim": None, "ord": math.inf}, torch.float32, False),
    ("logsumexp", {"dim": [-1]}, torch.float64, True),
    ("prod", {"dim": [1]}, torch.int32, False),
    ("prod", {"dim": [2]}, torch.float64, True),
    ("count_nonzero", {"dim": [0]}, torch.int16, False),
    ("nansum", {"dim": None, "dtype": torch.float64}, torch.float32, False),
    ("nanmean", {"dim": [0, 1]}, torch.float64, True),
    ("all", {"dim": [1]}, torch.uint8, False),
    ("any", {"dim": None}, torch.bool, False),
]


@pytest.mark.parametrize("case", range(len(OPCHECK_CASES)),
                         ids=[f"{c[0]}-{str(c[2]).removeprefix('torch.')}{'-grad' if c[3] else ''}" for c in OPCHECK_CASES])
@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_reduce(device, case):
    """torch.library.opcheck of torch.ops.reducekit.reduce.default: schema, fake kernel, autograd
    registration (inputs that require grad) and AOT dispatch, contiguous and transposed."""
    op, kw, dtype, grad = OPCHECK_CASES[case]
    x = normal_data((6, 35, 46), device, "opcheck", case, mean=2.0)
    if dtype == torch.bool:
        x = x > 2
    elif not dtype.is_floating_point:
        x = (x * 10).round().to(dtype)
    else:
        x = x.to(dtype)
    for t in (x, x.transpose(0, -1)):
        t = t.detach().requires_grad_() if grad else t
        torch.library.opcheck(torch.ops.reducekit.reduce.default, (t, op), {**kw, "method": "auto"})


def test_reduce_schema():
    schema = str(torch.ops.reducekit.reduce.default._schema)
    assert schema == ("reducekit::reduce(Tensor self, str op, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, "
                      "float ord=2., float correction=1., str method=\"auto\") -> Tensor[]"), schema


# ------------------------------------------------------------------------------------------------
# 3. Determinism


def _det_calls(x):
    """Every op with method='auto' over a 2-D float input, as a list of outputs."""
    return [
        *reducekit.var_mean(x, 1), *reducekit.var_mean(x, 0, correction=0), *reducekit.std_mean(x),
        reducekit.mean(x), reducekit.mean(x, 0), reducekit.nansum(x, 1), reducekit.nanmean(x),
        reducekit.logsumexp(x, 1), reducekit.logsumexp(x, (0, 1)), reducekit.linalg.vector_norm(x),
        reducekit.linalg.vector_norm(x, 3, 0), reducekit.linalg.vector_norm(x, 1, 1), reducekit.prod(x, 1),
        reducekit.amax(x), reducekit.amin(x, 0), *reducekit.aminmax(x, dim=1), reducekit.argmax(x), reducekit.argmin(x, 0),
        reducekit.count_nonzero(x > 1, 0), reducekit.all(x > -10), reducekit.any(x > 4, 1),
    ]


@pytest.mark.parametrize("device", DEVICES)
def test_deterministic_algorithms_and_run_to_run(device):
    """torch.use_deterministic_algorithms(True) lets method='auto' run (no error, no warning) and
    fresh calls give the same bits; on CPU also with another thread count."""
    shapes = [(2**20,), (256, 4097), (4097, 256)]
    old, old_warn = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    try:
        torch.use_deterministic_algorithms(True)
        for shape in shapes:
            x = normal_data(shape, device, "det", shape, mean=2.0)
            x2 = x.reshape(1, -1) if x.dim() == 1 else x
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                first = _det_calls(x2)
            for _ in range(2):
                poison_allocator(device)
                again = _det_calls(x2.clone())
                for k, (a, b) in enumerate(zip(first, again)):
                    assert same_bits(a, b), f"shape {shape}: output {k} varied run to run"
            if device == "cpu":
                n = torch.get_num_threads()
                try:
                    torch.set_num_threads(1 if n > 1 else 2)
                    other = _det_calls(x2)
                finally:
                    torch.set_num_threads(n)
                for k, (a, b) in enumerate(zip(first, other)):
                    assert same_bits(a, b), f"shape {shape}: output {k} depends on the thread count"
    finally:
        torch.use_deterministic_algorithms(old, warn_only=old_warn)


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("device", DEVICES)
def test_var_std_deterministic(device, op):
    x = normal_data((2**20,), device, "det_var", op, mean=2.0)
    old = torch.are_deterministic_algorithms_enabled()
    try:
        torch.use_deterministic_algorithms(True)
        f = getattr(reducekit, op)
        first = (f(x), f(x.view(1024, 1024), 1), f(x.view(1024, 1024), 0, correction=0))
        for _ in range(2):
            poison_allocator(device)
            again = (f(x), f(x.view(1024, 1024), 1), f(x.view(1024, 1024), 0, correction=0))
            assert all(same_bits(a, b) for a, b in zip(first, again)), f"{op} varied run to run"
    finally:
        torch.use_deterministic_algorithms(old)


# ------------------------------------------------------------------------------------------------
# 4. Batch invariance

BATCH_OPS = {
    "var_mean": lambda t, d: list(reducekit.var_mean(t, d)),
    "std_mean0": lambda t, d: list(reducekit.std_mean(t, d, correction=0)),
    "mean": lambda t, d: [reducekit.mean(t, d)],
    "logsumexp": lambda t, d: [reducekit.logsumexp(t, d)],
    "vector_norm2": lambda t, d: [reducekit.linalg.vector_norm(t, 2, d)],
    "vector_norm3": lambda t, d: [reducekit.linalg.vector_norm(t, 3, d)],
    "argmax": lambda t, d: [reducekit.argmax(t, d)],
    "amax": lambda t, d: [reducekit.amax(t, d)],
    "nansum": lambda t, d: [reducekit.nansum(t, d)],
}

# (layout, shape, dtype): rows reduce dim 1 (one long float32 row alone takes the CPU's chunked
# parallel path past 4096 lanes of 16, at 2^17 + 5; in a batch it does not), columns reduce dim 0
# (70 columns: a 64-column CPU tile and a part; 2^16 + 3 rows: many lanes down each column).
BATCH_LAYOUTS = [
    ("rows", (37, 4097), torch.float32),
    ("rows", (3, 2**17 + 5), torch.float32),
    ("rows", (9, 1031), torch.bfloat16),
    ("columns", (4097, 70), torch.float32),
    ("columns", (2**16 + 3, 5), torch.float32),
    ("columns", (1031, 9), torch.float16),
]


@pytest.mark.parametrize("layout", range(len(BATCH_LAYOUTS)),
                         ids=[f"{lay}-{s[0]}x{s[1]}-{str(d).removeprefix('torch.')}" for lay, s, d in BATCH_LAYOUTS])
@pytest.mark.parametrize("device", DEVICES)
def test_batch_invariance(device, layout):
    """Each output's bits depend only on its own slice: row i of the batch equals x[i:i+1]
    reduced alone, column j equals x[:, j:j+1] reduced alone."""
    kind, shape, dtype = BATCH_LAYOUTS[layout]
    x = normal_data(shape, device, "batch", layout, dtype=dtype, mean=3.0)
    d = 1 if kind == "rows" else 0
    for name, f in BATCH_OPS.items():
        full = f(x, d)
        n = shape[0] if kind == "rows" else shape[1]
        idx = range(n) if n <= 40 else sorted({0, 1, n // 2, n - 2, n - 1, 63, 64})
        for i in idx:
            poison_allocator(device)
            alone = f(x[i:i + 1] if kind == "rows" else x[:, i:i + 1], d)
            for k, (a, b) in enumerate(zip(full, alone)):
                assert same_bits(a[i:i + 1], b), (f"{name} {kind} {shape} {dtype}: slice {i} output {k} batched "
                                                  f"{a[i:i + 1].tolist()} alone {b.tolist()}")


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("device", DEVICES)
def test_batch_invariance_var_std(device, op):
    f = getattr(reducekit, op)
    for kind, shape in (("rows", (37, 4097)), ("columns", (4097, 70))):
        x = normal_data(shape, device, "batch_var", kind, mean=3.0)
        d = 1 if kind == "rows" else 0
        full = f(x, d)
        for i in (0, 1, 17, 36):
            alone = f(x[i:i + 1] if kind == "rows" else x[:, i:i + 1], d)
            assert same_bits(full[i:i + 1], alone), f"{op} {kind}: slice {i}"


# ------------------------------------------------------------------------------------------------
# 5. Accuracy


def _var_ref(x: torch.Tensor, dim, correction=1):
    """Two-pass variance in float64 (no cancellation to speak of: the deviations are formed in
    float64 from the float32 values)."""
    xd = x.double()
    m = xd.mean(dim, keepdim=True) if dim is not None else xd.mean()
    dev = xd - m
    n = xd.numel() if dim is None else xd.shape[dim]
    s = (dev * dev).sum(dim) if dim is not None else (dev * dev).sum()
    return s / (n - correction)


# Slack for the float32 result's rounding at a midpoint: a float64 accumulation and the float64
# reference may round a value within 2^-30 (relative) of a float32 midpoint to opposite neighbours.
# A whole float32 ulp is 2^-23: one ulp worse than torch anywhere still fails.
MIDPOINT = 2.0**-30
U32, U64 = 2.0**-24, 2.0**-53
RUN = 32  # engine/reduce_ops.h Welford::lane: runs of at most 32 values, two-pass in float32


def _var_bound(t: torch.Tensor, dim, ref: torch.Tensor, std: bool) -> torch.Tensor:
    """The error bound of var (std) per output, from the order both backends share (Welford's runs
    of <= 32 float32 values, shifted by their first value; state and Chan's merges in float64).

    A run of k values: the shifted deviations, their sum and mean and the squares' sum carry
    gamma_{k+1} * M2_run, and each deviation's rounding (u * (|x - c| + |d|)) times 2|x - mean|
    adds at most 2u(2 + sqrt(k)) * M2_run (Cauchy-Schwarz: |c - mean| <= sqrt(M2_run)). Runs'
    M2 sum to at most M2. A merge's delta = mean_b - mean_a carries the float64 means' rounding,
    at most 2 * R * u64 * |mean| over R runs (any merge order); summed over the merges by
    Cauchy-Schwarz it adds 4 R u64 sqrt(kappa - 1) sqrt(log2 n + 1) relative (kappa = 1 +
    mean^2 / var). Then the float64 division, float32 rounding (u32), and for std the square
    root, which halves the relative error and rounds once more."""
    td = t.double()
    n = td.numel() if dim is None else td.shape[dim]
    mean = td.mean() if dim is None else td.mean(dim)
    runs = -(-n // RUN)
    kappa1 = (mean * mean) / (ref * ref if std else ref)
    rel = (gamma(RUN + 1, U32) + 2 * U32 * (2 + math.sqrt(RUN))
           + 4 * runs * U64 * kappa1.sqrt() * math.sqrt(math.log2(n) + 1) + 2 * U64)
    rel = rel / 2 + U32 if std else rel + U32
    return rel * ref.abs() + MIDPOINT * ref.abs()


def _assert_var_accurate(ours, theirs, ref, bound, what):
    """Every output within the derived bound (both backends: one order, engine/op_impl.h); on CUDA,
    where torch's var also accumulates float32 values in float32 runs, the largest and the mean
    error are no larger than torch's too. (torch's CPU var runs Welford in float64, ahead of any
    float32 run: there it is a reference, not a bar.)"""
    eo = (ours.double() - ref).abs()
    et = (theirs.double() - ref).abs()
    slack = MIDPOINT * ref.abs()
    summary = (f"max error ours {eo.max().item():.3e}, torch {et.max().item():.3e}; "
               f"mean error ours {eo.mean().item():.3e}, torch {et.mean().item():.3e}; "
               f"bound {bound.min().item():.3e}..{bound.max().item():.3e}")
    over = eo > bound
    assert not over.any(), (f"{what}: {int(over.sum())} of {over.numel()} outputs exceed the derived bound; worst "
                            f"{(eo / bound).max().item():.2f}x; {summary}")
    if ours.device.type == "cuda":
        assert eo.max() <= et.max() + slack.max(), f"{what}: {summary}"
        assert eo.mean() <= et.mean() + slack.mean(), f"{what}: {summary}"


@pytest.mark.parametrize("device", DEVICES)
def test_var_mean_accuracy_large_mean(device):
    """float32 normal(1e4, 1) data (condition number ~1e8): var_mean's variance is within the
    derived bound (and on CUDA errs no more than torch.var), for 2^16 x 64 over either dim and a
    2^20 vector, corrections 0 and 1; its mean is within half an ulp plus the float32 runs' error
    (128 u32 |mean|) of the exact mean."""
    x = normal_data((2**16, 64), device, "acc_var", mean=1e4)
    v = normal_data((2**20,), device, "acc_var_vec", mean=1e4)
    for t, dim in ((x, 0), (x, 1), (v, None), (v, 0)):
        for c in (0, 1):
            ref = _var_ref(t, dim, c)
            ours, mean = reducekit.var_mean(t, dim, correction=c)
            theirs = torch.var(t, dim, correction=c)
            _assert_var_accurate(ours, theirs, ref, _var_bound(t, dim, ref, False),
                                 f"var_mean {tuple(t.shape)} dim={dim} correction={c}")
            mref = t.double().mean(dim) if dim is not None else t.double().mean()
            half_ulp = torch.finfo(torch.float32).eps / 2 * mref.abs()
            err = (mean.double() - mref).abs()
            assert (err <= half_ulp + 128 * U32 * mref.abs()).all(), f"mean {tuple(t.shape)} dim={dim}: max error {err.max().item():.3e}"


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("device", DEVICES)
def test_var_std_accuracy_large_mean(device, op):
    """reducekit.var (std: against torch.std and the reference's square root) on the same data:
    within the derived bound, and on CUDA no worse than torch's."""
    x = normal_data((2**16, 64), device, "acc_var", mean=1e4)
    v = normal_data((2**20,), device, "acc_var_vec", mean=1e4)
    for t, dim in ((x, 0), (x, 1), (v, None)):
        for c in (0, 1):
            ref = _var_ref(t, dim, c)
            if op == "std":
                ref = ref.sqrt()
            ours = getattr(reducekit, op)(t, dim, correction=c)
            theirs = getattr(torch, op)(t, dim, correction=c)
            _assert_var_accurate(ours, theirs, ref, _var_bound(t, dim, ref, op == "std"),
                                 f"{op} {tuple(t.shape)} dim={dim} correction={c}")


ACC32_DEPTH = 64  # more than the lane (32 values of 16 bits) plus the tree's log2(2^16 / 32) levels


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("device", DEVICES)
def test_16bit_accumulate_in_float32(device, dtype):
    """2^16 values near 1: mean, var (var_mean) and vector_norm within one rounding to the 16-bit
    output plus a float32 accumulation's error of the float64 reference. A float16 accumulator is
    far off: any float16 running sum of these values overflows (about 2^16 > 65504); a sequential
    bfloat16 one stalls at 256 (the sum of squares: ulp 2)."""
    n = 2**16
    u_out = torch.finfo(dtype).eps / 2
    u32 = 2.0**-24
    x = normal_data((n,), device, "acc16", str(dtype), mean=1.0, std=0.3).to(dtype)
    xd = x.double()
    checks = []
    mref = xd.mean()
    checks.append(("mean", reducekit.mean(x), mref, u_out * mref.abs() + ACC32_DEPTH * u32 * xd.abs().mean()))
    vref = _var_ref(x, None)
    kappa = 1 + (mref * mref / vref)  # Welford's error grows with mean^2 / var
    v, m = reducekit.var_mean(x)
    checks.append(("var_mean.var", v, vref, u_out * vref + ACC32_DEPTH * u32 * kappa * vref))
    checks.append(("var_mean.mean", m, mref, u_out * mref.abs() + ACC32_DEPTH * u32 * xd.abs().mean()))
    nref = xd.norm()
    checks.append(("vector_norm", reducekit.linalg.vector_norm(x), nref, u_out * nref + ACC32_DEPTH * u32 * nref))
    n1 = xd.abs().sum()
    checks.append(("vector_norm1", reducekit.linalg.vector_norm(x, 1, dtype=torch.float32), n1, ACC32_DEPTH * u32 * n1))
    for what, got, ref, bound in checks:
        assert got.dtype in (dtype, torch.float32), what
        err = (got.double() - ref).abs().item()
        assert err <= bound.item(), (f"{what} of {n} {dtype}: got {got.item()!r}, ref {ref.item()!r}, "
                                     f"error {err:.3e} > {bound.item():.3e}")
    # the same over dims (rows of 2^14, 4 batches; columns)
    y = x.view(4, n // 4)
    for dim in (1, 0):
        got = reducekit.mean(y, dim).double()
        ref = y.double().mean(dim)
        bound = u_out * ref.abs() + ACC32_DEPTH * u32 * y.double().abs().mean(dim)
        assert ((got - ref).abs() <= bound).all(), f"mean over dim {dim}: {got.tolist()} vs {ref.tolist()}"


# ------------------------------------------------------------------------------------------------
# 6. Errors


def _exc(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return e
    return None


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.bool], ids=str)
@pytest.mark.parametrize("device", DEVICES)
def test_integer_input_rejected_for_float_ops(device, dtype):
    """var/std/var_mean/std_mean/mean/nanmean/vector_norm of integers: RuntimeError (torch's type)
    that says it needs a floating dtype."""
    x = torch.ones(3, 4, device=device, dtype=dtype)
    cases = [("var", None), ("std", 1), ("var_mean", 0), ("std_mean", None), ("mean", None), ("nanmean", 1), ("vector_norm", None)]
    for name, dim in cases:
        with pytest.raises(RuntimeError, match=r"(?i)dtype|floating") as info:
            call(reducekit, name, x, dim)
        te = _exc(lambda: call(torch, name, x, dim))
        assert te is not None and isinstance(info.value, type(te)), f"{name}: {type(info.value)} vs torch {type(te)}"
    # dtype= makes mean of integers legal, as in torch
    assert reducekit.mean(x, dtype=torch.float32).item() == 1.0


EMPTY_CASES = [
    ("amax", (0,), None), ("amax", (2, 0), 1), ("amax", (2, 0), None), ("amin", (0, 3), 0),
    ("argmax", (0,), None), ("argmax", (2, 0), 1), ("argmax", (2, 0), None), ("argmin", (0, 3), 0), ("argmin", (0,), 0),
    ("aminmax", (0,), None),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op,shape,dim", EMPTY_CASES, ids=[f"{o}-{s}-{d}" for o, s, d in EMPTY_CASES])
def test_empty_reduction_raises_like_torch(device, op, shape, dim):
    """No identity, no values: the exception type torch raises (IndexError or RuntimeError)."""
    x = torch.empty(shape, device=device)
    te = _exc(lambda: call(torch, op, x, dim))
    assert te is not None, "torch no longer raises here"
    with pytest.raises(Exception) as info:  # noqa: PT011
        call(reducekit, op, x, dim)
    assert type(info.value) is type(te), (f"reducekit raised {type(info.value).__name__}: {info.value}; "
                                          f"torch {type(te).__name__}: {te}")


@pytest.mark.parametrize("op", ["mean", "amax", "var_mean", "argmax", "logsumexp"])
def test_bad_argument_types_name_the_argument(op):
    """Arguments of the wrong type (the fast entry takes them by position and refuses them in
    pybind11): a TypeError that names the op, the argument and what it got."""
    f = getattr(reducekit, op)
    x = torch.randn(4, 3)
    d = 0 if op == "logsumexp" else None
    cases = [(lambda: f([1.0, 2.0], d), r"reducekit\.%s: input must be a torch\.Tensor, got list" % op),
             (lambda: f(x, d, method=3), r"reducekit\.%s: method must be a str .* got 3" % op),
             (lambda: f(x, 0, keepdim="yes"), r"reducekit\.%s: keepdim must be a bool, got str 'yes'" % op),
             (lambda: f(x, "a"), r"reducekit\.%s: dim must be" % op)]
    if op == "mean":
        cases.append((lambda: f(x, dtype="float32"), r"reducekit\.mean: dtype must be a torch\.dtype or None, got 'float32'"))
    for call, pattern in cases:
        with pytest.raises(TypeError, match=pattern):
            call()


@pytest.mark.parametrize("device", DEVICES)
def test_aminmax_empty_dim_raises_index_error_like_torch(device):
    """aminmax over an empty dim: torch's IndexError."""
    for shape in ((0, 3), (0,)):
        x = torch.empty(shape, device=device)
        te = _exc(lambda: torch.aminmax(x, dim=0))
        e = _exc(lambda: reducekit.aminmax(x, dim=0))
        assert e is not None and type(e) is type(te), (f"{shape}: reducekit {type(e).__name__}: {e}; "
                                                       f"torch {type(te).__name__}: {te}")


@pytest.mark.parametrize("device", DEVICES)
def test_argmax_dim_none_keepdim_like_torch(device):
    """argmax/argmin with dim=None and keepdim=True: the flat index with every dim kept as 1."""
    x = torch.randn(3, 4, 5, device=device)
    for f in ("argmax", "argmin"):
        got, exp = getattr(reducekit, f)(x, None, True), getattr(torch, f)(x, None, True)
        assert got.shape == exp.shape and torch.equal(got, exp), (f, got, exp)


@pytest.mark.parametrize("device", DEVICES)
def test_all_any_empty_dim_tuple_like_torch(device):
    """all/any with dim=(): torch reduces no dim (each value's truth, uint8 for uint8 input)."""
    for x in (torch.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]], device=device), torch.tensor([[3, 0]], dtype=torch.uint8, device=device)):
        for f in ("all", "any"):
            got, exp = getattr(reducekit, f)(x, ()), getattr(torch, f)(x, ())
            assert got.dtype == exp.dtype and torch.equal(got, exp), (f, got, exp)


@pytest.mark.parametrize("device", DEVICES)
def test_argmax_zero_outputs_like_torch(device):
    """A non-empty dim of a tensor with no elements: no outputs, no error (torch's empty int64)."""
    for shape, dim in (((0, 3), 1), ((2, 0), 0), ((3, 0, 2), 2)):
        x = torch.empty(shape, device=device)
        for name in ("argmax", "argmin"):
            for keepdim in (False, True):
                r = getattr(reducekit, name)(x, dim, keepdim)
                t = getattr(torch, name)(x, dim, keepdim)
                assert r.shape == t.shape and r.dtype == t.dtype, f"{name} {shape} dim={dim} keepdim={keepdim}"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["mean", "nansum", "nanmean", "prod", "amax", "amin", "aminmax", "all", "any", "count_nonzero",
                                "var", "std", "var_mean", "std_mean", "logsumexp", "argmax", "argmin", "vector_norm"])
def test_bad_dim_raises_index_error_like_torch(device, op):
    """A dim out of range: torch's IndexError; a repeated dim: torch's exception type."""
    x = torch.randn(3, 4, device=device)
    for dim in (2, -3):
        te = _exc(lambda: call(torch, op, x, dim))
        assert isinstance(te, IndexError), f"torch {op} dim={dim}: {te!r}"
        with pytest.raises(IndexError, match="(?i)dim"):
            call(reducekit, op, x, dim)
    if op not in ("prod", "aminmax", "argmax", "argmin"):
        te = _exc(lambda: call(torch, op, x, (0, 0)))
        e = _exc(lambda: call(reducekit, op, x, (0, 0)))
        assert te is not None and e is not None and type(e) is type(te), f"repeated dim: reducekit {e!r}, torch {te!r}"


def _serving(op: str, integral: bool) -> list[str]:
    """Methods whose registry record (MethodInfo.ops) serves the whole-tensor `op` of this input
    kind ("amax:int": integer and bool input only); auto is left out (it serves every op)."""
    out = []
    for m in reducekit.methods():
        for tok in m.ops:
            name, _, kind = tok.partition(":")
            if name == op and (not kind or integral) and m.name != "auto":
                out.append(m.name)
    return out


@pytest.mark.parametrize("device", DEVICES)
def test_method_that_cannot_serve_names_those_that_can(device):
    """method='exact' (which runs on CPU and CUDA but sums only) for amax/amin/prod/all/any: a
    ValueError naming the methods that do serve the op (atomics only for integer amax/amin), and
    method='auto'. The same for single_pass on CUDA; on CPU single_pass may first say it is
    CUDA-only (NotImplementedError)."""
    xf = normal_data((40, 50), device, "serve")
    xi = (xf * 10).round().to(torch.int32)
    for op in ("amax", "amin", "prod", "all", "any"):
        for x in (xf, xi):
            integral = not x.dtype.is_floating_point
            can = _serving(op, integral)
            assert can, f"no method serves {op}"
            for m in ("exact", "single_pass"):
                errors = ValueError if (m == "exact" or device == "cuda") else (ValueError, NotImplementedError)
                with pytest.raises(errors) as info:
                    getattr(reducekit, op)(x, method=m)
                if isinstance(info.value, ValueError):
                    msg = str(info.value)
                    assert f"'{m}'" in msg and op in msg, msg
                    for name in can:
                        assert name in msg, f"{op} {x.dtype} method={m}: '{name}' (which serves it) not named in: {msg}"
                    if not integral:
                        assert "atomic_global" not in msg, f"atomics named for float {op}: {msg}"
                    assert "auto" in msg, msg
    for op in ("mean", "var_mean", "logsumexp", "argmax"):  # no gallery method serves these
        with pytest.raises((ValueError, NotImplementedError) if device == "cpu" else ValueError, match="tree_sequential"):
            getattr(reducekit, op)(xf, 1 if op in ("logsumexp", "argmax") else None, method="tree_sequential")
    with pytest.raises(ValueError, match="unknown method 'no_such'"):
        reducekit.amax(xf, method="no_such")


GALLERY_OPS = ["prod", "amax", "amin", "all", "any"]


@pytest.mark.parametrize("op", GALLERY_OPS)
def test_gallery_method_on_cpu_not_implemented(op):
    """Every method that serves op (whole tensor, CUDA only) raises NotImplementedError on CPU,
    saying it runs on CUDA only and pointing at method='auto'."""
    x = torch.ones(8, 9)
    xi = torch.ones(8, 9, dtype=torch.int32)
    for m in _serving(op, True):
        with pytest.raises(NotImplementedError, match=rf"(?s)'{m}' runs on CUDA only.*method='auto'"):
            getattr(reducekit, op)(xi if m not in _serving(op, False) else x, method=m)


def test_gallery_method_on_cpu_names_the_op():
    """A CUDA-only method on CPU raises an error that names the function called, not sum."""
    for op in GALLERY_OPS:
        with pytest.raises(NotImplementedError, match=rf"^reducekit\.{op}\b"):
            getattr(reducekit, op)(torch.ones(3), method="tree_sequential")


@pytest.mark.cuda
@pytest.mark.parametrize("op", GALLERY_OPS)
def test_cuda_gallery_methods_serve_op(op):
    """On CUDA each method's registry record (MethodInfo.ops) is what it does: a method that serves
    op gives torch's whole-tensor result (integers, bool and the extrema exactly; a float prod
    within a tolerance), in torch's dtype, also with dim covering every dim and keepdim; every other
    CUDA method raises a ValueError that names the methods that serve."""
    xf = normal_data((33, 1025), "cuda", "gallery", op, mean=1.0, std=0.02 if op == "prod" else 1.0)
    xi = (normal_data((33, 1025), "cuda", "gallery_int", op) * 50).round().to(torch.int32)
    if op == "prod":  # +-1 with a few 2s: a product that fits, and is not 0
        g = generator("cuda", "gallery_prod_int")
        twos = (torch.rand(xi.shape, device="cuda", generator=g) < 5e-4).to(torch.int32)
        xi = torch.where(xi > 0, 1, -1).to(torch.int32) * (1 + twos)
    cuda_methods = [m.name for m in reducekit.methods("cuda") if m.name != "auto"]
    for x, integral in ((xf, False), (xi, True), (xf > 0.5, True)):
        ref = getattr(torch, op)(x)
        serving = _serving(op, integral)
        for m in cuda_methods:
            f = getattr(reducekit, op)
            if m not in serving:
                with pytest.raises(ValueError, match=rf"(?s)'{m}' does not serve {op}.*(Methods that do|Only method='auto')"):
                    f(x, method=m)
                continue
            got = f(x, method=m)
            assert got.shape == ref.shape and got.dtype == ref.dtype, f"{op} {x.dtype} method={m}"
            if op == "prod" and x.dtype.is_floating_point:
                torch.testing.assert_close(got, ref, rtol=1e-4, atol=0, msg=lambda s: f"{op} method={m}: {s}")
            else:
                assert torch.equal(got, ref), f"{op} {x.dtype} method={m}: {got} vs {ref}"
            if op != "prod":  # prod takes one int dim
                kd = f(x, (0, 1), True, method=m)
                assert kd.shape == (1, 1) and torch.equal(kd.reshape(()), got), f"{op} method={m} keepdim"
            with pytest.raises(ValueError, match="method='auto'"):
                f(x, 0, method=m)  # a gallery method reduces whole tensors only


# ------------------------------------------------------------------------------------------------
# 7. Inputs unmodified, outputs never aliased

ALIAS_OPS = ["mean", "nansum", "nanmean", "prod", "amax", "amin", "aminmax", "all", "any", "count_nonzero", "var_mean",
             "std_mean", "logsumexp", "argmax", "argmin", "vector_norm", "var", "std"]
# (shape, dim, keepdim): reductions over size-1 dims, whose results have the input's values.
ALIAS_CASES = [((5, 1), 1, False), ((5, 1), 1, True), ((1, 7), 0, False), ((1, 7), 0, True), ((4, 1, 3), 1, True),
               ((1,), 0, False), ((1,), None, False), ((1, 1), None, True), ((), None, False), ((37, 65), 1, False),
               ((37, 65), 0, True)]
FLOAT_ONLY = {"mean", "nanmean", "var", "std", "var_mean", "std_mean", "logsumexp", "vector_norm"}


@pytest.mark.parametrize("op", ALIAS_OPS)
@pytest.mark.parametrize("device", DEVICES)
def test_input_unmodified_and_output_never_aliases(device, op):
    """No call writes into its input; no output shares the input's storage (reductions over size-1
    dims, 0-dim inputs, dtype= of the input's own dtype), so writing an output leaves x alone."""
    dtypes = (torch.float32, torch.float64, torch.bfloat16) if op in FLOAT_ONLY else \
        (torch.float32, torch.int64) + (() if op in ("argmax", "argmin") else (torch.bool,))  # torch refuses bool argmax
    for dtype in dtypes:
        for shape, dim, keepdim in ALIAS_CASES:
            x = normal_data(shape, device, "alias", op, shape, mean=2.0).to(dtype) if shape else \
                torch.tensor(2.5, device=device).to(dtype)
            before = x.clone()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # var of one value: torch's degrees-of-freedom warning
                kw = {"correction": 0} if op in ("var", "std", "var_mean", "std_mean") else {}
                outs = call(reducekit, op, x, dim, keepdim, **kw)
                if op in ("mean", "nansum", "nanmean", "prod") and dtype.is_floating_point:
                    outs.append(getattr(reducekit, op)(x, dim, keepdim, dtype=dtype))
            where = f"{op} {dtype} shape={shape} dim={dim} keepdim={keepdim}"
            assert same_bits(x, before), f"input modified: {where}"
            for r in outs:
                if r.numel() == 0 or x.numel() == 0:
                    continue
                assert r.untyped_storage().data_ptr() != x.untyped_storage().data_ptr(), f"result aliases input: {where}"
                if r.dtype == torch.bool:
                    r.logical_not_()
                else:
                    r.add_(1)
                assert same_bits(x, before), f"writing the result changed the input: {where}"


@pytest.mark.parametrize("device", DEVICES)
def test_input_unmodified_views_and_grad(device):
    """Views (transposed, strided, with the negative bit set) are read, not resolved in place; a
    backward pass leaves the input alone too."""
    base = normal_data((64, 96), device, "alias_views", mean=2.0, dtype=torch.float64)
    views = [base.t(), base[:, ::3], base[5:40, 7:8], torch._neg_view(base.t())]
    for k, x in enumerate(views):
        before = x.clone()
        base_before = base.clone()
        _det_calls(x)
        reducekit.var_mean(x, 0)
        reducekit.linalg.vector_norm(x, 0.5, 1)
        assert same_bits(x, before) and same_bits(base, base_before), f"view {k}: data changed"
    x = base.clone().requires_grad_()
    before = x.detach().clone()
    loss = _loss(x)
    loss.backward()
    assert same_bits(x.detach(), before), "backward modified the input"
