-- test_train.lua — mf.train in eager mode: the five optimizers against a Lua reimplementation of
-- TensorFlow 1.x's formulas over several steps (float64 and float32), minimize == compute+apply,
-- the seed recipes (clip between compute and apply; masked update), trainable = false, slots,
-- global_step, exponential_decay, learning rates as tensors/Variables/functions, and errors.
local T = dofile("tests/lua/harness.lua")

local X = {1.0, -2.0, 0.5}
local Y = {2.0, 1.0, -1.0}
local W0 = {0.3, -0.4, 1.2}

-- loss = sum((w * x - y)^2); its gradient 2 (w x - y) x.
local function grad_of(w)
  local g = {}
  for i = 1, #w do g[i] = 2 * (w[i] * X[i] - Y[i]) * X[i] end
  return g
end

-- Lua reimplementations: step(w, g, state) updates w and state in place.
local rules = {}
function rules.sgd(p) return function(w, g) for i = 1, #w do w[i] = w[i] - p.lr * g[i] end end end
function rules.momentum(p)
  return function(w, g, s)
    s.a = s.a or {0, 0, 0}
    for i = 1, #w do
      s.a[i] = s.a[i] * p.momentum + g[i]
      if p.nesterov then w[i] = w[i] - (g[i] * p.lr + s.a[i] * p.momentum * p.lr)
      else w[i] = w[i] - p.lr * s.a[i] end
    end
  end
end
function rules.adagrad(p)
  return function(w, g, s)
    s.a = s.a or {p.init, p.init, p.init}
    for i = 1, #w do
      s.a[i] = s.a[i] + g[i] ^ 2
      w[i] = w[i] - p.lr * g[i] / math.sqrt(s.a[i])
    end
  end
end
function rules.rmsprop(p)
  return function(w, g, s)
    s.ms = s.ms or {1, 1, 1}; s.mom = s.mom or {0, 0, 0}
    for i = 1, #w do
      s.ms[i] = p.decay * s.ms[i] + (1 - p.decay) * g[i] ^ 2
      s.mom[i] = p.momentum * s.mom[i] + p.lr * g[i] / math.sqrt(s.ms[i] + p.epsilon)
      w[i] = w[i] - s.mom[i]
    end
  end
end
function rules.adam(p)
  return function(w, g, s)
    s.m = s.m or {0, 0, 0}; s.v = s.v or {0, 0, 0}; s.t = (s.t or 0) + 1
    local lr_t = p.lr * math.sqrt(1 - p.beta2 ^ s.t) / (1 - p.beta1 ^ s.t)
    for i = 1, #w do
      s.m[i] = p.beta1 * s.m[i] + (1 - p.beta1) * g[i]
      s.v[i] = p.beta2 * s.v[i] + (1 - p.beta2) * g[i] ^ 2
      w[i] = w[i] - lr_t * s.m[i] / (math.sqrt(s.v[i]) + p.epsilon)
    end
  end
end

local cases = {
  {"GradientDescentOptimizer", {0.05}, rules.sgd{lr = 0.05}},
  {"MomentumOptimizer", {0.05, 0.9}, rules.momentum{lr = 0.05, momentum = 0.9}},
  {"MomentumOptimizer", {0.05, 0.9, {use_nesterov = true}},
   rules.momentum{lr = 0.05, momentum = 0.9, nesterov = true}},
  {"AdagradOptimizer", {0.1}, rules.adagrad{lr = 0.1, init = 0.1}},
  {"AdagradOptimizer", {0.1, {initial_accumulator_value = 0.5}}, rules.adagrad{lr = 0.1, init = 0.5}},
  {"RMSPropOptimizer", {0.01}, rules.rmsprop{lr = 0.01, decay = 0.9, momentum = 0, epsilon = 1e-10}},
  {"RMSPropOptimizer", {0.01, {decay = 0.8, momentum = 0.5, epsilon = 1e-6}},
   rules.rmsprop{lr = 0.01, decay = 0.8, momentum = 0.5, epsilon = 1e-6}},
  {"AdamOptimizer", {0.1}, rules.adam{lr = 0.1, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8}},
  {"AdamOptimizer", {0.05, {beta1 = 0.5, beta2 = 0.9, epsilon = 1e-4}},
   rules.adam{lr = 0.05, beta1 = 0.5, beta2 = 0.9, epsilon = 1e-4}},
}

local function loss_of(w, x, y)
  return function() return mf.reduce_sum(mf.square(w * x - y)) end
end

for _, c in ipairs(cases) do
  for _, dt in ipairs{"float64", "float32"} do
    T.test(c[1] .. " " .. dt .. " follows the TF1 formula", function()
      local w = mf.Variable(W0, {dtype = dt, name = "w"})
      local x, y = mf.tensor(X, dt), mf.tensor(Y, dt)
      local opt = mf.train[c[1]](table.unpack(c[2]))
      local ref, state = {table.unpack(W0)}, {}
      for _ = 1, 6 do
        opt:minimize(loss_of(w, x, y))
        c[3](ref, grad_of(ref), state)
        T.eq(w, ref, dt == "float64" and 1e-12 or 2e-5)
      end
    end)
  end
end

T.test("minimize == compute_gradients + apply_gradients; pairs", function()
  local w1 = mf.Variable(W0, {name = "w"})
  local w2 = mf.Variable(W0, {name = "w"})
  local x, y = mf.tensor(X), mf.tensor(Y)
  local o1, o2 = mf.train.AdamOptimizer(0.1), mf.train.AdamOptimizer(0.1)
  for _ = 1, 4 do
    local l1 = o1:minimize(loss_of(w1, x, y))
    local gv, l2 = o2:compute_gradients(loss_of(w2, x, y))
    T.eq(#gv, 1); T.eq(gv.n, 1); T.ok(rawequal(gv[1][2], w2) or gv[1][2].name == "w")
    T.eq(gv[1][1], mf.tensor(grad_of(w2:totable())), 1e-5)
    T.eq(l1, l2)
    o2:apply_gradients(gv)
    T.eq(w1, w2)
  end
end)

T.test("var_list, nil gradients kept, trainable=false never changes", function()
  local a = mf.Variable({1, 2}, {name = "a"})
  local b = mf.Variable({3, 4}, {name = "b"})
  local frozen = mf.Variable({5, 6}, {name = "frozen", trainable = false})
  local unused = mf.Variable({7}, {name = "unused"})
  local f = function() return mf.reduce_sum(a * b + frozen) end
  local opt = mf.train.GradientDescentOptimizer(0.5)
  local gv = opt:compute_gradients(f)
  T.eq(#gv, 2); T.eq(gv[1][2].name, "a"); T.eq(gv[2][2].name, "b")   -- creation order
  gv = opt:compute_gradients(f, {var_list = {b, unused, frozen}})
  T.eq(gv.n, 3); T.eq(gv[1][1], {1, 2}); T.eq(gv[2][1], nil); T.eq(gv[2].n, 2)
  T.eq(gv[3][1], nil); T.eq(gv[3][2].name, "frozen")
  opt:apply_gradients(gv)                                          -- nil gradients skipped
  T.eq(b, {2.5, 3}); T.eq(unused, {7}); T.eq(frozen, {5, 6})
  for _ = 1, 3 do opt:minimize(f) end
  T.eq(frozen, {5, 6})
  T.raises(function() opt:minimize(function() return mf.reduce_sum(frozen) end) end,
           "No gradients provided for any variable")                -- nothing to train (TF1)
end)

T.test("seed recipe: clip between compute and apply", function()
  local w = mf.Variable({3, 4}, {name = "w"})
  local opt = mf.train.GradientDescentOptimizer(1)
  local gv = opt:compute_gradients(function() return mf.reduce_sum(w * w) * 5 end)  -- g = 10 w
  T.eq(gv[1][1], {30, 40})
  for i, p in ipairs(gv) do gv[i] = {mf.clip_by_norm(p[1], 5), p[2]} end
  opt:apply_gradients(gv)
  T.eq(w, {0, 0}, 1e-6)                                     -- clipped gradient (3, 4)
  -- clip_by_global_norm between compute and apply
  local u = mf.Variable({1, 0}, {name = "u"})
  local v = mf.Variable({0, 1}, {name = "v"})
  gv = opt:compute_gradients(function() return mf.reduce_sum(u * 3 + v * 4) end)
  local grads = {}
  for i, p in ipairs(gv) do grads[i] = p[1] end
  local clipped, norm = mf.clip_by_global_norm(grads, 1)
  T.eq(norm:item(), 5 * math.sqrt(2), 1e-5)
  for i, p in ipairs(gv) do gv[i] = {clipped[i], p[2]} end
  opt:apply_gradients(gv)
  T.eq(u, {1 - 3 / (5 * math.sqrt(2)), -3 / (5 * math.sqrt(2))}, 1e-6)
end)

T.test("seed recipe: masked partial update", function()
  local w = mf.Variable({1, 1, 1, 1}, {name = "w"})
  local mask = mf.tensor{1, 0, 1, 0}
  local opt = mf.train.MomentumOptimizer(0.1, 0.9)
  for _ = 1, 3 do
    local gv = opt:compute_gradients(function() return mf.reduce_sum(w * w) end)
    for i, p in ipairs(gv) do gv[i] = {p[1] * mask, p[2]} end
    opt:apply_gradients(gv)
  end
  local t = w:totable()
  T.eq(t[2], 1); T.eq(t[4], 1); T.ok(t[1] < 1 and t[3] < 1)
  T.eq(opt:get_slot(w, "momentum"):totable()[2], 0)
end)

T.test("slots: names, values, printing", function()
  local w = mf.Variable({1, 2}, {name = "w"})
  local function names(o) return table.concat(o:get_slot_names(), ",") end
  T.eq(names(mf.train.GradientDescentOptimizer(1)), "")
  T.eq(names(mf.train.MomentumOptimizer(1, 0.9)), "momentum")
  T.eq(names(mf.train.AdagradOptimizer(1)), "accumulator")
  T.eq(names(mf.train.RMSPropOptimizer(1)), "rms,momentum")
  local adam = mf.train.AdamOptimizer(0.1)
  T.eq(names(adam), "m,v")
  T.eq(adam:get_slot(w, "m"), nil)                           -- before the first apply
  adam:minimize(function() return mf.reduce_sum(w * w) end)  -- g = (2, 4)
  local m, v = adam:get_slot(w, "m"), adam:get_slot(w, "v")
  T.eq(m.name, "w/Adam"); T.eq(v.name, "w/Adam_1"); T.eq(m.trainable, false)
  -- TensorFlow's kernel computes 1 - beta2 in float32 (0.00099998713...), so v is a few
  -- ulps under the exact 0.016
  T.eq(m, {0.2, 0.4}, 1e-6); T.eq(v, {0.004, 0.016}, 1e-6)
  T.ok(tostring(m):find("w/Adam", 1, true))
  T.ok(tostring(adam):find("AdamOptimizer(learning_rate=0.1", 1, true))
  T.ok(tostring(adam):find("for 1 variables", 1, true))
  T.eq(adam:get_name(), "Adam")
  T.eq(mf.train.AdamOptimizer(0.1, {name = "A2"}):get_name(), "A2")
  local rms = mf.train.RMSPropOptimizer(0.1)
  rms:minimize(function() return mf.reduce_sum(w) end)
  T.eq(rms:get_slot(w, "rms"), {0.1 + 0.9, 0.1 + 0.9}, 1e-6)   -- starts at ones: 0.9*1 + 0.1*1
  T.eq(rms:get_slot(w, "momentum").name, "w/RMSProp_1")
  local ada = mf.train.AdagradOptimizer(0.1, {initial_accumulator_value = 0.25})
  ada:minimize(function() return mf.reduce_sum(w) end)
  T.eq(ada:get_slot(w, "accumulator"), {1.25, 1.25})
  T.raises(function() adam:get_slot(w, "accumulator") end,
           'get_slot: AdamOptimizer has slots "m" and "v", got "accumulator"')
  T.raises(function() mf.train.GradientDescentOptimizer(1):get_slot(w, "m") end, "has no slots")
end)

T.test("global_step", function()
  local gs = mf.train.global_step()
  T.ok(rawequal(gs, mf.train.global_step()))
  T.eq(gs.name, "global_step"); T.eq(gs.dtype, "int64"); T.eq(gs.trainable, false)
  local start = gs:item()
  local w = mf.Variable({1.0}, {name = "w"})
  local opt = mf.train.GradientDescentOptimizer(0.1)
  for _ = 1, 3 do opt:minimize(function() return mf.reduce_sum(w * w) end, {global_step = gs}) end
  T.eq(gs:item(), start + 3)
  local gv = opt:compute_gradients(function() return mf.reduce_sum(w) end)
  opt:apply_gradients(gv, {global_step = gs})
  T.eq(gs:item(), start + 4)
  local mine = mf.Variable(mf.tensor(0, "int32"), {trainable = false})
  opt:apply_gradients(gv, {global_step = mine})
  T.eq(mine:item(), 1)
end)

T.test("exponential_decay and decaying learning rates", function()
  local step = mf.Variable(mf.tensor(0, "int64"), {trainable = false})
  local lr = mf.train.exponential_decay(0.1, step, 10, 0.5)
  T.eq(lr():item(), 0.1, 1e-7)
  step:assign(mf.tensor(5, "int64"))
  T.eq(lr():item(), 0.1 * 0.5 ^ 0.5, 1e-7)
  local stair = mf.train.exponential_decay(0.1, step, 10, 0.5, {staircase = true})
  T.eq(stair():item(), 0.1, 1e-7)
  step:assign(mf.tensor(25, "int64"))
  T.eq(stair():item(), 0.025, 1e-7)
  T.eq(mf.train.exponential_decay(0.1, step, 10, 0.5, true)():item(), 0.025, 1e-7)
  -- an optimizer with a callable rate reads it at every apply
  step:assign(mf.tensor(0, "int64"))
  local w = mf.Variable({0.0}, {name = "w"})
  local opt = mf.train.GradientDescentOptimizer(mf.train.exponential_decay(1, step, 1, 0.5))
  local ref = 0
  for k = 0, 3 do
    opt:minimize(function() return mf.reduce_sum(w) end, {global_step = step})   -- g = 1
    ref = ref - 0.5 ^ k
    T.eq(w, {ref}, 1e-6)
  end
  T.ok(tostring(opt):find("<function>", 1, true))
  -- a Variable rate
  local rate = mf.Variable(0.5, {trainable = false, name = "lr"})
  local o2 = mf.train.GradientDescentOptimizer(rate)
  local u = mf.Variable({0.0}, {name = "u"})
  o2:minimize(function() return mf.reduce_sum(u) end)
  rate:assign(0.25)
  o2:minimize(function() return mf.reduce_sum(u) end)
  T.eq(u, {-0.75})
  T.ok(tostring(o2):find("<Variable 'lr'>", 1, true))
  -- a float64 tensor rate on a float32 variable
  mf.train.GradientDescentOptimizer(mf.tensor(0.5, "float64"))
    :minimize(function() return mf.reduce_sum(u) end)
  T.eq(u, {-1.25})
end)

T.test("errors", function()
  local w = mf.Variable({1, 2}, {name = "w"})
  local opt = mf.train.GradientDescentOptimizer(0.1)
  T.raises(function() mf.train.GradientDescentOptimizer(0) end,
           "GradientDescentOptimizer: learning_rate must be > 0, got 0")
  T.raises(function() mf.train.AdamOptimizer(-1) end, "learning_rate must be > 0")
  T.raises(function() mf.train.AdamOptimizer("x") end, "learning_rate must be a number")
  T.raises(function() mf.train.AdamOptimizer(mf.tensor{1, 2}) end, "must be a scalar")
  T.raises(function() mf.train.AdamOptimizer(0.1, {beta1 = 1}) end,
           "AdamOptimizer: beta1 must be in [0, 1), got 1")
  T.raises(function() mf.train.AdamOptimizer(0.1, {bta1 = 0.5}) end,
           "AdamOptimizer: unknown option 'bta1'")
  T.raises(function() mf.train.MomentumOptimizer(0.1) end, "momentum is required")
  T.raises(function() mf.train.MomentumOptimizer(0.1, "x") end, "momentum must be a number")
  T.raises(function() mf.train.MomentumOptimizer(0.1, -1) end, "momentum must be in [0, inf]")
  T.raises(function() mf.train.AdagradOptimizer(0.1, {initial_accumulator_value = 0}) end,
           "initial_accumulator_value must be > 0")
  T.raises(function() mf.train.RMSPropOptimizer(0.1, {decay = 2}) end, "decay must be in [0, 1]")
  T.raises(function() opt:minimize(mf.reduce_sum(w)) end,
           "minimize: in eager mode the loss must be a function of no arguments")
  T.raises(function() opt:minimize(function() return 3 end) end,
           "minimize: the loss function must return a tensor, got number")
  T.raises(function() opt:compute_gradients(function() return {} end) end,
           "compute_gradients: the loss function must return a tensor, got table")
  T.raises(function() opt:minimize(function() error("boom") end) end, "boom")
  T.raises(function() opt:minimize(function() return mf.reduce_sum(w) end, {var_list = {w, 3}}) end,
           "minimize: var_list[2] must be a Variable, got number")
  T.raises(function() opt:compute_gradients(function() return w end, {var_list = {mf.tensor{1}}}) end,
           "compute_gradients: var_list[1] must be a Variable, got mf.Tensor")
  T.raises(function() opt:apply_gradients(5) end, "expected an array of {grad, var} pairs")
  T.raises(function() opt:apply_gradients({w}) end, "pair 1 must be a table {grad, var}")
  T.raises(function() opt:apply_gradients({{mf.tensor{1, 1}, mf.tensor{1, 1}}}) end,
           "pair 1: the second element must be a Variable, got mf.Tensor")
  T.raises(function() opt:apply_gradients({{"g", w}}) end, "the gradient must be a tensor or nil")
  T.raises(function() opt:apply_gradients({{mf.tensor{1, 2, 3}, w}}) end,
           "apply_gradients: pair 1: gradient (3,) float32 does not fit variable 'w' (2,) float32")
  T.raises(function() opt:apply_gradients({{mf.tensor({1, 2}, "float64"), w}}) end, "does not fit")
  local iv = mf.Variable(mf.tensor({1, 2}, "int32"), {name = "iv"})
  T.raises(function() opt:apply_gradients({{mf.tensor({1, 2}, "int32"), iv}}) end,
           "variable 'iv' (pair 1) has dtype int32")
  T.raises(function() opt:apply_gradients({{mf.tensor{1, 1}, w}}, {global_step = w}) end,
           "global_step must be a scalar int64 or int32 Variable")
  T.raises(function() opt:apply_gradients({{mf.tensor{1, 1}, w}}, {global_step = 3}) end,
           "global_step must be a Variable")
  T.eq(w, {1, 2})                                          -- nothing changed by the failures
  local bad = mf.train.GradientDescentOptimizer(function() return -1 end)
  T.raises(function() bad:minimize(function() return mf.reduce_sum(w) end) end,
           "learning_rate must be finite and >= 0, got -1")
  T.raises(function() mf.train.exponential_decay(0.1, 0, 0, 0.5) end, "decay_steps must be > 0")
  T.raises(function() mf.train.exponential_decay(0.1, 0, 10, -1) end, "decay_rate must be > 0")
  T.raises(function() mf.train.exponential_decay("a", 0, 10, 0.5) end, "learning_rate must be")
end)

-- The help examples of mf.train run and print what they say (test_shell checks only the
-- doc/api.md names it lists).
T.test("help examples of mf.train", function()
  local help_text = T.help_text
  local function show(v)
    if type(v) == "userdata" and v.totable then v = v:totable() end
    if type(v) == "table" then
      local parts = {}
      for i = 1, #v do parts[i] = show(v[i]) end
      return "{" .. table.concat(parts, ", ") .. "}"
    end
    return tostring(v)
  end
  local function nums(s) local t = {} for x in s:gmatch("%-?[%d.]+e?%-?%d*") do t[#t + 1] = tonumber(x) end return t end
  for _, name in ipairs{"GradientDescentOptimizer", "MomentumOptimizer", "AdagradOptimizer",
                        "RMSPropOptimizer", "AdamOptimizer", "Optimizer", "global_step",
                        "exponential_decay"} do
    local text = help_text("train." .. name)
    T.ok(text:find("Example:", 1, true), "no help for train." .. name)
    local env, lines, inside = setmetatable({}, {__index = _G}), {}, false
    for line in (text .. "\n"):gmatch("(.-)\n") do
      if line:find("^  Example:") then inside = true
      elseif inside and line:find("^    ") then lines[#lines + 1] = line:sub(5)
      elseif inside then break end
    end
    for _, line in ipairs(lines) do
      local code, want = line:match("^(.-)%s*%-%->%s*(.-)%s*$")
      code = code or line
      local f = load("return " .. code, "=ex", "t", env) or assert(load(code, "=ex", "t", env))
      local res = table.pack(f())
      if want then
        local got = show(res[1])
        T.eq(got:gsub("[%d.e%-]+", "#"), want:gsub("[%d.e%-]+", "#"), nil, name .. ": " .. code)
        T.eq(nums(got), nums(want), 1e-3, name .. ": " .. code)
      end
    end
  end
end)

T.test("clipping edge cases (documented in help)", function()
  T.eq(mf.clip_by_norm(mf.tensor{0, 0}, 1), {0, 0})                   -- zero norm: unchanged
  T.eq(mf.clip_by_norm(mf.tensor{3, 4}, math.huge), {3, 4})           -- infinite clip: none
  local c, n = mf.clip_by_global_norm({mf.tensor{3, 4}, nil, mf.tensor{12}}, math.huge)
  T.eq(c[1], {3, 4}); T.eq(c[2], nil); T.eq(c[3], {12}); T.eq(n:item(), 13)
  c, n = mf.clip_by_global_norm({mf.tensor{0, 0}}, 1)
  T.eq(c[1], {0, 0}); T.eq(n:item(), 0)
  c, n = mf.clip_by_global_norm({mf.tensor{1 / 0, 0}, mf.tensor{1}}, 1)  -- TensorFlow: NaN
  T.eq(c[1], {0 / 0, 0 / 0}); T.eq(c[2], {0 / 0}); T.eq(n:item(), math.huge)
  c = mf.clip_by_global_norm({mf.tensor{0 / 0}}, 1, {nonfinite = "nan"})
  T.eq(c[1], {0 / 0})
  T.raises(function() mf.clip_by_global_norm({mf.tensor{1 / 0, 0}}, 1, {nonfinite = "error"}) end,
           'clip_by_global_norm: the global norm is inf (a gradient diverged) and nonfinite = "error"')
  T.raises(function() mf.clip_by_global_norm({mf.tensor{1}}, 1, {nonfinite = "skip"}) end,
           'nonfinite must be "nan" or "error", got skip')
  c = mf.clip_by_global_norm({mf.tensor{3, 4}}, 1, {nonfinite = "error"})  -- finite: as usual
  T.eq(c[1], {0.6, 0.8}, 1e-6)
end)

T.test("exponential_decay (lib/schedules.lua) keeps the rules of the C version", function()
  -- tests/unit/test_optimizer.c's cases of the C function it replaced
  local lr, step = mf.tensor(0.1, "float64"), mf.tensor(25, "int64")
  local r = mf.train.exponential_decay(lr, step, 10, 0.5)()
  T.eq(r.dtype, "float64")
  T.eq(r:item(), 0.1 * 0.5 ^ 2.5, 1e-15)
  T.eq(mf.train.exponential_decay(lr, step, 10, 0.5, {staircase = true})():item(), 0.025, 1e-15)
  T.raises(function() mf.train.exponential_decay(step, step, 10, 0.5) end,
           "exponential_decay: learning_rate must be a float scalar, got a int64 tensor of rank 0")
  T.raises(function() mf.train.exponential_decay(0.1, 1, 10, 0) end,
           "exponential_decay: decay_rate must be > 0, got 0")
  T.raises(function() mf.train.exponential_decay(0.1, 2.5, 10, 0.5) end,
           "exponential_decay: the number 2.5 is not an integer")
  T.raises(function() mf.train.exponential_decay(0.1, 1, nil, 0.5) end,
           "bad argument #3 to 'exponential_decay' (number expected, got nil)")
  T.raises(function() mf.train.exponential_decay(0.1, 1, 10, 0.5, {staircase = 1}) end,
           "exponential_decay: option 'staircase' must be a boolean, got number")
  T.raises(function() mf.train.exponential_decay(0.1, 1, 10, 0.5, {}, 6) end,
           "bad argument #6 to 'exponential_decay'")
  -- a number or an eager step: a function read at every step; a graph's step: a tensor
  T.eq(type(mf.train.exponential_decay(0.1, 1, 10, 0.5)), "function")
  T.eq(type(mf.train.exponential_decay(0.1, step, 10, 0.5)), "function")
  local ev = mf.Variable(mf.tensor(3, "int64"), {trainable = false})
  local g = mf.Graph()
  g:as_default(function()
    local t = mf.train.exponential_decay(0.1, mf.placeholder("int64", {}, "step"), 10, 0.5)
    T.ok(type(t) == "userdata" and t.name, "a graph tensor")
    T.eq(type(mf.train.exponential_decay(0.1, ev, 10, 0.5)), "function", nil, "an eager step")
  end)
end)

T.done()
