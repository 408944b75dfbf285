-- 05_mnist_softmax.lua — softmax regression (a linear classifier) on MNIST.
-- Run: build/moonflow scripts/05_mnist_softmax.lua [images.idx[.gz] labels.idx[.gz] [epochs]]
--   e.g. build/moonflow scripts/05_mnist_softmax.lua \
--            train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz
--
-- Without files it writes a small synthetic data set in the same IDX format
-- (10 classes of 28x28 "digits": a bright block whose place depends on the
-- class, on noise) to temporary files and reads them back, so the loading path
-- is the one real MNIST files take.

local images_path, labels_path = arg and arg[1], arg and arg[2]
local epochs = tonumber(arg and arg[3]) or 3
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

if not (images_path and labels_path) then
  print("no IDX files given: generating a synthetic data set of 2000 images")
  images_path, labels_path = synthetic_mnist(2000)
end

-- 1. Load: read_idx gives int32 pixels 0..255 and int32 labels 0..9.
local images = mf.data.read_idx(images_path)
local labels = mf.data.read_idx(labels_path)
for _, p in ipairs(tmpfiles) do os.remove(p) end
local n = #images
print(string.format("loaded %d images of %dx%d", n, images.shape[2], images.shape[3]))
local x = mf.reshape(mf.cast(images, "float32") / 255, {n, 784})
local y = mf.cast(labels, "int64") + 1          -- sparse labels are 1-based classes

-- 2. Hold out the last 20% for testing.
local n_test = n // 5
local n_train = n - n_test
local x_train, y_train = mf.slice(x, {1, 1}, {n_train, 784}), mf.slice(y, {1}, {n_train})
local x_test = mf.slice(x, {n_train + 1, 1}, {n_test, 784})
local y_test = mf.slice(y, {n_train + 1}, {n_test})

-- 3. The model: logits = x W + b.
local W = mf.Variable(mf.zeros{784, 10}, {name = "W"})
local b = mf.Variable(mf.zeros{10}, {name = "b"})
local function logits_of(xb) return mf.matmul(xb, W) + b end

local function accuracy(xs, ys)
  local pred = mf.argmax(logits_of(xs), 2)       -- 1-based classes, int64
  return mf.reduce_mean(mf.cast(mf.equal(pred, ys), "float32")):item()
end

-- 4. Train: shuffled mini-batches of 100 for a few epochs with Adam.
local ds = mf.data.Dataset.from_tensor_slices{x_train, y_train}
  :shuffle(n_train, {seed = 1}):batch(100):epochs(epochs)
local opt = mf.train.AdamOptimizer(0.01)
local step, every = 0, n_train > 10000 and 100 or 20   -- print the loss every so many steps
for xb, yb in ds:iter() do
  local function loss_fn()
    return mf.reduce_mean(mf.nn.sparse_softmax_cross_entropy_with_logits{
      labels = yb, logits = logits_of(xb)})
  end
  opt:minimize(loss_fn, {var_list = {W, b}})
  step = step + 1
  if step % every == 0 then
    print(string.format("step %4d  loss %.4f", step, loss_fn():item()))
  end
end

print(string.format("train accuracy = %.4f", accuracy(x_train, y_train)))
print(string.format("test accuracy = %.4f", accuracy(x_test, y_test)))
