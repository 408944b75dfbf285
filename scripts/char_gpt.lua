-- char_gpt.lua — a character-level GPT: Karpathy's nanoGPT on its CPU recipe
-- (4 layers, 4 heads, 128 wide, a context of 64 characters, batches of 12;
-- AdamW with weight decay on the 2-D weights only, a warm-up then a cosine
-- learning rate, gradients clipped at 1.0). It reads a text, keeps the last
-- 10% for validation, trains, prints the loss curve with the validation
-- loss, then writes new text.
--   build/moonflow scripts/char_gpt.lua [text_file | - [steps [sample_length]]]
-- Without a file it reads Debian's fortunes (mf.datasets.fortunes: 2.5 MB;
-- apt-get install fortunes). The recipe's 2000 steps take minutes; a number
-- of steps gives a quicker run (the schedule shrinks with it).
-- The model itself is scripts/models/gpt.lua (shared with the PyTorch parity
-- test and the bench): a transformer block is x + attention(layer_norm(x))
-- then x + mlp(layer_norm(x)); attention lets each position mix the values
-- of the positions before it, weighted by softmax(q k^T / sqrt(d)).
local here = (arg and arg[0] or ""):match("^(.*)/") or "."
local gpt = dofile(here .. "/models/gpt.lua")
local path = arg and arg[1]
if path == "-" then path = nil end   -- "-": the default text, to give steps after it
local steps = math.tointeger(tonumber(arg and arg[2] or gpt.recipe.max_iters))
local sample_length = math.tointeger(tonumber(arg and arg[3] or 300))
assert(steps and steps >= 1 and sample_length and sample_length >= 1,
       "usage: char_gpt.lua [text_file | - [steps [sample_length]]]")

-- 1. The text as 1-based character ids; 90% to train on, 10% to validate.
local ids, chars
if path then ids, chars = mf.datasets.text(path) else ids, chars = mf.datasets.fortunes() end
local text = ids:totable()
local n_train = #text * 9 // 10
local R = gpt.recipe
assert(#text - n_train > R.block_size + 1, "char_gpt.lua: the text is too short")
print(string.format("%s: %d characters, %d distinct; %d to train on, %d to validate",
                    path or "Debian's fortunes", #text, #chars, n_train, #text - n_train))

-- A batch of 12 random windows of the split: x, and y = x shifted by one.
math.randomseed(1337)
local function get_batch(split)
  local lo, hi = 1, n_train
  if split == "val" then lo, hi = n_train + 1, #text end
  local xs, ys = {}, {}
  for b = 1, R.batch_size do
    local s = math.random(lo, hi - R.block_size)
    xs[b] = table.move(text, s, s + R.block_size - 1, 1, {})
    ys[b] = table.move(text, s + 1, s + R.block_size, 1, {})
  end
  return mf.tensor(xs, "int64"), mf.tensor(ys, "int64")
end

-- 2. The model and its training step (one mf.trace graph: forward, backward,
-- clipping and the AdamW update run as one graph each step).
local model = gpt.new{vocab_size = #chars, lr_decay_iters = steps,
                      warmup_iters = math.min(R.warmup_iters, steps // 10)}
print(string.format("model: %d layers, %d heads, %d wide, context %d: %.2f M parameters",
                    R.n_layer, R.n_head, R.n_embd, R.block_size, model:num_params() / 1e6))
local step = gpt.trainer(model, {traced = true})
local val_loss_of = mf.trace(function(x, y) return model:loss(x, y) end)

-- The mean loss over 20 batches of a split (the recipe's eval_iters; fewer
-- in a run of fewer steps).
local eval_iters = math.min(20, steps)
local function estimate(split)
  local sum = 0
  for _ = 1, eval_iters do sum = sum + val_loss_of(get_batch(split)):item() end
  return sum / eval_iters
end

-- 3. Train, printing the loss curve: the training loss (mean since the last
-- line) and the validation loss, ten times over the run.
local every = math.max(1, steps // 10)
local seconds, sum, count = 0, 0, 0
local first, last
for it = 0, steps - 1 do
  local x, y = get_batch("train")
  local t0 = mf.clock()
  local loss = step(x, y, it):item()
  seconds = seconds + (mf.clock() - t0)
  first = first or loss
  sum, count = sum + loss, count + 1
  if (it + 1) % every == 0 or it == steps - 1 then
    last = sum / count
    print(string.format("step %4d: train loss %.4f, val loss %.4f, lr %.2e", it + 1, last,
                        estimate("val"), gpt.get_lr(model.cfg, it)))
    sum, count = 0, 0
  end
end
print(string.format("loss %.3f -> %.3f (uniform guessing: %.3f); %.1f ms per step", first, last,
                    math.log(#chars), seconds / steps * 1000))

-- 4. Sample: start from a newline, draw each next character from the
-- softmax of the logits / 0.8 among the 200 likeliest (nanoGPT's sample.py).
local start = 1
for i, ch in ipairs(chars) do if ch == "\n" then start = i end end
local out = mf.generate(model, mf.tensor({{start}}, "int64"), sample_length,
                        {temperature = 0.8, top_k = math.min(200, #chars), seed = 7}):totable()[1]
for i, id in ipairs(out) do out[i] = chars[id] end
print("sample:" .. table.concat(out))
