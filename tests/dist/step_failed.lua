-- step_failed.lua — run by tests/lua/test_dist.lua under mpirun (-np 2, 3):
-- a step that fails on one process alone, caught by pcall (issue #35 H2).
-- Rank 1's loss raises in step 2: every process must fail step 2 (the
-- others' error names rank 1 and its message), so step 3 averages step 3's
-- gradients everywhere: the weights stay identical, equal to the run where
-- step 2 never happened. Then a step failing on every process at once, and
-- the same with overlap = false; then graph mode, where rank 1's run fails
-- in a node before the allreduce. Prints "PASS step_failed RANK".
local rank, size = mf.dist.rank(), mf.dist.size()

local function run(options, fails)
  local w = mf.Variable(mf.zeros{2}, {name = "w"})
  local opt = mf.dist.DistributedOptimizer(mf.train.GradientDescentOptimizer(1), options)
  local errors = {}
  for step = 1, 4 do
    local ok, err = pcall(opt.minimize, opt, function()
      if fails(step) then error("bad batch " .. step) end
      -- the gradient of step k on rank r is -(k + r): a mix of steps shows
      return -mf.reduce_sum(w * (step + rank))
    end)
    errors[step] = not ok and err or nil
    -- same weights everywhere after every step
    local all = mf.dist.allgather(mf.reshape(w, {1, 2}))
    assert(mf.reduce_max(mf.abs(all - all[1])):item() == 0,
           string.format("rank %d, step %d: the weights differ between ranks: %s", rank, step,
                         tostring(all)))
  end
  return w, errors
end

local function mean_rank() return (size - 1) / 2 end
-- the steps that did happen everywhere: 1, 3 and 4
local want = (1 + mean_rank()) + (3 + mean_rank()) + (4 + mean_rank())
for _, options in ipairs{{}, {overlap = false}} do
  local w, errors = run(options, function(step) return rank == 1 and step == 2 end)
  assert(math.abs(w:totable()[1] - want) < 1e-5, string.format("w = %g, want %g", w:totable()[1], want))
  assert(not errors[1] and not errors[3] and not errors[4], tostring(errors[3] or errors[4]))
  if rank == 1 then
    assert(errors[2]:find("bad batch 2", 1, true), errors[2])
  else
    assert(errors[2]:find("rank 1 failed its step (minimize: the loss function raised an error: ",
                          1, true) and errors[2]:find("bad batch 2) while rank 0 made collective #",
                                                      1, true), errors[2])
  end
  -- every rank fails step 2: no one goes on a step ahead either
  w, errors = run(options, function(step) return step == 2 end)
  assert(math.abs(w:totable()[1] - want) < 1e-5, string.format("w = %g, want %g", w:totable()[1], want))
  assert(errors[2]:find("bad batch 2", 1, true), errors[2])
end
-- Graph mode: rank 1's run of step 2 fails, in a node before the
-- allreduce (its batch cannot be reshaped) or in its feed (a wrong shape);
-- the others' run fails at the allreduce, naming rank 1 and its error,
-- and step 3 is step 3 everywhere.
for _, case in ipairs{{{}, "node"}, {{overlap = false}, "node"}, {{}, "feed"}} do
  local options, how = case[1], case[2]
  local g = mf.Graph()
  local x, w, train_op
  g:as_default(function()
    x = mf.placeholder("float32", {-1, 2}, "x")
    w = mf.Variable(mf.zeros{2, 1}, {name = "w"})
    local opt = mf.dist.DistributedOptimizer(mf.train.GradientDescentOptimizer(1), options)
    train_op = opt:minimize(-mf.reduce_sum(mf.matmul(mf.reshape(x, {1, 2}), w)))
  end)
  local sess = mf.Session(g)
  sess:run(g:as_default(function() return mf.global_variables_initializer() end))
  local errors = {}
  for step = 1, 4 do
    local bad = rank == 1 and step == 2
    local feed = mf.fill(bad and (how == "node" and {2, 2} or {1, 3}) or {1, 2}, step + rank)
    local ok, err = pcall(sess.run, sess, train_op, {[x] = feed})
    errors[step] = not ok and err or nil
    local all = mf.dist.allgather(mf.reshape(sess:run(w), {1, 2}))
    assert(mf.reduce_max(mf.abs(all - all[1])):item() == 0,
           string.format("graph, rank %d, step %d: the weights differ: %s", rank, step,
                         tostring(all)))
  end
  local got = sess:run(w):totable()[1][1]
  assert(math.abs(got - want) < 1e-5, string.format("graph: w = %g, want %g", got, want))
  assert(not errors[1] and not errors[3] and not errors[4], tostring(errors[3] or errors[4]))
  local why = how == "node" and "Reshape" or "the value fed to placeholder 'x:0' has shape (1,3)"
  assert(errors[2]:find(why, 1, true), errors[2])
  if rank ~= 1 then assert(errors[2]:find("rank 1 failed its step (", 1, true), errors[2]) end
end
mf.dist.barrier()
print("PASS step_failed " .. rank)
