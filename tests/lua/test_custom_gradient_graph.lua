-- test_custom_gradient_graph.lua — mf.custom_gradient in the three modes: eager
-- (tapes, mf.grad), graph (mf.gradients + Session) and traced (mf.trace with a
-- GradientTape or mf.grad inside). The gradient function runs while the gradient
-- graph is built, with a symbolic dy, and nothing flows into what f did inside.
local T = dofile("tests/lua/harness.lua")

-- d f(x1, ..., xn) / d xi at the numbers 'args' in each mode: {eager, graph, traced},
-- each an array of numbers (nil where unconnected).
local function three_modes(f, args)
  local function nums(gs)
    local out = {}
    for i = 1, #args do out[i] = gs[i] and gs[i]:item() end
    return out
  end
  local eager = nums({mf.grad(f)(table.unpack(args))})
  local g = mf.Graph()
  local phs, grads = {}, nil
  g:as_default(function()
    for i = 1, #args do phs[i] = mf.placeholder("float32", {}, "x" .. i) end
    grads = mf.gradients(f(table.unpack(phs)), phs)
  end)
  local feeds = {}
  for i = 1, #args do feeds[phs[i]] = args[i] end
  local fetch, where = {}, {}
  for i = 1, #args do
    if grads[i] then fetch[#fetch + 1] = grads[i]; where[#fetch] = i end
  end
  local graph = {}
  if #fetch > 0 then
    local got = {mf.Session(g):run(fetch, feeds)}
    if type(got[1]) == "table" and not got[1].item then got = got[1] end
    for k, v in ipairs(got) do graph[where[k]] = v:item() end
  end
  local traced = nums({mf.trace(function(...) return mf.grad(f)(...) end)(table.unpack(args))})
  return eager, graph, traced
end

local function same_in_all(f, args, want, tol)
  local e, g, t = three_modes(f, args)
  T.eq(e, want, tol, "eager")
  T.eq(g, want, tol, "graph")
  T.eq(t, want, tol, "traced")
end

local times100 = mf.custom_gradient(function(x)
  return x * x, function(dy) return dy * 100 end
end)

T.test("the user's example gives 100 in eager, graph and traced mode", function()
  T.eq(mf.grad(times100)(3):item(), 100)
  T.eq(mf.trace(function(x) return mf.grad(times100)(x) end)(3):item(), 100)
  local g = mf.Graph()
  local p, gp = g:as_default(function()
    local p = mf.placeholder("float32", {})
    return p, mf.gradients(times100(p), {p})[1]
  end)
  T.eq(mf.Session(g):run(gp, {[p] = 3}):item(), 100)
  -- the forward value is f's
  T.eq(mf.trace(function(x) return times100(x) end)(3):item(), 9)
  same_in_all(times100, {3}, {100})
end)

T.test("a GradientTape inside mf.trace uses the custom gradient", function()
  local f = mf.trace(function(x)
    local tape = mf.GradientTape()
    tape:watch(x)
    local y = mf.reduce_sum(times100(x) * 3 + x)
    return tape:gradient(y, x)
  end)
  T.eq(f(mf.tensor{1, 2}), {301, 301})
  -- a tape stopped before the custom op does not see it
  local g = mf.trace(function(x)
    local tape = mf.GradientTape()
    tape:watch(x)
    local a = x * 2
    tape:stop()
    return tape:gradient(times100(a), x, {unconnected = "zero"})
  end)
  T.eq(g(mf.tensor(1)):item(), 0)
end)

T.test("two inputs: one gradient each, a nil one unconnected", function()
  local cg2 = mf.custom_gradient(function(a, b)
    return a * b, function(dy) return dy * b * 2, dy * a * 3 end
  end)
  same_in_all(cg2, {2, 5}, {10, 6}, 1e-6)
  local only_a = mf.custom_gradient(function(a, b)
    return a + b, function(dy) return dy * 7, nil end
  end)
  local e, g, t = three_modes(only_a, {1, 1})
  T.eq(e, {7, 0})   -- mf.grad gives zeros where unconnected
  T.eq(g[1], 7)
  T.eq(g[2], nil)
  T.eq(t, {7, 0})
end)

-- TensorFlow's tf.custom_gradient example: log(1 + e^x), whose plain gradient
-- e^x / (1 + e^x) is inf/inf = NaN at x = 100 in float32.
local log1pexp = mf.custom_gradient(function(x)
  local e = mf.exp(x)
  return mf.log(1 + e), function(dy) return dy * (1 - 1 / (1 + e)) end
end)

T.test("log1pexp: the numerically stable gradient in all three modes", function()
  same_in_all(log1pexp, {0}, {0.5}, 1e-6)
  same_in_all(log1pexp, {100}, {1})
  same_in_all(log1pexp, {-3}, {1 / (1 + math.exp(3))}, 1e-6)
  local plain = function(x) return mf.log(1 + mf.exp(x)) end
  local g = mf.grad(plain)(100):item()
  T.ok(g ~= g, "the plain gradient is NaN at 100 (that is why the custom one exists)")
end)

T.test("higher order: d2/dx2 through f's intermediates, equal in all modes", function()
  -- sigmoid'(0) = 0.25: the gradient function uses e = exp(x) from f
  local d1 = mf.grad(log1pexp)
  T.eq(mf.grad(d1)(0):item(), 0.25, 1e-6)
  T.eq(mf.trace(function(x) return mf.grad(d1)(x) end)(0):item(), 0.25, 1e-6)
  local g = mf.Graph()
  local p, d2 = g:as_default(function()
    local p = mf.placeholder("float32", {})
    local gp = mf.gradients(log1pexp(p), {p})[1]
    return p, mf.gradients(gp, {p})[1]
  end)
  T.eq(mf.Session(g):run(d2, {[p] = 0}):item(), 0.25, 1e-6)
  -- times100's gradient is a constant: its own gradient is zero everywhere
  T.eq(mf.grad(mf.grad(times100))(3):item(), 0)
  T.eq(mf.trace(function(x) return mf.grad(mf.grad(times100))(x) end)(3):item(), 0)
end)

T.test("a clipped gradient (straight through) on a vector, and on a graph Variable", function()
  local clip = mf.custom_gradient(function(x)
    return mf.round(x), function(dy) return mf.clip_by_value(dy, -1, 1) end
  end)
  local f = function(x) return mf.reduce_sum(clip(x) * mf.tensor{5, -0.5, -4}) end
  local x = mf.tensor{0.4, 1.6, 2.2}
  T.eq(mf.grad(f)(x), {1, -0.5, -1})
  T.eq(mf.trace(function(v) return mf.grad(f)(v) end)(x), {1, -0.5, -1})
  local g = mf.Graph()
  local gv = g:as_default(function()
    local v = mf.Variable(x, {name = "v"})
    return mf.gradients(f(v), {v})[1]
  end)
  local s = mf.Session(g)
  g:as_default(function() s:run(mf.global_variables_initializer()) end)
  T.eq(s:run(gv), {1, -0.5, -1})
end)

T.test("errors in the gradient function name custom_gradient", function()
  local bad = mf.custom_gradient(function(x)
    return x * 2, function(dy) error("no grad here") end
  end)
  T.raises(function() mf.grad(bad)(1) end, "custom_gradient: the gradient function failed")
  T.raises(function() mf.trace(function(x) return mf.grad(bad)(x) end)(1) end,
           "custom_gradient: the gradient function failed")
  local g = mf.Graph()
  g:as_default(function()
    local p = mf.placeholder("float32", {})
    T.raises(function() mf.gradients(bad(p), {p}) end,
             "custom_gradient: the gradient function failed")
    T.raises(function() mf.gradients(bad(p), {p}) end, "no grad here")
    local wrong = mf.custom_gradient(function(x)
      return x * 2, function(dy) return mf.tensor{1, 2} end
    end)
    T.raises(function() mf.gradients(wrong(p), {p}) end,
             "': the gradient function returned shape (2,) (float32) for input 1, expected () "
             .. "(float32)")
    local notensor = mf.custom_gradient(function(x)
      return x * 2, function(dy) return "x" end
    end)
    T.raises(function() mf.gradients(notensor(p), {p}) end,
             "the gradient function returned a string for input 1")
  end)
end)

T.test("a trainable variable f reads, not passed as an input, is refused by name", function()
  local w = mf.Variable(mf.tensor(2.0), {name = "w"})
  local uses_w = mf.custom_gradient(function(x)
    return x * w, function(dy) return dy * w end
  end)
  local msg = "f reads the trainable variable 'w', which is not one of its inputs"
  -- eagerly the gradient function gets it as TensorFlow's 'variables' and must answer for it
  T.raises(function() mf.grad(uses_w)(3) end, msg .. ": the gradient function gets such")
  T.raises(function() mf.trace(function(x) return mf.grad(uses_w)(x) end)(3) end, msg)
  T.eq(uses_w(3):item(), 6)   -- no tape records: no gradient can go missing
  local g = mf.Graph()
  g:as_default(function()
    local gw = mf.Variable(mf.tensor(2.0), {name = "gw"})
    local uses_gw = mf.custom_gradient(function(x)
      return x * gw, function(dy) return dy * gw end
    end)
    T.raises(function() uses_gw(mf.placeholder("float32", {})) end,
             "custom_gradient: f reads the trainable variable 'gw'")
  end)
  -- passed as an input, its gradient is the gradient function's
  local scale = mf.custom_gradient(function(x, v)
    return x * v, function(dy) return dy * v * 10, dy * x * 10 end
  end)
  local tape = mf.GradientTape()
  local y = scale(mf.tensor(3.0), w)
  T.eq(tape:gradient(y, w):item(), 30)
  local gv = mf.trace(function(x)
    local t = mf.GradientTape()
    return t:gradient(scale(x, w), w)
  end)(mf.tensor(3.0))
  T.eq(gv:item(), 30)
  local g2 = mf.Graph()
  local grad = g2:as_default(function()
    local v = mf.Variable(mf.tensor(2.0), {name = "v"})
    return mf.gradients(scale(mf.tensor(3.0), v), {v})[1]
  end)
  local s = mf.Session(g2)
  g2:as_default(function() s:run(mf.global_variables_initializer()) end)
  T.eq(s:run(grad):item(), 30)
end)

T.test("optimizers' minimize use the custom gradient, eager and graph", function()
  -- loss = sum(cg(w, 1)) with dw = 0.5 (the plain gradient would be 2 w = 4)
  local half = mf.custom_gradient(function(v, one)
    return v * v * one, function(dy) return dy * 0.5, nil end
  end)
  local w = mf.Variable(mf.tensor{2.0}, {name = "w"})
  local opt = mf.train.GradientDescentOptimizer(1.0)
  opt:minimize(function() return mf.reduce_sum(half(w, 1)) end)
  T.eq(w, {1.5})
  local g = mf.Graph()
  local train, init, gw
  g:as_default(function()
    gw = mf.Variable(mf.tensor{2.0}, {name = "gw"})
    train = mf.train.GradientDescentOptimizer(1.0):minimize(mf.reduce_sum(half(gw, 1)))
    init = mf.global_variables_initializer()
  end)
  local sess = mf.Session(g)
  sess:run(init)
  sess:run(train)
  sess:run(train)
  T.eq(sess:run(gw), {1})
end)

T.test("a custom gradient's function is dropped when its trace finishes", function()
  local kept
  mf.trace(function(x)
    local y = times100(x)
    kept = {x = x, y = y}
    return y
  end)(mf.tensor(2.0))
  T.raises(function() mf.gradients(kept.y, {kept.x}) end,
           "custom_gradient 'custom_gradient/identity': its gradient function was released "
           .. "when its trace finished")
end)

T.test("retracing with captured tensors keeps memory flat", function()
  local function once()
    local f = mf.trace(function(x) return mf.grad(log1pexp)(x) end)
    T.eq(f(0):item(), 0.5, 1e-6)
  end
  for _ = 1, 5 do once() end
  collectgarbage()
  collectgarbage()
  local before = mf.memory().tensors
  for _ = 1, 50 do once() end
  collectgarbage()
  collectgarbage()
  local after = mf.memory().tensors
  T.ok(after <= before + 2, string.format("tensors %d -> %d", before, after))
end)

T.test("g:to_dot and g:render show the custom gradient's nodes", function()
  local g = mf.Graph()
  g:as_default(function()
    local p = mf.placeholder("float32", {}, "p")
    mf.gradients(log1pexp(p), {p})
  end)
  local dot = g:to_dot()
  T.ok(dot:find("custom_gradient/identity", 1, true), "the marked output")
  T.ok(dot:find("gradients/custom_gradient/identity_grad/", 1, true), "the gradient's nodes")
  if not os.execute("command -v dot >/dev/null 2>&1") then
    print("  (render skipped: Graphviz 'dot' is not installed)")
    return
  end
  local base = os.tmpname()
  g:render(base .. ".svg")
  local f = assert(io.open(base .. ".svg", "rb"))
  local svg = f:read("a")
  f:close()
  T.ok(svg:find("<svg", 1, true) and svg:find("custom_gradient", 1, true), "an SVG file")
  os.remove(base .. ".svg")
  os.remove(base)
end)

T.done()
