-- test_lion.lua — mf.train.LionOptimizer (one descriptor entry in
-- train/opt_classes.c plus its kernel ApplyLion in core/ops/apply.c) against
-- the update of Chen et al. 2023's Algorithm 2 written out in numpy
-- (tests/lua/data/gen_lion_numpy.py printed tests/lua/data/lion_numpy.lua):
-- eager, in a graph and inside mf.trace, float64 and float32; its slot,
-- defaults and argument checks.
local T = dofile("tests/lua/harness.lua")
local ref = dofile("tests/lua/data/lion_numpy.lua")

local function opt_of(case)
  return mf.train.LionOptimizer(case.lr, {beta1 = case.beta1, beta2 = case.beta2,
                                          weight_decay = case.weight_decay})
end

local function tol(case) return case.dtype == "float64" and 1e-12 or 1e-6 end

-- loss = sum(k * w^2 / 2 + a * w): the gradient is k * w + a
local function loss_of(w, dt)
  local k, a = mf.tensor(ref.k, dt), mf.tensor(ref.a, dt)
  return mf.reduce_sum(k * w * w * 0.5 + a * w)
end

T.test("eager steps follow the paper's update (numpy reference)", function()
  for _, case in ipairs(ref.cases) do
    local w = mf.Variable(mf.tensor(ref.w0, case.dtype), {name = "w"})
    local opt = opt_of(case)
    for s = 1, ref.steps do
      opt:minimize(function() return loss_of(w, case.dtype) end)
      T.eq(w, case.w[s], tol(case), case.dtype .. " w, step " .. s)
      T.eq(opt:get_slot(w, "m"), case.m[s], tol(case), case.dtype .. " m, step " .. s)
    end
  end
end)

T.test("graph mode: the train op's Apply nodes give the same trajectory", function()
  for _, case in ipairs(ref.cases) do
    local g, sess, train, w = mf.Graph(), nil, nil, nil
    g:as_default(function()
      w = mf.Variable(mf.tensor(ref.w0, case.dtype), {name = "w"})
      train = opt_of(case):minimize(loss_of(w, case.dtype))
      sess = mf.Session(g)
      sess:run(mf.global_variables_initializer())
    end)
    T.ok(tostring(g):find("ApplyLion"), "an ApplyLion node")
    for s = 1, ref.steps do
      sess:run(train)
      T.eq(sess:run(w), case.w[s], tol(case), "graph " .. case.dtype .. " step " .. s)
    end
  end
end)

T.test("inside mf.trace: the traced step is the eager one", function()
  local case = ref.cases[2]
  local w = mf.Variable(mf.tensor(ref.w0, case.dtype), {name = "w"})
  local opt = opt_of(case)
  local step = mf.trace(function()
    opt:minimize(function() return loss_of(w, case.dtype) end)
    return w:read_value()
  end)
  for s = 1, ref.steps do
    step()
    T.eq(w, case.w[s], tol(case), "traced step " .. s)
  end
end)

T.test("defaults, slot and print", function()
  local opt = mf.train.LionOptimizer()
  local text = tostring(opt)
  T.ok(text:find("LionOptimizer(learning_rate=0.001, beta1=0.9, beta2=0.99, weight_decay=0)",
                 1, true), text)
  T.ok(text:find("slots: m", 1, true), text)
  local w = mf.Variable(mf.tensor({1.0, -1.0}, "float64"))
  opt:apply_gradients{{mf.tensor({0.5, 0.0}, "float64"), w}}
  -- c = 0.1 * g: sign 1 and 0; Keras 3's default rate 0.001, no decay
  T.eq(w, {1.0 - 1e-3, -1.0}, 1e-15)
  T.eq(opt:get_slot(w, "m"), {0.005, 0}, 1e-15)
  T.raises(function() opt:get_slot(w, "v") end, "get_slot: LionOptimizer has slots \"m\"")
end)

T.test("hyperparameters are checked as the constructor's", function()
  T.raises(function() mf.train.LionOptimizer(0.1, {beta1 = 1}) end,
           "LionOptimizer: beta1 must be in [0, 1), got 1")
  T.raises(function() mf.train.LionOptimizer(0.1, {weight_decay = -1}) end,
           "LionOptimizer: weight_decay must be in [0, inf], got -1")
  T.raises(function() mf.train.LionOptimizer(0.1, {epsilon = 1}) end,
           "LionOptimizer: unknown option 'epsilon'")
  T.raises(function() mf.train.LionOptimizer(-1) end, "LionOptimizer: learning_rate must be > 0")
end)

T.done()
