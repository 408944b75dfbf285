-- test_gpt_parity.lua — scripts/models/gpt.lua (the model of scripts/char_gpt.lua and
-- the char-GPT bench) against nanoGPT in PyTorch 1.13: the same initial weights
-- (PyTorch's init, tests/lua/data/gpt_parity.safetensors) and batches give the
-- same losses for 20 training steps of train.py's loop (warm-up and cosine
-- rate, AdamW with PyTorch's epsilon placement and decay on the 2-D weights,
-- clip_grad_norm_ at 1.0) within 1e-5 relative (the issue asks 1e-4; they
-- agree to 3.3e-7), eagerly and inside mf.trace, and the same weights after
-- them (the check that catches TensorFlow's epsilon placement, whose losses
-- stay within 6e-5). tests/lua/data/gen_gpt_parity.py wrote the
-- file and printed tests/lua/data/gpt_parity.lua (a reduced config: 2 layers,
-- 4 heads, 32 wide, block 16, vocab 65, batch 4).
local T = dofile("tests/lua/harness.lua")
local gpt = dofile("scripts/models/gpt.lua")
local ref = dofile("tests/lua/data/gpt_parity.lua")
local FILE = "tests/lua/data/gpt_parity.safetensors"

-- The batches as 1-based (x, y) pairs of (batch, block) int64 ids.
local function batches()
  local b = mf.load(FILE).batches + 1
  local out = {}
  for it = 1, b.shape[1] do
    local rows = b[it]
    out[it] = {rows[{{}, {1, -2}}], rows[{{}, {2, -1}}]}
  end
  return out
end

local function train(traced)
  local model = gpt.new(ref.config)
  model:load(FILE)
  local step = gpt.trainer(model, {traced = traced})
  local losses = {}
  for it, xy in ipairs(batches()) do losses[it] = step(xy[1], xy[2], it - 1):item() end
  return model, losses
end

local function check(model, losses, what)
  for it, want in ipairs(ref.losses) do
    local rel = math.abs(losses[it] - want) / want
    T.ok(rel <= 1e-5, string.format("%s step %d: loss %.7g, PyTorch %.7g (relative %.2g)", what,
                                    it, losses[it], want, rel))
  end
  for name, want in pairs(ref.final) do
    local w = mf.cast(model.by_name[name], "float64")
    local sum, sumsq = mf.reduce_sum(w):item(), mf.reduce_sum(w * w):item()
    T.ok(math.abs(sumsq - want[2]) <= 1e-4 * want[2], what .. " " .. name .. " sum of squares")
    T.ok(math.abs(sum - want[1]) <= 1e-3, string.format("%s %s sum %.7g, PyTorch %.7g", what,
                                                         name, sum, want[1]))
  end
end

T.test("eager: 20 steps give PyTorch's losses and weights", function()
  local model, losses = train(false)
  check(model, losses, "eager")
end)

T.test("inside mf.trace: the same, and equal to eager", function()
  local model, losses = train(true)
  check(model, losses, "traced")
  local _, eager = train(false)
  for it = 1, #losses do T.eq(losses[it], eager[it], 1e-6 * eager[it], "step " .. it) end
end)

T.test("the model's shapes and parameter count are model.py's", function()
  local model = gpt.new(ref.config)
  -- model.py's get_num_params(non_embedding = False) with tied weights: 12 n_layer n_embd^2
  -- + the layer norms, wte and wpe
  local C, L = ref.config.n_embd, ref.config.n_layer
  T.eq(model:num_params(), 12 * L * C * C + (2 * L + 1) * C
       + ref.config.vocab_size * C + ref.config.block_size * C)
  T.eq(#model:no_decay(), 2 * L + 1)
  local x = batches()[1][1]
  T.eq(model:forward(x).shape, {ref.config.batch_size, ref.config.block_size,
                                ref.config.vocab_size})
end)

T.done()
