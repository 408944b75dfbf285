# elementwise_peer.py THREADS [ROW...] — bench/elementwise.lua's rows in
# PyTorch and NumPy: "name n torch_ms numpy_ms" lines ("-" where a library
# has no such function), medians of 7 runs, each run long enough to time.
# NumPy's elementwise functions run on one thread whatever THREADS is.
# To add a row: one entry in ROWS (the same name as in bench/elementwise.lua).
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
torch.set_num_threads(threads)
RUNS = 7
SIZES = [4096, 131072, 4194304]


def median_ms(fn):
    t0, iters = time.perf_counter(), 0
    while True:
        fn()
        iters += 1
        if time.perf_counter() - t0 > 2e-3 or iters >= 1000:
            break
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        times.append((time.perf_counter() - t0) / iters * 1e3)
    return sorted(times)[RUNS // 2]


def inp(n, lo, hi, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.empty(n).uniform_(lo, hi, generator=g)


def unary(tf, nf=None, lo=-4, hi=4):
    def make(n):
        x = inp(n, lo, hi)
        return (lambda: tf(x)), (nf and (lambda xn=x.numpy(): nf(xn)))
    return make


def binary(tf, nf=None):
    def make(n):
        a, b = inp(n, -4, 4, 1), inp(n, 0.5, 4, 2)
        an, bn = a.numpy(), b.numpy()
        return (lambda: tf(a, b)), (nf and (lambda: nf(an, bn)))
    return make


def binary_row(tf, nf=None):
    def make(n):
        a, b = inp(n, -4, 4, 1).reshape(n // 256, 256), inp(256, 0.5, 4, 2)
        an, bn = a.numpy(), b.numpy()
        return (lambda: tf(a, b)), (nf and (lambda: nf(an, bn)))
    return make


def gradient(tf, lo=-4, hi=4):
    def make(n):
        x = inp(n, lo, hi).requires_grad_()

        def run():
            with torch.enable_grad():
                return torch.autograd.grad(tf(x).sum(), x)
        return run, None
    return make


REDUCE_SIZES = [131072, 4194304]


def reduction(tf, nf, axes):
    def make(n):
        x = inp(n, -4, 4).reshape(n // 16384, 64, 256)
        xn = x.numpy()
        return (lambda: tf(x, axes)), (lambda: nf(xn, axes))
    return make


def rows(tf):
    def make(n):
        x = inp(n, -4, 4).reshape(n // 256, 256)
        return (lambda: tf(x)), None
    return make


def rows_gradient(tf):
    def make(n):
        x = inp(n, -4, 4).reshape(n // 256, 256).requires_grad_()
        w = inp(n, -1, 1, 2).reshape(n // 256, 256)

        def run():
            with torch.enable_grad():
                return torch.autograd.grad((tf(x) * w).sum(), x)
        return run, None
    return make


def tape_add():
    def make(n):
        a, b = torch.full((1,), 1.5, requires_grad=True), torch.full((1,), 2.5)

        def run():
            with torch.enable_grad():
                for _ in range(100):
                    a + b
        return run, None
    return make


def t_sum(x, axes):
    return x.sum() if axes is None else x.sum(axes)


def n_sum(x, axes):
    return x.sum(axes)


ROWS = [
    ("exp", unary(torch.exp, np.exp)),
    ("expm1", unary(torch.expm1, np.expm1)),
    ("log", unary(torch.log, np.log, 0.01, 100)),
    ("log1p", unary(torch.log1p, np.log1p, 0, 100)),
    ("tanh", unary(torch.tanh, np.tanh)),
    ("sigmoid", unary(torch.sigmoid)),
    ("softplus", unary(F.softplus)),
    ("erf", unary(torch.erf)),
    ("gelu", unary(F.gelu)),
    ("gelu_tanh", unary(lambda x: F.gelu(x, approximate="tanh"))),
    ("silu", unary(F.silu)),
    ("sin", unary(torch.sin, np.sin)),
    ("cos", unary(torch.cos, np.cos)),
    ("tan", unary(torch.tan, np.tan, -1.5, 1.5)),
    ("atan", unary(torch.atan, np.arctan)),
    ("asinh", unary(torch.asinh, np.arcsinh)),
    ("atanh", unary(torch.atanh, np.arctanh, -0.99, 0.99)),
    ("pow", binary(lambda a, b: torch.pow(a.abs(), b), lambda a, b: np.power(np.abs(a), b))),
    ("pow_scalar", unary(lambda x: torch.pow(x, 1.5), lambda x: np.power(x, np.float32(1.5)),
                         0, 4)),
    ("sqrt", unary(torch.sqrt, np.sqrt, 0, 100)),
    ("rsqrt", unary(torch.rsqrt, None, 0.01, 100)),
    ("reciprocal", unary(torch.reciprocal, np.reciprocal, 0.5, 4)),
    ("square", unary(torch.square, np.square)),
    ("abs", unary(torch.abs, np.abs)),
    ("sign", unary(torch.sign, np.sign)),
    ("floor", unary(torch.floor, np.floor)),
    ("ceil", unary(torch.ceil, np.ceil)),
    ("round", unary(torch.round, np.round)),
    ("add", binary(torch.add, np.add)),
    ("sub", binary(torch.sub, np.subtract)),
    ("mul", binary(torch.mul, np.multiply)),
    ("div", binary(torch.div, np.divide)),
    ("maximum", binary(torch.maximum, np.maximum)),
    ("minimum", binary(torch.minimum, np.minimum)),
    ("add_row", binary_row(torch.add, np.add)),
    ("mul_row", binary_row(torch.mul, np.multiply)),
    ("mul_scalar", unary(lambda x: x * 1.5, lambda x: x * np.float32(1.5))),
    ("exp_grad", gradient(torch.exp)),
    ("tanh_grad", gradient(torch.tanh)),
    ("sigmoid_grad", gradient(torch.sigmoid)),
    ("erf_grad", gradient(torch.erf)),
    ("gelu_grad", gradient(F.gelu)),
    ("sum_first", reduction(t_sum, n_sum, 0), REDUCE_SIZES),
    ("sum_middle", reduction(t_sum, n_sum, 1), REDUCE_SIZES),
    ("sum_last", reduction(t_sum, n_sum, 2), REDUCE_SIZES),
    ("sum_first2", reduction(t_sum, n_sum, (0, 1)), REDUCE_SIZES),
    ("sum_last2", reduction(t_sum, n_sum, (1, 2)), REDUCE_SIZES),
    ("sum_all", reduction(t_sum, n_sum, None), REDUCE_SIZES),
    ("mean_middle", reduction(lambda x, a: x.mean(a), lambda x, a: x.mean(a), 1),
     REDUCE_SIZES),
    ("max_last", reduction(lambda x, a: x.amax(a), lambda x, a: x.max(a), 2), REDUCE_SIZES),
    ("max_first", reduction(lambda x, a: x.amax(a), lambda x, a: x.max(a), 0), REDUCE_SIZES),
    ("softmax", rows(lambda x: torch.softmax(x, -1)), REDUCE_SIZES),
    ("log_softmax", rows(lambda x: torch.log_softmax(x, -1)), REDUCE_SIZES),
    ("softmax_grad", rows_gradient(lambda x: torch.softmax(x, -1)), REDUCE_SIZES),
    ("layer_norm", rows(lambda x: F.layer_norm(x, (256,))), REDUCE_SIZES),
    ("layer_norm_grad", rows_gradient(lambda x: F.layer_norm(x, (256,))), REDUCE_SIZES),
    ("tape_add_x100", tape_add(), [1]),
]


def fmt(fn):
    return "%.4f" % median_ms(fn) if fn else "-"


only = set(sys.argv[2:])
with torch.no_grad():
    for row in ROWS:
        name, make = row[0], row[1]
        if only and name not in only:
            continue
        for n in (row[2] if len(row) > 2 else SIZES):
            tf, nf = make(n)
            print("%s %d %s %s" % (name, n, fmt(tf), fmt(nf)), flush=True)
