#!/usr/bin/python3
"""Data and expected numbers for test_tf_fused_batchnorm.lua, the port of TensorFlow's
tensorflow/python/ops/nn_fused_batchnorm_test.py. Run from the repository root:
    /usr/bin/python3 tests/lua/ports/gen_fused_batchnorm_expected.py \\
        > tests/lua/ports/fused_batchnorm_expected.lua

The inputs are the test's: np.random.seed(1), then random_sample for x, scale, offset
(and for inference mean, variance; for the gradient tests the upstream gradient, drawn
last), in the test's order, as float32. The expected values are the test's own
references in numpy, float64 on those float32 inputs: _training_ref (tf.nn.moments, then
x * inv + (offset - mean * inv) with inv = rsqrt(var + eps) * scale; the returned
variance times n / max(n - 1, 1), Bessel's correction, as the test applies it) and
_inference_ref (the same with the given mean and variance). The gradient tests check
TensorFlow's gradient against numerical differences (gradient_checker); here the
gradient of sum(y * dy) is compared with the training-mode formula of batch norm's
backward pass (Ioffe & Szegedy 2015, section 3):
    dx = scale * inv_std / n * (n dy - sum(dy) - xhat sum(dy xhat)),
    dscale = sum(dy xhat), doffset = sum(dy),
and in inference mode dx = dy * scale * rsqrt(var + eps). _test_grad_grad's second
derivatives (there Jacobians by gradient_checker) are the gradients of sum(dx * w), w drawn
after the test's inputs, for dy, x and scale: central differences (h = 1e-6, float64) of
the backward formula above."""
import numpy as np

EPS = 0.001

def lua(a):
    flat = np.asarray(a, dtype=np.float64).ravel()
    items = ["0/0" if v != v else "%.9g" % v for v in flat]   # NaN as Lua writes it
    lines, line = [], "    "
    for x in items:
        if len(line) + len(x) + 2 > 100:
            lines.append(line.rstrip())
            line = "    "
        line += x + ", "
    lines.append(line.rstrip())
    return "{\n" + "\n".join(lines) + "\n  }"

def batch_norm(x, mean, var, offset, scale):
    inv = 1 / np.sqrt(var + EPS) * scale
    return x * inv + (offset - mean * inv)

def emit(name, fields):
    print("  %s = {" % name)
    for k, v in fields:
        if isinstance(v, (list, tuple)) and all(isinstance(e, int) for e in v):
            print("    %s = {%s}," % (k, ", ".join(str(e) for e in v)))
        else:
            print("    %s = %s," % (k, lua(v).replace("\n", "\n  ")))
    print("  },")

def training(name, x_shape, c):
    np.random.seed(1)
    x = np.random.random_sample(x_shape).astype(np.float32)
    scale = np.random.random_sample([c]).astype(np.float32)
    offset = np.random.random_sample([c]).astype(np.float32)
    xd = x.astype(np.float64)
    n = x.size // c
    if n > 0:
        mean = xd.reshape(-1, c).mean(axis=0)
        var = ((xd.reshape(-1, c) - mean) ** 2).mean(axis=0)
    else:
        mean = var = np.full([c], np.nan)
    y = batch_norm(xd, mean, var, offset, scale)
    var_corrected = var * n / max(n - 1.0, 1.0) if n > 0 else var
    emit(name, [("shape", list(x_shape)), ("x", x), ("scale", scale), ("offset", offset),
                ("y", y), ("mean", mean), ("var", var_corrected)])

def inference(name, x_shape, c):
    np.random.seed(1)
    x = np.random.random_sample(x_shape).astype(np.float32)
    scale = np.random.random_sample([c]).astype(np.float32)
    offset = np.random.random_sample([c]).astype(np.float32)
    mean = np.random.random_sample([c]).astype(np.float32)
    var = np.random.random_sample([c]).astype(np.float32)
    y = batch_norm(x.astype(np.float64), mean, var, offset, scale)
    emit(name, [("shape", list(x_shape)), ("x", x), ("scale", scale), ("offset", offset),
                ("mean", mean), ("var", var), ("y", y)])

def gradient(name, x_shape, c, is_training):
    np.random.seed(1)
    x = np.random.random_sample(x_shape).astype(np.float32)
    scale = np.random.random_sample([c]).astype(np.float32)
    offset = np.random.random_sample([c]).astype(np.float32)
    fields = [("shape", list(x_shape)), ("x", x), ("scale", scale), ("offset", offset)]
    if not is_training:
        pop_mean = np.random.random_sample([c]).astype(np.float32)
        pop_var = np.random.random_sample([c]).astype(np.float32)
        fields += [("mean", pop_mean), ("var", pop_var)]
    dy = np.random.random_sample(x_shape).astype(np.float32)
    xd, dyd, sd = x.astype(np.float64).reshape(-1, c), dy.astype(np.float64).reshape(-1, c), \
        scale.astype(np.float64)
    n = xd.shape[0]
    if is_training and n > 0:
        mean = xd.mean(axis=0)
        inv_std = 1 / np.sqrt(((xd - mean) ** 2).mean(axis=0) + EPS)
        xhat = (xd - mean) * inv_std
        dx = sd * inv_std / n * (n * dyd - dyd.sum(axis=0) - xhat * (dyd * xhat).sum(axis=0))
    elif n > 0:
        inv_std = 1 / np.sqrt(pop_var.astype(np.float64) + EPS)
        xhat = (xd - pop_mean) * inv_std
        dx = dyd * sd * inv_std
    else:
        xhat = xd
        dx = dyd
    fields += [("dy", dy), ("dx", dx), ("dscale", (dyd * xhat).sum(axis=0)),
               ("doffset", dyd.sum(axis=0))]
    emit(name, fields)

def backward(dy, x, scale, is_training, pop_mean=None, pop_var=None):
    c = x.shape[-1]
    xd, dyd = x.reshape(-1, c), dy.reshape(-1, c)
    n = xd.shape[0]
    if is_training:
        mean = xd.mean(axis=0)
        inv_std = 1 / np.sqrt(((xd - mean) ** 2).mean(axis=0) + EPS)
        xhat = (xd - mean) * inv_std
        dx = scale * inv_std / n * (n * dyd - dyd.sum(axis=0) - xhat * (dyd * xhat).sum(axis=0))
    else:
        dx = dyd * scale / np.sqrt(pop_var + EPS)
    return dx.reshape(x.shape)

def grad_grad(name, x_shape, is_training):
    c = x_shape[3]
    np.random.seed(1)
    x = np.random.random_sample(x_shape).astype(np.float32)
    grad_y = np.random.random_sample(x_shape).astype(np.float32)
    scale = np.random.random_sample([c]).astype(np.float32)
    offset = np.random.random_sample([c]).astype(np.float32)
    fields = [("shape", list(x_shape)), ("x", x), ("dy", grad_y), ("scale", scale),
              ("offset", offset)]
    pop_mean = pop_var = None
    if not is_training:
        pop_mean = np.random.random_sample([c]).astype(np.float32).astype(np.float64)
        pop_var = np.random.random_sample([c]).astype(np.float32).astype(np.float64)
        fields += [("mean", pop_mean), ("var", pop_var)]
    w = np.random.random_sample(x_shape).astype(np.float32)
    args = [grad_y.astype(np.float64), x.astype(np.float64), scale.astype(np.float64)]
    def loss(a):
        return (backward(a[0], a[1], a[2], is_training, pop_mean, pop_var) * w).sum()
    grads = []
    for i in range(3):
        d = np.zeros_like(args[i])
        for idx in np.ndindex(args[i].shape):
            a = [t.copy() for t in args]
            a[i][idx] += 1e-6
            lp = loss(a)
            a[i][idx] -= 2e-6
            d[idx] = (lp - loss(a)) / 2e-6
        grads.append(d)
    fields += [("w", w), ("ddy", grads[0]), ("ddx", grads[1]), ("dscale", grads[2])]
    emit(name, fields)

print("-- generated by tests/lua/ports/gen_fused_batchnorm_expected.py (numpy %s); do not edit"
      % np.__version__)
print("return {")
training("training1", [1, 1, 6, 1], 1)
training("training2", [1, 1, 6, 2], 2)
training("training5", [0, 131, 127, 6], 6)
inference("inference1", [1, 1, 6, 1], 1)
inference("inference5", [0, 131, 127, 6], 6)
for is_training in (True, False):
    mode = "training" if is_training else "inference"
    gradient("grad1_" + mode, [1, 1, 6, 1], 1, is_training)
    gradient("grad2_" + mode, [1, 1, 6, 2], 2, is_training)
    gradient("grad4_" + mode, [5, 7, 11, 4], 4, is_training)
    gradient("grad5_" + mode, [0, 7, 11, 4], 4, is_training)
    grad_grad("gradgrad1_" + mode, [2, 3, 4, 5], is_training)
    grad_grad("gradgrad2_" + mode, [2, 3, 2, 2], is_training)
print("}")
