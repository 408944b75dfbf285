-- ends.lua HOW — run by tests/lua/test_dist.lua under mpirun (-np 2, 3):
-- a process that ends its script tells the others (issue #35 H1, #27).
--   end       the last rank ends its script while the others make an
--             allreduce it never makes: they raise (never wait forever)
--             "rank R ended its script while rank 0 made collective #N",
--             and every later collective raises at once
--   os.exit   the same, the last rank calling os.exit(0)
--   all_exit  every rank calls os.exit(0) after a collective: MPI ends
--             properly (no "exiting improperly", exit status 0)
-- The waiting ranks print "PASS ends RANK"; the last one prints "LEFT".
local how, rank, size = arg[1], mf.dist.rank(), mf.dist.size()
mf.dist.barrier()
if how == "all_exit" then
  assert(mf.dist.allreduce(mf.tensor{1}, {op = "sum"}):item() == size)
  print("PASS ends " .. rank)
  io.stdout:flush()
  os.exit(0)
end
local last = size - 1
if rank == last then
  print("LEFT " .. rank)
  io.stdout:flush()
  if how == "os.exit" then os.exit(0) end
  return
end
local ok, err = pcall(mf.dist.allreduce, mf.zeros{4})
assert(not ok, "the allreduce without rank " .. last .. " returned")
local want = string.format("allreduce: rank %d ended its script while rank 0 made collective #2, "
                           .. "allreduce(mean) float32 (4,); no collective can complete any more",
                           last)
assert(err:find(want, 1, true), err)
-- the run cannot make collectives any more: later ones raise at once
ok, err = pcall(mf.dist.barrier)
assert(not ok and err:find("barrier: a process of the run has ended its script", 1, true), err)
ok, err = pcall(mf.dist.allreduce, mf.zeros{4}, {check = false})
assert(not ok and err:find("allreduce: a process of the run has ended its script", 1, true), err)
print("PASS ends " .. rank)
