-- more_ops.lua — the ops of issue 17's "More ops" list on mid-sized float32
-- inputs, eager, one thread: einsum as a batched matmul (next to mf.matmul on
-- the same operands: the decomposition's overhead), top_k, sort, argsort,
-- cumprod, gather_nd. Prints "name ms" lines: medians of 7 runs of 20 calls
-- (mf.clock). bench/torch_more_ops.py runs the same in PyTorch.
local RUNS, ITERS = 7, 20

local function median_ms(fn)
  for _ = 1, 3 do fn() end
  local times = {}
  for r = 1, RUNS do
    local t0 = mf.clock()
    for _ = 1, ITERS do fn() end
    times[r] = (mf.clock() - t0) / ITERS * 1e3
  end
  table.sort(times)
  return times[(RUNS + 1) // 2]
end

local a = mf.random.normal({32, 64, 64}, {seed = 1})
local b = mf.random.normal({32, 64, 64}, {seed = 2})
local x = mf.random.normal({256, 1024}, {seed = 3})
local p = mf.random.uniform({256, 1024}, {minval = 0.99, maxval = 1.01, seed = 4})
local ix = mf.random.uniform({4096, 2}, {minval = 1, maxval = 257, dtype = "int64", seed = 5})

local rows = {
  {"einsum_bmm", function() return mf.einsum("bij,bjk->bik", a, b) end},
  {"matmul_bmm", function() return mf.matmul(a, b) end},
  {"einsum_bji", function() return mf.einsum("bij,bkj->bik", a, b) end},
  {"top_k", function() return mf.top_k(x, 10) end},
  {"sort", function() return mf.sort(x) end},
  {"argsort", function() return mf.argsort(x) end},
  {"cumprod", function() return mf.cumprod(p, 2) end},
  {"gather_nd", function() return mf.gather_nd(x, ix) end},
}
for _, r in ipairs(rows) do
  print(string.format("%s %.4f", r[1], median_ms(r[2])))
end
