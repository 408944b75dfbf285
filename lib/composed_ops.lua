-- composed_ops.lua — functions of doc/api.md "Ops" that are short
-- compositions of mf ops (their gradients, graph mode and mf.trace come from
-- those ops): mf.nn.moments, mf.nn.batch_normalization (TensorFlow's
-- inference-style formula; the fused training op is mf.nn.fused_batch_norm),
-- mf.reduce_logsumexp (stable form) and mf.norm (ord 1, 2 or math.huge).
local mf, lib = ...
local fail, check_opts = lib.fail, lib.check_opts

local function tensor_arg(fname, x, what)
  if lib.is_tensor(x) then return x end
  if type(x) == "table" or type(x) == "number" then return mf.tensor(x) end
  fail(fname, "%s must be a tensor, got %s", what or "x", type(x))
end

local function reduce_opts(fname, axis, opts, extra)
  if extra ~= nil then fail(fname, "takes (x [, axis] [, {axis, keepdims}]), got more") end
  if type(axis) == "table" and opts == nil and (axis.axis ~= nil or axis.keepdims ~= nil) then
    axis, opts = nil, axis
  end
  opts = check_opts(fname, opts, {axis = true, keepdims = true})
  return {axis = axis or opts.axis, keepdims = opts.keepdims == true}
end

lib.help("nn.moments", "nn",
  "mf.nn.moments(x, axes [, {keepdims}]) -> mean, variance",
  "The mean and (biased) variance of x over 'axes' (1-based), as tf.nn.moments: written " ..
  "with reduce_mean, so gradients and graphs follow.",
  [[
m, v = mf.nn.moments(mf.tensor{{1, 3}, {3, 5}}, {1})
m                                    --> {2, 4}
v                                    --> {1, 1}]])
-- mf.nn.moments(x, axes [, {keepdims}]) -> mean, variance (biased)
function mf.nn.moments(x, axes, opts, extra)
  local fname = "moments"
  if extra ~= nil then fail(fname, "takes (x, axes [, {keepdims}]), got more") end
  x = tensor_arg(fname, x)
  if axes == nil then fail(fname, "expected the axes to reduce over (e.g. {1} or {1, 2, 3})") end
  opts = check_opts(fname, opts, {keepdims = true})
  local mean = mf.reduce_mean(x, {axis = axes, keepdims = true})
  local var = mf.reduce_mean(mf.square(x - mf.stop_gradient(mean)), {axis = axes,
                                                                    keepdims = true})
  if opts.keepdims then return mean, var end
  return mf.squeeze(mean, axes), mf.squeeze(var, axes)
end

lib.help("nn.batch_normalization", "nn",
  "mf.nn.batch_normalization(x, mean, variance, offset, scale, variance_epsilon)",
  "(x - mean) / sqrt(variance + variance_epsilon) * scale + offset, as " ..
  "tf.nn.batch_normalization (offset and scale may be nil); plain ops. The fused " ..
  "training-mode op is mf.nn.fused_batch_norm.",
  [[
mf.nn.batch_normalization(mf.tensor{1, 3}, 2, 1, nil, nil, 0)  --> {-1, 1}]])
-- mf.nn.batch_normalization(x, mean, variance, offset, scale, variance_epsilon):
-- (x - mean) / sqrt(variance + eps) * scale + offset; offset and scale may be nil.
function mf.nn.batch_normalization(x, mean, variance, offset, scale, eps, extra)
  local fname = "batch_normalization"
  if extra ~= nil then fail(fname, "takes 6 arguments, got more") end
  x = tensor_arg(fname, x)
  mean, variance = tensor_arg(fname, mean, "mean"), tensor_arg(fname, variance, "variance")
  if type(eps) ~= "number" or eps < 0 then
    fail(fname, "variance_epsilon (argument 6) must be a number >= 0, got %s", tostring(eps))
  end
  local inv = mf.rsqrt(variance + eps)
  if scale ~= nil then inv = inv * tensor_arg(fname, scale, "scale") end
  local y = (x - mean) * inv
  if offset ~= nil then y = y + tensor_arg(fname, offset, "offset") end
  return y
end

lib.help("reduce_logsumexp", "reduce",
  "mf.reduce_logsumexp(x [, axis] [, {axis, keepdims}])",
  "log(sum(exp(x))) over the axes (all when none), computed as m + log(sum(exp(x - m))) " ..
  "with m the maximum, so large values do not overflow; plain ops.",
  [[
mf.reduce_logsumexp(mf.tensor{1000, 1000}):item()  --> 1000.6931]])
-- mf.reduce_logsumexp(x [, axis] [, {axis, keepdims}]): log(sum(exp(x))) as
-- max + log(sum(exp(x - max))), so large values do not overflow.
function mf.reduce_logsumexp(x, axis, opts, extra)
  local fname = "reduce_logsumexp"
  x = tensor_arg(fname, x)
  local o = reduce_opts(fname, axis, opts, extra)
  local m = mf.stop_gradient(mf.reduce_max(x, {axis = o.axis, keepdims = true}))
  local s = mf.log(mf.reduce_sum(mf.exp(x - m), {axis = o.axis, keepdims = true})) + m
  if o.keepdims then return s end
  if o.axis == nil then return mf.reshape(s, {}) end
  return mf.squeeze(s, o.axis)
end

lib.help("norm", "reduce",
  "mf.norm(x [, {ord = 2, axis, keepdims}])",
  "The vector norm of x over 'axis' (all elements when absent): ord 2 (\"euclidean\"), 1, " ..
  "or math.huge (the largest magnitude); plain ops.",
  [[
mf.norm(mf.tensor{3, 4})                 --> 5
mf.norm(mf.tensor{3, -4}, {ord = 1})     --> 7]])
-- mf.norm(x [, {ord = 2, axis, keepdims}]): the vector norm over 'axis'
-- (all elements when absent): ord 2 (or "euclidean"), 1, or math.huge.
function mf.norm(x, opts, extra)
  local fname = "norm"
  if extra ~= nil then fail(fname, "takes (x [, {ord, axis, keepdims}]), got more") end
  x = tensor_arg(fname, x)
  opts = check_opts(fname, opts, {ord = true, axis = true, keepdims = true})
  local ord = opts.ord == nil and 2 or opts.ord
  local r = {axis = opts.axis, keepdims = opts.keepdims == true}
  if ord == 2 or ord == "euclidean" or ord == "fro" then
    return mf.sqrt(mf.reduce_sum(mf.square(x), r))
  elseif ord == 1 then
    return mf.reduce_sum(mf.abs(x), r)
  elseif ord == math.huge then
    return mf.reduce_max(mf.abs(x), r)
  end
  fail(fname, "option 'ord' must be 1, 2, \"euclidean\" or math.huge, got %s", tostring(ord))
end
