# torch_more_ops.py — bench/more_ops.lua's workloads in PyTorch, one thread:
# "name ms" medians of 7 runs of 20 calls (gather_nd as advanced indexing).
import time
import torch

torch.set_num_threads(1)
RUNS, ITERS = 7, 20


def median_ms(fn):
    for _ in range(3):
        fn()
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        for _ in range(ITERS):
            fn()
        times.append((time.perf_counter() - t0) / ITERS * 1e3)
    return sorted(times)[RUNS // 2]


g = torch.Generator().manual_seed(0)
a = torch.randn(32, 64, 64, generator=g)
b = torch.randn(32, 64, 64, generator=g)
x = torch.randn(256, 1024, generator=g)
p = torch.empty(256, 1024).uniform_(0.99, 1.01, generator=g)
ix = torch.randint(0, 255, (4096, 2), generator=g)
rows = [
    ("einsum_bmm", lambda: torch.einsum("bij,bjk->bik", a, b)),
    ("matmul_bmm", lambda: torch.matmul(a, b)),
    ("einsum_bji", lambda: torch.einsum("bij,bkj->bik", a, b)),
    ("top_k", lambda: torch.topk(x, 10)),
    ("sort", lambda: torch.sort(x, stable=True)),
    ("argsort", lambda: torch.argsort(x, stable=True)),
    ("cumprod", lambda: torch.cumprod(p, 1)),
    ("gather_nd", lambda: x[ix[:, 0], ix[:, 1]]),
]
with torch.no_grad():
    for name, fn in rows:
        print("%s %.4f" % (name, median_ms(fn)))
