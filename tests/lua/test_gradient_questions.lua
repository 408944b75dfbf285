-- test_gradient_questions.lua — gradients questions answered: the graph-mode
-- explainer, :item() explained as leaving the tape, TensorFlow 1.x's "No
-- gradients provided for any variable", no gradient through assign ops,
-- the nil hint after a nil gradient at the prompt (piped to moonflow -i;
-- test_prompt drives the real terminal).
local T = dofile("tests/lua/harness.lua")
local exe = assert(arg and arg[-1], "run with the moonflow program")

T.test("mf.explain_gradients in graph mode", function()
  local g = mf.Graph()
  local w, x, y, z, k, s, u
  g:as_default(function()
    w = mf.Variable(1.0, {name = "w"})
    x = mf.placeholder("float32", {}, "x")
    y = w * x
    z = w:assign_add(x) * 2
    k = mf.cast(mf.cast(w, "int32"), "float32") * 2
    s = mf.stop_gradient(w) * 3
    u = x * 5
    T.eq(mf.gradients(z, {x})[1], nil)
  end)
  T.ok(mf.explain_gradients(y, w):find("^connected"))
  T.ok(mf.explain_gradients(z, x):find("assign op 'w/AssignAdd' cut the path", 1, true))
  T.ok(mf.explain_gradients(k, w):find("gives a tensor of dtype int32", 1, true))
  T.ok(mf.explain_gradients(s, w):find("stop_gradient", 1, true))
  T.ok(mf.explain_gradients(u, w):find("does not depend on the source", 1, true))
  T.raises(function() mf.explain_gradients(mf.tensor(1.0), w) end, "tensors of one graph")
end)

T.test("explain_gradients follows a custom gradient as mf.gradients does", function()
  -- The walk sends a custom gradient's dy to the inputs f was called with,
  -- past the Round inside f; explain asks the same records (it used to name
  -- the Round as the cut while mf.gradients gave a gradient).
  local f = mf.custom_gradient(function(x)
    return mf.round(x) * 1, function(dy) return dy * 2 end
  end)
  local g = mf.Graph()
  local x, y, r
  g:as_default(function()
    x = mf.placeholder("float32", {}, "x")
    y = f(x) * 3
    r = mf.round(x) * 3
    T.ok(mf.gradients(y, {x})[1] ~= nil)
    T.eq(mf.gradients(r, {x})[1], nil)
  end)
  T.ok(mf.explain_gradients(y, x):find("^connected"), mf.explain_gradients(y, x))
  T.ok(mf.explain_gradients(r, x):find("(Round) has no gradient", 1, true),
       mf.explain_gradients(r, x))
end)

T.test(":item() then rebuilding is explained as leaving the tape", function()
  local w = mf.Variable(1.0)
  local tape = mf.GradientTape({persistent = true})
  local k = mf.tensor((w * 2):item())
  local z = k * 3
  T.eq(tape:gradient(z, w), nil)
  T.ok(tape:explain(z, w):find("left the tape as a Lua number", 1, true), tape:explain(z, w))
end)

T.test("no gradient flows through assign, assign_add, assign_sub (eager)", function()
  local v = mf.Variable(0.0, {name = "v"})
  local x = mf.tensor(3.0)
  local tape = mf.GradientTape({persistent = true})
  tape:watch(x)
  v:assign(x * 2)
  local y = v * 1
  T.eq(tape:gradient(y, x), nil)
  T.eq(tape:gradient(y, v), 1)
  v:assign_add(x)
  v:assign_sub(x * 0.5)
  local y2 = v * 1
  T.eq(tape:gradient(y2, x), nil)
  T.eq(v, 7.5)
end)

T.test("No gradients provided for any variable (eager and graph)", function()
  local opt = mf.train.GradientDescentOptimizer(0.1)
  T.raises(function() opt:minimize(function() return mf.tensor(1.0) * 2 end) end,
           "compute_gradients: No gradients provided for any variable: the loss read no "
           .. "trainable Variable")
  local v = mf.Variable(1.0, {name = "v"})
  T.raises(function()
    opt:minimize(function() return mf.tensor(1.0) * 2 end, {var_list = {v}})
  end, "No gradients provided for any variable: ['v']")
  local frozen = mf.Variable(1.0, {trainable = false})
  T.raises(function() opt:minimize(function() return frozen * 2 end) end,
           "No gradients provided for any variable")
  local g = mf.Graph()
  g:as_default(function()
    local w = mf.Variable(1.0, {name = "w"})
    local b = mf.Variable(1.0, {name = "b"})
    local x = mf.placeholder("float32", {}, "x")
    local o = mf.train.GradientDescentOptimizer(0.1)
    T.raises(function() o:minimize(x * 2) end,
             "No gradients provided for any variable: ['w', 'b']")
    T.ok(w and b)
  end)
end)

T.test("the prompt adds a one-line hint after a nil gradient", function()
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write("x = mf.tensor(2.0)\nt = mf.GradientTape()\ny = x * x\nt:gradient(y, x)\n",
          "t:gradient(y, x)\n1 + 1\n",
          "g = mf.Graph()\ng:as_default(function() a = mf.placeholder('float32', {}); ",
          "b = mf.placeholder('float32', {}); c = a * 2 end)\nmf.gradients(c, {b})\n",
          "mf.gradients(c, {a})\n")
  f:close()
  local p = assert(io.popen(exe .. " -i < " .. path .. " 2>&1"))
  local out = p:read("a")
  p:close()
  os.remove(path)
  local _, n = out:gsub("%-%- nil: tape:explain%(y, x%) says why", "")
  T.eq(n, 1, 0, out)   -- once: the second ask is an error, 1 + 1 no gradient
  local _, m = out:gsub("%-%- nil: mf.explain_gradients%(y, x%) says why", "")
  T.eq(m, 1, 0, out)   -- the array with a hole; the connected one gets no hint
end)

T.done()
