-- test_vmap.lua — mf.vmap (issue #33 item 3): torch.func.vmap's semantics
-- with 1-based axes; per-example gradients of an MLP with softmax
-- cross-entropy against a loop over examples (bit-close) and against
-- PyTorch's functorch.vmap(grad) (tests/lua/data/gen_vmap_torch.py wrote
-- the literals); in_axes/out_axes, shared arguments and results, inside
-- mf.trace, under a tape; clear errors, naming the op without a batching
-- rule.
local T = dofile("tests/lua/harness.lua")
local torch = dofile("tests/lua/data/vmap_torch.lua")

local TOL = 1e-12

local function count(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return mf.reshape(mf.range(0.0, n, 1.0, "float64"), shape)
end
local function flat(t) return mf.reshape(t, {-1}):totable() end

-- The model of gen_vmap_torch.py, for one example x (4,) with label y.
local W1 = mf.sin(count{4, 5} * 1.3 + 0.2) * 0.5
local b1 = mf.cos(count{5}) * 0.1
local W2 = mf.cos(count{5, 3} * 0.7 - 0.1) * 0.5
local b2 = mf.sin(count{3}) * 0.1
local X = mf.cos(count{6, 4} * 0.9) + 0.3
local Y = mf.tensor({1, 2, 3, 1, 2, 3}, "int64")

local function loss(w1, c1, w2, c2, x, y)
  local h = mf.nn.relu(mf.matmul(mf.reshape(x, {1, 4}), w1) + c1)
  local logits = mf.matmul(h, w2) + c2
  return mf.reduce_mean(mf.nn.sparse_softmax_cross_entropy_with_logits(mf.reshape(y, {1}),
                                                                         logits))
end
local grads = mf.grad(loss, {argnums = {1, 2, 3, 4}})
local per_example = mf.vmap(grads, {in_axes = {nil, nil, nil, nil, 1, 1}})

T.test("per-example gradients of an MLP equal a loop over examples", function()
  local got = {per_example(W1, b1, W2, b2, X, Y)}
  T.eq(got[1].shape, {6, 4, 5})
  T.eq(got[4].shape, {6, 3})
  for i = 1, 6 do
    local want = {grads(W1, b1, W2, b2, X[{i}], Y[{i}])}
    for k = 1, 4 do T.eq(flat(got[k][{i}]), flat(want[k]), TOL, "example " .. i) end
  end
end)

T.test("per-example gradients match PyTorch's functorch.vmap(grad)", function()
  local gW1, gb1, gW2, gb2 = per_example(W1, b1, W2, b2, X, Y)
  T.eq(flat(gW1), torch.gW1, TOL)
  T.eq(flat(gb1), torch.gb1, TOL)
  T.eq(flat(gW2), torch.gW2, TOL)
  T.eq(flat(gb2), torch.gb2, TOL)
end)

T.test("in_axes and out_axes move the batch; shared results are repeated", function()
  local a, b = count{2, 3}, count{3, 2} + 1
  local dot = function(u, v) return mf.reduce_sum(u * v), mf.reduce_sum(mf.ones{2}) end
  -- batched along axis 2 of b: the columns of b pair with the rows of a
  local d, shared = mf.vmap(dot, {in_axes = {1, 2}})(a, b)
  T.eq(d, {0 * 1 + 1 * 3 + 2 * 5, 3 * 2 + 4 * 4 + 5 * 6})
  T.eq(shared, {2, 2})
  -- a shared argument (nil) and the batch put last in the result
  local scale = function(s, u) return mf.nn.softmax(u * s) end
  local r = mf.vmap(scale, {in_axes = {nil, 1}, out_axes = 2})(mf.tensor(2.0, "float64"), a)
  T.eq(r.shape, {3, 2})
  T.eq(flat(mf.transpose(r)), flat(mf.nn.softmax(a * 2)), TOL)
  -- negative axes count from the end
  local m = mf.vmap(function(u) return mf.reduce_max(u) end, {in_axes = -1})(a)
  T.eq(m, {3, 4, 5})
end)

T.test("reshapes, transposes, concat, gather and matmul of two batched operands", function()
  local a, b = count{4, 2, 3}, mf.cos(count{4, 3, 2})
  local function f(u, v)
    local p = mf.matmul(u, v) + mf.transpose(mf.matmul(mf.transpose(v), mf.transpose(u)))
    local picked = mf.gather(mf.reshape(u, {6}), mf.tensor({1, 6}, "int64"))
    local q = mf.concat({mf.reshape(p, {4}), picked}, 1)
    return mf.nn.log_softmax(q) + mf.reduce_sum(mf.expand_dims(q, 1), {axis = 1})
  end
  local got = mf.vmap(f)(a, b)
  for i = 1, 4 do T.eq(flat(got[{i}]), flat(f(a[{i}], b[{i}])), TOL, "example " .. i) end
end)

T.test("attention: batched queries against shared keys and values", function()
  local q, k, v = mf.sin(count{4, 5, 3}), mf.cos(count{6, 3}), mf.sin(count{6, 2} * 0.3)
  local attend = function(qq) return mf.nn.scaled_dot_product_attention(qq, k, v) end
  local got = mf.vmap(attend)(q)
  T.eq(got.shape, {4, 5, 2})
  for i = 1, 4 do T.eq(flat(got[{i}]), flat(attend(q[{i}])), TOL, "example " .. i) end
end)

T.test("Variables: a shared argument, and one f reads", function()
  local w = mf.Variable(W2)
  local function f(v, x) return mf.reduce_sum(mf.tanh(mf.matmul(mf.reshape(x, {1, 5}), v))) end
  local g = mf.grad(f, {argnums = 1})
  local got = mf.vmap(g, {in_axes = {nil, 1}})(w, mf.cos(count{6, 5}))
  for i = 1, 6 do T.eq(flat(got[{i}]), flat(g(w, mf.cos(count{6, 5})[{i}])), TOL) end
  local row_times_w = function(x) return mf.matmul(mf.reshape(x, {1, 5}), w) end
  local read = mf.vmap(row_times_w)(mf.cos(count{6, 5}))
  T.eq(flat(read), flat(mf.matmul(mf.cos(count{6, 5}), W2)), TOL)
end)

T.test("inside mf.trace and under a GradientTape", function()
  local traced = mf.trace(function(x, y) return per_example(W1, b1, W2, b2, x, y) end)
  local t1, t2, t3, t4 = traced(X, Y)
  T.eq(traced:trace_count(), 1)
  local e1, e2, e3, e4 = per_example(W1, b1, W2, b2, X, Y)
  for k, pair in ipairs{{t1, e1}, {t2, e2}, {t3, e3}, {t4, e4}} do
    T.eq(flat(pair[1]), flat(pair[2]), TOL, "gradient " .. k)
  end
  -- the batched ops are recorded: a gradient through vmap
  local tape = mf.GradientTape()
  tape:watch(W2)
  local norms = mf.vmap(function(x) return mf.reduce_sum(mf.matmul(mf.reshape(x, {1, 5}), W2)) end)
  local s = mf.reduce_sum(norms(mf.cos(count{6, 5})))
  local want = mf.matmul(mf.transpose(mf.cos(count{6, 5})), mf.ones({6, 3}, {dtype = "float64"}))
  T.eq(flat(tape:gradient(s, W2)), flat(want), TOL)
end)

T.test("clear errors", function()
  local rolled = mf.vmap(function(u) return mf.roll(u, 1, 1) end)
  local ok, err = pcall(rolled, count{2, 3})
  T.eq(ok, false)
  -- at the caller's line, naming the op, its table and f's node
  T.ok(tostring(err):find("^[^:]*test_vmap%.lua:%d+: vmap: Roll %(roll%) has no batching " ..
                          "rule %(add its line to the table in eager/batching%.c%); " ..
                          "help%(mf%.vmap%) lists what vmap covers %(node 'roll' of f%)$"),
       tostring(err))
  T.raises(function() mf.vmap(function(u, v) return u + v end)(count{2, 3}, count{3, 3}) end,
           "vmap: argument 2 has 3 examples along its axis 1, argument 1 has 2")
  T.raises(function() mf.vmap(function(u) return u end, {in_axes = {nil}})(count{2}) end,
           "vmap: in_axes batches no argument")
  T.raises(function() mf.vmap(function(u) return u end, {in_axes = 3})(count{2, 2}) end,
           "vmap: argument 1: axis 3 is out of range for rank 2 (axes are 1-based: 1..2)")
  T.raises(function() mf.vmap(function(u) return u end, {in_axis = 1}) end, "vmap")
  T.raises(function() mf.vmap(function(u) return 3 end)(count{2}) end,
           "vmap: f must return tensors (or arrays of them), got number as result 1")
  T.raises(function() mf.vmap(5) end, "vmap: f must be a function, got number")
end)

T.done()
