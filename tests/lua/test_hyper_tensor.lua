-- test_hyper_tensor.lua — hyperparameters given as graph tensors (issue #27's
-- leftover): as in TensorFlow 1.x, a placeholder, a graph Variable or a
-- schedule's output inside mf.trace is an input of the Apply nodes (cast to
-- the variable's dtype), read when the graph runs, so the momentum can
-- change from step to step without a new train op or a new trace. The
-- expected values are TensorFlow's update formulas (training_ops.cc)
-- written out below; an eager apply with such a tensor is an error.
local T = dofile("tests/lua/harness.lua")

local C = {1.0, 3.0}          -- loss = sum(C * w^2): g = 2 * C * w
local W0 = {1.0, -2.0}
local LR = 0.1

-- TensorFlow's ApplyMomentum: accum = accum * momentum + g; var -= lr * accum
local function momentum_reference(moms)
  local w, acc, out = {W0[1], W0[2]}, {0, 0}, {}
  for s, m in ipairs(moms) do
    for i = 1, 2 do
      local g = 2 * C[i] * w[i]
      acc[i] = acc[i] * m + g
      w[i] = w[i] - LR * acc[i]
    end
    out[s] = {w[1], w[2]}
  end
  return out
end

local function loss_of(w) return mf.reduce_sum(mf.tensor(C, "float64") * w * w) end

T.test("graph: a placeholder momentum, fed a new value at every run", function()
  local moms = {0.9, 0.5, 0.0, 0.99, 0.3}
  local want = momentum_reference(moms)
  local g, sess, train, w, mom = mf.Graph(), nil, nil, nil, nil
  g:as_default(function()
    w = mf.Variable(mf.tensor(W0, "float64"), {name = "w"})
    mom = mf.placeholder("float32", {})   -- cast to the variable's float64 in the graph
    train = mf.train.MomentumOptimizer(LR, mom):minimize(loss_of(w))
    sess = mf.Session(g)
    sess:run(mf.global_variables_initializer())
  end)
  for s, m in ipairs(moms) do
    sess:run(train, {[mom] = mf.tensor(m, "float32")})
    -- the momentum went through float32, as TensorFlow's cast of a float32 feed does
    local m32 = mf.tensor(m, "float32"):item()
    local w32 = momentum_reference((function()
      local t = {}
      for k = 1, s do t[k] = mf.tensor(moms[k], "float32"):item() end
      return t
    end)())
    T.eq(sess:run(w), w32[s], 1e-12, "step " .. s .. " momentum " .. m32)
    T.eq(sess:run(w), want[s], 1e-6)
  end
end)

T.test("inside mf.trace: a schedule's output changes the momentum across calls of one trace",
       function()
  local k = mf.Variable(0.0, {trainable = false})   -- the schedule's step, captured
  local w = mf.Variable(mf.tensor(W0, "float64"))
  local opt = mf.train.MomentumOptimizer(LR, function()
    return mf.minimum(mf.cast(0.2 + 0.3 * k, "float64"), 0.95)   -- 0.2, 0.5, 0.8, 0.95, ...
  end)
  local step = mf.trace(function()
    opt:minimize(function() return loss_of(w) end)
  end)
  local moms = {}
  for s = 1, 5 do
    step()
    k:assign_add(1)
    moms[s] = math.min(mf.tensor(0.2 + 0.3 * (s - 1), "float32"):item(), 0.95)
  end
  T.eq(step:trace_count(), 1)
  T.eq(w, momentum_reference(moms)[5], 1e-12)
  -- the same optimizer used eagerly reads the function as a number again
  opt:minimize(function() return loss_of(w) end)
end)

T.test("graph: Adam with a placeholder beta1 advances beta1_power by the fed value", function()
  local b1s, b2, eps = {0.9, 0.5, 0.7}, 0.999, 1e-8
  local g, sess, train, w, b1 = mf.Graph(), nil, nil, nil, nil
  g:as_default(function()
    w = mf.Variable(mf.tensor(W0, "float64"), {name = "w"})
    b1 = mf.placeholder("float64", {})
    train = mf.train.AdamOptimizer(LR, {beta1 = b1}):minimize(loss_of(w))
    sess = mf.Session(g)
    sess:run(mf.global_variables_initializer())
  end)
  -- TensorFlow's ApplyAdam with the powers before the step; the powers are then
  -- multiplied by the beta of this step (beta1_power starts at the default 0.9)
  local ww, m, v, p1, p2 = {W0[1], W0[2]}, {0, 0}, {0, 0}, 0.9, b2
  for s, bb in ipairs(b1s) do
    local alpha = LR * math.sqrt(1 - p2) / (1 - p1)
    for i = 1, 2 do
      local gr = 2 * C[i] * ww[i]
      m[i] = m[i] + (gr - m[i]) * (1 - bb)
      v[i] = v[i] + (gr * gr - v[i]) * (1 - b2)
      ww[i] = ww[i] - m[i] * alpha / (math.sqrt(v[i]) + eps)
    end
    p1, p2 = p1 * bb, p2 * b2
    sess:run(train, {[b1] = mf.tensor(bb, "float64")})
    T.eq(sess:run(w), ww, 1e-12, "step " .. s)
  end
end)

T.test("an eager apply with a graph tensor, or another graph's, is an error", function()
  local g = mf.Graph()
  local mom
  g:as_default(function() mom = mf.placeholder("float64", {}) end)
  local opt = mf.train.MomentumOptimizer(LR, mom)
  local w = mf.Variable(mf.tensor(W0, "float64"))
  T.raises(function() opt:minimize(function() return loss_of(w) end) end,
           "apply_gradients: momentum is a graph tensor, which has no value in an eager step")
  T.eq(w, W0, 0)
  local g2 = mf.Graph()
  g2:as_default(function()
    local w2 = mf.Variable(mf.tensor(W0, "float64"))
    T.raises(function() opt:minimize(loss_of(w2)) end,
             "apply_gradients: momentum is a tensor of another graph than the variables'")
  end)
  T.raises(function()
    g:as_default(function() mf.train.MomentumOptimizer(LR, mf.placeholder("float64", {2})) end)
  end, "MomentumOptimizer: momentum must be a scalar number, got a float64 tensor of rank 1")
  T.raises(function()
    g:as_default(function()
      mf.train.MomentumOptimizer(LR, 0.9, {use_nesterov = mf.placeholder("bool", {})})
    end)
  end, "use_nesterov")
end)

T.done()
