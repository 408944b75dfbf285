-- TensorFlow 1.x's tutorial mnist_deep.py, line by line (8x8 digits for MNIST, so the image
-- is 8x8 and the flattened pool output 2*2*64 instead of 7*7*64; see digits.lua): placeholders
-- with -1 (None), dropout with a keep_prob placeholder of no shape, Adam 1e-4.
-- 1. As written (truncated-normal weights, keep_prob 0.5): it trains.
-- 2. The same graph with the initial values of gen_mnist_expected.py assigned and keep_prob fed
--    1.0: losses and accuracies agree with PyTorch's (mnist_expected.lua): 200 steps in float64;
--    in float32 the first 20 steps (Adam divides by sqrt(v), so float32 rounding differences of
--    near-zero gradients grow step by step, in PyTorch against itself as well).
local T = dofile("tests/lua/harness.lua")
local E = dofile("tests/lua/ports/mnist_expected.lua")
local mnist = dofile("tests/lua/ports/digits.lua")

local function deepnn(x, dtype)
  local function conv2d(x, W) return mf.nn.conv2d(x, W, {1, 1, 1, 1}, "SAME") end
  local function max_pool_2x2(x)
    return mf.nn.max_pool(x, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME")
  end
  local function weight_variable(shape)
    return mf.Variable(mf.random.truncated_normal(shape, {stddev = 0.1, dtype = dtype}))
  end
  local function bias_variable(shape)
    return mf.Variable(mf.constant(0.1, {shape = shape, dtype = dtype}))
  end
  local x_image = mf.reshape(x, {-1, 8, 8, 1})
  local W_conv1 = weight_variable{5, 5, 1, 32}
  local b_conv1 = bias_variable{32}
  local h_conv1 = mf.nn.relu(conv2d(x_image, W_conv1) + b_conv1)
  local h_pool1 = max_pool_2x2(h_conv1)
  local W_conv2 = weight_variable{5, 5, 32, 64}
  local b_conv2 = bias_variable{64}
  local h_conv2 = mf.nn.relu(conv2d(h_pool1, W_conv2) + b_conv2)
  local h_pool2 = max_pool_2x2(h_conv2)
  local W_fc1 = weight_variable{2 * 2 * 64, 1024}
  local b_fc1 = bias_variable{1024}
  local h_pool2_flat = mf.reshape(h_pool2, {-1, 2 * 2 * 64})
  local h_fc1 = mf.nn.relu(mf.matmul(h_pool2_flat, W_fc1) + b_fc1)
  local keep_prob = mf.placeholder(dtype)
  local h_fc1_drop = mf.nn.dropout(h_fc1, {keep_prob = keep_prob})
  local W_fc2 = weight_variable{1024, 10}
  local b_fc2 = bias_variable{10}
  local y_conv = mf.matmul(h_fc1_drop, W_fc2) + b_fc2
  return y_conv, keep_prob,
         {W_conv1, b_conv1, W_conv2, b_conv2, W_fc1, b_fc1, W_fc2, b_fc2}
end

local function build(dtype)
  local m = {g = mf.Graph()}
  m.g:as_default(function()
    m.x = mf.placeholder(dtype, {-1, 64})
    m.y_ = mf.placeholder(dtype, {-1, 10})
    m.y_conv, m.keep_prob, m.params = deepnn(m.x, dtype)
    m.cross_entropy = mf.reduce_mean(
      mf.nn.softmax_cross_entropy_with_logits{labels = m.y_, logits = m.y_conv})
    m.train_step = mf.train.AdamOptimizer(1e-4):minimize(m.cross_entropy)
    local correct_prediction = mf.equal(mf.argmax(m.y_conv, 2), mf.argmax(m.y_, 2))
    m.accuracy = mf.reduce_mean(mf.cast(correct_prediction, "float32"))
    m.init = mf.global_variables_initializer()
  end)
  m.sess = mf.Session(m.g)
  m.sess:run(m.init)
  return m
end

T.test("mnist_deep.py as written: dropout 0.5 on a [-1, 1024] tensor trains", function()
  mf.random.seed(1)
  local m = build("float32")
  local first, last
  for i = 0, 299 do
    local bx, by = mnist.next_batch(i, 50)
    if i % 100 == 0 then
      local train_accuracy = m.sess:run(m.accuracy, {[m.x] = bx, [m.y_] = by, [m.keep_prob] = 1.0})
      print(string.format("step %d, training accuracy %g", i, train_accuracy:item()))
    end
    local _, loss = table.unpack(m.sess:run({m.train_step, m.cross_entropy},
                                            {[m.x] = bx, [m.y_] = by, [m.keep_prob] = 0.5}), 1, 2)
    first = first or loss
    last = loss
  end
  local acc = m.sess:run(m.accuracy, {[m.x] = mnist.test_images, [m.y_] = mnist.test_labels,
                                      [m.keep_prob] = 1.0})
  acc = acc:item(); first = first:item(); last = last:item()
  print(string.format("test accuracy %g (loss %g -> %g)", acc, first, last))
  T.ok(last < first * 0.8, "the loss falls")
  T.ok(acc > 0.5, "test accuracy above 0.5, got " .. acc)
  -- dropout draws a fresh mask on every run: two runs with keep_prob 0.5 differ
  local bx, by = mnist.next_batch(0, 50)
  local feeds = {[m.x] = bx, [m.y_] = by, [m.keep_prob] = 0.5}
  T.ok(m.sess:run(m.cross_entropy, feeds) ~= m.sess:run(m.cross_entropy, feeds), "fresh masks")
end)

-- gen_mnist_expected.py's initial values: scale * sin(0.37 k + phase), k the flat index.
local function det(shape, scale, phase, dtype)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local v = {}
  for k = 0, n - 1 do v[k + 1] = scale * math.sin(0.37 * k + phase) end
  return mf.reshape(mf.tensor(v, dtype), shape)
end

local function deterministic(dtype)
  local m = build(dtype)
  local inits = {{{5, 5, 1, 32}, 0.1}, {{32}, 0.1}, {{5, 5, 32, 64}, 0.1}, {{64}, 0.1},
                 {{2 * 2 * 64, 1024}, 0.05}, {{1024}, 0.1}, {{1024, 10}, 0.05}, {{10}, 0.1}}
  local assigns
  m.g:as_default(function()
    assigns = {}
    for i, p in ipairs(m.params) do
      assigns[i] = p:assign(det(inits[i][1], inits[i][2], i, dtype))
    end
  end)
  m.sess:run(assigns)
  return m
end

local function cast(t, dtype) return mf.cast(t, dtype) end

T.test("mnist_deep.py with PyTorch's initial values, keep_prob 1, float64: 200 steps agree",
       function()
  local m = deterministic("float64")
  for i = 0, 199 do
    local bx, by = mnist.next_batch(i, 50)
    local feeds = {[m.x] = cast(bx, "float64"), [m.y_] = cast(by, "float64"), [m.keep_prob] = 1.0}
    if i % 20 == 0 then
      T.eq(m.sess:run(m.accuracy, feeds), E.deep64_train_accuracy[i // 20 + 1], 1e-12,
           "training accuracy at step " .. i)
    end
    local _, loss = table.unpack(m.sess:run({m.train_step, m.cross_entropy}, feeds), 1, 2)
    if i % 20 == 19 then
      local want = E.deep64_losses[(i + 1) // 20]
      T.eq(loss, want, 1e-9 * want, "loss after step " .. (i + 1))
    end
  end
  T.eq(m.sess:run(m.accuracy, {[m.x] = cast(mnist.test_images, "float64"),
                               [m.y_] = cast(mnist.test_labels, "float64"),
                               [m.keep_prob] = 1.0}), E.deep64_test_accuracy, 1e-6)
end)

T.test("mnist_deep.py with PyTorch's initial values, keep_prob 1, float32: 20 steps agree",
       function()
  local m = deterministic("float32")
  for i = 0, 19 do
    local bx, by = mnist.next_batch(i, 50)
    local _, loss = table.unpack(m.sess:run({m.train_step, m.cross_entropy},
                                            {[m.x] = bx, [m.y_] = by, [m.keep_prob] = 1.0}), 1, 2)
    T.eq(loss, E.deep32_losses[i + 1], 2e-6 * E.deep32_losses[i + 1], "loss at step " .. (i + 1))
  end
end)

T.done()
