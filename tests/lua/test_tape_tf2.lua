-- mf.grad / mf.value_and_grad as TensorFlow 2 and JAX users expect (issue 16): nested tables
-- of parameters (gradients in the same structure) and functions made by mf.trace.
local T = dofile("tests/lua/harness.lua")

T.test("mf.grad of a nested table of tensors and Variables", function()
  local params = {w = mf.Variable{1.0, 2.0}, layers = {mf.tensor{3.0}, mf.Variable{4.0}}}
  local loss = function(p, x)
    return mf.reduce_sum(p.w * x) + mf.reduce_sum(p.layers[1] * p.layers[2])
  end
  local gp, gx = mf.grad(loss)(params, mf.tensor{5.0, 6.0})
  T.eq(gp.w, {5, 6})
  T.eq(gp.layers[1], {4})
  T.eq(gp.layers[2], {3})
  T.eq(gx, {1, 2})
  local v, gp2 = mf.value_and_grad(loss, {argnums = 1})(params, mf.tensor{5.0, 6.0})
  T.eq(v, 29)
  T.eq(gp2.w, {5, 6})
  T.raises(function() mf.grad(loss)({w = "x"}, mf.tensor{1}) end,
           "a table argument may hold tensors and Variables")
end)

T.test("W3: f adding or removing keys of its table argument keeps each gradient's key", function()
  -- each parameter's gradient is its own constant factor: d(sum(k * p.key)) = k
  local function loss(p)
    local y = mf.reduce_sum(p.a * 2) + mf.reduce_sum(p.b * 3) + mf.reduce_sum(p.list[1] * 5)
    p.a = nil                              -- removed
    for i = 1, 40 do p["new" .. i] = mf.tensor{1.0} end   -- added (the table rehashes)
    p.list[2] = mf.tensor{9.0}             -- the array grows
    return y
  end
  local g = mf.grad(loss)({a = mf.tensor{1.0}, b = mf.tensor{1.0}, list = {mf.tensor{1.0}}})
  T.eq(g.a, {2})
  T.eq(g.b, {3})
  T.eq(g.list[1], {5})
  T.eq(g.list.n, 1)
  T.eq(g.new1, nil)
  T.eq(g.list[2], nil)
  local _, gv = mf.value_and_grad(function(p)
    local y = mf.reduce_sum(p.x * 7)
    p.x, p.z = nil, p.x
    return y
  end)({x = mf.tensor{1.0}})
  T.eq(gv.x, {7})
  T.eq(gv.z, nil)
end)

T.test("mf.grad of an mf.trace function, and of its gradient", function()
  local f = mf.trace(function(x) return mf.reduce_sum(x * x * x) end)
  T.eq(mf.grad(f)(mf.tensor{1, 2}), {3, 12})
  local df = mf.grad(function(x) return mf.reduce_sum(mf.grad(f)(x)) end)
  T.eq(df(mf.tensor{1, 2}), {6, 12})
end)

T.test("a tape's jacobian agrees with per-row gradients; batch_jacobian with the diagonal", function()
  local x = mf.tensor{{1, 2}, {3, 4}}
  local tape = mf.GradientTape{persistent = true}
  tape:watch(x)
  local y = x * x
  tape:stop()
  local j = tape:jacobian(y, x)
  T.eq(j.shape, {2, 2, 2, 2})
  T.eq(j[1][2], {{0, 4}, {0, 0}})
  T.eq(tape:batch_jacobian(y, x), {{{2, 0}, {0, 4}}, {{6, 0}, {0, 8}}})
  T.eq(tape:jacobian(y, mf.tensor{1}), nil)   -- unwatched: nil, as the gradient
  T.raises(function() tape:batch_jacobian(mf.reduce_sum(y), x) end, "batch")
  -- TensorFlow: target and source of rank at least 2 ([batch, ...])
  local v = mf.tensor{1, 2}
  tape = mf.GradientTape{persistent = true}
  tape:watch(v)
  local vv = v * v
  tape:stop()
  T.raises(function() tape:batch_jacobian(vv, v) end,
           "batch_jacobian: target and source must have rank at least 2 ([batch, ...]), got " ..
           "ranks 1 and 1")
end)

T.test("a non-persistent tape answers jacobian once", function()
  local x = mf.tensor{1, 2}
  local tape = mf.GradientTape()
  tape:watch(x)
  local y = x * 3
  tape:stop()
  T.eq(tape:jacobian(y, x), {{3, 0}, {0, 3}})
  T.raises(function() tape:jacobian(y, x) end, "can only be used once")
end)

T.test("mf.grad's bad input names grad or value_and_grad; a failing f leaves no tape", function()
  T.raises(function() mf.grad(5) end, "bad argument #1 to 'grad' (function expected, got number)")
  T.raises(function() mf.value_and_grad(print, {argnums = 1.5}) end,
           "value_and_grad: argnums must be an integer or an array of integers")
  local sq = function(x) return mf.reduce_sum(x * x) end
  local many = {}
  for i = 1, 65 do many[i] = 1 end
  T.raises(function() mf.grad(sq)(table.unpack(many)) end, "grad: at most 64 arguments")
  T.raises(function() mf.grad(sq)("x") end,
           "grad: argument 1 must be a tensor, a Variable or a number to be differentiated, " ..
           "got string")
  T.raises(function() mf.grad(function() return 1 end)(2) end,
           "grad: f must return a scalar tensor, got number")
  local cycle = {}
  cycle[1] = cycle
  T.raises(function() mf.value_and_grad(sq)(cycle) end,
           "value_and_grad: structures nested deeper than 32 tables (a cycle?)")
  T.raises(function() mf.grad(sq, {argnums = {0}})(1) end, "argnums entry 0 is out of range")
  T.raises(function() mf.grad(function() error("boom") end)(1) end, "boom")
  -- no tape records any more: a traced function traces instead of running inline
  local f = mf.trace(sq)
  T.eq(f(mf.tensor{1, 2}):item(), 5)
  T.eq(f:trace_count(), 1)
  local ga, gb = mf.grad(function(a, b) return mf.reduce_sum(a[1] * b) end)({mf.tensor{2}}, 3)
  T.eq(ga.n, 1)
  T.eq(ga[1], {3})
  T.eq(gb:item(), 2)
  local x = mf.tensor{1, 2}
  local tape = mf.GradientTape()
  tape:watch(x)
  local y1, y2 = x * x, x + x
  T.raises(function() tape:gradient({y1, y2}, x, {output_gradients = mf.ones{2}}) end,
           "gradient: output_gradients goes with one target, got 2 targets")
end)

T.done()
