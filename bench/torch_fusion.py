# torch_fusion.py [THREADS] — PyTorch's side of bench/fusion.lua: the
# GELU-MLP block (Linear 256, exact GELU, Linear 256 on x of shape
# (16, 64, 256), float32), forward and backward of sum(y^2) (gradients for x
# and the weights), wall time per step, median of 7 runs of 10 steps, printed
# as "mlp_torch MS". PyTorch runs it eagerly, as its users do.
import sys
import time

import torch

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
torch.manual_seed(1)
RUNS = 7
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.Linear(256, 256))
x = torch.randn(16, 64, 256, requires_grad=True)


def step():
    model.zero_grad(set_to_none=True)
    x.grad = None
    y = model(x)
    (y * y).sum().backward()


for _ in range(3):
    step()
times = []
for _ in range(RUNS):
    t0 = time.perf_counter()
    for _ in range(10):
        step()
    times.append((time.perf_counter() - t0) * 1e3 / 10)
times.sort()
print("mlp_torch %.3f" % times[len(times) // 2])
