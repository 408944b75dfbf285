# torch_optimizer.py — the workloads of bench/optimizer.lua in PyTorch: one
# optimizer step (torch.optim, default implementation, 1 thread) on a 1M
# float32 parameter, and c = a + b over 1M floats. Prints "name ms" lines
# (medians of several runs of many steps, wall clock).
import time

import torch

torch.set_num_threads(1)
N = 1000000
RUNS, ITERS = 7, 40


def median_ms(fn):
    for _ in range(3):
        fn()
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        for _ in range(ITERS):
            fn()
        times.append((time.perf_counter() - t0) / ITERS * 1e3)
    times.sort()
    return times[len(times) // 2]


torch.manual_seed(0)
a = torch.rand(N)
b = torch.rand(N)


def add():
    c = a + b


print("add %.4f" % median_ms(add))

g = torch.randn(N) * 1e-3
# TensorFlow 1.x's hyperparameters where PyTorch's defaults differ
makers = [
    ("sgd", lambda p: torch.optim.SGD(p, lr=1e-3)),
    ("momentum", lambda p: torch.optim.SGD(p, lr=1e-3, momentum=0.9)),
    ("adagrad", lambda p: torch.optim.Adagrad(p, lr=1e-3, initial_accumulator_value=0.1)),
    ("rmsprop", lambda p: torch.optim.RMSprop(p, lr=1e-3, alpha=0.9, eps=1e-10)),
    ("adam", lambda p: torch.optim.Adam(p, lr=1e-3)),
]
for name, make in makers:
    w = torch.nn.Parameter(torch.randn(N))
    w.grad = g.clone()
    opt = make([w])
    with torch.no_grad():
        print("%s %.4f" % (name, median_ms(opt.step)))
