# torch_bench.py — the same workloads as moonflow's bench, in PyTorch:
# eager a + b (1 and 1000 float32 elements) and a 1024^3 matmul.
# Prints "add N us" and "matmul ms" lines (medians of several runs).
import time

import torch

torch.set_num_threads(1)
RUNS = 7


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


for n in (1, 1000):
    a = torch.full((n,), 1.5)
    b = torch.full((n,), 2.5)
    iters = 200000
    times = []
    for _ in range(RUNS):
        t0 = time.process_time()
        for _ in range(iters):
            c = a + b
        times.append((time.process_time() - t0) / iters * 1e6)
    print("add %d %.3f" % (n, median(times)))

a = torch.rand(1024, 1024) - 0.5
b = torch.rand(1024, 1024) - 0.5
times = []
for _ in range(9):
    t0 = time.perf_counter()
    c = a @ b
    times.append(time.perf_counter() - t0)
print("matmul %.3f" % (median(times) * 1e3))
