-- grad.lua — mf.grad and mf.value_and_grad (JAX's grad over TensorFlow 2's
-- tape): the function they return runs 'f' under a fresh mf.GradientTape
-- that watches the picked arguments, and gives one gradient per picked
-- argument, in that argument's structure. A table argument nests as
-- TensorFlow's nest (repl/lmf_nest.c's rules: a table without a metatable is
-- a structure, its leaves are its tensors and Variables, in 'next' order).
-- An unconnected argument's gradient is zeros; an integer or bool one's
-- (labels, indices) is nil, whatever the tape gives. The tape is closed when
-- the call ends, also when 'f' raises; 'f' may not yield.
local mf, lib = ...
local fail = lib.fail

local MAX_ARGS, MAX_LEAVES, MAX_DEPTH = 64, 100000, 32

local function is_structure(x)
  return type(x) == "table" and debug.getmetatable(x) == nil
end

-- Appends the leaves of 'x' to 'leaves' (as lmf_nest_flatten does) and
-- returns its shape as it is now: false for a leaf, else {keys = {...},
-- subs = {...}, len = rawlen}. 'f' may add or remove keys of its arguments,
-- and a table's 'next' order may change when it does: the gradients are put
-- back by this record, taken before 'f' runs, never by walking 'x' again.
local function flatten(fname, x, leaves, depth)
  if not is_structure(x) then
    leaves[#leaves + 1] = x
    return false
  end
  if depth >= MAX_DEPTH then
    fail(fname, "structures nested deeper than %d tables (a cycle?)", MAX_DEPTH)
  end
  local shape = {keys = {}, subs = {}, len = rawlen(x)}
  for key, v in next, x do
    shape.keys[#shape.keys + 1] = key
    shape.subs[#shape.subs + 1] = flatten(fname, v, leaves, depth + 1)
  end
  return shape
end

-- A structure of 'shape' with its leaves values[k + 1], values[k + 2]...;
-- returns it and the last k used. An array gets its length as 'n' (nil
-- gradients leave holes), as lmf_nest_rebuild does.
local function rebuild(shape, values, k)
  if not shape then return values[k + 1], k + 1 end
  local out = {}
  for i, key in ipairs(shape.keys) do out[key], k = rebuild(shape.subs[i], values, k) end
  if shape.len > 0 then out.n = shape.len end
  return out, k
end

-- The indices of the differentiated arguments: argnums (a number or an
-- array, 1-based), or every argument.
local function select_args(fname, argnums, nargs)
  local sel = {}
  if argnums == nil then
    for i = 1, nargs do sel[i] = i end
    return sel
  end
  local list = type(argnums) == "table" and argnums or {argnums}
  for k = 1, math.min(rawlen(list), MAX_ARGS) do
    local a = math.tointeger(list[k]) or 0
    if a < 1 or a > nargs then
      fail(fname, "argnums entry %d is out of range: f got %d argument(s) (argnums are 1-based)",
           a, nargs)
    end
    sel[k] = a
  end
  return sel
end

-- The leaves of the selected arguments and their shapes (see flatten;
-- numbers at the top level become tensors in 'args', so 'f' gets the
-- tensors that are differentiated).
local function collect_leaves(fname, args, sel)
  local leaves, shapes = {}, {}
  for j, i in ipairs(sel) do
    local a = args[i]
    shapes[j] = false
    if is_structure(a) then
      shapes[j] = flatten(fname, a, leaves, 0)
    else
      if type(a) == "number" then
        a = mf.tensor(a)
        args[i] = a
      elseif not lib.is_tensor(a) then
        fail(fname, "argument %d must be a tensor, a Variable or a number to be differentiated, " ..
             "got %s", i, type(a))
      end
      leaves[#leaves + 1] = a
    end
  end
  if #leaves > MAX_LEAVES then fail(fname, "at most %d tensors to differentiate", MAX_LEAVES) end
  for _, x in ipairs(leaves) do
    if not lib.is_tensor(x) then
      fail(fname, "a table argument may hold tensors and Variables (nested), got a %s", type(x))
    end
  end
  return leaves, shapes
end

-- f(...) under 'tape', which watches the leaves first.
local function watched_call(tape, leaves, f, ...)
  tape:watch(leaves)
  return f(...)
end

-- f's result, which must be a scalar tensor.
local function check_scalar(fname, y)
  if not lib.is_tensor(y) then fail(fname, "f must return a scalar tensor, got %s", type(y)) end
  if y:numel() ~= 1 then
    local dims = {}
    for i, d in ipairs(y.shape) do dims[i] = d < 0 and "?" or tostring(d) end
    fail(fname, "f must return a scalar, got shape (%s%s); reduce it first (e.g. mf.reduce_sum)",
         table.concat(dims, ","), #dims == 1 and "," or "")
  end
end

-- The gradients of 'y' for the leaves: zeros where unconnected, nil for
-- integer and bool leaves.
local function leaf_gradients(tape, y, leaves)
  if #leaves == 0 then return {} end
  local grads = tape:gradient(y, leaves, {unconnected = "zero"})
  for i, x in ipairs(leaves) do
    if x.dtype ~= "float32" and x.dtype ~= "float64" then grads[i] = nil end
  end
  return grads
end

local function make_grad(fname, f, opts, with_value)
  local mt = debug.getmetatable(f)
  if type(f) ~= "function" and not (mt and mt.__call ~= nil) then
    local got = mt and type(mt.__name) == "string" and mt.__name or type(f)
    -- raised at this line: lib.publish's wrapper moves it to the caller's
    error(string.format("bad argument #1 to '%s' (function expected, got %s)", fname, got))
  end
  local argnums
  if type(opts) == "table" then
    argnums = lib.check_opts(fname, opts, {argnums = true}).argnums
    if argnums ~= nil and math.type(argnums) ~= "integer" and type(argnums) ~= "table" then
      fail(fname, "argnums must be an integer or an array of integers")
    end
  elseif opts ~= nil then
    error(string.format("bad argument #2 to '%s' (an options table {argnums} expected, got %s)",
                        fname, type(opts)))
  end
  return function(...)
    local nargs, args = select("#", ...), {...}
    if nargs > MAX_ARGS then fail(fname, "at most %d arguments", MAX_ARGS) end
    local sel = select_args(fname, argnums, nargs)
    local leaves, shapes = collect_leaves(fname, args, sel)
    local tape <close> = mf.GradientTape()
    -- as a C binding calls f: no yield, and the tape closed if f raises
    local y = lib.call(tape, watched_call, tape, leaves, f, table.unpack(args, 1, nargs))
    tape:stop()   -- f is done: the tape records no more, whatever comes next
    check_scalar(fname, y)
    local grads = leaf_gradients(tape, y, leaves)
    local out, first, k = {}, with_value and 1 or 0, 0
    out[1] = with_value and y or nil
    for j in ipairs(sel) do out[first + j], k = rebuild(shapes[j], grads, k) end
    return table.unpack(out, 1, first + #sel)
  end
end

lib.help("grad", "autodiff", "mf.grad(f [, {argnums}])",
  "A function that computes the gradient of the scalar function 'f' at its arguments (by " ..
  "running 'f' under a tape); 'argnums' picks the arguments (1-based: a number or an array; " ..
  "by default every argument, so each must be a tensor or a number). One gradient comes back " ..
  "per picked argument, as separate values (dx, dy = mf.grad(f)(x, y)); nil for an integer " ..
  "or bool argument (labels, indices), as tape:gradient gives. mf.grad(mf.grad(f)) is the " ..
  "second derivative.",
  [[
df = mf.grad(function(x) return mf.reduce_sum(x * x * x) end)
df(mf.tensor{1, 2})               --> {3, 12}]])
function mf.grad(f, opts)
  return make_grad("grad", f, opts, false)
end

lib.help("value_and_grad", "autodiff", "mf.value_and_grad(f [, {argnums}])",
  "Like mf.grad, but the function it returns gives the value of 'f' and then the gradients, " ..
  "from one evaluation.",
  [[
vg = mf.value_and_grad(function(x) return mf.reduce_sum(x * x) end)
v, g = vg(mf.tensor{1, 2})
v                                 --> 5]])
function mf.value_and_grad(f, opts)
  return make_grad("value_and_grad", f, opts, true)
end
