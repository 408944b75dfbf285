-- test_train_graph.lua — training in graph mode and its agreement with eager mode:
-- every optimizer's trajectory in both modes (float32 and float64) against the
-- TensorFlow 1.x formulas computed here; minimize == compute + apply; clipping between
-- compute and apply; a masked update; trainable = false; slots and the global step as
-- graph variables; a decaying learning rate; the graph Saver; linear regression reaching
-- the same loss in both modes for every optimizer; and a save/restore in a fresh
-- moonflow process that continues training exactly, in both modes.
local T = dofile("tests/lua/harness.lua")

local W0 = {0.3, -0.4, 1.2}
local C = {1.0, 2.0, 0.5}
local STEPS = 5

-- The optimizers under test: constructor, hyperparameters, TF1 formula.
local SPECS = {
  {name = "sgd", make = function() return mf.train.GradientDescentOptimizer(0.1) end},
  {name = "momentum", make = function() return mf.train.MomentumOptimizer(0.1, 0.9) end},
  {name = "nesterov", make = function()
    return mf.train.MomentumOptimizer(0.1, 0.9, {use_nesterov = true}) end},
  {name = "adagrad", make = function() return mf.train.AdagradOptimizer(0.1) end},
  {name = "rmsprop", make = function()
    return mf.train.RMSPropOptimizer(0.01, {decay = 0.9, momentum = 0.5, epsilon = 1e-10}) end},
  {name = "adam", make = function() return mf.train.AdamOptimizer(0.1) end},
}

-- TF1's update for one step of 'name' on w (array) with gradient g; 's' holds slots.
local function ref_step(name, w, g, s)
  s.t = (s.t or 0) + 1
  for i = 1, #w do
    local gi = g[i]
    if name == "sgd" then
      w[i] = w[i] - 0.1 * gi
    elseif name == "momentum" or name == "nesterov" then
      s.a = s.a or {0, 0, 0}
      s.a[i] = s.a[i] * 0.9 + gi
      if name == "nesterov" then w[i] = w[i] - (gi * 0.1 + s.a[i] * 0.9 * 0.1)
      else w[i] = w[i] - 0.1 * s.a[i] end
    elseif name == "adagrad" then
      s.a = s.a or {0.1, 0.1, 0.1}
      s.a[i] = s.a[i] + gi * gi
      w[i] = w[i] - 0.1 * gi / math.sqrt(s.a[i])
    elseif name == "rmsprop" then
      s.ms = s.ms or {1, 1, 1}; s.mom = s.mom or {0, 0, 0}
      s.ms[i] = s.ms[i] + (gi * gi - s.ms[i]) * (1 - 0.9)
      s.mom[i] = s.mom[i] * 0.5 + 0.01 * gi / math.sqrt(s.ms[i] + 1e-10)
      w[i] = w[i] - s.mom[i]
    else
      s.m = s.m or {0, 0, 0}; s.v = s.v or {0, 0, 0}
      local lr_t = 0.1 * math.sqrt(1 - 0.999 ^ s.t) / (1 - 0.9 ^ s.t)
      s.m[i] = s.m[i] + (gi - s.m[i]) * (1 - 0.9)
      s.v[i] = s.v[i] + (gi * gi - s.v[i]) * (1 - 0.999)
      w[i] = w[i] - lr_t * s.m[i] / (math.sqrt(s.v[i]) + 1e-8)
    end
  end
end

-- loss = sum(c * w * w), gradient 2 c w
local function reference(name)
  local w, s, out = {W0[1], W0[2], W0[3]}, {}, {}
  for t = 1, STEPS do
    local g = {}
    for i = 1, 3 do g[i] = 2 * C[i] * w[i] end
    ref_step(name, w, g, s)
    out[t] = {w[1], w[2], w[3]}
  end
  return out
end

local function eager_run(spec, dtype)
  local w = mf.Variable(mf.tensor(W0, dtype), {name = "w"})
  local c = mf.tensor(C, dtype)
  local opt, out = spec.make(), {}
  for t = 1, STEPS do
    opt:minimize(function() return mf.reduce_sum(c * w * w) end)
    out[t] = w:read_value():totable()
  end
  return out, opt, w
end

-- Builds the same problem in a new graph; returns a table of its pieces.
local function graph_model(spec, dtype, fn)
  local m = {g = mf.Graph()}
  m.g:as_default(function()
    m.w = mf.Variable(mf.tensor(W0, dtype), {name = "w"})
    m.loss = mf.reduce_sum(mf.tensor(C, dtype) * m.w * m.w)
    m.opt = spec.make()
    m.train = (fn or function(mm) return mm.opt:minimize(mm.loss) end)(m)
    m.init = mf.global_variables_initializer()
  end)
  m.sess = mf.Session(m.g)
  m.sess:run(m.init)
  return m
end

local function graph_run(spec, dtype, fn)
  local m, out = graph_model(spec, dtype, fn), {}
  for t = 1, STEPS do
    m.sess:run(m.train)
    out[t] = m.sess:run(m.w):totable()
  end
  return out, m
end

T.test("every optimizer: eager == graph, both == TF1 formulas (float32, float64)", function()
  for _, spec in ipairs(SPECS) do
    local ref = reference(spec.name)
    for _, dtype in ipairs{"float32", "float64"} do
      local e = eager_run(spec, dtype)
      local g = graph_run(spec, dtype)
      T.eq(g, e, 0, spec.name .. " " .. dtype .. " graph vs eager")
      T.eq(e, ref, dtype == "float64" and 1e-12 or 2e-5, spec.name .. " " .. dtype .. " vs TF1")
    end
  end
end)

T.test("graph: the train op is Apply nodes grouped under the optimizer's name", function()
  local m = graph_model(SPECS[6], "float32")
  T.eq(m.train.name, "Adam")
  local ops = {}
  for _, n in ipairs(m.g:nodes()) do ops[n.name] = n.op end
  T.eq(ops["Adam/update_w/apply_adam"], "ApplyAdam")
  T.eq(ops["w/Adam"], "VariableV2"); T.eq(ops["w/Adam_1"], "VariableV2")
  T.eq(ops["beta1_power"], "VariableV2"); T.eq(ops["beta2_power"], "VariableV2")
  local m2 = graph_model(SPECS[2], "float64")
  ops = {}
  for _, n in ipairs(m2.g:nodes()) do ops[n.name] = n.op end
  T.eq(ops["Momentum/update_w/apply_momentum"], "ApplyMomentum")
end)

T.test("graph and trace: the learning rate is cast once per dtype, not per variable", function()
  -- the Casts the optimizer adds (its scope), not the loss's
  local function casts(g, scope)
    local n = 0
    for _, node in ipairs(g:nodes()) do
      n = n + ((node.op == "Cast" and node.name:find("^" .. scope .. "/")) and 1 or 0)
    end
    return n
  end
  local g = mf.Graph()
  g:as_default(function()
    local w1, w2 = mf.Variable(mf.ones{2}, {name = "w1"}), mf.Variable(mf.ones{3}, {name = "w2"})
    local w3 = mf.Variable(mf.ones({2}, "float64"), {name = "w3"})
    mf.train.GradientDescentOptimizer(0.1):minimize(mf.reduce_sum(w1 * w1)
      + mf.reduce_sum(w2 * w2) + mf.cast(mf.reduce_sum(w3 * w3), "float32"))
  end)
  -- the float64 rate to float32 once for w1 and w2 (float64 w3 needs none)
  T.eq(casts(g, "GradientDescent"), 1)
  local v1, v2 = mf.Variable(mf.ones{2}), mf.Variable(mf.ones{3})
  local opt = mf.train.GradientDescentOptimizer(0.1)
  local step = mf.trace(function(x)
    -- (no finite check: its gate adds Casts of its own)
    opt:minimize(function() return mf.reduce_sum(v1 * x) + mf.reduce_sum(v2 * v2) end,
                 {nonfinite = "apply"})
  end)
  step(mf.ones{2})
  T.eq(casts(step:graph(mf.ones{2}), "GradientDescent"), 1)
  T.eq(v1, {0.9, 0.9}, 1e-6)
end)

T.test("graph: minimize == compute_gradients + apply_gradients", function()
  for _, spec in ipairs(SPECS) do
    local a = graph_run(spec, "float32")
    local b = graph_run(spec, "float32", function(m)
      local gv = m.opt:compute_gradients(m.loss)
      T.eq(#gv, 1); T.ok(gv[1][2] == m.w, "the pair holds the very Variable")
      return m.opt:apply_gradients(gv)
    end)
    T.eq(b, a, 0, spec.name)
  end
end)

T.test("graph: clip between compute and apply equals the eager recipe", function()
  local spec = SPECS[6]
  local g = graph_run(spec, "float64", function(m)
    local gv = m.opt:compute_gradients(m.loss)
    for i, p in ipairs(gv) do gv[i] = {mf.clip_by_norm(p[1], 0.5), p[2]} end
    return m.opt:apply_gradients(gv)
  end)
  local w = mf.Variable(mf.tensor(W0, "float64"), {name = "w"})
  local c = mf.tensor(C, "float64")
  local opt, e = spec.make(), {}
  for t = 1, STEPS do
    local gv = opt:compute_gradients(function() return mf.reduce_sum(c * w * w) end)
    for i, p in ipairs(gv) do gv[i] = {mf.clip_by_norm(p[1], 0.5), p[2]} end
    opt:apply_gradients(gv)
    e[t] = w:read_value():totable()
  end
  T.eq(g, e, 0)
end)

T.test("graph: masked update keeps masked entries; trainable=false never changes", function()
  local g = mf.Graph()
  local w, frozen, train, init
  g:as_default(function()
    w = mf.Variable({1, 2, 3}, {name = "w"})
    frozen = mf.Variable({5, 6, 7}, {name = "frozen", trainable = false})
    local loss = mf.reduce_sum(w * w * frozen)
    local opt = mf.train.MomentumOptimizer(0.01, 0.9)
    local gv = opt:compute_gradients(loss)
    T.eq(#gv, 1, 0, "only the trainable variable")
    local mask = mf.tensor({1, 0, 1})
    for i, p in ipairs(gv) do gv[i] = {p[1] * mask, p[2]} end
    train = opt:apply_gradients(gv)
    init = mf.global_variables_initializer()
  end)
  local sess = mf.Session(g)
  sess:run(init)
  for _ = 1, 3 do sess:run(train) end
  local v = sess:run(w):totable()
  T.ok(v[1] < 1 and v[3] < 3, "unmasked entries moved")
  T.eq(v[2], 2, 0, "masked entry kept")
  T.eq(sess:run(frozen), {5, 6, 7})
end)

T.test("graph: slots, global step, var_list and errors", function()
  local g = mf.Graph()
  local w, b, gs, opt, train, init
  g:as_default(function()
    w = mf.Variable({1, 2}, {name = "w"})
    b = mf.Variable(0.5, {name = "b"})
    opt = mf.train.AdamOptimizer(0.1)
    T.eq(opt:get_slot(w, "m"), nil)
    gs = mf.train.global_step()
    T.ok(mf.train.global_step() == gs, "one global step per graph")
    train = opt:minimize(mf.reduce_sum(w * w) + b, {var_list = {w}, global_step = gs})
    init = mf.global_variables_initializer()
  end)
  local sess = mf.Session(g)
  sess:run(init)
  sess:run(train); sess:run(train)
  local m = opt:get_slot(w, "m")
  T.eq(m.name, "w/Adam"); T.eq(opt:get_slot(w, "v").name, "w/Adam_1")
  T.ok(tostring(m):find("w/Adam", 1, true))
  T.eq(opt:get_slot(b, "m"), nil, nil, "b was not in var_list")
  T.eq(sess:run(b), 0.5)
  T.eq(sess:run(gs), 2)
  -- m after two steps of g = 2w: m1 = 0.1 g1, m2 = m1 + (g2 - m1) * 0.1
  T.ok(sess:run(m):totable()[1] > 0)
  -- as TensorFlow, Adam's beta powers are kept per graph: the optimizer also trains eagerly
  local e = mf.Variable({1, 2})
  opt:apply_gradients({{mf.tensor({1, 1}), e}})
  T.eq(e, {0.9, 1.9}, 1e-6)   -- a first Adam step moves by the learning rate
  sess:run(train)
  T.eq(sess:run(gs), 3)
  local other
  mf.Graph():as_default(function() other = mf.Variable({1}, {name = "other"}) end)
  g:as_default(function()
    T.raises(function() opt:minimize(mf.reduce_sum(w * w), {var_list = {other}}) end,
             "compute_gradients: var_list[1] ('other') is not a variable of the loss's graph")
    local unused = mf.Variable({1}, {name = "unused"})
    T.raises(function() opt:minimize(mf.reduce_sum(w * w), {var_list = {unused}}) end,
             "apply_gradients: No gradients provided for any variable")
  end)
  T.raises(function() opt:minimize(mf.tensor(1)) end, "eager mode")
end)

T.test("graph: a learning rate Variable decays the step", function()
  local g = mf.Graph()
  local w, lr, train, init
  g:as_default(function()
    w = mf.Variable({1.0}, {name = "w"})
    lr = mf.Variable(0.5, {name = "lr", trainable = false})
    train = mf.train.GradientDescentOptimizer(lr):minimize(mf.reduce_sum(w))
    init = mf.global_variables_initializer()
  end)
  local sess = mf.Session(g)
  sess:run(init)
  sess:run(train)
  T.eq(sess:run(w), {0.5}, 1e-7)
  sess:run(lr:assign(0.25))
  sess:run(train)
  T.eq(sess:run(w), {0.25}, 1e-7)
end)

T.test("graph: exponential_decay of the graph's global step is a tensor", function()
  local g = mf.Graph()
  local w, gs, lr, train, init
  g:as_default(function()
    w = mf.Variable({1.0}, {name = "w"})
    gs = mf.train.global_step()
    lr = mf.train.exponential_decay(0.5, gs, 1, 0.5, {staircase = true})
    T.ok(lr.name, "a graph tensor")
    train = mf.train.GradientDescentOptimizer(lr):minimize(mf.reduce_sum(w), {global_step = gs})
    init = mf.global_variables_initializer()
  end)
  local sess = mf.Session(g)
  sess:run(init)
  local seen = {}
  for i = 1, 3 do sess:run(train); seen[i] = sess:run(w):item() end
  T.eq(seen, {0.5, 0.25, 0.125}, 1e-7)   -- each step uses the rate of the step before it
  T.eq(sess:run(gs), 3)
end)

T.test("graph: a fetched value does not change when the next step runs", function()
  local m = graph_model(SPECS[6], "float32")
  m.sess:run(m.train)
  local before = m.sess:run(m.w)
  local copy = before:totable()
  m.sess:run(m.train)
  T.eq(before, copy, 0)
  T.ok(m.sess:run(m.w):totable()[1] ~= copy[1])
  local both = m.sess:run({m.w, m.train})
  T.ok(both[1]:totable()[1] ~= m.sess:run(m.w):totable()[1], "the fetch is the value before")
end)

T.test("graph Saver: round trip, every-variable saver, mismatch reported", function()
  local dir = os.tmpname(); os.remove(dir)
  local path = dir .. ".safetensors"
  for _, all in ipairs{true, false} do
    local function build()
      local m = {g = mf.Graph()}
      m.g:as_default(function()
        m.w = mf.Variable({1, 2}, {name = "w"})
        m.loss = mf.reduce_sum(m.w * m.w)
        m.opt = mf.train.AdamOptimizer(0.1)
        m.gs = mf.train.global_step()
        m.train = m.opt:minimize(m.loss, {global_step = m.gs})
        m.init = mf.global_variables_initializer()
        m.saver = all and mf.train.Saver() or mf.train.Saver({m.w}, {optimizers = {m.opt}})
      end)
      m.sess = mf.Session(m.g)
      m.sess:run(m.init)
      return m
    end
    local a = build()
    for _ = 1, 3 do a.sess:run(a.train) end
    T.eq(a.saver:save(a.sess, path), path)
    local names = {}
    for k in pairs(mf.load(path)) do names[#names + 1] = k end
    table.sort(names)
    T.eq(table.concat(names, " "), "beta1_power beta2_power global_step w w/Adam w/Adam_1")
    local want = a.sess:run({a.loss, a.train})[1]:item()
    local b = build()
    b.saver:restore(b.sess, path)
    T.eq(b.sess:run(b.gs), 3)
    T.eq(b.sess:run({b.loss, b.train})[1]:item(), want, 0)
  end
  local g = mf.Graph()
  local saver, sess
  g:as_default(function()
    mf.Variable({1, 2, 3}, {name = "w"})
    saver = mf.train.Saver()
    sess = mf.Session(g)
    sess:run(mf.global_variables_initializer())
  end)
  T.raises(function() saver:restore(sess, path) end,
           "'w': the file has float32 (2,), Variable 'w' is float32 (3,)")
  T.raises(function() saver:save(path) end, "saver:save(sess, path)")
  os.remove(path)
end)

-- A linear regression as a new user writes it, in both modes.
local function regression_data()
  mf.random.seed(7)
  local x = mf.random.normal({64, 3}, {seed = 11})
  local w_true = mf.tensor({{1.5}, {-2.0}, {0.5}})
  local y = mf.matmul(x, w_true) + 0.3 + mf.random.normal({64, 1}, {stddev = 0.1, seed = 12})
  return x, y
end

local REG = {
  sgd = function() return mf.train.GradientDescentOptimizer(0.05) end,
  momentum = function() return mf.train.MomentumOptimizer(0.02, 0.9) end,
  adagrad = function() return mf.train.AdagradOptimizer(0.3) end,
  rmsprop = function() return mf.train.RMSPropOptimizer(0.02) end,
  adam = function() return mf.train.AdamOptimizer(0.05) end,
}

T.test("linear regression: eager and graph reach the same loss after 100 steps", function()
  local x, y = regression_data()
  for _, name in ipairs{"sgd", "momentum", "adagrad", "rmsprop", "adam"} do
    local w = mf.Variable(mf.zeros({3, 1}), {name = "w"})
    local b = mf.Variable(0.0, {name = "b"})
    local opt = REG[name]()
    local function loss() return mf.reduce_mean(mf.square(mf.matmul(x, w) + b - y)) end
    for _ = 1, 100 do opt:minimize(loss) end
    local eager_loss = loss():item()

    local g = mf.Graph()
    local gl, train, init
    g:as_default(function()
      local gw = mf.Variable(mf.zeros({3, 1}), {name = "w"})
      local gb = mf.Variable(0.0, {name = "b"})
      gl = mf.reduce_mean(mf.square(mf.matmul(x, gw) + gb - y))
      train = REG[name]():minimize(gl)
      init = mf.global_variables_initializer()
    end)
    local sess = mf.Session(g)
    sess:run(init)
    for _ = 1, 100 do sess:run(train) end
    local graph_loss = sess:run(gl):item()
    T.eq(graph_loss, eager_loss, 0, name)
    T.ok(eager_loss < 0.5, name .. " learned (loss " .. eager_loss .. ")")
  end
end)

-- Save in one moonflow process, restore in a fresh one: the next step's loss is the same.
local CHILD = [[
local mode, phase, path, kind = arg[1], arg[2], arg[3], arg[4]
local function make()
  if kind == "momentum" then return mf.train.MomentumOptimizer(0.05, 0.9) end
  return mf.train.AdamOptimizer(0.1)
end
local x = mf.tensor({{1, 2}, {3, 4}, {5, 6}})
local y = mf.tensor({{1}, {2}, {3}})
local step
if mode == "eager" then
  local w = mf.Variable({{0.1}, {-0.2}}, {name = "w"})
  local opt = make()
  local gs = mf.train.global_step()
  local saver = mf.train.Saver({w}, {optimizers = {opt}})
  local function loss() return mf.reduce_mean(mf.square(mf.matmul(x, w) - y)) end
  step = function() return opt:minimize(loss, {global_step = gs}):item() end
  if phase == "save" then for _ = 1, 4 do step() end; saver:save(path)
  else saver:restore(path) end
  io.write(string.format("%d ", gs:read_value():item()))
else
  local g = mf.Graph()
  local l, train, init, saver, gs
  g:as_default(function()
    local w = mf.Variable({{0.1}, {-0.2}}, {name = "w"})
    l = mf.reduce_mean(mf.square(mf.matmul(x, w) - y))
    gs = mf.train.global_step()
    train = make():minimize(l, {global_step = gs})
    init = mf.global_variables_initializer()
    saver = mf.train.Saver()
  end)
  local sess = mf.Session(g)
  sess:run(init)
  step = function() return sess:run({l, train})[1]:item() end
  if phase == "save" then for _ = 1, 4 do step() end; saver:save(sess, path)
  else saver:restore(sess, path) end
  io.write(string.format("%d ", sess:run(gs):item()))
end
io.write(string.format("%.17g\n", step()))
]]

T.test("save/restore in a fresh moonflow process continues training exactly", function()
  local exe = arg and arg[-1] or os.getenv("MOONFLOW") or "build/release/moonflow"
  local base = os.tmpname()
  local script = base .. "_child.lua"
  local f = assert(io.open(script, "w")); f:write(CHILD); f:close()
  local function run(...)
    local cmd = string.format("'%s' '%s' %s 2>&1", exe, script, table.concat({...}, " "))
    local p = assert(io.popen(cmd)); local out = p:read("a"); p:close()
    return out
  end
  for _, mode in ipairs{"eager", "graph"} do
    for _, kind in ipairs{"adam", "momentum"} do
      local ck = base .. "_" .. mode .. "_" .. kind .. ".safetensors"
      local first = run(mode, "save", ck, kind)
      local second = run(mode, "restore", ck, kind)
      T.ok(first:match("^4 [%d%.e%-]+\n$"), mode .. " " .. kind .. ": " .. first)
      T.eq(second, first, nil, mode .. " " .. kind .. ": the next step's loss")
      os.remove(ck)
    end
  end
  os.remove(script); os.remove(base)
end)

T.done()
