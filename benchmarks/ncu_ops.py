"""Run one reduction op a few times on the GPU so that Nsight Compute can profile its kernels:

    ncu -k regex:rows_kernel --launch-skip 2 --launch-count 1 --section SpeedOfLight \\
        python3 benchmarks/ncu_ops.py var_mean --n 67108864 --dtype float32 --lpt 2

--lpt forces the operators' rows kernel lanes per thread (0: the rule); --shape (any number of
extents) and --dim (one or more) reduce that tensor instead of a whole 1-D one, and --perm lays it
out as the sweep's permuted cases are (benchmarks/sweep.py: made with the permuted extents, then
viewed back, so that memory order is perm's). op exact_sum is reducekit.sum(method="exact"), and
--family draws the input from one of exact's data families (reducekit/bench/exact_families.py).
"""
import argparse

import torch

import reducekit

p = argparse.ArgumentParser()
p.add_argument("op")
p.add_argument("--n", type=int, default=2**26)
p.add_argument("--shape", type=int, nargs="+", default=None)
p.add_argument("--dim", type=int, nargs="+", default=None)
p.add_argument("--perm", type=int, nargs="+", default=None)
p.add_argument("--dtype", default="float32")
p.add_argument("--lpt", type=int, default=0)
p.add_argument("--calls", type=int, default=4)
p.add_argument("--family", default=None, help="exact's data family (normal, gradient, wide, ...)")
p.add_argument("--short-lanes", type=int, default=0, choices=(-1, 0, 1),
               help="a row's short last lane: -1 element loads, 1 a whole lane's vectors, 0 the rule (_rows_short_lanes)")
a = p.parse_args()
shape = tuple(a.shape) if a.shape else (a.n,)
dt = getattr(torch, a.dtype)
if a.family:
    from reducekit.bench.exact_families import family_data
    x = family_data(a.family, torch.Size(shape).numel(), dt, torch.device("cuda")).view(shape)
else:
    made = tuple(shape[i] for i in a.perm) if a.perm else shape
    x = (torch.randn(made, device="cuda", dtype=dt) + 3 if dt.is_floating_point
         else torch.randint(-100, 100, made, device="cuda").to(dt))
    if a.perm:  # logical dim perm[i] is memory dim i
        x = x.permute([a.perm.index(i) for i in range(len(shape))])
        assert tuple(x.shape) == shape
reducekit._C._ops_rows_lanes(a.lpt)
reducekit._C._rows_short_lanes(a.short_lanes)
if a.op == "exact_sum":
    def fn(v, *d):
        return reducekit.sum(v, *d, method="exact")
else:
    fn = reducekit.linalg.vector_norm if a.op == "vector_norm" else getattr(reducekit, a.op)
dim = None if a.dim is None else a.dim[0] if len(a.dim) == 1 else tuple(a.dim)
for _ in range(a.calls):
    if a.op in ("logsumexp",):
        fn(x, 0 if dim is None else dim)
    else:
        fn(x, dim) if dim is not None else fn(x)
torch.cuda.synchronize()
