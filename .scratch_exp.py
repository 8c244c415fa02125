import torch, reducekit
from reducekit.bench import Buffers, time_cuda_graph
dev = torch.device("cuda")
C = 4 * 60 * 2**20
for dt in [torch.float32, torch.bfloat16, torch.float64]:
    for n in [2**10, 2**16, 2**24]:
        b = Buffers(n, dt, dev, C)
        ta = time_cuda_graph(lambda x: reducekit.sum(x), b)
        te = time_cuda_graph(lambda x: reducekit.sum(x, method="exact"), b)
        print(f"{dt} n=2^{n.bit_length()-1} auto {ta:.2f} exact {te:.2f}", flush=True)
        if n == 2**24:
            for cfg in [(256, 4), (512, 2), (128, 4), (256, 2)]:
                res = []
                for bpr in [0, 132, 264, 1056]:
                    reducekit._C._exact_config(cfg[0], cfg[1], bpr)
                    res.append(f"{bpr}:{time_cuda_graph(lambda x: reducekit.sum(x, method='exact'), b):.1f}")
                reducekit._C._exact_config(0, 0, 0)
                print("   cfg", cfg, " ".join(res), flush=True)
        del b
