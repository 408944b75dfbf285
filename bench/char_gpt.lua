-- char_gpt.lua MODE [FILE] — the char-GPT training step (scripts/models/gpt.lua:
-- nanoGPT's CPU recipe, 4 layers, 4 heads, 128 wide, block 64, batch 12,
-- vocab 65; AdamW with PyTorch's epsilon, clipping, the schedule) on random
-- tokens; MODE eager (a tape every step) or traced (one mf.trace graph).
-- With FILE (bench/torch_char_gpt.py wrote it) the initial weights and the
-- batches are PyTorch's. Prints "gpt MODE MS": the median over 5 rounds of
-- 20 steps of the wall time per step, after 5 warm-up steps (the first
-- traces the graph). Threads: MOONFLOW_NUM_THREADS and OPENBLAS_NUM_THREADS
-- (bench/char_gpt.sh sets both).
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
local step = gpt.trainer(model, {traced = mode == "traced"})
local it = 0
local function run(n)
  for _ = 1, n do
    local k = it % NBATCH + 1
    step(xs[k], ys[k], it):item()
    it = it + 1
  end
end
run(WARMUP)
local times = {}
for r = 1, ROUNDS do
  local t0 = mf.clock()
  run(STEPS)
  times[r] = (mf.clock() - t0) / STEPS * 1e3
end
table.sort(times)
print(string.format("gpt %s %.2f", mode, times[(ROUNDS + 1) // 2]))
