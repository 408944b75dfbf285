-- test_adamw_eps.lua — epsilon_placement = "pytorch" (AdamOptimizer, AdamW):
-- PyTorch's Adam step, lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps), against
-- torch.optim.AdamW 1.13 on the same parameters (tests/lua/data/gen_adamw_eps_torch.py
-- printed tests/lua/data/adamw_eps_torch.lua; epsilon 0.05 is large beside the
-- gradients, so TensorFlow's placement misses these numbers), in float64 and
-- float32, eagerly, in a graph and inside mf.trace (bit for bit equal to eager);
-- the option's checks and print(opt).
local T = dofile("tests/lua/harness.lua")
local ref = dofile("tests/lua/data/adamw_eps_torch.lua")

local function make_vars(dtype)
  local vs = {}
  for i, p in ipairs(ref.params) do
    vs[i] = mf.Variable(mf.tensor(p.init, dtype), {name = p.name})
  end
  return vs
end

local function loss_of(vs, dtype)
  local total
  for i, p in ipairs(ref.params) do
    local v = vs[i]
    local l = mf.reduce_sum(mf.tensor(p.k, dtype) * v * v * 0.5 + mf.tensor(p.a, dtype) * v)
    total = total and total + l or l
  end
  return total
end

local function make_opt(placement)
  return mf.train.AdamW(ref.lr, {weight_decay = ref.weight_decay, beta1 = ref.beta1,
                                 beta2 = ref.beta2, epsilon = ref.epsilon,
                                 epsilon_placement = placement,
                                 exclude_from_weight_decay = ref.excluded})
end

-- the largest difference of 'got' (a tensor) from table 'want', relative to the
-- largest magnitude in 'want' (an element crossing zero has no relative error)
local function rel_err(got, want)
  local g, w = got:reshape({-1}):totable(), mf.tensor(want, "float64"):reshape({-1}):totable()
  local scale, worst = 0, 0
  for i = 1, #w do scale = math.max(scale, math.abs(w[i])) end
  for i = 1, #w do worst = math.max(worst, math.abs(g[i] - w[i]) / scale) end
  return worst
end

-- float32: both sides round at every operation, in different orders (torch divides
-- by the bias corrections, moonflow folds them into the rate and epsilon), over 8 steps
local TOL = {float64 = 1e-12, float32 = 2e-6}

local function check(read, dtype, s, what)
  for i, p in ipairs(ref.params) do
    local err = rel_err(read(i), p[dtype][s])
    T.ok(err <= TOL[dtype], string.format("%s %s %s step %d: relative error %.3g", what,
                                          dtype, p.name, s, err))
  end
end

for _, dtype in ipairs({"float64", "float32"}) do
  T.test(dtype .. ": eager steps equal torch.optim.AdamW", function()
    local vs = make_vars(dtype)
    local opt = make_opt("pytorch")
    for s = 1, ref.steps do
      opt:minimize(function() return loss_of(vs, dtype) end)
      check(function(i) return vs[i] end, dtype, s, "eager")
    end
  end)
end

T.test("TensorFlow's placement (the default) does not fit PyTorch's numbers", function()
  for _, placement in ipairs({"tensorflow", false}) do
    local vs = make_vars("float64")
    local opt = make_opt(placement or nil)
    for _ = 1, ref.steps do opt:minimize(function() return loss_of(vs, "float64") end) end
    local err = rel_err(vs[3], ref.params[3].float64[ref.steps])
    T.ok(err > 0.01, "small/w differs by " .. err)
  end
end)

T.test("graph mode: the same trajectory", function()
  local g, sess, train, vs = mf.Graph(), nil, nil, nil
  g:as_default(function()
    vs = make_vars("float64")
    train = make_opt("pytorch"):minimize(loss_of(vs, "float64"))
    sess = mf.Session(g)
    sess:run(mf.global_variables_initializer())
  end)
  for s = 1, ref.steps do
    sess:run(train)
    check(function(i) return sess:run(vs[i]) end, "float64", s, "graph")
  end
end)

T.test("inside mf.trace: equal to eager bit for bit, float64 and float32", function()
  for _, dtype in ipairs({"float64", "float32"}) do
    local eager, traced = make_vars(dtype), make_vars(dtype)
    local eager_opt, traced_opt = make_opt("pytorch"), make_opt("pytorch")
    local step = mf.trace(function()
      traced_opt:minimize(function() return loss_of(traced, dtype) end)
    end)
    for s = 1, ref.steps do
      eager_opt:minimize(function() return loss_of(eager, dtype) end)
      step()
      for i = 1, #eager do
        T.eq(traced[i], eager[i]:totable(), 0, dtype .. " step " .. s)
      end
      check(function(i) return traced[i] end, dtype, s, "traced")
    end
  end
end)

T.test("AdamOptimizer takes it too; a graph tensor epsilon is scaled the same", function()
  -- one step from m = v = 0: mhat = g, vhat = g^2, so the step is lr * g / (|g| + eps)
  local w = mf.Variable(mf.tensor({1.0, -2.0}, "float64"))
  local opt = mf.train.AdamOptimizer(0.1, {epsilon = 0.5, epsilon_placement = "pytorch"})
  opt:apply_gradients{{mf.tensor({0.3, -0.1}, "float64"), w}}
  T.eq(w, {1.0 - 0.1 * 0.3 / 0.8, -2.0 + 0.1 * 0.1 / 0.6}, 1e-15)
  local g, sess, train, eps, wg = mf.Graph(), nil, nil, nil, nil
  g:as_default(function()
    wg = mf.Variable(mf.tensor({1.0, -2.0}, "float64"))
    eps = mf.placeholder("float64", {})
    train = mf.train.AdamOptimizer(0.1, {epsilon = eps, epsilon_placement = "pytorch"})
      :apply_gradients{{mf.tensor({0.3, -0.1}, "float64"), wg}}
    sess = mf.Session(g)
    sess:run(mf.global_variables_initializer())
  end)
  sess:run(train, {[eps] = mf.tensor(0.5, "float64")})
  T.eq(sess:run(wg), w:totable(), 1e-15)
end)

T.test("the option's checks and print(opt)", function()
  T.raises(function() mf.train.AdamOptimizer(0.1, {epsilon_placement = "torch"}) end,
           "AdamOptimizer: option 'epsilon_placement' must be \"tensorflow\" or \"pytorch\", "
           .. "got torch")
  T.raises(function() mf.train.AdamOptimizer(0.1, {epsilon_placement = true}) end,
           "option 'epsilon_placement' must be \"tensorflow\" or \"pytorch\", got true")
  T.raises(function() mf.train.AdamW(0.1, {epsilon_placement = "pytorch\0"}) end,
           "AdamOptimizer: option 'epsilon_placement' must be")
  T.ok(tostring(mf.train.AdamOptimizer(0.1)):find("epsilon=1e-08, epsilon_placement=tensorflow)",
                                                  1, true))
  T.ok(tostring(make_opt("pytorch")):find("epsilon_placement=pytorch", 1, true))
end)

T.done()
