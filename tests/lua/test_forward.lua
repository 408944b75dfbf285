-- test_forward.lua — forward mode (issue #33 items 1 and 2): mf.ForwardAccumulator
-- (TensorFlow's), dual numbers, to-be-closed use, nesting with tapes and
-- with other accumulators, inside mf.trace; mf.jvp, mf.vjp, mf.hvp and
-- mf.hessian against PyTorch's torch.autograd.functional on the same
-- functions (tests/lua/data/gen_forward_torch.py wrote the literals).
local T = dofile("tests/lua/harness.lua")
local torch = dofile("tests/lua/data/forward_torch.lua")

local TOL = 1e-12

-- Element k (row-major) of a tensor of 'shape' is fn(k), float64.
local function by_index(shape, fn)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local flat = {}
  for k = 0, n - 1 do flat[k + 1] = fn(k) end
  return mf.reshape(mf.tensor(flat, "float64"), shape)
end

local function flat(t) return mf.reshape(t, {-1}):totable() end

local X23 = by_index({2, 3}, function(k) return math.sin(1.3 * k + 0.2) end)
local Y23 = by_index({2, 3}, function(k) return math.cos(0.7 * k - 0.1) end)
local X3 = by_index({3}, function(k) return math.sin(1.3 * k + 0.2) end)
local A = by_index({3, 3}, function(k) return 0.4 * math.cos(1.1 * k + 0.3) end)
local C = by_index({2, 3}, function(k) return k + 1 end)
local function v(shape) return by_index(shape, function(k) return math.cos(0.9 * k) end) end
local function w(shape) return by_index(shape, function(k) return math.sin(0.5 * k + 1) end) end

local function f(x, y) return mf.sin(x) * y + mf.exp(0.5 * x) / (1 + y * y) end
local function g(x)
  local ax = mf.reshape(mf.matmul(A, mf.reshape(x, {3, 1})), {3})
  return mf.reduce_sum(mf.tanh(ax) ^ 2) + mf.reduce_sum(x ^ 3) / 3 + mf.reduce_logsumexp(x)
end
local function h(x) return mf.nn.log_softmax(x) * C + mf.sqrt(x * x + 1) end

T.test("dual numbers: the tangent of x^3 at 2 is 12", function()
  local x = mf.tensor(2.0, "float64")
  local acc = mf.ForwardAccumulator(x, 1.0)
  local y = x * x * x
  acc:close()
  T.eq(y:item(), 8)
  T.eq(acc:jvp(y):item(), 12)
  T.eq(acc:jvp(x):item(), 1)
  T.eq(tostring(acc):match("^<ForwardAccumulator (%a+),"), "closed")
end)

T.test("unconnected, integer and after-close values have no tangent", function()
  local x = mf.tensor{1, 2}
  local other = mf.tensor{3, 4}
  local acc = mf.ForwardAccumulator(x, mf.tensor{1, 1})
  local y = other * 2
  local i = mf.argmax(x)
  acc:close()
  local after = x * 3
  T.eq(acc:jvp(y), nil)
  T.eq(acc:jvp(i), nil)
  T.eq(acc:jvp(after), nil)
  T.eq(acc:jvp(y, {unconnected = "zero"}), {0, 0})
  local list = acc:jvp({x, y})
  T.eq(list[1], {1, 1})
  T.eq(list[2], nil)
end)

T.test("to-be-closed: the block ends the accumulation", function()
  local x = mf.tensor({0.5, 1}, "float64")
  local acc, y
  do
    local a <close> = mf.ForwardAccumulator(x, mf.tensor({1, 0}, "float64"))
    acc = a
    y = mf.exp(x)
  end
  T.eq(tostring(acc):match("^<ForwardAccumulator (%a+),"), "closed")
  T.eq(acc:jvp(y), {math.exp(0.5), 0}, TOL)
  T.eq(acc:jvp(mf.exp(x)), nil)
end)

T.test("mf.jvp and mf.vjp of f(x, y) match torch.autograd.functional", function()
  local out, jv = mf.jvp(f, {X23, Y23}, {v{2, 3}, w{2, 3}})
  T.eq(flat(out), torch.f_out, TOL)
  T.eq(flat(jv), torch.f_jvp, TOL)
  local out2, vj = mf.vjp(f, {X23, Y23}, v{2, 3})
  T.eq(flat(out2), torch.f_out, TOL)
  T.eq(flat(vj[1]), torch.f_vjp_x, TOL)
  T.eq(flat(vj[2]), torch.f_vjp_y, TOL)
end)

T.test("a scalar g: jvp, hvp (forward over reverse) and hessian match torch", function()
  local out, jv = mf.jvp(g, X3, v{3})
  T.eq(flat(out), torch.g_out, TOL)
  T.eq(flat(jv), torch.g_jvp, TOL)
  local out2, hv = mf.hvp(g, X3, v{3})
  T.eq(flat(out2), torch.g_out, TOL)
  T.eq(flat(hv), torch.g_hvp, TOL)
  local H = mf.hessian(g, X3)
  T.eq(H.shape, {3, 3})
  T.eq(flat(H), torch.g_hessian, TOL)
  local _, grad = mf.vjp(g, X3)
  T.ok(grad.shape[1] == 3)
end)

T.test("log_softmax (a transposed backward) matches torch both ways", function()
  local _, jv = mf.jvp(h, X23, v{2, 3})
  T.eq(flat(jv), torch.h_jvp, TOL)
  local _, vj = mf.vjp(h, X23, w{2, 3})
  T.eq(flat(vj), torch.h_vjp, TOL)
end)

T.test("mf.jacobian matches torch, both strategies and auto", function()
  local B = by_index({5, 2}, function(k) return math.cos(0.8 * k + 0.4) end)
  local function t(x) return mf.tanh(mf.reshape(mf.matmul(B, mf.reshape(x, {2, 1})), {5})) end
  local X2 = mf.slice(X3, {1}, {2})
  for _, strategy in ipairs{"auto", "forward-mode", "reverse-mode"} do
    local J = mf.jacobian(f, {X23, Y23}, {strategy = strategy})
    T.eq(J[1].shape, {2, 3, 2, 3})
    T.eq(flat(J[1]), torch.f_jac_x, TOL, strategy)
    T.eq(flat(J[2]), torch.f_jac_y, TOL, strategy)
    local Jt = mf.jacobian(t, X2, {strategy = strategy})
    T.eq(Jt.shape, {5, 2})
    T.eq(flat(Jt), torch.t_jac, TOL, strategy)
  end
  T.raises(function() mf.jacobian(t, X2, {strategy = "sideways"}) end, "jacobian: " ..
           "strategy must be \"auto\", \"forward-mode\" or \"reverse-mode\", got sideways")
end)

T.test("tape:jacobian(y, {x1, x2}): one jacobian per source, the tape asked once", function()
  local x1, x2 = mf.tensor{1, 2}, mf.tensor{3, 4}
  local tape = mf.GradientTape()
  tape:watch({x1, x2})
  local y = x1 * x2
  local J = tape:jacobian(y, {x1, x2})
  T.eq(J[1], {{3, 0}, {0, 4}})
  T.eq(J[2], {{1, 0}, {0, 2}})
  T.raises(function() tape:jacobian(y, {x1}) end, "can only be used once")
  local t2 = mf.GradientTape{persistent = true}
  t2:watch(x1)
  local z = x1 * x1
  local K = t2:jacobian(z, {a = x1, b = x2}, {unconnected = "zero"})
  T.eq(K.a, {{2, 0}, {0, 4}})
  T.eq(K.b, {{0, 0}, {0, 0}})
  T.eq(t2:jacobian(z, {x2})[1], nil)
  t2:stop()   -- under a recording tape a traced function would run its body eagerly
end)

T.test("inside mf.trace: mf.jacobian matches torch, both strategies", function()
  local B = by_index({5, 2}, function(k) return math.cos(0.8 * k + 0.4) end)
  local function t(x) return mf.tanh(mf.reshape(mf.matmul(B, mf.reshape(x, {2, 1})), {5})) end
  for _, strategy in ipairs{"forward-mode", "reverse-mode"} do
    local fn = mf.trace(function(x, y, x2)
      local J = mf.jacobian(f, {x, y}, {strategy = strategy})
      return J[1], J[2], mf.jacobian(t, x2, {strategy = strategy})
    end)
    local jx, jy, jt = fn(X23, Y23, mf.slice(X3, {1}, {2}))
    T.eq(fn:trace_count(), 1, strategy .. ": traced, not run eagerly")
    T.eq(jx.shape, {2, 3, 2, 3})
    T.eq(flat(jx), torch.f_jac_x, TOL, strategy)
    T.eq(flat(jy), torch.f_jac_y, TOL, strategy)
    T.eq(flat(jt), torch.t_jac, TOL, strategy)
  end
end)

T.test("inside mf.trace: tape:jacobian and batch_jacobian of a graph tensor", function()
  local function taped(a, b)
    local tape = mf.GradientTape()
    tape:watch({a, b})
    return tape, mf.nn.softmax(a * b) * a
  end
  local fn = mf.trace(function(a, b)
    local tape, y = taped(a, b)
    local J = tape:jacobian(y, {a, b})
    local ok, err = pcall(tape.jacobian, tape, y, a)   -- not persistent: asked once
    local tape2, y2 = taped(a, b)
    return J[1], J[2], tape2:batch_jacobian(y2, a), ok, err
  end)
  local tape, y = taped(X23, Y23)
  local want = tape:jacobian(y, {X23, Y23})
  local tape2, y2 = taped(X23, Y23)
  local want_b = tape2:batch_jacobian(y2, X23)
  local j1, j2, jb, ok, err = fn(X23, Y23)
  T.eq(fn:trace_count(), 1)
  T.eq(flat(j1), flat(want[1]), TOL)
  T.eq(flat(j2), flat(want[2]), TOL)
  T.eq(jb.shape, {2, 3, 3})
  T.eq(flat(jb), flat(want_b), TOL)
  T.eq(ok, false)
  T.ok(tostring(err):find("can only be used once", 1, true), tostring(err))
  -- one gradient walk per element: the shape must be known
  mf.Graph():as_default(function()
    local p = mf.placeholder("float64", {-1, 3})
    local t3 = mf.GradientTape()
    t3:watch(p)
    local q = p * p
    T.raises(function() t3:jacobian(q, p) end, "jacobian: inside a graph the target's shape " ..
             "must be known (one gradient per element), got (?,3)")
  end)
end)

T.test("reverse over forward: a tape's gradient of a tangent is H v", function()
  local x = mf.tensor(X3, "float64")
  local tape = mf.GradientTape()
  tape:watch(x)
  local acc = mf.ForwardAccumulator(x, v{3})
  local y = g(x)
  acc:close()
  local hv = tape:gradient(acc:jvp(y), x)
  T.eq(flat(hv), torch.g_hvp, TOL)
end)

T.test("forward over forward: two accumulators give w' H v", function()
  local x = mf.tensor({0.3, -0.7}, "float64")
  local a1 = mf.ForwardAccumulator(x, mf.tensor({1, 2}, "float64"))
  local a2 = mf.ForwardAccumulator(x, mf.tensor({-1, 0.5}, "float64"))
  local y = mf.reduce_sum(x * x * x)
  a1:close()
  a2:close()
  local d1 = a1:jvp(y)             -- sum(3 x^2 v)
  T.eq(d1:item(), 3 * 0.09 * 1 + 3 * 0.49 * 2, TOL)
  -- a2 saw a1's rule: the tangent of d1 along w is sum(6 x v w)
  T.eq(a2:jvp(d1):item(), 6 * 0.3 * 1 * -1 + 6 * -0.7 * 2 * 0.5, TOL)
end)

T.test("graph mode: an accumulator inside mf.trace", function()
  local fn = mf.trace(function(x)
    local acc <close> = mf.ForwardAccumulator(x, mf.ones_like(x))
    local y = mf.sin(x) * x
    return acc:jvp(y)
  end)
  local x = mf.tensor({0.2, 1.5}, "float64")
  T.eq(fn(x), {math.cos(0.2) * 0.2 + math.sin(0.2), math.cos(1.5) * 1.5 + math.sin(1.5)}, TOL)
end)

T.test("a freed tensor's tangent is dropped; the live ones stay", function()
  local x = mf.tensor({1, 2}, "float64")
  local acc = mf.ForwardAccumulator(x, mf.tensor({1, 0}, "float64"))
  for _ = 1, 500 do local _ = x * 2 + 1 end   -- 1000 tensors with tangents, all garbage
  local kept = mf.sin(x)
  collectgarbage()
  collectgarbage()
  local n = tonumber(tostring(acc):match("(%d+) tangents"))
  T.ok(n and n <= 4, tostring(acc))   -- x's, kept's (and the constants' zeros)
  acc:close()
  T.eq(acc:jvp(kept), {math.cos(1), 0}, TOL)
  T.eq(tostring(acc):match("^<ForwardAccumulator closed"), "<ForwardAccumulator closed")
end)

T.test("bad arguments get clear errors", function()
  T.raises(function() mf.ForwardAccumulator(mf.tensor{1, 2}, mf.tensor{1, 2, 3}) end,
           "ForwardAccumulator: tangent 1 must match its primal (float32 (2,)), got float32 (3,)")
  T.raises(function() mf.ForwardAccumulator(mf.tensor({1}, "int32"), mf.tensor({1}, "int32")) end,
           "ForwardAccumulator: primal 1 is int32; forward mode needs float32 or float64")
  T.raises(function() mf.ForwardAccumulator({mf.tensor{1}, mf.tensor{2}}, {mf.tensor{1}}) end,
           "ForwardAccumulator: tangents must be an array of 2, one per primal, got 1")
  T.raises(function() mf.vjp(function(x) return x * 2 end, mf.tensor{1, 2}) end,
           "vjp: v can be nil only when f returns one tensor with one element")
  T.raises(function() mf.hessian(g, {X3, X3}) end, "hessian: x must be one tensor")
  -- a failed start leaves no accumulator running
  local x = mf.tensor{1}
  pcall(mf.ForwardAccumulator, x, mf.tensor{1, 2})
  local acc = mf.ForwardAccumulator(mf.tensor{5}, mf.tensor{1})
  local y = x * 2
  acc:close()
  T.eq(acc:jvp(y), nil)
end)

T.done()
