-- layers.lua WORKLOAD MODE [RUNS] — wall time of one training step with
-- mf.layers, median of RUNS timed runs, printed as "layers WORKLOAD MODE MS".
--   cnn_bn  Conv32 3x3 SAME - BatchNorm - ReLU - Conv64 3x3 SAME - BatchNorm - ReLU
--           - MaxPool 2 - Dense 10; batch 32, 28x28x1; SGD
--   lstm    Embedding(64, 64) - LSTM 128 (50 steps, all outputs) - Dense 64 per
--           step; batch 32; cross-entropy over every step; Adam
--   mlp     Dense 256 relu - Dense 10; batch 64, 784 inputs; SGD. MODE "layers"
--           calls model(x); MODE "hand" writes the same ops by hand on the
--           same Variables: the difference is the per-layer overhead.
--   MODE    eager: a tape and apply_gradients every step; trace: the step as
--           one mf.trace'd function (as model:fit runs it); overhead (mlp):
--           "layers" and "hand" steps alternating in one process, CPU time,
--           printed as "layers mlp overhead LAYERS_MS HAND_MS PERCENT".
-- Threads: OPENBLAS_NUM_THREADS (bench/layers.sh). PyTorch: bench/torch_layers.py.
local workload, mode = arg[1] or "mlp", arg[2] or "eager"
local runs = tonumber(arg[3]) or 7
mf.random.seed(1)
local L = mf.layers

local x, y, model, opt, loss_of
if workload == "cnn_bn" then
  x = mf.random.uniform{32, 28, 28, 1}
  model = L.Sequential{
    L.Conv2D(32, 3, {padding = "same"}), L.BatchNormalization(), L.ReLU(),
    L.Conv2D(64, 3, {padding = "same"}), L.BatchNormalization(), L.ReLU(),
    L.MaxPool2D(2), L.Flatten(), L.Dense(10)}
  opt = mf.train.GradientDescentOptimizer(0.01)
elseif workload == "lstm" then
  x = mf.cast(mf.random.uniform({32, 50}, {minval = 1, maxval = 65, dtype = "int32"}), "int64")
  local emb, lstm, head = L.Embedding(64, 64), L.LSTM(128, {return_sequences = true}),
                          L.Dense(64)
  model = L.Model{emb = emb, lstm = lstm, head = head,
                  call = function(self, ids) return self.head(self.lstm(self.emb(ids))) end}
  opt = mf.train.AdamOptimizer(0.001)
else
  x = mf.random.uniform{64, 784}
  model = L.Sequential{L.Dense(256, {activation = "relu"}), L.Dense(10)}
  opt = mf.train.GradientDescentOptimizer(0.01)
end
local batch = x.shape[1]
local labels = {}
for i = 1, batch * (workload == "lstm" and 50 or 1) do labels[i] = (i * 7) % 10 + 1 end
y = mf.tensor(labels, "int64")
if workload == "lstm" then y = mf.reshape(y, {batch, 50}) end
model(x) -- build

local function forward(ids, how)
  if (how or mode) ~= "hand" then return model(ids, {training = true}) end
  local d1, d2 = model.layers[1], model.layers[2]
  local h = mf.nn.relu(mf.matmul(ids, d1.kernel) + d1.bias)
  return mf.matmul(h, d2.kernel) + d2.bias
end

loss_of = function(inputs, lab, how)
  local logits = forward(inputs, how)
  if workload == "lstm" then
    logits, lab = mf.reshape(logits, {-1, 64}), mf.reshape(lab, {-1})
  end
  return mf.reduce_mean(mf.nn.sparse_softmax_cross_entropy_with_logits{
    labels = lab, logits = logits})
end

local vars = model.trainable_variables
local function train_step(inputs, lab, how)
  local tape = mf.GradientTape()
  local loss = loss_of(inputs, lab, how)
  tape:stop()
  local g = tape:gradient(loss, vars)
  local gv = {}
  for i, v in ipairs(vars) do gv[i] = {g[i], v} end
  opt:apply_gradients(gv)
  return loss
end
local step = mode == "trace" and mf.trace(train_step) or train_step

local iters = workload == "mlp" and 50 or (workload == "lstm" and 2 or 5)
local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

if mode == "overhead" then
  -- model(x) against the same ops by hand, in one process, alternating
  -- batches of steps (same allocator and cache state, same load on a shared
  -- machine), timed in process CPU time (os.clock: time the scheduler gives
  -- to other processes is not counted; 1 thread), medians of 'runs' pairs.
  for _ = 1, iters do train_step(x, y, "layers"); train_step(x, y, "hand") end
  local tl, th = {}, {}
  for r = 1, runs do
    for _, how in ipairs(r % 2 == 1 and {"layers", "hand"} or {"hand", "layers"}) do
      local t0 = os.clock()
      for _ = 1, iters do train_step(x, y, how) end
      local ms = (os.clock() - t0) / iters * 1e3
      if how == "layers" then tl[#tl + 1] = ms else th[#th + 1] = ms end
    end
  end
  local l, h = median(tl), median(th)
  print(string.format("layers %s overhead %.3f %.3f %+.1f", workload, l, h, (l / h - 1) * 100))
  return
end
for _ = 1, iters do step(x, y) end
local times = {}
for r = 1, runs do
  local t0 = mf.clock()
  for _ = 1, iters do step(x, y) end
  times[r] = (mf.clock() - t0) / iters * 1e3
end
print(string.format("layers %s %s %.3f", workload, mode, median(times)))
