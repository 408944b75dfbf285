-- fashion_mnist_cnn.lua — Keras's "simple MNIST convnet" recipe
-- (keras.io/examples/vision/mnist_convnet) on Fashion-MNIST:
--   Conv 32 3x3 relu -> MaxPool 2 -> Conv 64 3x3 relu -> MaxPool 2 -> Flatten
--   -> Dropout 0.5 -> Dense 10, Adam, batch 128,
-- trained with model:fit on the 60,000 training images, tested on the 10,000
-- test images; prints each epoch's time and the test accuracy.
-- Data: Debian's dataset-fashion-mnist (mf.datasets.fashion_mnist).
--   build/moonflow scripts/fashion_mnist_cnn.lua [epochs [max_train_images]]
local epochs = math.tointeger(tonumber(arg and arg[1] or 15))
local max_train = arg and arg[2] and math.tointeger(tonumber(arg[2]))
assert(epochs and epochs >= 1 and (not (arg and arg[2]) or max_train and max_train >= 1),
       "usage: fashion_mnist_cnn.lua [epochs [max_train_images]]")

-- 1. Load: every image at once (one batch), scaled to [0, 1] as (n, 28, 28, 1).
local t0 = mf.clock()
local train, test = mf.datasets.fashion_mnist()
local function tensors(ds, max)
  local n = ds:cardinality()
  if max and max < n then ds, n = ds:take(max), max end
  local x, y = ds:batch(n):iter()()
  return mf.reshape(mf.cast(x, "float32") / 255, {n, 28, 28, 1}), y
end
local x_train, y_train = tensors(train, max_train)
local x_test, y_test = tensors(test)
print(string.format("loaded %d training and %d test images in %.1f s", x_train.shape[1],
                    x_test.shape[1], mf.clock() - t0))

-- 2. The model, as Keras's recipe (logits and from_logits instead of softmax).
mf.random.seed(1)
local L = mf.layers
local model = L.Sequential{
  L.Conv2D(32, 3, {activation = "relu", input_shape = {28, 28, 1}}),
  L.MaxPool2D(2),
  L.Conv2D(64, 3, {activation = "relu"}),
  L.MaxPool2D(2),
  L.Flatten(),
  L.Dropout(0.5),
  L.Dense(10),
}
model:summary()

-- 3. Train, timing each epoch.
local batches = mf.data.Dataset.from_tensor_slices{x_train, y_train}
                  :shuffle(x_train.shape[1], {seed = 1}):batch(128)
local epoch_start = mf.clock()
local timer = {
  on_epoch_end = function(epoch, logs)
    local now = mf.clock()
    print(string.format("epoch %d/%d: %.1f s, loss %.4f, accuracy %.4f", epoch, epochs,
                        now - epoch_start, logs.loss, logs.accuracy))
    epoch_start = now
  end,
}
model:fit(batches, {
  loss = mf.losses.sparse_categorical_crossentropy{from_logits = true},
  optimizer = mf.train.AdamOptimizer(0.001),
  epochs = epochs, metrics = {"accuracy"}, callbacks = {timer}, verbose = 0,
})

-- 4. Test.
local res = model:evaluate(mf.data.Dataset.from_tensor_slices{x_test, y_test}:batch(500))
print(string.format("test accuracy = %.4f (%d images)", res.accuracy, x_test.shape[1]))
