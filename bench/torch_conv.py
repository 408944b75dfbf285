# torch_conv.py THREADS [RUNS] — the passes of bench/conv.lua's four layers in
# PyTorch, with its default backend (oneDNN) and its im2col backend
# (torch.backends.mkldnn.enabled = False: slow_conv2d, im2col + GEMM).
# PyTorch's own layout is NCHW (the arithmetic is the same). Prints
# "torch BACKEND LAYER PASS MS" lines, medians of RUNS timed calls after a
# warm-up. Backprop-input and backprop-filter are aten.convolution_backward
# with one output requested, as autograd calls it.
import sys
import time

import torch
import torch.nn.functional as F

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 9
LAYERS = ["32x28x28x1:3x3x32", "32x28x28x32:3x3x64", "16x56x56x64:3x3x64",
          "8x14x14x256:3x3x256"]
if len(sys.argv) > 3 and sys.argv[3]:
    LAYERS = sys.argv[3].split(",")


def median(f):
    f()
    f()
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        f()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def layer_passes(name):
    shape, filt = name.split(":")[:2]
    n, h, w, c = (int(v) for v in shape.split("x"))
    kh, kw, o = (int(v) for v in filt.split("x"))
    torch.manual_seed(1)
    x = torch.randn(n, c, h, w)
    wt = torch.randn(o, c, kh, kw) * 0.1
    pad = (kh // 2, kw // 2)
    y = F.conv2d(x, wt, padding=pad)
    dy = torch.randn_like(y)

    def back(mask):
        return torch.ops.aten.convolution_backward(dy, x, wt, None, [1, 1], list(pad), [1, 1],
                                                   False, [0, 0], 1, mask)
    return [("forward", lambda: F.conv2d(x, wt, padding=pad)),
            ("backprop_input", lambda: back([True, False, False])),
            ("backprop_filter", lambda: back([False, True, False]))]


with torch.no_grad():
    for backend in ("default", "im2col"):
        torch.backends.mkldnn.enabled = backend == "default"
        for layer in LAYERS:
            for pname, f in layer_passes(layer):
                print("torch %s %s %s %.3f" % (backend, layer, pname, median(f)), flush=True)
