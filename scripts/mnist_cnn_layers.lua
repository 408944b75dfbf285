-- mnist_cnn_layers.lua — PyTorch's MNIST example network, written with
-- mf.layers and trained with model:fit, as short as Keras:
--   Conv 32 -> Conv 64 -> MaxPool 2 -> Dropout .25 -> Dense 128 -> Dropout .5 -> Dense 10
--
-- Data: the 8x8 handwritten digits that Debian's scikit-learn ships (1797
-- images; `apt-get install python3-sklearn`), or MNIST IDX files:
--   build/moonflow scripts/mnist_cnn_layers.lua [epochs]
--   build/moonflow scripts/mnist_cnn_layers.lua images.idx[.gz] labels.idx[.gz] [epochs [max]]
-- It holds out the last fifth of the images and prints "test accuracy = ...".
local DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"

local images_path, labels_path, epochs, max_images
if arg and arg[2] then
  images_path, labels_path = arg[1], arg[2]
  epochs, max_images = tonumber(arg[3] or 2), arg[4] and tonumber(arg[4])
else
  epochs = tonumber(arg and arg[1] or 12)
end
epochs = math.tointeger(epochs)
assert(epochs and epochs >= 1, "usage: mnist_cnn_layers.lua [images labels] [epochs [max]]")

-- 1. Load: x is (n, h, w, 1) in [0, 1], y the 1-based classes (int64).
local x, y
if images_path then
  local images, labels = mf.data.read_idx(images_path), mf.data.read_idx(labels_path)
  local n, h, w = images.shape[1], images.shape[2], images.shape[3]
  if max_images and max_images < n then n = math.tointeger(max_images) end
  x = mf.reshape(mf.cast(mf.slice(images, {1, 1, 1}, {n, h, w}), "float32") / 255, {n, h, w, 1})
  y = mf.cast(mf.slice(labels, {1}, {n}), "int64") + 1
else
  local f = io.open(DIGITS, "rb")
  if not f then
    print("no data: install the digits with `apt-get install python3-sklearn`, "
          .. "or give MNIST IDX files (images labels)")
    os.exit(2)
  end
  f:close()
  -- read_csv reads plain text: unpack the gzip file with gzip (on every Debian)
  local csv = os.tmpname()
  assert(os.execute(string.format("gzip -dc '%s' > '%s'", DIGITS, csv)), "gzip failed")
  local t = mf.data.read_csv(csv, {header = false})
  os.remove(csv)
  local n = t.shape[1]
  x = mf.reshape(mf.slice(t, {1, 1}, {n, 64}) / 16, {n, 8, 8, 1})
  y = mf.cast(mf.slice(t, {1, 65}, {n, 1}), "int64"):reshape{n} + 1
end
local n, h, w = x.shape[1], x.shape[2], x.shape[3]
print(string.format("%d images of %dx%d", n, h, w))

-- 2. Shuffle once (with a seed: the same split on every run), hold out the
--    last fifth for testing.
local order = mf.random.shuffle(mf.range(1, n + 1, 1, "int64"), {seed = 7})
x, y = mf.gather(x, order), mf.gather(y, order)
local n_test = n // 5
local n_train = n - n_test
local function rows(t, first, count)
  local begin, size = {first}, {count}
  for a = 2, t.ndim do begin[a], size[a] = 1, t.shape[a] end
  return mf.slice(t, begin, size)
end
local train = mf.data.Dataset.from_tensor_slices{rows(x, 1, n_train), rows(y, 1, n_train)}
                :shuffle(n_train, {seed = 1}):batch(32)
local test = mf.data.Dataset.from_tensor_slices{rows(x, n_train + 1, n_test),
                                                rows(y, n_train + 1, n_test)}:batch(256)

-- 3. The model (PyTorch's examples/mnist/main.py, in Keras's words).
mf.random.seed(1)
local L = mf.layers
local model = L.Sequential{
  L.Conv2D(32, 3, {activation = "relu", input_shape = {h, w, 1}}),
  L.Conv2D(64, 3, {activation = "relu"}),
  L.MaxPool2D(2),
  L.Dropout(0.25),
  L.Flatten(),
  L.Dense(128, {activation = "relu"}),
  L.Dropout(0.5),
  L.Dense(10),
}
model:summary()

-- 4. Train: Adam with a learning rate that decays by 0.7 per epoch
--    (PyTorch's example uses StepLR(gamma = 0.7)).
local steps = (n_train + 31) // 32
local step = mf.train.global_step()
local boundaries, values = {}, {0.002}
for e = 1, epochs - 1 do
  boundaries[e], values[e + 1] = e * steps, 0.002 * 0.8 ^ e
end
local lr = mf.train.piecewise_constant(step, boundaries, values)
local history = model:fit(train, {
  loss = mf.losses.sparse_categorical_crossentropy{from_logits = true},
  optimizer = mf.train.AdamOptimizer(lr), global_step = step,
  epochs = epochs, metrics = {"accuracy"},
})
print(string.format("last epoch: loss %.4f, accuracy %.4f", history.loss[epochs],
                    history.accuracy[epochs]))

-- 5. Test.
local res = model:evaluate(test)
print(string.format("test accuracy = %.4f (%d images)", res.accuracy, n_test))
