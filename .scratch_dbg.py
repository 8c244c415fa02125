import torch, reducekit
dev = "cuda"
torch.manual_seed(0)
def cmp(x, tag):
    g = reducekit.exact_partial(x).cpu(); c = reducekit.exact_partial(x.cpu())
    d = (g != c).nonzero().flatten().tolist()
    print(tag, "OK" if not d else f"DIFF at {d[:5]} gpu={g[25:45].tolist()} cpu={c[25:45].tolist()}", flush=True)
    return not d
for n in [1, 2, 3, 4, 5, 8, 16, 33]:
    e = torch.randint(-140, 120, (n,), device=dev)
    x = (torch.rand(n, device=dev, dtype=torch.float64) * torch.pow(2.0, e.double())).float()
    if not cmp(x, f"n={n}"):
        print(x.cpu().tolist())
cmp(torch.tensor([2.0**100, 1.0, 1.0, 1.0], device=dev), "a")
cmp(torch.tensor([2.0**100, 2.0**-100], device=dev), "b")
cmp(torch.tensor([2.0**-100, 2.0**100], device=dev), "c")
cmp(torch.tensor([2.0**-120], device=dev), "d")
cmp(torch.tensor([2.0**-140], device=dev), "e")
cmp(torch.tensor([3.0 * 2.0**-130], device=dev), "f")
cmp(torch.tensor([2.0**60], device=dev), "g")
cmp(torch.tensor([2.0**100], device=dev, dtype=torch.float64), "h64")
cmp(torch.tensor([2.0**-1000], device=dev, dtype=torch.float64), "i64")
