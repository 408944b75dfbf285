-- fit.lua MODE — run by tests/lua/test_dist.lua under mpirun (-np 2, 3):
-- model:fit with mf.dist.DistributedOptimizer averages the gradients it
-- hands to apply_gradients (issue #35 W1), as Horovod's Keras
-- DistributedOptimizer does: with each rank's own data every process ends
-- with the same weights, equal to one process fitting the union of the
-- shards' batches with the plain optimizer. MODE: trace (fit's default)
-- or eager. Prints "PASS fit MODE RANK".
local mode, rank, size = arg[1], mf.dist.rank(), mf.dist.size()
local B, steps = 4, 3

local function model()
  mf.random.seed(3)   -- the same initial weights everywhere
  local m = mf.layers.Sequential{mf.layers.Dense(3, {input_shape = {4}, activation = "tanh"}),
                                 mf.layers.Dense(1)}
  m:build{-1, 4}
  return m
end

local function data(r)
  return mf.random.normal({B * steps, 4}, {seed = 10 + r, dtype = "float32"}),
         mf.random.normal({B * steps, 1}, {seed = 20 + r, dtype = "float32"})
end

local trace = mode ~= "eager"
local m = model()
local x, y = data(rank)
m:fit(mf.data.Dataset.from_tensor_slices{x, y}:batch(B),
      {loss = "mse", optimizer = mf.dist.DistributedOptimizer(mf.train.GradientDescentOptimizer(0.5)),
       epochs = 2, verbose = 0, trace = trace})

-- one process, batch k = the union of every rank's batch k (equal sizes:
-- the mean loss over it has the mean of the ranks' gradients)
local xs, ys = {}, {}
for r = 0, size - 1 do
  local xr, yr = data(r)
  xs[r + 1], ys[r + 1] = mf.reshape(xr, {steps, B, 4}), mf.reshape(yr, {steps, B, 1})
end
local ux = mf.reshape(mf.concat(xs, 2), {steps * B * size, 4})
local uy = mf.reshape(mf.concat(ys, 2), {steps * B * size, 1})
local ref = model()
ref:fit(mf.data.Dataset.from_tensor_slices{ux, uy}:batch(B * size),
        {loss = "mse", optimizer = mf.train.GradientDescentOptimizer(0.5), epochs = 2,
         verbose = 0, trace = trace})

for i, v in ipairs(m.trainable_variables) do
  local all = mf.dist.allgather(mf.reshape(v, {1, -1}))
  local spread = mf.reduce_max(mf.abs(all - all[1])):item()
  assert(spread == 0, string.format("variable %d differs between ranks by %g", i, spread))
  local d = mf.reduce_max(mf.abs(v - ref.trainable_variables[i])):item()
  assert(d < 1e-5, string.format("variable %d: %g from the one-process fit", i, d))
  assert(mf.reduce_max(mf.abs(v - model().trainable_variables[i])):item() > 1e-3,
         "variable " .. i .. " did not train")
end
print(string.format("PASS fit %s %d", mode, rank))
