-- optimizer.lua — one optimizer step on a 1M-parameter float32 Variable, per
-- optimizer, next to a plain `c = a + b` over 1M floats (the memory-bound
-- yardstick). Prints "name ms" lines: medians of several runs of many steps,
-- wall clock (mf.clock), one thread.
local N = 1000000
local RUNS, ITERS = 7, 40

local function median_ms(fn)
  for _ = 1, 3 do fn() end                -- warm the allocator's size classes
  local times = {}
  for r = 1, RUNS do
    local t0 = mf.clock()
    for _ = 1, ITERS do fn() end
    times[r] = (mf.clock() - t0) / ITERS * 1e3
  end
  table.sort(times)
  return times[(RUNS + 1) // 2]
end

local a = mf.random.uniform({N}, {seed = 1})
local b = mf.random.uniform({N}, {seed = 2})
print(string.format("add %.4f", median_ms(function() local c = a + b end)))

local g = mf.random.normal({N}, {stddev = 1e-3, seed = 3})
local opts = {
  {"sgd", mf.train.GradientDescentOptimizer(1e-3)},
  {"momentum", mf.train.MomentumOptimizer(1e-3, 0.9)},
  {"adagrad", mf.train.AdagradOptimizer(1e-3)},
  {"rmsprop", mf.train.RMSPropOptimizer(1e-3)},
  {"adam", mf.train.AdamOptimizer(1e-3)},
}
for _, o in ipairs(opts) do
  local w = mf.Variable(mf.random.normal({N}, {seed = 4}), {name = "w"})
  local pairs_ = {{g, w}}
  print(string.format("%s %.4f", o[1], median_ms(function() o[2]:apply_gradients(pairs_) end)))
end
