-- test_trace.lua — mf.trace(f) (TensorFlow's tf.function): one trace per
-- input signature, counted; traced results equal eager ones exactly; eager
-- Variables captured by reference (reads see the current value, assigns
-- update them, in program order); several and nested results; fn:graph;
-- mf.trace(tensor) is still the matrix trace.
local T = dofile("tests/lua/harness.lua")

-- A function of many ops, to compare eager and traced results bit for bit.
local function model(x, w, k)
  local h = mf.tanh(mf.matmul(x, w) + k)
  local p = mf.nn.softmax(h)
  return mf.reduce_mean(mf.exp(p) * h, {axis = 2}), mf.sqrt(mf.abs(h) + 1) / 3
end

T.test("eager and traced results agree exactly", function()
  mf.random.seed(7)
  local x = mf.random.normal({5, 4})
  local w = mf.random.normal({4, 3})
  local f = mf.trace(model)
  for _, k in ipairs({0.5, 2}) do
    local e1, e2 = model(x, w, k)
    local t1, t2 = f(x, w, k)
    T.eq(t1, e1)
    T.eq(t2, e2)
    T.eq(t1.shape, {5})
  end
end)

T.test("one trace per signature: dtypes and shapes, numbers, strings, booleans by value", function()
  local traces = 0
  local f = mf.trace(function(x, scale, how, flag)
    traces = traces + 1      -- Lua code runs only while tracing
    local y = x * scale
    if how == "neg" then y = -y end
    if flag then y = y + 1 end
    return y
  end)
  local a, b = mf.tensor({1, 2}), mf.tensor({3, 4})
  T.eq(f(a, 2, "pos", false), {2, 4})
  T.eq(f(b, 2, "pos", false), {6, 8})          -- same signature: no retrace
  T.eq(traces, 1)
  T.eq(f(a, 3, "pos", false), {3, 6})          -- another number
  T.eq(f(a, 3, "neg", false), {-3, -6})        -- another string
  T.eq(f(a, 3, "neg", true), {-2, -5})         -- another boolean
  T.eq(traces, 4)
  T.eq(f(mf.tensor({1, 2, 3}), 3, "neg", true), {-2, -5, -8})   -- another shape
  T.eq(f(mf.tensor({1, 2}, "float64"), 3, "neg", true), {-2, -5})  -- another dtype
  T.eq(traces, 6)
  T.eq(f:trace_count(), 6)
  T.eq(f(b, 3, "neg", true), {-8, -11})
  T.eq(traces, 6)
  T.ok(tostring(f):find("traced for 6 signatures", 1, true), tostring(f))
end)

T.test("eager Variables are captured by reference and updated in program order", function()
  local v = mf.Variable({1, 2, 3}, {name = "acc"})
  local step = mf.trace(function(x)
    local before = v * 1        -- read before the assign: the old value
    v:assign_add(x)
    local after = v * 1         -- read after: the new value
    v:assign(v * 2)
    return before, after
  end)
  local b, a = step(mf.tensor({1, 1, 1}))
  T.eq(b, {1, 2, 3})
  T.eq(a, {2, 3, 4})
  T.eq(v, {4, 6, 8})
  -- a change made eagerly between calls is seen by the next call
  v:assign({0, 0, 0})
  b, a = step(mf.tensor({1, 2, 3}))
  T.eq(b, {0, 0, 0})
  T.eq(a, {1, 2, 3})
  T.eq(v, {2, 4, 6})
  T.eq(step:trace_count(), 1)
  -- the same code run eagerly gives the same
  local w = mf.Variable({0, 0, 0})
  local eb = w * 1
  w:assign_add(mf.tensor({1, 2, 3}))
  local ea = w * 1
  w:assign(w * 2)
  T.eq(ea, a)
  T.eq(eb, b)
  T.eq(w, v)
end)

T.test("a traced training step with no results still runs its assigns", function()
  local w = mf.Variable({1, 1})
  local train = mf.trace(function(g) w:assign_sub(g * 0.5) end)
  for _ = 1, 4 do train(mf.tensor({1, 2})) end
  T.eq(w, {-1, -3})
end)

T.test("a traced training step (mf.gradients w.r.t. a captured Variable) = the tape's", function()
  local X = mf.tensor({{1, 2}, {2, 1}, {3, 0}, {0, 3}})
  local Y = mf.tensor({{5}, {4}, {3}, {6}})
  local w = mf.Variable({{0}, {0}})
  local step = mf.trace(function(x, y)
    local loss = mf.reduce_mean(mf.square(mf.matmul(x, w) - y))
    w:assign_sub(0.05 * mf.gradients(loss, {w})[1])
    return loss
  end)
  local w2 = mf.Variable({{0}, {0}})
  for _ = 1, 5 do
    local got = step(X, Y)
    local tape = mf.GradientTape()
    local want = mf.reduce_mean(mf.square(mf.matmul(X, w2) - Y))
    w2:assign_sub(0.05 * tape:gradient(want, w2))
    T.eq(got, want, 1e-6)
    T.eq(w, w2:read_value(), 1e-6)
  end
  T.eq(step:trace_count(), 1)
end)

T.test("several results, arrays of results, Variables and Lua values", function()
  local v = mf.Variable(5)
  local f = mf.trace(function(x)
    return x + 1, {x * 2, {mf.reduce_sum(x), v}}, "label", 42
  end)
  local a, t, s, n = f(mf.tensor({1, 2}))
  T.eq(a, {2, 3})
  T.eq(t[1], {2, 4})
  T.eq(t[2][1], 3)
  T.eq(t[2][2], 5)
  T.eq(s, "label")
  T.eq(n, 42)
  v:assign(6)
  local _, t2 = f(mf.tensor({0, 0}))
  T.eq(t2[2][2], 6)
end)

T.test("results: keyed tables, nil holes, deep nesting; the cache keeps its own copy", function()
  local shared = {k = "kept"}
  local f = mf.trace(function(x)
    local deep = x * 3
    for _ = 1, 20 do deep = {deep} end
    shared.t = x + 1
    return nil, {out = {x * 2, tag = "t"}, deep = deep}, shared
  end)
  local a, b, c = f(mf.tensor{1, 2})
  T.eq(a, nil)
  T.eq(b.out[1], {2, 4})
  T.eq(b.out.tag, "t")
  local d = b.deep
  for _ = 1, 20 do d = d[1] end
  T.eq(d, {3, 6})
  T.eq(c.t, {2, 3})
  T.eq(c.k, "kept")
  shared.k = "changed"   -- the user's table, not the trace's template
  local _, b2, c2 = f(mf.tensor{0, 1})
  T.eq(b2.out[1], {0, 2})
  T.eq(c2.k, "kept")
  T.eq(c2.t, {1, 2})
  local cycle = {}
  cycle[1] = cycle
  T.raises(function() mf.trace(function() return cycle end)() end,
           "traced function: structures nested deeper than 32 tables (a cycle?)")
end)

T.test("array arguments: their tensors are placeholders too", function()
  local traces = 0
  local f = mf.trace(function(batch)
    traces = traces + 1
    return batch[1] * batch[2]
  end)
  T.eq(f({mf.tensor({1, 2}), mf.tensor({3, 4})}), {3, 8})
  T.eq(f({mf.tensor({2, 2}), mf.tensor({3, 4})}), {6, 8})
  T.eq(traces, 1)
end)

T.test("fn:graph(...) returns the traced graph without running it", function()
  local v = mf.Variable({1, 2}, {name = "bias"})
  local calls = 0
  local f = mf.trace(function(x)
    calls = calls + 1
    v:assign_add(x)
    return mf.relu(x) + v
  end)
  local g = f:graph(mf.tensor({1, 2}))
  T.eq(calls, 1)
  T.eq(v, {1, 2})              -- tracing does not run the graph
  local text = tostring(g)
  T.ok(text:find("arg1 = Placeholder() -> float32 (2,)", 1, true), text)
  T.ok(text:find("bias = ReadVariableOp(&bias)", 1, true), text)
  T.ok(text:find("bias/AssignAdd = AssignAdd(&bias, arg1:0; ^bias)", 1, true), text)
  T.eq(f(mf.tensor({1, 1})), {3, 4})
  T.eq(calls, 1)
  T.ok(f:graph(mf.tensor({1, 2})) ~= nil)
  T.eq(calls, 1)
end)

T.test("nested traced functions are inlined; the tape sees traced functions", function()
  local inner = mf.trace(function(x) return x * x end)
  local outer = mf.trace(function(x) return inner(x) + 1 end)
  T.eq(outer(mf.tensor({2, 3})), {5, 10})
  T.eq(inner:trace_count(), 0)     -- inlined into outer's graph
  local x = mf.Variable({1, 2})
  local tape = mf.GradientTape()
  local y = mf.reduce_sum(inner(x))
  T.eq(tape:gradient(y, x), {2, 4})
end)

T.test("an error while tracing leaves no graph in force and no trace cached", function()
  local f = mf.trace(function(x, fail)
    if fail then error("boom") end
    return x + 1
  end)
  T.raises(function() f(mf.tensor({1}), true) end, "boom")
  T.eq(f:trace_count(), 0)
  T.eq(mf.tensor({1}) + 1, {2})    -- eager again
  T.eq(f(mf.tensor({1}), false), {2})
end)

T.test("wrong argument kinds: errors name the function", function()
  T.raises(function() mf.trace(function() end, 3) end,
           "trace: mf.trace(f [, {fusion}]) takes an options table after the function, got number")
  T.raises(function() mf.trace(function() end, {fusoin = false}) end,
           "trace: unknown option 'fusoin'")
  T.raises(function() mf.trace(function() end, {fusion = 1}) end, "trace: option 'fusion'")
  local f = mf.trace(function(x) return mf.matmul(x, x) end)
  T.raises(function() f(mf.tensor({{1, 2, 3}})) end, "matmul")
end)

T.test("mf.trace(tensor) is still the matrix trace, as t:trace()", function()
  local m = mf.tensor({{1, 2}, {3, 4}})
  T.eq(mf.trace(m), 5)
  T.eq(m:trace(), 5)
  T.eq(mf.trace({{1, 0}, {0, 1}}), 2)
end)

-- ---- GradientTape and optimizers inside mf.trace (TF2's tf.function) ----------

local TX = mf.tensor({{1, 2}, {2, 1}, {3, 0}, {0, 3}})
local TY = mf.tensor({{5}, {4}, {3}, {6}})

-- One regression step on w, b with a tape; 'update' applies the gradients.
local function tape_step(w, b, x, y, update)
  local tape = mf.GradientTape()
  local pred = mf.matmul(x, w) + b
  local loss = mf.reduce_mean(mf.square(pred - y)) + 0.01 * mf.reduce_sum(w * w)
  local g = tape:gradient(loss, {w, b})
  update(g)
  return loss
end

T.test("a GradientTape inside mf.trace: the traced step equals the eager step exactly", function()
  local function sgd(w, b) return function(g) w:assign_sub(0.05 * g[1]); b:assign_sub(0.05 * g[2]) end end
  local w1, b1 = mf.Variable({{0.5}, {-0.5}}), mf.Variable({0})
  local w2, b2 = mf.Variable({{0.5}, {-0.5}}), mf.Variable({0})
  local step = mf.trace(function(x, y) return tape_step(w2, b2, x, y, sgd(w2, b2)) end)
  for _ = 1, 6 do
    local want = tape_step(w1, b1, TX, TY, sgd(w1, b1))
    T.eq(step(TX, TY), want)
    T.eq(w2, w1:read_value())
    T.eq(b2, b1:read_value())
  end
  T.eq(step:trace_count(), 1)
end)

T.test("a tape inside mf.trace: watch, persistent, stop, unconnected, non-trainable", function()
  local v = mf.Variable({1, 2})
  local frozen = mf.Variable({3, 4}, {trainable = false})
  local f = mf.trace(function(x)
    local before = x * 10               -- built before the tape: a constant to it
    local tape = mf.GradientTape{persistent = true}
    tape:watch(x)
    local y = mf.reduce_sum(x * x * v + before * x + frozen * v)
    local gx, gv, gf = tape:gradient(y, x), tape:gradient(y, v), tape:gradient(y, frozen)
    local gz = tape:gradient(y, frozen, {unconnected = "zero"})
    tape:stop()
    local late = mf.reduce_sum(x * 3)   -- after stop: not recorded
    local gl = tape:gradient(late, x)
    return gx, gv, gf == nil, gz, gl == nil
  end)
  local r = {f(mf.tensor({1, 1}))}
  T.eq(r[1], {2 * 1 * 1 + 10, 2 * 1 * 2 + 10})     -- 2 x v + before
  T.eq(r[2], {1 + 3, 1 + 4})                       -- x^2 + frozen
  T.eq(r[3], true)
  T.eq(r[4], {0, 0})
  T.eq(r[5], true)
  local once = mf.trace(function(x)
    local tape = mf.GradientTape()
    tape:watch(x)
    local y = mf.reduce_sum(x * x)
    tape:gradient(y, x)
    return tape:gradient(y, x)
  end)
  T.raises(function() once(mf.tensor({1})) end, "non-persistent GradientTape can only be used once")
end)

-- eager vs traced apply_gradients for one optimizer: trajectories, slots, step
local function compare_optimizer(make)
  local w1, b1 = mf.Variable({{0.5}, {-0.5}}, {name = "w"}), mf.Variable({0}, {name = "b"})
  local w2, b2 = mf.Variable({{0.5}, {-0.5}}, {name = "w"}), mf.Variable({0}, {name = "b"})
  local o1, o2 = make(), make()
  local s1, s2 = mf.Variable(0, {dtype = "int64", trainable = false}),
                 mf.Variable(0, {dtype = "int64", trainable = false})
  local step = mf.trace(function(x, y)
    return tape_step(w2, b2, x, y, function(g)
      o2:apply_gradients({{g[1], w2}, {g[2], b2}}, {global_step = s2})
    end)
  end)
  for _ = 1, 5 do
    local want = tape_step(w1, b1, TX, TY, function(g)
      o1:apply_gradients({{g[1], w1}, {g[2], b1}}, {global_step = s1})
    end)
    T.eq(step(TX, TY), want)
    T.eq(w2, w1:read_value())
    T.eq(b2, b1:read_value())
  end
  for _, name in ipairs(o1:get_slot_names()) do
    T.eq(o2:get_slot(w2, name), o1:get_slot(w1, name):read_value())
  end
  T.eq(s2, 5)
  T.eq(step:trace_count(), 1)
end

T.test("apply_gradients on captured eager Variables inside mf.trace = eager, every optimizer", function()
  compare_optimizer(function() return mf.train.GradientDescentOptimizer(0.05) end)
  compare_optimizer(function() return mf.train.MomentumOptimizer(0.05, 0.9, {use_nesterov = true}) end)
  compare_optimizer(function() return mf.train.AdagradOptimizer(0.1) end)
  compare_optimizer(function() return mf.train.RMSPropOptimizer(0.01, {momentum = 0.5}) end)
  compare_optimizer(function() return mf.train.AdamOptimizer(0.1) end)
end)

T.test("opt:minimize(fn) inside mf.trace, and a learning-rate Variable read at run time", function()
  local lr1, lr2 = mf.Variable(0.1, {trainable = false}), mf.Variable(0.1, {trainable = false})
  local w1, w2 = mf.Variable({1, -2}), mf.Variable({1, -2})
  local o1, o2 = mf.train.AdamOptimizer(lr1), mf.train.AdamOptimizer(lr2)
  local step = mf.trace(function(c)
    o2:minimize(function() return mf.reduce_sum(c * w2 * w2) end)
  end)
  local c = mf.tensor({1, 3})
  for i = 1, 4 do
    o1:minimize(function() return mf.reduce_sum(c * w1 * w1) end)
    step(c)
    T.eq(w2, w1:read_value())
    lr1:assign(0.1 / (i + 1)); lr2:assign(0.1 / (i + 1))
  end
end)

T.test("reads after an in-place update inside a trace see the new value", function()
  local w = mf.Variable({1, 2})
  local opt = mf.train.GradientDescentOptimizer(0.5)
  local f = mf.trace(function(g)
    local before = w * 1
    opt:apply_gradients({{g, w}})
    return before, w * 1
  end)
  local a, b = f(mf.tensor({2, 2}))
  T.eq(a, {1, 2})
  T.eq(b, {0, 1})
  T.eq(w, {0, 1})
end)

T.test("mf.grad / value_and_grad inside mf.trace, and a tape watching a captured tensor", function()
  local f = mf.trace(function(x) return mf.grad(function(y) return mf.reduce_sum(y * y * y) end)(x) end)
  T.eq(f(mf.tensor({1, 2})), {3, 12})
  local h = mf.trace(function(k)
    local v, g = mf.value_and_grad(function(y) return y * y * k end)(3)
    return v, g
  end)
  local v, g = h(2)
  T.eq(v, 18)
  T.eq(g, 12)
  local c = mf.tensor({1, 2})
  local q = mf.trace(function(x)
    local tape = mf.GradientTape()
    tape:watch(c)
    return tape:gradient(mf.reduce_sum(c * x), c)
  end)
  T.eq(q(mf.tensor({5, 7})), {5, 7})
end)

T.test("a function retraced again and again gets one warning", function()
  local exe = arg and (arg[-1] or arg[0])
  T.ok(exe and exe:find("moonflow"), "cannot find the moonflow binary in arg")
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write("local f = mf.trace(function(x, lr) return x * lr end)\n",
          "for i = 1, 25 do f(mf.ones{2}, i * 0.1) end\n",
          "io.write(f:trace_count())\n")
  f:close()
  local p = assert(io.popen(exe .. " " .. path .. " 2>&1"))
  local out = p:read("a")
  p:close()
  os.remove(path)
  local _, n = out:gsub("has been traced 10 times", "")
  T.eq(n, 1, nil, out)
  T.ok(out:find(":2%): one trace per new signature"), out)
  T.ok(out:find("25$"), out)
end)

T.done()
