-- eager_tape.lua — the cost of the gradient tape from Lua (float32, medians):
--   "tape_add US": extra cost per op of a 1-element `a + b` while a tape
--                  records it (taped time minus untaped time);
--   "tape_add_total US": the taped `a + b` itself;
--   "tape_fwdbwd US": forward + backward of y = reduce_sum((w*x + b)^2) on
--                  1-element tensors (tape creation, 4 ops, gradient for w and b).
local runs = 7

local function median(xs)
  table.sort(xs)
  return xs[(#xs + 1) // 2]
end

-- Time per iteration in microseconds of body(iters), median of 'nruns'.
local function time_us(iters, body, nruns)
  local times = {}
  for r = 1, nruns or runs do
    collectgarbage()
    local t0 = os.clock()
    body(iters)
    times[r] = (os.clock() - t0) / iters * 1e6
  end
  return median(times)
end

local a = mf.fill({1}, 1.5)
local b = mf.fill({1}, 2.5)
local chunk = 1000 -- records per tape, so the tape stays small

-- Plain and taped runs alternate so machine noise hits both alike; the
-- extra cost is the median of the per-run differences.
local function plain(n)
  for _ = 1, n do local c = a + b end
end
local function taped(n)
  for _ = 1, n // chunk do
    local tape <close> = mf.GradientTape()
    tape:watch(a)
    for _ = 1, chunk do local c = a + b end
  end
end
local diffs, totals = {}, {}
for r = 1, 2 * runs + 1 do
  local p = time_us(200000, plain, 1)
  local t = time_us(200000, taped, 1)
  diffs[r], totals[r] = t - p, t
end
local taped_us = median(totals)
print(string.format("tape_add %.3f", median(diffs)))
print(string.format("tape_add_total %.3f", taped_us))

local w = mf.fill({1}, 0.5)
local x = mf.fill({1}, 2.0)
local bias = mf.fill({1}, 0.1)
local sources = {w, bias}
local fb = time_us(50000, function(n)
  for _ = 1, n do
    local tape <close> = mf.GradientTape()
    tape:watch(sources)
    local y = mf.reduce_sum((w * x + bias) ^ 2)
    local g = tape:gradient(y, sources)
  end
end)
print(string.format("tape_fwdbwd %.3f", fb))
