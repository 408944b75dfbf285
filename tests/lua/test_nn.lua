-- test_nn.lua — mf.nn from Lua (except conv2d, see test_conv.lua): every
-- function, its argument forms and its error messages, and gradient checks
-- through tapes (softmax cross-entropy with mf.test.gradcheck).
local T = dofile("tests/lua/harness.lua")

local function softmax_rows(rows)
  local out = {}
  for i, r in ipairs(rows) do
    local m, s = -math.huge, 0
    for _, v in ipairs(r) do m = math.max(m, v) end
    for _, v in ipairs(r) do s = s + math.exp(v - m) end
    out[i] = {}
    for j, v in ipairs(r) do out[i][j] = math.exp(v - m) / s end
  end
  return out
end

T.test("mf.nn holds relu, sigmoid, tanh, softplus", function()
  T.ok(mf.nn.relu == mf.relu and mf.nn.sigmoid == mf.sigmoid)
  T.ok(mf.nn.tanh == mf.tanh and mf.nn.softplus == mf.softplus)
  T.eq(mf.nn.relu(mf.tensor{-1, 2}), {0, 2})
  T.eq(mf.nn.sigmoid(mf.tensor{0}), {0.5})
end)

T.test("softmax and log_softmax: default last axis, positional and option axis", function()
  local rows = {{1, 2, 3}, {-1, 0, 4}}
  local x = mf.tensor(rows, "float64")
  local want = softmax_rows(rows)
  T.eq(mf.nn.softmax(x), want, 1e-12)
  T.eq(mf.nn.softmax(x, 2), want, 1e-12)
  T.eq(mf.nn.softmax(x, -1), want, 1e-12)
  T.eq(mf.nn.softmax(x, {axis = 2}), want, 1e-12)
  local cols = mf.nn.softmax(x, 1)
  T.eq(mf.reduce_sum(cols, 1), {1, 1, 1}, 1e-12)
  local ls = mf.nn.log_softmax(x)
  T.eq(mf.exp(ls), want, 1e-12)
  T.eq(mf.nn.softmax(mf.tensor{1000, 1000}), {0.5, 0.5})
  T.eq(mf.nn.softmax{1, 1}, {0.5, 0.5})
end)

T.test("softmax errors", function()
  T.raises(function() mf.nn.softmax(mf.tensor{1, 2}, 2) end,
           "softmax: axis 2 out of range")
  T.raises(function() mf.nn.softmax(mf.tensor({1, 2}, "int32")) end,
           "softmax: expected a float dtype")
  T.raises(function() mf.nn.log_softmax(mf.tensor(1)) end,
           "log_softmax: expected a tensor of rank >= 1")
end)

T.test("layer_norm: torch.nn.functional.layer_norm's values and gradient", function()
  -- tests/lua/data/gen_layer_norm.py: F.layer_norm(x, (4,), eps=1e-5) in
  -- float64 and the gradient of sum(y * w)
  local x = mf.tensor({{1, 2, 4, 7}, {-3, 0.5, 2, 10}}, "float64")
  local w = mf.tensor({{0.5, -1, 2, 0.25}, {1, 3, -2, 0.5}}, "float64")
  local y = mf.nn.layer_norm(x, {epsilon = 1e-5})
  T.eq(y, {{-1.09108841204864, -0.654653047229181, 0.218217682409727, 1.52752377686809},
           {-1.12884588344388, -0.393783447712983, -0.0787566895425965, 1.60138602069946}},
       1e-12)
  local f = function(v) return mf.reduce_sum(mf.nn.layer_norm(v, {epsilon = 1e-5}) * w) end
  local dx = mf.grad(f)(x)
  T.eq(dx, {{0.137684755982241, -0.561131309519351, 0.659848748394192, -0.236402194857083},
            {-0.0013749953026424, 0.470839453785005, -0.556887409461797, 0.0874229509794346}},
       1e-12)
  T.raises(function() mf.nn.layer_norm(mf.tensor({1, 2}, "int32")) end,
           "layer_norm: expected a float dtype")
  T.raises(function() mf.nn.layer_norm(mf.tensor(1)) end,
           "layer_norm: expected a tensor of rank >= 1")
  T.raises(function() mf.nn.layer_norm(mf.tensor{1, 2}, {epsilon = -1}) end,
           "layer_norm: epsilon must be a finite number >= 0, got -1")
end)

T.test("softmax_cross_entropy_with_logits: per-row loss", function()
  local logits = mf.tensor({{1, 2, 3}, {0.5, -1, 2}}, "float64")
  local labels = mf.tensor({{0, 0, 1}, {0.25, 0.25, 0.5}}, "float64")
  local loss = mf.nn.softmax_cross_entropy_with_logits{labels = labels, logits = logits}
  local ls = mf.nn.log_softmax(logits):totable()
  T.eq(loss, {-ls[1][3], -(0.25 * ls[2][1] + 0.25 * ls[2][2] + 0.5 * ls[2][3])}, 1e-12)
  T.eq(loss.shape, {2})
  -- Lua arrays are accepted and take the logits' dtype
  local l2 = mf.nn.softmax_cross_entropy_with_logits{labels = {{0, 0, 1}, {0.25, 0.25, 0.5}},
                                                       logits = logits}
  T.eq(l2, loss, 1e-12)
  T.raises(function() mf.nn.softmax_cross_entropy_with_logits{logits = logits} end,
           "softmax_cross_entropy_with_logits: missing 'labels'")
  T.raises(function() mf.nn.softmax_cross_entropy_with_logits(logits) end,
           "expected {labels = ..., logits = ...} or (labels, logits)")
  T.raises(function()
    mf.nn.softmax_cross_entropy_with_logits{labels = mf.zeros({3, 2}, "float64"), logits = logits}
  end, "labels and logits must have the same shape")
end)

-- A composite bound from its descriptor (core/ops/nn.c): TensorFlow's
-- keywords or (labels, logits), Lua labels take the logits' dtype, and bad
-- calls are refused naming the function.
T.test("sigmoid_cross_entropy_with_logits: its face", function()
  local f, z, x = mf.nn.sigmoid_cross_entropy_with_logits, mf.tensor{1, 0}, mf.tensor{0.5, -1}
  T.eq(f(z, x), f{labels = z, logits = x})
  T.eq(f{labels = {1, 0}, logits = mf.tensor({0.5, -1}, "float64")}.dtype, "float64")
  T.raises(f, "sigmoid_cross_entropy_with_logits: unknown option 'axis' (known: labels, logits)",
           {labels = z, logits = x, axis = 1})
  T.raises(f, "sigmoid_cross_entropy_with_logits: missing 'logits'", {labels = z})
  T.raises(f, "the options go in that table, got a 2nd argument", {labels = z, logits = x}, 2)
  T.raises(f, "bad argument #3 to 'sigmoid_cross_entropy_with_logits' (no value expected", z, x,
           1)
  T.raises(f, "sigmoid_cross_entropy_with_logits: expected float logits",
           {labels = mf.tensor({1}, "int32"), logits = mf.tensor({1}, "int32")})
  T.raises(mf.nn.l2_loss, "bad argument #2 to 'l2_loss' (no value expected", x, 1)
end)

T.test("sparse_softmax_cross_entropy_with_logits: 1-based labels", function()
  local logits = mf.tensor{{1, 2, 3}, {0.5, -1, 2}}
  local ls = mf.nn.log_softmax(logits):totable()
  local loss = mf.nn.sparse_softmax_cross_entropy_with_logits{labels = {3, 1}, logits = logits}
  T.eq(loss, {-ls[1][3], -ls[2][1]}, 1e-5)
  local l2 = mf.nn.sparse_softmax_cross_entropy_with_logits{
    labels = mf.tensor({3, 1}, "int32"), logits = logits}
  T.eq(l2, loss, 1e-6)
  T.raises(function()
    mf.nn.sparse_softmax_cross_entropy_with_logits{labels = {3, 4}, logits = logits}
  end, "label 4 at position 2 is out of range 1..3 (labels are 1-based")
  T.raises(function()
    mf.nn.sparse_softmax_cross_entropy_with_logits{labels = {0, 1}, logits = logits}
  end, "out of range 1..3")
  T.raises(function()
    mf.nn.sparse_softmax_cross_entropy_with_logits{labels = mf.tensor{1, 2}, logits = logits}
  end, "int32 or int64 labels")
end)

T.test("sigmoid_cross_entropy_with_logits: stable for large logits", function()
  local x = mf.tensor({-100, -1, 0.5, 100}, "float64")
  local z = mf.tensor({0, 1, 0.3, 1}, "float64")
  local got = mf.nn.sigmoid_cross_entropy_with_logits{labels = z, logits = x}:totable()
  local want = {}
  for i, xi in ipairs({-100, -1, 0.5, 100}) do
    local zi = ({0, 1, 0.3, 1})[i]
    want[i] = math.max(xi, 0) - xi * zi + math.log(1 + math.exp(-math.abs(xi)))
  end
  T.eq(got, want, 1e-12)
  T.raises(function()
    mf.nn.sigmoid_cross_entropy_with_logits{labels = mf.tensor{1, 0}, logits = mf.tensor{1}}
  end, "labels and logits must have the same shape")
end)

T.test("l2_loss and bias_add", function()
  T.eq(mf.nn.l2_loss(mf.tensor{1, 2, 3}), 7)
  T.raises(function() mf.nn.l2_loss(mf.tensor({1}, "int32")) end, "l2_loss: expected float")
  local v = mf.tensor{{1, 2, 3}, {4, 5, 6}}
  T.eq(mf.nn.bias_add(v, {10, 20, 30}), {{11, 22, 33}, {14, 25, 36}})
  T.eq(mf.nn.bias_add(v, mf.tensor{1, 1, 1}), {{2, 3, 4}, {5, 6, 7}})
  local nchw = mf.nn.bias_add(mf.zeros{1, 2, 1, 2}, {1, 2}, {data_format = "NCHW"})
  T.eq(nchw, {{{{1, 1}}, {{2, 2}}}})
  T.raises(function() mf.nn.bias_add(v, {1, 2}) end, "bias_add: bias must be 1-D")
  T.raises(function() mf.nn.bias_add(v, {1, 2, 3}, {data_format = "HWCN"}) end,
           "bias_add: option 'data_format' must be \"NHWC\" or \"NCHW\", got HWCN")
end)

T.test("dropout: seeded, scaled, identity at rate 0", function()
  local x = mf.ones{2000}
  T.ok(mf.nn.dropout(x, 0) == x or mf.reduce_sum(mf.nn.dropout(x, 0)):item() == 2000)
  local a = mf.nn.dropout(x, 0.5, {seed = 3})
  local b = mf.nn.dropout(x, 0.5, {seed = 3})
  T.eq(a, b)
  local kept = mf.reduce_sum(mf.cast(mf.greater(a, 0), "float32")):item()
  T.ok(kept > 850 and kept < 1150, "kept " .. kept)
  T.eq(mf.reduce_max(a):item(), 2)
  T.raises(function() mf.nn.dropout(x, 1) end, "dropout: rate must be in [0, 1)")
  T.raises(function() mf.nn.dropout(x, "half") end, "dropout: rate must be a number")
  T.raises(function() mf.nn.dropout(x, 0.5, {seed = 1.5}) end,
           "dropout: option 'seed' must be an integer, got 1.5")
  T.raises(function() mf.nn.dropout(x, {rate = 0.5, seed = "3"}) end,
           "dropout: option 'seed' must be an integer, got string")
  -- a whole float is the integer, as for every integer reader
  T.eq(mf.nn.dropout(x, 0.5, {seed = 3.0}), a)
  -- the gradient is the same mask, scaled
  local tape = mf.GradientTape()
  tape:watch(x)
  local y = mf.nn.dropout(x, 0.5, {seed = 9})
  local g = tape:gradient(mf.reduce_sum(y), x)
  T.eq(g, y)
end)

T.test("max_pool and avg_pool: SAME / VALID sizes, ksize forms", function()
  local vals = {}
  for i = 1, 16 do vals[i] = i end
  local x = mf.reshape(mf.tensor(vals), {1, 4, 4, 1})
  local m = mf.nn.max_pool(x, 2, 2, "VALID")
  T.eq(m.shape, {1, 2, 2, 1})
  T.eq(mf.reshape(m, {4}), {6, 8, 14, 16})
  T.eq(mf.nn.max_pool(x, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"), m)
  T.eq(mf.nn.max_pool(x, {2, 2}, {2}, "valid"), m)
  local a = mf.nn.avg_pool(x, 3, 2, "SAME")
  T.eq(a.shape, {1, 2, 2, 1})
  T.eq(mf.reshape(a, {4}), {6, 7.5, 12, 13.5}, 1e-6)
  T.eq(mf.nn.avg_pool(mf.zeros{2, 5, 5, 3}, 3, 2, "VALID").shape, {2, 2, 2, 3})
  T.eq(mf.nn.max_pool(mf.zeros{1, 5, 7, 1}, 2, 3, "SAME").shape, {1, 2, 3, 1})
end)

T.test("pool errors", function()
  local x = mf.zeros{1, 2, 2, 1}
  T.raises(function() mf.nn.max_pool(x, 3, 1, "VALID") end, "window 3 is larger than the input")
  T.raises(function() mf.nn.max_pool(x, 2, 1, "FULL") end,
           "bad argument #4 to 'max_pool' (padding must be \"VALID\" or \"SAME\", got FULL)")
  T.raises(function() mf.nn.avg_pool(x, {1, 2, 3}, 1, "SAME") end,
           "avg_pool: ksize must be a number or an array of 1, 2 or 4 integers")
  T.raises(function() mf.nn.avg_pool(mf.zeros{2, 2}, 1, 1, "SAME") end, "rank-4 NHWC")
  T.raises(function() mf.nn.max_pool(x, {2, 2, 2, 1}, 1, "SAME") end, "batch or channel axis")
end)

T.test("gradcheck: softmax cross-entropy, sparse, sigmoid, pools, bias_add", function()
  local labels = mf.tensor({{0.2, 0.3, 0.5}, {1, 0, 0}}, "float64")
  local logits = mf.tensor({{0.1, -0.4, 0.8}, {1.5, 0.2, -0.3}}, "float64")
  T.ok(mf.test.gradcheck(function(x)
    return mf.reduce_sum(mf.nn.softmax_cross_entropy_with_logits{labels = labels, logits = x})
  end, {logits}))
  T.ok(mf.test.gradcheck(function(x, z)
    return mf.reduce_sum(mf.nn.softmax_cross_entropy_with_logits{labels = z, logits = x})
  end, {logits, labels}))
  T.ok(mf.test.gradcheck(function(x)
    return mf.reduce_sum(mf.nn.sparse_softmax_cross_entropy_with_logits{labels = {3, 1},
                                                                         logits = x})
  end, {logits}))
  T.ok(mf.test.gradcheck(function(x)
    return mf.reduce_sum(mf.nn.sigmoid_cross_entropy_with_logits{labels = labels, logits = x})
  end, {logits}))
  T.ok(mf.test.gradcheck(function(x) return mf.nn.l2_loss(mf.nn.log_softmax(x, 1)) end, {logits}))
  local img = mf.tensor({{{{0.3}, {-1.2}, {0.7}}, {{2.1}, {0.05}, {-0.4}}, {{1.1}, {0.9}, {-2}}}},
                        "float64")
  local function pooled(pool, k, s)
    return function(x) return mf.reduce_sum(mf.square(pool(x, k, s, "SAME"))) end
  end
  T.ok(mf.test.gradcheck(pooled(mf.nn.max_pool, 2, 1), {img}))
  T.ok(mf.test.gradcheck(pooled(mf.nn.avg_pool, 2, 2), {img}))
  T.ok(mf.test.gradcheck(function(v, b) return mf.reduce_sum(mf.square(mf.nn.bias_add(v, b))) end,
                         {logits, mf.tensor({1, 2, 3}, "float64")}))
end)

T.test("sparse_softmax_cross_entropy_with_logits float32 (fast exp) against float64", function()
  -- logits from -80 to 80 (rows of near-ties and of one dominant class), the
  -- loss and its gradient against the float64 kernel (libm) on the same values
  local rows, n = 40, 67
  local l64 = mf.reshape(mf.linspace(-80, 80, rows * n, "float64"), {rows, n})
  l64 = l64 * mf.reshape(mf.linspace(0, 1, rows, "float64") ^ 4, {rows, 1})
  local l32 = mf.cast(l64, "float32")
  l64 = mf.cast(l32, "float64")
  local labels = {}
  for i = 1, rows do labels[i] = (i * 13) % n + 1 end
  local function run(logits)
    local tape = mf.GradientTape()
    tape:watch(logits)
    local loss = mf.nn.sparse_softmax_cross_entropy_with_logits{labels = labels, logits = logits}
    return loss, tape:gradient(mf.reduce_sum(loss), {logits})[1]
  end
  local a, ga = run(l32)
  local b, gb = run(l64)
  local rel = mf.reduce_max(mf.abs(mf.cast(a, "float64") - b) / (mf.abs(b) + 1e-3)):item()
  T.ok(rel < 2e-6, "loss: relative error " .. rel)
  local err = mf.reduce_max(mf.abs(mf.cast(ga, "float64") - gb)):item()
  T.ok(err < 1e-6, "gradient: absolute error " .. err)
end)

T.done()
