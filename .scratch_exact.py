import torch, reducekit, time, math, statistics
torch.manual_seed(0)
dev = "cuda"
def t_ms(fn, bufs, reps=30):
    # cold-ish: rotate buffers; events per call; median
    for b in bufs[:3]: fn(b)
    torch.cuda.synchronize()
    ts = []
    for i in range(reps):
        b = bufs[i % len(bufs)]
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(b); e.record(); e.synchronize()
        ts.append(s.elapsed_time(e) * 1000)
    return statistics.median(ts)
for dtype in [torch.float32, torch.float64, torch.bfloat16, torch.float16]:
    for lg in [24, 26, 28]:
        n = 1 << lg
        nb = max(2, (256 << 20) // (n * torch.empty((), dtype=dtype).element_size()) + 1)
        bufs = [(torch.randn(n, device=dev) + 1).to(dtype) for _ in range(nb)]
        ta = t_ms(lambda b: reducekit.sum(b), bufs)
        te = t_ms(lambda b: reducekit.sum(b, method="exact"), bufs)
        tt = t_ms(lambda b: torch.sum(b), bufs)
        r = reducekit.sum(bufs[0], method="exact"); rc = reducekit.sum(bufs[0].cpu(), method="exact")
        print(f"{str(dtype):15s} 2^{lg} auto {ta:8.1f} exact {te:8.1f} torch {tt:8.1f} ratio {te/ta:5.2f}  cpu==cuda {torch.equal(r.cpu(), rc)}", flush=True)
        del bufs
# adversarial
n = 1 << 26
e = torch.randint(-140, 120, (n,), device=dev)
x = (torch.randn(n, device=dev, dtype=torch.float64) * torch.pow(2.0, e.double())).float()
bufs = [x, x.flip(0)]
print("wide f32 2^26 exact", t_ms(lambda b: reducekit.sum(b, method="exact"), bufs), "auto", t_ms(lambda b: reducekit.sum(b), bufs), flush=True)
print("cpu==cuda", torch.equal(reducekit.sum(x, method="exact").cpu(), reducekit.sum(x.cpu(), method="exact")))
e = torch.randint(-1070, 1000, (n,), device=dev)
x = torch.randn(n, device=dev, dtype=torch.float64) * torch.pow(2.0, e.double())
bufs = [x, x.flip(0)]
print("wide f64 2^26 exact", t_ms(lambda b: reducekit.sum(b, method="exact"), bufs), "auto", t_ms(lambda b: reducekit.sum(b), bufs), flush=True)
print("cpu==cuda", torch.equal(reducekit.sum(x, method="exact").cpu(), reducekit.sum(x.cpu(), method="exact")))
big = torch.empty(n, device=dev).uniform_(1e6, 1e7)
x = torch.cat([big[: n // 4], -big[: n // 4], torch.rand(n // 2, device=dev)])
x = x[torch.randperm(n, device=dev)]
bufs = [x, x.flip(0)]
print("cancel f32 2^26 exact", t_ms(lambda b: reducekit.sum(b, method="exact"), bufs), flush=True)
x = torch.full((n,), 0.1, device=dev)
print("equal f32 2^26 exact", t_ms(lambda b: reducekit.sum(b, method="exact"), [x, x.clone()]), reducekit.sum(x, method="exact").item(), flush=True)
sub = (torch.randn(n, device=dev) * 1e-40)
print("subnormal f32 2^26 exact", t_ms(lambda b: reducekit.sum(b, method="exact"), [sub, sub.flip(0)]), flush=True)
print("cpu==cuda", torch.equal(reducekit.sum(sub, method="exact").cpu(), reducekit.sum(sub.cpu(), method="exact")))
