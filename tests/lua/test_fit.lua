-- test_fit.lua — model:fit / evaluate / predict (lib/fit.lua), mf.losses
-- and mf.metrics against their formulas, the schedules and AdamW against
-- TensorFlow's and PyTorch's formulas, and the Dataset stages map, filter,
-- take, skip, prefetch, range and cardinality. fit on the digits (0.97 test
-- accuracy with PyTorch's MNIST network) is in test_scripts.lua.
local T = dofile("tests/lua/harness.lua")
local L, D = mf.layers, mf.data.Dataset

local function num(t) return type(t) == "number" and t or t:item() end

T.test("losses against their formulas", function()
  local logits = mf.tensor{{2.0, 1.0, 0.1}, {0.5, 2.5, 0.3}}
  local labels = mf.tensor({1, 2}, "int64")
  local p = mf.nn.softmax(logits)
  local pt = p:totable()
  local want = -(math.log(pt[1][1]) + math.log(pt[2][2])) / 2
  T.eq(num(mf.losses.sparse_categorical_crossentropy(labels, logits, {from_logits = true})),
       want, 1e-5)
  T.eq(num(mf.losses.sparse_categorical_crossentropy(labels, p)), want, 1e-5)
  local f = mf.losses.sparse_categorical_crossentropy{from_logits = true}
  T.eq(num(f(labels, logits)), want, 1e-5)
  T.eq(num(mf.losses.categorical_crossentropy(mf.one_hot(labels, 3), p)), want, 1e-5)
  T.eq(num(mf.losses.mean_squared_error(mf.tensor{1, 2}, mf.tensor{0, 4})), 2.5)
  local bce = -(math.log(0.8) + math.log(1 - 0.4)) / 2
  T.eq(num(mf.losses.binary_crossentropy(mf.tensor{1, 0}, mf.tensor{0.8, 0.4})), bce, 1e-6)
  local z = mf.tensor{1.5, -0.3}
  T.eq(num(mf.losses.binary_crossentropy(mf.tensor{1, 0}, z, {from_logits = true})),
       num(mf.losses.binary_crossentropy(mf.tensor{1, 0}, mf.sigmoid(z))), 1e-6)
  -- one value per sample (Keras): rows of one output each
  T.eq(mf.losses.mean_squared_error(mf.tensor{{1}, {2}}, mf.tensor{{0}, {4}},
                                    {reduction = "none"}), {1, 4})
  T.raises(function() mf.losses.mean_squared_error{from_logits = true} end,
           "mean_squared_error: unknown option 'from_logits'")
  T.raises(function() mf.losses.binary_crossentropy{reduction = "avg"} end,
           "option 'reduction' must be")
end)

T.test("metrics: accuracy, Mean, Accuracy", function()
  local logits = mf.tensor{{2, 1, 0}, {0, 3, 1}, {1, 0, 5}, {4, 0, 0}}
  local labels = mf.tensor({1, 2, 2, 1}, "int64")
  T.eq(mf.metrics.accuracy(labels, logits):item(), 0.75)
  T.eq(mf.metrics.accuracy(mf.one_hot(labels, 3), logits):item(), 0.75)
  local acc = mf.metrics.SparseCategoricalAccuracy()
  acc:update_state(labels, logits)
  acc:update_state(mf.tensor({3}, "int64"), mf.tensor{{0, 0, 1}})
  T.eq(acc:result(), 0.8)
  acc:reset_state()
  T.eq(acc:result(), 0)
  local m = mf.metrics.Mean()
  m:update_state(mf.tensor{1, 2, 3})
  m:update_state(10)
  T.eq(m:result(), 4)
  m:update_state(mf.tensor{0, 10}, mf.tensor{3, 1})
  T.eq(m:result(), (16 + 10) / 8)
  T.raises(function() mf.metrics.accuracy(mf.tensor{{{1}}}, logits) end, "do not match outputs")
end)

T.test("Dataset: map, filter, take, skip, prefetch, range, cardinality", function()
  local vals = {}
  for x in D.range(2, 12, 3):iter() do vals[#vals + 1] = x:item() end
  T.eq(vals, {2, 5, 8, 11})
  local ds = D.range(10):skip(1):take(6):map(function(x) return x * x, x end)
              :filter(function(sq) return sq:item() % 2 == 0 end):batch(2):prefetch(3)
  local sq, id = {}, {}
  for a, b in ds:iter() do
    sq[#sq + 1], id[#id + 1] = a:totable(), b:totable()
  end
  T.eq(sq, {{4, 16}, {36}})
  T.eq(id, {{2, 4}, {6}})
  T.eq(D.range(10):batch(3):cardinality(), 4)
  T.eq(D.range(10):shuffle(4):map(function(x) return x end):take(7):cardinality(), 7)
  T.eq(ds:cardinality(), mf.data.UNKNOWN_CARDINALITY)
  T.eq(tostring(ds):match("skip.*"), "skip(1) -> take(6) -> map -> filter -> batch(2) -> prefetch(3)")
  T.raises(function() D.range(3):map(5) end, "map: expected a function")
  T.raises(function() D.range(3):take(-2) end, "take: the count must be a non-negative integer")
  local bad = D.range(3):filter(function() return 1 end)
  T.raises(function() for _ in bad:iter() do end end, "filter: the predicate must return a boolean")
  -- an element of two components, reshaped by map, then batched (stacked)
  local xy = D.from_tensor_slices{mf.ones{4, 2}, mf.tensor({1, 2, 3, 4}, "int64")}
  local n = 0
  for x, y in xy:map(function(x, y) return x:reshape{1, 2}, y end):batch(4):iter() do
    T.eq(x.shape, {4, 1, 2})
    T.eq(y, {1, 2, 3, 4})
    n = n + 1
  end
  T.eq(n, 1)
end)

T.test("schedules against TensorFlow's formulas", function()
  local step = mf.Variable(0, {dtype = "int64", trainable = false})
  local pc = mf.train.piecewise_constant(step, {10, 20}, {1.0, 0.5, 0.1})
  local pd = mf.train.polynomial_decay(0.1, step, 100, {end_learning_rate = 0.01, power = 2})
  local cd = mf.train.cosine_decay(0.1, step, 100, {alpha = 0.1})
  for _, s in ipairs({0, 10, 11, 20, 21, 50, 100, 150}) do
    step:assign(s)
    -- float32 rates, as TensorFlow's (tests/lua/ports/test_tf_learning_rate_decay.lua)
    T.eq(pc():item(), s <= 10 and 1.0 or s <= 20 and 0.5 or 0.1, 1e-7)
    local sp = math.min(s, 100)
    T.eq(pd():item(), (0.1 - 0.01) * (1 - sp / 100) ^ 2 + 0.01, 1e-7)
    T.eq(cd():item(), 0.1 * (0.9 * 0.5 * (1 + math.cos(math.pi * sp / 100)) + 0.1), 1e-7)
  end
  local cyc = mf.train.polynomial_decay(1.0, 150, 100, {end_learning_rate = 0, cycle = true})
  T.eq(cyc():item(), 1 - 150 / 200, 1e-7)
  T.raises(function() mf.train.piecewise_constant(step, {1}, {1}) end,
           "one more element than boundaries")
end)

T.test("AdamW: decoupled weight decay (PyTorch's), then TensorFlow's Adam", function()
  local w = mf.Variable(mf.tensor({1.0, -2.0}, "float64"))
  local opt = mf.train.AdamW(0.1, {weight_decay = 0.5})
  local g = mf.tensor({0.3, -0.1}, "float64")
  opt:apply_gradients{{g, w}}
  -- p *= 1 - lr*wd (PyTorch's AdamW); then TensorFlow 1.x's Adam, whose epsilon is added
  -- before the bias correction: p -= lr * mhat / (sqrt(vhat) + eps / sqrt(1 - b2^t))
  local want = {}
  for i, p in ipairs({1.0, -2.0}) do
    local gi = g:totable()[i]
    local p1 = p * (1 - 0.1 * 0.5)
    local mhat, vhat = gi, gi * gi
    want[i] = p1 - 0.1 * mhat / (math.sqrt(vhat) + 1e-8 / math.sqrt(1 - 0.999))
  end
  T.eq(w, want, 1e-9)
  T.ok(opt:get_slot(w, "m"))
end)

-- y = the quadrant of a 2-D point (1..4)
local function quadrants(n, seed)
  local x = mf.random.uniform({n, 2}, {minval = -1, maxval = 1, seed = seed})
  local t = x:totable()
  local y = {}
  for i, p in ipairs(t) do
    y[i] = (p[1] >= 0 and 1 or 2) + (p[2] >= 0 and 0 or 2)
  end
  return x, mf.tensor(y, "int64")
end

T.test("fit: history, progress, callbacks, validation; evaluate, predict", function()
  mf.random.seed(1)
  local x, y = quadrants(400, 1)
  local ds = D.from_tensor_slices{x, y}:shuffle(400, {seed = 3}):batch(32)
  local vx, vy = quadrants(100, 2)
  local val = D.from_tensor_slices{vx, vy}:batch(50)
  local model = L.Sequential{L.Dense(16, {activation = "relu"}), L.Dense(4)}
  local seen = {}
  local hist = model:fit(ds, {
    loss = mf.losses.sparse_categorical_crossentropy{from_logits = true},
    optimizer = mf.train.AdamOptimizer(0.05), epochs = 8, metrics = {"accuracy"},
    validation_data = val, verbose = 0,
    callbacks = {function(epoch, logs, m)
      seen[#seen + 1] = epoch
      T.ok(m == model and type(logs.loss) == "number" and logs.val_accuracy)
    end},
  })
  T.eq(seen, {1, 2, 3, 4, 5, 6, 7, 8})
  T.eq(#hist.loss, 8)
  T.ok(hist.loss[8] < hist.loss[1] / 3, "loss " .. hist.loss[1] .. " -> " .. hist.loss[8])
  T.ok(hist.accuracy[8] > 0.9, "accuracy " .. hist.accuracy[8])
  T.ok(hist.val_accuracy[8] > 0.9, "val_accuracy " .. hist.val_accuracy[8])
  local res = model:evaluate(val)
  T.eq(res.accuracy, hist.val_accuracy[8], 1e-12)
  T.eq(res.loss, hist.val_loss[8], 1e-6)
  local p = model:predict(vx, {batch_size = 30})
  T.eq(p.shape, {100, 4})
  T.eq(mf.reduce_max(mf.abs(p - model(vx))):item() < 1e-5, true)
  T.eq(mf.metrics.accuracy(vy, p):item(), res.accuracy, 1e-6)
  -- the same training eagerly (trace = false) gives the same losses
  mf.random.seed(1)
  local m2 = L.Sequential{L.Dense(16, {activation = "relu"}), L.Dense(4)}
  local h2 = m2:fit(ds, {loss = "sparse_categorical_crossentropy", verbose = 0, epochs = 1,
                         trace = false,
                         optimizer = mf.train.AdamOptimizer(0.05)})
  T.eq(#h2.loss, 1)
  T.raises(function() model:fit(ds, {epochs = 1}) end, "fit: option 'loss' is required")
  T.raises(function() model:fit("x", {loss = "mse"}) end, "fit: expected an mf.data.Dataset")
  T.raises(function() model:fit(ds, {loss = "hinge"}) end, "fit: unknown loss 'hinge'")
  T.raises(function() model:fit(ds, {loss = "mse", metrics = {"f1"}}) end,
           "a metric must be \"accuracy\"")
end)

T.test("fit prints the progress line", function()
  local out = io.popen(arg[-1] .. [[ -e "
    local x = mf.random.normal({64, 3}); local y = mf.zeros({64, 1})
    local ds = mf.data.Dataset.from_tensor_slices{x, y}:batch(16)
    local m = mf.layers.Sequential{mf.layers.Dense(1)}
    m:fit(ds, {loss = 'mean_squared_error', epochs = 2, optimizer = 'sgd'})"]]):read("a")
  T.ok(out:find("epoch 2/2  step 4/4", 1, true), out)
  T.ok(out:find("loss ", 1, true), out)
end)

T.done()
