"""Reductions of sharded tensors through torch.distributed: DTensor inputs, and a plain process-group API.

Importing this module registers reducekit's operators with DTensor (reducekit's own import does
it when torch.distributed.tensor is already imported): then reducekit.sum, mean, amax, amin,
linalg.vector_norm, var_mean (var, std, std_mean), logsumexp, argmax (argmin), count_nonzero,
nansum and exact_partial / exact_round take DTensors with Shard(d) and Replicate placements, on a
mesh of any number of dims, and return DTensors as torch's reductions do. A Partial input is
resolved first (redistributed to Replicate); other placements (_StridedShard) are refused.

How a reduction over a sharded dim is resolved. Every rank makes one local reducekit pass over
its shard, then the small partial (a few numbers per output, never the shard) crosses the ranks
once per mesh dim that shards a reduced dim:

- sum, nansum, count_nonzero, vector_norm(ord=0): a Partial(sum) DTensor, which DTensor resolves
  with an all-reduce SUM when it is redistributed (as torch.sum's); amax and vector_norm(inf):
  Partial(max), all-reduce MAX; amin and vector_norm(-inf): Partial(min), all-reduce MIN; other
  p-norms: torch's _NormPartial(p) (all-reduce SUM of the p-th powers, then the p-th root).
- sum(method="exact"): exact_partial's int64 words, a Partial(sum) DTensor resolved by an
  all-reduce SUM of integers (no rounding, so no order dependence), then exact_round once: the bits
  of reducekit.sum(full, method="exact") on one device, whatever the world size or the sharding.
- mean: each rank's mean times its count, all-reduce SUM in float64 (complex128), divided once by
  the global count, rounded once to the result dtype.
- var_mean, var, std, std_mean: each rank's (count, mean, M2 = n * var with correction 0) as
  float64, one all-gather; every rank merges them in rank order with Chan's formula
  (delta = mean_b - mean_a; mean += delta n_b / n; M2 += M2_b + delta^2 n_a n_b / n), then
  divides by max(0, N - correction) once.
- logsumexp: each rank's logsumexp l_r as float64, one all-gather; L = M + log(sum_r exp(l_r - M)),
  M = max_r l_r, added in rank order (the log-add; -inf and +inf handled as torch).
- argmax, argmin: each rank's extreme as an order-preserving int64 key (NaN the largest, as torch's
  argmax picks the first NaN; -0.0 equal to +0.0) beside its global index, one all-gather; the
  largest key wins and, among equal keys, the smallest global index: torch's first index.

The results of the all-gathered combines (var_mean, logsumexp, argmax) and of mean are Replicate
on the mesh dims that sharded a reduced dim; the others are Partial until redistributed, as torch's.

The plain API takes each rank's local shard of a tensor split along `shard_dim` (the full tensor is
torch.cat of the ranks' shards along shard_dim, in rank order; shards may be uneven or empty) and
returns the reduction of the full tensor, the same on every rank. It makes one local pass and one
collective (exact: one all-reduce SUM of the words), of a fixed SLOT_WORDS words per rank: a header
that checks the ranks against each other and carries their counts, then the partial (see
_Call.exchange; a partial beyond the slot sends its rest in a second collective, once the first has
shown that the ranks agree).

exact's carry headroom: a normalized limb lies in [0, 2^32), so K partial words add without
overflowing an int64 while K (2^32 - 1) <= 2^63 - 1, that is K <= 2^31 (EXACT_MAX_PARTIALS). A
sum over a world of W ranks adds W partials: exact_headroom(W) is the number of doublings of the
world size left (29 bits at W = 4), and a group of more than 2^31 ranks is refused.
"""
from __future__ import annotations

import builtins
import hashlib
import math
import warnings

import torch
import torch.distributed as dist

from . import ops as _ops
from . import reductions as _red

EXACT_MAX_PARTIALS: int = (2**63 - 1) // (2**32 - 1)  # 2^31: partial words that add without overflow
MAX_DIMS = 64
SLOT_WORDS = 512  # 8-byte words per rank in a plain call's collective: see _Call.exchange
_PIECES = 8  # 16-bit pieces of the 128-bit fingerprint that checks the ranks against each other
_I64_MIN = -(2**63)
_I64_MAX = 2**63 - 1
_MEAN_ACC = {torch.complex64: torch.complex128, torch.complex128: torch.complex128}  # mean's partial sums

__all__ = ["sum", "mean", "amax", "amin", "vector_norm", "var_mean", "logsumexp", "argmax", "count_nonzero",
           "exact_headroom", "check_exact_headroom", "EXACT_MAX_PARTIALS"]


# ------------------------------------------------------------------------------------------------
# exact's carry headroom


def exact_headroom(partials: int) -> int:
    """Doublings of `partials` (the world size, or the product of the mesh sizes combined) that
    exact's int64 words still absorb without overflow: floor(log2(2^31 / partials)); negative past
    the limit."""
    if partials <= EXACT_MAX_PARTIALS:
        return int(math.floor(math.log2(EXACT_MAX_PARTIALS // partials)))
    return -int(math.ceil(math.log2(partials / EXACT_MAX_PARTIALS)))


def check_exact_headroom(partials: int, where: str = "sum") -> None:
    """Raises a ValueError if `partials` exact partials cannot be added without overflow."""
    if partials > EXACT_MAX_PARTIALS:
        raise ValueError(f"reducekit.distributed.{where}: method='exact' over {partials} ranks: the int64 words of "
                         f"exact_partial add at most {EXACT_MAX_PARTIALS} (2^31) partials without overflowing a word "
                         f"(limbs are < 2^32); reduce in groups of at most 2^31 ranks and add their rounded results, "
                         f"or use method='auto'")


# ------------------------------------------------------------------------------------------------
# The combines: one collective of the small partial over one process group.


def _all_gather(t: torch.Tensor, group) -> torch.Tensor:
    """[W, *t.shape]: every rank's t, in rank order."""
    w = dist.get_world_size(group)
    flat = t.contiguous().reshape(-1)
    out = flat.new_empty(w * flat.numel())
    _gather_single(out, flat, group=group)
    return out.reshape(w, *t.shape)


# torch 2.13 renamed all_gather_into_tensor (which warns now) to all_gather_single.
_gather_single = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor


def _log_add(g: torch.Tensor) -> torch.Tensor:
    """logsumexp over dim 0 of the gathered float64 partials, in rank order."""
    m = g.amax(0)
    mf = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    s = torch.exp(g - mf).sum(0)
    return torch.where(torch.isinf(m) & (m > 0), m, mf + torch.log(s))


def _chan(g: torch.Tensor):
    """Chan's merge, in rank order, of gathered [W, ..., 3] float64 (count, mean, M2) partials."""
    n, mean, m2 = g[0, ..., 0], g[0, ..., 1], g[0, ..., 2]
    for r in range(1, g.shape[0]):
        nb, mb, m2b = g[r, ..., 0], g[r, ..., 1], g[r, ..., 2]
        tot = n + nb
        safe = torch.where(tot > 0, tot, torch.ones_like(tot))
        delta = mb - mean
        take = nb > 0
        mean = torch.where(take, mean + delta * (nb / safe), mean)
        m2 = torch.where(take, m2 + m2b + delta * delta * (n * nb / safe), m2)
        n = tot
    return n, mean, m2


def _chan_pack(v: torch.Tensor, m: torch.Tensor, n: int) -> torch.Tensor:
    """(count, mean, M2) of one rank's var_mean(correction=0) result; zeros for an empty shard."""
    if n == 0:
        z = torch.zeros(m.shape, dtype=torch.float64, device=m.device)
        return torch.stack([z, z, z], -1)
    return torch.stack([torch.full(m.shape, float(n), dtype=torch.float64, device=m.device), m.double(),
                        v.double() * n], -1)


def _extreme_key(val: torch.Tensor, largest: bool) -> torch.Tensor:
    """An int64 key in the order argmax (largest) or argmin compares values: NaN above everything
    (both pick the first NaN), -0.0 equal to +0.0."""
    if val.dtype.is_floating_point:
        d = val.double() + 0.0  # -0.0 + 0.0 is +0.0
        bits = d.view(torch.int64)
        key = torch.where(bits >= 0, bits, bits ^ _I64_MAX)
        nan = d.isnan()
    else:
        key = val.to(torch.int64)
        nan = None
    if not largest:
        key = ~key  # -key - 1: reverses the order without overflow
    if nan is not None:
        key = torch.where(nan, torch.full_like(key, _I64_MAX), key)
    return key


def _fresh(t: torch.Tensor) -> torch.Tensor:
    """A copy with the default strides (a view of the packed pairs keeps odd strides on size-1 dims)."""
    return t.new_empty(t.shape).copy_(t)


def _pick_extreme(g: torch.Tensor) -> torch.Tensor:
    """Of gathered [W, ..., 2] (key, global index) pairs, the winning pair [..., 2]: the largest key,
    and of equal keys the smallest index."""
    key, idx = g[..., 0], g[..., 1]
    best = key.amax(0)
    cand = torch.where(key == best, idx, torch.full_like(idx, _I64_MAX))
    return torch.stack([best, cand.amin(0)], -1)


# ------------------------------------------------------------------------------------------------
# The plain process-group API


def _check_initialized(name: str, group) -> tuple[int, int]:
    if not (dist.is_available() and dist.is_initialized()):
        raise RuntimeError(f"reducekit.distributed.{name}: the default process group is not initialized; call "
                           f"torch.distributed.init_process_group(backend='gloo' (CPU tensors) or 'nccl' (CUDA tensors)) "
                           f"on every rank first, or launch with torchrun")
    return dist.get_world_size(group), dist.get_rank(group)


def _norm_dims(name: str, dim, ndim: int) -> list[int]:
    """dim as a sorted list of non-negative dims; None or () is every dim."""
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) and not isinstance(dim, bool) else list(dim)
    if not dims:
        return list(range(ndim))
    out = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int) or not -ndim <= d < ndim:
            raise IndexError(f"reducekit.distributed.{name}: dim {d!r} is out of range for a {ndim}-dim shard "
                             f"(expected an int in [{-ndim}, {ndim - 1}])")
        out.append(d % ndim)
    if len(set(out)) != len(out):
        raise RuntimeError(f"reducekit.distributed.{name}: dim {dim!r} names a dim twice; pass each once")
    return sorted(out)


class _Call:
    """One call of the plain API: its checks of the local arguments, then `exchange`, the call's one
    collective, which carries the partial together with the words that check the ranks against
    each other (their shards' shapes outside shard_dim, their arguments, their counts)."""

    def __init__(self, name: str, local: torch.Tensor, dim, group, shard_dim: int, args=()):
        if not isinstance(local, torch.Tensor):
            raise TypeError(f"reducekit.distributed.{name}: local_shard must be a torch.Tensor, got {type(local).__name__}")
        self.world, self.rank = _check_initialized(name, group)
        if local.dim() == 0 or local.dim() > MAX_DIMS:
            raise ValueError(f"reducekit.distributed.{name}: local_shard has {local.dim()} dims; a shard has 1 to "
                             f"{MAX_DIMS} dims (unsqueeze a 0-dim value first)")
        nd = local.dim()
        if isinstance(shard_dim, bool) or not isinstance(shard_dim, int) or not -nd <= shard_dim < nd:
            raise IndexError(f"reducekit.distributed.{name}: shard_dim={shard_dim!r} is out of range for a {nd}-dim shard")
        self.shard_dim = shard_dim % nd
        self.dims = _norm_dims(name, dim, nd)
        if self.shard_dim not in self.dims:
            raise ValueError(f"reducekit.distributed.{name}: dim={dim!r} does not reduce shard_dim={shard_dim}, so each "
                             f"rank's result is its own slice of the answer and needs no collective: call "
                             f"reducekit.{name} on the local shard, or pass the shard_dim= the shards are split along")
        self.name, self.local, self.group = name, local, group
        self.n_local = math.prod(local.shape[d] for d in self.dims)  # reduced elements per output, this rank
        masked = list(local.shape)
        masked[self.shard_dim] = -1
        self.args = (name, self.shard_dim, tuple(self.dims), str(local.dtype), repr(args))
        self.fp = _fingerprint((nd, tuple(masked)) + self.args)
        # filled by exchange: sum, the global count; max and min, whether any rank has a value;
        # gather, each rank's size along shard_dim and count
        self.total = self.any = None
        self.sizes = self.counts = None

    def _header(self, kind: str) -> list[int]:
        p = self.fp
        if kind == "sum":  # W, sum of counts; per piece its sum and its square's sum
            return [1, self.n_local] + p + [v * v for v in p]
        if kind == "max":  # the largest count; per piece its largest and its smallest (negated)
            return [self.n_local] + p + [-v for v in p]
        if kind == "min":
            return [-self.n_local] + p + [-v for v in p]
        return [self.local.shape[self.shard_dim], self.n_local] + p  # gather: every rank's own row

    def exchange(self, kind: str, payload: torch.Tensor) -> torch.Tensor:
        """The call's collective of `payload` (float64 or int64 words): kind "sum", "max" or "min",
        an all-reduce (returns the combined words, 1-D); "gather", an all-gather (returns [W, words],
        in rank order). One collective of SLOT_WORDS words when the header and the payload fit in it,
        else a second one of the rest, made only once the first has shown every rank agrees."""
        hdr = self._header(kind)
        h = len(hdr)
        flat = payload.reshape(-1)
        first = flat.new_zeros(SLOT_WORDS)
        first[:h] = _host_words(hdr, flat.dtype, flat.device)
        k = min(SLOT_WORDS - h, flat.numel())
        first[h:h + k] = flat[:k]
        got = self._collective(kind, first)
        self._check(kind, got[..., :h].tolist())
        part = got[..., h:h + k]
        if flat.numel() > k:  # shapes agree (checked above), so every rank sends a rest of this size
            part = torch.cat([part, self._collective(kind, flat[k:].contiguous())], -1)
        return part

    def _collective(self, kind: str, buf: torch.Tensor) -> torch.Tensor:
        if kind == "gather":
            return _all_gather(buf, self.group)
        op = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}[kind]
        dist.all_reduce(buf, op=op, group=self.group)
        return buf

    def _check(self, kind: str, head) -> None:
        n = _PIECES
        if kind == "gather":
            rows = [[_word(v) for v in r] for r in head]
            ok = all(r[2:] == rows[0][2:] for r in rows)
            self.sizes, self.counts = [r[0] for r in rows], [r[1] for r in rows]
            self.total = builtins.sum(self.counts)
        else:
            w = [_word(v) for v in head]
            if kind == "sum":
                ok = w[0] == self.world and all(self.world * w[2 + n + i] == w[2 + i] ** 2 for i in range(n))
                self.total = w[1]
            else:  # the largest and the smallest of every piece are equal
                ok = all(w[1 + i] == -w[1 + n + i] for i in range(n))
                self.any = (w[0] if kind == "max" else -w[0]) > 0
        if not ok:
            self._mismatch()
        if self.any is None:
            self.any = self.total > 0

    def _mismatch(self):
        """Every rank saw the same combined header, so every rank comes here: one all-gather of
        the shapes and arguments names what differs, and every rank raises."""
        row = torch.zeros(2 + MAX_DIMS, dtype=torch.int64, device=self.local.device)
        row[0] = self.local.dim()
        hi, mid, lo = _fingerprint(self.args, pieces=3)
        row[1] = hi << 32 | mid << 16 | lo
        row[2:2 + self.local.dim()] = torch.tensor(self.local.shape, dtype=torch.int64)
        rows = _all_gather(row, self.group).tolist()
        mine = list(self.local.shape)
        for r, w in enumerate(rows):
            s = w[2:2 + w[0]]
            if len(s) != len(mine) or any(a != b for i, (a, b) in enumerate(zip(s, mine)) if i != self.shard_dim):
                raise ValueError(f"reducekit.distributed.{self.name}: local shard shapes differ across ranks outside "
                                 f"shard_dim={self.shard_dim}: rank {self.rank} has {mine}, rank {r} has {s}; every "
                                 f"rank's shard must match the full tensor in every dim but shard_dim (torch.cat of the "
                                 f"shards along shard_dim must be valid)")
        odd = [r for r, w in enumerate(rows) if w[1] != rows[self.rank][1]]
        raise ValueError(f"reducekit.distributed.{self.name}: the call differs across ranks: rank {self.rank} and rank "
                         f"{odd[0] if odd else '?'} pass different arguments (dim, keepdim, dtype, method, ord, correction, "
                         f"shard_dim) or shards of different dtypes; call it with the same arguments on every rank of "
                         f"the group")

    def empty_error(self):
        """torch's error for a reduction over nothing: every rank's part of it is empty."""
        zero = [d for d in self.dims if d != self.shard_dim and self.local.shape[d] == 0]
        d = zero[0] if zero else self.shard_dim
        where = "" if zero else ": every rank's shard is empty along it"
        raise IndexError(f"reducekit.distributed.{self.name}: Expected reduction dim {d} to have non-zero size{where} "
                         f"(shard shape {list(self.local.shape)}); {self.name} of nothing has no value")


def _host_words(values, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A small host list on `device` without waiting for the stream: a pageable host-to-device copy
    synchronizes the stream (torch's memcpy_and_sync), which made the plain API wait for the local
    pass before it even launched its collective; a pinned buffer copies asynchronously (the caching
    host allocator keeps it alive until the copy is done)."""
    t = torch.tensor(values, dtype=dtype)
    if device.type != "cuda":
        return t.to(device)
    return t.pin_memory().to(device, non_blocking=True)


def _fingerprint(parts, pieces: int = 0) -> list[int]:
    """16-bit pieces of a 128-bit hash of `parts` (a repr): two ranks agree on every piece only
    when their parts are equal (but with probability 2^-128)."""
    n = pieces or _PIECES
    d = hashlib.blake2b(repr(parts).encode(), digest_size=2 * n).digest()
    return [int.from_bytes(d[2 * i:2 * i + 2], "little") for i in range(n)]


def _word(v) -> int:
    """A header word read back from a float64 or int64 buffer (integers below 2^53: exact)."""
    return int(v) if isinstance(v, int) or v == v and abs(v) != math.inf else -1


def _words_of(r: torch.Tensor) -> torch.Tensor:
    """A result as words of the sum's buffer: int64 for integers and bool, float64 for floats,
    complex as (real, imaginary) float64 pairs."""
    if r.is_complex():
        return torch.view_as_real(r.to(torch.complex128)).reshape(-1)
    if r.dtype.is_floating_point:
        return r.double().reshape(-1)
    return r.to(torch.int64).reshape(-1)


def _from_words(w: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    if like.is_complex():
        return torch.view_as_complex(w.reshape(*like.shape, 2)).to(like.dtype)
    return w.reshape(like.shape).to(like.dtype)


def _out_like(local: torch.Tensor, dims: list[int], keepdim: bool, fill, dtype) -> torch.Tensor:
    shape = [1 if i in dims else n for i, n in enumerate(local.shape)] if keepdim else \
        [n for i, n in enumerate(local.shape) if i not in dims]
    return torch.full(shape, fill, dtype=dtype, device=local.device)


def sum(local_shard: torch.Tensor, dim=None, keepdim: bool = False, *, dtype: torch.dtype | None = None,  # noqa: A001
        method: str = "auto", group=None, shard_dim: int = 0) -> torch.Tensor:
    """reducekit.sum of the full tensor (the ranks' shards concatenated along shard_dim), on every
    rank: the local sum, then one all-reduce SUM of it (float results in float64, rounded once).
    method="exact": the local exact_partial words, one all-reduce SUM of the integers, one
    exact_round: the bits of reducekit.sum(full, method="exact"), whatever the world size and the
    split."""
    s = _Call("sum", local_shard, dim, group, shard_dim, (keepdim, dtype, method))
    if method == "exact":
        check_exact_headroom(s.world, "sum")
        words = _ops.exact_partial(local_shard, s.dims, keepdim)
        words = s.exchange("sum", words).reshape(words.shape)
        return _ops.exact_round(words, dtype if dtype is not None else local_shard.dtype)
    r = _ops.sum(local_shard, s.dims, keepdim, dtype=dtype, method=method)
    return _from_words(s.exchange("sum", _words_of(r)), r)


def mean(local_shard: torch.Tensor, dim=None, keepdim: bool = False, *, dtype: torch.dtype | None = None,
         group=None, shard_dim: int = 0) -> torch.Tensor:
    """reducekit.mean of the full tensor: each rank's mean times its count, one all-reduce SUM in
    float64 (complex as float64 pairs) beside the counts, divided once by the global count, rounded
    once."""
    s = _Call("mean", local_shard, dim, group, shard_dim, (keepdim, dtype))
    m = _red.mean(local_shard, s.dims, keepdim, dtype=dtype)
    part = _words_of(m) * s.n_local if s.n_local else _words_of(torch.zeros_like(m))
    tot = s.exchange("sum", part)
    return _from_words(tot / s.total, m)


def _extreme(name: str, largest: bool, local: torch.Tensor, dim, keepdim: bool, group, shard_dim: int, f, identity,
             args=()):
    """amax, amin, vector_norm(+-inf): the local extreme (the identity on an empty shard), one
    all-reduce MAX or MIN. Floats travel as float64 beside a NaN flag per output (MAX of 0/1, MIN
    of 0/-1), so that NaN propagates whatever the backend does with NaN."""
    s = _Call(name, local, dim, group, shard_dim, (keepdim,) + tuple(args))
    if s.n_local:
        r = f(local, s.dims, keepdim)
    else:  # this rank's part is the identity, in the dtype the op gives
        ref = f(torch.ones((1,) * local.dim(), dtype=local.dtype, device=local.device), s.dims, keepdim)
        r = _out_like(local, s.dims, keepdim, identity(ref.dtype), ref.dtype)
    kind = "max" if largest else "min"
    if r.dtype.is_floating_point:
        nan = r.isnan()
        flag = nan.double() if largest else -nan.double()
        got = s.exchange(kind, torch.cat([torch.where(nan, 0.0, r.double()).reshape(-1), flag.reshape(-1)]))
        val, flag = got.chunk(2)
        out = torch.where(flag != 0, math.nan, val).reshape(r.shape).to(r.dtype)
    else:
        out = _from_words(s.exchange(kind, _words_of(r)), r)
    if not s.any:
        s.empty_error()
    return out


def _lowest(dtype):
    if dtype.is_floating_point:
        return -math.inf
    return False if dtype == torch.bool else torch.iinfo(dtype).min


def _highest(dtype):
    if dtype.is_floating_point:
        return math.inf
    return True if dtype == torch.bool else torch.iinfo(dtype).max


def amax(local_shard: torch.Tensor, dim=(), keepdim: bool = False, *, group=None, shard_dim: int = 0) -> torch.Tensor:
    """reducekit.amax of the full tensor: the local amax, one all-reduce MAX (NaN propagates)."""
    return _extreme("amax", True, local_shard, dim, keepdim, group, shard_dim, lambda x, d, k: _red.amax(x, d, k), _lowest)


def amin(local_shard: torch.Tensor, dim=(), keepdim: bool = False, *, group=None, shard_dim: int = 0) -> torch.Tensor:
    """reducekit.amin of the full tensor: the local amin, one all-reduce MIN (NaN propagates)."""
    return _extreme("amin", False, local_shard, dim, keepdim, group, shard_dim, lambda x, d, k: _red.amin(x, d, k), _highest)


def count_nonzero(local_shard: torch.Tensor, dim=None, *, group=None, shard_dim: int = 0) -> torch.Tensor:
    """reducekit.count_nonzero of the full tensor: the local counts, one all-reduce SUM."""
    s = _Call("count_nonzero", local_shard, dim, group, shard_dim)
    r = _red.count_nonzero(local_shard, s.dims)
    return _from_words(s.exchange("sum", _words_of(r)), r)


def vector_norm(local_shard: torch.Tensor, ord=2, dim=None, keepdim: bool = False, *,  # noqa: A002
                dtype: torch.dtype | None = None, group=None, shard_dim: int = 0) -> torch.Tensor:
    """reducekit.linalg.vector_norm of the full tensor: ord inf and -inf, one all-reduce MAX or MIN
    of the local norms; ord 0, one all-reduce SUM of the counts; any other p, one all-reduce SUM of
    the local norms' p-th powers in float64, then the p-th root (as torch's _NormPartial), rounded
    once."""
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"reducekit.distributed.vector_norm: ord must be a number, got {ord!r}")
    p = float(ord)
    if p in (math.inf, -math.inf):
        return _extreme("vector_norm", p > 0, local_shard, dim, keepdim, group, shard_dim,
                        lambda x, d, k: _red.linalg.vector_norm(x, p, d, k, dtype=dtype),
                        lambda _: 0.0 if p > 0 else math.inf, (p, dtype))
    s = _Call("vector_norm", local_shard, dim, group, shard_dim, (p, keepdim, dtype))
    r = _red.linalg.vector_norm(local_shard, p, s.dims, keepdim, dtype=dtype)
    if p == 0:
        return _from_words(s.exchange("sum", _words_of(r)), r)
    pw = s.exchange("sum", _words_of(r) ** p)
    return _from_words(pw ** (1.0 / p), r)


def var_mean(local_shard: torch.Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None,
             group=None, shard_dim: int = 0):
    """reducekit.var_mean of the full tensor: each rank's (mean, M2) in float64, one all-gather
    (the counts ride in its header), Chan's merge in rank order on every rank, one division by
    max(0, N - correction)."""
    dim, c = _red._correction("distributed.var_mean", dim, unbiased, correction)
    s = _Call("var_mean", local_shard, dim, group, shard_dim, (keepdim, c))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an empty shard's NaN state is dropped below
        v, m = _red.var_mean(local_shard, s.dims, keepdim=keepdim, correction=0)
    part = _chan_pack(v, m, s.n_local)[..., 1:]  # (mean, M2): the count rides in the header
    g = s.exchange("gather", part).reshape(s.world, *m.shape, 2)
    cnt = _host_words(s.counts, torch.float64, m.device).reshape(-1, *([1] * (m.dim() + 1)))
    tot, mu, m2 = _chan(torch.cat([cnt.expand(*g.shape[:-1], 1), g], -1))
    var = m2 / max(0.0, s.total - c)
    if s.total == 0:
        mu = torch.full_like(mu, math.nan)
    return var.to(v.dtype), mu.to(m.dtype)


def logsumexp(local_shard: torch.Tensor, dim, keepdim: bool = False, *, group=None, shard_dim: int = 0) -> torch.Tensor:
    """reducekit.logsumexp of the full tensor: each rank's logsumexp in float64, one all-gather,
    the log-add M + log(sum exp(l_r - M)) in rank order on every rank, rounded once."""
    s = _Call("logsumexp", local_shard, dim, group, shard_dim, (keepdim,))
    r = _red.logsumexp(local_shard, s.dims, keepdim)
    return _log_add(s.exchange("gather", r.double()).reshape(s.world, *r.shape)).to(r.dtype)


def argmax(local_shard: torch.Tensor, dim=None, keepdim: bool = False, *, group=None, shard_dim: int = 0) -> torch.Tensor:
    """reducekit.argmax of the full tensor (dim=None: its flattened index): each rank's largest
    value as an int64 key beside its local index, one all-gather (the ranks' sizes along shard_dim
    ride in its header, and give each rank's offset), the largest key with the smallest global
    index on every rank (torch's first index; NaN counts as the largest)."""
    return _arg_extreme("argmax", True, local_shard, dim, keepdim, group, shard_dim)


def _arg_extreme(name, largest, local, dim, keepdim, group, shard_dim):
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int)):
        raise TypeError(f"reducekit.distributed.{name}: dim must be an int or None, got {dim!r}")
    s = _Call(name, local, dim, group, shard_dim, (dim is None, keepdim))
    f = _red.argmax if largest else _red.argmin
    nd = local.dim()
    d = None if dim is None else s.dims[0]
    shape = [] if d is None else [1 if i == d else n for i, n in enumerate(local.shape)]
    if s.n_local:
        li = f(local) if d is None else f(local, d, keepdim=True)
        val = local.reshape(-1)[li] if d is None else local.gather(d, li)
        part = torch.stack([_extreme_key(val, largest), li], -1)
    else:
        part = torch.stack([torch.full(shape, _I64_MIN, dtype=torch.int64, device=local.device),
                            torch.zeros(shape, dtype=torch.int64, device=local.device)], -1)
    g = s.exchange("gather", part).reshape(s.world, *shape, 2)
    if s.total == 0:
        s.empty_error()
    full = list(local.shape)
    full[s.shard_dim] = builtins.sum(s.sizes)
    gidx = []
    for r in range(s.world):  # each rank's local index as an index of the full tensor
        off = builtins.sum(s.sizes[:r])
        li = g[r, ..., 1]
        if not s.counts[r]:
            gidx.append(torch.full_like(li, _I64_MAX))
        elif d is None:
            mine = list(full)
            mine[s.shard_dim] = s.sizes[r]
            gidx.append(_flat_global(li, mine, full, s.shard_dim, off))
        else:
            gidx.append(li + off)
    out = _fresh(_pick_extreme(torch.stack([g[..., 0], torch.stack(gidx)], -1))[..., 1])
    if d is None:
        return out.reshape([1] * nd) if keepdim else out
    return out if keepdim else out.squeeze(d)


def _flat_global(li: torch.Tensor, local_shape, global_shape, shard_dim: int, offset: int) -> torch.Tensor:
    """A flat index into the local shard as a flat index into the full tensor (shard at `offset`
    along shard_dim; `offset` an int, or a list of per-dim offsets)."""
    offs = [0] * len(local_shape)
    if isinstance(offset, (list, tuple)):
        offs = list(offset)
    else:
        offs[shard_dim] = offset
    out = torch.zeros_like(li)
    rem = li
    for i in range(len(local_shape)):
        lstride = math.prod(local_shape[i + 1:])
        gstride = math.prod(global_shape[i + 1:])
        coord = torch.div(rem, lstride, rounding_mode="floor")
        rem = rem - coord * lstride
        out = out + (coord + offs[i]) * gstride
    return out


# ------------------------------------------------------------------------------------------------
# DTensor: sharding strategies of reducekit's operators, and the handler that runs them eagerly.

try:
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
    from torch.distributed.tensor._dtensor_spec import DTensorSpec, TensorMeta
    from torch.distributed.tensor._op_schema import OpSpec, OpStrategy, RuntimeSchemaInfo
    from torch.distributed.tensor._ops._math_ops import _get_norm_reduction_op, common_reduction_strategy
    from torch.distributed.tensor._ops._math_ops import get_placement_from_reduction_op
    from torch.distributed.tensor._ops.utils import generate_redistribute_costs
    from torch.distributed.tensor._utils import compute_local_shape_and_global_offset
    _HAVE_DTENSOR = True
except ImportError:  # a torch built without distributed
    _HAVE_DTENSOR = False

# How each op of reducekit::reduce combines over a sharded reduced dim: a Partial kind that DTensor
# resolves ("sum", "max", "min", or "norm": torch's norm placement), or an eager combine here.
_LINEAR = {"sum": "sum", "nansum": "sum", "count_nonzero": "sum", "amax": "max", "amin": "min", "vector_norm": "norm"}
_EAGER = {"mean", "var", "std", "var_mean", "std_mean", "logsumexp", "argmax", "argmin"}
_PUBLIC = {"vector_norm": "linalg.vector_norm"}
_REDUCE_ARGS = ("self", "op", "dim", "keepdim", "dtype", "ord", "correction", "method")
_SUM_ARGS = ("self", "dim", "keepdim", "dtype", "method")
_DEFAULTS = {"dim": None, "keepdim": False, "dtype": None, "ord": 2.0, "correction": 1.0, "method": "auto"}


def _bind(names, args, kwargs) -> dict:
    a = dict(_DEFAULTS)
    a.update(zip(names, args))
    a.update(kwargs)
    return a


def _reduce_dims(op: str, dim, ndim: int) -> list[int]:
    """The dims reducekit::sum and reducekit::reduce reduce: None or [] is every dim (the Python
    functions pass torch's dim=() of amax, amin, logsumexp and count_nonzero as None)."""
    if dim is None or len(dim) == 0:
        return list(range(ndim))
    return sorted(d % ndim for d in dim) if ndim else []


def _kind(op: str, method: str, ord_: float):
    """The Partial reduction op of a linear op, or None for the eager combines."""
    if op == "sum" and method == "exact":
        return None
    k = _LINEAR.get(op)
    if k == "norm":
        return _get_norm_reduction_op(ord_)
    return k


def _out_placements(placements, dims: list[int], keepdim: bool, kind) -> list:
    """Placements of the result: a Shard of a kept dim moves to its new index; a Shard of a reduced
    dim becomes the Partial of `kind`, or Replicate (kind None: combined eagerly)."""
    out = []
    for p in placements:
        if isinstance(p, Shard) and p.dim in dims:
            out.append(Replicate() if kind is None else get_placement_from_reduction_op(kind))
        elif isinstance(p, Shard):
            out.append(Shard(p.dim if keepdim else p.dim - builtins.sum(1 for d in dims if d < p.dim)))
        else:
            out.append(p)
    return out


def _check_placements(public: str, placements) -> None:
    for i, p in enumerate(placements):
        if not (type(p) is Shard or isinstance(p, (Replicate, Partial))):
            raise ValueError(f"reducekit.{public}: the DTensor's placement {type(p).__name__} ({p!r}) on mesh dim {i} is not supported; reducekit "
                             f"reduces DTensors placed with Shard(d), Replicate() or Partial(): redistribute it first, "
                             f"e.g. x.redistribute(x.device_mesh, [Shard(0)] * x.device_mesh.ndim)")


def _reduce_strategy(op_schema):
    """Sharding strategy of reducekit::sum and reducekit::reduce, as torch's reductions': a Shard
    of a reduced dim gives the Partial of the op's combine for the linear ops; for the others the
    strategy asks for Replicate on the reduced dims (correct without the handler; the eager handler
    below combines the partials instead, without gathering the shard)."""
    args = op_schema.args_schema
    kw = op_schema.kwargs_schema
    inp = args[0]
    if op_schema.op is torch.ops.reducekit.sum.default:
        op, dim, keepdim = "sum", (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else False)
    else:
        op, dim, keepdim = args[1], (args[2] if len(args) > 2 else None), (args[3] if len(args) > 3 else False)
    for spec in inp.strategies:
        _check_placements(_PUBLIC.get(op, op), spec.output_spec.placements)
    dims = _reduce_dims(op, dim, inp.ndim)
    kind = _kind(op, kw.get("method", "auto"), kw.get("ord", 2.0))
    strat = common_reduction_strategy(inp, dims, keep_dim=bool(keepdim), reduction_linear=kind is not None,
                                      reduction_op=kind if kind is not None else "sum")
    if op_schema.op is torch.ops.reducekit.reduce.default and op in ("var_mean", "std_mean", "aminmax"):
        for s in strat.strategies:
            s.output_specs = (s.output_specs, s.output_specs)
    elif op_schema.op is torch.ops.reducekit.reduce.default:
        for s in strat.strategies:
            s.output_specs = (s.output_specs,)
    return strat


def _exact_partial_strategy(op_schema):
    """exact_partial: its words of a Shard of a reduced dim are Partial(sum) (integer addition is
    exact and associative); the words dim is appended last, so kept Shard dims keep their index."""
    args = op_schema.args_schema
    inp = args[0]
    for spec in inp.strategies:
        _check_placements("exact_partial", spec.output_spec.placements)
    dims = _reduce_dims("sum", args[1] if len(args) > 1 else None, inp.ndim)
    return common_reduction_strategy(inp, dims, keep_dim=bool(args[2]) if len(args) > 2 else False,
                                     reduction_linear=True, reduction_op="sum")


def _exact_round_strategy(op_schema):
    """exact_round: the words are combined (Partial resolved to Replicate) and whole (the words dim
    unsharded) before the one rounding; a Shard of another dim stays."""
    inp = op_schema.args_schema[0]
    last = inp.ndim - 1
    out = OpStrategy([])
    for spec in inp.strategies:
        pl = tuple(Replicate() if p.is_partial() or (isinstance(p, Shard) and p.dim == last) else p
                   for p in spec.output_spec.placements)
        in_spec = DTensorSpec(mesh=inp.mesh, placements=pl, tensor_meta=spec.output_spec.tensor_meta)
        out.strategies.append(OpSpec(output_specs=DTensorSpec(mesh=inp.mesh, placements=pl), input_specs=(in_spec,),
                                     redistribute_cost=[generate_redistribute_costs(inp, in_spec)]))
    return out


def _wrap(local: torch.Tensor, mesh, placements, shape) -> "DTensor":
    shape = torch.Size(shape)
    stride = tuple(math.prod(shape[i + 1:]) for i in range(len(shape)))
    spec = DTensorSpec(mesh, tuple(placements), tensor_meta=TensorMeta(shape, stride, local.dtype))
    return DTensor(local, spec, requires_grad=False)


def _out_shape(shape, dims, keepdim):
    return [1 if i in dims else n for i, n in enumerate(shape)] if keepdim else [n for i, n in enumerate(shape) if i not in dims]


def _handler(op_call, args, kwargs):
    """Eager DTensor dispatch of reducekit::sum and reducekit::reduce: one local pass over the
    shard, then the combine of the module docstring over each mesh dim that shards a reduced dim."""
    is_sum = op_call is torch.ops.reducekit.sum.default
    a = _bind(_SUM_ARGS if is_sum else _REDUCE_ARGS, args, kwargs)
    x = a["self"]
    op = "sum" if is_sum else a["op"]
    public = _PUBLIC.get(op, op)
    mesh = x.device_mesh
    _check_placements(public, x.placements)
    if any(p.is_partial() for p in x.placements):
        x = x.redistribute(mesh, [Replicate() if p.is_partial() else p for p in x.placements])
    placements = x.placements
    ndim = x.ndim
    dims = _reduce_dims(op, a["dim"], ndim)
    keepdim = bool(a["keepdim"])
    kind = _kind(op, a["method"], a["ord"])
    combine = [md for md, p in enumerate(placements) if isinstance(p, Shard) and p.dim in dims]
    local = x._local_tensor
    out_shape = _out_shape(x.shape, dims, keepdim)
    out_pl = _out_placements(placements, dims, keepdim, kind)
    groups = [mesh.get_group(md) for md in combine]

    def call_local(t, **over):
        b = dict(a, **over)
        if is_sum:
            return [op_call(t, b["dim"], b["keepdim"], dtype=b["dtype"], method=b["method"])]
        return list(op_call(t, b["op"], b["dim"], b["keepdim"], dtype=b["dtype"], ord=b["ord"],
                            correction=b["correction"], method=b["method"]))

    def wrap(results):
        r = [_wrap(t, mesh, out_pl, out_shape if t.dim() == len(out_shape) else t.shape) for t in results]
        return r[0] if is_sum else r

    if not combine:  # no reduced dim is sharded: the local result is the result's shard
        return wrap(call_local(local))
    n_local = math.prod(local.shape[d] for d in dims)
    n_total = math.prod(x.shape[d] for d in dims)
    if kind is not None:
        no_identity = op in ("amax", "amin") or (op == "vector_norm" and math.isinf(a["ord"]))
        if n_total == 0 and no_identity:
            call_local(local)  # torch's error for an empty reduction (the local shard is empty too)
        if n_local == 0 and no_identity:  # this rank's part is the combine's identity
            ref = call_local(torch.ones((1,) * ndim, dtype=local.dtype, device=local.device))[0]
            fill = {"amax": _lowest(local.dtype), "amin": _highest(local.dtype)}.get(op, 0.0 if a["ord"] > 0 else math.inf)
            return wrap([torch.full(_out_shape(local.shape, dims, keepdim), fill, dtype=ref.dtype, device=local.device)])
        return wrap(call_local(local))
    if op == "sum":  # method="exact": the words through DTensor's own Partial(sum), one rounding
        check_exact_headroom(math.prod(mesh.size(md) for md in combine), "sum")
        words = torch.ops.reducekit.exact_partial.default(x, dims, keepdim)
        words = words.redistribute(mesh, [Replicate() if p.is_partial() else p for p in words.placements])
        dtype = a["dtype"] if a["dtype"] is not None else local.dtype
        return torch.ops.reducekit.exact_round.default(words, dtype)
    if op == "mean":
        m = call_local(local)[0]
        acc = _MEAN_ACC.get(m.dtype, torch.float64)
        part = m.to(acc) * n_local if n_local else torch.zeros(m.shape, dtype=acc, device=m.device)
        for g in groups:
            dist.all_reduce(part, op=dist.ReduceOp.SUM, group=g)
        return wrap([(part / n_total).to(m.dtype)])
    if op in ("var", "std", "var_mean", "std_mean"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v, m = call_local(local, op="var_mean", correction=0.0)
        packed = _chan_pack(v, m, n_local)
        for g in groups:
            tot, mu, m2 = _chan(_all_gather(packed, g))
            packed = torch.stack([tot, mu, m2], -1)
        mu, m2 = packed[..., 1], packed[..., 2]
        var = m2 / max(0.0, n_total - a["correction"])
        if op.startswith("std"):
            var = var.sqrt()
        if n_total == 0:
            mu = torch.full_like(mu, math.nan)
        res = [var.to(v.dtype)] + ([mu.to(m.dtype)] if op.endswith("_mean") else [])
        return wrap(res)
    if op == "logsumexp":
        r0 = call_local(local)[0]
        r = r0.double()
        for g in groups:
            r = _log_add(_all_gather(r, g))
        return wrap([r.to(r0.dtype)])
    if op in ("argmax", "argmin"):
        if n_total == 0:
            call_local(local)  # torch's error for an empty reduction
        largest = op == "argmax"
        _, goff = compute_local_shape_and_global_offset(x.shape, mesh, placements)
        if n_local:
            if a["dim"] is None:
                li = call_local(local)[0]
                key = _extreme_key(local.reshape(-1)[li], largest)
                gidx = _flat_global(li, list(local.shape), list(x.shape), 0, list(goff))
            else:
                d = dims[0]
                li = call_local(local, keepdim=True)[0]
                key = _extreme_key(local.gather(d, li), largest)
                gidx = li + goff[d]
        else:
            shape = [] if a["dim"] is None else [1 if i == dims[0] else n for i, n in enumerate(local.shape)]
            key = torch.full(shape, _I64_MIN, dtype=torch.int64, device=local.device)
            gidx = torch.full(shape, _I64_MAX, dtype=torch.int64, device=local.device)
        packed = torch.stack([key, gidx], -1)
        for g in groups:
            packed = _pick_extreme(_all_gather(packed, g))
        out = _fresh(packed[..., 1])
        if a["dim"] is None:
            out = out.reshape([1] * ndim) if keepdim else out
        elif not keepdim:
            out = out.squeeze(dims[0])
        return wrap([out])
    raise NotImplementedError(f"reducekit.{public} of a DTensor sharded along a reduced dim is not supported (mesh dims "
                              f"{combine} shard dims {dims}); supported: sum, nansum, mean, amax, amin, count_nonzero, "
                              f"linalg.vector_norm, var, std, var_mean, std_mean, logsumexp, argmax, argmin. Redistribute "
                              f"the reduced dims to Replicate() first, or use a supported op")


_REGISTERED = False


def register_dtensor() -> None:
    """Registers reducekit's operators with DTensor (idempotent): sharding strategies for
    reducekit::sum, reduce, exact_partial and exact_round, and the eager handler of sum and reduce."""
    global _REGISTERED
    if _REGISTERED or not _HAVE_DTENSOR:
        return
    prop = DTensor._op_dispatcher.sharding_propagator
    rk = torch.ops.reducekit
    prop.register_op_strategy(rk.sum.default, _reduce_strategy, RuntimeSchemaInfo(1, ["dtype", "method"]))
    prop.register_op_strategy(rk.reduce.default, _reduce_strategy,
                              RuntimeSchemaInfo(1, ["dtype", "ord", "correction", "method"]))
    prop.register_op_strategy(rk.exact_partial.default, _exact_partial_strategy, RuntimeSchemaInfo(1))
    prop.register_op_strategy(rk.exact_round.default, _exact_round_strategy, RuntimeSchemaInfo(1))
    DTensor._op_dispatcher._custom_op_handlers[rk.sum.default] = _handler
    DTensor._op_dispatcher._custom_op_handlers[rk.reduce.default] = _handler
    _REGISTERED = True


register_dtensor()
