-- 07_cnn.lua — a tiny convolutional network: conv2d -> relu -> max_pool ->
-- dense, trained with Adam on synthetic 12x12 images of horizontal versus
-- vertical bars.
-- Run: build/moonflow scripts/07_cnn.lua [steps]

local steps = tonumber(arg and arg[1]) or 40
local N, S = 64, 12                       -- images, side

-- 1. Data: image i has a bar (horizontal for class 1, vertical for class 2)
--    at a random place, plus noise. Layout NHWC: (N, 12, 12, 1).
math.randomseed(5)
local imgs, labels = {}, {}
for i = 1, N do
  local class, at = (i % 2) + 1, math.random(2, S - 1)
  local img = {}
  for r = 1, S do
    img[r] = {}
    for c = 1, S do
      local on = (class == 1 and r == at) or (class == 2 and c == at)
      img[r][c] = {(on and 1 or 0) + 0.3 * math.random()}
    end
  end
  imgs[i], labels[i] = img, class
end
local x = mf.tensor(imgs)                 -- (64, 12, 12, 1) float32
local y = mf.tensor(labels, "int64")      -- classes 1 and 2

-- 2. Parameters: a 3x3 conv with 8 filters (HWIO), then a dense layer.
mf.random.seed(11)
local init = mf.initializers.glorot_uniform{seed = 1}
local filters = mf.Variable(init{3, 3, 1, 8}, {name = "conv/filters"})
local conv_b = mf.Variable(mf.zeros{8}, {name = "conv/bias"})
local dense_w = mf.Variable(init{6 * 6 * 8, 2}, {name = "dense/w"})
local dense_b = mf.Variable(mf.zeros{2}, {name = "dense/b"})
local params = {filters, conv_b, dense_w, dense_b}

local function model(images)
  local h = mf.nn.conv2d(images, filters, 1, "SAME")          -- (N, 12, 12, 8)
  h = mf.nn.relu(mf.nn.bias_add(h, conv_b))
  h = mf.nn.max_pool(h, 2, 2, "VALID")                         -- (N, 6, 6, 8)
  h = mf.reshape(h, {-1, 6 * 6 * 8})
  return mf.matmul(h, dense_w) + dense_b                       -- logits (N, 2)
end

local function loss_fn()
  return mf.reduce_mean(mf.nn.sparse_softmax_cross_entropy_with_logits{
    labels = y, logits = model(x)})
end

-- 3. Train.
local opt = mf.train.AdamOptimizer(0.01)
local first = loss_fn():item()
print(string.format("step    0  loss %.4f", first))
for step = 1, steps do
  opt:minimize(loss_fn, {var_list = params})
  if step % 10 == 0 then print(string.format("step %4d  loss %.4f", step, loss_fn():item())) end
end
local last = loss_fn():item()
local acc = mf.reduce_mean(mf.cast(mf.equal(mf.argmax(model(x), 2), y), "float32")):item()
print(string.format("accuracy = %.3f", acc))
print(string.format("loss decreased: %s (%.4f -> %.4f)", tostring(last < first), first, last))
