-- test_graph_var.lua — graph-mode Variables (TensorFlow 1.x): VariableV2
-- nodes whose values live in each Session, initializers, collections,
-- assign / assign_add / assign_sub ops, read_value under control
-- dependencies, mf.gradients w.r.t. Variables, a linear model trained end
-- to end with feeds, the error messages, printing and the DOT picture;
-- mf.constant's name in a graph and symbolic tensors' printed form.
local T = dofile("tests/lua/harness.lua")

-- The TF1 linear model: y = x w + b, mean squared error, plain gradient
-- descent through assign_sub; returns what the tests need.
local function linear_model(lr)
  local m = {g = mf.Graph()}
  m.g:as_default(function()
    m.x = mf.placeholder("float32", {4, 2}, "x")
    m.y = mf.placeholder("float32", {4, 1}, "y")
    m.w = mf.Variable(mf.zeros({2, 1}), {name = "w"})
    m.b = mf.Variable(0, {name = "b"})
    m.pred = mf.matmul(m.x, m.w) + m.b
    m.loss = mf.reduce_mean(mf.square(m.pred - m.y))
    m.grads = mf.gradients(m.loss, {m.w, m.b})
    m.step = mf.group({m.w:assign_sub(lr * m.grads[1]), m.b:assign_sub(lr * m.grads[2])},
                      "train")
    m.init = mf.global_variables_initializer()
  end)
  return m
end

local X = mf.tensor({{1, 2}, {2, 1}, {3, 0}, {0, 3}})
local Y = mf.tensor({{5}, {4}, {3}, {6}})   -- y = x1 + 2 x2 (+ 0)

-- The same model's gradient step computed by hand in Lua numbers.
local function hand_step(w, b, lr)
  local gw, gb = {0, 0}, 0
  local x, y = X:totable(), Y:totable()
  for i = 1, 4 do
    local r = x[i][1] * w[1] + x[i][2] * w[2] + b - y[i][1]
    gw[1] = gw[1] + 2 * r * x[i][1] / 4
    gw[2] = gw[2] + 2 * r * x[i][2] / 4
    gb = gb + 2 * r / 4
  end
  return {w[1] - lr * gw[1], w[2] - lr * gw[2]}, b - lr * gb
end

T.test("linear model end to end: feeds, gradients, assign_sub steps across runs", function()
  local m = linear_model(0.05)
  local sess = mf.Session(m.g)
  sess:run(m.init)
  T.eq(sess:run(m.w), {{0}, {0}})
  local feeds = {[m.x] = X, [m.y] = Y}
  local w, b = {0, 0}, 0
  local first = sess:run(m.loss, feeds):item()
  for _ = 1, 20 do
    T.eq(sess:run(m.step, feeds), nil)
    w, b = hand_step(w, b, 0.05)
    local got = sess:run({m.w, m.b})
    T.eq(got[1], {{w[1]}, {w[2]}}, 1e-4)
    T.eq(got[2], b, 1e-4)
  end
  local last = sess:run(m.loss, feeds):item()
  T.ok(last < first / 10, "the loss falls: " .. first .. " -> " .. last)
  -- gradients w.r.t. the Variables, fetched at the current values
  local gw = sess:run(m.grads[1], feeds)
  T.eq(gw.shape, {2, 1})
end)

T.test("initializer: a NoOp of the init assigns; global and trainable collections", function()
  local g = mf.Graph()
  local a, c, init, all, tr
  g:as_default(function()
    a = mf.Variable({1, 2}, {name = "a"})
    c = mf.Variable(7, {name = "count", trainable = false})
    init = mf.global_variables_initializer()
    all, tr = mf.global_variables(), mf.trainable_variables()
  end)
  T.eq(init.type, "NoOp")
  T.eq(init.name, "init")
  T.eq(#all, 2)
  T.eq(#tr, 1)
  T.ok(tr[1] == a, "trainable_variables gives back the Variable object")
  T.ok(all[2] == c)
  T.eq(c.trainable, false)
  T.eq(#mf.trainable_variables(g), 1)
  local s = mf.Session(g)
  s:run(init)
  T.eq(s:run(a), {1, 2})
  T.eq(s:run(c), 7)
  T.eq(a.shape, {2})
  T.eq(a.dtype, "float32")
  T.eq(a.name, "a")
end)

T.test("uninitialised variable: the error names it and says what to run", function()
  local g = mf.Graph()
  local v, y
  g:as_default(function()
    v = mf.Variable({1, 2}, {name = "weights"})
    y = v * 2
  end)
  local s = mf.Session(g)
  T.raises(function() s:run(y) end, "variable 'weights' is not initialised")
  T.raises(function() s:run(v) end, "run mf.global_variables_initializer() first")
  local add
  g:as_default(function() add = v:assign_add({1, 1}) end)
  T.raises(function() s:run(add) end, "variable 'weights' is not initialised")
end)

T.test("two sessions on one graph hold independent values", function()
  local g = mf.Graph()
  local v, inc, init
  g:as_default(function()
    v = mf.Variable(0, {name = "n"})
    inc = v:assign_add(1)
    init = mf.global_variables_initializer()
  end)
  local s1, s2 = mf.Session(g), mf.Session(g)
  s1:run(init)
  s2:run(init)
  for _ = 1, 3 do s1:run(inc) end
  T.eq(s2:run(inc), 1)
  T.eq(s1:run(v), 3)
  T.eq(s2:run(v), 1)
  -- re-running the initializer resets
  s1:run(init)
  T.eq(s1:run(v), 0)
  s1:close()
  T.raises(function() s1:run(v) end, "closed")
  T.eq(s2:run(v), 1)
end)

T.test("assign, assign_add, assign_sub return the new value; read_value is ordered", function()
  local g = mf.Graph()
  local v, set, add, sub, read_after, init
  g:as_default(function()
    v = mf.Variable({1, 2}, {name = "v"})
    set = v:assign({10, 20})
    add = v:assign_add(mf.tensor({1, 1}))
    sub = v:assign_sub({5, 5})
    read_after = mf.control_dependencies({add}, function() return v:read_value() end)
    init = mf.global_variables_initializer()
  end)
  T.eq(set.name, "v/Assign_1:0")
  T.eq(add.name, "v/AssignAdd:0")
  local s = mf.Session(g)
  s:run(init)
  T.eq(s:run(set), {10, 20})
  T.eq(s:run(add), {11, 21})
  T.eq(s:run(sub), {6, 16})
  T.eq(s:run(read_after), {7, 17})
  T.eq(s:run(v), {7, 17})
  -- an unordered read and assign in one run: the variable node has no
  -- inputs, so it runs in the first wave (creation order) and sees the value
  -- from before the assign, every time
  local got = s:run({add, v})
  T.eq(got[1], {8, 18})
  T.eq(got[2], {7, 17})
end)

T.test("assign errors name the variable and both shapes", function()
  local g = mf.Graph()
  g:as_default(function()
    local v = mf.Variable({1, 2}, {name = "v"})
    T.raises(function() v:assign({1, 2, 3}) end,
             "assign: variable 'v' has shape (2,) float32, got (3,)")
    T.raises(function() v:assign_add(mf.tensor({1, 2}, "float64")) end,
             "assign_add: variable 'v' has shape (2,) float32, got (2,) float64")
  end)
end)

T.test("the initial value may be a graph computation (an initializer, a random op)", function()
  local g = mf.Graph()
  local v, u, init
  g:as_default(function()
    v = mf.Variable(mf.fill({2, 2}, 3) * 2, {name = "six"})
    u = mf.Variable(mf.initializers.ones(){3}, {name = "ones"})
    init = mf.global_variables_initializer()
  end)
  local s = mf.Session(g)
  s:run(init)
  T.eq(s:run(v), {{6, 6}, {6, 6}})
  T.eq(s:run(u), {1, 1, 1})
end)

T.test("gradient through a variable read (xs may be Variables)", function()
  local g = mf.Graph()
  local v, dv, init
  g:as_default(function()
    v = mf.Variable({1, 2, 3}, {name = "v"})
    local y = mf.reduce_sum(mf.square(v) * 0.5)
    dv = mf.gradients(y, v)[1]
    init = mf.global_variables_initializer()
  end)
  local s = mf.Session(g)
  s:run(init)
  T.eq(s:run(dv), {1, 2, 3})
end)

T.test("unique names, scopes, listing and DOT show variables", function()
  local g = mf.Graph()
  local a, b
  g:as_default(function()
    a = mf.Variable(1, {name = "w"})
    b = mf.name_scope("layer", function() return mf.Variable(2, {name = "w"}) end)
    mf.Variable(3, {name = "w"})
  end)
  T.eq(a.name, "w")
  T.eq(b.name, "layer/w")
  local text = tostring(g)
  T.ok(text:find("layer/w = VariableV2() -> float32 ()", 1, true), text)
  T.ok(text:find("layer/w/Assign = Assign(&layer/w, layer/w/initial_value:0)", 1, true), text)
  T.ok(text:find("w_1 = VariableV2()", 1, true), text)
  local dot = g:to_dot()
  T.ok(dot:find("shape=cylinder", 1, true), dot)
  T.ok(dot:find("arrowhead=diamond", 1, true), dot)
  T.ok(tostring(a):find("<mf.Variable 'w' shape=() dtype=float32", 1, true), tostring(a))
end)

T.test("mf.constant uses its name in a graph; symbolic tensors print name, shape, op", function()
  local g = mf.Graph()
  local c, s
  g:as_default(function()
    c = mf.constant({1, 2}, {name = "two"})
    s = mf.placeholder("float32", {-1, 3}, "x") + 1
  end)
  T.eq(c.name, "two:0")
  T.eq(tostring(c), "<mf.Tensor 'two:0' shape=(2,) dtype=float32 op=Const>")
  T.eq(tostring(s), "<mf.Tensor 'add:0' shape=(?,3) dtype=float32 op=AddV2>")
  T.eq(mf.Session(g):run(c), {1, 2})
  -- outside a graph mf.constant is still a plain tensor
  T.eq(mf.constant({3}, {name = "x"}), {3})
end)

T.test("outside a graph the collections say where to call them", function()
  T.raises(function() mf.global_variables_initializer() end, "no graph is being built")
  T.raises(function() mf.trainable_variables() end, "trainable_variables")
end)

T.test("an eager Variable used in a graph is read when the graph runs", function()
  local e = mf.Variable({1, 2}, {name = "eager"})
  local g = mf.Graph()
  local y = g:as_default(function() return e * 10 end)
  local s = mf.Session(g)
  T.eq(s:run(y), {10, 20})
  e:assign({3, 4})
  T.eq(s:run(y), {30, 40})
end)

T.test("eager Variables stay eager outside graphs", function()
  local v = mf.Variable({1, 2})
  T.ok(v:assign_add({1, 1}) == v)
  T.eq(v:read_value(), {2, 3})
end)

T.test("a gradient through v:read_value() reaches the variable (ReadVariableOp: identity)", function()
  local g = mf.Graph()
  local v, gr, gboth, init
  g:as_default(function()
    v = mf.Variable({1, -2, 3}, {name = "v"})
    local r = v:read_value()
    gr = mf.gradients(mf.reduce_sum(r * r * 3), {v})
    -- a read and the variable itself in one loss: both paths add up
    gboth = mf.gradients(mf.reduce_sum(r * v), {v})
    init = mf.global_variables_initializer()
  end)
  local s = mf.Session(g)
  s:run(init)
  T.eq(s:run(gr[1]), {6, -12, 18})
  T.eq(s:run(gboth[1]), {2, -4, 6})
  -- after an assign the read gives the new value, and so does the gradient
  s:run(v:assign({1, 1, 1}))
  T.eq(s:run(gr[1]), {6, 6, 6})
end)

T.test("v:initialized_value() lets an initial value read another variable", function()
  local g = mf.Graph()
  local v, w, u, init
  g:as_default(function()
    mf.random.seed(7)
    v = mf.Variable(mf.random.normal({3}), {name = "v"})
    w = mf.Variable(v:initialized_value() * 2, {name = "w"})
    u = mf.Variable(w:initialized_value() + v:initialized_value(), {name = "u"})
    init = mf.global_variables_initializer()
  end)
  local s = mf.Session(g)
  s:run(init)
  local r = s:run({v, w, u})
  local vt = r[1]:totable()
  T.eq(r[2], {2 * vt[1], 2 * vt[2], 2 * vt[3]}, 1e-6)
  T.eq(r[3], {3 * vt[1], 3 * vt[2], 3 * vt[3]}, 1e-6)
  -- once v is initialised, w's initializer alone reads v's value
  s:run(v:assign({1, 2, 3}))
  s:run(w.initializer)
  T.eq(s:run(w), {2, 4, 6})
  T.eq(s:run(v), {1, 2, 3})   -- v's initializer did not run again
  -- initializers in the opposite order agree too (w's runs first)
  local s2 = mf.Session(g)
  s2:run(mf.variables_initializer({u, w, v}))
  local r2 = s2:run({v, w, u})
  local v2 = r2[1]:totable()
  T.eq(r2[2], {2 * v2[1], 2 * v2[2], 2 * v2[3]}, 1e-6)
  T.eq(r2[3], {3 * v2[1], 3 * v2[2], 3 * v2[3]}, 1e-6)
end)

T.test("an initial value reading a plain variable says to use initialized_value", function()
  local g = mf.Graph()
  local init
  g:as_default(function()
    local v = mf.Variable({1, 2}, {name = "v"})
    mf.Variable(v * 2, {name = "w"})
    init = mf.global_variables_initializer()
  end)
  T.raises(function() mf.Session(g):run(init) end, "initialized_value")
end)

T.test("an eager Variable's initialized_value is its value", function()
  local v = mf.Variable({1, 2})
  T.eq(v:initialized_value(), {1, 2})
end)

T.test("the TF1 workflow polish: hints, run(op), Const values, the train cluster", function()
  local g = mf.Graph()
  local x, w, loss, init, train
  g:as_default(function()
    x = mf.placeholder("float32", {-1, 2}, "x")
    w = mf.Variable(mf.zeros({2, 1}), {name = "w"})
    loss = mf.reduce_mean(mf.square(mf.matmul(x, w) - 1))
    init = mf.global_variables_initializer()
  end)
  local opt = mf.train.AdamOptimizer(0.1)
  train = g:as_default(function() return opt:minimize(loss) end)
  local s = mf.Session(g)
  T.eq(select("#", s:run(init)), 0)       -- an op fetched alone: no value
  T.eq(select("#", s:run({init})), 1)     -- an array: an array (with a hole)
  -- the slots were made after init was built: the error says so
  T.raises(function() s:run(train, {[x] = mf.ones({3, 2})}) end,
           "made after the initializer was built")
  s:run(g:as_default(mf.global_variables_initializer))
  s:run(train, {[x] = mf.ones({3, 2})})
  T.ok(tostring(g):find("Const_%d* = Const%(1%) %-> float32 %(%)") ~= nil, "Const(1) listed")
  local dot = g:to_dot()
  T.ok(dot:find("cluster_forward", 1, true) and dot:find("cluster_backward", 1, true)
       and dot:find("cluster_train", 1, true), "three clusters")
  -- the Apply nodes are in the train cluster, the slots stay with the model
  local train_part = dot:match("cluster_train {(.-)}")
  T.ok(train_part:find("ApplyAdam", 1, true) ~= nil)
  T.ok(train_part:find("w/Adam\\n", 1, true) == nil)
end)

T.test("a GradientTape inside g:as_default differentiates graph Variables symbolically", function()
  local g = mf.Graph()
  local gw, init
  g:as_default(function()
    local w = mf.Variable({1, 2}, {name = "w"})
    local tape = mf.GradientTape()
    gw = tape:gradient(mf.reduce_sum(w * w * 3), w)
    init = mf.global_variables_initializer()
  end)
  local s = mf.Session(g)
  s:run(init)
  T.eq(s:run(gw), {6, 12})
end)

T.done()
