"""Run one reduction op a few times on the GPU so that Nsight Compute can profile its kernels:

    ncu -k regex:rows_kernel --launch-skip 2 --launch-count 1 --section SpeedOfLight \\
        python3 benchmarks/ncu_ops.py var_mean --n 67108864 --dtype float32 --lpt 2

--lpt forces the operators' rows kernel lanes per thread (0: the rule); --shape R C and --dim
reduce a 2-D tensor instead of a whole 1-D one. op exact_sum is reducekit.sum(method="exact"), and
--family draws the input from one of exact's data families (reducekit/bench/exact_families.py).
"""
import argparse

import torch

import reducekit

p = argparse.ArgumentParser()
p.add_argument("op")
p.add_argument("--n", type=int, default=2**26)
p.add_argument("--shape", type=int, nargs=2, default=None)
p.add_argument("--dim", type=int, default=None)
p.add_argument("--dtype", default="float32")
p.add_argument("--lpt", type=int, default=0)
p.add_argument("--calls", type=int, default=4)
p.add_argument("--family", default=None, help="exact's data family (normal, gradient, wide, ...)")
a = p.parse_args()
shape = tuple(a.shape) if a.shape else (a.n,)
dt = getattr(torch, a.dtype)
if a.family:
    from reducekit.bench.exact_families import family_data
    x = family_data(a.family, torch.Size(shape).numel(), dt, torch.device("cuda")).view(shape)
else:
    x = (torch.randn(shape, device="cuda", dtype=dt) + 3 if dt.is_floating_point
         else torch.randint(-100, 100, shape, device="cuda").to(dt))
reducekit._C._ops_rows_lanes(a.lpt)
if a.op == "exact_sum":
    def fn(v, *d):
        return reducekit.sum(v, *d, method="exact")
else:
    fn = reducekit.linalg.vector_norm if a.op == "vector_norm" else getattr(reducekit, a.op)
for _ in range(a.calls):
    if a.op in ("logsumexp",):
        fn(x, 0 if a.dim is None else a.dim)
    else:
        fn(x, a.dim) if a.dim is not None else fn(x)
torch.cuda.synchronize()
