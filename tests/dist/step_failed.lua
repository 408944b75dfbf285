-- step_failed.lua — run by tests/lua/test_dist.lua under mpirun (-np 2, 3):
-- a step that fails on one process alone, caught by pcall (issue #35 H2).
-- Rank 1's loss raises in step 2: every process must fail step 2 (the
-- others' error names rank 1 and its message), so step 3 averages step 3's
-- gradients everywhere: the weights stay identical, equal to the run where
-- step 2 never happened. Then a step failing on every process at once, and
-- the same with overlap = false. Prints "PASS step_failed RANK".
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
mf.dist.barrier()
print("PASS step_failed " .. rank)
