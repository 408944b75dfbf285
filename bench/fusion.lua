-- fusion.lua [RUNS] — the GELU-MLP block of issue 29 (Dense 256, GELU, Dense
-- 256 on x of shape (16, 64, 256), float32), forward and backward (the
-- gradients of sum(y^2) for x and the four weights), wall time per step,
-- median of RUNS timed runs of 10 steps, printed as "key MS":
--   mlp_eager   a GradientTape around the layers, eagerly;
--   mlp_traced  the same step as one mf.trace'd function, fusion off;
--   mlp_fused   the same trace with fusion on (the default; help "fusion");
--   mlp_bound   the most any fusion could give this step: the unfused trace's op
--               time over its GEMMs' time (profiled). Fusion merges elementwise
--               passes; the GEMMs stay, so traced/fused cannot pass this ratio.
-- Threads: MOONFLOW_NUM_THREADS / OPENBLAS_NUM_THREADS (bench/fusion.sh).
-- PyTorch: bench/torch_fusion.py.
local runs = tonumber(arg[1]) or 7
local L = mf.layers
mf.random.seed(1)
local x = mf.random.normal{16, 64, 256}
local model = L.Sequential{L.Dense(256, {activation = "gelu"}), L.Dense(256)}
model(x)   -- builds the weights
local weights = model.trainable_variables

local function step(input)
  local tape = mf.GradientTape()
  tape:watch(input)
  local y = model(input)
  local loss = mf.reduce_sum(y * y)
  local grads = tape:gradient(loss, {input, weights[1], weights[2], weights[3], weights[4]})
  return loss, grads[1], grads[2], grads[3], grads[4], grads[5]
end

local function median_ms(f)
  for _ = 1, 3 do f(x) end   -- warm up (tracing, the allocator's cache)
  local times = {}
  for r = 1, runs do
    local t0 = mf.clock()
    for _ = 1, 10 do f(x) end
    times[r] = (mf.clock() - t0) * 1e3 / 10
  end
  table.sort(times)
  return times[(runs + 1) // 2]
end

print(string.format("mlp_eager %.3f", median_ms(step)))
print(string.format("mlp_traced %.3f", median_ms(mf.trace(step, {fusion = false}))))
print(string.format("mlp_fused %.3f", median_ms(mf.trace(step))))

local unfused = mf.trace(step, {fusion = false})
for _ = 1, 5 do unfused(x) end
mf.profiler.peak()   -- measured before the profile, not inside it
-- A first profile is thrown away: the first calls after tracing still
-- touch fresh result blocks (page faults inside whichever op gets them:
-- a 1 MB Mul read 0.6 ms instead of 0.05, two GEMMs 1.4 ms instead of
-- 0.7), which overstated the bound (1.13x where the steady state is ~1.08x).
mf.profile(function() for _ = 1, 10 do unfused(x) end end)
local prof = mf.profile(function() for _ = 1, 20 do unfused(x) end end)
local op_ms, gemm_ms = 0, 0
for _, row in ipairs(prof:rows()) do op_ms = op_ms + row.self_ms end
for _, g in ipairs(prof:gemms()) do gemm_ms = gemm_ms + (g.M and g.ms or 0) end
print(string.format("mlp_bound %.3f", op_ms / gemm_ms))
