-- eager_tape.lua MODE — the cost of the gradient tape from Lua (float32, medians).
-- Each mode runs in its own process (bench/run.sh), so the collector's state
-- left by one workload does not bias the next:
--   plain   "plain US":   a 1-element `a + b`, no tape;
--   taped   "taped US":   the same while a tape records it (1000 records per tape);
--   fwdbwd  "tape_fwdbwd US": forward + backward of y = reduce_sum((w*x + b)^2)
--           on 1-element tensors (tape creation, 4 ops, gradient for w and b).
local mode = arg[1] or "fwdbwd"
local runs = 7

local function median(xs)
  table.sort(xs)
  return xs[(#xs + 1) // 2]
end

local function time_us(iters, body)
  local times = {}
  for r = 1, runs do
    local t0 = os.clock()
    body(iters)
    times[r] = (os.clock() - t0) / iters * 1e6
  end
  return median(times)
end

local a = mf.fill({1}, 1.5)
local b = mf.fill({1}, 2.5)

if mode == "plain" then
  print(string.format("plain %.3f", time_us(400000, function(n)
    for _ = 1, n do local c = a + b end
  end)))
elseif mode == "taped" then
  print(string.format("taped %.3f", time_us(400000, function(n)
    for _ = 1, n // 1000 do
      local tape <close> = mf.GradientTape()
      tape:watch(a)
      for _ = 1, 1000 do local c = a + b end
    end
  end)))
else
  local w = mf.fill({1}, 0.5)
  local x = mf.fill({1}, 2.0)
  local bias = mf.fill({1}, 0.1)
  local sources = {w, bias}
  print(string.format("tape_fwdbwd %.3f", time_us(50000, function(n)
    for _ = 1, n do
      local tape <close> = mf.GradientTape()
      tape:watch(sources)
      local y = mf.reduce_sum((w * x + bias) ^ 2)
      local g = tape:gradient(y, sources)
    end
  end)))
end
