-- TensorFlow 1.x's tensorflow/python/training/momentum_test.py, line by line: the expected
-- values are the test's own (literal arithmetic, and its numpy reference for Nesterov,
-- _update_nesterov_momentum_numpy, transcribed below in plain Lua).
local T = dofile("tests/lua/harness.lua")

-- numpy's allclose as TensorFlow's tests use it: |got - want| <= atol + rtol * |want|
local function allclose(got, want, rtol, atol)
  if type(got) == "userdata" then got = got:totable() end
  if type(want) == "number" then got, want = {got}, {want} end
  for i, w in ipairs(want) do
    if type(w) == "table" then
      allclose(got[i], w, rtol, atol)
    else
      local tol = (atol or 1e-6) + (rtol or 1e-6) * math.abs(w)
      if not (math.abs(got[i] - w) <= tol) then
        error(string.format("entry %d: expected %.9g, got %.9g", i, w, got[i]), 3)
      end
    end
  end
end
local function close(got, want) allclose(got, want) end   -- assertAllCloseAccordingToType

-- doTestBasic in graph mode (use_resource=False) and eagerly (callable params)
local function check_steps(opt, eval, step, var0, var1)
  -- Check we have slots
  T.eq(opt:get_slot_names(), {"momentum"})
  local slot0 = opt:get_slot(var0, "momentum")
  local slot1 = opt:get_slot(var1, "momentum")
  T.eq(slot0.shape, var0.shape)
  T.eq(slot1.shape, var1.shape)
  -- Step 1: the momentum accumulators where 0. So we should see a normal
  -- update: v -= grad * learning_rate
  close(eval(slot0), {0.1, 0.1})
  close(eval(slot1), {0.01, 0.01})
  close(eval(var0), {1.0 - (0.1 * 2.0), 2.0 - (0.1 * 2.0)})
  close(eval(var1), {3.0 - (0.01 * 2.0), 4.0 - (0.01 * 2.0)})
  -- Step 2: the momentum accumulators contain the previous update.
  step()
  close(eval(slot0), {(0.9 * 0.1 + 0.1), (0.9 * 0.1 + 0.1)})
  close(eval(slot1), {(0.9 * 0.01 + 0.01), (0.9 * 0.01 + 0.01)})
  close(eval(var0), {1.0 - (0.1 * 2.0) - ((0.9 * 0.1 + 0.1) * 2.0),
                     2.0 - (0.1 * 2.0) - ((0.9 * 0.1 + 0.1) * 2.0)})
  close(eval(var1), {2.98 - ((0.9 * 0.01 + 0.01) * 2.0), 3.98 - ((0.9 * 0.01 + 0.01) * 2.0)})
end

for _, dtype in ipairs{"float32", "float64"} do
  T.test("testBasic (graph) " .. dtype, function()
    local g = mf.Graph()
    local var0, var1, mom_opt, mom_update, init
    g:as_default(function()
      var0 = mf.Variable(mf.tensor({1.0, 2.0}, dtype))
      var1 = mf.Variable(mf.tensor({3.0, 4.0}, dtype))
      local grads0 = mf.constant({0.1, 0.1}, {dtype = dtype})
      local grads1 = mf.constant({0.01, 0.01}, {dtype = dtype})
      mom_opt = mf.train.MomentumOptimizer{learning_rate = 2.0, momentum = 0.9}
      mom_update = mom_opt:apply_gradients{{grads0, var0}, {grads1, var1}}
      init = mf.global_variables_initializer()
    end)
    local sess = mf.Session(g)
    sess:run(init)
    -- Fetch params to validate initial values
    T.eq(sess:run(var0), {1.0, 2.0})
    T.eq(sess:run(var1), {3.0, 4.0})
    sess:run(mom_update)
    check_steps(mom_opt, function(v) return sess:run(v) end, function() sess:run(mom_update) end,
                var0, var1)
  end)

  T.test("testBasicCallableParams (eager) " .. dtype, function()
    local var0 = mf.Variable(mf.tensor({1.0, 2.0}, dtype), {name = "var0"})
    local var1 = mf.Variable(mf.tensor({3.0, 4.0}, dtype), {name = "var1"})
    local grads0 = mf.constant({0.1, 0.1}, {dtype = dtype})
    local grads1 = mf.constant({0.01, 0.01}, {dtype = dtype})
    local learning_rate = function() return 2.0 end
    local momentum = function() return 0.9 end
    local mom_opt = mf.train.MomentumOptimizer{learning_rate = learning_rate, momentum = momentum}
    local function step() mom_opt:apply_gradients{{grads0, var0}, {grads1, var1}} end
    step()
    check_steps(mom_opt, function(v) return v end, step, var0, var1)
  end)

  T.test("testTensorLearningRateAndMomentum " .. dtype, function()
    local var0 = mf.Variable(mf.tensor({1.0, 2.0}, dtype))
    local var1 = mf.Variable(mf.tensor({3.0, 4.0}, dtype))
    local grads0 = mf.constant({0.1, 0.1}, {dtype = dtype})
    local grads1 = mf.constant({0.01, 0.01}, {dtype = dtype})
    local mom_opt = mf.train.MomentumOptimizer{learning_rate = mf.constant(2.0),
                                               momentum = mf.constant(0.9)}
    local function step() mom_opt:apply_gradients{{grads0, var0}, {grads1, var1}} end
    step()
    check_steps(mom_opt, function(v) return v end, step, var0, var1)
  end)
end

T.test("momentum as a Variable changed between steps is read at each step", function()
  local var = mf.Variable{1.0}
  local mu = mf.Variable(0.0, {trainable = false})
  local opt = mf.train.MomentumOptimizer(1.0, mu)
  opt:apply_gradients{{mf.tensor{1.0}, var}}     -- accum = 1, var = 0
  mu:assign(0.5)
  opt:apply_gradients{{mf.tensor{1.0}, var}}     -- accum = 0.5 * 1 + 1 = 1.5, var = -1.5
  close(var, {-1.5})
  T.raises(function() mu:assign(-1); opt:apply_gradients{{mf.tensor{1.0}, var}} end,
           "momentum must be in [0, inf], got -1")
end)

local function update_nesterov_momentum_numpy(var, accum, g, lr, momentum)
  local v, a = {}, {}
  for i = 1, #var do
    v[i] = var[i] + accum[i] * lr * momentum
    a[i] = accum[i] * momentum + g[i]
    v[i] = v[i] - lr * a[i]
    v[i] = v[i] - a[i] * lr * momentum
  end
  return v, a
end

for _, dtype in ipairs{"float32", "float64"} do
  T.test("testNesterovMomentum " .. dtype, function()
    local g = mf.Graph()
    local var0, var1, opt_op, init
    local var0_np, var1_np = {1.0, 2.0}, {3.0, 4.0}
    local accum0_np, accum1_np = {0.0, 0.0}, {0.0, 0.0}
    g:as_default(function()
      var0 = mf.Variable(mf.tensor({1.0, 2.0}, dtype))
      var1 = mf.Variable(mf.tensor({3.0, 4.0}, dtype))
      local cost = 5 * var0 * var0 + 3 * var1
      local global_step = mf.Variable(mf.zeros({}, "int64"), {name = "global_step",
                                                              trainable = false})
      local mom_op = mf.train.MomentumOptimizer{learning_rate = 2.0, momentum = 0.9,
                                                use_nesterov = true}
      opt_op = mom_op:minimize(cost, global_step, {var0, var1})   -- TF1's positional form
      init = mf.global_variables_initializer()
    end)
    local sess = mf.Session(g)
    sess:run(init)
    for _ = 1, 4 do
      sess:run(opt_op)
      local g0 = {var0_np[1] * 10, var0_np[2] * 10}
      var0_np, accum0_np = update_nesterov_momentum_numpy(var0_np, accum0_np, g0, 2.0, 0.9)
      var1_np, accum1_np = update_nesterov_momentum_numpy(var1_np, accum1_np, {3, 3}, 2.0, 0.9)
      allclose(sess:run(var0), var0_np)
      allclose(sess:run(var1), var1_np)
    end
  end)
end

T.test("testMinimizeSparseResourceVariable", function()
  local var0 = mf.Variable{{1.0, 2.0}}
  local function loss()
    local x = mf.constant{{4.0}, {5.0}}
    local pred = mf.matmul(mf.nn.embedding_lookup(var0, {1}), x)   -- ids are 1-based
    return pred * pred
  end
  local opt = mf.train.MomentumOptimizer{learning_rate = 1.0, momentum = 0.0}
  opt:minimize(loss)
  -- Validate updated params
  close(var0, {{-111, -138}})
end)

T.test("testVariablesAcrossGraphs: one optimizer, two graphs, opt:variables()", function()
  local optimizer = mf.train.MomentumOptimizer(0.01, 0.5)
  for k, names in ipairs{{"var0", "var1"}, {"var2", "var3"}} do
    local g = mf.Graph()
    g:as_default(function()
      local a = mf.Variable({1.0, 2.0}, {name = names[1]})
      local b = mf.Variable({3.0, 4.0}, {name = names[2]})
      local loss = mf.reduce_sum(a + b)
      optimizer:minimize(loss)
      local optimizer_variables = optimizer:variables()
      T.ok(optimizer_variables[1].name:find("^" .. names[1]), "graph " .. k .. ": slot of "
           .. names[1] .. ", got " .. tostring(optimizer_variables[1].name))
      T.ok(optimizer_variables[2].name:find("^" .. names[2]), "graph " .. k)
      T.eq(#optimizer_variables, 2)
    end)
  end
end)

T.done()
