-- onnx_models.lua OUTDIR [DIGITS_CSV] — exports the models `make interop`
-- runs in onnxruntime, each as NAME.onnx with NAME_in.safetensors (its
-- inputs, under the model's input names) and NAME_out.safetensors
-- (moonflow's outputs, under the output names):
--   mlp        a traced MLP (Dense-ReLU-Dense-softmax) on 4 features
--   cnn        the digits CNN, trained here for a few epochs, traced:
--              conv 3x3 SAME - relu - max_pool 2 - conv 3x3 VALID - relu -
--              reshape {-1, 64} - dense - log_softmax
--   ops        one traced function through most other mapped ops: strided
--              and dilated SAME convolutions on odd sizes, average pooling with
--              SAME padding (the padding left out of the count), pad, slice, concat,
--              reductions, transposed matmuls, where, argmax, elementwise math
--   layers     an mf.layers Sequential (Conv2D, BatchNormalization in inference
--              mode, MaxPool2D, GlobalAveragePooling2D, Dropout, Dense,
--              LayerNormalization), trained a step first so its statistics move
--   rnn        Embedding (1-based int64 ids) - LSTM - Dense
--   cnn_graph  the same network in graph mode with an unknown batch size
--              (placeholder {-1, 8, 8, 1}, reshape {-1, k}): run in
--              onnxruntime with a batch size it never saw at export time
--   attention  any-rank matmuls: two-head attention on (2,5,8) (rank-4
--              products, a transposed one), batch axes broadcast both ways
--              (rank 4 x rank 3), a vector on the right
-- DIGITS_CSV: sklearn's digits.csv.gz unpacked (1797 rows of 64 pixels
-- 0..16 and a label); without it, synthetic 8x8 digits (said on stdout).
local outdir = assert(arg[1], "usage: onnx_models.lua OUTDIR [DIGITS_CSV]")
local digits_csv = arg[2]

local function export(name, f, inputs, names_in, names_out)
  local path = outdir .. "/" .. name .. ".onnx"
  mf.onnx.export(f, path, {inputs = inputs, outputs = names_out})
  local outs = table.pack(f(table.unpack(inputs)))
  local ins, exp = {}, {}
  for i, n in ipairs(names_in) do ins[n] = inputs[i] end
  for i, n in ipairs(names_out) do exp[n] = outs[i] end
  mf.save(outdir .. "/" .. name .. "_in.safetensors", ins)
  mf.save(outdir .. "/" .. name .. "_out.safetensors", exp)
  print("exported " .. path)
end

-- 1. a traced MLP
mf.random.seed(7)
local W1 = mf.Variable(mf.random.normal({4, 16}, {stddev = 0.5}), {name = "dense/kernel"})
local b1 = mf.Variable(mf.random.normal({16}, {stddev = 0.1}), {name = "dense/bias"})
local W2 = mf.Variable(mf.random.normal({16, 3}, {stddev = 0.5}), {name = "dense_1/kernel"})
local b2 = mf.Variable(mf.random.normal({3}, {stddev = 0.1}), {name = "dense_1/bias"})
local mlp = mf.trace(function(x)
  local h = mf.nn.relu(mf.matmul(x, W1) + b1)
  return mf.nn.softmax(mf.nn.bias_add(mf.matmul(h, W2), b2))
end)
export("mlp", mlp, {mf.random.normal({5, 4})}, {"arg1"}, {"probabilities"})

-- 2. the digits CNN
local function load_digits()
  if digits_csv then
    local d = mf.data.read_csv(digits_csv, {header = false})
    local n = d.shape[1]
    local x = mf.reshape(mf.slice(d, {1, 1}, {n, 64}) / 16, {n, 8, 8, 1})
    local y = mf.cast(mf.reshape(mf.slice(d, {1, 65}, {n, 1}), {n}), "int64") + 1
    print(("digits: sklearn's 8x8 digits (%d images)"):format(n))
    return x, y
  end
  -- synthetic 8x8 "digits": class k lights a 3x3 block at a place of its own
  local n, xs, ys = 600, {}, {}
  math.randomseed(5)
  for i = 1, n do
    local k = (i - 1) % 10
    local r0, c0 = (k // 4) * 2 + 1, (k % 4) * 2 + 1
    local img = {}
    for r = 1, 8 do
      img[r] = {}
      for c = 1, 8 do
        local on = r >= r0 and r < r0 + 3 and c >= c0 and c < c0 + 3
        img[r][c] = {(on and 0.8 or 0) + math.random() * 0.2}
      end
    end
    xs[i], ys[i] = img, k + 1
  end
  print(("digits: synthetic 8x8 digits (%d images; sklearn's digits.csv.gz not found)"):format(n))
  return mf.tensor(xs), mf.tensor(ys, "int64")
end

local x_all, y_all = load_digits()
mf.random.seed(11)
local he = mf.initializers.he_normal{seed = 3}
local K1 = mf.Variable(he({3, 3, 1, 8}), {name = "conv1/kernel"})
local c1 = mf.Variable(mf.zeros({8}), {name = "conv1/bias"})
local K2 = mf.Variable(he({3, 3, 8, 16}), {name = "conv2/kernel"})
local c2 = mf.Variable(mf.zeros({16}), {name = "conv2/bias"})
local Wd = mf.Variable(mf.initializers.glorot_uniform{seed = 4}({2 * 2 * 16, 10}),
                       {name = "dense/kernel"})
local bd = mf.Variable(mf.zeros({10}), {name = "dense/bias"})

local function cnn_logits(x)
  local h = mf.nn.relu(mf.nn.bias_add(mf.nn.conv2d(x, K1, 1, "SAME"), c1))    -- 8x8x8
  h = mf.nn.max_pool(h, 2, 2, "SAME")                                          -- 4x4x8
  h = mf.nn.relu(mf.nn.bias_add(mf.nn.conv2d(h, K2, 1, "VALID"), c2))         -- 2x2x16
  h = mf.reshape(h, {-1, 64})
  return mf.nn.bias_add(mf.matmul(h, Wd), bd)
end

local opt = mf.train.AdamOptimizer(0.01)
local ds = mf.data.Dataset.from_tensor_slices({x_all, y_all}):shuffle(2000, {seed = 1}):batch(64)
for epoch = 1, 5 do
  local total, batches = 0, 0
  for x, y in ds:iter() do
    opt:minimize(function()
      local xent = mf.nn.sparse_softmax_cross_entropy_with_logits{labels = y,
                                                                  logits = cnn_logits(x)}
      local loss = mf.reduce_mean(xent)
      total, batches = total + loss:item(), batches + 1
      return loss
    end)
  end
  print(("cnn epoch %d: mean loss %.4f"):format(epoch, total / batches))
end
local acc = mf.reduce_mean(mf.cast(mf.equal(mf.argmax(cnn_logits(x_all), 2), y_all), "float32"))
print(("cnn training accuracy: %.3f"):format(acc:item()))

local cnn = mf.trace(function(x) return mf.nn.log_softmax(cnn_logits(x)) end)
local test_x = mf.slice(x_all, {1, 1, 1, 1}, {32, 8, 8, 1})
export("cnn", cnn, {test_x}, {"arg1"}, {"log_probs"})

-- 3. the same network as a graph with an unknown batch size
local g = mf.Graph()
local ph, out
g:as_default(function()
  ph = mf.placeholder("float32", {-1, 8, 8, 1}, "images")
  out = mf.nn.softmax(cnn_logits(ph))
end)
local sess = mf.Session(g)
mf.onnx.export(g, outdir .. "/cnn_graph.onnx", {inputs = {ph}, outputs = {out},
                                                output_names = {"probs"}})
local batch = mf.slice(x_all, {41, 1, 1, 1}, {7, 8, 8, 1})
mf.save(outdir .. "/cnn_graph_in.safetensors", {images = batch})
mf.save(outdir .. "/cnn_graph_out.safetensors", {probs = sess:run(out, {[ph] = batch})})
print("exported " .. outdir .. "/cnn_graph.onnx")

-- 4. many mapped ops at once
mf.random.seed(21)
local F1 = mf.Variable(mf.random.normal({3, 3, 2, 4}, {stddev = 0.4}), {name = "f1"})
local F2 = mf.Variable(mf.random.normal({2, 2, 4, 3}, {stddev = 0.4}), {name = "f2"})
local M = mf.Variable(mf.random.normal({5, 3}), {name = "m"})
local ops = mf.trace(function(x, y)
  local a = mf.nn.conv2d(x, F1, 2, "SAME")                                     -- 4x4x4
  local b = mf.nn.conv2d(a, F2, 1, "SAME", {dilations = 2})                    -- 4x4x3
  local p = mf.pad(b, {{0, 0}, {1, 0}, {0, 1}, {0, 0}})                          -- 5x5x3
  local s = mf.slice(p, {1, 2, 1, 1}, {-1, 3, 4, 3})                            -- 3x4x3
  local r = mf.reduce_mean(s, {axis = {2, 3}}) +                               -- (n,3)
            mf.reduce_sum(mf.nn.avg_pool(b, 3, 2, "SAME"), {axis = {2, 3}})
  local q = mf.reduce_max(mf.square(s), {axis = 2, keepdims = true})
  local t = mf.reshape(mf.transpose(q, {1, 4, 2, 3}), {-1, 12})
  local u = mf.matmul(y, M, {transpose_b = true})                               -- (n,5)
  local v = mf.concat({r, mf.tanh(u), mf.sigmoid(t)}, 2)                        -- (n,20)
  local w = mf.where(mf.greater(v, 0.2), mf.exp(-v), mf.log1p(mf.abs(v)))
  local z = mf.squeeze(mf.expand_dims(w, 2), 2) * mf.rsqrt(mf.reduce_sum(v * v, {axis = 2,
                                                          keepdims = true}) + 1)
  return mf.maximum(z, -0.5) - mf.minimum(z, 0.1), mf.argmax(u, 2)
end)
export("ops", ops, {mf.random.normal({3, 7, 7, 2}), mf.random.normal({3, 3})},
       {"arg1", "arg2"}, {"values", "positions"})

-- 5. the layers of mf.layers
mf.random.seed(31)
local L = mf.layers
local seq = L.Sequential{
  L.Conv2D(4, 3, {padding = "SAME", activation = "relu"}),
  L.BatchNormalization{},
  L.MaxPool2D(2),
  L.Conv2D(6, 3, {strides = 2, padding = "SAME"}),
  L.GlobalAveragePooling2D(),
  L.Dropout(0.5),
  L.Dense(5, {activation = "tanh"}),
  L.LayerNormalization(),
  L.Dense(3),
}
local lx = mf.random.normal({4, 8, 8, 2})
seq(lx, {training = true})   -- builds the layers and moves the moving statistics
export("layers", mf.trace(function(x) return mf.nn.softmax(seq(x)) end), {lx}, {"arg1"},
       {"probs"})
local rnn = L.Sequential{L.Embedding(10, 4), L.LSTM(3), L.Dense(2)}
export("rnn", mf.trace(function(ids) return rnn(ids) end),
       {mf.tensor({{1, 2, 3, 4}, {10, 9, 8, 7}}, "int64")}, {"arg1"}, {"scores"})

-- 6. any-rank matmul: attention heads, broadcast batch axes, a vector
mf.random.seed(41)
local Wq = mf.Variable(mf.random.normal({8, 8}, {stddev = 0.4}), {name = "wq"})
local Wk = mf.Variable(mf.random.normal({8, 8}, {stddev = 0.4}), {name = "wk"})
local Wv = mf.Variable(mf.random.normal({8, 8}, {stddev = 0.4}), {name = "wv"})
local P = mf.Variable(mf.random.normal({3, 4, 2}), {name = "p"})
local u = mf.Variable(mf.random.normal({8}), {name = "u"})
local function heads(t) return mf.transpose(mf.reshape(t, {2, 5, 2, 4}), {1, 3, 2, 4}) end
local attention = mf.trace(function(x, y)
  local q, k, v = heads(mf.matmul(x, Wq)), heads(mf.matmul(x, Wk)), heads(mf.matmul(x, Wv))
  local p = mf.nn.softmax(mf.matmul(q, k, {transpose_b = true}) * 0.5)          -- (2,2,5,5)
  local o = mf.reshape(mf.transpose(mf.matmul(p, v), {1, 3, 2, 4}), {2, 5, 8})  -- (2,5,8)
  return mf.matmul(o, u), mf.matmul(y, P)                                      -- (2,5), (2,3,5,2)
end)
export("attention", attention, {mf.random.normal({2, 5, 8}), mf.random.normal({2, 1, 5, 4})},
       {"arg1", "arg2"}, {"pooled", "broadcast"})
