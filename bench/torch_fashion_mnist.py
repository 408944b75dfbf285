"""torch_fashion_mnist.py THREADS [max_images] — PyTorch's side of
bench/fashion_mnist.sh: the same convnet (Conv 32 3x3 relu, MaxPool 2, Conv 64
3x3 relu, MaxPool 2, Flatten, Dropout 0.5, Linear 10; Adam 1e-3, batch 128,
shuffled) for one epoch on Debian's Fashion-MNIST, NCHW (PyTorch's layout).
Prints "load <seconds>" and "epoch torch <seconds>"."""
import gzip
import struct
import sys
import time

import numpy as np
import torch

torch.set_num_threads(int(sys.argv[1]))
limit = int(sys.argv[2]) if len(sys.argv) > 2 else None
d = "/usr/share/datasets/fashion-mnist/"
t0 = time.perf_counter()
with gzip.open(d + "train-images-idx3-ubyte.gz") as f:
    _, n, h, w = struct.unpack(">4I", f.read(16))
    x = np.frombuffer(f.read(), dtype=np.uint8).reshape(n, 1, h, w)
with gzip.open(d + "train-labels-idx1-ubyte.gz") as f:
    f.read(8)
    y = np.frombuffer(f.read(), dtype=np.uint8)
if limit:
    x, y = x[:limit], y[:limit]
x = torch.from_numpy(x.astype(np.float32) / 255)
y = torch.from_numpy(y.astype(np.int64))
print("load %.3f" % (time.perf_counter() - t0))

torch.manual_seed(1)
model = torch.nn.Sequential(
    torch.nn.Conv2d(1, 32, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(32, 64, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Flatten(), torch.nn.Dropout(0.5), torch.nn.Linear(1600, 10))
opt = torch.optim.Adam(model.parameters(), 1e-3)
loss_fn = torch.nn.CrossEntropyLoss()
order = torch.randperm(len(x), generator=torch.Generator().manual_seed(1))
t1 = time.perf_counter()
for i in range(0, len(x), 128):
    idx = order[i:i + 128]
    opt.zero_grad()
    loss = loss_fn(model(x[idx]), y[idx])
    loss.backward()
    opt.step()
print("epoch torch %.3f" % (time.perf_counter() - t1))
