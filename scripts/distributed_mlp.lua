-- distributed_mlp.lua — data-parallel training over MPI (mf.dist): every
-- process trains the same MLP on its shard of the data, and
-- DistributedOptimizer averages the gradients over the processes at every
-- step (one fused MPI_Allreduce), so the weights stay identical everywhere.
-- Run:  mpirun -np 2 build/moonflow scripts/distributed_mlp.lua [epochs]
--       (as root, Open MPI also wants OMPI_ALLOW_RUN_AS_ROOT=1
--        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; on a laptop add --oversubscribe)
-- Without mpirun it is one process (rank 0 of 1) and trains on all the data.
local epochs = math.tointeger(tonumber(arg and arg[1] or 5))
assert(epochs and epochs >= 1, "usage: distributed_mlp.lua [epochs]: a positive integer")
local rank, size = mf.dist.rank(), mf.dist.size()

-- 1. The same data on every process (one seed): 3 classes of 8-feature points.
mf.random.seed(42)
local N, D, K, H, B = 600, 8, 3, 32, 20
local classes = {}
for i = 1, N do classes[i] = (i * 7) % K + 1 end                -- classes 1..K
local labels = mf.tensor(classes, "int64")
local centers = mf.random.normal({K, D}, {stddev = 2})
local x = mf.gather(centers, labels, 1) + mf.random.normal({N, D})
local ds = mf.data.Dataset.from_tensor_slices{x, labels}

-- 2. Each process its part: the same seeded shuffle everywhere, then every
--    size-th example; drop_remainder makes the parts equal (a remainder is
--    dropped), so every process runs the same number of steps.
local shard = ds:shuffle(N, {seed = 7}):shard(size, rank + 1, {drop_remainder = true})
local rows = 0
for _ in shard:iter() do rows = rows + 1 end
print(string.format("rank %d of %d: shard of %d rows (%d steps of %d per epoch)", rank, size,
                    rows, rows // B, B))

-- 3. The model. Initial values differ by rank on purpose: broadcast_variables
--    gives every process rank 0's, as training must start from one point.
local init = mf.initializers.he_normal{seed = 1 + rank}
local params = {mf.Variable(init{D, H}, {name = "hidden/w"}),
                mf.Variable(mf.zeros{H}, {name = "hidden/b"}),
                mf.Variable(init{H, K}, {name = "out/w"}), mf.Variable(mf.zeros{K}, {name = "out/b"})}
mf.dist.broadcast_variables(params)

local function loss_fn(xb, yb)
  local h = mf.nn.relu(mf.matmul(xb, params[1]) + params[2])
  local logits = mf.matmul(h, params[3]) + params[4]
  return mf.reduce_mean(mf.nn.sparse_softmax_cross_entropy_with_logits{labels = yb,
                                                                       logits = logits})
end

-- 4. Train: gradients averaged over the processes, then clipped, then applied.
local opt = mf.dist.DistributedOptimizer(mf.train.AdamOptimizer(0.01))
for epoch = 1, epochs do
  local total, steps = 0, 0
  for xb, yb in shard:batch(B, {drop_remainder = true}):iter() do
    local pairs, loss = opt:compute_gradients(function() return loss_fn(xb, yb) end)
    for i, p in ipairs(pairs) do pairs[i] = {mf.clip_by_norm(p[1], 5), p[2]} end
    opt:apply_gradients(pairs)
    total, steps = total + loss:item(), steps + 1
  end
  local mean = mf.dist.allreduce(mf.tensor{total / steps}):item()   -- over the processes
  if mf.dist.is_chief() then print(string.format("epoch %d: loss %.4f", epoch, mean)) end
end

-- 5. The final weights' checksum (a weighted sum in float64): the same on every rank.
local checksum = 0
for i, p in ipairs(params) do
  local v = mf.cast(mf.reshape(p, {-1}), "float64")
  local n = v.shape[1]
  checksum = checksum + mf.reduce_sum(v * mf.range(1, n + 1, 1, "float64")):item() * i
end
print(string.format("rank %d: final weights checksum %.17g", rank, checksum))
local all = mf.dist.allgather(mf.tensor({checksum}, "float64"))
if mf.dist.is_chief() then
  local same = mf.reduce_max(all):item() == mf.reduce_min(all):item()
  print(string.format("checksums identical on all %d ranks: %s", size, same and "yes" or "NO"))
end
