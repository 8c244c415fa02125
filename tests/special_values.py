"""The generated special-value matrix (tests/test_special_values.py): every op of reducekit.OPS x
floating dtype x layout x dim pattern x value family x position, each judged against torch by the
rules of README's "Special values: what we promise" table (RULES below, which that table is
generated from and tested against).

A case is plain data (`Case`): `build(case, device)` makes its tensor, the same on any device. The
values are made slice by slice: the tensor is first a (slices, slice length) matrix, the rows are
filled by the family at the position, then the matrix becomes the logical shape (the reduced dims
last, permuted back) and is laid out in memory as the layout says. So "the first lane" of a slice
is its first 64 bytes in the slice's logical order, and "past the first chunk" is past 2^17
values (every CPU and CUDA chunk boundary: 2^16 values in the sum kernels, 4096 lanes of 64 bytes
in the operators').

Nothing here is per op: the ops come from reducekit.OPS, and each op is called as torch's
function of the same name is called (reducekit's signatures are torch's). A new op gets the matrix
without a line here; the only per-op entries are extra argument variants (vector_norm's ord,
var's correction, sum's method="exact"), and a name missing from VARIANTS runs with torch's
defaults.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import torch

import reducekit
from helpers import seed_for

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
LANE_BYTES = 64
LATE = 1 << 17  # past the first chunk of every kernel

# Extra argument sets per op (every op also runs with torch's defaults unless listed here).
# Arguments named in OURS_ONLY are reducekit's own (torch's function is called without them):
# sum's method="exact" (its own kernels, CPU and CUDA) gets the whole matrix too.
OURS_ONLY = ("method",)
VARIANTS: dict[str, list[dict]] = {
    "sum": [{}, dict(method="exact")],
    "linalg.vector_norm": [dict(ord=o) for o in (0, 1, 2, 3, 3.5, 0.5, -1, math.inf, -math.inf)],
    "var": [{}, dict(correction=0)],
    "std": [{}, dict(correction=0)],
    "var_mean": [{}, dict(correction=0)],
    "std_mean": [{}, dict(correction=0)],
}

# Dim patterns: (logical shape, reduced dims) by layout family. `None` reduces every dim. Shapes
# are 4-D so that channels_last applies; the slices span several lanes of every dtype.
PATTERNS = {
    "full": ((5, 7, 11, 13), None),
    "rows": ((3, 2, 4, 150), (-1,)),
    "columns": ((150, 2, 3, 4), (0,)),
    "mixed": ((20, 3, 9, 5), (0, 2)),
    "inner_pair": ((3, 4, 30, 7), (2, 3)),
}
# One long slice, past the first chunk (contiguous only): a whole 1-D tensor, and rows of one.
LONG_PATTERNS = {
    "long_full": ((LATE + 2 * 4099,), None),
    "long_rows": ((2, LATE + 4099), (1,)),
}
LAYOUTS = ("contiguous", "transposed", "channels_last")
POSITIONS = ("first_lane", "random", "last")
LONG_POSITIONS = ("first_lane", "random", "past_first_chunk")

FAMILIES = ("nan_one", "nan_some", "nan_slice", "pos_inf", "neg_inf", "both_inf", "neg_inf_run", "neg_inf_slice",
            "neg_zero", "subnormal", "subnormal_mixed", "near_max", "near_max_same_sign", "ties")


@dataclass(frozen=True)
class Case:
    op: str
    kwargs: tuple  # sorted items of the variant's keyword arguments
    dtype: torch.dtype
    layout: str
    pattern: str
    family: str
    position: str

    @property
    def shape_dims(self):
        return {**PATTERNS, **LONG_PATTERNS}[self.pattern]

    def __str__(self):
        kw = ",".join(f"{k}={v}" for k, v in self.kwargs)
        return (f"{self.op}({kw}) {str(self.dtype).removeprefix('torch.')} {self.layout} {self.pattern} "
                f"{self.family}@{self.position}")


def variants(op: str) -> list[dict]:
    return VARIANTS.get(op, [{}])


# torch's functions that reduce one dim (or all): they skip the patterns that reduce several.
ONE_DIM_OPS = ("prod", "aminmax", "argmax", "argmin")


def cases(op: str, dtype: torch.dtype) -> list[Case]:
    """The matrix rows of one op and dtype."""
    out = []
    for kw in variants(op):
        kwt = tuple(sorted(kw.items()))
        for pattern, (_, dims) in PATTERNS.items():
            if op in ONE_DIM_OPS and dims is not None and len(dims) > 1:
                continue
            for layout in LAYOUTS:
                for family in FAMILIES:
                    for pos in POSITIONS:
                        out.append(Case(op, kwt, dtype, layout, pattern, family, pos))
        for pattern in LONG_PATTERNS:
            for family in FAMILIES:
                for pos in LONG_POSITIONS:
                    out.append(Case(op, kwt, dtype, "contiguous", pattern, family, pos))
    return out


def _dims(shape, dims):
    nd = len(shape)
    return list(range(nd)) if dims is None else sorted(d % nd for d in dims)


def _positions(case: Case, length: int, g: torch.Generator, count: int = 1) -> torch.Tensor:
    """`count` distinct positions in a slice of `length` values, by the case's position kind."""
    lane = LANE_BYTES // torch.empty((), dtype=case.dtype).element_size()
    if case.position == "first_lane":
        lo, hi = 0, min(lane, length)
    elif case.position == "past_first_chunk":
        lo, hi = LATE, length
    elif case.position == "last":
        lo, hi = max(0, length - count), length
    else:
        lo, hi = 0, length
    count = min(count, hi - lo)
    return lo + torch.randperm(hi - lo, generator=g)[:count]


def _fill_rows(case: Case, rows: int, length: int, g: torch.Generator) -> torch.Tensor:
    """The (rows, length) matrix of the case's values, in the case's dtype."""
    dt = case.dtype
    fi = torch.finfo(dt)
    y = (torch.randn(rows, length, generator=g, dtype=torch.float64) + 1.5).to(dt)
    lane = LANE_BYTES // y.element_size()
    fam = case.family

    def put(r, idx, value):
        y[r, idx] = value

    if fam == "ties":
        return torch.randint(-2, 3, (rows, length), generator=g).to(dt)
    if fam == "neg_zero":
        return torch.full((rows, length), -0.0, dtype=dt)
    if fam == "subnormal":
        sub = fi.smallest_normal * 2.0 ** -3
        v = torch.randint(-7, 8, (rows, length), generator=g).to(torch.float64) * sub
        return v.to(dt)
    if fam in ("near_max", "near_max_same_sign"):
        mag = fi.max * (0.5 + 0.5 * torch.rand(rows, length, generator=g, dtype=torch.float64))
        sign = torch.where(torch.rand(rows, length, generator=g) < 0.5, -1.0, 1.0).double()
        v = mag if fam == "near_max_same_sign" else mag * sign
        return v.clamp(-fi.max, fi.max).to(dt)
    for r in range(rows):
        if fam == "nan_one":
            put(r, _positions(case, length, g), math.nan)
        elif fam == "nan_some":
            put(r, _positions(case, length, g, count=max(2, min(length // 8, lane))), math.nan)
        elif fam == "nan_slice":
            if r == rows // 2:
                y[r] = math.nan
        elif fam == "pos_inf":
            put(r, _positions(case, length, g), math.inf)
        elif fam == "neg_inf":
            put(r, _positions(case, length, g), -math.inf)
        elif fam == "both_inf":
            p = _positions(case, length, g, count=2)
            put(r, p[:1], math.inf)
            put(r, p[1:], -math.inf)
        elif fam == "neg_inf_run":
            # a run of -inf over three lanes (a masked span), starting at the position
            start = int(_positions(case, max(1, length - 3 * lane), g)[0]) if case.position != "last" else max(0, length - 3 * lane)
            y[r, start:start + 3 * lane] = -math.inf
        elif fam == "neg_inf_slice":
            if r % 2 == 0:
                y[r] = -math.inf  # a whole masked slice, beside unmasked ones
        elif fam == "subnormal_mixed":
            sub = fi.smallest_normal * 2.0 ** -2
            p = _positions(case, length, g, count=max(1, length // 4))
            put(r, p, sub)
        else:
            raise AssertionError(f"unknown family {fam}")
    return y


def build(case: Case, device) -> tuple[torch.Tensor, list[int] | None]:
    """The case's tensor (on `device`, laid out as the layout says) and the dims to reduce (None:
    every dim)."""
    shape, dims = case.shape_dims
    red = _dims(shape, dims)
    kept = [d for d in range(len(shape)) if d not in red]
    rows = math.prod(shape[d] for d in kept)
    length = math.prod(shape[d] for d in red)
    g = torch.Generator().manual_seed(seed_for("special", str(case.dtype), case.pattern, case.family, case.position, case.layout))
    y = _fill_rows(case, rows, length, g)
    perm = kept + red  # y's dims in this order, then permuted back to the logical order
    x = y.reshape([shape[d] for d in perm]).permute([perm.index(d) for d in range(len(shape))])
    if case.layout == "contiguous":
        x = x.contiguous()
    elif case.layout == "transposed":  # the first and last dims swapped in memory
        x = x.transpose(0, -1).contiguous().transpose(0, -1)
    elif case.layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    x = x.to(device)
    return x, (None if dims is None else list(dims))


def resolve(mod, op: str):
    f = mod
    for part in op.split("."):
        f = getattr(f, part)
    return f


def call_op(mod, op: str, x: torch.Tensor, dims, **kw):
    """`op` of `mod` (torch or reducekit) over `dims` (None: every dim) called as torch's function
    is called (logsumexp's dim is required, aminmax's is keyword-only)."""
    f = resolve(mod, op)
    if dims is None:
        if op == "logsumexp":
            return f(x, list(range(x.dim())), **kw)
        return f(x, **kw)
    d = dims[0] if len(dims) == 1 else tuple(dims)
    if op in ("aminmax", "linalg.vector_norm"):  # keyword-only, or second after ord
        return f(x, dim=d, **kw)
    return f(x, d, **kw)


def call(mod, case: Case, x: torch.Tensor, dims):
    """The case's op of `mod`, with the case's arguments (torch's without reducekit's own)."""
    return call_op(mod, case.op, x, dims, **{k: v for k, v in case.kwargs if mod is reducekit or k not in OURS_ONLY})


# ------------------------------------------------------------------------------------------------
# The expectation rules. Each rule says when it applies and what the result must be; README's
# table is generated from this list (benchmarks/report.py) and a test checks that they agree.

RULES = [
    ("default", "Every case not named below",
     "torch's result: its dtype and shape; integer, bool and index outputs equal; each float output NaN, +inf and -inf "
     "exactly where torch's is, a zero of torch's sign where the float64 reference agrees, and a finite value no "
     "further from the float64 reference than torch's plus two ulps of the result dtype"),
    ("torch_raises", "torch raises",
     "the same exception type"),
    ("narrow_overflow", "torch's result is inf or NaN where the float64 reference, cast to the result dtype, is "
     "finite or of another class (torch's accumulator or partial sums overflowed: a 16-bit or float32 var or std "
     "near the dtype's largest value; a float16 sum of more than 32768 values on several CPU threads, whose float16 "
     "partials reach inf and meet -inf)",
     "the float64 reference cast to the result dtype: its class, and a finite value within two ulps of the result dtype "
     "plus the engine's accumulation bound"),
    ("wide_overflow", "torch's result is finite where the float64 reference, cast to the result dtype, is inf or NaN "
     "(the exact result is out of range, and torch's narrow intermediate happened to round back in range, or cancelled)",
     "the float64 reference's class (inf of its sign, or NaN) or torch's value: either is accepted"),
    ("nan_ops_inf_pair", "nansum or nanmean of a slice holding both +inf and -inf",
     "NaN, as sum and mean give (inf + -inf): torch's nansum drops the NaN of inf + -inf when it is formed inside a "
     "partial sum, so its answer depends on where the two fall (finite on float64 CPU when they share a vector "
     "group, NaN elsewhere)"),
    ("mean_output", "the mean output of var_mean and std_mean",
     "torch.mean's result on the same slice (torch's var_mean gives NaN for a slice holding an infinity, where "
     "torch.mean gives that infinity: reducekit's mean output is torch.mean's)"),
    ("norm_p_order", "vector_norm of an ord other than 0, 1, 2, inf and -inf (|x|^p summed in the value type: float32 "
     "for 16-bit floats and float32)",
     "the default, with the accumulation bound of that order added: the sum of |x|^p errs by at most (L + "
     "ceil(log2 n) + 2) roundings of the accumulator relative to itself (L values summed in order per 64-byte lane, "
     "then a pairwise tree, every term positive, and one rounding per power), and the p-th root divides that error "
     "by |p|"),
    ("accumulator_overflow", "the slice's intermediate magnitude passes the largest value of the accumulator reducekit "
     "documents for the op (ACCUMULATOR below: sum|x| for the sums and means, sum|x|^p for the norms, the product of "
     "max(|x|, 1) for prod, n * (max x - min x)^2 for the var family), in any order",
     "implementation-defined, as in torch: inf or NaN, a finite value within the default bound of a finite float64 "
     "reference, or anything where the reference is not finite"),
]


def _acc_max(dtype: torch.dtype, kind: str) -> float:
    """The largest finite value of the accumulator `kind` for an input dtype: "sum" (float32 for
    16-bit floats, float64 otherwise), "value" (float32 for 16-bit floats and float32), "wide"
    (float64)."""
    if kind == "wide" or dtype == torch.float64:
        return torch.finfo(torch.float64).max
    if kind == "value" or dtype in (torch.float16, torch.bfloat16):
        return torch.finfo(torch.float32).max
    return torch.finfo(torch.float64).max


def _norm_acc(kw):
    o = dict(kw).get("ord", 2)
    if o in (0, math.inf, -math.inf):
        return None
    return ("pow", "sum" if o in (1, 2) else "value", float(o))


# What overflows the accumulator of each op (engine/reduce_ops.h, cpu/reduce_cpu.cpp): the slice's
# intermediate magnitude and the accumulator it is held in. Ops not listed never overflow theirs
# (extremes, counts, logsumexp's scaled sums).
ACCUMULATOR = {
    "sum": lambda kw: ("abs", "sum"), "mean": lambda kw: ("abs", "sum"), "nansum": lambda kw: ("abs", "sum"),
    "nanmean": lambda kw: ("abs", "sum"), "prod": lambda kw: ("prod", "value"),
    "linalg.vector_norm": _norm_acc,
    "var": lambda kw: ("spread", "wide"), "std": lambda kw: ("spread", "wide"),
    "var_mean": lambda kw: ("spread", "wide"), "std_mean": lambda kw: ("spread", "wide"),
}


def acc_exceeded(case: "Case", x: torch.Tensor, dims, out_shape) -> torch.Tensor:
    """Per output: whether the slice's intermediate magnitude passes the op's accumulator."""
    spec = ACCUMULATOR.get(case.op, lambda kw: None)(case.kwargs)
    shape = torch.Size(out_shape)
    if spec is None:
        return torch.zeros(shape, dtype=torch.bool)
    x64 = x.detach().cpu().double()
    x64 = torch.where(x64.isfinite(), x64, torch.zeros((), dtype=torch.float64))  # inf and NaN follow torch's rules
    red = list(range(x.dim())) if dims is None else dims
    kind, acc = spec[0], spec[1]
    a = x64.abs()
    if kind == "abs":
        mag = a.sum(red)
    elif kind == "pow":
        p = spec[2]
        mag = (a.pow(p) if p > 0 else torch.where(a == 0, torch.full((), math.inf, dtype=torch.float64), a.pow(p))).sum(red)
    elif kind == "prod":  # the largest partial product any order can meet
        mag = a.clamp(min=1).log2().sum(red).exp2()
    else:  # spread: n * (max - min)^2
        n = math.prod(x.shape[d] for d in red)
        mag = n * (x64.amax(red) - x64.amin(red)).square()
    exceeded = ~(mag < _acc_max(case.dtype, acc))
    return exceeded.reshape(shape) if exceeded.numel() == shape.numel() else exceeded.expand(shape)


def rules_table() -> str:
    """README's table of the rules (between its special-values markers)."""
    rows = ["| rule | when | the result must be |", "|---|---|---|"]
    rows += [f"| `{name}` | {when} | {what} |" for name, when, what in RULES]
    return "\n".join(rows) + "\n"


def acc_u(dtype_in: torch.dtype) -> float:
    """Unit roundoff of the narrowest accumulator any op keeps for this input (float32 for 16-bit
    floats and float32, float64 for float64)."""
    return 2.0 ** -53 if dtype_in == torch.float64 else 2.0 ** -24


def classes(t: torch.Tensor) -> torch.Tensor:
    """0 finite, 1 +inf, 2 -inf, 3 NaN."""
    t = t.detach().to(torch.float64).cpu()
    c = torch.zeros(t.shape, dtype=torch.int8)
    c[t == math.inf] = 1
    c[t == -math.inf] = 2
    c[t.isnan()] = 3
    return c


def ulp(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    fi = torch.finfo(dtype)
    return fi.eps * t.abs() + fi.smallest_normal * fi.eps


def compare(got, exp, ref, dtype_in, exceeded=None, n=1, prod=False, scale=None, norm_p=None) -> list[tuple[str, str]]:
    """Failures (rule, message) of one output: got (ours), exp (torch's), ref (float64 reference,
    float64, uncast), exceeded (per output: the accumulator_overflow rule applies), norm_p (the ord
    of a vector_norm judged by rule norm_p_order). Empty when it conforms."""
    if got.dtype != exp.dtype or got.shape != exp.shape:
        return [("default", f"dtype/shape {got.dtype}{tuple(got.shape)}, torch {exp.dtype}{tuple(exp.shape)}")]
    g, e = got.detach().cpu(), exp.detach().cpu()
    if not e.is_floating_point():
        return [] if torch.equal(g, e) else [("default", f"got {g.flatten()[:6].tolist()}, torch {e.flatten()[:6].tolist()}")]
    r64 = ref.detach().cpu().to(torch.float64)
    rc = r64.to(e.dtype)  # the reference cast to the result dtype
    ce, cr, cg = classes(e), classes(rc), classes(g)
    fails = []
    # class of the result, rule by rule
    same = ce == cr
    narrow = (ce != cr) & (ce != 0)
    wide = (ce == 0) & (cr != 0)
    bad = (same & (cg != ce)) | (narrow & (cg != cr)) | (wide & (cg != 0) & (cg != cr))
    if exceeded is not None:
        # any non-finite result; a finite one is judged below where the reference is finite
        bad &= ~(exceeded & ((cg != 0) | (cr != 0)))
    if bool(bad.any()):
        rule = "accumulator_overflow" if exceeded is not None and bool((bad & exceeded).any()) else "narrow_overflow" if bool((bad & narrow).any()) else "wide_overflow" if bool((bad & wide).any()) else "default"
        i = bad.nonzero()[0].tolist()
        fails.append((rule, f"non-finite pattern at {i}: got {g[tuple(i)].item()}, torch {e[tuple(i)].item()}, "
                            f"float64 ref {r64[tuple(i)].item()} ({int(bad.sum())} elements)"))
        return fails
    fin = (cg == 0) & (cr == 0)
    if bool(fin.any()):
        gd, ed = g.to(torch.float64)[fin], e.to(torch.float64)[fin]
        rd = r64[fin]
        err_g = (gd - rd).abs()
        slack = 2 * ulp(rd, e.dtype)
        if dtype_in == torch.float64:
            # The float64 reference is torch's own float64 computation, no more exact than ours: each
            # may err by its accumulation depth in ulps (a lane of 8 values, a pairwise tree of
            # log2(n) levels, a merge per level), on these well-conditioned slices.
            slack = slack * 16 * (8 + math.ceil(math.log2(max(n, 2))))
        if scale is not None:  # sums and means err relative to sum|x| (mean|x|), not to the result
            slack = slack + 2 * (8 + math.ceil(math.log2(max(n, 2)))) * acc_u(dtype_in) * scale.reshape(g.shape)[fin]
        if norm_p is not None:  # rule norm_p_order
            lane = 64 // torch.empty((), dtype=dtype_in).element_size()
            slack = slack + (lane + math.ceil(math.log2(max(n, 2))) + 2) * acc_u(dtype_in) * rd.abs() / abs(norm_p)
        if prod:  # a product rounds at every factor, in any order: n - 1 roundings of the accumulator
            slack = slack + n * acc_u(dtype_in) * rd.abs()
        err_e = torch.where(narrow[fin], torch.zeros_like(rd), (ed - rd).abs())
        # The engine's own accumulation bound on these values where torch gave no finite anchor:
        # a float32 accumulator of 16-bit data (2^-24 relative, at most 2^15 levels deep) or wider.
        acc_eps = 2.0 ** -24 if dtype_in in (torch.float16, torch.bfloat16) else 2.0 ** -53
        acc = torch.where(narrow[fin], 64 * acc_eps * rd.abs(), torch.zeros_like(rd))
        ok = (err_g <= err_e + slack + acc) | (gd == rd) | (gd == ed)
        if not bool(ok.all()):
            k = (~ok).nonzero()[0].item()
            fails.append(("default" if not bool(narrow[fin][k]) else "narrow_overflow",
                          f"value {gd[k].item()!r}: error {err_g[k].item():.3e} > torch's {err_e[k].item():.3e} + "
                          f"2 ulps {slack[k].item():.3e} (torch {ed[k].item()!r}, float64 ref {rd[k].item()!r}; "
                          f"{int((~ok).sum())} elements)"))
    # sign of zeros where torch and the reference agree on it
    z = (e == 0) & (r64 == 0) & (torch.signbit(e) == torch.signbit(r64))
    if exceeded is not None:
        z &= ~exceeded
    if scale is not None:
        # A sum or mean of nonzero values may err by a few ulps of sum|x|: a tiny value of either
        # sign is within the bound above, and so is the zero it rounds to. Only a slice of zeros
        # fixes the sign (-0.0 only: -0.0).
        z &= scale.reshape(g.shape) == 0
    if bool(z.any()):
        badz = z & (g == 0) & (torch.signbit(g) != torch.signbit(e))  # a nonzero g is judged by the value bound above
        if bool(badz.any()):
            i = badz.nonzero()[0].tolist()
            fails.append(("default", f"zero sign at {i}: got {g[tuple(i)].item()!r}, torch {e[tuple(i)].item()!r}"))
    return fails


def _norm_reference(case: Case, x64: torch.Tensor, dims):
    """vector_norm of a finite nonzero ord as sum(|x|^p)^(1/p), the sum by torch.sum (a cascade, error
    about log2(n) ulps): torch's float64 vector_norm accumulates |x|^p in long sequential runs (erring
    by 1e-12 relative on 2^17 values, where ours and the cascade agree to the last bit), so it is no
    reference for a float64 input."""
    p = float(dict(case.kwargs).get("ord", 2))
    red = list(range(x64.dim())) if dims is None else dims
    return (x64.abs().pow(p).sum(red).pow(1.0 / p),)


def _moments_reference(case: Case, x64: torch.Tensor, dims):
    """The var family by two passes of cascade sums (the mean, then the squared deviations; error
    about log2(n) ulps): torch's float64 var runs Welford over long sequential runs (erring by 2e-13
    to 5e-13 relative on 2^17 values, where ours is within an ulp of the exact value), so it is no
    reference for a float64 input. Infinities and NaN give NaN, as in torch."""
    red = list(range(x64.dim())) if dims is None else dims
    n = math.prod(x64.shape[d] for d in red)
    corr = float(dict(case.kwargs).get("correction", 1))
    mean = x64.sum(red, keepdim=True) / n
    var = (x64 - mean).square().sum(red) / max(0.0, n - corr)
    out = var.sqrt() if case.op.startswith("std") else var
    return (out, mean.reshape(out.shape)) if case.op.endswith("_mean") else (out,)


# Ops whose float64 reference is not torch's own op on the float64 copy (an entry takes the case,
# the float64 tensor and the dims; None where torch's op serves).
REFERENCE = {
    "var": _moments_reference, "std": _moments_reference, "var_mean": _moments_reference,
    "std_mean": _moments_reference,
    "linalg.vector_norm": lambda case, x64, dims:
        None if dict(case.kwargs).get("ord", 2) in (0, math.inf, -math.inf) else _norm_reference(case, x64, dims),
}


def reference(case: Case, x: torch.Tensor, dims):
    """The float64 reference (a tuple of outputs): REFERENCE's entry for the op, else torch's op on
    the float64 copy."""
    x64 = x.double()
    r = REFERENCE[case.op](case, x64, dims) if case.op in REFERENCE else None
    if r is None:
        r = call(torch, case, x64, dims)
    return tuple(r) if isinstance(r, (tuple, list)) else (r,)


def inf_pair(x: torch.Tensor, dims, shape) -> torch.Tensor:
    """Per output: whether the slice holds both +inf and -inf (rule nan_ops_inf_pair)."""
    red = list(range(x.dim())) if dims is None else dims
    pos = (x == math.inf).to(torch.int32).sum(red) > 0
    neg = (x == -math.inf).to(torch.int32).sum(red) > 0
    return (pos & neg).cpu().reshape(torch.Size(shape))


# Ops judged against NaN where the slice holds both infinities (rule nan_ops_inf_pair).
INF_PAIR_NAN = ("nansum", "nanmean")


# Sums and means: their error is relative to sum|x| (mean|x|) of the slice, not to the result.
SCALE = {"sum": "sum", "nansum": "sum", "mean": "mean", "nanmean": "mean"}
# Two-output ops whose output k is a mean: judged as torch.mean's result (rule mean_output).
MEAN_OUTPUT = {"var_mean": 1, "std_mean": 1}


def norm_p(case: Case):
    """The ord of a vector_norm case judged by rule norm_p_order, else None."""
    o = dict(case.kwargs).get("ord", 2)
    return float(o) if case.op == "linalg.vector_norm" and o not in (0, 1, 2, math.inf, -math.inf) else None


def run_case(case: Case, device) -> list[str]:
    """Failures of one case, as messages (empty when it conforms)."""
    x, dims = build(case, device)
    before = x.clone()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exp = call(torch, case, x, dims)
            err = None
        except Exception as e:  # noqa: BLE001
            exp, err = None, e
        if err is not None:
            try:
                call(reducekit, case, x, dims)
            except type(err):
                return []
            except Exception as e:  # noqa: BLE001
                return [f"{case}: [torch_raises] raised {type(e).__name__} ({e}), torch {type(err).__name__}"]
            return [f"{case}: [torch_raises] returned, torch raised {type(err).__name__} ({err})"]
        got = call(reducekit, case, x, dims)
        ref = reference(case, x, dims)
    exps = tuple(exp) if isinstance(exp, (tuple, list)) else (exp,)
    gots = tuple(got) if isinstance(got, (tuple, list)) else (got,)
    if len(exps) != len(gots):
        return [f"{case}: {len(gots)} outputs, torch {len(exps)}"]
    if case.op in MEAN_OUTPUT:  # the mean output follows torch.mean (rule mean_output)
        k = MEAN_OUTPUT[case.op]
        mcase = Case("mean", (), case.dtype, case.layout, case.pattern, case.family, case.position)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exps = exps[:k] + (call(torch, mcase, x, dims),) + exps[k + 1:]
            ref = ref[:k] + reference(mcase, x, dims) + ref[k + 1:]
    if case.op in INF_PAIR_NAN:  # NaN where the slice holds both infinities (rule nan_ops_inf_pair)
        both = inf_pair(x, dims, exps[0].shape)
        exps = (exps[0].masked_fill(both.to(exps[0].device), math.nan),) + exps[1:]
        ref = (ref[0].masked_fill(both.to(ref[0].device), math.nan),) + ref[1:]
    red = list(range(x.dim())) if dims is None else dims
    n = math.prod(x.shape[d] for d in red)
    out = []
    for k, (g_, e_, r_) in enumerate(zip(gots, exps, ref)):
        ex = acc_exceeded(case, x, dims, e_.shape) if e_.is_floating_point() else None
        kind = "mean" if MEAN_OUTPUT.get(case.op) == k else SCALE.get(case.op)
        scale = None
        if kind and e_.is_floating_point():
            a = x.detach().cpu().double().abs()
            a = torch.where(a.isfinite(), a, torch.zeros((), dtype=torch.float64))
            scale = a.sum(red) / (n if kind == "mean" else 1)
        for rule, msg in compare(g_, e_, r_, case.dtype, ex, n=n, prod=case.op == "prod", scale=scale, norm_p=norm_p(case)):
            out.append(f"{case} output {k}: [{rule}] {msg}")
    if not torch.equal(x.view(torch.uint8) if x.is_contiguous() else x.contiguous().view(torch.uint8),
                       before.view(torch.uint8) if before.is_contiguous() else before.contiguous().view(torch.uint8)):
        out.append(f"{case}: input modified")
    return out


def ops() -> list[str]:
    return list(reducekit.OPS)
