-- vmap.lua — mf.vmap(f, {in_axes, out_axes}): torch.func.vmap's and
-- jax.vmap's "vectorizing map". f is written for one example; the function
-- vmap returns runs it on a batch at once. f is called once, on placeholders
-- shaped as one example, in a graph of its own; the engine (mode/vmap.c,
-- through lib.vmap_run) then runs that graph over the batch, each op through
-- its batching rule (eager/batching.c): a loop over examples never runs.
-- Axes are 1-based, as everywhere in moonflow.
local mf, lib = ...
local fail = lib.fail

local function is_variable(v)
  local mt = type(v) == "userdata" and getmetatable(v)
  return type(mt) == "table" and mt.__name == "mf.Variable"
end

-- The axis of argument 'i' along which it is batched, or nil: in_axes is
-- one axis for every argument, or an array with one entry per argument
-- (nil or false: not batched).
local function in_axis(in_axes, i)
  if in_axes == nil then return 1 end
  if math.type(in_axes) == "integer" then return in_axes end
  local a = in_axes[i]
  if a == nil or a == false then return nil end
  if math.type(a) ~= "integer" then
    fail("vmap", "in_axes[%d] must be an integer axis (1-based) or nil, got %s", i, type(a))
  end
  return a
end

-- 'axis' of a rank-'r' tensor as a positive index, or an error naming 'what'.
local function positive_axis(axis, r, what)
  local a = axis < 0 and r + 1 + axis or axis
  if a < 1 or a > r then
    fail("vmap", "%s: axis %d is out of range for rank %d (axes are 1-based: 1..%d)", what,
         axis, r, r)
  end
  return a
end

-- 'x' with axis 'a' first.
local function to_front(x, a)
  if a == 1 then return x end
  local perm = {a}
  for d = 1, #x.shape do if d ~= a then perm[#perm + 1] = d end end
  return mf.transpose(x, perm)
end

-- 'y' (batch first) with the batch moved to axis 'a'.
local function from_front(y, a)
  if a == 1 then return y end
  local perm = {}
  for d = 2, a do perm[#perm + 1] = d end
  perm[#perm + 1] = 1
  for d = a + 1, #y.shape do perm[#perm + 1] = d end
  return mf.transpose(y, perm)
end

-- The arguments as the engine takes them: each batched one with its batch
-- first (values), the batch size, and what f is called with.
local function batch_arguments(args, nargs, in_axes)
  local values, batched, size, first = {}, {}, nil, nil
  for i = 1, nargs do
    local a, axis = args[i], in_axis(in_axes, i)
    if axis ~= nil then
      if not lib.is_tensor(a) then
        fail("vmap", "argument %d is batched (in_axes) and must be a tensor, got %s", i, type(a))
      end
      local x = to_front(a, positive_axis(axis, #a.shape, "argument " .. i))
      if size and x.shape[1] ~= size then
        fail("vmap", "argument %d has %d examples along its axis %d, argument %d has %d", i,
             x.shape[1], axis, first, size)
      end
      size, first = x.shape[1], first or i
      values[i], batched[i] = x, true
    elseif lib.is_tensor(a) and not is_variable(a) then
      values[i], batched[i] = a, false
    end
  end
  if not size then fail("vmap", "in_axes batches no argument: give at least one an axis") end
  return values, batched, size
end

-- f's results flattened to tensors, and how to put them back.
local function flatten_results(res)
  local fetches, shape = {}, {}
  for k = 1, res.n do
    local r = res[k]
    if lib.is_tensor(r) then
      fetches[#fetches + 1], shape[k] = r, false
    elseif type(r) == "table" and getmetatable(r) == nil then
      shape[k] = #r
      for j = 1, #r do
        if not lib.is_tensor(r[j]) then
          fail("vmap", "f must return tensors (or arrays of them), got %s in result %d",
               type(r[j]), k)
        end
        fetches[#fetches + 1] = r[j]
      end
    else
      fail("vmap", "f must return tensors (or arrays of them), got %s as result %d", type(r), k)
    end
  end
  return fetches, shape
end

-- Output 'y' (batch first when 'b', else one value for every example) with
-- its batch at out_axes' axis for result 'k'.
local function place_output(y, b, size, out_axes, k)
  if not b then
    local shape = {size}
    for _, d in ipairs(y.shape) do shape[#shape + 1] = d end
    y = mf.broadcast_to(mf.expand_dims(y, 1), shape)
  end
  local axis = type(out_axes) == "table" and out_axes[k] or out_axes or 1
  if math.type(axis) ~= "integer" then
    fail("vmap", "out_axes must be an integer axis or an array of them, got %s", type(axis))
  end
  return from_front(y, positive_axis(axis, #y.shape, "result " .. k))
end

lib.help("vmap", "autodiff", "mf.vmap(f [, {in_axes, out_axes}])",
  "torch.func.vmap and jax.vmap: returns a function that runs f, written for one example, " ..
  "on a whole batch at once, as if f were applied to each example and the results stacked. " ..
  "in_axes says along which axis each argument is batched (1-based; an integer for all, or " ..
  "an array with one entry per argument, nil or false for an argument shared by every " ..
  "example: {in_axes = {nil, 1, 1}}); default 1. out_axes (default 1) says where the batch " ..
  "axis goes in each result. f is called once, on placeholders shaped as one example, and " ..
  "the graph it builds runs over the batch op by op, each op through a batching rule " ..
  "(elementwise ops broadcast, matmul becomes one GEMM or a BatchMatMul, reductions, " ..
  "softmaxes, reshapes and transposes move their axes, the cross-entropies and pools merge " ..
  "the batch into their rows), never a loop over examples. So per-example gradients are " ..
  "mf.vmap(mf.grad(loss, {argnums = 1}), {in_axes = {nil, 1, 1}})(params, x, y). Not " ..
  "covered: an op without a batching rule (the error names it: strided slices and tensor " ..
  "indexing, scatters, conv backprops, batch norm, LSTM cells, random ops...), Lua code " ..
  "that branches on tensor values (f runs once, as in mf.trace), Variables written inside " ..
  "f, and f returning anything but tensors or arrays of them.",
  [[
dot = function(a, b) return mf.reduce_sum(a * b) end
mf.vmap(dot)(mf.tensor{{1, 2}, {3, 4}}, mf.tensor{{1, 1}, {2, 2}})   --> {3, 14}]])
function mf.vmap(f, opts, ...)
  lib.no_more("vmap", 2, ...)
  local mt = debug.getmetatable(f)
  if type(f) ~= "function" and not (mt and mt.__call ~= nil) then
    fail("vmap", "f must be a function, got %s", type(f))
  end
  opts = lib.check_opts("vmap", opts, {in_axes = true, out_axes = true})
  local in_axes, out_axes = opts.in_axes, opts.out_axes
  if in_axes ~= nil and math.type(in_axes) ~= "integer" and
     (type(in_axes) ~= "table" or getmetatable(in_axes) ~= nil) then
    fail("vmap", "in_axes must be an integer axis or an array of them, got %s", type(in_axes))
  end
  return function(...)
    local nargs, args = select("#", ...), {...}
    local values, batched, size = batch_arguments(args, nargs, in_axes)
    local g, phs, feed, flags, fargs, res = mf.Graph(), {}, {}, {}, {}, nil
    g:as_default(function()
      for i = 1, nargs do
        local v = values[i]
        fargs[i] = args[i]
        if v ~= nil then
          local shape = table.move(v.shape, batched[i] and 2 or 1, #v.shape, 1, {})
          fargs[i] = mf.placeholder(v.dtype, shape)
          phs[#phs + 1], feed[#feed + 1], flags[#flags + 1] = fargs[i], v, batched[i]
        end
      end
      res = table.pack(f(table.unpack(fargs, 1, nargs)))
    end)
    local fetches, shape = flatten_results(res)
    local ok, outs, outs_batched = pcall(lib.vmap_run, g, size, phs, feed, flags, fetches)
    if not ok then   -- the engine's error, at the caller's line rather than this file's
      lib.raise(tostring(outs):gsub("^lib/vmap%.lua:%d+: ", ""), nil)
    end
    local results, j = {}, 0
    for k = 1, res.n do
      if shape[k] then
        results[k] = {}
        for q = 1, shape[k] do
          j = j + 1
          results[k][q] = place_output(outs[j], outs_batched[j], size, out_axes, k)
        end
      else
        j = j + 1
        results[k] = place_output(outs[j], outs_batched[j], size, out_axes, k)
      end
    end
    return table.unpack(results, 1, res.n)
  end
end
