-- eager_add.lua — per-op cost of a small eager `a + b` from Lua (float32),
-- median of several runs; prints one line per size: "add N us".
local sizes = {1, 1000}
local runs = 7
for _, n in ipairs(sizes) do
  local a = mf.fill({n}, 1.5)
  local b = mf.fill({n}, 2.5)
  local iters = n == 1 and 2000000 or 500000
  local times = {}
  for r = 1, runs do
    local t0 = os.clock()
    for i = 1, iters do local c = a + b end
    times[r] = (os.clock() - t0) / iters * 1e6
  end
  table.sort(times)
  print(string.format("add %d %.3f", n, times[(runs + 1) // 2]))
end
