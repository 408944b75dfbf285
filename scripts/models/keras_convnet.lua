-- models/keras_convnet.lua — Keras's "simple MNIST convnet" recipe
-- (keras.io/examples/vision/mnist_convnet), as scripts/fashion_mnist_cnn.lua
-- trains it and bench/fashion_mnist.lua times it, so both run one model:
--   local convnet = dofile("scripts/models/keras_convnet.lua")
--   local x, y = convnet.images(ds, max)         -- (n, 28, 28, 1) in [0, 1], labels
--   local model = convnet.new()                 -- seeded: the same weights each run
--   model:fit(convnet.batches(x, y), convnet.fit_options{epochs = 1, verbose = 0})
local convnet = {}

-- Every image of 'ds' (the first 'max' when given) at once, scaled to [0, 1].
function convnet.images(ds, max)
  local n = ds:cardinality()
  if max and max < n then ds, n = ds:take(max), max end
  local x, y = ds:batch(n):iter()()
  return mf.reshape(mf.cast(x, "float32") / 255, {n, 28, 28, 1}), y
end

-- Conv 32 3x3 relu -> MaxPool 2 -> Conv 64 3x3 relu -> MaxPool 2 -> Flatten
-- -> Dropout 0.5 -> Dense 10 (logits: the loss takes from_logits, where
-- Keras's recipe ends in a softmax).
function convnet.new()
  mf.random.seed(1)
  local L = mf.layers
  return L.Sequential{
    L.Conv2D(32, 3, {activation = "relu", input_shape = {28, 28, 1}}),
    L.MaxPool2D(2),
    L.Conv2D(64, 3, {activation = "relu"}),
    L.MaxPool2D(2),
    L.Flatten(),
    L.Dropout(0.5),
    L.Dense(10),
  }
end

-- Shuffled (a fixed seed) batches of 128, the recipe's batch size.
function convnet.batches(x, y)
  return mf.data.Dataset.from_tensor_slices{x, y}:shuffle(x.shape[1], {seed = 1}):batch(128)
end

-- model:fit's options: the recipe's loss and Adam, then 'extra' (epochs, ...).
function convnet.fit_options(extra)
  local opts = {loss = mf.losses.sparse_categorical_crossentropy{from_logits = true},
                optimizer = mf.train.AdamOptimizer(0.001)}
  for k, v in pairs(extra) do opts[k] = v end
  return opts
end

return convnet
