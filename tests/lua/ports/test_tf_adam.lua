-- TensorFlow 1.x's tensorflow/python/training/adam_test.py, line by line: the expected values
-- come from the test's numpy reference adam_update_numpy, transcribed below in plain Lua.
local T = dofile("tests/lua/harness.lua")

local function adam_update_numpy(param, g_t, t, m, v, alpha, beta1, beta2, epsilon)
  alpha, beta1, beta2, epsilon = alpha or 0.001, beta1 or 0.9, beta2 or 0.999, epsilon or 1e-8
  local alpha_t = alpha * math.sqrt(1 - beta2 ^ t) / (1 - beta1 ^ t)
  local p, m_t, v_t = {}, {}, {}
  for i = 1, #param do
    m_t[i] = beta1 * m[i] + (1 - beta1) * g_t[i]
    v_t[i] = beta2 * v[i] + (1 - beta2) * g_t[i] * g_t[i]
    p[i] = param[i] - alpha_t * m_t[i] / (math.sqrt(v_t[i]) + epsilon)
  end
  return p, m_t, v_t
end

-- assertAllCloseAccordingToType: numpy's allclose, rtol = atol = 1e-6
local function close(got, want)
  if type(got) == "userdata" then got = got:totable() end
  if type(want) == "number" then got, want = {got}, {want} end
  for i, w in ipairs(want) do
    if not (math.abs(got[i] - w) <= 1e-6 + 1e-6 * math.abs(w)) then
      error(string.format("entry %d: expected %.9g, got %.9g", i, w, got[i]), 2)
    end
  end
end

-- The numpy side of doTestBasic and friends: three steps from the same start.
local function numpy_steps(n)
  local var0_np, var1_np = {1.0, 2.0}, {3.0, 4.0}
  local m0, v0, m1, v1 = {0, 0}, {0, 0}, {0, 0}, {0, 0}
  local out = {}
  for t = 1, n do
    var0_np, m0, v0 = adam_update_numpy(var0_np, {0.1, 0.1}, t, m0, v0)
    var1_np, m1, v1 = adam_update_numpy(var1_np, {0.01, 0.01}, t, m1, v1)
    out[t] = {var0_np, var1_np}
  end
  return out
end

for _, dtype in ipairs{"float32", "float64"} do
  T.test("testBasic (graph) " .. dtype, function()
    local want = numpy_steps(3)
    local g = mf.Graph()
    local var0, var1, opt, update, init
    g:as_default(function()
      var0 = mf.Variable(mf.tensor({1.0, 2.0}, dtype), {name = "var0"})
      var1 = mf.Variable(mf.tensor({3.0, 4.0}, dtype), {name = "var1"})
      local grads0 = mf.constant({0.1, 0.1}, {dtype = dtype})
      local grads1 = mf.constant({0.01, 0.01}, {dtype = dtype})
      opt = mf.train.AdamOptimizer{learning_rate = 0.001}
      update = opt:apply_gradients{{grads0, var0}, {grads1, var1}}
      T.eq(#opt:variables(), 6)   -- m and v of two variables, beta1_power, beta2_power
      init = mf.global_variables_initializer()
    end)
    -- Shouldn't return non-slot variables from other graphs.
    mf.Graph():as_default(function() T.eq(#opt:variables(), 0) end)
    local sess = mf.Session(g)
    sess:run(init)
    -- Fetch params to validate initial values
    T.eq(sess:run(var0), {1.0, 2.0})
    T.eq(sess:run(var1), {3.0, 4.0})
    local vars = {}
    g:as_default(function() vars = opt:variables() end)
    local beta1_power, beta2_power = vars[5], vars[6]
    -- Run 3 steps of Adam
    for t = 1, 3 do
      sess:run(update)
      close(sess:run(beta1_power), 0.9 ^ (t + 1))
      close(sess:run(beta2_power), 0.999 ^ (t + 1))
      close(sess:run(var0), want[t][1])
      close(sess:run(var1), want[t][2])
    end
  end)

  T.test("testBasicCallableParams (eager) " .. dtype, function()
    local want = numpy_steps(3)
    local var0 = mf.Variable(mf.tensor({1.0, 2.0}, dtype))
    local var1 = mf.Variable(mf.tensor({3.0, 4.0}, dtype))
    local grads0 = mf.constant({0.1, 0.1}, {dtype = dtype})
    local grads1 = mf.constant({0.01, 0.01}, {dtype = dtype})
    local opt = mf.train.AdamOptimizer{learning_rate = function() return 0.001 end,
                                       beta1 = function() return 0.9 end,
                                       beta2 = function() return 0.999 end,
                                       epsilon = function() return 1e-8 end}
    for t = 1, 3 do
      opt:apply_gradients{{grads0, var0}, {grads1, var1}}
      local vars = opt:variables()
      close(vars[5], 0.9 ^ (t + 1))
      close(vars[6], 0.999 ^ (t + 1))
      close(var0, want[t][1])
      close(var1, want[t][2])
    end
  end)

  T.test("testTensorLearningRate " .. dtype, function()
    local want = numpy_steps(3)
    local var0 = mf.Variable(mf.tensor({1.0, 2.0}, dtype))
    local var1 = mf.Variable(mf.tensor({3.0, 4.0}, dtype))
    local grads0 = mf.constant({0.1, 0.1}, {dtype = dtype})
    local grads1 = mf.constant({0.01, 0.01}, {dtype = dtype})
    local opt = mf.train.AdamOptimizer(mf.constant(0.001))
    for t = 1, 3 do
      opt:apply_gradients{{grads0, var0}, {grads1, var1}}
      close(var0, want[t][1])
      close(var1, want[t][2])
    end
  end)

  T.test("testSharing: two update ops of one optimizer, intertwined " .. dtype, function()
    local want = numpy_steps(3)
    local g = mf.Graph()
    local var0, var1, opt, update1, update2, init
    g:as_default(function()
      var0 = mf.Variable(mf.tensor({1.0, 2.0}, dtype))
      var1 = mf.Variable(mf.tensor({3.0, 4.0}, dtype))
      local grads0 = mf.constant({0.1, 0.1}, {dtype = dtype})
      local grads1 = mf.constant({0.01, 0.01}, {dtype = dtype})
      opt = mf.train.AdamOptimizer()
      update1 = opt:apply_gradients{{grads0, var0}, {grads1, var1}}
      update2 = opt:apply_gradients{{grads0, var0}, {grads1, var1}}
      init = mf.global_variables_initializer()
    end)
    local sess = mf.Session(g)
    sess:run(init)
    for t = 1, 3 do
      sess:run(t % 2 == 0 and update1 or update2)
      close(sess:run(var0), want[t][1])
      close(sess:run(var1), want[t][2])
    end
  end)
end

T.test("AdamOptimizer() is TensorFlow 1.x's 0.001; the others name their missing rate", function()
  T.eq(tostring(mf.train.AdamOptimizer()):match("learning_rate=([%d.e-]+)"), "0.001")
  T.raises(function() mf.train.GradientDescentOptimizer() end,
           "GradientDescentOptimizer: learning_rate is required")
  T.raises(function() mf.train.MomentumOptimizer(0.1) end, "momentum is required")
end)

T.test("one optimizer in two sessions of one graph", function()
  local optimizer = mf.train.AdamOptimizer()
  local g = mf.Graph()
  local var0, update, init
  g:as_default(function()
    var0 = mf.Variable(mf.tensor({1.0, 2.0}, "float64"), {name = "v0"})
    local grads0 = mf.constant({0.1, 0.1}, {dtype = "float64"})
    update = optimizer:apply_gradients{{grads0, var0}}
    init = mf.global_variables_initializer()
  end)
  local want = numpy_steps(2)
  local s1, s2 = mf.Session(g), mf.Session(g)
  s1:run(init)
  s2:run(init)
  s1:run(update)
  s1:run(update)
  s2:run(update)   -- each session keeps its own variables, slots and beta powers
  close(s1:run(var0), want[2][1])
  close(s2:run(var0), want[1][1])
end)

T.test("testTwoSessions: one optimizer eagerly and in two graphs", function()
  local optimizer = mf.train.AdamOptimizer()
  local want = numpy_steps(1)[1][1]
  local var0 = mf.Variable(mf.tensor({1.0, 2.0}, "float64"), {name = "v0"})
  local grads0 = mf.constant({0.1, 0.1}, {dtype = "float64"})
  optimizer:apply_gradients{{grads0, var0}}
  close(var0, want)
  local graphs = {}
  for _ = 1, 2 do
    local g = mf.Graph()
    local v, update, init
    g:as_default(function()
      v = mf.Variable(mf.tensor({1.0, 2.0}, "float64"), {name = "v0"})
      -- If the optimizer saves any state not keyed by graph the following line fails.
      update = optimizer:apply_gradients{{mf.constant({0.1, 0.1}, {dtype = "float64"}), v}}
      init = mf.global_variables_initializer()
    end)
    local sess = mf.Session(g)
    sess:run(init)
    sess:run(update)
    close(sess:run(v), want)   -- each graph's beta powers start afresh
    graphs[#graphs + 1] = g
  end
  -- each context lists its own: v0's m and v, beta1_power, beta2_power
  for _, g in ipairs(graphs) do g:as_default(function() T.eq(#optimizer:variables(), 4) end) end
  T.eq(#optimizer:variables(), 4)
  optimizer:apply_gradients{{grads0, var0}}   -- and the eager ones went on
  close(var0, numpy_steps(2)[2][1])
end)

T.test("testSlotsUniqueEager", function()
  local v1 = mf.Variable(1.)
  local v2 = mf.Variable(1.)
  local opt = mf.train.AdamOptimizer(1.)
  opt:minimize(function() return v1 + v2 end)
  -- There should be two non-slot variables, and two unique slot variables
  -- for v1 and v2 respectively.
  T.eq(#opt:variables(), 6)
end)

T.done()
