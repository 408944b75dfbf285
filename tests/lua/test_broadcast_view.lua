-- test_broadcast_view.lua — broadcast_to is a view (stride 0 along the
-- stretched axes, as PyTorch's expand), so the gradient of a sum or a mean
-- writes no tensor of ones: no engine memory for the broadcast in eager
-- mode, in a Session and in mf.trace, and the gradients keep their values
-- bit for bit (the kernels' side: tests/unit/test_broadcast_view.c).
local T = dofile("tests/lua/harness.lua")

local N = 1024 * 1024   -- 4 MB of float32: a copy would show in mf.memory()

-- engine bytes in use after fn() while its results are held
local function bytes_held(fn)
  collectgarbage()
  local before = mf.memory().in_use
  local r = {fn()}
  local grown = mf.memory().in_use - before
  r = nil
  return grown
end

T.test("broadcast_to holds no copy and reads as the values written out", function()
  local src = mf.tensor{{1.5}, {-2}, {3}, {0.25}}
  local grown = bytes_held(function() return mf.broadcast_to(src, {256, 4, 1024}) end)
  T.ok(grown < 64 * 1024, "broadcast_to of 4 values to 1M elements took " .. grown .. " bytes")
  local b = mf.broadcast_to(src, {2, 4, 3})
  T.eq(b, mf.tile(mf.reshape(src, {1, 4, 1}), {2, 1, 3}), 0)
  T.eq(mf.reshape(b, {8, 3})[5], {1.5, 1.5, 1.5})   -- reshape of a view: a copy
  T.eq(mf.reduce_sum(b, 3), mf.tile(mf.reshape(src * 3, {1, 4}), {2, 1}), 0)
  T.eq(b + 1, mf.tile(mf.reshape(src + 1, {1, 4, 1}), {2, 1, 3}), 0)
end)

T.test("eager: the gradient of a sum or a mean holds no tensor of ones", function()
  local x = mf.random.uniform({N}, {minval = -1, maxval = 1, seed = 1})
  for _, reduce in ipairs{mf.reduce_sum, mf.reduce_mean} do
    local g = mf.grad(function(v) return reduce(v) end)
    local grown = bytes_held(function() return g(x) end)
    T.ok(grown < 64 * 1024, "the gradient held " .. grown .. " bytes")
    local d = g(x)
    T.eq(d.shape, {N}, 0)
    T.eq(d[N], reduce == mf.reduce_sum and 1 or 1 / N, 0)
  end
  -- consumers read it as the ones they were given before: exp's gradient is exp(x)
  local ge = mf.grad(function(v) return mf.reduce_sum(mf.exp(v)) end)
  T.eq(ge(x), mf.exp(x), 0)
end)

T.test("Session and mf.trace: the broadcast gradient is a view too", function()
  local g = mf.Graph()
  local x, dx = g:as_default(function()
    local p = mf.placeholder("float32", {-1})
    return p, mf.gradients(mf.reduce_mean(p), {p})[1]
  end)
  local sess = mf.Session(g)
  local xv = mf.random.uniform({N}, {minval = -1, maxval = 1, seed = 2})
  local grown = bytes_held(function() return sess:run(dx, {[x] = xv}) end)
  T.ok(grown < 64 * 1024, "Session: the gradient held " .. grown .. " bytes")
  T.eq(sess:run(dx, {[x] = xv})[7], 1 / N, 0)
  local traced = mf.trace(function(v)
    return mf.grad(function(u) return mf.reduce_sum(mf.exp(u)) end)(v)
  end)
  T.eq(traced(xv), mf.exp(xv), 0)
  local ts = mf.trace(function(v) return mf.grad(function(u) return mf.reduce_sum(u) end)(v) end)
  grown = bytes_held(function() return ts(xv) end)
  T.ok(grown < 64 * 1024, "mf.trace: the gradient held " .. grown .. " bytes")
end)

T.test("a Variable holding a broadcast view: updates write a copy, never the shared source", function()
  local src = mf.tensor{{1}, {2}}
  local v = mf.Variable(mf.zeros{2, 3})
  v:assign(mf.broadcast_to(src, {2, 3}))
  local opt = mf.train.AdamOptimizer(0.1)
  local tape = mf.GradientTape()
  local l = mf.reduce_sum(v * mf.tensor{{1, 2, 3}, {4, 5, 6}})
  tape:stop()
  opt:apply_gradients({{tape:gradient(l, {v})[1], v}})
  T.eq(v:value(), mf.tensor{{0.9, 0.9, 0.9}, {1.9, 1.9, 1.9}}, 1e-6)
  local w = mf.Variable(mf.broadcast_to(src, {2, 3}))
  w:assign_add(mf.ones{2, 3})
  w[{1, 1}] = 7
  T.eq(w:value(), mf.tensor{{7, 2, 2}, {3, 3, 3}}, 0)
  T.eq(src, mf.tensor{{1}, {2}}, 0)
  -- a gradient that is a broadcast view, applied by each optimizer
  for _, o in ipairs{mf.train.GradientDescentOptimizer(0.1), mf.train.MomentumOptimizer(0.1, 0.9)} do
    local u = mf.Variable(mf.ones{2, 3})
    local t2 = mf.GradientTape()
    local s = mf.reduce_sum(u)
    t2:stop()
    o:apply_gradients({{t2:gradient(s, {u})[1], u}})
    T.eq(u:value(), mf.fill({2, 3}, 0.9), 1e-6)
  end
end)

T.done()
