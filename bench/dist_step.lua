-- dist_step.lua MODEL [STEPS [RUNS [BATCH [OVERLAP [EXEC]]]]] — the training
-- step of bench/train_step.lua (mlp: 784-256-10, batch 64; cnn: two convs,
-- batch 32) with mf.dist.DistributedOptimizer(GradientDescent), run by
-- bench/dist.sh with 1 or more processes (weak scaling: each process its
-- own batch). OVERLAP: "on" (the default: the allreduce overlapped with
-- the backward pass) or "off" (one blocking fused allreduce after it).
-- EXEC: "eager" (the default) or "graph" (the step built once into a graph
-- and run by a Session: overlapped, MPIAllreduceStart/Wait nodes).
-- Rank 0 prints
--   dist MODEL SIZE THREADS BATCH STEP_MS MIN_STEP_MS ALLREDUCE_MS BYTES OVERLAP EXEC
-- STEP_MS: median over RUNS of the slowest process's time per step (and
-- the fastest run's, MIN_STEP_MS);
-- ALLREDUCE_MS and BYTES: per step, from a profiled run: the time the step
-- spends in the allreduce (MPIAllreduce, MPIAllreduceStart and
-- MPIAllreduceWait rows: with overlap, only what the backward pass did not
-- hide), and the bytes.
local model_name = arg[1] or "mlp"
local steps = tonumber(arg[2]) or 20
local runs = tonumber(arg[3]) or 7
local rank, size = mf.dist.rank(), mf.dist.size()

mf.random.seed(1 + rank)   -- each process its own batch
local B = tonumber(arg[4]) or (model_name == "mlp" and 64 or 32)
local overlap = (arg[5] or "on") == "on"
local exec = arg[6] or "eager"
local x = model_name == "mlp" and mf.random.uniform{B, 784} or mf.random.uniform{B, 28, 28, 1}
local labels = {}
for i = 1, B do labels[i] = (i * 7 + rank) % 10 + 1 end
local y = mf.tensor(labels, "int64")

local init = mf.initializers.glorot_uniform{seed = 2}
local shapes = model_name == "mlp" and {{784, 256}, {256}, {256, 10}, {10}}
    or {{3, 3, 1, 32}, {32}, {3, 3, 32, 64}, {64}, {3136, 10}, {10}}
local p = {}

local function model(images)
  if model_name == "mlp" then
    local h = mf.nn.relu(mf.nn.bias_add(mf.matmul(images, p[1]), p[2]))
    return mf.nn.bias_add(mf.matmul(h, p[3]), p[4])
  end
  local h = mf.nn.relu(mf.nn.bias_add(mf.nn.conv2d(images, p[1], 1, "SAME"), p[2]))
  h = mf.nn.max_pool(h, 2, 2, "VALID")
  h = mf.nn.relu(mf.nn.bias_add(mf.nn.conv2d(h, p[3], 1, "SAME"), p[4]))
  h = mf.nn.max_pool(h, 2, 2, "VALID")
  return mf.nn.bias_add(mf.matmul(mf.reshape(h, {B, 3136}), p[5]), p[6])
end
local function loss_fn()
  return mf.reduce_mean(mf.nn.sparse_softmax_cross_entropy_with_logits{labels = y,
                                                                       logits = model(x)})
end
local function variables()
  for i, s in ipairs(shapes) do p[i] = mf.Variable(#s == 1 and mf.zeros(s) or init(s)) end
end
local function optimizer()
  return mf.dist.DistributedOptimizer(mf.train.GradientDescentOptimizer(0.01),
                                      {overlap = overlap})
end

local step
if exec == "graph" then
  local g, train_op = mf.Graph()
  g:as_default(function()
    variables()
    train_op = optimizer():minimize(loss_fn())
  end)
  local sess = mf.Session(g)
  sess:run(g:as_default(function() return mf.global_variables_initializer() end))
  mf.dist.broadcast_variables(p, {session = sess})
  step = function() sess:run(train_op) end
else
  variables()
  mf.dist.broadcast_variables(p)
  local opt = optimizer()
  step = function() opt:minimize(loss_fn, {var_list = p}) end
end
local function run()
  for _ = 1, steps do step() end
end
run()   -- warm up: slots, caches
local times = {}
for r = 1, runs do
  mf.dist.barrier()
  local t0 = mf.clock()
  run()
  local ms = (mf.clock() - t0) * 1e3 / steps
  times[r] = mf.dist.allreduce(mf.tensor({ms}, "float64"), {op = "max"}):item()
end
table.sort(times)
local prof = mf.profile(run)
local ar_ms, bytes = 0, 0
for _, row in ipairs(prof:rows()) do
  if row.type == "MPIAllreduce" or row.type == "MPIAllreduceStart"
      or row.type == "MPIAllreduceWait" then
    ar_ms, bytes = ar_ms + row.total_ms, bytes + row.bytes
  end
end
ar_ms = mf.dist.allreduce(mf.tensor({ar_ms / steps}, "float64")):item()
if rank == 0 then
  print(string.format("dist %s %d %s %d %.3f %.3f %.3f %d %s %s", model_name, size,
                      os.getenv("OPENBLAS_NUM_THREADS") or "?", B, times[(runs + 1) // 2],
                      times[1], size > 1 and ar_ms or 0, math.floor(bytes / steps),
                      overlap and "on" or "off", exec))
end
