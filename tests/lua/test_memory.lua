-- test_memory.lua — engine memory is known to Lua's collector: eager loops
-- stay bounded without collectgarbage().
local T = dofile("tests/lua/harness.lua")

local function rss_kb()
  local f = io.open("/proc/self/statm")
  if not f then return 0 end
  local _, resident = f:read("n", "n")
  f:close()
  return resident * 4
end

T.test("10,000 adds of 1000x1000 stay bounded", function()
  local a = mf.ones{1000, 1000}
  local b = mf.ones{1000, 1000}
  local c
  for i = 1, 200 do c = a + b end
  local before = rss_kb()
  local peak_in_use = 0
  for i = 1, 10000 do
    c = a + b
    local m = mf.memory().in_use
    if m > peak_in_use then peak_in_use = m end
  end
  local after = rss_kb()
  T.eq(c[1][1], 2)
  -- each result is 4 MB; without GC pressure 10,000 of them would be 40 GB
  T.ok(peak_in_use < 1024 * 1024 * 1024,
       string.format("engine memory peaked at %d MB", peak_in_use // (1024 * 1024)))
  T.ok(after - before < 512 * 1024,
       string.format("resident memory grew by %d MB", (after - before) // 1024))
end)

T.test("small tensors are reclaimed by the generational collector", function()
  local a, b = mf.tensor{1}, mf.tensor{2}
  for i = 1, 1000 do local c = a + b end
  local before = mf.memory().tensors
  for i = 1, 200000 do local c = a + b end
  T.ok(mf.memory().tensors - before < 50000, "live tensors grew by " ..
       (mf.memory().tensors - before))
end)

T.test("collected tensors leave no live tensors behind", function()
  collectgarbage()
  collectgarbage()
  local base = mf.memory().tensors
  do
    local x = mf.ones{10, 10}
    local y = x * 2 + 1
    local z = y[1]
  end
  collectgarbage()
  collectgarbage()
  T.eq(mf.memory().tensors, base)
end)

T.done()
