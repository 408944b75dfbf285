-- fail.lua HOW — run by tests/lua/test_dist.lua under mpirun -np 3: rank 1
-- fails while the others wait in a collective; the whole run must end
-- (never hang) with the failing rank's message. HOW:
--   raise      rank 1 raises a Lua error
--   interrupt  rank 1 gets SIGINT (Ctrl-C) in the middle of a loop
--   kill       rank 1 is killed with SIGKILL (no message of its own)
local how, rank = arg[1], mf.dist.rank()
mf.dist.barrier()
if rank == 1 then
  if how == "raise" then
    error("boom on rank 1")
  elseif how == "interrupt" then
    -- later, from the background: system() ignores SIGINT while it waits
    os.execute("(sleep 0.3; kill -INT $PPID) &")   -- $PPID: this process
    for _ = 1, 1e9 do local _ = mf.zeros{2} + 1 end
  elseif how == "kill" then
    os.execute("kill -9 $PPID")
  end
end
-- the others: a collective that rank 1 never joins
mf.dist.allreduce(mf.zeros{4})
print("UNREACHABLE rank " .. rank)
