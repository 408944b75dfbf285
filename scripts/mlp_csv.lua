-- mlp_csv.lua — a multi-layer perceptron trained on a CSV file: the feature
-- columns first, the class label in the last column (integers; any values,
-- mapped to classes 1..K). Prints the test accuracy on a held-out fifth.
-- Run: build/moonflow scripts/mlp_csv.lua [data.csv|- [epochs [hidden]]]
--   e.g. scikit-learn's digits (64 pixel columns, then the digit):
--        zcat /usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz > digits.csv
--        build/moonflow scripts/mlp_csv.lua digits.csv 30
--
-- Without a file (or with "-") it writes a generated one: three classes of
-- 4-feature points.

local path = arg and arg[1] ~= "-" and arg[1] or nil
local epochs = math.tointeger(tonumber(arg and arg[2] or 20))
local hidden = math.tointeger(tonumber(arg and arg[3] or 32))
assert(epochs and epochs >= 1 and hidden and hidden >= 1,
       "usage: mlp_csv.lua [data.csv|- [epochs [hidden]]]:"
       .. " epochs and hidden must be positive integers")

local function write_generated_csv()
  local p = os.tmpname()
  local f = assert(io.open(p, "w"))
  f:write("f1,f2,f3,f4,label\n")
  math.randomseed(42)
  local centers = {{2, 0, 0, 1}, {0, 2, 0, -1}, {0, 0, 2, 0}}
  for i = 1, 300 do
    local k = (i - 1) % 3 + 1
    local row = {}
    for j = 1, 4 do row[j] = string.format("%.4f", centers[k][j] + (math.random() - 0.5) * 2.5) end
    row[5] = tostring(k - 1)
    f:write(table.concat(row, ","), "\n")
  end
  f:close()
  return p
end

local generated = not path
if generated then
  path = write_generated_csv()
  print("no CSV given: generated 300 rows of 4 features and 3 classes")
end

-- 1. Load: read_csv parses in C and skips a header line by itself.
local data = mf.data.read_csv(path)
if generated then os.remove(path) end
local n, cols = data.shape[1], data.shape[2]
local features = mf.slice(data, {1, 1}, {n, cols - 1})
local raw_labels = mf.slice(data, {1, cols}, {n, 1}):reshape{n}:totable()

-- 2. Labels to classes 1..K (the distinct values in increasing order).
local values, class_of = {}, {}
for _, v in ipairs(raw_labels) do
  if not class_of[v] then class_of[v] = true; values[#values + 1] = v end
end
table.sort(values)
for k, v in ipairs(values) do class_of[v] = k end
local classes = {}
for i, v in ipairs(raw_labels) do classes[i] = class_of[v] end
local K = #values
print(string.format("%d rows, %d features, %d classes", n, cols - 1, K))

-- 3. Standardise each feature (mean 0, stddev 1; constant columns stay 0),
--    shuffle once with a seed, hold out the last fifth for testing.
local mean = mf.reduce_mean(features, {axis = 1, keepdims = true})
local std = mf.sqrt(mf.reduce_mean(mf.square(features - mean), {axis = 1, keepdims = true}))
local x = (features - mean) / mf.maximum(std, 1e-6)
local y = mf.tensor(classes, "int64")
mf.random.seed(5)
local order = mf.random.shuffle(mf.range(1, n + 1, 1, "int64"))
x, y = mf.gather(x, order), mf.gather(y, order)
local n_test = n // 5
local n_train = n - n_test
local d = cols - 1
local x_train, y_train = mf.slice(x, {1, 1}, {n_train, d}), mf.slice(y, {1}, {n_train})
local x_test = mf.slice(x, {n_train + 1, 1}, {n_test, d})
local y_test = mf.slice(y, {n_train + 1}, {n_test})

-- 4. The model: dense -> relu -> dense (logits), He-initialised.
local init = mf.initializers.he_normal{seed = 1}
local params = {mf.Variable(init{d, hidden}, {name = "hidden/w"}), mf.Variable(mf.zeros{hidden}),
                mf.Variable(init{hidden, K}, {name = "out/w"}), mf.Variable(mf.zeros{K})}
local function model(xb)
  local a = mf.nn.relu(mf.matmul(xb, params[1]) + params[2])
  return mf.matmul(a, params[3]) + params[4]
end
local function accuracy(xs, ys)
  return mf.reduce_mean(mf.cast(mf.equal(mf.argmax(model(xs), 2), ys), "float32")):item()
end

-- 5. Train with Adam on shuffled mini-batches; one loss value per epoch.
local batch = 32
local ds = mf.data.Dataset.from_tensor_slices{x_train, y_train}:shuffle(n_train, {seed = 2})
  :batch(batch)
local opt = mf.train.AdamOptimizer(0.01)
local progress = mf.progress{total = (n_train + batch - 1) // batch, epochs = epochs}
local history = {}
for epoch = 1, epochs do
  local sum, count = 0, 0
  for xb, yb in ds:iter() do                    -- each pass draws a new order
    local loss = opt:minimize(function()
      return mf.reduce_mean(mf.nn.sparse_softmax_cross_entropy_with_logits{
        labels = yb, logits = model(xb)})
    end, {var_list = params})
    sum, count = sum + loss:item(), count + 1
    progress:update{epoch = epoch, step = count, loss = sum / count}
  end
  history[epoch] = sum / count
end
mf.plot(history, {title = "mean training loss per epoch", height = 8})
print(string.format("train accuracy = %.4f", accuracy(x_train, y_train)))
print(string.format("test accuracy = %.4f", accuracy(x_test, y_test)))
