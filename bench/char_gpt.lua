-- char_gpt.lua MODE [FILE] — the char-GPT training step (scripts/models/gpt.lua:
-- nanoGPT's CPU recipe, 4 layers, 4 heads, 128 wide, block 64, batch 12,
-- vocab 65; AdamW with PyTorch's epsilon, clipping, the schedule) on random
-- tokens; MODE eager (a tape every step) or traced (one mf.trace graph).
-- With FILE (bench/torch_char_gpt.py wrote it) the initial weights and the
-- batches are PyTorch's. Prints "gpt MODE MS": the median over 5 rounds of
-- 20 steps of the wall time per step, after 5 warm-up steps (the first
-- traces the graph). Threads: MOONFLOW_NUM_THREADS and OPENBLAS_NUM_THREADS
-- (bench/char_gpt.sh sets both). "char_gpt.lua profile [FILE]" instead
-- profiles 20 traced steps with mf.profile and prints the self time per op
-- type per step (bench/torch_char_gpt.py THREADS FILE profile: PyTorch's).
local gpt = dofile("scripts/models/gpt.lua")
local mode, file = arg[1] or "traced", arg[2]
local ROUNDS, STEPS, WARMUP, NBATCH = 5, 20, 5, 8

local model = gpt.new{vocab_size = 65}
local batches
if file then
  model:load(file)
  batches = mf.load(file).batches + 1
else
  batches = mf.random.uniform({NBATCH, 12, 65}, {minval = 1, maxval = 66, dtype = "int64",
                                                 seed = 28})
end
local xs, ys = {}, {}
for i = 1, NBATCH do
  xs[i], ys[i] = batches[i][{{}, {1, -2}}], batches[i][{{}, {2, -1}}]
end
local step = gpt.trainer(model, {traced = mode ~= "eager"})
local it = 0
local function run(n)
  for _ = 1, n do
    local k = it % NBATCH + 1
    step(xs[k], ys[k], it):item()
    it = it + 1
  end
end
run(WARMUP)

-- mf.profile of n steps: self ms per step of each op type, longest first.
local function profile(n)
  local by, total = {}, 0
  for _, r in ipairs(mf.profile(function() run(n) end):rows()) do
    by[r.type] = (by[r.type] or 0) + r.self_ms / n
    total = total + r.self_ms / n
  end
  local rows = {}
  for op, ms in pairs(by) do rows[#rows + 1] = {op, ms} end
  table.sort(rows, function(a, b) return a[2] > b[2] end)
  print(string.format("%-36s %9.3f ms  100.0%%", "total (self time per step)", total))
  for _, r in ipairs(rows) do
    if r[2] >= 0.005 * total then
      print(string.format("%-36s %9.3f ms  %5.1f%%", r[1], r[2], 100 * r[2] / total))
    end
  end
end
if mode == "profile" then return profile(STEPS) end

local times = {}
for r = 1, ROUNDS do
  local t0 = mf.clock()
  run(STEPS)
  times[r] = (mf.clock() - t0) / STEPS * 1e3
end
table.sort(times)
print(string.format("gpt %s %.2f", mode, times[(ROUNDS + 1) // 2]))
