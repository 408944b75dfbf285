# torch_tape.py — PyTorch's counterpart of bench/eager_tape.lua (medians):
# the extra cost per op of a 1-element `a + b` with requires_grad (autograd
# recording), and forward + backward of y = ((w*x + b)**2).sum() on
# 1-element tensors. Prints "tape_add US", "tape_add_total US", "tape_fwdbwd US".
import time

import torch

torch.set_num_threads(1)
RUNS = 7


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def time_us(iters, body):
    times = []
    for _ in range(RUNS):
        t0 = time.process_time()
        body(iters)
        times.append((time.process_time() - t0) / iters * 1e6)
    return median(times)


a = torch.full((1,), 1.5)
b = torch.full((1,), 2.5)
ag = torch.full((1,), 1.5, requires_grad=True)


def plain(n):
    for _ in range(n):
        c = a + b


def taped(n):
    for _ in range(n):
        c = ag + b


p = time_us(100000, plain)
t = time_us(100000, taped)
print("tape_add %.3f" % (t - p))
print("tape_add_total %.3f" % t)

w = torch.full((1,), 0.5, requires_grad=True)
x = torch.full((1,), 2.0)
bias = torch.full((1,), 0.1, requires_grad=True)


def fwdbwd(n):
    for _ in range(n):
        y = ((w * x + bias) ** 2).sum()
        gw, gb = torch.autograd.grad(y, (w, bias))


print("tape_fwdbwd %.3f" % time_us(20000, fwdbwd))
