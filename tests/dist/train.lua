-- train.lua MODE K — run by tests/lua/test_dist.lua under mpirun (-np 2, 3).
-- Data-parallel Adam with clipping between compute and apply on a small
-- float64 regression MLP: each process takes its shard, K steps. Checks:
--   * after broadcast_variables every process starts from rank 0's values
--     (the initial values differ by rank on purpose);
--   * after K steps every process holds bit-identical weights and slots;
--   * they equal (allclose) a single-process run, in this process, over the
--     union of the shards' batches (same clip, same Adam);
--   * eager and graph mode three ways each: the allreduce overlapped with
--     the backward pass (the default buckets; bucket_bytes = 1, every
--     gradient started alone as soon as it is computed) and the blocking
--     fused buffer (overlap = false): the same bits. In graph mode the
--     overlapped allreduce is MPIAllreduceStart / MPIAllreduceWait nodes in
--     print(g), the blocking one an MPIAllreduce node.
-- Prints "PASS train MODE rank R" or raises (every process then ends).
local mode, K = arg[1] or "eager", tonumber(arg[2] or 3)
local rank, size = mf.dist.rank(), mf.dist.size()
local B, N, D, H = 2, 12 * size, 3, 4

mf.random.seed(7)   -- the same data on every process
local X = mf.random.normal({N, D}, {dtype = "float64"})
local Y = mf.random.normal({N, 1}, {dtype = "float64"})
local ds = mf.data.Dataset.from_tensor_slices{X, Y}

-- Initial values differ by rank: only broadcast_variables makes them equal.
local function initial(shape)
  return mf.random.normal(shape, {dtype = "float64", seed = 100 + rank})
end
local shapes = {{D, H}, {H}, {H, 1}, {1}}
local names = {"w1", "b1", "w2", "b2"}

local function forward(p, x)
  local h = mf.tanh(mf.matmul(x, p[1]) + p[2])
  return mf.matmul(h, p[3]) + p[4]
end
local function loss_of(p, x, y) return mf.reduce_mean(mf.square(forward(p, x) - y)) end

local function clip(pairs)
  local grads = {}
  for i, pr in ipairs(pairs) do grads[i] = pr[1] end
  local clipped = mf.clip_by_global_norm(grads, 0.5)
  for i, pr in ipairs(pairs) do pairs[i] = {clipped[i], pr[2]} end
  return pairs
end

local function max_diff(a, b) return mf.reduce_max(mf.abs(a - b)):item() end

-- Every process has the same bits: gather a row per process and compare.
local function check_identical(what, t)
  local rows = mf.dist.allgather(mf.reshape(t, {1, -1}))
  for r = 2, size do
    local d = max_diff(rows[r], rows[1])
    assert(d == 0, string.format("%s differs between rank 0 and rank %d by %g", what, r - 1, d))
  end
end

-- The single-process reference: batch k of the union = batch k of every shard.
local function union_batches()
  local its, out = {}, {}
  for r = 1, size do its[r] = ds:shard(size, r):batch(B):iter() end
  for k = 1, K do
    local xs, ys = {}, {}
    for r = 1, size do xs[r], ys[r] = its[r]() end
    out[k] = {mf.concat(xs, 1), mf.concat(ys, 1)}
  end
  return out
end

local function reference(start)
  local p = {}
  for i, v in ipairs(start) do p[i] = mf.Variable(v, {name = names[i]}) end
  local opt = mf.train.AdamOptimizer(0.05)
  for _, b in ipairs(union_batches()) do
    local pairs = opt:compute_gradients(function() return loss_of(p, b[1], b[2]) end)
    opt:apply_gradients(clip(pairs))
  end
  return p, opt
end

local function eager(options)
  local p = {}
  for i, s in ipairs(shapes) do p[i] = mf.Variable(initial(s), {name = names[i]}) end
  mf.dist.broadcast_variables(p)
  local start = {}
  for i, v in ipairs(p) do start[i] = mf.identity(v) + 0; check_identical(names[i], v) end
  local opt = mf.dist.DistributedOptimizer(mf.train.AdamOptimizer(0.05), options)
  local k = 0
  for x, y in ds:shard(size, rank + 1):batch(B):iter() do
    k = k + 1
    if k > K then break end
    local pairs = opt:compute_gradients(function() return loss_of(p, x, y) end)
    opt:apply_gradients(clip(pairs))
  end
  local values, slots = {}, {}
  for i, v in ipairs(p) do
    values[i] = mf.identity(v) + 0
    slots[i] = {opt:get_slot(v, "m"), opt:get_slot(v, "v")}
  end
  return start, values, slots, opt
end

local function graph(options)
  local g = mf.Graph()
  local p, train_op, x, y, opt
  g:as_default(function()
    x = mf.placeholder("float64", {-1, D}, "x")
    y = mf.placeholder("float64", {-1, 1}, "y")
    p = {}
    for i, s in ipairs(shapes) do p[i] = mf.Variable(initial(s), {name = names[i]}) end
    opt = mf.dist.DistributedOptimizer(mf.train.AdamOptimizer(0.05), options)
    train_op = opt:apply_gradients(clip(opt:compute_gradients(loss_of(p, x, y))))
  end)
  local text = tostring(g)
  if options.overlap == false then
    assert(text:find("MPIAllreduce%(") and not text:find("MPIAllreduceStart"),
           "print(g) shows no blocking MPIAllreduce node:\n" .. text)
  else
    local _, starts = text:gsub("= MPIAllreduceStart%(", "")
    local _, waits = text:gsub("= MPIAllreduceWait%(", "")
    local want = options.bucket_bytes == 1 and 4 or 1   -- each alone, or one 4 KiB bucket
    assert(starts == want and waits == want and not text:find("MPIAllreduce%("),
           string.format("print(g): %d starts, %d waits, want %d:\n%s", starts, waits, want, text))
  end
  local sess = mf.Session(g)
  sess:run(g:as_default(function() return mf.global_variables_initializer() end))
  mf.dist.broadcast_variables(p, {session = sess})
  local start = sess:run(p)
  local k = 0
  for xb, yb in ds:shard(size, rank + 1):batch(B):iter() do
    k = k + 1
    if k > K then break end
    sess:run(train_op, {[x] = xb, [y] = yb})
  end
  local values, slots = sess:run(p), {}
  for i, v in ipairs(p) do slots[i] = sess:run{opt:get_slot(v, "m"), opt:get_slot(v, "v")} end
  return start, values, slots, opt
end

local function check(start, values, slots)
  local ref, ref_opt = reference(start)
  for i = 1, #names do
    check_identical(names[i], values[i])
    check_identical(names[i] .. "/m", slots[i][1])
    check_identical(names[i] .. "/v", slots[i][2])
    local d = max_diff(values[i], ref[i])
    assert(d < 1e-10, string.format("%s: %g from the single-process run", names[i], d))
    d = max_diff(slots[i][2], ref_opt:get_slot(ref[i], "v"))
    assert(d < 1e-10, string.format("%s/v: %g from the single-process run", names[i], d))
    assert(max_diff(values[i], start[i]) > 0, names[i] .. " did not change")
  end
  return values
end

do
  local runs = {}
  for j, options in ipairs{{}, {bucket_bytes = 1}, {overlap = false}} do
    runs[j] = check((mode == "graph" and graph or eager)(options))
  end
  for j = 2, #runs do
    for i = 1, #names do
      assert(max_diff(runs[j][i], runs[1][i]) == 0, names[i] .. ": overlap changed the bits")
    end
  end
end
print(string.format("PASS train %s rank %d of %d", mode, rank, size))
