-- cnn_idx.lua — a small convolutional network on images in the IDX format
-- of MNIST, trained eagerly with mini-batches from mf.data.Dataset.
-- Run: build/moonflow scripts/cnn_idx.lua [images.idx[.gz] labels.idx[.gz] [epochs [max_images]]]
--   e.g. build/moonflow scripts/cnn_idx.lua \
--            train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz 1 10000
--
-- Without files it writes a small synthetic data set in the same IDX format
-- (10 classes of 28x28 "digits": a bright block whose place depends on the
-- class, on noise) to temporary files and reads it back, so the loading path
-- is the one real MNIST files take.

local images_path, labels_path = arg and arg[1], arg and arg[2]
local epochs = math.tointeger(tonumber(arg and arg[3] or 2))
local max_images = arg and arg[4] and math.tointeger(tonumber(arg[4]))
assert(epochs and epochs >= 1 and (not (arg and arg[4]) or max_images and max_images >= 1),
       "usage: cnn_idx.lua [images labels [epochs [max_images]]]:"
       .. " epochs and max_images must be positive integers")
local tmpfiles = {}

-- IDX: two zero bytes, a type code (0x08 = unsigned byte), the number of
-- dims, each dim as a big-endian 32-bit integer, then the data.
local function write_idx(dims, bytes)
  local path = os.tmpname()
  tmpfiles[#tmpfiles + 1] = path
  local f = assert(io.open(path, "wb"))
  f:write(string.char(0, 0, 0x08, #dims))
  for _, d in ipairs(dims) do f:write(string.pack(">I4", d)) end
  f:write(bytes)
  f:close()
  return path
end

local function synthetic_mnist(n)
  math.randomseed(1234)
  local img, lab, row = {}, {}, {}
  for i = 1, n do
    local k = (i - 1) % 10
    local r0, c0 = 3 + (k // 5) * 12, 1 + (k % 5) * 5      -- block place for class k
    for p = 0, 28 * 28 - 1 do
      local r, c = p // 28, p % 28
      local on = r >= r0 and r < r0 + 10 and c >= c0 and c < c0 + 5
      row[p + 1] = on and math.random(150, 255) or math.random(0, 90)
    end
    img[i] = string.char(table.unpack(row))
    lab[i] = k
  end
  return write_idx({n, 28, 28}, table.concat(img)),
         write_idx({n}, string.char(table.unpack(lab)))
end

local synthetic = not (images_path and labels_path)
if synthetic then
  print("no IDX files given: generating a synthetic data set of 500 images")
  print("(each class is a bright block in a place of its own: easy, so expect about 100%;")
  print(" give MNIST's IDX files for a real test)")
  images_path, labels_path = synthetic_mnist(500)
end

-- 1. Load: read_idx gives uint8 pixels 0..255 and uint8 labels 0..9.
local images = mf.data.read_idx(images_path)
local labels = mf.data.read_idx(labels_path)
for _, p in ipairs(tmpfiles) do os.remove(p) end
local n, h, w = images.shape[1], images.shape[2], images.shape[3]
if max_images and max_images < n then n = max_images end
print(string.format("loaded %d images of %dx%d", n, h, w))
-- NHWC layout: (n, 28, 28, 1), pixels scaled to [0, 1]; classes 1-based.
local x = mf.reshape(mf.cast(mf.slice(images, {1, 1, 1}, {n, h, w}), "float32") / 255,
                     {n, h, w, 1})
local y = mf.cast(mf.slice(labels, {1}, {n}), "int64") + 1

-- 2. Hold out the last 20% for testing.
local n_test = n // 5
local n_train = n - n_test
local x_train, y_train = mf.slice(x, {1, 1, 1, 1}, {n_train, h, w, 1}), mf.slice(y, {1}, {n_train})
local x_test = mf.slice(x, {n_train + 1, 1, 1, 1}, {n_test, h, w, 1})
local y_test = mf.slice(y, {n_train + 1}, {n_test})

-- 3. The model: conv 3x3 (8 filters) -> relu -> max_pool 2 -> conv 3x3
--    (16 filters) -> relu -> max_pool 2 -> dense to 10 logits. Filters are
--    HWIO: height, width, input channels, output channels.
mf.random.seed(11)
local init = mf.initializers.glorot_uniform{seed = 1}
local flat = (h // 4) * (w // 4) * 16
local params = {
  mf.Variable(init{3, 3, 1, 8}, {name = "conv1/filters"}), mf.Variable(mf.zeros{8}),
  mf.Variable(init{3, 3, 8, 16}, {name = "conv2/filters"}), mf.Variable(mf.zeros{16}),
  mf.Variable(init{flat, 10}, {name = "dense/w"}), mf.Variable(mf.zeros{10}),
}
local function model(xb)
  local a = mf.nn.relu(mf.nn.bias_add(mf.nn.conv2d(xb, params[1], 1, "SAME"), params[2]))
  a = mf.nn.max_pool(a, 2, 2, "VALID")                         -- (N, 14, 14, 8)
  a = mf.nn.relu(mf.nn.bias_add(mf.nn.conv2d(a, params[3], 1, "SAME"), params[4]))
  a = mf.nn.max_pool(a, 2, 2, "VALID")                         -- (N, 7, 7, 16)
  return mf.matmul(mf.reshape(a, {-1, flat}), params[5]) + params[6]
end

local function accuracy(xs, ys)
  local pred = mf.argmax(model(xs), 2)                         -- 1-based classes
  return mf.reduce_mean(mf.cast(mf.equal(pred, ys), "float32")):item()
end

-- 4. Train: shuffled mini-batches of 32 with Adam, a progress line per epoch.
local batch = 32
local ds = mf.data.Dataset.from_tensor_slices{x_train, y_train}
  :shuffle(n_train, {seed = 1}):batch(batch):epochs(epochs)
local per_epoch = (n_train + batch - 1) // batch
local progress = mf.progress{total = per_epoch, epochs = epochs}
local opt = mf.train.AdamOptimizer(0.005)
local history = {}
for xb, yb in ds:iter() do
  local loss = opt:minimize(function()     -- minimize returns the loss
    return mf.reduce_mean(mf.nn.sparse_softmax_cross_entropy_with_logits{
      labels = yb, logits = model(xb)})
  end, {var_list = params})
  history[#history + 1] = loss:item()
  progress:update{loss = loss}                  -- steps and epochs are counted for us
end
mf.plot(history, {title = "training loss per batch", height = 8})
print(string.format("train accuracy = %.4f", accuracy(x_train, y_train)))
print(string.format("test accuracy = %.4f%s", accuracy(x_test, y_test),
                    synthetic and " (synthetic data: not a measure of the model)" or ""))
