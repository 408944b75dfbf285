-- forward.lua — PyTorch's torch.autograd.functional on moonflow's two modes:
-- mf.jvp (a ForwardAccumulator around f), mf.vjp (a GradientTape),
-- mf.hvp and mf.hessian (forward over reverse: the accumulator sees the
-- tape's backward ops, so the tangent of the gradient is the Hessian times
-- v). As torch: the inputs are one tensor or an array of them (f gets them
-- as separate arguments), f returns a tensor or an array of them, and each
-- function returns f's output first, then the product in the structure of
-- f's output (jvp) or of the inputs (vjp, hvp).
local mf, lib = ...
local fail = lib.fail

-- 'x' as an array of tensors, and whether it was one value.
local function as_list(fname, what, x)
  local single = type(x) ~= "table" or debug.getmetatable(x) ~= nil
  local list = single and {x} or x
  for i = 1, #list do
    local v = list[i]
    if type(v) == "number" then v = mf.tensor(v) end
    if not lib.is_tensor(v) then
      fail(fname, "%s %d must be a tensor, got %s", what, i, type(v))
    end
    list[i] = v
  end
  if not single then list = table.move(list, 1, #list, 1, {}) end
  return list, single
end

-- The tangents or vectors 'v', one per entry of 'like', each shaped as it.
local function like_list(fname, what, v, like, single)
  local list = single and {v} or v
  if type(list) ~= "table" or (not single and debug.getmetatable(list) ~= nil) or
     #list ~= #like then
    fail(fname, "%s must match %s (%d tensor%s)", what, single and "one tensor" or "an array",
         #like, #like == 1 and "" or "s")
  end
  local out = {}
  for i, x in ipairs(like) do
    local t = list[i]
    if type(t) ~= "userdata" then t = mf.tensor(t, x.dtype) end
    if not lib.is_tensor(t) then fail(fname, "%s %d must be a tensor", what, i) end
    out[i] = t
  end
  return out
end

-- f's results as an array, and whether it returned one value.
local function results(fname, ...)
  local n = select("#", ...)
  local outs = {...}
  if n == 1 and type(outs[1]) == "table" and debug.getmetatable(outs[1]) == nil then
    return table.move(outs[1], 1, #outs[1], 1, {}), false
  end
  for i = 1, n do
    if not lib.is_tensor(outs[i]) then
      fail(fname, "f must return tensors, got %s as result %d", type(outs[i]), i)
    end
  end
  return outs, n == 1
end

local function shaped(list, single)
  if single then return list[1] end
  return list
end

lib.help("jvp", "autodiff", "mf.jvp(f, inputs, v)",
  "PyTorch's torch.autograd.functional.jvp in forward mode: runs f(inputs...) under a " ..
  "ForwardAccumulator whose tangents are 'v' and returns f's output and the Jacobian-vector " ..
  "product J v, shaped as f's output ('inputs' and 'v': a tensor each, or arrays of them). " ..
  "One run of f, whatever the number of inputs.",
  [[
out, jv = mf.jvp(function(x) return x * x end, mf.tensor{1, 2}, mf.tensor{1, 1})
jv                                --> {2, 4}]])
function mf.jvp(f, inputs, v, ...)
  lib.no_more("jvp", 3, ...)
  local xs, single = as_list("jvp", "input", inputs)
  local ts = like_list("jvp", "v", v, xs, single)
  local acc <close> = mf.ForwardAccumulator(xs, ts)
  local outs, one = results("jvp", f(table.unpack(xs)))
  acc:close()
  return shaped(outs, one), shaped(acc:jvp(outs, {unconnected = "zero"}), one)
end

-- Watches 'xs' on a new tape and runs f; returns the tape (still recording)
-- and f's results.
local function taped(fname, f, xs)
  local tape = mf.GradientTape()
  tape:watch(xs)
  local outs, one = results(fname, f(table.unpack(xs)))
  return tape, outs, one
end

-- sum over k of sum(outs[k] * vs[k]), or the one scalar output without 'vs'.
local function weighted(fname, outs, vs)
  if vs == nil then
    if #outs ~= 1 or outs[1]:numel() ~= 1 then
      fail(fname, "v can be nil only when f returns one tensor with one element")
    end
    return outs[1]
  end
  local s = nil
  for k, y in ipairs(outs) do
    local term = mf.reduce_sum(y * vs[k])
    s = s and s + term or term
  end
  return s
end

lib.help("vjp", "autodiff", "mf.vjp(f, inputs [, v])",
  "PyTorch's torch.autograd.functional.vjp in reverse mode: returns f(inputs...) and the " ..
  "vector-Jacobian product v^T J, shaped as the inputs (zeros where unconnected); 'v' is " ..
  "shaped as f's output and may be left out when f returns one element.",
  [[
out, g = mf.vjp(function(x) return mf.reduce_sum(x * x) end, mf.tensor{1, 2})
g                                 --> {2, 4}]])
function mf.vjp(f, inputs, v, ...)
  lib.no_more("vjp", 3, ...)
  local xs, single = as_list("vjp", "input", inputs)
  local tape, outs, one = taped("vjp", f, xs)
  local vs = v ~= nil and like_list("vjp", "v", v, outs, one) or nil
  local s = weighted("vjp", outs, vs)
  tape:stop()
  local g = tape:gradient(s, xs, {unconnected = "zero"})
  return shaped(outs, one), shaped(g, single)
end

-- f's scalar output and the tangents 'ts' of its gradient at 'xs': H t.
local function forward_over_reverse(fname, f, xs, ts)
  local acc <close> = mf.ForwardAccumulator(xs, ts)
  local tape, outs, one = taped(fname, f, xs)
  local y = weighted(fname, outs, nil)
  tape:stop()
  local g = tape:gradient(y, xs, {unconnected = "zero"})
  acc:close()
  return outs, one, acc:jvp(g, {unconnected = "zero"})
end

lib.help("hvp", "autodiff", "mf.hvp(f, inputs, v)",
  "PyTorch's torch.autograd.functional.hvp, forward over reverse: a ForwardAccumulator with " ..
  "tangents 'v' around a GradientTape; the tangent of the gradient of the scalar f is the " ..
  "Hessian-vector product H v, in one pass. Returns f's output and H v, shaped as the inputs.",
  [[
cube = function(x) return mf.reduce_sum(x * x * x) end
out, hv = mf.hvp(cube, mf.tensor{1, 2}, mf.tensor{1, 0})
hv                                --> {6, 0}]])
function mf.hvp(f, inputs, v, ...)
  lib.no_more("hvp", 3, ...)
  local xs, single = as_list("hvp", "input", inputs)
  local ts = like_list("hvp", "v", v, xs, single)
  local outs, one, hv = forward_over_reverse("hvp", f, xs, ts)
  return shaped(outs, one), shaped(hv, single)
end

lib.help("hessian", "autodiff", "mf.hessian(f, x)",
  "PyTorch's torch.autograd.functional.hessian of a scalar f at one tensor x, forward over " ..
  "reverse: one Hessian-vector product per element of x (a unit tangent each); the result " ..
  "has shape x.shape .. x.shape.",
  [[
cube = function(x) return mf.reduce_sum(x * x * x) end
mf.hessian(cube, mf.tensor{1, 2})     --> {{6, 0}, {0, 12}}]])
function mf.hessian(f, x, ...)
  lib.no_more("hessian", 2, ...)
  local xs, single = as_list("hessian", "input", x)
  if not single then fail("hessian", "x must be one tensor (arrays of inputs: use mf.hvp)") end
  local n = xs[1]:numel()
  local flat = {}
  for i = 1, n do flat[i] = 0 end
  local rows = {}
  for i = 1, n do
    flat[i] = 1
    local e = mf.reshape(mf.tensor(flat, xs[1].dtype), xs[1].shape)
    flat[i] = 0
    local _, _, hv = forward_over_reverse("hessian", f, xs, {e})
    rows[i] = mf.reshape(hv[1], {-1})
  end
  local shape = {}
  for _, d in ipairs(xs[1].shape) do shape[#shape + 1] = d end
  for _, d in ipairs(xs[1].shape) do shape[#shape + 1] = d end
  return mf.reshape(mf.stack(rows), shape)
end

-- The Jacobian of f (one output) at xs[i] column by column: one forward
-- pass per element of xs[i], with a unit tangent.
local function forward_columns(f, xs, i, out)
  local n = xs[i]:numel()
  local flat, cols = {}, {}
  for k = 1, n do flat[k] = 0 end
  for k = 1, n do
    flat[k] = 1
    local ts = {}
    for q, x in ipairs(xs) do
      ts[q] = q == i and mf.reshape(mf.tensor(flat, x.dtype), x.shape) or mf.zeros_like(x)
    end
    flat[k] = 0
    local _, col = mf.jvp(function(...) return (f(...)) end, xs, ts)
    cols[k] = mf.reshape(col, {-1})
  end
  local shape = {}
  for _, d in ipairs(out.shape) do shape[#shape + 1] = d end
  for _, d in ipairs(xs[i].shape) do shape[#shape + 1] = d end
  if n == 0 then return mf.zeros(shape, {dtype = out.dtype}) end
  return mf.reshape(mf.stack(cols, 2), shape)
end

lib.help("jacobian", "autodiff", "mf.jacobian(f, inputs [, {strategy}])",
  "PyTorch's torch.autograd.functional.jacobian of f (one tensor out) at 'inputs' (a tensor, " ..
  "or an array: then an array of Jacobians, one per input), of shape out.shape .. x.shape. " ..
  "strategy = \"forward-mode\" takes one forward pass per input element (mf.jvp), " ..
  "\"reverse-mode\" one backward pass per output element (tape:jacobian); the default, " ..
  "\"auto\" (PyTorch's is reverse-mode), takes the fewer passes: forward mode for a tall " ..
  "function (few inputs, many outputs), reverse mode for a wide one.",
  [[
J = mf.jacobian(function(x) return x * x end, mf.tensor{1, 2})
J                                 --> {{2, 0}, {0, 4}}]])
function mf.jacobian(f, inputs, opts, ...)
  lib.no_more("jacobian", 3, ...)
  lib.check_opts("jacobian", opts, {strategy = true})
  local strategy = opts and opts.strategy or "auto"
  if strategy ~= "auto" and strategy ~= "forward-mode" and strategy ~= "reverse-mode" then
    fail("jacobian", "strategy must be \"auto\", \"forward-mode\" or \"reverse-mode\", got %s",
         tostring(strategy))
  end
  local xs, single = as_list("jacobian", "input", inputs)
  local tape = mf.GradientTape{persistent = true}
  tape:watch(xs)
  local outs = results("jacobian", f(table.unpack(xs)))
  tape:stop()
  if #outs ~= 1 then fail("jacobian", "f must return one tensor, got %d", #outs) end
  local out, nin = outs[1], 0
  for _, x in ipairs(xs) do nin = nin + x:numel() end
  if strategy == "auto" then
    strategy = nin < out:numel() and "forward-mode" or "reverse-mode"
  end
  local js = {}
  for i, x in ipairs(xs) do
    js[i] = strategy == "forward-mode" and forward_columns(f, xs, i, out)
            or tape:jacobian(out, x, {unconnected = "zero"})
  end
  return shaped(js, single)
end
