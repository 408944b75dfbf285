-- collectives.lua — run by tests/lua/test_dist.lua under mpirun (-np 2, 3):
-- allreduce (sum, mean, max, min), broadcast and allgather for every dtype,
-- on empty, scalar and large tensors, with values checked against the
-- formula each process can compute; then mismatches (shape, dtype, order of
-- collectives, a graph's run-time shape) raise the same error on every
-- process, naming both sides, and the processes go on working afterwards. Prints "PASS collectives R".
local rank, size = mf.dist.rank(), mf.dist.size()

local function same(got, want, what)
  assert(got.dtype == want.dtype, what .. ": dtype " .. got.dtype .. " ~= " .. want.dtype)
  assert(#got.shape == #want.shape, what .. ": rank differs")
  for i = 1, #want.shape do assert(got.shape[i] == want.shape[i], what .. ": shape differs") end
  if mf.size(want):item() > 0 then
    assert(mf.reduce_min(mf.cast(mf.equal(got, want), "int32")):item() == 1,
           what .. ": values differ")
  end
end

-- Values of process r: r + k, so the sum over processes is known.
local function of_rank(r, dtype, shape)
  if dtype == "bool" then return mf.fill(shape, r % 2 == 1, "bool") end
  return mf.fill(shape, r + 1, dtype) + mf.cast(mf.reshape(
    mf.range(0, mf.size(mf.zeros(shape)):item()), shape), dtype)
end

local function sum_of(dtype, shape)
  local s = of_rank(0, dtype, shape)
  for r = 1, size - 1 do
    local x = of_rank(r, dtype, shape)
    s = dtype == "bool" and mf.logical_or(s, x) or s + x
  end
  return s
end

for _, dtype in ipairs{"float32", "float64", "int32", "int64", "bool"} do
  for _, shape in ipairs{{3, 2}, {}, {0}, {0, 4}} do
    local what = dtype .. " (" .. table.concat(shape, ",") .. ")"
    local mine = of_rank(rank, dtype, shape)
    same(mf.dist.allreduce(mine, {op = "sum"}), sum_of(dtype, shape), "sum " .. what)
    local max = dtype == "bool" and sum_of(dtype, shape) or of_rank(size - 1, dtype, shape)
    same(mf.dist.allreduce(mine, {op = "max"}), max, "max " .. what)
    if dtype ~= "bool" then
      same(mf.dist.allreduce(mine, {op = "min"}), of_rank(0, dtype, shape), "min " .. what)
    end
    if dtype:find("float") then
      same(mf.dist.allreduce(mine), sum_of(dtype, shape) / size, "mean " .. what)
    else
      local ok, err = pcall(mf.dist.allreduce, mine)
      assert(not ok and err:find("op 'mean' needs a float32 or float64 tensor, got " .. dtype,
                                 1, true), "mean of " .. what .. ": " .. tostring(err))
    end
    same(mf.dist.broadcast(mine, {root = size - 1}), of_rank(size - 1, dtype, shape),
         "broadcast " .. what)
    local rows = {}
    for r = 0, size - 1 do
      rows[#rows + 1] = #shape == 0 and mf.reshape(of_rank(r, dtype, shape), {1})
                        or of_rank(r, dtype, shape)
    end
    same(mf.dist.allgather(mine), mf.concat(rows, 1), "allgather " .. what)
  end
end

-- allgather: the first dimension may differ between processes.
local mine = mf.fill({rank + 1, 2}, rank, "int64")
local gathered = mf.dist.allgather(mine)
assert(gathered.shape[1] == size * (size + 1) // 2 and gathered.shape[2] == 2, "allgather rows")
assert(gathered[gathered.shape[1]][1] == size - 1 and gathered[1][1] == 0, "allgather values")

-- Large: 2^23 + 3 floats (32 MiB), as one buffer.
local n = (1 << 23) + 3
local big = mf.dist.allreduce(mf.fill({n}, rank + 1, "float32"), {op = "sum"})
assert(mf.reduce_min(big):item() == size * (size + 1) / 2 and big.shape[1] == n, "large sum")
local bigb = mf.dist.broadcast(mf.fill({n}, rank, "float64"), {root = 1})
assert(mf.reduce_max(bigb):item() == 1 and mf.reduce_min(bigb):item() == 1, "large broadcast")

-- Mismatches: every process raises the same error, naming both sides.
local function mismatch(f, want)
  local ok, err = pcall(f)
  assert(not ok, "a mismatch did not raise")
  assert(err:find("do not match", 1, true), err)
  for _, w in ipairs(want) do assert(err:find(w, 1, true), "'" .. w .. "' not in: " .. err) end
  -- the same description on every process (each names its own call first)
  local lens = mf.dist.allgather(mf.tensor({#err:match("do not match.*")}, "int64"))
  assert(mf.reduce_max(lens):item() == mf.reduce_min(lens):item(), "messages differ")
end
mismatch(function() return mf.dist.allreduce(mf.zeros{rank == 1 and 3 or 2}) end,
         {"rank 0 has allreduce(mean) float32 (2,)", "rank 1 has allreduce(mean) float32 (3,)"})
mismatch(function()
  return mf.dist.allreduce(mf.zeros({2}, rank == 1 and "float64" or "float32"))
end,
         {"rank 0 has allreduce(mean) float32 (2,)", "rank 1 has allreduce(mean) float64 (2,)"})
mismatch(function()   -- order: rank 1 broadcasts while the others allreduce
  if rank == 1 then return mf.dist.broadcast(mf.zeros{2}) end
  return mf.dist.allreduce(mf.zeros{2})
end, {"rank 0 has allreduce(mean) float32 (2,)", "rank 1 has broadcast(root=0) float32 (2,)"})
mismatch(function() if rank == 1 then mf.dist.barrier() else mf.dist.allgather(mf.zeros{2}) end end,
         {"rank 0 has allgather float32 (?)", "rank 1 has barrier"})
-- graph mode: shapes known only at run time differ (issue #35 W2: one
-- process got MPI_ERR_TRUNCATE, the other uninitialised values)
do
  local g = mf.Graph()
  local x, y
  g:as_default(function()
    x = mf.placeholder("float32", {-1}, "x")
    y = mf.dist.allreduce(x, {op = "sum"})
  end)
  local sess = mf.Session(g)
  mismatch(function() return sess:run(y, {[x] = mf.ones{rank == 1 and 6 or 4}}) end,
           {"rank 0 has allreduce(sum) float32 (?,) with 4 elements; rank 1 has 6 elements"})
  same(sess:run(y, {[x] = mf.ones{3}}), mf.fill({3}, size, "float32"), "graph allreduce")
end
-- DistributedOptimizer: other variable shapes on rank 1
local w = mf.Variable(mf.zeros{rank == 1 and 3 or 2, 2}, {name = "w"})
local opt = mf.dist.DistributedOptimizer(mf.train.GradientDescentOptimizer(0.1))
mismatch(function() opt:minimize(function() return mf.reduce_sum(w * w) end) end,
         {"DistributedOptimizer", "rank 0 has gradients (bucket 1): w float32 (2,2)",
          "rank 1 has gradients (bucket 1): w float32 (3,2)"})
-- the same without overlap (one fused buffer after the backward pass)
opt = mf.dist.DistributedOptimizer(mf.train.GradientDescentOptimizer(0.1), {overlap = false})
mismatch(function() opt:minimize(function() return mf.reduce_sum(w * w) end) end,
         {"DistributedOptimizer", "rank 0 has gradients (buffer 1 of 1): w float32 (2,2)",
          "rank 1 has gradients (buffer 1 of 1): w float32 (3,2)"})

-- Still in step after the errors.
local s = mf.dist.allreduce(mf.tensor{1}, {op = "sum"})
assert(s:item() == size)
-- Options: check = false still reduces; bad options are clear errors.
assert(mf.dist.allreduce(mf.tensor{1}, {op = "sum", check = false}):item() == size)
local ok, err = pcall(mf.dist.allreduce, mf.tensor{1}, {op = "avg"})
assert(not ok and err:find('op must be "mean", "sum", "max" or "min", got avg', 1, true), err)
ok, err = pcall(mf.dist.broadcast, mf.tensor{1}, {root = size})
assert(not ok and err:find("root must be a rank in 0.." .. (size - 1), 1, true), err)
mf.dist.barrier()
print("PASS collectives " .. rank)
