# torch_train_step.py THREADS — the workloads of bench/train_step.lua in
# PyTorch: one training step (zero_grad, forward, cross-entropy, backward,
# SGD step) of the MLP 784-256-10 (batch 64) and of the small CNN (batch 32,
# 28x28x1; PyTorch wants NCHW, the arithmetic is the same). Prints
# "train MODEL torch MS" lines, medians of several timed runs (wall time).
import sys
import time

import torch
import torch.nn.functional as F

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
torch.manual_seed(1)
RUNS = 11


def mlp():
    w1 = torch.nn.Linear(784, 256)
    w2 = torch.nn.Linear(256, 10)
    params = list(w1.parameters()) + list(w2.parameters())
    return (lambda x: w2(F.relu(w1(x)))), params, torch.rand(64, 784), 64


def cnn():
    c1 = torch.nn.Conv2d(1, 32, 3, padding=1)
    c2 = torch.nn.Conv2d(32, 64, 3, padding=1)
    fc = torch.nn.Linear(3136, 10)

    def model(x):
        h = F.max_pool2d(F.relu(c1(x)), 2)
        h = F.max_pool2d(F.relu(c2(h)), 2)
        return fc(h.reshape(x.shape[0], 3136))

    params = [p for m in (c1, c2, fc) for p in m.parameters()]
    return model, params, torch.rand(32, 1, 28, 28), 32


def bench(name, build, iters):
    model, params, x, batch = build()
    y = torch.tensor([(i * 7) % 10 for i in range(1, batch + 1)])
    opt = torch.optim.SGD(params, lr=0.01)

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    for _ in range(iters):
        step()
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        for _ in range(iters):
            step()
        times.append((time.perf_counter() - t0) / iters * 1e3)
    times.sort()
    print("train %s torch %.3f" % (name, times[len(times) // 2]))


bench("mlp", mlp, 100)
bench("cnn", cnn, 5)
