-- fashion_mnist.lua MODE [max_images] — one training epoch of Keras's simple
-- convnet (scripts/models/keras_convnet.lua, as scripts/fashion_mnist_cnn.lua
-- trains it) on Fashion-MNIST, batch 128, Adam:
-- MODE "eager" (fit{trace = false}) or "traced" (fit's default). Prints
-- "load <seconds>" for reading and scaling the 60,000 training images and
-- "epoch MODE <seconds>". Called by bench/fashion_mnist.sh.
local mode = arg[1]
local max = arg[2] and math.tointeger(tonumber(arg[2]))
assert(mode == "eager" or mode == "traced", "usage: fashion_mnist.lua eager|traced [max]")

local convnet = dofile("scripts/models/keras_convnet.lua")
local t0 = mf.clock()
local x, y = convnet.images(mf.datasets.fashion_mnist(), max)
print(string.format("load %.3f", mf.clock() - t0))

local model = convnet.new()
local batches = convnet.batches(x, y)
local t1 = mf.clock()
model:fit(batches, convnet.fit_options{epochs = 1, verbose = 0, trace = mode == "traced"})
print(string.format("epoch %s %.3f", mode, mf.clock() - t1))
