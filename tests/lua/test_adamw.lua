-- mf.train.AdamW (lib/schedules.lua): a step that Adam refuses changes nothing (issue #35
-- W7: the weight decay was written before Adam checked the step), the error is raised at
-- the caller's line, and the decay uses the weights from before the step in eager and
-- graph mode alike (PyTorch's AdamW: p <- p - lr*wd*p - adam_step).
local T = dofile("tests/lua/harness.lua")

local function fresh()
  return mf.Variable(mf.tensor({1.0, -2.0}, "float64")),
         mf.train.AdamW(0.1, {weight_decay = 0.5})
end

T.test("a refused step leaves the weights and slots as they were", function()
  local w, opt = fresh()
  local g = mf.tensor({0.3, -0.1}, "float64")
  local bad = {
    {function() opt:apply_gradients{{mf.tensor({1, 2, 3}, "float64"), w}} end,
     "apply_gradients: pair 1: gradient (3,) float64 does not fit variable"},
    {function() opt:apply_gradients{{mf.tensor{0.3, -0.1}, w}} end,
     "gradient (2,) float32 does not fit variable"},
    {function() opt:apply_gradients({{g, w}}, {bogus = 1}) end,
     "apply_gradients: unknown option 'bogus'"},
    {function() opt:apply_gradients({{g, w}}, {global_step = 3}) end,
     "apply_gradients: global_step must be a Variable"},
    {function() opt:apply_gradients{{g, w}, {g, "w"}} end,
     "apply_gradients: pair 2: the second element must be a Variable, got string"},
    {function() opt:apply_gradients{{g, w}, 7} end,
     "apply_gradients: pair 2 must be a table {grad, var}, got number"},
  }
  for _, case in ipairs(bad) do
    local ok, err = pcall(case[1])
    T.ok(not ok and err:find(case[2], 1, true), tostring(err))
    -- raised at this file's line, not inside lib/
    T.ok(err:find("^tests/lua/test_adamw%.lua:%d+: "), err)
    T.eq(w, {1.0, -2.0}, 0)
  end
  T.eq(opt:get_slot(w, "m"), nil)
  -- the first accepted step is a first step: p*(1 - lr*wd) - lr*mhat/(sqrt(vhat) + eps')
  opt:apply_gradients{{g, w}}
  local want = {}
  for i, p in ipairs({1.0, -2.0}) do
    local gi = g:totable()[i]
    want[i] = p * (1 - 0.1 * 0.5) - 0.1 * gi / (math.abs(gi) + 1e-8 / math.sqrt(1 - 0.999))
  end
  T.eq(w, want, 1e-12)
end)

T.test("eager and graph steps agree (decay of the weights before the step)", function()
  local grads = {{0.3, -0.1}, {-0.2, 0.4}, {0.05, 0.05}}
  local w, opt = fresh()
  for _, gr in ipairs(grads) do opt:apply_gradients{{mf.tensor(gr, "float64"), w}} end
  local g, sess, train, feed, wg = mf.Graph(), nil, nil, nil, nil
  g:as_default(function()
    wg = mf.Variable(mf.tensor({1.0, -2.0}, "float64"))
    feed = mf.placeholder("float64", {2})
    train = mf.train.AdamW(0.1, {weight_decay = 0.5}):apply_gradients{{feed, wg}}
    sess = mf.Session(g)
    sess:run(mf.global_variables_initializer())
  end)
  for _, gr in ipairs(grads) do sess:run(train, {[feed] = mf.tensor(gr, "float64")}) end
  local graph_w = sess:run(wg)
  T.eq(graph_w, w:totable(), 1e-12)
end)

T.test("nonfinite = \"skip\" skips the decay too; \"error\" writes nothing", function()
  local w, opt = fresh()
  local nan = mf.tensor({0 / 0, 1.0}, "float64")
  opt:apply_gradients({{nan, w}}, {nonfinite = "skip"})
  T.eq(w, {1.0, -2.0}, 0)
  T.raises(function() opt:apply_gradients{{nan, w}} end, "holds NaN or Inf; nothing was applied")
  T.eq(w, {1.0, -2.0}, 0)
end)

T.test("a float32 Variable rate inside mf.trace: the step runs and equals eager", function()
  -- the nonfinite gate is a float64 tensor in graphs; the rate a float32 one
  local function run(traced)
    local w = mf.Variable(mf.tensor({1.0, -2.0}))
    local lr = mf.Variable(mf.tensor(0.1))
    local opt = mf.train.AdamW(lr, {weight_decay = 0.5})
    local step = function(g) opt:apply_gradients{{g, w}} end
    if traced then step = mf.trace(step) end
    for i, g in ipairs({{0.3, -0.1}, {-0.2, 0.4}}) do
      lr:assign(0.1 / i)
      step(mf.tensor(g))
    end
    return w:totable()
  end
  T.eq(run(true), run(false), 0)
end)

-- The decay is part of Adam's Apply op (ApplyAdam's weight_decay input, given as a pair's
-- third element): a traced or graph AdamW step adds no decay nodes (before: a Mul, a Cast
-- and a Sub per decayed weight, three more passes over it), with the same bits as the
-- eager step and as Adam's step followed by w - lr*wd*w_before done by hand.
T.test("the decay is ApplyAdam's input: no decay nodes, the bits of the two ops", function()
  local function setup()
    local a = mf.Variable(mf.tensor({{1.0, -2.0}, {0.5, 3.0}}), {name = "a"})
    local b = mf.Variable(mf.tensor({0.25, -0.75}), {name = "b"})
    local lr = mf.Variable(mf.tensor(0.01), {name = "lr"})
    return a, b, lr, mf.train.AdamW(lr, {weight_decay = 0.1, exclude_from_weight_decay = {b}})
  end
  local ga, gb = mf.tensor({{0.3, -0.1}, {0.2, 0.7}}), mf.tensor({-0.2, 0.4})
  local a, b, lr, opt = setup()
  local step = mf.trace(function(x, y) opt:apply_gradients{{x, a}, {y, b}} end)
  local g = step:graph(ga, gb)
  local count, inputs = {}, {}
  for _, n in ipairs(g:nodes()) do
    local rank = n.outputs[1] and #n.outputs[1].shape or 0
    local key = n.op .. (rank > 0 and " of a weight" or "")   -- not the powers' scalars
    count[key] = (count[key] or 0) + 1
    if n.op == "ApplyAdam" then inputs[n.name:match("update_(%a)")] = #n.inputs end
  end
  T.eq(count["ApplyAdam of a weight"], 2)
  T.eq(inputs.a, 11)
  T.eq(inputs.b, 10)   -- b is excluded: no decay input
  T.eq(count["Sub of a weight"] or 0, 0, nil, "no Sub node: the decay is in the Apply op")
  T.eq(count["Mul of a weight"] or 0, 2, nil, "the finite gate's g * 0 only")
  local ea, eb, elr, eopt = setup()
  local ha, hb, hlr = setup()
  local hadam = mf.train.AdamOptimizer(hlr)
  for i = 1, 3 do
    lr:assign(0.01 / i); elr:assign(0.01 / i); hlr:assign(0.01 / i)
    step(ga * i, gb)
    eopt:apply_gradients{{ga * i, ea}, {gb, eb}}
    local before = ha:value()
    hadam:apply_gradients{{ga * i, ha}, {gb, hb}}
    ha:assign_sub(hlr:value() * 0.1 * before)
  end
  T.eq(a, ea:totable(), 0)
  T.eq(b, eb:totable(), 0)
  T.eq(a, ha:totable(), 0)
  T.eq(b, hb:totable(), 0)
end)

T.test("a clipped gradient's factors go to ApplyAdam: the product is not written, same bits",
       function()
  local function setup()
    local a = mf.Variable(mf.tensor({{1.0, -2.0}, {0.5, 3.0}}), {name = "a"})
    local b = mf.Variable(mf.tensor({0.25, -0.75}), {name = "b"})
    return a, b, mf.train.AdamW(0.01, {weight_decay = 0.1, exclude_from_weight_decay = {b}})
  end
  -- mf.clip_by_global_norm's g * scale, and torch's clip_grad_norm_ as gpt.lua writes it
  local clips = {
    function(x, y) return mf.clip_by_global_norm({x, y}, 1.0) end,
    function(x, y)
      local coef = mf.minimum(1.0 / (mf.global_norm({x, y}) + 1e-6), 1.0)
      return {x * coef, y * coef}
    end,
  }
  local ga, gb = mf.tensor({{0.3, -0.1}, {0.2, 0.7}}), mf.tensor({-0.2, 0.4})
  for _, clip in ipairs(clips) do
    local a, b, opt = setup()
    local step = mf.trace(function(x, y)
      local c = clip(x, y)
      opt:apply_gradients{{c[1], a}, {c[2], b}}
    end)
    local g, inputs, products = step:graph(ga, gb), {}, {}
    for _, n in ipairs(g:nodes()) do
      if n.op == "ApplyAdam" then inputs[n.name:match("update_(%a)")] = n.inputs end
      if n.op == "Mul" and (n.inputs[1] == "arg1:0" or n.inputs[1] == "arg2:0") and
          n.inputs[2] ~= n.inputs[1] then
        products[n.name] = true
      end
    end
    T.eq(#inputs.a, 12, nil, "a: 10 inputs, the decay, the scale")
    T.eq(#inputs.b, 11, nil, "b: 10 inputs, the scale")
    T.eq(inputs.a[10], "arg1:0", nil, "the gradient before the product")
    T.eq(inputs.b[10], "arg2:0")
    T.eq(inputs.a[12], inputs.b[11], nil, "one scale")
    local ran = {}
    for _, r in ipairs(mf.profile(function() step(ga, gb) end):rows()) do
      T.ok(not (r.type == "Mul" and products[r.op]), "the product " .. r.op .. " ran")
      ran[r.label or r.type] = (ran[r.label or r.type] or 0) + 1
    end
    T.eq(ran["Fused[Mul, Mul, Sum]"], 2, nil, "the finite gate reads the product fused")
    local ea, eb, eopt = setup()
    for i = 1, 4 do   -- the eager step writes the product, then applies it
      if i > 1 then step(ga * i, gb) end   -- the first: the profiled run
      local c = clip(ga * i, gb)
      eopt:apply_gradients{{c[1], ea}, {c[2], eb}}
    end
    T.eq(a, ea:totable(), 0)
    T.eq(b, eb:totable(), 0)
  end
end)

T.test("a pair's third element: AdamOptimizer's weight decay, checked", function()
  local w = mf.Variable(mf.tensor({1.0, -2.0}))
  local g = mf.tensor({0.5, 0.5})
  T.raises(function() mf.train.GradientDescentOptimizer(0.1):apply_gradients{{g, w, 0.1}} end,
           "apply_gradients: a weight decay (a pair's third element) is AdamOptimizer's " ..
           "(AdamW), not GradientDescentOptimizer's")
  local adam = mf.train.AdamOptimizer(0.1)
  T.raises(function() adam:apply_gradients{{g, w, "x"}} end,
           "apply_gradients: pair 1: the third element (a weight decay) must be a number or " ..
           "a scalar tensor, got string")
  T.raises(function() adam:apply_gradients{{g, w, mf.tensor({1, 2})}} end,
           "apply_gradients: a weight decay must be a float scalar, got float32 of shape (2,)")
  -- named once: the eager step's prefix is not added to a message that has it
  local _, err = pcall(function() adam:apply_gradients{{g, w, mf.tensor({1, 2})}} end)
  T.ok(not tostring(err):find("apply_gradients: apply_gradients", 1, true), tostring(err))
  T.eq(w, {1.0, -2.0}, 0)
  adam:apply_gradients{{g, w, 0.5}}   -- a number: w - step - 0.5 w
  T.eq(w, {1.0 - 0.1 - 0.5, -2.0 - 0.1 + 1.0}, 1e-6)
end)

T.done()
