-- cnn_batchnorm.lua — a small CNN with batch normalization, and what the
-- BatchNormalization layer does in training and in inference:
--   Conv 16 -> BatchNorm -> ReLU -> Conv 32 -> BatchNorm -> ReLU -> MaxPool -> Dense 10
-- With training = true a BatchNormalization layer normalizes with the
-- statistics of the batch it sees (one fused op) and moves its moving mean
-- and variance towards them (momentum); otherwise it normalizes with the
-- moving statistics, so one image gets the same answer whatever batch it is in.
-- Data: Debian's 8x8 digits (apt-get install python3-sklearn) or, without
-- them, synthetic 8x8 images of 10 classes.
--   build/moonflow scripts/cnn_batchnorm.lua [epochs]
local DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
local epochs = math.tointeger(tonumber(arg and arg[1] or 5))
assert(epochs and epochs >= 1, "usage: cnn_batchnorm.lua [epochs]")
mf.random.seed(1)

-- 1. Data: x (n, 8, 8, 1) in [0, 1], y the 1-based classes.
local x, y
local f = io.open(DIGITS, "rb")
if f then
  f:close()
  local csv = os.tmpname()
  assert(os.execute(string.format("gzip -dc '%s' > '%s'", DIGITS, csv)), "gzip failed")
  local t = mf.data.read_csv(csv, {header = false})
  os.remove(csv)
  local n = t.shape[1]
  x = mf.reshape(mf.slice(t, {1, 1}, {n, 64}) / 16, {n, 8, 8, 1})
  y = mf.reshape(mf.cast(mf.slice(t, {1, 65}, {n, 1}), "int64"), {n}) + 1
  print(n .. " digits from " .. DIGITS)
else
  -- class k: a bright 2x4 bar at a place that depends on k, on noise
  local n = 1000
  local labels = mf.cast(mf.random.uniform({n}, {minval = 0, maxval = 10, dtype = "int32",
                                                 seed = 2}), "int64")
  local pos = mf.one_hot(labels + 1, 10)                      -- (n, 10)
  local masks = {}
  for k = 0, 9 do
    local m = {}
    for p = 0, 63 do
      local r, c = p // 8, p % 8
      m[p + 1] = (r >= (k // 5) * 4 and r < (k // 5) * 4 + 2 and c >= k % 5 and c < k % 5 + 4)
                 and 1 or 0
    end
    masks[k + 1] = m
  end
  local img = mf.matmul(pos, mf.tensor(masks)) * 0.8 + mf.random.uniform({n, 64}, {seed = 3}) * 0.3
  x, y = mf.reshape(img, {n, 8, 8, 1}), labels + 1
  print(n .. " synthetic 8x8 images (install python3-sklearn for the digits)")
end
local n = x.shape[1]
local order = mf.random.shuffle(mf.range(1, n + 1, 1, "int64"), {seed = 7})
x, y = mf.gather(x, order), mf.gather(y, order)
local n_test = n // 5
local n_train = n - n_test
local function rows(t, first, count)
  local begin, size = {first}, {count}
  for a = 2, t.ndim do begin[a], size[a] = 1, t.shape[a] end
  return mf.slice(t, begin, size)
end
local x_test, y_test = rows(x, n_train + 1, n_test), rows(y, n_train + 1, n_test)
local train = mf.data.Dataset.from_tensor_slices{rows(x, 1, n_train), rows(y, 1, n_train)}
                :shuffle(n_train, {seed = 1}):batch(32)

-- 2. The model.
local L = mf.layers
local bn1 = L.BatchNormalization{momentum = 0.9}
local model = L.Sequential{
  L.Conv2D(16, 3, {padding = "same", use_bias = false, input_shape = {8, 8, 1}}), bn1, L.ReLU(),
  L.Conv2D(32, 3, {padding = "same", use_bias = false}), L.BatchNormalization{momentum = 0.9},
  L.ReLU(), L.MaxPool2D(2), L.Flatten(), L.Dense(10),
}
model:summary()
print("\nbefore training, the first layer's moving statistics (channels 1..4):")
print("  moving_mean     = " .. tostring(mf.slice(bn1.moving_mean, {1}, {4})):match("^[^\n]*"))

-- 3. Train: each training step also moves the moving statistics.
local history = model:fit(train, {
  loss = mf.losses.sparse_categorical_crossentropy{from_logits = true},
  optimizer = mf.train.AdamOptimizer(0.01), epochs = epochs, metrics = {"accuracy"}, verbose = 0,
  callbacks = {function(epoch, logs)
    print(string.format("epoch %d: loss %.4f, accuracy %.4f", epoch, logs.loss, logs.accuracy))
  end},
})
print("\nafter training:")
print("  moving_mean     = " .. tostring(mf.slice(bn1.moving_mean, {1}, {4})):match("^[^\n]*"))
print("  moving_variance = " .. tostring(mf.slice(bn1.moving_variance, {1}, {4})):match("^[^\n]*"))

-- 4. Train vs eval mode: one image alone, and inside a batch.
local one = rows(x_test, 1, 1)
local alone = model(one)
local in_batch = rows(model(x_test), 1, 1)
local diff = mf.reduce_max(mf.abs(alone - in_batch)):item()
print(string.format("\ninference (training = false): one image alone vs in a batch of %d: "
                    .. "max difference %.2g", n_test, diff))
local t_alone = model(mf.concat({one, one}, 1), {training = true})
local t_batch = rows(model(x_test, {training = true}), 1, 1)
print(string.format("training = true: the same image's logits depend on its batch: max "
                    .. "difference %.2g", mf.reduce_max(mf.abs(rows(t_alone, 1, 1) - t_batch)):item()))
local acc = mf.metrics.accuracy(y_test, model(x_test)):item()
print(string.format("test accuracy = %.4f (%d images, last epoch's training accuracy %.4f)",
                    acc, n_test, history.accuracy[epochs]))
