-- activations.lua — the activations of doc/api.md "Ops" in mf.nn:
-- leaky_relu, elu, selu, softsign, relu6. Each is a short composition of
-- mf ops (not a fused kernel), so its gradient, graph mode and mf.trace come
-- from those ops; the formulas are TensorFlow's. gelu and silu are ops of
-- their own (core/ops/activation.c: one pass, one-op gradients). Layers take
-- all of them by name too (Dense(…, {activation = "gelu"})).
local mf, lib = ...
local fail, check_opts = lib.fail, lib.check_opts
local nn = mf.nn

local function tensor_arg(fname, x, extra)
  if extra ~= nil then fail(fname, "takes (x [, {options}]), got a third argument") end
  if not lib.is_tensor(x) then
    if type(x) == "table" or type(x) == "number" then return mf.tensor(x) end
    fail(fname, "expected a tensor, got %s", type(x))
  end
  return x
end

local function no_opts(fname, opts)
  if opts ~= nil then check_opts(fname, opts, {}) end
end

lib.help("nn.leaky_relu", "nn",
  "mf.nn.leaky_relu(x [, {alpha = 0.2}])",
  "max(x, alpha * x) (TensorFlow's default alpha 0.2). " ..
  "Written with mf ops (lib/activations.lua): gradients, graphs and mf.trace come " ..
  "from them; layers take the name as an activation.",
  [[
mf.nn.leaky_relu(mf.tensor{-1, 2})   --> {-0.2, 2}]])
-- leaky_relu(x, {alpha = 0.2}): max(x, alpha x) (alpha <= 1), else where(x > 0, x, alpha x)
function nn.leaky_relu(x, opts, extra)
  x = tensor_arg("leaky_relu", x, extra)
  opts = check_opts("leaky_relu", opts, {alpha = true})
  local alpha = opts.alpha or 0.2
  if type(alpha) ~= "number" then
    fail("leaky_relu", "option 'alpha' must be a number, got %s", type(alpha))
  end
  if alpha <= 1 then return mf.maximum(x, x * alpha) end
  return mf.where(mf.greater(x, 0), x, x * alpha)
end

-- The negative branch expm1(min(x, 0)): no overflow where x is large (its
-- gradient would be inf * 0 there).
local function neg_expm1(x) return mf.expm1(mf.minimum(x, 0)) end

lib.help("nn.elu", "nn",
  "mf.nn.elu(x)",
  "x where x > 0, else exp(x) - 1. " ..
  "Written with mf ops (lib/activations.lua): gradients, graphs and mf.trace come " ..
  "from them; layers take the name as an activation.",
  [[
mf.nn.elu(mf.tensor{0, 2})           --> {0, 2}]])
-- elu(x): x where x > 0, else exp(x) - 1
function nn.elu(x, opts, extra)
  x = tensor_arg("elu", x, extra)
  no_opts("elu", opts)
  return mf.where(mf.greater(x, 0), x, neg_expm1(x))
end

local SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717,
                               1.0507009873554804934193349852946
lib.help("nn.selu", "nn",
  "mf.nn.selu(x)",
  "scale * elu-like with alpha 1.6733 and scale 1.0507 (self-normalizing networks). " ..
  "Written with mf ops (lib/activations.lua): gradients, graphs and mf.trace come " ..
  "from them; layers take the name as an activation.",
  [[
mf.nn.selu(mf.tensor{0})             --> {0}]])
-- selu(x): scale * (x where x > 0, else alpha (exp(x) - 1)) (Klambauer et al.)
function nn.selu(x, opts, extra)
  x = tensor_arg("selu", x, extra)
  no_opts("selu", opts)
  return mf.where(mf.greater(x, 0), x * SELU_SCALE, neg_expm1(x) * (SELU_ALPHA * SELU_SCALE))
end

lib.help("nn.softsign", "nn",
  "mf.nn.softsign(x)",
  "x / (1 + |x|). " ..
  "Written with mf ops (lib/activations.lua): gradients, graphs and mf.trace come " ..
  "from them; layers take the name as an activation.",
  [[
mf.nn.softsign(mf.tensor{1, -3})     --> {0.5, -0.75}]])
-- softsign(x): x / (1 + |x|)
function nn.softsign(x, opts, extra)
  x = tensor_arg("softsign", x, extra)
  no_opts("softsign", opts)
  return x / (mf.abs(x) + 1)
end

lib.help("nn.relu6", "nn",
  "mf.nn.relu6(x)",
  "min(max(x, 0), 6). " ..
  "Written with mf ops (lib/activations.lua): gradients, graphs and mf.trace come " ..
  "from them; layers take the name as an activation.",
  [[
mf.nn.relu6(mf.tensor{-1, 3, 9})     --> {0, 3, 6}]])
-- relu6(x): min(max(x, 0), 6)
function nn.relu6(x, opts, extra)
  x = tensor_arg("relu6", x, extra)
  no_opts("relu6", opts)
  return mf.minimum(mf.maximum(x, 0), 6)
end

for _, name in ipairs({"leaky_relu", "elu", "selu", "gelu", "silu", "softsign", "relu6"}) do
  lib.activations[name] = nn[name]
end
lib.activations.swish = nn.silu
