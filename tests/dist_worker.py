"""One rank of tests/test_distributed.py: `python dist_worker.py RANK WORLD INIT_FILE OUT_DIR DEVICE`.

Every rank builds the same seeded full tensors (REDUCEKIT_SEED), takes its shard, runs every
check of reducekit.distributed (the plain process-group API and DTensor inputs) against
single-process reducekit on the full tensor, and writes its verdicts to OUT_DIR/rank{RANK}.json.
Integers, extremes, indices and method="exact" are compared bit for bit; the float sums, means,
norms, var_mean and logsumexp within bounds derived from each rank's local pass (the engine's
order, tests/test_accuracy_ops.py) and the combine's roundings (the all-reduce of P partials adds
at most P - 1 roundings in its dtype; the float64 combines a few float64 roundings).
"""
from __future__ import annotations

import json
import math
import os
import sys
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import reducekit  # noqa: E402
import reducekit.distributed as rd  # noqa: E402
from helpers import depth as sum_depth  # noqa: E402
from helpers import gamma, same_bits, seed_for  # noqa: E402
from test_accuracy_ops import acc_u  # noqa: E402
from test_accuracy_ops import depth as op_depth  # noqa: E402
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor, init_device_mesh  # noqa: E402

U = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8, torch.float32: 2.0**-24, torch.float64: 2.0**-53}
U64 = 2.0**-53
TABLE_SEED = 24  # the world-size table's data is fixed, so that its rows can be quoted


class Checks:
    def __init__(self):
        self.rows = []

    def run(self, group, name, fn):
        try:
            ok, detail = fn()
        except Exception as e:  # noqa: BLE001  (reported as the check's failure)
            ok, detail = False, f"raised {type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}"
        self.rows.append({"group": group, "name": name, "ok": bool(ok), "detail": str(detail)[:2000]})


# ------------------------------------------------------------------------------------------------
# data


def gen(device, *key):
    return torch.Generator(device="cpu").manual_seed(seed_for(*key))


def data(device):
    g = gen(device, "dist-data")
    d = {
        "f32": torch.randn(37, 13, generator=g) + 1.0,
        "f64": torch.randn(37, 13, generator=g, dtype=torch.float64) * 3 + 0.5,
        "f16": (torch.randn(37, 13, generator=g) + 1.0).half(),
        "bf16": (torch.randn(37, 13, generator=g) + 1.0).bfloat16(),
        "i32": torch.randint(-2, 3, (29, 6), generator=g, dtype=torch.int32),
        "tiny": torch.randn(3, 5, generator=g) + 2.0,  # 3 rows: an empty shard at 4 ranks
    }
    nan = d["f32"].clone()
    nan[21, 4] = math.nan
    nan[30, 4] = math.nan
    d["nan"] = nan
    return {k: v.to(device) for k, v in d.items()}


def spread(device):
    """float32 1003 x 77 of widely spread magnitudes (10^-2..10^4) and nonzero mean, fixed seed."""
    g = torch.Generator().manual_seed(TABLE_SEED)
    mag = 10.0 ** (torch.rand(1003, 77, generator=g, dtype=torch.float64) * 6 - 2)
    x = (torch.randn(1003, 77, generator=g, dtype=torch.float64) * mag + 200.0).float()
    return x.to(device)


def splits(n, world, key, empty=True):
    """Uneven sizes along the shard dim, summing to n: with `empty`, a seeded rank's shard is empty
    (the others may be too); without, every shard has at least one row (n >= world)."""
    g = gen("cpu", "splits", n, world, key, empty)
    if not empty:
        cuts = sorted((torch.randperm(n - 1, generator=g)[:world - 1] + 1).tolist())
        edges = [0] + cuts + [n]
        return [edges[i + 1] - edges[i] for i in range(world)]
    cuts = sorted(torch.randint(0, n + 1, (world - 2,), generator=g).tolist()) if world > 1 else []
    edges = [0] + cuts + [n]
    sizes = [edges[i + 1] - edges[i] for i in range(len(edges) - 1)]
    if world > 1:
        sizes.insert(int(torch.randint(0, world, (1,), generator=g)), 0)
    return sizes


def shard_of(x, sizes, rank, dim=0):
    return x.split(sizes, dim)[rank]


# ------------------------------------------------------------------------------------------------
# bounds: `parts` are the pieces whose local results the combine adds, each reduced over dims


def dep(n, dtype, device):
    return max(op_depth(max(n, 1), dtype), sum_depth("auto", max(n, 1), dtype, device))


def count(p, dims):
    return math.prod(p.shape[d] for d in dims)


def sum_bound(parts, dims, dtype, device):
    u_acc, u_out = acc_u("sum", dtype), U[dtype]
    b = 0.0
    tot = 0.0
    for p in parts:
        if p.numel() == 0:
            continue
        s = reducekit.sum(p, dims).double().abs()
        a = p.double().abs().sum(dims)
        b = b + gamma(dep(count(p, dims), dtype, device), u_acc) * a + (u_out * s if u_acc != u_out else 0)
        tot = tot + s
    return b + gamma(max(len(parts) - 1, 1), u_out) * (tot + b)


def mean_bound(parts, dims, dtype, device, ref):
    u_acc, u_out = acc_u("mean", dtype), U[dtype]
    n_all = builtins_sum(count(p, dims) for p in parts)
    b, mag = 0.0, 0.0
    for p in parts:
        n = count(p, dims)
        if n == 0:
            continue
        m = reducekit.mean(p, dims).double().abs()
        a = p.double().abs().sum(dims)
        b = b + (n / n_all) * (gamma(dep(n, dtype, device), u_acc) * a / n + u_out * m)
        mag = mag + (n / n_all) * m
    b = b + gamma(len(parts) + 2, U64) * mag
    return b + u_out * (ref.abs() + b)


def norm2_bound(parts, dims, dtype, device, ref, stages=0):
    """The plain API squares, adds and roots in float64 (stages=0); DTensor's _NormPartial (torch's)
    squares, all-reduces and roots in the result dtype once per mesh dim that `stages` counts."""
    u_acc, u_out = acc_u("norm2", dtype), U[dtype]
    u_c, k = (u_out, 2 * stages + 1) if stages else (U64, 3)
    r = 0.0
    for p in parts:
        n = count(p, dims)
        if n:
            r = max(r, (gamma(dep(n, dtype, device), u_acc) + 2 * u_acc) / 2 + u_out)
    return ((1 + r) * (1 + u_c) ** k * (1 + gamma(len(parts), u_c)) * (1 + u_out) - 1) * ref.abs()


def lse_bound(parts, dims, dtype, device, ref):
    u_acc, u_out = acc_u("logsumexp", dtype), U[dtype]
    gpu = 2.0**-21 if torch.device(device).type == "cuda" else 0.0  # the GPU's ex2.approx
    e = 0.0
    for p in parts:
        n = count(p, dims)
        if n == 0:
            continue
        lp = reducekit.logsumexp(p, dims).double()
        e = torch.maximum(torch.as_tensor(e, dtype=torch.float64, device=lp.device),
                          gamma(dep(n, dtype, device), u_acc) + gpu + 2 * u_out * lp.abs())
    return e + u_out * ref.abs() + gamma(len(parts) + 2, U64) * (ref.abs() + 1)


def var_mean_bounds(parts, dims, dtype, device, correction):
    """Bounds of (var, mean) merged from each part's var_mean(correction=0) (module docstring:
    the parts' roundings to the value type, then Chan's merge in float64)."""
    u_out = U[dtype]
    u_v = 2.0**-53 if dtype == torch.float64 else 2.0**-24
    full_n = builtins_sum(count(p, dims) for p in parts)
    stats = []
    for p in parts:
        n = count(p, dims)
        if n == 0:
            continue
        pd = p.double()
        mu = pd.mean(dims)
        vhat, mhat = reducekit.var_mean(p, dims, correction=0)
        d = dep(n, dtype, device)
        # the engine's runs are two-pass in the value type (test_accuracy_ops.test_var_std_large_mean):
        # the run mean errs by gamma_D(u_v) sum|x| / n, each deviation by u_v |x|; then the merges in
        # float64 and the result's rounding
        dev = (pd - pd.mean(dims, keepdim=True)).abs()
        em = u_out * mhat.double().abs() + gamma(d, u_v) * pd.abs().sum(dims) / n
        ev = (u_out * vhat.double().abs() + (2 * u_v * (dev * pd.abs()).sum(dims) + gamma(d + 2, u_v) * (dev * dev).sum(dims)) / n
              + gamma(4 * d, U64) * (pd * pd).sum(dims) / n)
        stats.append((n, mu, pd.var(dims, correction=0), em, ev))
    mu = builtins_sum(n * m for n, m, _, _, _ in stats) / full_n
    e_mu = builtins_sum((n / full_n) * em for n, _, _, em, _ in stats)
    e_m2, mag = 0.0, 0.0
    for n, m, v, em, ev in stats:
        dd = (m - mu).abs()
        ed = em + e_mu
        e_m2 = e_m2 + n * ev + n * (2 * dd * ed + ed * ed)
        mag = mag + n * v + n * dd * dd
    e_m2 = e_m2 + gamma(3 * len(parts) + 4, U64) * mag
    dof = max(0.0, full_n - correction)
    ref_var = mag / dof
    bv = e_m2 / dof + u_out * (ref_var.abs() + e_m2 / dof)
    bm = e_mu + gamma(3 * len(parts), U64) * mu.abs() + u_out * (mu.abs() + e_mu)
    return ref_var, mu, bv, bm


builtins_sum = __builtins__["sum"] if isinstance(__builtins__, dict) else __builtins__.sum


def exact_ref(x, dims):
    """Per output, the exact sum in float64 through fsum (correctly rounded to float64)."""
    xd = x.double().cpu()
    moved = xd.permute([i for i in range(x.dim()) if i not in dims] + list(dims))
    keep = moved.shape[:x.dim() - len(dims)]
    flat = moved.reshape(math.prod(keep), -1)
    return torch.tensor([math.fsum(r) for r in flat.tolist()], dtype=torch.float64).reshape(keep).to(x.device)


def within(got, ref, bound, what):
    got = got.double()
    err = (got - ref).abs()
    bad = ~(err <= bound)
    if bool(bad.any()):
        i = int(bad.reshape(-1).nonzero()[0])
        return False, (f"{what}: {int(bad.sum())} of {bad.numel()} outputs past the bound; first: got "
                       f"{got.reshape(-1)[i].item()!r}, reference {ref.reshape(-1)[i].item()!r}, error "
                       f"{err.reshape(-1)[i].item():.3e} > bound {torch.as_tensor(bound).expand_as(err).reshape(-1)[i].item():.3e}")
    return True, f"{what}: max error {err.max().item() if err.numel() else 0:.3e}"


def _nan_canonical(t):
    """t with every NaN as one NaN: a NaN's payload is not part of torch's contract, and the
    single-process kernel's NaN (a GPU's canonical NaN) need not be the one a combine writes."""
    return torch.where(t.isnan(), torch.full_like(t, math.nan), t) if t.is_floating_point() else t


def bits(got, ref, what):
    ok = got.shape == ref.shape and got.dtype == ref.dtype and same_bits(_nan_canonical(got), _nan_canonical(ref))
    return ok, f"{what}: got {got.flatten()[:6].tolist()} {got.dtype} {tuple(got.shape)}, single-process " \
               f"{ref.flatten()[:6].tolist()} {ref.dtype} {tuple(ref.shape)}"


# ------------------------------------------------------------------------------------------------
# the plain process-group API


def plain_checks(c, world, rank, device, d):
    x = d["f32"]
    for sd, empty in ((0, True), (1, True), (0, False), (1, False)):
        sizes = splits(x.shape[sd], world, ("f32", sd), empty)
        loc = shard_of(x, sizes, rank, sd)
        tag = f"shard_dim={sd} sizes={sizes}"
        for dims in ([0, 1], [sd]):
            dim_arg = None if len(dims) == 2 else sd
            parts = list(x.split(sizes, sd))
            ref = exact_ref(x, dims)
            c.run("plain", f"sum dim={dim_arg} {tag}", lambda: within(
                rd.sum(loc, dim_arg, shard_dim=sd), ref, sum_bound(parts, dims, x.dtype, device), "sum"))
            c.run("plain", f"mean dim={dim_arg} {tag}", lambda: within(
                rd.mean(loc, dim_arg, shard_dim=sd), ref / count(x, dims),
                mean_bound(parts, dims, x.dtype, device, ref / count(x, dims)), "mean"))
            nref = x.double().pow(2).sum(dims).sqrt()
            c.run("plain", f"vector_norm(2) dim={dim_arg} {tag}", lambda: within(
                rd.vector_norm(loc, 2, dim_arg, shard_dim=sd), nref, norm2_bound(parts, dims, x.dtype, device, nref), "norm2"))
            for o in (0, math.inf, -math.inf):
                c.run("plain", f"vector_norm({o}) dim={dim_arg} {tag}", lambda o=o: bits(
                    rd.vector_norm(loc, o, dim_arg, shard_dim=sd), reducekit.linalg.vector_norm(x, o, dim_arg), f"norm{o}"))
            xd = x.double()
            lref = xd.logsumexp(dims)
            c.run("plain", f"logsumexp dim={dims} {tag}", lambda: within(
                rd.logsumexp(loc, dims, shard_dim=sd), lref, lse_bound(parts, dims, x.dtype, device, lref), "logsumexp"))
            for corr in (0, 1):
                def vm(corr=corr):
                    v, m = rd.var_mean(loc, dim_arg, correction=corr, shard_dim=sd)
                    rv, rm, bv, bm = var_mean_bounds(parts, dims, x.dtype, device, corr)
                    ok1, d1 = within(v, rv, bv, "var")
                    ok2, d2 = within(m, rm, bm, "mean")
                    return ok1 and ok2, d1 + "; " + d2
                c.run("plain", f"var_mean correction={corr} dim={dim_arg} {tag}", vm)
            for name, f, rf in (("amax", rd.amax, reducekit.amax), ("amin", rd.amin, reducekit.amin)):
                c.run("plain", f"{name} dim={dims} {tag}", lambda f=f, rf=rf: bits(f(loc, dims, shard_dim=sd), rf(x, dims), "extreme"))
            c.run("plain", f"argmax dim={dim_arg} {tag}", lambda: bits(
                rd.argmax(loc, dim_arg, shard_dim=sd), reducekit.argmax(x, dim_arg), "argmax"))
    # keepdim, integers with ties, NaN, an empty shard everywhere but one rank
    xi = d["i32"]
    for kd, empty in ((False, True), (True, False)):
        sizes = splits(xi.shape[0], world, "i32", empty)
        li = shard_of(xi, sizes, rank)
        c.run("plain", f"count_nonzero int32 sizes={sizes}", lambda: bits(rd.count_nonzero(li, 0), reducekit.count_nonzero(xi, 0), "count"))
        c.run("plain", f"sum int32 keepdim={kd} sizes={sizes}", lambda kd=kd: bits(rd.sum(li, 0, kd), reducekit.sum(xi, 0, kd), "int sum"))
        c.run("plain", f"amax int32 keepdim={kd} sizes={sizes}", lambda kd=kd: bits(rd.amax(li, 0, kd), reducekit.amax(xi, 0, kd), "int amax"))
        c.run("plain", f"argmax int32 ties keepdim={kd} sizes={sizes}", lambda kd=kd: bits(rd.argmax(li, 0, kd), reducekit.argmax(xi, 0, kd), "argmax ties"))
        c.run("plain", f"argmax int32 dim=None keepdim={kd}", lambda kd=kd: bits(rd.argmax(li, None, kd), reducekit.argmax(xi, None, kd), "argmax flat"))
    xn = d["nan"]
    sizes = splits(xn.shape[0], world, "nan", False)
    ln = shard_of(xn, sizes, rank)
    c.run("plain", f"amax NaN propagates sizes={sizes}", lambda: bits(rd.amax(ln, 0), reducekit.amax(xn, 0), "amax nan"))
    c.run("plain", f"amin NaN propagates sizes={sizes}", lambda: bits(rd.amin(ln), reducekit.amin(xn), "amin nan"))
    c.run("plain", f"argmax first NaN sizes={sizes}", lambda: bits(rd.argmax(ln, 0), reducekit.argmax(xn, 0), "argmax nan"))
    c.run("plain", f"argmax flat first NaN sizes={sizes}", lambda: bits(rd.argmax(ln), reducekit.argmax(xn), "argmax nan flat"))
    xf = d["f64"].clone()  # infinities on some rank: MAX/MIN carry them as they are (not as +-max finite)
    xf[25, 3], xf[2, 6], xf[31, 6] = math.inf, -math.inf, math.inf
    lf = shard_of(xf, sizes, rank)
    for name, f, rf in (("amax", rd.amax, reducekit.amax), ("amin", rd.amin, reducekit.amin)):
        c.run("plain", f"{name} with infinities sizes={sizes}", lambda f=f, rf=rf: bits(f(lf, 0), rf(xf, 0), f"{name} inf"))
    c.run("plain", f"vector_norm(inf) with infinities sizes={sizes}", lambda: bits(
        rd.vector_norm(lf, math.inf, 0), reducekit.linalg.vector_norm(xf, math.inf, 0), "norm inf"))
    one = [0] * world
    one[world - 1] = 3
    lt = shard_of(d["tiny"], one, rank)
    c.run("plain", f"amax with all but one shard empty {one}", lambda: bits(rd.amax(lt, 0), reducekit.amax(d["tiny"], 0), "amax"))
    c.run("plain", f"argmax with all but one shard empty {one}", lambda: bits(rd.argmax(lt), reducekit.argmax(d["tiny"]), "argmax"))
    c.run("plain", f"logsumexp with empty shards {one}", lambda: within(
        rd.logsumexp(lt, 0), d["tiny"].double().logsumexp(0), lse_bound([d["tiny"]], [0], torch.float32, device, d["tiny"].double().logsumexp(0)) * 2, "lse"))


def exact_checks(c, world, rank, device, d):
    for key in ("f32", "f64", "f16", "bf16", "tiny"):
        x = d[key]
        for sd in (0, 1):
            sizes = splits(x.shape[sd], world, ("exact", key, sd), empty=sd == 0 or x.shape[sd] < world)
            loc = shard_of(x, sizes, rank, sd)
            for dim, kd in ((None, False), (sd, False), (sd, True), ((0, 1), True)):
                c.run("exact", f"{key} shard_dim={sd} sizes={sizes} dim={dim} keepdim={kd}", lambda: bits(
                    rd.sum(loc, dim, kd, method="exact", shard_dim=sd), reducekit.sum(x, dim, kd, method="exact"), "exact"))
        if key == "f16":
            sizes = splits(x.shape[0], world, ("exact16",))
            loc = shard_of(x, sizes, rank)
            c.run("exact", f"f16 dtype=float32 sizes={sizes}", lambda: bits(
                rd.sum(loc, 0, dtype=torch.float32, method="exact"), reducekit.sum(x, 0, dtype=torch.float32, method="exact"), "exact"))
    # special values: an infinity on one rank and NaN on another
    x = d["f32"].clone()
    x[1, 2] = math.inf
    x[35, 2] = -math.inf
    x[20, 5] = math.nan
    x[3, 7] = 3e38
    x[4, 7] = 3e38
    sizes = splits(x.shape[0], world, "special")
    loc = shard_of(x, sizes, rank)
    c.run("exact", f"inf, -inf, NaN and overflow across ranks sizes={sizes}", lambda: bits(
        rd.sum(loc, 0, method="exact"), reducekit.sum(x, 0, method="exact"), "exact specials"))


# ------------------------------------------------------------------------------------------------
# DTensor


def dparts(x, mesh_shape, placements):
    """The local blocks DTensor gives each rank (torch.chunk along each Shard, empty past the end)."""
    blocks = [x]
    for n, p in zip(mesh_shape, placements):
        if isinstance(p, Shard):
            nxt = []
            for b in blocks:
                ch = list(b.chunk(n, p.dim))
                while len(ch) < n:
                    ch.append(b.narrow(p.dim, 0, 0))
                nxt.extend(ch)
            blocks = nxt
    return blocks


def full(r):
    return r.full_tensor() if isinstance(r, DTensor) else r


def dtensor_checks(c, world, rank, device, d):
    layouts = [((world,), [Shard(0)]), ((world,), [Shard(1)]), ((world,), [Replicate()]), ((1, world), [Replicate(), Shard(0)])]
    if world == 4:
        layouts += [((2, 2), [Shard(0), Shard(1)]), ((2, 2), [Shard(0), Shard(0)]), ((2, 2), [Shard(1), Shard(0)])]
    else:
        layouts += [((world, 1), [Shard(0), Shard(1)])]
    meshes = {}
    for shape, pl in layouts:
        if shape not in meshes:
            meshes[shape] = init_device_mesh(torch.device(device).type, shape)
        mesh = meshes[shape]
        tag = f"mesh {shape} {pl}"
        for key in ("f32", "tiny"):
            x = d[key]
            dt = distribute_tensor(x, mesh, pl)
            for dims in ([0], [1], [0, 1]):
                dim_arg = dims[0] if len(dims) == 1 else None
                sharded = any(isinstance(p, Shard) and p.dim in dims for p in pl)
                parts = dparts(x, shape, [p if isinstance(p, Shard) and p.dim in dims else Replicate() for p in pl])
                t = f"{key} {tag} dim={dim_arg}"
                ref = exact_ref(x, dims)

                def check_float(name, got, want, bound_fn):
                    if not sharded:  # no combine: each output's bits depend on its own slice only
                        return bits(full(got), want, name)
                    return within(full(got), *bound_fn(), name)

                c.run("dtensor", f"sum {t}", lambda: check_float(
                    "sum", reducekit.sum(dt, dim_arg), reducekit.sum(x, dim_arg), lambda: (ref, sum_bound(parts, dims, x.dtype, device))))
                c.run("dtensor", f"exact {t}", lambda: bits(
                    full(reducekit.sum(dt, dim_arg, method="exact")), reducekit.sum(x, dim_arg, method="exact"), "exact"))
                c.run("dtensor", f"mean {t}", lambda: check_float(
                    "mean", reducekit.mean(dt, dim_arg), reducekit.mean(x, dim_arg),
                    lambda: (ref / count(x, dims), mean_bound(parts, dims, x.dtype, device, ref / count(x, dims)))))
                nref = x.double().pow(2).sum(dims).sqrt()
                c.run("dtensor", f"vector_norm(2) {t}", lambda: check_float(
                    "norm2", reducekit.linalg.vector_norm(dt, 2, dim_arg), reducekit.linalg.vector_norm(x, 2, dim_arg),
                    lambda: (nref, norm2_bound(parts, dims, x.dtype, device, nref,
                                               builtins_sum(isinstance(p, Shard) and p.dim in dims for p in pl)))))
                for o in (0, math.inf):
                    c.run("dtensor", f"vector_norm({o}) {t}", lambda o=o: bits(
                        full(reducekit.linalg.vector_norm(dt, o, dim_arg)), reducekit.linalg.vector_norm(x, o, dim_arg), f"norm{o}"))
                lref = x.double().logsumexp(dims)
                c.run("dtensor", f"logsumexp {t}", lambda: check_float(
                    "logsumexp", reducekit.logsumexp(dt, dims), reducekit.logsumexp(x, dims),
                    lambda: (lref, lse_bound(parts, dims, x.dtype, device, lref))))

                def vm():
                    v, m = reducekit.var_mean(dt, dim_arg)
                    if not sharded:
                        rv, rm = reducekit.var_mean(x, dim_arg)
                        ok1, d1 = bits(full(v), rv, "var")
                        ok2, d2 = bits(full(m), rm, "mean")
                    else:
                        rv, rm, bv, bm = var_mean_bounds(parts, dims, x.dtype, device, 1)
                        ok1, d1 = within(full(v), rv, bv, "var")
                        ok2, d2 = within(full(m), rm, bm, "mean")
                    return ok1 and ok2, d1 + "; " + d2
                c.run("dtensor", f"var_mean {t}", vm)
                c.run("dtensor", f"amax {t}", lambda: bits(full(reducekit.amax(dt, dims)), reducekit.amax(x, dims), "amax"))
                c.run("dtensor", f"amin {t}", lambda: bits(full(reducekit.amin(dt, dims)), reducekit.amin(x, dims), "amin"))
                c.run("dtensor", f"argmax {t}", lambda: bits(full(reducekit.argmax(dt, dim_arg)), reducekit.argmax(x, dim_arg), "argmax"))
        xi = d["i32"]
        dti = distribute_tensor(xi, mesh, pl)
        for dim in (None, 0, 1):
            c.run("dtensor", f"count_nonzero int32 {tag} dim={dim}", lambda: bits(
                full(reducekit.count_nonzero(dti, dim)), reducekit.count_nonzero(xi, dim), "count"))
            c.run("dtensor", f"argmax int32 ties {tag} dim={dim}", lambda: bits(
                full(reducekit.argmax(dti, dim)), reducekit.argmax(xi, dim), "argmax"))
            c.run("dtensor", f"argmax keepdim {tag} dim={dim}", lambda: bits(
                full(reducekit.argmax(dti, dim, keepdim=True)), reducekit.argmax(xi, dim, keepdim=True), "argmax"))
        dtn = distribute_tensor(d["nan"], mesh, pl)
        c.run("dtensor", f"argmax first NaN {tag}", lambda: bits(full(reducekit.argmax(dtn, 0)), reducekit.argmax(d["nan"], 0), "argmax nan"))
    # placements of the results: Partial with the op's own collective, Replicate after an eager combine
    mesh = meshes[(world,)]
    dt = distribute_tensor(d["f32"], mesh, [Shard(0)])

    def placements():
        got = {
            "sum": reducekit.sum(dt, 0).placements, "amax": reducekit.amax(dt, 0).placements,
            "amin": reducekit.amin(dt, 0).placements, "count_nonzero": reducekit.count_nonzero(dt, 0).placements,
            "sum over dim 1": reducekit.sum(dt, 1).placements, "exact": reducekit.sum(dt, 0, method="exact").placements,
            "var_mean": reducekit.var_mean(dt, 0)[0].placements, "logsumexp": reducekit.logsumexp(dt, 0).placements,
            "argmax": reducekit.argmax(dt, 0).placements, "exact_partial": reducekit.exact_partial(dt, 0).placements,
        }
        want = {"sum": (Partial("sum"),), "amax": (Partial("max"),), "amin": (Partial("min"),),
                "count_nonzero": (Partial("sum"),), "sum over dim 1": (Shard(0),), "exact": (Replicate(),),
                "var_mean": (Replicate(),), "logsumexp": (Replicate(),), "argmax": (Replicate(),),
                "exact_partial": (Partial("sum"),)}
        bad = {k: (got[k], want[k]) for k in want if tuple(got[k]) != want[k]}
        return not bad, f"placements (got, want): {bad}" if bad else "placements as torch's"
    c.run("dtensor", "result placements", placements)

    def words():  # exact_partial / exact_round on DTensors: DTensor's own Partial(sum) and redistribution
        w = reducekit.exact_partial(dt, 0)
        r = reducekit.exact_round(w, torch.float32)
        return bits(full(r), reducekit.sum(d["f32"], 0, method="exact"), "exact_round(exact_partial(dt))")
    c.run("dtensor", "exact_partial -> exact_round through DTensor's strategies", words)

    def partial_input():  # a Partial(sum) input is resolved to Replicate before reducing
        base = (d["f32"] * 8).round()  # small integers: the pending sum is exact in any order
        piece = base * (rank + 1)
        whole = base * (world * (world + 1) // 2)
        p = DTensor.from_local(piece, mesh, [Partial("sum")], run_check=False)
        return bits(full(reducekit.amax(p, 0)), reducekit.amax(whole, 0), "amax of Partial input")
    c.run("dtensor", "Partial(sum) input", partial_input)

    def strategies_alone():
        """The registered sharding strategies without the eager handler (what sharding propagation
        alone does): linear ops give their Partial, the others gather the reduced dim first; every
        result is single-process reducekit's (bitwise: no float partial is added here)."""
        rk = torch.ops.reducekit
        handlers = DTensor._op_dispatcher._custom_op_handlers
        saved = {op: handlers.pop(op) for op in (rk.sum.default, rk.reduce.default)}
        try:
            x = d["f32"]
            got = {"amax": reducekit.amax(dt, 0), "var_mean": reducekit.var_mean(dt, 0)[0], "logsumexp": reducekit.logsumexp(dt, 0),
                   "argmax": reducekit.argmax(dt, 0), "exact": reducekit.sum(dt, 0, method="exact"), "mean": reducekit.mean(dt, 0)}
            want = {"amax": reducekit.amax(x, 0), "var_mean": reducekit.var_mean(x, 0)[0], "logsumexp": reducekit.logsumexp(x, 0),
                    "argmax": reducekit.argmax(x, 0), "exact": reducekit.sum(x, 0, method="exact"), "mean": reducekit.mean(x, 0)}
            pl = {k: v.placements for k, v in got.items()}
            bad = [k for k in got if not same_bits(full(got[k]), want[k])]
            ok = not bad and pl["amax"] == (Partial("max"),) and all(pl[k] == (Replicate(),) for k in got if k != "amax")
            return ok, f"differ: {bad}; placements {pl}"
        finally:
            handlers.update(saved)
    c.run("dtensor", "sharding strategies alone (no handler)", strategies_alone)


# ------------------------------------------------------------------------------------------------
# errors, and the world-size table


def raises(fn, *needles):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        msg = str(e)
        missing = [n for n in needles if n not in msg]
        return not missing, f"{type(e).__name__}: {msg[:400]} (missing {missing})" if missing else msg[:300]
    return False, "no error raised"


def plain_ops(loc):
    """Every op of the plain API as (name, call) over dim 0 of a shard split along dim 0."""
    return [("sum", lambda: rd.sum(loc, 0)), ("sum exact", lambda: rd.sum(loc, 0, method="exact")),
            ("mean", lambda: rd.mean(loc, 0)), ("amax", lambda: rd.amax(loc, 0)), ("amin", lambda: rd.amin(loc, 0)),
            ("count_nonzero", lambda: rd.count_nonzero(loc, 0)), ("vector_norm(2)", lambda: rd.vector_norm(loc, 2, 0)),
            ("vector_norm(0)", lambda: rd.vector_norm(loc, 0, 0)), ("vector_norm(inf)", lambda: rd.vector_norm(loc, math.inf, 0)),
            ("var_mean", lambda: rd.var_mean(loc, 0)), ("logsumexp", lambda: rd.logsumexp(loc, 0)),
            ("argmax", lambda: rd.argmax(loc, 0)), ("argmax dim=None", lambda: rd.argmax(loc))]


class Collectives:
    """Counts the collectives that reducekit.distributed makes while it is active."""

    def __enter__(self):
        self.n, self.saved = 0, (dist.all_reduce, rd._gather_single)

        def count(f):
            def g(*a, **k):
                self.n += 1
                return f(*a, **k)
            return g
        dist.all_reduce, rd._gather_single = count(dist.all_reduce), count(rd._gather_single)
        return self

    def __exit__(self, *exc):
        dist.all_reduce, rd._gather_single = self.saved


def collective_checks(c, world, rank, device, d):
    """One collective per call of the plain API whenever the partial fits rd.SLOT_WORDS words with
    its header (a full sum, a norm, a few hundred outputs); two above that (the check, then the
    rest), never more; and the same result as a call made without counting."""
    x = d["f32"]
    for cols in (13, 600):
        big = torch.cat([x] * (cols // 13 + 1), 1)[:, :cols]
        loc = shard_of(big, splits(big.shape[0], world, ("coll", cols)), rank)
        for name, fn in plain_ops(loc):
            def check(fn=fn, name=name, cols=cols):
                ref = fn()
                with Collectives() as k:
                    got = fn()
                # exact: 74 words per output; argmax dim=None: one output
                want = 1 if (cols == 13 and name != "sum exact") or name == "argmax dim=None" else 2
                pairs = zip(got, ref) if isinstance(got, tuple) else [(got, ref)]
                same = all(bits(g, r, name)[0] for g, r in pairs)
                return k.n == want and same, f"{name} over {cols} outputs: {k.n} collectives (expected {want}); same result {same}"
            c.run("collectives", f"{name}, {cols} outputs", check)
    full = shard_of(x, splits(x.shape[0], world, "coll-full"), rank)
    for name, fn in (("sum", lambda: rd.sum(full)), ("sum exact", lambda: rd.sum(full, method="exact")),
                     ("mean", lambda: rd.mean(full)), ("vector_norm", lambda: rd.vector_norm(full)),
                     ("amax", lambda: rd.amax(full)), ("argmax", lambda: rd.argmax(full)),
                     ("var_mean", lambda: rd.var_mean(full)), ("logsumexp", lambda: rd.logsumexp(full, (0, 1)))):
        def check(fn=fn, name=name):
            with Collectives() as k:
                fn()
            return k.n == 1, f"full {name}: {k.n} collectives (expected 1)"
        c.run("collectives", f"full {name}: one collective", check)


def error_checks(c, world, rank, device, d):
    x = d["f32"]
    bad = torch.zeros(4, 13 + (rank == world - 1), device=device) if world > 1 else torch.zeros(4, 13, device=device)
    if world > 1:
        c.run("errors", "mismatched shapes across ranks", lambda: raises(
            lambda: rd.sum(bad), "differ across ranks", f"rank {world - 1} has [4, 14]", "shard_dim"))
        c.run("errors", "mismatched shapes across ranks (exact)", lambda: raises(
            lambda: rd.sum(bad, method="exact"), "differ across ranks"))
        c.run("errors", "mismatched ndim across ranks", lambda: raises(
            lambda: rd.amax(torch.zeros((2, 13) if rank else (2, 13, 1), device=device)), "differ across ranks"))
        # every op, kept extents that differ on the last rank: outputs that fit the call's one
        # collective and outputs that need a second (sizes that differ there would abort the process)
        for cols in (13, 600):
            odd = torch.ones(3, cols + (rank == world - 1), device=device)
            for name, fn in plain_ops(odd):
                c.run("errors", f"{name}: kept extent {cols} differs on rank {world - 1}", lambda fn=fn: raises(
                    fn, "differ across ranks", f"rank {world - 1} has [3, {cols + 1}]"))
        y = torch.ones(3, 5, device=device)
        c.run("errors", "keepdim differs across ranks", lambda: raises(
            lambda: rd.sum(y, 0, keepdim=rank == 0), "the call differs across ranks", "same arguments on every rank"))
        c.run("errors", "shard dtypes differ across ranks", lambda: raises(
            lambda: rd.mean(y.double() if rank == 0 else y, 0), "the call differs across ranks"))
        c.run("errors", "method differs across ranks", lambda: raises(
            lambda: rd.sum(y, 0, method="exact" if rank == 0 else "auto"), "the call differs across ranks"))
        xi = d["i32"]
        li = shard_of(xi, splits(xi.shape[0], world, "after"), rank)
        c.run("errors", "the group still works after the errors", lambda: bits(rd.sum(li, 0), reducekit.sum(xi, 0), "sum"))
    c.run("errors", "shard_dim not reduced", lambda: raises(lambda: rd.sum(x, 1), "does not reduce shard_dim=0", "reducekit.sum"))
    c.run("errors", "every shard empty", lambda: raises(lambda: rd.amax(x[:0]), "non-zero size", "every rank's shard is empty"))
    from torch.distributed.tensor.placement_types import _StridedShard
    mesh = init_device_mesh(torch.device(device).type, (world,))
    st = DTensor.from_local(x[:4], mesh, [_StridedShard(0, split_factor=2)], run_check=False)
    c.run("errors", "unsupported placement (_StridedShard)", lambda: raises(
        lambda: reducekit.sum(st, 0), "_StridedShard", "not supported", "redistribute"))
    c.run("errors", "unsupported placement (_StridedShard), var_mean", lambda: raises(
        lambda: reducekit.var_mean(st, 0), "_StridedShard", "not supported"))
    c.run("errors", "unsupported op over a sharded dim", lambda: raises(
        lambda: reducekit.prod(distribute_tensor(x, mesh, [Shard(0)]), 0), "reducekit.prod", "not supported", "Replicate()")
        if world > 1 else (True, "one rank: nothing sharded"))


def table(device, world, rank):
    x = spread(device)
    mesh = init_device_mesh(torch.device(device).type, (world,))
    dt = distribute_tensor(x, mesh, [Shard(0)])
    loc = dt.to_local()
    torch_sum = torch.sum(dt).full_tensor()
    ours_auto = reducekit.sum(dt).full_tensor()
    ours_exact = reducekit.sum(dt, method="exact").full_tensor()
    plain_exact = rd.sum(loc, method="exact")
    one = reducekit.sum(x, method="exact")

    def row(t):
        return {"value": t.item(), "hex": hex(t.view(torch.int32).item() & 0xFFFFFFFF)}
    return {"torch": row(torch_sum), "auto": row(ours_auto), "exact": row(ours_exact), "plain_exact": row(plain_exact),
            "single_exact": row(one), "fsum": math.fsum(x.double().reshape(-1).tolist()), "headroom": rd.exact_headroom(world)}


def main():
    rank, world, init_file, out_dir, device = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    backend = "nccl" if device == "cuda" else "gloo"
    if device == "cuda":
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, init_method=f"file://{init_file}", rank=rank, world_size=world,
                            timeout=timedelta(seconds=60))
    c = Checks()
    d = data(device)
    only = os.environ.get("REDUCEKIT_DIST_ONLY")  # fault campaigns: one group
    for name, fn in (("plain", plain_checks), ("exact", exact_checks), ("dtensor", dtensor_checks), ("errors", error_checks),
                     ("collectives", collective_checks)):
        if only and name != only:
            continue
        try:
            fn(c, world, rank, device, d)
        except Exception as e:  # noqa: BLE001
            c.rows.append({"group": name, "name": "setup", "ok": False, "detail": f"{e}\n{traceback.format_exc(limit=6)}"})
    tab = None
    if not only:
        try:
            tab = table(device, world, rank)
        except Exception as e:  # noqa: BLE001
            c.rows.append({"group": "table", "name": "table", "ok": False, "detail": f"{e}\n{traceback.format_exc(limit=6)}"})
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump({"rows": c.rows, "table": tab}, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
