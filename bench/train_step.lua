-- train_step.lua MODEL MODE [RUNS] — wall time of one training step, median
-- of RUNS timed runs (each several steps), printed as "train MODEL MODE MS".
--   MODEL  mlp: 784-256-10, batch 64, relu, softmax cross-entropy, plain SGD
--          cnn: conv 1->32 3x3 SAME, relu, max_pool 2, conv 32->64 3x3 SAME,
--               relu, max_pool 2, dense 3136->10; batch 32, 28x28x1 NHWC
--   MODE   eager: opt:minimize(loss_fn) (a tape and the update, every step)
--          graph: one sess:run(train_op) of a graph built once
-- Threads: OPENBLAS_NUM_THREADS (bench/train_step.sh sets it). The same
-- workloads in PyTorch: bench/torch_train_step.py.
local model_name = arg[1] or "mlp"
local mode = arg[2] or "eager"
local runs = tonumber(arg[3]) or 11

mf.random.seed(1)
local B = model_name == "mlp" and 64 or 32
local x = model_name == "mlp" and mf.random.uniform{B, 784}
    or mf.random.uniform{B, 28, 28, 1}
local labels = {}
for i = 1, B do labels[i] = (i * 7) % 10 + 1 end
local y = mf.tensor(labels, "int64")

-- Parameters with biases everywhere, as PyTorch's nn.Linear / nn.Conv2d have.
local init = mf.initializers.glorot_uniform{seed = 2}
local shapes = model_name == "mlp"
    and {{784, 256}, {256}, {256, 10}, {10}}
    or {{3, 3, 1, 32}, {32}, {3, 3, 32, 64}, {64}, {3136, 10}, {10}}

local function model(p, images)
  if model_name == "mlp" then
    local h = mf.nn.relu(mf.nn.bias_add(mf.matmul(images, p[1]), p[2]))
    return mf.nn.bias_add(mf.matmul(h, p[3]), p[4])
  end
  local h = mf.nn.relu(mf.nn.bias_add(mf.nn.conv2d(images, p[1], 1, "SAME"), p[2]))
  h = mf.nn.max_pool(h, 2, 2, "VALID")                         -- (B, 14, 14, 32)
  h = mf.nn.relu(mf.nn.bias_add(mf.nn.conv2d(h, p[3], 1, "SAME"), p[4]))
  h = mf.nn.max_pool(h, 2, 2, "VALID")                         -- (B, 7, 7, 64)
  h = mf.reshape(h, {B, 3136})
  return mf.nn.bias_add(mf.matmul(h, p[5]), p[6])
end

local function loss_of(p, images, lab)
  return mf.reduce_mean(mf.nn.sparse_softmax_cross_entropy_with_logits{
    labels = lab, logits = model(p, images)})
end

local function make_params()
  local p = {}
  for i, s in ipairs(shapes) do
    p[i] = mf.Variable(#s == 1 and mf.zeros(s) or init(s), {name = "p" .. i})
  end
  return p
end

-- step() runs one training step; built per mode.
local step
local opt = mf.train.GradientDescentOptimizer(0.01)
if mode == "eager" then
  local p = make_params()
  local function loss_fn() return loss_of(p, x, y) end
  step = function() opt:minimize(loss_fn, {var_list = p}) end
elseif mode == "graph" then
  local g = mf.Graph()
  local train_op, xs, ys
  g:as_default(function()
    xs = mf.placeholder("float32", x.shape, "x")
    ys = mf.placeholder("int64", {B}, "y")
    local p = make_params()
    train_op = opt:minimize(loss_of(p, xs, ys))
  end)
  local sess = mf.Session(g)
  g:as_default(function() sess:run(mf.global_variables_initializer()) end)
  local feeds = {[xs] = x, [ys] = y}
  step = function() sess:run(train_op, feeds) end
else
  error("train_step.lua: mode must be 'eager' or 'graph', got " .. tostring(mode))
end

-- Warm up (the caching allocator fills, OpenBLAS starts its threads), then
-- time runs of enough steps that one run lasts about 0.1 s.
local iters = model_name == "mlp" and 100 or 5
for _ = 1, iters do step() end
local times = {}
for r = 1, runs do
  local t0 = mf.clock()
  for _ = 1, iters do step() end
  times[r] = (mf.clock() - t0) / iters * 1e3
end
table.sort(times)
print(string.format("train %s %s %.3f", model_name, mode, times[(runs + 1) // 2]))
