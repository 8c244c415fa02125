"""torch's calling conventions beyond OpInfo's samples, generated for every op of the op table
(reducekit._C.op_table(); a new op gets every check here):

1. out=: the returned tensor is out itself, written in place (a view of it sees the result), with
   the bits of the call without out=; torch's dtype rule per op (reducekit/_dropin.py OUT_RULES:
   compute in out's dtype, cast into it, or the same dtype required, as torch: RuntimeError);
   resizing with torch's warning; out= with an input that requires grad, or on an op torch gives
   no out=, raises as torch does; the two-output ops take a tuple.
2. numpy's axis=/keepdims= aliases: the results of dim=/keepdim=, where torch takes them too.
3. more than 64 dims: every dim reduced as torch does (over the flattened tensor); over some
   dims, torch's RuntimeError.
4. the var family's "degrees of freedom is <= 0" warning, as torch's.
5. exception types: each bad call raises torch's exception type.

Each check calls torch's function the same way and follows what torch does.
"""
from __future__ import annotations

import os
import warnings

import pytest
import torch

import reducekit
from helpers import generator, same_bits
from special_values import call_op, resolve

README = os.path.join(os.path.dirname(__file__), "..", "README.md")
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
OPS = [(t["name"], t["public_name"]) for t in reducekit._C.op_table()]
RULES = reducekit._dropin.OUT_RULES
TWO = {t["name"] for t in reducekit._C.op_table() if t["outputs"] == 2}
FLOAT_ONLY = {t["name"] for t in reducekit._C.op_table() if t["float_only"]}
ONE_DIM = {"prod", "aminmax", "argmax", "argmin"}  # ops that take one int dim
TAKES_DTYPE = {t["name"]: t["takes_dtype"] for t in reducekit._C.op_table()}
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]


def data(device, shape=(5, 7), dtype=torch.float32, tag=""):
    g = generator(device, "dropin", str(shape), tag)
    x = torch.randn(shape, generator=g, device=device, dtype=torch.float64) + 0.75
    return x.to(dtype)


def call(mod, public, x, dim=None, **kw):
    """public op of mod over dim (an int or a list; None: every dim), called as torch's is called."""
    return call_op(mod, public, x, None if dim is None else (list(dim) if isinstance(dim, (list, tuple)) else [dim]), **kw)


def outputs(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def empty_like_result(r, poison=True):
    """Fresh tensors of r's shape and dtype, poisoned."""
    outs = []
    for t in outputs(r):
        o = torch.empty_like(t)
        if poison:
            o.fill_(True if o.dtype == torch.bool else (7 if not o.dtype.is_floating_point else float("nan")))
        outs.append(o)
    return tuple(outs) if len(outs) > 1 else outs[0]


def test_every_op_has_an_out_rule():
    assert set(RULES) == {n for n, _ in OPS}
    assert all(r in ("compute", "cast", "same", None) for r in RULES.values())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op,public", OPS, ids=[p for _, p in OPS])
def test_out_is_written_in_place(device, op, public):
    x = data(device)
    dims = [None, 1] if op in ONE_DIM else [None, 1, 0]
    for dim in dims:
        ref = call(reducekit, public, x, dim)
        out = empty_like_result(ref)
        if RULES[op] is None:  # torch takes no out= here: TypeError, as torch
            with pytest.raises(TypeError):
                call(torch, public, x, dim, out=out)
            with pytest.raises(TypeError, match="out"):
                call(reducekit, public, x, dim, out=out)
            continue
        try:  # torch takes out= here, or (some ops over every dim) has no such overload: ours does
            call(torch, public, x, dim, out=empty_like_result(call(torch, public, x, dim)))
        except TypeError:
            pass
        ptrs = [o.data_ptr() for o in outputs(out)]
        views = [o.view(-1) if o.dim() else o for o in outputs(out)]
        r = call(reducekit, public, x, dim, out=out)
        for a, o in zip(outputs(r), outputs(out)):
            assert a is o, f"{public}: out= must return out itself"
        assert [o.data_ptr() for o in outputs(out)] == ptrs, f"{public}: out's storage was replaced"
        for v, a in zip(views, outputs(ref)):
            assert same_bits(v.reshape(a.shape), a), f"{public} dim={dim}: out differs from the call without out="


def _copies(f):
    """f() under torch's profiler: the names of the copy and cast ops it ran."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        f()
    return [e.name for e in prof.events() if e.name in ("aten::copy_", "aten::to", "aten::_to_copy", "aten::clone")]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op,public", [o for o in OPS if RULES[o[0]] is not None], ids=lambda v: v if isinstance(v, str) else "")
def test_out_of_the_right_shape_takes_no_copy(device, op, public):
    """An eager call whose out already has the result's shape and dtype writes the result into out:
    no copy or cast beyond those of the same call without out= (the engine takes out as its result:
    torch/frontend.h OutLoan). A float32 input, and int32 for the ops that take integers, over
    every dim, one dim, and two dims (which the CPU engine reads through a copy of the input)."""
    dtypes = [torch.float32] + ([] if op in FLOAT_ONLY else [torch.int32])
    for dt in dtypes:
        x = data(device, (37, 29, 3), tag="nocopy").mul(10).to(dt)
        for dim in [None, 1] if op in ONE_DIM else [None, 1, [0, 2]]:
            ref = call(reducekit, public, x, dim)
            out = empty_like_result(ref)
            same = {"dtype": ref.dtype} if RULES[op] == "compute" else {}  # what out= means for these ops
            base = _copies(lambda: call(reducekit, public, x, dim, **same))
            copies = _copies(lambda: call(reducekit, public, x, dim, out=out))
            assert copies == base, f"{public} {dt} dim={dim}: out= of the result's shape and dtype ran {copies}, " \
                                   f"the call without out= {base}"
            for a, b in zip(outputs(out), outputs(ref)):
                assert same_bits(a, b), f"{public} {dt} dim={dim}"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op,public", [o for o in OPS if RULES[o[0]] is not None], ids=lambda v: v if isinstance(v, str) else "")
def test_out_overlapping_the_input(device, op, public):
    """An out that is a piece of the input itself (of the result's shape and dtype) is not lent to
    the engine, which would overwrite values it has still to read: the result is the call's without
    out= (torch's own result is then unspecified, and often wrong)."""
    x = data(device, (6, 9), tag="overlap")
    # an input of the result's dtype: int64 indices, bool truths
    x = {"argmax": (x * 10).long(), "argmin": (x * 10).long(), "all": x > 0, "any": x > 2}.get(op, x)
    ref = call(reducekit, public, x.clone(), 1)
    flat = x.view(-1)
    # the input's last values: written first (output 0 is row 0's), read last
    out = tuple(flat[flat.numel() - 6 * (i + 1):flat.numel() - 6 * i] for i in range(len(outputs(ref))))
    out = out if len(out) > 1 else out[0]
    assert all(o.dtype == r.dtype for o, r in zip(outputs(out), outputs(ref)))
    call(reducekit, public, x, 1, out=out)
    for o, r in zip(outputs(out), outputs(ref)):
        assert same_bits(o, r), f"{public}: out overlapping the input gave {o}, the call without out= {r}"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op,public", [o for o in OPS if RULES[o[0]] is not None], ids=lambda v: v if isinstance(v, str) else "")
def test_out_dtype_rule(device, op, public):
    """An out of another dtype: computed in it ("compute": the bits of dtype=out.dtype), the result
    cast into it ("cast"), or torch's RuntimeError ("same"), as torch does."""
    x = data(device)
    dim = 1
    ref = call(reducekit, public, x, dim)
    wide = tuple(torch.empty(t.shape, dtype=torch.float64, device=device) for t in outputs(ref))
    wide = wide if len(wide) > 1 else wide[0]
    rule = RULES[op]
    if rule == "same":
        with pytest.raises(RuntimeError):
            call(torch, public, x, dim, out=empty_like_result(wide))
        with pytest.raises(RuntimeError, match="out"):
            call(reducekit, public, x, dim, out=wide)
        return
    call(torch, public, x, dim, out=empty_like_result(wide))  # torch takes it
    r = call(reducekit, public, x, dim, out=wide)
    assert r is wide and r.dtype == torch.float64
    want = call(reducekit, public, x, dim, dtype=torch.float64) if rule == "compute" else ref.double()
    assert same_bits(r, want), f"{public}: out=float64 ({rule})"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op,public", [o for o in OPS if RULES[o[0]] is not None], ids=lambda v: v if isinstance(v, str) else "")
def test_out_resize_and_grad(device, op, public):
    x = data(device)
    ref = call(reducekit, public, x, 1)
    shaped = [torch.empty(3, 3, dtype=t.dtype, device=device) for t in outputs(ref)]
    empty = [torch.empty(0, dtype=t.dtype, device=device) for t in outputs(ref)]

    def pack(ts):
        return tuple(ts) if len(ts) > 1 else ts[0]

    with pytest.warns(UserWarning, match="resized"):
        r = call(reducekit, public, x, 1, out=pack(shaped))
    for a, b in zip(outputs(r), outputs(ref)):
        assert a.shape == b.shape and same_bits(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for an empty out, as torch
        r = call(reducekit, public, x, 1, out=pack(empty))
    for a, b in zip(outputs(r), outputs(ref)):
        assert same_bits(a, b)
    xg = x.clone().requires_grad_()
    try:  # torch refuses it for the ops it differentiates
        call(torch, public, xg, 1, out=empty_like_result(call(torch, public, x, 1)))
        refuses = False
    except RuntimeError as e:
        assert "automatic differentiation" in str(e)
        refuses = True
    # ours refuses for the ops it differentiates, on every device; torch's refusal implies it (torch
    # 2.11's CUDA aminmax takes out= with a grad input where its CPU aminmax refuses)
    assert not refuses or reducekit._dropin._DIFFERENTIABLE[op]
    if reducekit._dropin._DIFFERENTIABLE[op]:
        with pytest.raises(RuntimeError, match="automatic differentiation"):
            call(reducekit, public, xg, 1, out=empty_like_result(ref))
    else:
        r = call(reducekit, public, xg, 1, out=empty_like_result(ref))
        assert all(same_bits(a, b) for a, b in zip(outputs(r), outputs(ref)))
    if len(outputs(ref)) == 2:
        with pytest.raises(TypeError):
            call(reducekit, public, x, 1, out=outputs(empty_like_result(ref))[0])


@pytest.mark.cuda
@pytest.mark.parametrize("op,public", [o for o in OPS if RULES[o[0]] is not None], ids=lambda v: v if isinstance(v, str) else "")
def test_out_on_another_device(op, public):
    x = data("cuda")
    ref = call(reducekit, public, x, 1)
    with pytest.raises(RuntimeError):
        call(torch, public, x, 1, out=empty_like_result(tuple(t.cpu() for t in outputs(ref)) if len(outputs(ref)) > 1 else ref.cpu()))
    with pytest.raises(RuntimeError, match="device"):
        call(reducekit, public, x, 1, out=tuple(t.cpu() for t in outputs(ref)) if len(outputs(ref)) > 1 else ref.cpu())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op,public", OPS, ids=[p for _, p in OPS])
def test_numpy_aliases(device, op, public):
    """axis= for dim= and keepdims= for keepdim=, where torch takes them: the same bits; both
    names at once is a TypeError."""
    x = data(device)
    f, tf = resolve(reducekit, public), resolve(torch, public)
    for keep in (False, True):
        kw = {} if op == "count_nonzero" else {"keepdims": keep}
        t = tf(x, axis=1, **kw)
        r = f(x, axis=1, **kw)
        want = call(reducekit, public, x, 1, **({} if op == "count_nonzero" else {"keepdim": keep}))
        for a, b, c in zip(outputs(r), outputs(want), outputs(t)):
            assert same_bits(a, b) and a.shape == c.shape, f"{public}(axis=1, keepdims={keep})"
    with pytest.raises(TypeError):
        f(x, 1, axis=1) if public not in ("aminmax", "linalg.vector_norm") else f(x, dim=1, axis=1)


@pytest.mark.parametrize("op,public", OPS, ids=[p for _, p in OPS])
def test_more_than_64_dims(op, public):
    """65 dims: reduced over every dim as torch (the values of the flattened tensor; keepdim keeps
    65 ones); over one dim, torch's RuntimeError."""
    x = data("cpu", (3,) + (1,) * 63 + (5,))  # 65 dims
    flat = x.reshape(-1)
    if op not in ("logsumexp",):  # torch's logsumexp takes no dim=None
        r = call(reducekit, public, x)
        want = call(reducekit, public, flat)
        try:  # torch reduces most ops over 65 dims; nanmean, all and any refuse (ours take them)
            shapes = [c.shape for c in outputs(call(torch, public, x))]
        except RuntimeError:
            shapes = [a.shape for a in outputs(want)]
        for a, b, shape in zip(outputs(r), outputs(want), shapes):
            assert a.shape == shape and same_bits(a.reshape(-1), b.reshape(-1)), f"{public} of 65 dims"
    if op not in ONE_DIM and op != "count_nonzero" and op not in ("all", "any"):
        r = call(reducekit, public, x, None, keepdim=True) if op != "logsumexp" else None
        if r is not None:
            assert all(a.shape == (1,) * 65 for a in outputs(r)), f"{public} keepdim of 65 dims"
    with pytest.raises(RuntimeError):
        call(torch, public, x, 0)
    with pytest.raises(RuntimeError, match="64 dims"):
        call(reducekit, public, x, 0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("public", ["var", "std", "var_mean", "std_mean"])
def test_degrees_of_freedom_warning(device, public):
    x = data(device, (3, 2))
    for c, warns in ((2, True), (3, True), (1, False)):
        for mod in (torch, reducekit):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                getattr(mod, public)(x, 1, correction=c)
            got = [str(m.message) for m in w if "degrees of freedom is <= 0" in str(m.message)]
            assert bool(got) == warns, f"{mod.__name__}.{public}(correction={c}): warnings {[str(m.message) for m in w]}"
            if warns:
                assert got[0].startswith(f"{public}(): degrees of freedom is <= 0")


def _bad_calls(op, public, device):
    """Calls torch refuses, for this op."""
    x = data(device)
    calls = [("dim out of range", lambda m: call(m, public, x, 5)),
             ("dim far below", lambda m: call(m, public, x, -9))]
    if op not in ONE_DIM:
        calls.append(("repeated dim", lambda m: call(m, public, x, [1, 1]) if op != "count_nonzero"
                      else resolve(m, public)(x, dim=(1, 1))))
    if op in ("amax", "amin", "aminmax", "argmax", "argmin"):
        z = torch.complex(x, x)
        calls.append(("complex input", lambda m: call(m, public, z, 1)))
    if op in FLOAT_ONLY and op not in ("vector_norm",):
        xi = (x * 10).to(torch.int32)
        calls.append(("integer input", lambda m: call(m, public, xi, 1)))
    if op == "aminmax":
        calls.append(("empty dim", lambda m: call(m, public, torch.empty(3, 0, device=device), 1)))
    xb = x > 0.75  # bool input: torch's argmax/argmin refuse it
    calls.append(("bool input", lambda m: call(m, public, xb, 1)))
    if TAKES_DTYPE[op]:  # integer input with a float dtype=: torch's nanmean refuses it
        xi = (x * 10).to(torch.int32)
        calls.append(("integer input, float dtype=", lambda m: call(m, public, xi, 1, dtype=torch.float32)))
    if op == "vector_norm":  # every (input, dtype=) pair of float and complex dtypes: torch's three dtype rules
        for a in FLOATS:
            for b in FLOATS:
                xa = x.to(a)
                calls.append((f"{a} input, dtype={b}", lambda m, xa=xa, b=b: call(m, public, xa, 1, dtype=b)))
    if device == "cpu":  # quantized input: torch's type, NotImplementedError or (nanmean, logsumexp) RuntimeError
        q = torch.quantize_per_tensor(x, 0.05, 10, torch.quint8)
        calls.append(("quantized input", lambda m: call(m, public, q, 1)))
    return calls


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op,public", OPS, ids=[p for _, p in OPS])
def test_exception_types_match_torch(device, op, public):
    checked = 0
    for what, f in _bad_calls(op, public, device):
        try:
            f(torch)
        except Exception as e:  # noqa: BLE001
            want = type(e)
        else:
            continue  # torch takes it: not a bad call for this op
        with pytest.raises(Exception) as got:
            f(reducekit)
        assert isinstance(got.value, want), f"{public}, {what}: reducekit raised {type(got.value).__name__} " \
                                            f"({got.value}), torch {want.__name__}"
        checked += 1
    assert checked >= 2, f"{public}: fewer than two bad calls checked"


@pytest.mark.parametrize("op,public", OPS, ids=[p for _, p in OPS])
def test_quantized_input_is_refused(op, public):
    """Every op refuses a quantized input (torch's exception type where torch refuses it too,
    test_exception_types_match_torch); where torch computes a quantized result (its mean and std),
    reducekit's NotImplementedError is a deliberate difference, named in the README."""
    x = data("cpu")
    q = torch.quantize_per_tensor(x, 0.05, 10, torch.quint8)
    with pytest.raises((NotImplementedError, RuntimeError), match="(?i)quantized|dequantize"):
        call(reducekit, public, q, 1)
    try:
        call(torch, public, q, 1)
    except (NotImplementedError, RuntimeError):
        return
    with pytest.raises(NotImplementedError, match=r"quantized tensors \(QUInt8\) are not supported; dequantize first"):
        call(reducekit, public, q, 1)
    with open(README) as f:
        differences = f.read().split("Deliberate differences from torch:")[1].split("\n\n")[0]
    assert "**Quantized" in differences and f"`{public}`" in differences, f"{public}: torch computes it on quantized input; " \
        f"the README's deliberate differences must say that reducekit refuses it"


@pytest.mark.parametrize("device", DEVICES)
def test_complex_infinities_are_documented_differences(device):
    """README "Deliberate differences": complex prod with an infinite factor is an infinity in the
    direction of the angles' sum (torch: often nan+nanj); complex mean divides each part by n
    (torch: inf+nanj)."""
    z = torch.tensor([float("inf") + 0j, 1 + 2j, 3 - 1j], dtype=torch.complex64, device=device)
    p = reducekit.prod(z)
    assert not torch.isnan(torch.view_as_real(p)).any() and torch.isinf(p.abs()), f"prod {p}"
    theta = torch.angle(z.to(torch.complex128)).sum()
    direction = torch.polar(torch.tensor(1.0, dtype=torch.float64, device=device), theta)
    for part, d in ((p.real, direction.real), (p.imag, direction.imag)):
        assert torch.sign(part).item() == torch.sign(d).item() and torch.isinf(part) == (d != 0), f"prod {p} vs angle {theta}"
    m = reducekit.mean(torch.tensor([float("inf") + 1j, 1 + 0j], device=device))
    assert m.real.item() == float("inf") and m.imag.item() == 0.5, f"mean {m}"


def test_out_and_aliases_under_torch_compile():
    """torch.compile(fullgraph=True) of calls with out= and the aliases: out holds the eager bits."""
    x = data("cpu", (8, 5))

    def f(x, o, o2, o3):
        reducekit.sum(x, 1, out=o)
        reducekit.var(x, axis=0, keepdims=True, out=o2)
        reducekit.amax(x, dim=1, out=o3)
        return o * 2

    outs = (torch.full((8,), float("nan")), torch.full((1, 5), float("nan")), torch.full((8,), float("nan")))
    r = torch.compile(f, fullgraph=True)(x, *outs)
    assert same_bits(outs[0], reducekit.sum(x, 1)) and same_bits(r, 2 * reducekit.sum(x, 1))
    assert same_bits(outs[1], reducekit.var(x, 0, keepdim=True)) and same_bits(outs[2], reducekit.amax(x, 1))
