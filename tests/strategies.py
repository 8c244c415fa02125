"""Hypothesis strategies for the property tests (test_properties.py).

A drawn `Case` is plain data: the dtype, the logical shape, a recipe for the view (storage order,
slicing, storage offset, expanded dims, channels_last, a final permutation) and a recipe for the
values (a seeded fill plus special values written at drawn positions, or explicit values that
hypothesis draws and shrinks one by one). Hypothesis prints the Case of a failing example, and
`build(case, device)` turns it back into the same tensor, on any device.

The tensor is always a view into a larger 1-D buffer whose every element is real data: a kernel
that reads past its view, ignores the storage offset or the strides sums the neighbours (and a
NaN or inf special written outside the view must not reach the result).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from helpers import ALL_DTYPES

FLOAT_SPECIALS = ("max", "-max", "max/2", "-max/2", "tiny", "-tiny", "sub", "-sub", "maxsub", "0", "-0", "1", "-1")
NONFINITE_SPECIALS = ("inf", "-inf", "nan")
INT_SPECIALS = ("min", "max", "min+1", "max-1", "0", "1", "-1")
BIG_NUMEL = (4097, 70_000)  # the occasional long 1-D input: CUDA multi-block paths
MAX_BUFFER = 250_000        # buffer elements (before the slicing steps are dropped)
EXPLICIT_MAX = 48           # buffers up to this size may get explicit, element-wise drawn values


@dataclass(frozen=True)
class Case:
    dtype: torch.dtype
    shape: tuple[int, ...]       # logical shape before post_perm (expanded dims included)
    expand: tuple[int, ...] = ()  # dims of size 1 expanded to `shape` (stride 0)
    order: tuple[int, ...] | None = None  # storage order of the dims; (0, 2, 3, 1) = channels_last strides
    steps: tuple[int, ...] | None = None  # slicing step per dim
    starts: tuple[int, ...] | None = None  # slicing start per dim
    pads: tuple[int, ...] | None = None   # elements left after each dim's slice
    offset: int = 0              # storage offset of the base in the buffer
    tail: int = 0                # buffer elements after the base
    to_channels_last: bool = False  # .contiguous(memory_format=torch.channels_last) before expanding
    post_perm: tuple[int, ...] | None = None  # a final permute (a view)
    fill: str = "normal"         # floats: normal; ints: full, small, limits, high (int64); bool: p
    mean: float = 1.0            # floats: mean of the normal fill; bool: P(True)
    scale: float = 1.0           # floats: deviation of the normal fill
    seed: int = 0
    specials: tuple[tuple[int, str, bool], ...] = ()  # (index, value name, inside the view?)
    values: tuple | None = None  # explicit buffer values (fill, mean, scale, seed unused)

    def _per_dim(self, field, default):
        v = getattr(self, field)
        return tuple(v) if v is not None else (default,) * len(self.shape)

    @property
    def pre_shape(self) -> tuple[int, ...]:
        return tuple(1 if d in self.expand else s for d, s in enumerate(self.shape))

    def base_logical(self) -> tuple[int, ...]:
        """The base's size per logical dim: the slice start, `size` steps, the pad."""
        return tuple(a + s * k + p for s, k, a, p in
                     zip(self.pre_shape, self._per_dim("steps", 1), self._per_dim("starts", 0), self._per_dim("pads", 0)))

    def buffer_len(self) -> int:
        return self.offset + math.prod(self.base_logical()) + self.tail


def special_value(name: str, dtype: torch.dtype):
    """The value named `name` in `dtype` (a Python float, int or bool)."""
    if dtype == torch.bool:
        return name in ("max", "1", "max-1", "min+1")
    if dtype.is_floating_point:
        fi = torch.finfo(dtype)
        sub = fi.tiny * fi.eps  # smallest subnormal
        table = {"max": fi.max, "max/2": fi.max / 2, "tiny": fi.tiny, "sub": sub, "maxsub": fi.tiny - sub,
                 "0": 0.0, "1": 1.0, "inf": math.inf, "nan": math.nan}
        if name.startswith("-"):
            return -table[name[1:]]
        return table[name]
    ii = torch.iinfo(dtype)
    v = {"min": ii.min, "max": ii.max, "min+1": ii.min + 1, "max-1": ii.max - 1, "0": 0, "1": 1, "-1": -1}[name]
    return min(max(v, ii.min), ii.max)  # -1 in uint8 is 0


def _fill(case: Case, n: int) -> torch.Tensor:
    """The buffer's values on the CPU."""
    dtype = case.dtype
    if case.values is not None:
        vals = list(case.values) * (n // max(1, len(case.values)) + 1) if case.values else [0] * n
        return torch.tensor(vals[:n], dtype=dtype) if n else torch.empty(0, dtype=dtype)
    g = torch.Generator().manual_seed(case.seed)
    if dtype == torch.bool:
        return torch.rand(n, generator=g) < case.mean
    if dtype.is_floating_point:
        return (torch.randn(n, generator=g, dtype=torch.float64) * case.scale + case.mean).to(dtype)
    ii = torch.iinfo(dtype)
    if case.fill == "full":
        hi = ii.max if dtype == torch.int64 else ii.max + 1  # randint's high is exclusive and must fit
        return torch.randint(ii.min, hi, (n,), generator=g, dtype=torch.int64).to(dtype)
    if case.fill == "small":
        return torch.randint(max(ii.min, -100), min(ii.max, 100) + 1, (n,), generator=g, dtype=torch.int64).to(dtype)
    if case.fill == "limits":
        choices = torch.tensor([ii.min, ii.max, ii.min + 1, ii.max - 1, 0], dtype=torch.int64)
        return choices[torch.randint(0, 5, (n,), generator=g)].to(dtype)
    if case.fill == "high":  # int64 magnitudes in [2^62, 2^63): almost every partial sum wraps
        mag = torch.randint(2**62, 2**63 - 1, (n,), generator=g, dtype=torch.int64)
        sign = torch.randint(0, 2, (n,), generator=g, dtype=torch.int64) * 2 - 1
        return mag * sign
    raise ValueError(f"unknown fill {case.fill!r}")


def _view(buf: torch.Tensor, case: Case) -> torch.Tensor:
    """The sliced, permuted view of the buffer (before channels_last, expand and post_perm)."""
    rank = len(case.shape)
    logical = case.base_logical()
    order = tuple(case.order) if case.order is not None else tuple(range(rank))
    storage = tuple(logical[d] for d in order)
    base = buf[case.offset: case.offset + math.prod(storage)].view(storage)
    base = base.permute([order.index(d) for d in range(rank)])
    steps, starts = case._per_dim("steps", 1), case._per_dim("starts", 0)
    return base[tuple(slice(a, a + s * k, k) for s, k, a in zip(case.pre_shape, steps, starts))]


def build(case: Case, device) -> tuple[torch.Tensor, torch.Tensor]:
    """(x, buffer): x is the drawn view on `device`, buffer the storage it lives in."""
    n = case.buffer_len()
    buf = _fill(case, n)
    v = _view(buf, case)
    for index, name, inside in case.specials:  # written through the view on the CPU
        value = special_value(name, case.dtype)
        if inside and v.numel():
            v[tuple(int(i) for i in torch.unravel_index(torch.tensor(index % v.numel()), v.shape))] = value
        elif not inside and n:
            buf[index % n] = value
    buf = buf.to(device)
    x = _view(buf, case)
    if case.to_channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    x = x.expand(case.shape)
    if case.post_perm is not None:
        x = x.permute(case.post_perm)
    return x, buf


def _elements(dtype: torch.dtype, nonfinite: bool):
    """Element strategy of explicit values."""
    if dtype == torch.bool:
        return st.booleans()
    if not dtype.is_floating_point:
        ii = torch.iinfo(dtype)
        return st.one_of(st.sampled_from([special_value(s, dtype) for s in INT_SPECIALS]), st.integers(ii.min, ii.max))
    names = FLOAT_SPECIALS + (NONFINITE_SPECIALS if nonfinite else ())
    width = {torch.float16: 16, torch.float64: 64}.get(dtype, 32)  # bfloat16: float32 values, rounded by torch.tensor
    return st.one_of(st.sampled_from([special_value(s, dtype) for s in names]),
                     st.floats(-100, 100, width=width),
                     st.floats(width=width, allow_nan=nonfinite, allow_infinity=nonfinite))


@st.composite
def cases(draw, dtypes=tuple(ALL_DTYPES)) -> Case:
    dtype = draw(st.sampled_from(dtypes))
    big = draw(st.sampled_from((False,) * 11 + (True,)))  # shrinks to False
    if big:
        shape = (draw(st.integers(*BIG_NUMEL)),)
    else:
        rank = draw(st.sampled_from((1, 2, 3, 4, 0, 1, 2)))  # shrinks to rank 1
        cap = (1, 3000, 60, 14, 7)[rank]
        shape = tuple(draw(st.integers(0, cap)) for _ in range(rank))
    rank = len(shape)

    expand = ()
    if rank and draw(st.sampled_from((False, False, True))):
        expand = tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1))))
    order = None
    if rank >= 2:
        kind = draw(st.sampled_from(("identity", "permuted", "channels_last") if rank == 4 else ("identity", "permuted")))
        if kind == "permuted":
            order = tuple(draw(st.permutations(range(rank))))
        elif kind == "channels_last":
            order = (0, 2, 3, 1)
    steps = starts = pads = None
    if rank and draw(st.booleans()):
        steps = tuple(draw(st.integers(1, 3)) for _ in range(rank))
        starts = tuple(draw(st.integers(0, 2)) for _ in range(rank))
        pads = tuple(draw(st.integers(0, 2)) for _ in range(rank))
    offset = draw(st.integers(0, 9))
    tail = draw(st.integers(0, 3))
    to_cl = rank == 4 and draw(st.booleans())
    post_perm = None
    if rank >= 2 and draw(st.booleans()):
        post_perm = tuple(draw(st.permutations(range(rank))))
    case = Case(dtype, shape, expand, order, steps, starts, pads, offset, tail, to_cl, post_perm)
    if case.buffer_len() > MAX_BUFFER:  # keep the buffer modest: no steps
        case = Case(dtype, shape, expand, order, None, starts, pads, offset, tail, to_cl, post_perm)
    n = case.buffer_len()

    nonfinite = dtype.is_floating_point and draw(st.booleans())
    fill, mean, scale, seed, values = "normal", 1.0, 1.0, 0, None
    if n <= EXPLICIT_MAX and draw(st.booleans()):
        values = tuple(draw(st.lists(_elements(dtype, nonfinite), min_size=n, max_size=n)))
    elif dtype == torch.bool:
        fill, mean = "p", draw(st.sampled_from((0.5, 0.0, 1.0, 0.05)))
    elif dtype.is_floating_point:
        fi = torch.finfo(dtype)
        mean = draw(st.sampled_from((1.0, 0.0, -2.5, 100.0, -1e4, 3e4, fi.max / 8, -fi.max / 8)))
        scale = draw(st.sampled_from((1.0, 0.0, 1e-3, 1e3, fi.tiny, abs(mean) / 4)))
    else:
        fill = draw(st.sampled_from(("full", "small", "limits") + (("high",) if dtype == torch.int64 else ())))
    if values is None:
        seed = draw(st.integers(0, 2**32 - 1))
    if dtype == torch.bool:
        names = ("max", "0")
    elif dtype.is_floating_point:
        names = FLOAT_SPECIALS + (NONFINITE_SPECIALS * 2 if nonfinite else ())
    else:
        names = INT_SPECIALS
    specials = tuple(draw(st.lists(st.tuples(st.integers(0, 2**31 - 1), st.sampled_from(names),
                                             st.sampled_from((True, True, True, False))), max_size=6)))
    return Case(dtype, shape, expand, order, steps if case.steps else None, starts, pads, offset, tail, to_cl, post_perm,
                fill, mean, scale, seed, specials, values)
