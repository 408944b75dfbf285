-- TensorFlow 1.x's learning-rate decay tests, line by line:
-- tensorflow/python/keras/optimizer_v2/legacy_learning_rate_decay_test.py (the tests of
-- tf.compat.v1.train.exponential_decay, piecewise_constant, polynomial_decay,
-- natural_exp_decay, inverse_time_decay, cosine_decay, cosine_decay_restarts and
-- linear_cosine_decay). Expected values are the test's own literals and its numpy
-- references (np_cosine_decay, np_cosine_decay_restarts, np_linear_cosine_decay),
-- transcribed below in plain Lua. run_in_graph_and_eager_modes: 'evaluate' runs each
-- schedule eagerly and in a graph; TensorFlow's tolerance 1e-6 (assertAllClose's rtol and
-- atol); the rates are float32, as TensorFlow's.
local T = dofile("tests/lua/harness.lua")
local train = mf.train

local function close(got, want)
  local tol = 1e-6 + 1e-6 * math.abs(want)
  if not (math.abs(got - want) <= tol) then
    error(string.format("expected %.9g, got %.9g", want, got), 3)
  end
end

-- self.evaluate(decayed_lr) in both modes: the eager value, and the same schedule built
-- into a graph (an eager Variable step is captured and read when the graph runs)
local function evaluate(lr)
  local eager = lr()
  T.eq(eager.dtype, "float32")
  local g, node = mf.Graph(), nil
  g:as_default(function() node = lr() end)
  local graph = mf.Session(g):run(node)
  T.eq(graph:item(), eager:item(), 0, "graph and eager mode differ")
  return eager:item()
end

-- Python's '//' on the integers of these tests
local function idiv(a, b) return a // b end

-- ---- LRDecayTest ----------------------------------------------------------------------

T.test("LRDecayTest.testContinuous", function()
  local step = 5
  local decayed_lr = train.exponential_decay(0.05, step, 10, 0.96)
  local expected = .05 * 0.96 ^ (5.0 / 10.0)
  close(evaluate(decayed_lr), expected)
end)

T.test("LRDecayTest.testStaircase", function()
  local step = mf.Variable(0, {dtype = "int32"})
  local decayed_lr = train.exponential_decay(.1, step, 3, 0.96, {staircase = true})
  -- No change to learning rate due to staircase
  step:assign(1)
  close(evaluate(decayed_lr), .1)
  step:assign(2)
  close(evaluate(decayed_lr), .1)
  -- Decayed learning rate
  step:assign(100)
  close(evaluate(decayed_lr), .1 * 0.96 ^ idiv(100, 3))
end)

T.test("LRDecayTest.testVariables (graph mode, assign ops)", function()
  local g = mf.Graph()
  local assign_1, assign_2, assign_100, decayed_lr, init
  g:as_default(function()
    local step = mf.Variable(1, {dtype = "int32"})
    assign_1 = step:assign(1)
    assign_2 = step:assign(2)
    assign_100 = step:assign(100)
    -- exponential_decay with a graph step gives the rate as a graph tensor (TF 1.x);
    -- the schedules of lib/ give a function, called here as TF would evaluate it
    decayed_lr = train.exponential_decay(.1, step, 3, 0.96, {staircase = true})
    init = mf.global_variables_initializer()
  end)
  local sess = mf.Session(g)
  sess:run(init)
  -- No change to learning rate
  sess:run(assign_1)
  close(sess:run(decayed_lr):item(), .1)
  sess:run(assign_2)
  close(sess:run(decayed_lr):item(), .1)
  -- Decayed learning rate
  sess:run(assign_100)
  close(sess:run(decayed_lr):item(), .1 * 0.96 ^ idiv(100, 3))
end)

T.test("LRDecayTest.testPiecewiseConstant", function()
  local x = mf.Variable(-999, {dtype = "int32"})
  local decayed_lr = train.piecewise_constant(x, {100, 110, 120}, {1.0, 0.1, 0.01, 0.001})
  close(evaluate(decayed_lr), 1.0)
  x:assign(100)
  close(evaluate(decayed_lr), 1.0)
  x:assign(105)
  close(evaluate(decayed_lr), 0.1)
  x:assign(110)
  close(evaluate(decayed_lr), 0.1)
  x:assign(120)
  close(evaluate(decayed_lr), 0.01)
  x:assign(999)
  close(evaluate(decayed_lr), 0.001)
end)

T.test("LRDecayTest.testPiecewiseConstantEdgeCases", function()
  -- with self.assertRaises(ValueError): float boundaries for an int32 step
  local x_int = mf.Variable(0, {dtype = "int32"})
  T.raises(function() train.piecewise_constant(x_int, {-1.0, 1.0}, {1, 2, 3}) end,
           "piecewise_constant: boundaries[1] is -1.0, a float, but global_step is an " ..
           "integer (int32)")
  -- TensorFlow also raises ValueError for x = Variable(0.0), values = [1.0, 2, 3]: its
  -- values would mix float32 and int32 tensors. Lua numbers have no such split here:
  -- every value is a float32 rate (help "train.piecewise_constant"), so this is taken.
  local x = mf.Variable(0.0)
  close(evaluate(train.piecewise_constant(x, {-1.0, 1.0}, {1.0, 2, 3})), 2.0)
  -- Test casting boundaries from int32 to int64.
  local x_int64 = mf.Variable(0, {dtype = "int64"})
  local decayed_lr = train.piecewise_constant(x_int64, {1, 2, 3}, {0.4, 0.5, 0.6, 0.7})
  close(evaluate(decayed_lr), 0.4)
  x_int64:assign(1)
  close(evaluate(decayed_lr), 0.4)
  x_int64:assign(2)
  close(evaluate(decayed_lr), 0.5)
  x_int64:assign(3)
  close(evaluate(decayed_lr), 0.6)
  x_int64:assign(4)
  close(evaluate(decayed_lr), 0.7)
end)

-- ---- LinearDecayTest, SqrtDecayTest, PolynomialDecayTest --------------------------------

for _, power in ipairs{1.0, 0.5} do
  local suite = power == 1.0 and "LinearDecayTest" or "SqrtDecayTest"
  local function decay(lr, step, end_lr, cycle)
    return train.polynomial_decay(lr, step, 10, {end_learning_rate = end_lr, power = power,
                                                 cycle = cycle})
  end
  T.test(suite .. ".testHalfWay", function()
    local lr = 0.05
    close(evaluate(decay(lr, 5, 0.0)), lr * 0.5 ^ power)
  end)
  T.test(suite .. ".testEnd", function()
    close(evaluate(decay(0.05, 10, 0.001)), 0.001)
  end)
  T.test(suite .. ".testHalfWayWithEnd", function()
    local lr, end_lr = 0.05, 0.001
    -- LinearDecayTest writes (lr + end_lr) * 0.5, equal to this for power 1
    close(evaluate(decay(lr, 5, end_lr)), (lr - end_lr) * 0.5 ^ power + end_lr)
    if power == 1.0 then close(evaluate(decay(lr, 5, end_lr)), (lr + end_lr) * 0.5) end
  end)
  T.test(suite .. ".testBeyondEnd", function()
    close(evaluate(decay(0.05, 15, 0.001)), 0.001)
  end)
  T.test(suite .. ".testBeyondEndWithCycle", function()
    local lr, end_lr = 0.05, 0.001
    close(evaluate(decay(lr, 15, end_lr, true)), (lr - end_lr) * 0.25 ^ power + end_lr)
  end)
end

T.test("PolynomialDecayTest.testBeginWithCycle", function()
  local lr, decay_steps, step = 0.001, 10, 0
  local decayed_lr = train.polynomial_decay(lr, step, decay_steps, {cycle = true})
  close(evaluate(decayed_lr), lr)
end)

-- ---- ExponentialDecayTest (natural_exp_decay), InverseDecayTest -------------------------

T.test("ExponentialDecayTest.testDecay", function()
  local initial_lr, k, decay_rate = 0.1, 10, 0.96
  local step = mf.Variable(0, {dtype = "int32"})
  local decayed_lr = train.natural_exp_decay(initial_lr, step, k, decay_rate)
  for i = 0, k do
    close(evaluate(decayed_lr), initial_lr * math.exp(-i / k * decay_rate))
    step:assign_add(1)
  end
end)

T.test("ExponentialDecayTest.testStaircase", function()
  local initial_lr, k, decay_rate = 0.1, 10, 0.96
  local step = mf.Variable(0, {dtype = "int32"})
  local decayed_lr = train.natural_exp_decay(initial_lr, step, k, decay_rate, {staircase = true})
  for i = 0, k do
    close(evaluate(decayed_lr), initial_lr * math.exp(-decay_rate * idiv(i, k)))
    step:assign_add(1)
  end
end)

T.test("InverseDecayTest.testDecay", function()
  local initial_lr, k, decay_rate = 0.1, 10, 0.96
  local step = mf.Variable(0, {dtype = "int32"})
  local decayed_lr = train.inverse_time_decay(initial_lr, step, k, decay_rate)
  for i = 0, k do
    close(evaluate(decayed_lr), initial_lr / (1 + i / k * decay_rate))
    step:assign_add(1)
  end
end)

T.test("InverseDecayTest.testStaircase", function()
  local initial_lr, k, decay_rate = 0.1, 10, 0.96
  local step = mf.Variable(0, {dtype = "int32"})
  local decayed_lr = train.inverse_time_decay(initial_lr, step, k, decay_rate, {staircase = true})
  for i = 0, k do
    close(evaluate(decayed_lr), initial_lr / (1 + decay_rate * idiv(i, k)))
    step:assign_add(1)
  end
end)

-- ---- CosineDecayTest, CosineDecayRestartsTest, LinearCosineDecayTest --------------------

local function np_cosine_decay(step, decay_steps, alpha)
  alpha = alpha or 0.0
  step = math.min(step, decay_steps)
  local completed_fraction = step / decay_steps
  local decay = 0.5 * (1.0 + math.cos(math.pi * completed_fraction))
  return (1.0 - alpha) * decay + alpha
end

T.test("CosineDecayTest.testDecay and testAlpha", function()
  local num_training_steps, initial_lr = 1000, 1.0
  for step = 0, 1499, 250 do
    local decayed_lr = train.cosine_decay(initial_lr, step, num_training_steps)
    close(evaluate(decayed_lr), np_cosine_decay(step, num_training_steps))
    decayed_lr = train.cosine_decay(initial_lr, step, num_training_steps, {alpha = 0.1})
    close(evaluate(decayed_lr), np_cosine_decay(step, num_training_steps, 0.1))
  end
end)

local function np_cosine_decay_restarts(step, decay_steps, t_mul, m_mul, alpha)
  t_mul, m_mul, alpha = t_mul or 2.0, m_mul or 1.0, alpha or 0.0
  local fac = 1.0
  while step >= decay_steps do
    step = step - decay_steps
    decay_steps = decay_steps * t_mul
    fac = fac * m_mul
  end
  local completed_fraction = step / decay_steps
  local decay = fac * 0.5 * (1.0 + math.cos(math.pi * completed_fraction))
  return (1.0 - alpha) * decay + alpha
end

for _, case in ipairs{{"testDecay", {}}, {"testAlpha", {alpha = 0.1}},
                      {"testMMul", {m_mul = 0.9}}, {"testTMul", {t_mul = 1.0}}} do
  T.test("CosineDecayRestartsTest." .. case[1], function()
    local num_training_steps, initial_lr, o = 1000, 1.0, case[2]
    for step = 0, 1499, 250 do
      local decayed_lr = train.cosine_decay_restarts(initial_lr, step, num_training_steps, o)
      close(evaluate(decayed_lr),
            np_cosine_decay_restarts(step, num_training_steps, o.t_mul, o.m_mul, o.alpha))
    end
  end)
end

local function np_linear_cosine_decay(step, decay_steps, alpha, beta, num_periods)
  alpha, beta, num_periods = alpha or 0.0, beta or 0.001, num_periods or 0.5
  step = math.min(step, decay_steps)
  local linear_decayed = (decay_steps - step) / decay_steps
  local fraction = 2.0 * num_periods * step / decay_steps
  local cosine_decayed = 0.5 * (1.0 + math.cos(math.pi * fraction))
  return (alpha + linear_decayed) * cosine_decayed + beta
end

T.test("LinearCosineDecayTest.testDefaultDecay", function()
  local num_training_steps, initial_lr = 1000, 1.0
  for step = 0, 1499, 250 do
    local decayed_lr = train.linear_cosine_decay(initial_lr, step, num_training_steps)
    close(evaluate(decayed_lr), np_linear_cosine_decay(step, num_training_steps))
  end
end)

T.test("LinearCosineDecayTest.testNonDefaultDecay", function()
  local num_training_steps, initial_lr = 1000, 1.0
  for step = 0, 1499, 250 do
    local decayed_lr = train.linear_cosine_decay(initial_lr, step, num_training_steps,
                                                 {alpha = 0.1, beta = 1e-4, num_periods = 5})
    close(evaluate(decayed_lr),
          np_linear_cosine_decay(step, num_training_steps, 0.1, 1e-4, 5))
  end
end)

T.done()
