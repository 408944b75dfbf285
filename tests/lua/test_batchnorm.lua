-- test_batchnorm.lua — mf.nn.fused_batch_norm (core/ops/batchnorm.c) and
-- mf.layers.BatchNormalization: the op against the formula, its gradient
-- (gradcheck, float64), the moving statistics after N steps against
--   m <- m * momentum + mean * (1 - momentum)
--   v <- v * momentum + var * n / (n - 1) * (1 - momentum)
-- eagerly, in a graph (g:as_default) and inside mf.trace, with no extra op
-- run; inference with the moving statistics; NCHW; Keras's parameter
-- counts; LayerNormalization and Embedding against their formulas.
local T = dofile("tests/lua/harness.lua")
local L = mf.layers

local function close(a, b, tol)
  local d = mf.reduce_max(mf.abs(a - b)):item()
  T.ok(d <= (tol or 1e-5), "max |a - b| = " .. d)
end

-- Batch k of N: (n, c) values, different per step.
local function batch(k, n, c)
  return mf.random.normal({n, c}, {mean = k * 0.5, stddev = 1 + k * 0.25, seed = 100 + k})
end

-- The expected moving statistics after 'steps' batches, by the formula.
local function expected(steps, n, c, momentum)
  local m, v = mf.zeros{c}, mf.ones{c}
  for k = 1, steps do
    local x = batch(k, n, c)
    local mean = mf.reduce_mean(x, {axis = 1})
    local var = mf.reduce_mean(mf.square(x - mean), {axis = 1}) * (n / (n - 1))
    m = m * momentum + mean * (1 - momentum)
    v = v * momentum + var * (1 - momentum)
  end
  return m, v
end

T.test("fused_batch_norm against the formula, and its gradient", function()
  local x = mf.random.normal({6, 4}, {seed = 1})
  local s, o = mf.tensor{1, 2, 0.5, -1}, mf.tensor{0, 0.1, 0.2, 0.3}
  local y, m, v = mf.nn.fused_batch_norm(x, s, o, {epsilon = 0.01})
  local mean = mf.reduce_mean(x, {axis = 1})
  local var = mf.reduce_mean(mf.square(x - mean), {axis = 1})
  close(m, mean)
  -- the variance output has Bessel's correction, as TensorFlow's op (n = 6 rows); y
  -- normalises with the biased one
  close(v, var * 6 / 5)
  close(y, (x - mean) / mf.sqrt(var + 0.01) * s + o)
  local x64 = mf.cast(x, "float64")
  T.ok(mf.test.gradcheck(function(a, b, c)
    local yy, mm, vv = mf.nn.fused_batch_norm(a, b, c)
    return mf.reduce_sum(mf.sin(yy)) + mf.reduce_sum(mm * mm) + mf.reduce_sum(vv * b)
  end, {x64, mf.cast(s, "float64"), mf.cast(o, "float64")}))
  T.raises(function() mf.nn.fused_batch_norm(x, mf.ones{3}, o) end,
           "fused_batch_norm: scale must be 1-D with the size of x's last (channel) axis (4)")
  T.raises(function() mf.nn.fused_batch_norm(mf.ones({2, 2}, "int32"), s, o) end,
           "a float dtype")
  T.raises(function() mf.nn.fused_batch_norm(x, s, o, {eps = 1}) end, "unknown option 'eps'")
end)

T.test("fused_batch_norm: one row keeps variance 0; an empty batch gives NaN statistics", function()
  -- TensorFlow divides by max(n - 1, 1): one row has variance 0, not NaN
  local _, m1, v1 = mf.nn.fused_batch_norm(mf.tensor{{2, 5}}, mf.ones{2}, mf.zeros{2})
  T.eq(m1, {2, 5})
  T.eq(v1, {0, 0})
  -- an empty batch: empty y and NaN mean and variance (TensorFlow's CPU kernel), and a
  -- gradient of zeros for scale and offset
  local x = mf.zeros{0, 4, 4, 3}
  local s, o = mf.ones{3}, mf.zeros{3}
  local tape = mf.GradientTape()
  tape:watch({x, s, o})
  local y, m, v = mf.nn.fused_batch_norm(x, s, o)
  local loss = mf.reduce_sum(y)
  tape:stop()
  T.eq(y.shape, {0, 4, 4, 3})
  for _, t in ipairs{m, v} do
    T.eq(t.shape, {3})
    for _, e in ipairs(t:totable()) do T.ok(e ~= e, "expected NaN, got " .. e) end
  end
  local gx, gs, go = table.unpack(tape:gradient(loss, {x, s, o}))
  T.eq(gx.shape, {0, 4, 4, 3})
  T.eq(gs, {0, 0, 0})
  T.eq(go, {0, 0, 0})
end)

local N, ROWS, C, MOM = 5, 8, 3, 0.9

T.test("moving statistics after N steps: eager", function()
  local bn = L.BatchNormalization{momentum = MOM}
  for k = 1, N do bn(batch(k, ROWS, C), {training = true}) end
  local m, v = expected(N, ROWS, C, MOM)
  close(bn.moving_mean, m)
  close(bn.moving_variance, v)
  -- inference uses them, and changes nothing
  local x = batch(9, ROWS, C)
  close(bn(x), (x - m) / mf.sqrt(v + 1e-3))
  close(bn.moving_mean, m)
end)

T.test("moving statistics after N steps: under a tape, with a training step", function()
  local bn = L.BatchNormalization{momentum = MOM}
  local opt = mf.train.GradientDescentOptimizer(0.1)
  for k = 1, N do
    local x = batch(k, ROWS, C)
    opt:minimize(function() return mf.reduce_sum(mf.square(bn(x, {training = true}) - 1)) end)
  end
  local m, v = expected(N, ROWS, C, MOM)
  close(bn.moving_mean, m)
  close(bn.moving_variance, v)
  T.ok(mf.reduce_max(mf.abs(bn.beta)):item() > 0.01, "beta trained")
end)

T.test("moving statistics after N steps: graph mode, no extra op to run", function()
  local g = mf.Graph()
  local bn, xp, y, init
  g:as_default(function()
    bn = L.BatchNormalization{momentum = MOM}
    xp = mf.placeholder("float32", {-1, C})
    y = bn(xp, {training = true})
    init = mf.global_variables_initializer()
  end)
  local sess = mf.Session(g)
  sess:run(init)
  for k = 1, N do sess:run(y, {[xp] = batch(k, ROWS, C)}) end
  local m, v = expected(N, ROWS, C, MOM)
  local got = sess:run({bn.moving_mean, bn.moving_variance})
  close(got[1], m)
  close(got[2], v)
end)

T.test("moving statistics after N steps: inside mf.trace", function()
  local bn = L.BatchNormalization{momentum = MOM}
  local f = mf.trace(function(x) return bn(x, {training = true}) end)
  for k = 1, N do f(batch(k, ROWS, C)) end
  T.eq(f:trace_count(), 1)
  local m, v = expected(N, ROWS, C, MOM)
  close(bn.moving_mean, m)
  close(bn.moving_variance, v)
end)

T.test("NCHW (axis = 2), Keras's parameter counts, errors", function()
  local bn = L.BatchNormalization{axis = 2}
  local x = mf.random.normal({2, 3, 4, 4}, {seed = 3})
  local y = bn(x, {training = true})
  local xt = mf.transpose(x, {1, 3, 4, 2})
  local mean = mf.reduce_mean(xt, {axis = {1, 2, 3}})
  local var = mf.reduce_mean(mf.square(xt - mean), {axis = {1, 2, 3}})
  close(mf.transpose(y, {1, 3, 4, 2}), (xt - mean) / mf.sqrt(var + 1e-3))
  L.reset_names()
  local m = L.Sequential{L.Conv2D(8, 3, {input_shape = {6, 6, 2}}), L.BatchNormalization(),
                         L.Flatten(), L.Dense(4)}
  local text = m:summary{print_fn = function() end}
  for _, want in ipairs({"batch_normalization (BatchNormalization)", "(None, 4, 4, 8)",
                         "Total params: 700", "Trainable params: 684",
                         "Non-trainable params: 16"}) do
    T.ok(text:find(want, 1, true), "summary lacks '" .. want .. "':\n" .. text)
  end
  T.ok(text:find("%(None, 4, 4, 8%)%s+32\n"), text) -- Keras: 4 * 8, half of them trainable
  T.eq(#m.trainable_variables, 6)
  T.eq(#m.variables, 8)
  T.raises(function() L.BatchNormalization{momentum = 2} end, "option 'momentum' must be")
  T.raises(function() L.BatchNormalization{axis = 1}(mf.ones{2, 3}) end,
           "(BatchNormalization): axis 1 of an input of rank 2")
end)

T.test("LayerNormalization and Embedding against their formulas", function()
  local ln = L.LayerNormalization()
  local x = mf.random.normal({3, 5}, {seed = 4})
  local mean = mf.reduce_mean(x, {axis = -1, keepdims = true})
  local var = mf.reduce_mean(mf.square(x - mean), {axis = -1, keepdims = true})
  close(ln(x), (x - mean) / mf.sqrt(var + 1e-3))
  T.eq(#ln.trainable_variables, 2)
  local e = L.Embedding(4, 2, {embeddings_initializer = "ones"})
  local ids = mf.tensor({{1, 4}, {2, 2}}, "int64")
  T.eq(e(ids).shape, {2, 2, 2})
  e.embeddings:assign(mf.tensor{{1, 1}, {2, 2}, {3, 3}, {4, 4}})
  T.eq(e(ids), {{{1, 1}, {4, 4}}, {{2, 2}, {2, 2}}})
  T.raises(function() e(mf.ones{2}) end, "(Embedding): expected integer ids")
  T.raises(function() e(mf.tensor({5}, "int64")) end, "1-based")
end)

T.done()
