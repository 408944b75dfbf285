-- test_forward_graph.lua — forward mode inside mf.trace for the ops whose
-- forward rule is their transposed backward (eager/jvp.c's TRANSPOSE:
-- softmaxes and losses, pools, normalisations, linear algebra, Pow,
-- Max/Min, sort/top_k, and the *Grad ops met by forward over reverse).
-- There the rule takes a symbolic gradient over the nodes it built
-- (mode/forward_graph.c). One test per family: mf.jvp and mf.hvp in a traced
-- function against the same calls run eagerly (whose rules
-- tests/unit/test_jvp.c checks against finite differences, in a graph too).
local T = dofile("tests/lua/harness.lua")

local TOL = 1e-10

-- float64 tensors of 'shape' whose element k (row-major) is sin(1.3 k + 0.2)
-- (inputs) or cos(0.9 k) (tangents).
local function count(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return mf.reshape(mf.range(0.0, n, 1.0, "float64"), shape)
end
local function x_of(shape) return mf.sin(count(shape) * 1.3 + 0.2) end
local function v_of(shape) return mf.cos(count(shape) * 0.9) end

-- mf.jvp(f, xs, vs) inside mf.trace equals it run eagerly.
local function same_jvp(f, xs, vs)
  local _, want = mf.jvp(f, xs, vs)
  local traced = mf.trace(function(...)
    local n = select("#", ...) // 2
    local args = {...}
    local _, jv = mf.jvp(f, table.move(args, 1, n, 1, {}), table.move(args, n + 1, 2 * n, 1, {}))
    return jv
  end)
  local args = table.move(vs, 1, #vs, #xs + 1, table.move(xs, 1, #xs, 1, {}))
  local got = traced(table.unpack(args))
  T.eq(got:totable(), want:totable(), TOL)
  return got
end

-- mf.hvp(f, x, v) inside mf.trace equals it run eagerly: forward over
-- reverse, so the accumulator meets the *Grad ops of f's backward.
local function same_hvp(f, x, v)
  local _, want = mf.hvp(f, x, v)
  local traced = mf.trace(function(a, b) local _, hv = mf.hvp(f, a, b); return hv end)
  T.eq(traced(x, v):totable(), want:totable(), TOL)
end

T.test("softmax, log_softmax and the cross-entropies", function()
  local x, v = x_of{2, 4}, v_of{2, 4}
  local labels = mf.tensor({{0.1, 0.2, 0.3, 0.4}, {1, 0, 0, 0}}, "float64")
  same_jvp(function(a)
    return mf.nn.softmax(a) + mf.nn.log_softmax(a) * 0.5 +
           mf.reshape(mf.nn.softmax_cross_entropy_with_logits(labels, a), {2, 1}) +
           mf.reshape(mf.nn.sparse_softmax_cross_entropy_with_logits(mf.tensor({2, 4}, "int64"),
                                                                     a), {2, 1})
  end, {x}, {v})
end)

T.test("pools: max_pool", function()
  local x, v = x_of{1, 4, 4, 2}, v_of{1, 4, 4, 2}
  same_jvp(function(a) return mf.nn.max_pool(a, 2, 2, "VALID") end, {x}, {v})
end)

T.test("normalisations: layer_norm and fused_batch_norm", function()
  local x, v = x_of{3, 4}, v_of{3, 4}
  same_jvp(function(a) return mf.nn.layer_norm(a) end, {x}, {v})
  local x4, v4 = x_of{2, 2, 2, 3}, v_of{2, 2, 2, 3}
  local gamma, beta = mf.tensor({1, 2, 0.5}, "float64"), mf.tensor({0, 1, -1}, "float64")
  same_jvp(function(a, g) return (mf.nn.fused_batch_norm(a, g, beta)) end,
           {x4, gamma}, {v4, mf.tensor({0.3, -0.2, 1}, "float64")})
end)

T.test("linear algebra: inv, solve, cholesky, det", function()
  local a = mf.cos(count{3, 3} * 1.1 + 0.3) * 0.3 + mf.eye(3, "float64") * 2
  local va, b, vb = v_of{3, 3}, x_of{3, 2}, v_of{3, 2}
  same_jvp(function(m, r)
    local spd = mf.matmul(m, m, {transpose_b = true})
    return mf.linalg.inv(m) + mf.linalg.solve(m, r)[{{}, {1, 1}}] + mf.linalg.cholesky(spd) +
           mf.reshape(mf.linalg.det(m), {1, 1})
  end, {a, b}, {va, vb})
end)

T.test("elementwise: pow, maximum, minimum, atan2, mod", function()
  local x, v = x_of{2, 3} + 2, v_of{2, 3}
  local y, w = v_of{2, 3} + 1.5, x_of{2, 3}
  same_jvp(function(a, b)
    return mf.pow(a, b) + mf.maximum(a, b) * 2 + mf.minimum(a, b) * 3 + mf.atan2(a, b) +
           mf.mod(a, 0.7)
  end, {x, y}, {v, w})
end)

T.test("reductions: reduce_max, reduce_min, reduce_prod, cumprod, pad", function()
  local x, v = x_of{2, 3}, v_of{2, 3}
  same_jvp(function(a)
    return mf.reduce_max(a, {axis = 2}) + mf.reduce_min(a, {axis = 2}) +
           mf.reduce_prod(a, {axis = 2}) + mf.reduce_sum(mf.cumprod(a, 2), {axis = 2}) +
           mf.reduce_sum(mf.pad(a, {{1, 0}, {0, 2}}), {axis = 2})[{{2, 3}}]
  end, {x}, {v})
end)

T.test("sort and top_k", function()
  local x, v = x_of{2, 5}, v_of{2, 5}
  same_jvp(function(a)
    local values = mf.top_k(a, 2)
    return mf.concat({values, mf.sort(a)}, 2)
  end, {x}, {v})
end)

T.test("forward over reverse inside mf.trace: the tangent of a gradient", function()
  -- the gradient walk makes tensors of its own for the nodes it reads: the
  -- accumulator finds their tangents by node output
  local cube = function(a) return mf.reduce_sum(a * a * a) end
  local traced = mf.trace(function(a, b) local _, hv = mf.hvp(cube, a, b); return hv end)
  T.eq(traced(mf.tensor{1, 2}, mf.tensor{1, 0}):totable(), {6, 0})   -- 6 x v
end)

T.test("the *Grad ops: a Hessian-vector product inside mf.trace", function()
  local x, v = x_of{1, 4, 4, 2}, v_of{1, 4, 4, 2}
  same_hvp(function(a)
    local p = mf.nn.max_pool(mf.nn.relu(a) * a, 2, 2, "VALID")
    local flat = mf.reshape(p, {1, 8})
    return mf.reduce_sum(mf.nn.log_softmax(flat) * mf.nn.softmax(flat)) +
           mf.reduce_sum(mf.nn.layer_norm(flat) ^ 3) +
           mf.reduce_sum(mf.nn.avg_pool(a * a, 2, 2, "VALID"))
  end, x, v)
end)

T.done()
