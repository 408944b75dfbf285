-- test_variable.lua — mf.Variable (construction, assign, assign_add, assign_sub, read_value,
-- properties, tensor methods and operators on Variables, printing, errors) and
-- mf.initializers (values, statistics, seeds, errors).
local T = dofile("tests/lua/harness.lua")

T.test("construction", function()
  local x = mf.Variable(3.0)
  T.eq(x.name, "Variable"); T.eq(x.trainable, true); T.eq(x.dtype, "float32")
  T.eq(x.shape, {}); T.eq(x.ndim, 0); T.eq(x:item(), 3)
  local w = mf.Variable({{1, 2}, {3, 4}}, {name = "w", trainable = false})
  T.eq(w.name, "w"); T.eq(w.trainable, false); T.eq(w.shape, {2, 2}); T.eq(w, {{1, 2}, {3, 4}})
  T.eq(mf.Variable(mf.tensor({1, 2}, "int32")).dtype, "int32")
  T.eq(mf.Variable({1, 2}, {dtype = "float64"}).dtype, "float64")
  T.eq(mf.Variable(mf.tensor{1.5, 2}, {dtype = "int64"}), {1, 2})       -- casts
  T.eq(mf.Variable({9007199254740993}, {dtype = "int64"}), {9007199254740993})
  T.eq(mf.Variable(7, {dtype = "int32"}).dtype, "int32")
  T.eq(mf.Variable(function() return mf.ones{2} end), {1, 1})
  T.eq(mf.Variable(w).shape, {2, 2})                                    -- from a Variable
  T.eq(mf.Variable(mf.initializers.zeros()({3})), {0, 0, 0})
end)

T.test("construction errors", function()
  T.raises(mf.Variable, "expected an initial value")
  T.raises(function() mf.Variable(1, {nme = "x"}) end,
           "Variable: unknown option 'nme' (known: name, trainable, dtype)")
  T.raises(function() mf.Variable(1, {name = 3}) end, "option 'name' must be a string")
  T.raises(function() mf.Variable(1, {trainable = 1}) end, "option 'trainable' must be a boolean")
  T.raises(function() mf.Variable(1, {dtype = "float8"}) end,
           "option 'dtype' must be a dtype name")
  T.raises(function() mf.Variable(1, {dtype = "float16"}) end,
           "Variable: float16 is a storage dtype (ops compute it in float32); a Variable holds")
  T.raises(function() mf.Variable(mf.cast(mf.tensor{1}, "bfloat16")) end,
           "Variable: bfloat16 is a storage dtype")
  T.raises(function() mf.Variable(1, "w") end, "options table")
  T.raises(function() mf.Variable({{1, 2}, {3}}) end, "ragged data")
end)

T.test("assign, assign_add, assign_sub", function()
  local v = mf.Variable({1, 2})
  local before = v:read_value()
  T.eq(v:assign({5, 7}), {5, 7})
  T.eq(before, {1, 2})                                     -- reads are snapshots
  T.ok(v:assign_add(1) == v, "assign returns the variable")
  T.eq(v, {6, 8})
  v:assign_sub(mf.tensor{1, 2}):assign_add({10, 10})
  T.eq(v, {15, 16})
  T.eq(v:value(), {15, 16})
  local i = mf.Variable(mf.tensor({1, 2}, "int64"))
  i:assign_add(3); T.eq(i, {4, 5}); T.eq(i.dtype, "int64")
  i:assign({9007199254740993, 1}); T.eq(i, {9007199254740993, 1})
  local f = mf.Variable({1, 2}, {dtype = "float64"})
  f:assign({0.5, 0.25}); T.eq(f, {0.5, 0.25}); T.eq(f.dtype, "float64")
end)

T.test("assign errors", function()
  local w = mf.Variable(mf.zeros{2, 3}, {name = "w"})
  T.raises(function() w:assign(mf.zeros{3}) end,
           "assign: variable 'w' has shape (2,3) float32, got (3,) float32")
  T.raises(function() w:assign(mf.zeros({2, 3}, "float64")) end,
           "assign: variable 'w' has shape (2,3) float32, got (2,3) float64")
  T.raises(function() w:assign_add(mf.zeros({2, 3}, "int32")) end,
           "assign_add: variable 'w' has shape (2,3) float32, got (2,3) int32")
  T.raises(function() w:assign_sub(mf.zeros{4, 2, 3}) end,
           "assign_sub: variable 'w' has shape (2,3) float32, got (4,2,3) float32")
  T.raises(function() w:assign() end, "bad argument #1")
  T.raises(function() w.name = "v" end, "Variable: cannot set 'name'")
  T.raises(function() w.assign(mf.zeros{2}, 1) end, "mf.Variable expected")
  T.eq(w, {{0, 0, 0}, {0, 0, 0}})                          -- unchanged
end)

T.test("a Variable works wherever a tensor does", function()
  local x = mf.Variable(3.0)
  T.eq(x * x * x, 27); T.eq(2 * x, 6); T.eq(x + 1, 4); T.eq(x - mf.tensor(1), 2)
  T.eq(mf.tensor(1) - x, -2); T.eq(-x, -3); T.eq(x ^ 2, 9); T.eq(x / 2, 1.5); T.eq(x % 2, 1)
  T.eq(x + x, 6)
  local w = mf.Variable({{1, 2}, {3, 4}})
  T.eq(w:matmul(w), {{7, 10}, {15, 22}}); T.eq(mf.matmul(w, mf.eye(2)), w:read_value())
  T.eq(w:reduce_sum(), 10); T.eq(mf.reduce_sum(w, 2), {3, 7})
  T.eq(#w, 2); T.eq(w[1], {1, 2}); T.eq(w[-1][2], 4); T.eq(w:numel(), 4)
  T.eq(w:totable(), {{1, 2}, {3, 4}}); T.eq(mf.tensor(w), {{1, 2}, {3, 4}})
  T.eq(mf.add(w, 1), {{2, 3}, {4, 5}})
  T.raises(function() return w < w end, "cannot be compared")
  T.raises(function() return w[3] end, "index 3 out of range")
  T.raises(function() return w.nonexistent end, "Variable: no field 'nonexistent'")
end)

T.test("close and printing", function()
  local v = mf.Variable({1, 2}, {name = "bias"})
  local s = tostring(v)
  T.ok(s:find("<mf.Variable 'bias' shape=(2,) dtype=float32>", 1, true), s)
  T.ok(s:find("[1. 2.]", 1, true), s)
  T.ok(not s:find("shape=(2,), dtype", 1, true), s)
  T.ok(tostring(mf.Variable(1, {trainable = false})):find("trainable=false", 1, true))
  do
    local c <close> = mf.Variable(1)
  end
  local c = mf.Variable(1)
  getmetatable(c).__close(c)
  T.eq(tostring(c), "<mf.Variable (closed)>")
  T.raises(function() return c + 1 end, "variable is closed")
  T.raises(function() c:assign(1) end, "variable is closed")
end)

T.test("initializers: constant kinds", function()
  local I = mf.initializers
  T.eq(I.zeros()({2}), {0, 0}); T.eq(I.ones()({2}, "int32"), {1, 1})
  T.eq(I.ones()({2}, "int32").dtype, "int32")
  T.eq(I.constant(3)({2, 2}), {{3, 3}, {3, 3}})
  T.eq(I.constant({1, 2, 3, 4})({2, 2}), {{1, 2}, {3, 4}})
  T.eq(I.constant(mf.tensor{5})({3}, "float64"), {5, 5, 5})
  T.eq(I.constant()({1}), {0})
  T.eq(tostring(I.constant(3)), "mf.initializers.constant(3)")
  T.eq(tostring(I.glorot_uniform{seed = 1}), "mf.initializers.glorot_uniform{seed=1}")
  T.eq(tostring(I.zeros()), "mf.initializers.zeros")
  T.raises(function() I.constant({1, 2, 3})({2, 2}) end, "constant: the value has shape (3,)")
end)

local function stats(t)
  local v = t:reshape{-1}:totable()
  local n, s, sq, lo, hi = #v, 0, 0, math.huge, -math.huge
  for i = 1, n do
    s = s + v[i]; sq = sq + v[i] * v[i]
    lo = math.min(lo, v[i]); hi = math.max(hi, v[i])
  end
  local mean = s / n
  return mean, math.sqrt(sq / n - mean * mean), lo, hi
end

T.test("initializers: random kinds", function()
  local I = mf.initializers
  local _, sd, lo, hi = stats(I.random_normal{mean = 1, stddev = 2, seed = 1}({200, 100}))
  T.eq(sd, 2, 0.05)
  _, sd, lo, hi = stats(I.truncated_normal{seed = 2}({100, 100}))
  T.ok(lo >= -0.1 and hi <= 0.1, "truncated within 2 stddev (0.05)")
  _, _, lo, hi = stats(I.random_uniform{minval = 2, maxval = 3, seed = 3}({1000}))
  T.ok(lo >= 2 and hi < 3 and lo < 2.01 and hi > 2.99)
  local ints = I.random_uniform{minval = 0, maxval = 5, seed = 3}({100}, "int32")
  T.eq(ints.dtype, "int32")
  -- glorot_uniform bounds: limit sqrt(6 / (fan_in + fan_out))
  local limit = math.sqrt(6 / (300 + 200))
  _, _, lo, hi = stats(I.glorot_uniform{seed = 4}({300, 200}))
  T.ok(lo >= -limit and hi <= limit and lo < -0.99 * limit and hi > 0.99 * limit)
  -- conv kernel fans: receptive field 3*3
  limit = math.sqrt(6 / (9 * 8 + 9 * 16))
  _, _, lo, hi = stats(I.glorot_uniform{seed = 5}({3, 3, 8, 16}))
  T.ok(lo >= -limit and hi <= limit and hi > 0.95 * limit)
  -- he_normal std sqrt(2 / fan_in) on a 1000x1000
  local mean
  mean, sd = stats(I.he_normal{seed = 6}({1000, 1000}))
  T.eq(sd, math.sqrt(2 / 1000), 0.01 * math.sqrt(2 / 1000)); T.eq(mean, 0, 0.001)
  mean, sd = stats(I.glorot_normal{seed = 7}({500, 300}))
  T.eq(sd, math.sqrt(2 / 800), 0.02 * math.sqrt(2 / 800))
  T.eq(I.he_uniform{seed = 1}({2, 2}).shape, {2, 2})
  T.eq(I.lecun_normal{seed = 1}({2, 2}, "float64").dtype, "float64")
end)

local function gram_error(w, wide)
  local g = wide and mf.matmul(w, w, {transpose_b = true}) or mf.matmul(w, w, {transpose_a = true})
  local n = g.shape[1]
  return mf.reduce_max(mf.abs(g - mf.eye(n, {dtype = g.dtype}))):item()
end

T.test("initializers: orthogonal", function()
  local I = mf.initializers
  T.ok(gram_error(I.orthogonal{seed = 1}({50, 20}, "float64")) < 1e-12)
  T.ok(gram_error(I.orthogonal{seed = 1}({64, 64})) < 1e-5)
  T.ok(gram_error(I.orthogonal{seed = 1}({10, 30}, "float64"), true) < 1e-12)
  local k = I.orthogonal{seed = 2}({3, 4, 5})
  T.eq(k.shape, {3, 4, 5})
  T.ok(gram_error(k:reshape{12, 5}) < 1e-5)
  local g = I.orthogonal{gain = 3, seed = 2}({4, 4}, "float64")
  T.ok(gram_error(g / 3) < 1e-12)
  T.raises(function() I.orthogonal()({4}) end,
           "orthogonal: the shape must have at least 2 dimensions, got (4,)")
end)

local function differ(a, b)
  return mf.reduce_max(mf.abs(a - b)):item() > 0
end

T.test("initializers: seeds", function()
  local I = mf.initializers
  for _, name in ipairs{"random_normal", "truncated_normal", "random_uniform", "glorot_uniform",
                        "glorot_normal", "he_normal", "orthogonal"} do
    local a = I[name]{seed = 42}({4, 3})
    local b = I[name]{seed = 42}({4, 3})
    local c = I[name]{seed = 43}({4, 3})
    T.eq(a, b, nil, name .. " same seed")
    T.ok(differ(a, c), name .. " other seed differs")
    local init = I[name]{seed = 42}
    T.eq(init({4, 3}), init({4, 3}), nil, name .. " seeded calls repeat")
  end
  local u = I.glorot_uniform()
  T.ok(differ(u{4, 4}, u{4, 4}), "unseeded calls differ")
  mf.random.seed(5); local a = u{3}
  mf.random.seed(5); local b = u{3}
  T.eq(a, b)
end)

T.test("initializer errors", function()
  local I = mf.initializers
  T.raises(function() I.glorot_uniform{sed = 1} end,
           "glorot_uniform: unknown option 'sed' (known: seed)")
  T.raises(function() I.random_normal{stddev = "x"} end,
           "random_normal: option 'stddev' must be a number, got string")
  T.raises(function() I.he_normal{seed = 1.5} end, "he_normal: option 'seed' must be an integer")
  T.raises(function() I.he_normal(3) end, "he_normal: expected an options table {seed}, got number")
  T.raises(function() I.he_normal()({2, 2}, "int32") end,
           "he_normal: expected a float dtype (float32 or float64), got int32")
  T.raises(function() I.random_normal()({2}, "int64") end, "random_normal: expected a float dtype")
  T.raises(function() I.random_normal{stddev = -1}({2}) end,
           "random_normal: stddev must be >= 0, got -1")
  T.raises(function() I.random_uniform()({2}, "bool") end,
           "random_uniform: expected a float or integer dtype")
  T.raises(function() I.glorot_uniform()() end,
           "glorot_uniform: expected a shape such as {2, 3}, got no value")
  T.raises(function() I.glorot_uniform()({2, -1}) end, "shape entry 2 must be >= 0")
  T.raises(function() I.zeros()({2}, "float8") end, "unknown dtype 'float8'")
  T.raises(function() I.glorot_uniform()({1e6, 1e6}) end,
           "glorot_uniform: shape (1000000,1000000) of float32 is too large")
end)

T.test("no leaks", function()
  collectgarbage(); collectgarbage()
  local before = mf.memory().tensors
  for _ = 1, 2000 do
    local v = mf.Variable(mf.initializers.glorot_uniform{seed = 1}({4, 4}))
    v:assign_add(1); v:assign_sub(v:read_value() * 0.5)
    local _ = v:matmul(v) + v
  end
  collectgarbage(); collectgarbage()
  T.eq(mf.memory().tensors, before)
end)

T.done()
