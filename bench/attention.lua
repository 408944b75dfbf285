-- attention.lua [RUNS] — mf.nn.scaled_dot_product_attention alone (issue 28):
-- q, k, v of shape (12, 4, T, 32) float32 (nanoGPT's CPU recipe: batch 12, 4
-- heads, head size 32), causal, for T = 64, 256 and 1024; wall time per call,
-- median of RUNS timed runs, printed as "key MS":
--   attn_fwd_T     the op alone (no tape);
--   attn_fwdbwd_T  the op and the gradients of sum(y * w) for q, k and v.
-- Threads: MOONFLOW_NUM_THREADS / OPENBLAS_NUM_THREADS (bench/attention.sh).
-- PyTorch's explicit masked-softmax path: bench/torch_attention.py.
local runs = tonumber(arg[1]) or 7
local sdpa = mf.nn.scaled_dot_product_attention
mf.random.seed(1)

local function median_ms(f, reps)
  for _ = 1, 2 do f() end   -- warm up (the allocator's cache, BLAS buffers)
  local times = {}
  for r = 1, runs do
    local t0 = mf.clock()
    for _ = 1, reps do f() end
    times[r] = (mf.clock() - t0) * 1e3 / reps
  end
  table.sort(times)
  return times[(runs + 1) // 2]
end

for _, T in ipairs{64, 256, 1024} do
  local shape = {12, 4, T, 32}
  local q, k, v, w = mf.random.normal(shape), mf.random.normal(shape), mf.random.normal(shape),
      mf.random.normal(shape)
  local reps = T == 1024 and 2 or 10
  local fwd = function() return sdpa(q, k, v, {causal = true}) end
  local fwdbwd = function()
    local tape = mf.GradientTape()
    tape:watch(q); tape:watch(k); tape:watch(v)
    local y = sdpa(q, k, v, {causal = true})
    return tape:gradient(mf.reduce_sum(y * w), {q, k, v})
  end
  print(string.format("attn_fwd_%d %.3f", T, median_ms(fwd, reps)))
  print(string.format("attn_fwdbwd_%d %.3f", T, median_ms(fwdbwd, reps)))
  collectgarbage()
end
