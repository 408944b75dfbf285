-- fashion_mnist.lua MODE [max_images] — one training epoch of Keras's simple
-- convnet (scripts/fashion_mnist_cnn.lua) on Fashion-MNIST, batch 128, Adam:
-- MODE "eager" (fit{trace = false}) or "traced" (fit's default). Prints
-- "load <seconds>" for reading and scaling the 60,000 training images and
-- "epoch MODE <seconds>". Called by bench/fashion_mnist.sh.
local mode = arg[1]
local max = arg[2] and math.tointeger(tonumber(arg[2]))
assert(mode == "eager" or mode == "traced", "usage: fashion_mnist.lua eager|traced [max]")

local t0 = mf.clock()
local train = mf.datasets.fashion_mnist()
local n = train:cardinality()
if max and max < n then train, n = train:take(max), max end
local x, y = train:batch(n):iter()()
x = mf.reshape(mf.cast(x, "float32") / 255, {n, 28, 28, 1})
print(string.format("load %.3f", mf.clock() - t0))

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
local batches = mf.data.Dataset.from_tensor_slices{x, y}:shuffle(n, {seed = 1}):batch(128)
local t1 = mf.clock()
model:fit(batches, {
  loss = mf.losses.sparse_categorical_crossentropy{from_logits = true},
  optimizer = mf.train.AdamOptimizer(0.001),
  epochs = 1, verbose = 0, trace = mode == "traced",
})
print(string.format("epoch %s %.3f", mode, mf.clock() - t1))
