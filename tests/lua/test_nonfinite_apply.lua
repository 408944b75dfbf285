-- test_nonfinite_apply.lua — apply_gradients' {nonfinite = "error" | "skip" |
-- "apply"} policy (issue #13, item 8), for the five optimizers, in eager
-- mode, in graph mode (a Session) and inside mf.trace: "error" (the
-- default) raises naming the variable and leaves every variable, slot,
-- beta power and the global step as they were; "skip" skips the whole step
-- the same way and succeeds; "apply" writes the NaN (TensorFlow's).
-- Each step has two variables: 'a' with a finite gradient, 'b' with the
-- non-finite one, so a half-done step would show in 'a'.
local T = dofile("tests/lua/harness.lua")

local NAN, INF = 0 / 0, 1 / 0
local makers = {
  {"GradientDescentOptimizer", function() return mf.train.GradientDescentOptimizer(0.1) end},
  {"MomentumOptimizer", function() return mf.train.MomentumOptimizer(0.1, 0.9) end},
  {"AdagradOptimizer", function() return mf.train.AdagradOptimizer(0.1) end},
  {"RMSPropOptimizer", function() return mf.train.RMSPropOptimizer(0.1, {momentum = 0.9}) end},
  {"AdamOptimizer", function() return mf.train.AdamOptimizer(0.1) end},
}

-- Every number of a list of tensors, as one Lua array (NaN compares by text).
local function numbers(ts)
  local out = {}
  for _, t in ipairs(ts) do
    local x = mf.reshape(mf.cast(t, "float64"), {-1})
    for i = 1, x.shape[1] do out[#out + 1] = tostring(x[i]) end
  end
  return table.concat(out, " ")
end

local function has_nan(t)   -- NaN or Inf
  return mf.reduce_sum(mf.cast(mf.logical_not(mf.is_finite(t)), "float32")):item() > 0
end

-- ---- eager ---------------------------------------------------------------------------

-- The state an eager step may change: both variables, their slots, the
-- beta powers and the global step.
local function eager_state(opt, vars, gs)
  local ts = {gs:value()}
  for _, v in ipairs(vars) do
    ts[#ts + 1] = v:value()
    for _, name in ipairs(opt:get_slot_names()) do
      local s = opt:get_slot(v, name)
      if s then ts[#ts + 1] = s:value() end
    end
  end
  for _, v in ipairs(opt:variables()) do ts[#ts + 1] = v:value() end
  return numbers(ts)
end

for _, m in ipairs(makers) do
  local cls, make = m[1], m[2]
  T.test("eager " .. cls .. ": error, skip and apply", function()
    for _, bad in ipairs({NAN, INF}) do
      local opt = make()
      local a = mf.Variable({1, 2}, {name = "a", dtype = "float32"})
      local b = mf.Variable({3, 4}, {name = "b", dtype = "float32"})
      local gs = mf.Variable(0, {name = "step", dtype = "int64", trainable = false})
      local good = {{mf.tensor({0.5, -0.5}, "float32"), a}, {mf.tensor({1, 1}, "float32"), b}}
      local nonf = {{mf.tensor({0.5, -0.5}, "float32"), a}, {mf.tensor({1, bad}, "float32"), b}}
      -- a first NaN step makes no slots either
      opt:apply_gradients(nonf, {global_step = gs, nonfinite = "skip"})
      local names = opt:get_slot_names()
      T.ok(#names == 0 or opt:get_slot(b, names[1]) == nil, "no slot after a skipped first step")
      T.eq(gs:value():item(), 0)
      opt:apply_gradients(good, {global_step = gs})
      local before = eager_state(opt, {a, b}, gs)
      T.raises(function() opt:apply_gradients(nonf, {global_step = gs}) end,
               "apply_gradients: " .. cls .. ": the gradient of variable 'b' (pair 2) holds " ..
               "NaN or Inf; nothing was applied")
      T.eq(eager_state(opt, {a, b}, gs), before, "unchanged after error")
      opt:apply_gradients(nonf, {global_step = gs, nonfinite = "skip"})
      T.eq(eager_state(opt, {a, b}, gs), before, "unchanged after skip")
      T.raises(function() opt:minimize(function() return mf.reduce_sum(b * bad) end) end,
               "the gradient of variable 'b'")
      T.eq(eager_state(opt, {a, b}, gs), before, "unchanged after minimize's error")
      opt:apply_gradients(good, {global_step = gs})
      T.eq(gs:value():item(), 2)
      opt:apply_gradients(nonf, {global_step = gs, nonfinite = "apply"})
      T.ok(has_nan(b:value()), "apply writes the NaN")
      T.eq(gs:value():item(), 3)
    end
    T.raises(function() make():apply_gradients({{mf.ones{1}, mf.Variable({1})}},
                                              {nonfinite = "never"}) end,
             'apply_gradients: nonfinite must be "error", "skip" or "apply", got never')
  end)
end

-- ---- graph mode ----------------------------------------------------------------------

-- A graph with variables a, b, the loss sum(a * 0.5) + sum(b * x) (x fed), the
-- train op of make() with 'opts', and a session that trained one good step.
local function graph_setup(make, opts)
  local g = mf.Graph()
  local t = {}
  g:as_default(function()
    t.a = mf.Variable(mf.tensor({1, 2}, "float32"), {name = "a"})
    t.b = mf.Variable(mf.tensor({3, 4}, "float32"), {name = "b"})
    t.x = mf.placeholder("float32", {2})
    t.gs = mf.train.global_step()
    t.opt = make()
    opts.global_step = t.gs
    t.train = t.opt:minimize(mf.reduce_sum(t.a * 0.5) + mf.reduce_sum(t.b * t.x), opts)
    t.init = mf.global_variables_initializer()
  end)
  t.sess = mf.Session(g)
  t.sess:run(t.init)
  t.sess:run(t.train, {[t.x] = mf.tensor({1, 1}, "float32")})
  local vars = {t.a, t.b}
  for _, v in ipairs({t.a, t.b}) do
    for _, name in ipairs(t.opt:get_slot_names()) do vars[#vars + 1] = t.opt:get_slot(v, name) end
  end
  for _, v in ipairs(t.opt:variables()) do vars[#vars + 1] = v end
  vars[#vars + 1] = t.gs
  t.state = function() return numbers(t.sess:run(vars)) end
  return t
end

for _, m in ipairs(makers) do
  local cls, make = m[1], m[2]
  local short = cls:gsub("Optimizer$", ""):gsub("GradientDescent", "GradientDescent")
  T.test("graph " .. cls .. ": error, skip and apply", function()
    for _, bad in ipairs({NAN, -INF}) do
      local feed_bad = mf.tensor({1, bad}, "float32")
      local t = graph_setup(make, {})
      local before = t.state()
      T.raises(function() t.sess:run(t.train, {[t.x] = feed_bad}) end,
               "/update_b/apply_")
      local ok, err = pcall(t.sess.run, t.sess, t.train, {[t.x] = feed_bad})
      T.ok(not ok and err:find("the gradient holds NaN or Inf", 1, true), err)
      T.eq(t.state(), before, "unchanged after error")
      t.sess:run(t.train, {[t.x] = mf.tensor({1, 1}, "float32")})
      T.ok(t.state() ~= before, "a good step still trains")

      t = graph_setup(make, {nonfinite = "skip"})
      before = t.state()
      t.sess:run(t.train, {[t.x] = feed_bad})
      T.eq(t.state(), before, "unchanged after skip")
      t.sess:run(t.train, {[t.x] = mf.tensor({1, 1}, "float32")})
      T.ok(t.state() ~= before, "a good step after a skipped one trains")
      T.eq(t.sess:run(t.gs):item(), 2)

      t = graph_setup(make, {nonfinite = "apply"})
      t.sess:run(t.train, {[t.x] = feed_bad})
      T.ok(has_nan(t.sess:run(t.b)), "apply writes the NaN")
    end
  end)
end

-- "skip" in a graph trains exactly as eager mode on good steps (the gate is 1).
T.test("graph skip and eager agree on good steps (Adam, RMSProp)", function()
  for _, k in ipairs({4, 5}) do
    local t = graph_setup(makers[k][2], {nonfinite = "skip"})
    t.sess:run(t.train, {[t.x] = mf.tensor({1, NAN}, "float32")})
    t.sess:run(t.train, {[t.x] = mf.tensor({2, -1}, "float32")})
    local opt = makers[k][2]()
    local a = mf.Variable(mf.tensor({1, 2}, "float32"), {name = "a"})
    local b = mf.Variable(mf.tensor({3, 4}, "float32"), {name = "b"})
    opt:apply_gradients({{mf.tensor({0.5, 0.5}, "float32"), a}, {mf.tensor({1, 1}, "float32"), b}})
    opt:apply_gradients({{mf.tensor({0.5, 0.5}, "float32"), a}, {mf.tensor({2, -1}, "float32"), b}})
    T.eq(numbers({t.sess:run(t.a), t.sess:run(t.b)}), numbers({a:value(), b:value()}))
  end
end)

-- ---- inside mf.trace (eager Variables captured by a graph) ------------------------------

for _, m in ipairs(makers) do
  local cls, make = m[1], m[2]
  T.test("mf.trace " .. cls .. ": error and skip leave everything as it was", function()
    for _, policy in ipairs({"error", "skip"}) do
      local opt = make()
      local a = mf.Variable(mf.tensor({1, 2}, "float32"), {name = "a"})
      local b = mf.Variable(mf.tensor({3, 4}, "float32"), {name = "b"})
      local gs = mf.Variable(0, {name = "step", dtype = "int64", trainable = false})
      local step = mf.trace(function(x)
        opt:apply_gradients({{x * 0 + 0.5, a}, {x, b}}, {global_step = gs, nonfinite = policy})
        return x
      end)
      step(mf.tensor({1, 1}, "float32"))
      local before = eager_state(opt, {a, b}, gs)
      if policy == "error" then
        T.raises(function() step(mf.tensor({NAN, 1}, "float32")) end,
                 "the gradient holds NaN or Inf")
      else
        step(mf.tensor({NAN, 1}, "float32"))
      end
      T.eq(eager_state(opt, {a, b}, gs), before, policy .. ": unchanged")
      step(mf.tensor({1, 1}, "float32"))
      T.eq(gs:value():item(), 2)
    end
  end)
end

-- ---- AdamW (lib/) and DistributedOptimizer go through the same apply ------------------------

T.test("AdamW: its weight decay is skipped too", function()
  local opt = mf.train.AdamW(0.1, {weight_decay = 0.1})
  local v = mf.Variable(mf.tensor({1, 2}, "float32"), {name = "v"})
  opt:apply_gradients({{mf.tensor({1, 1}, "float32"), v}})
  local before = numbers({v:value(), opt:get_slot(v, "m"):value()})
  T.raises(function() opt:apply_gradients({{mf.tensor({NAN, 1}, "float32"), v}}) end,
           "apply_gradients: AdamW: the gradient of variable 'v' (pair 1) holds NaN or Inf")
  opt:apply_gradients({{mf.tensor({NAN, 1}, "float32"), v}}, {nonfinite = "skip"})
  T.eq(numbers({v:value(), opt:get_slot(v, "m"):value()}), before)
  opt:apply_gradients({{mf.tensor({1, -INF}, "float32"), v}}, {nonfinite = "skip"})
  T.eq(numbers({v:value(), opt:get_slot(v, "m"):value()}), before)
  -- a huge finite gradient is not mistaken for Inf (its sum would overflow)
  opt:apply_gradients({{mf.tensor({3e38, 3e38}, "float32"), v}})
  T.ok(numbers({v:value(), opt:get_slot(v, "m"):value()}) ~= before, "a finite step was applied")
  local g, x, w, train, sess
  g = mf.Graph()
  g:as_default(function()
    w = mf.Variable(mf.tensor({1, 2}, "float32"), {name = "w"})
    x = mf.placeholder("float32", {2})
    train = mf.train.AdamW(0.1, {weight_decay = 0.1}):minimize(mf.reduce_sum(w * x),
                                                            {nonfinite = "skip"})
  end)
  sess = mf.Session(g)
  sess:run(mf.global_variables_initializer(g))
  sess:run(train, {[x] = mf.tensor({1, NAN}, "float32")})
  T.eq(numbers({sess:run(w)}), numbers({mf.tensor({1, 2}, "float32")}), "graph AdamW skipped")
  sess:run(train, {[x] = mf.tensor({INF, 1}, "float32")})
  T.eq(numbers({sess:run(w)}), numbers({mf.tensor({1, 2}, "float32")}), "Inf skipped too")
end)

-- Inside mf.trace AdamW's decay is gated by Adam's Apply nodes under "error" (one fails
-- the run before any write) and by its own gate under "skip": a NaN step leaves the
-- weights (decay included) and the slots as they were, and the run goes on as eagerly.
T.test("mf.trace AdamW: error and skip leave everything as it was", function()
  for _, policy in ipairs({"error", "skip"}) do
    local function make()
      local opt = mf.train.AdamW(0.1, {weight_decay = 0.1})
      local a = mf.Variable(mf.tensor({1, 2}, "float32"), {name = "a"})
      local b = mf.Variable(mf.tensor({3, 4}, "float32"), {name = "b"})
      local function apply(x)
        opt:apply_gradients({{x * 0 + 0.5, a}, {x, b}}, {nonfinite = policy})
        return x
      end
      local function state()
        local ts = {a:value(), b:value()}
        for _, v in ipairs({a, b}) do
          for _, name in ipairs(opt:get_slot_names()) do
            ts[#ts + 1] = opt:get_slot(v, name):value()
          end
        end
        return numbers(ts)
      end
      return apply, state
    end
    local traced, traced_state = make()
    local eager, eager_state_of = make()
    traced = mf.trace(traced)
    local good, bad = mf.tensor({1, 1}, "float32"), mf.tensor({NAN, 1}, "float32")
    traced(good)
    eager(good)
    local before = traced_state()
    if policy == "error" then
      T.raises(function() traced(bad) end, "the gradient holds NaN or Inf")
    else
      traced(bad)
    end
    T.eq(traced_state(), before, policy .. ": unchanged")
    traced(mf.tensor({2, -1}, "float32"))
    eager(mf.tensor({2, -1}, "float32"))
    T.eq(traced_state(), eager_state_of(), policy .. ": then as eagerly")
  end
end)

-- The traced gate multiplies the rate, not every gradient, by 1/ok, so an
-- Apply op refuses (error) or skips a step whose rate is NaN or Inf as it
-- does a non-finite gradient: here the rate itself, a Variable the trace
-- reads when it runs (eager steps refuse such a rate before any op).
T.test("mf.trace: a rate of NaN or Inf: error and skip change nothing, apply writes", function()
  for _, lr in ipairs({INF, NAN}) do
    for _, m in ipairs(makers) do
      local cls = m[1]
      local v = mf.Variable(mf.tensor({1, 2}, "float32"), {name = "v"})
      local rate = mf.Variable(mf.tensor(0.1, "float32"), {name = "rate"})
      local opt = mf.train[cls](rate, cls == "MomentumOptimizer" and 0.9 or nil)
      local steps = {}
      for _, policy in ipairs({"error", "skip", "apply"}) do
        steps[policy] = mf.trace(function(g)
          opt:apply_gradients({{g, v}}, {nonfinite = policy})
          return g
        end)
      end
      local g = mf.tensor({0.5, -0.25}, "float32")
      steps.skip(g)
      rate:assign(lr)
      local before = numbers({v:value()})
      T.raises(function() steps.error(g) end, "is NaN or Inf")
      T.eq(numbers({v:value()}), before, cls .. ": unchanged after error")
      steps.skip(g)
      T.eq(numbers({v:value()}), before, cls .. ": unchanged after skip")
      steps.apply(g)
      T.ok(has_nan(v:value()), cls .. ": apply writes")
    end
  end
end)

T.test("DistributedOptimizer (one process) applies the policy", function()
  if not (mf.dist and mf.dist.DistributedOptimizer) then return end
  local opt = mf.dist.DistributedOptimizer(mf.train.MomentumOptimizer(0.1, 0.9))
  local v = mf.Variable(mf.tensor({1, 2}, "float32"), {name = "v"})
  T.raises(function() opt:apply_gradients({{mf.tensor({INF, 1}, "float32"), v}}) end,
           "apply_gradients: MomentumOptimizer: the gradient of variable 'v'")
  opt:apply_gradients({{mf.tensor({INF, 1}, "float32"), v}}, {nonfinite = "skip"})
  T.eq(numbers({v:value()}), numbers({mf.tensor({1, 2}, "float32")}))
end)

T.done()
