-- dist_comm.lua [REPS] — MPI_Allreduce (sum, float32, signature check off)
-- of 8 B to 64 MiB between the processes of this run; rank 0 prints
--   allreduce BYTES MEDIAN_US MIN_US
-- (the minimum is the machine's capability; the median shows what the
-- other programs sharing the cores leave of it)
-- for bench/dist.sh to fit the latency and bandwidth of the ring model.
local reps = tonumber(arg[1]) or 21
for _, bytes in ipairs{8, 1024, 65536, 1 << 20, 1 << 22, 1 << 24, 1 << 26} do
  local t = mf.zeros{bytes // 4}
  local n = bytes >= (1 << 24) and 5 or reps
  local times = {}
  mf.dist.allreduce(t, {op = "sum", check = false})
  for r = 1, n do
    mf.dist.barrier({check = false})
    local t0 = mf.clock()
    mf.dist.allreduce(t, {op = "sum", check = false})
    times[r] = (mf.clock() - t0) * 1e6
  end
  table.sort(times)
  if mf.dist.rank() == 0 then
    print(string.format("allreduce %d %.2f %.2f", bytes, times[(n + 1) // 2], times[1]))
  end
end
