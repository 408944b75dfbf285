# gen_layer_norm.py — reference values for tests/lua/test_nn.lua's
# mf.nn.layer_norm test: torch.nn.functional.layer_norm over the last axis
# (no weight, no bias) and the gradient of sum(y * w), in float64.
# Run by hand: /usr/bin/python3 tests/lua/data/gen_layer_norm.py
import torch

x = torch.tensor([[1.0, 2.0, 4.0, 7.0], [-3.0, 0.5, 2.0, 10.0]], dtype=torch.float64,
                 requires_grad=True)
w = torch.tensor([[0.5, -1.0, 2.0, 0.25], [1.0, 3.0, -2.0, 0.5]], dtype=torch.float64)
y = torch.nn.functional.layer_norm(x, (4,), eps=1e-5)
(g,) = torch.autograd.grad((y * w).sum(), x)
print("y =", [[float("%.15g" % v) for v in row] for row in y.tolist()])
print("dx =", [[float("%.15g" % v) for v in row] for row in g.tolist()])
