# torch_layers.py THREADS — the workloads of bench/layers.lua in PyTorch:
# one training step (zero_grad, forward, cross-entropy, backward, step) of
#   cnn_bn  Conv32-BN-ReLU-Conv64-BN-ReLU-MaxPool-Linear10, batch 32, 1x28x28, SGD
#   lstm    Embedding(64, 64) - nn.LSTM(64, 128) over 50 steps - Linear 64, batch 32, Adam
#   mlp     Linear 256 - ReLU - Linear 10, batch 64, 784 inputs, SGD
# Prints "layers WORKLOAD torch MS", medians of several timed runs (wall time).
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
torch.manual_seed(1)
RUNS = 7


class LSTMLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(64, 64)
        self.lstm = nn.LSTM(64, 128, batch_first=True)
        self.head = nn.Linear(128, 64)

    def forward(self, ids):
        return self.head(self.lstm(self.emb(ids))[0])


def workload(name):
    if name == "cnn_bn":
        model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                              nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Flatten(), nn.Linear(12544, 10))
        x = torch.rand(32, 1, 28, 28)
        y = torch.tensor([(i * 7) % 10 for i in range(1, 33)])
        return model, x, y, torch.optim.SGD(model.parameters(), lr=0.01), 5
    if name == "lstm":
        model = LSTMLM()
        x = torch.randint(0, 64, (32, 50))
        y = torch.tensor([(i * 7) % 10 for i in range(1, 32 * 50 + 1)])
        return model, x, y, torch.optim.Adam(model.parameters(), lr=0.001), 2
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    x = torch.rand(64, 784)
    y = torch.tensor([(i * 7) % 10 for i in range(1, 65)])
    return model, x, y, torch.optim.SGD(model.parameters(), lr=0.01), 50


def bench(name):
    model, x, y, opt, iters = workload(name)

    def step():
        opt.zero_grad()
        out = model(x)
        F.cross_entropy(out.reshape(-1, out.shape[-1]), y).backward()
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
    print("layers %s torch %.3f" % (name, times[len(times) // 2]))


for w in ("cnn_bn", "lstm", "mlp"):
    bench(w)
