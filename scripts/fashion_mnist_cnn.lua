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

-- The model and its data handling are scripts/models/keras_convnet.lua (the
-- bench, bench/fashion_mnist.lua, times the same one).
local here = (arg and arg[0] or ""):match("^(.*)/") or "."
local convnet = dofile(here .. "/models/keras_convnet.lua")

-- 1. Load: every image at once (one batch), scaled to [0, 1] as (n, 28, 28, 1).
local t0 = mf.clock()
local train, test = mf.datasets.fashion_mnist()
local x_train, y_train = convnet.images(train, max_train)
local x_test, y_test = convnet.images(test)
print(string.format("loaded %d training and %d test images in %.1f s", x_train.shape[1],
                    x_test.shape[1], mf.clock() - t0))

-- 2. The model, as Keras's recipe (logits and from_logits instead of softmax).
local model = convnet.new()
model:summary()

-- 3. Train, timing each epoch.
local epoch_start = mf.clock()
local timer = {
  on_epoch_end = function(epoch, logs)
    local now = mf.clock()
    print(string.format("epoch %d/%d: %.1f s, loss %.4f, accuracy %.4f", epoch, epochs,
                        now - epoch_start, logs.loss, logs.accuracy))
    epoch_start = now
  end,
}
model:fit(convnet.batches(x_train, y_train), convnet.fit_options{
  epochs = epochs, metrics = {"accuracy"}, callbacks = {timer}, verbose = 0,
})

-- 4. Test.
local res = model:evaluate(mf.data.Dataset.from_tensor_slices{x_test, y_test}:batch(500))
print(string.format("test accuracy = %.4f (%d images)", res.accuracy, x_test.shape[1]))
