-- elementwise.lua THREADS [ROW...] — the elementwise ops of issue 29 on float32
-- inputs of 4,096, 131,072 and 4,194,304 elements, eager, on THREADS threads.
-- Prints "name n ms" lines: medians of 7 runs, each run long enough to time
-- (mf.clock). bench/elementwise_peer.py times the same rows in PyTorch and
-- NumPy; bench/elementwise.sh prints them side by side.
--
-- To add a row: one entry in ROWS below ({name, make} where make(n) returns
-- the function to time on about n elements, or {name, make, sizes = {...}}
-- for other sizes) and the same name in bench/elementwise_peer.py.
local threads = tonumber(arg[1]) or 1
mf.set_num_threads(threads)
local RUNS = 7
local SIZES = {4096, 131072, 4194304}

-- the median time of one call in ms; each run repeats the call until it
-- lasts 2 ms or more (a 4,096-element op takes a few microseconds). A
-- warm-up of 600 calls (or 20 ms) comes first: until the engine's first
-- collection (core/alloc.c, after 8 MB of results) every result is fresh
-- pages, a page fault per 4 KiB; the first row, exp, read 32 us at 4,096
-- elements instead of 9. After it, results reuse cached blocks, as in any
-- loop that runs for more than a few milliseconds.
local function median_ms(fn)
  local t0, iters = mf.clock(), 0
  repeat fn(); iters = iters + 1 until mf.clock() - t0 > 20e-3 or iters >= 600
  t0, iters = mf.clock(), 0
  repeat fn(); iters = iters + 1 until mf.clock() - t0 > 2e-3 or iters >= 1000
  local times = {}
  for r = 1, RUNS do
    t0 = mf.clock()
    for _ = 1, iters do fn() end
    times[r] = (mf.clock() - t0) / iters * 1e3
  end
  table.sort(times)
  return times[(RUNS + 1) // 2]
end

-- the same inputs as the peer script's: uniform in [lo, hi), fixed seeds
local function input(n, lo, hi, seed)
  return mf.random.uniform({n}, {minval = lo, maxval = hi, seed = seed or 1})
end

-- a unary op on inputs in [lo, hi)
local function unary(f, lo, hi)
  return function(n)
    local x = input(n, lo or -4, hi or 4)
    return function() return f(x) end
  end
end

-- a binary op on two same-shaped inputs
local function binary(f)
  return function(n)
    local a, b = input(n, -4, 4, 1), input(n, 0.5, 4, 2)
    return function() return f(a, b) end
  end
end

-- a binary op with the second operand a row broadcast over (n / 256, 256)
local function binary_row(f)
  return function(n)
    local a = mf.reshape(input(n, -4, 4, 1), {n // 256, 256})
    local b = input(256, 0.5, 4, 2)
    return function() return f(a, b) end
  end
end

-- the gradient of sum(f(x)) with respect to x (forward and backward)
local function gradient(f, lo, hi)
  return function(n)
    local x = input(n, lo or -4, hi or 4)
    local g = mf.grad(function(v) return mf.reduce_sum(f(v)) end)
    return function() return g(x) end
  end
end

-- a reduction of (n / 16384, 64, 256) over 'axes' (1-based): the first,
-- middle, last or several axes, read in place
local REDUCE_SIZES = {131072, 4194304}
local function reduction(f, axes)
  return function(n)
    local x = mf.reshape(input(n, -4, 4), {n // 16384, 64, 256})
    return function() return f(x, axes) end
  end
end

-- a row op on (n / 256, 256) along the last axis
local function rows(f)
  return function(n)
    local x = mf.reshape(input(n, -4, 4), {n // 256, 256})
    return function() return f(x) end
  end
end

-- the gradient of sum(f(x) * w) for x of (n / 256, 256) (w: weights that
-- make the gradient of softmax nonzero)
local function rows_gradient(f)
  return function(n)
    local x = mf.reshape(input(n, -4, 4), {n // 256, 256})
    local w = mf.reshape(input(n, -1, 1, 2), {n // 256, 256})
    local g = mf.grad(function(v) return mf.reduce_sum(f(v) * w) end)
    return function() return g(x) end
  end
end

-- per-op overhead: one 1-element add recorded on a tape (time per add)
local function tape_add()
  return function()
    local a, b = mf.Variable(mf.fill({1}, 1.5)), mf.fill({1}, 2.5)
    return function()
      local tape = mf.GradientTape()
      for _ = 1, 100 do local c = a + b end
      tape:stop()
      return tape
    end
  end
end

local ROWS = {
  {"exp", unary(mf.exp)},
  {"expm1", unary(mf.expm1)},
  {"log", unary(mf.log, 0.01, 100)},
  {"log1p", unary(mf.log1p, 0, 100)},
  {"tanh", unary(mf.tanh)},
  {"sigmoid", unary(mf.sigmoid)},
  {"softplus", unary(mf.softplus)},
  {"erf", unary(mf.erf)},
  {"gelu", unary(mf.nn.gelu)},
  {"gelu_tanh", unary(function(x) return mf.nn.gelu(x, {approximate = true}) end)},
  {"silu", unary(mf.nn.silu)},
  {"sin", unary(mf.sin)},
  {"cos", unary(mf.cos)},
  {"tan", unary(mf.tan, -1.5, 1.5)},
  {"atan", unary(mf.atan)},
  {"asinh", unary(mf.asinh)},
  {"atanh", unary(mf.atanh, -0.99, 0.99)},
  {"pow", binary(function(a, b) return mf.pow(mf.abs(a), b) end)},
  {"pow_scalar", unary(function(x) return mf.pow(x, 1.5) end, 0, 4)},
  {"sqrt", unary(mf.sqrt, 0, 100)},
  {"rsqrt", unary(mf.rsqrt, 0.01, 100)},
  {"reciprocal", unary(mf.reciprocal, 0.5, 4)},
  {"square", unary(mf.square)},
  {"abs", unary(mf.abs)},
  {"sign", unary(mf.sign)},
  {"floor", unary(mf.floor)},
  {"ceil", unary(mf.ceil)},
  {"round", unary(mf.round)},
  {"add", binary(mf.add)},
  {"sub", binary(mf.subtract)},
  {"mul", binary(mf.multiply)},
  {"div", binary(mf.divide)},
  {"maximum", binary(mf.maximum)},
  {"minimum", binary(mf.minimum)},
  {"add_row", binary_row(mf.add)},
  {"mul_row", binary_row(mf.multiply)},
  {"mul_scalar", unary(function(x) return x * 1.5 end)},
  {"exp_grad", gradient(mf.exp)},
  {"tanh_grad", gradient(mf.tanh)},
  {"sigmoid_grad", gradient(mf.sigmoid)},
  {"erf_grad", gradient(mf.erf)},
  {"gelu_grad", gradient(mf.nn.gelu)},
  {"sum_first", reduction(mf.reduce_sum, 1), sizes = REDUCE_SIZES},
  {"sum_middle", reduction(mf.reduce_sum, 2), sizes = REDUCE_SIZES},
  {"sum_last", reduction(mf.reduce_sum, 3), sizes = REDUCE_SIZES},
  {"sum_first2", reduction(mf.reduce_sum, {1, 2}), sizes = REDUCE_SIZES},
  {"sum_last2", reduction(mf.reduce_sum, {2, 3}), sizes = REDUCE_SIZES},
  {"sum_all", reduction(mf.reduce_sum), sizes = REDUCE_SIZES},
  {"mean_middle", reduction(mf.reduce_mean, 2), sizes = REDUCE_SIZES},
  {"max_last", reduction(mf.reduce_max, 3), sizes = REDUCE_SIZES},
  {"max_first", reduction(mf.reduce_max, 1), sizes = REDUCE_SIZES},
  {"softmax", rows(mf.nn.softmax), sizes = REDUCE_SIZES},
  {"log_softmax", rows(mf.nn.log_softmax), sizes = REDUCE_SIZES},
  {"softmax_grad", rows_gradient(mf.nn.softmax), sizes = REDUCE_SIZES},
  {"layer_norm", rows(function(x) return mf.nn.layer_norm(x, {epsilon = 1e-5}) end),
   sizes = REDUCE_SIZES},
  {"layer_norm_grad", rows_gradient(function(x) return mf.nn.layer_norm(x, {epsilon = 1e-5}) end),
   sizes = REDUCE_SIZES},
  -- 100 adds per call: the "ms" column is microseconds per add x 10
  {"tape_add_x100", tape_add(), sizes = {1}},
}

local only = {}
for i = 2, #arg do only[arg[i]] = true end
for _, row in ipairs(ROWS) do
  if next(only) == nil or only[row[1]] then
    for _, n in ipairs(row.sizes or SIZES) do
      local fn = row[2](n)
      print(string.format("%s %d %.4f", row[1], n, median_ms(fn)))
      fn = nil
      collectgarbage()
    end
  end
end
