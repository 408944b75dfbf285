-- char_rnn.lua — a character-level LSTM language model (Karpathy's
-- char-rnn, in mf.layers): it reads a text file, learns to predict each next
-- character, and then writes new text one character at a time.
--   build/moonflow scripts/char_rnn.lua [text_file | - [steps [sample_length]]]
-- Without a file it reads Debian's fortunes (mf.datasets.fortunes: 2.5 MB of
-- fortune cookies; apt-get install fortunes).
--
-- Training is truncated backpropagation through time: the text is cut into
-- BATCH parallel streams; each step takes the next SEQ characters of every
-- stream, starts the LSTM from the state the previous step ended in (its
-- value only: stop_gradient cuts the tape there, so gradients flow back at
-- most SEQ steps), and clips the gradients to a global norm of 5 before Adam.
local path = arg and arg[1]
if path == "-" then path = nil end   -- "-": the default text, to give steps after it
local steps = math.tointeger(tonumber(arg and arg[2] or 300))
local sample_length = math.tointeger(tonumber(arg and arg[3] or 400))
assert(steps and steps >= 1 and sample_length and sample_length >= 1,
       "usage: char_rnn.lua [text_file [steps [sample_length]]]")
local BATCH, SEQ, HIDDEN, EMBED, CLIP = 32, 32, 128, 32, 5

-- 1. The text as 1-based character ids, and its alphabet (bytes here).
local ids, chars
if path then ids, chars = mf.datasets.text(path) else ids, chars = mf.datasets.fortunes() end
local text = ids:totable()
local vocab = #chars
local stream_len = (#text - 1) // BATCH
assert(stream_len > SEQ, "char_rnn.lua: the text is too short for " .. BATCH .. " streams")
print(string.format("%s: %d characters, %d distinct; %d streams of %d",
                    path or "Debian's fortunes", #text, vocab, BATCH, stream_len))

-- The ids of text[from .. from + n - 1] of every stream, as a (BATCH, n) int64 tensor.
local function chunk(offset, n)
  local rows = {}
  for b = 1, BATCH do
    local start = (b - 1) * stream_len + offset
    local row = {}
    table.move(text, start, start + n - 1, 1, row)
    rows[b] = row
  end
  return mf.tensor(rows, "int64")
end

-- 2. The model: ids -> Embedding -> LSTM (all steps, and the final state) -> logits.
mf.random.seed(1)
local L = mf.layers
local embed = L.Embedding(vocab, EMBED)
local lstm = L.LSTM(HIDDEN, {return_sequences = true, return_state = true})
local head = L.Dense(vocab)
local function model(ids, state)
  local y, h, c = lstm(embed(ids), state and {initial_state = state} or nil)
  return head(y), h, c
end

-- 3. Train.
local opt = mf.train.AdamOptimizer(0.005)
local state, offset = nil, 1
local progress = mf.progress{total = steps}
local first_loss, last_loss
for step = 1, steps do
  if offset + SEQ > stream_len then offset, state = 1, nil end   -- back to the start
  local x, y = chunk(offset, SEQ), chunk(offset + 1, SEQ)
  offset = offset + SEQ
  local tape = mf.GradientTape()
  local logits, h, c = model(x, state)
  local loss = mf.reduce_mean(mf.nn.sparse_softmax_cross_entropy_with_logits{
    labels = mf.reshape(y, {-1}), logits = mf.reshape(logits, {-1, vocab})})
  tape:stop()
  local vars = {}
  for _, layer in ipairs({embed, lstm, head}) do
    for _, v in ipairs(layer.trainable_variables) do vars[#vars + 1] = v end
  end
  local grads, norm = mf.clip_by_global_norm(tape:gradient(loss, vars), CLIP)
  local gv = {}
  for i, v in ipairs(vars) do gv[i] = {grads[i], v} end
  opt:apply_gradients(gv)
  state = {mf.stop_gradient(h), mf.stop_gradient(c)}              -- truncated BPTT
  last_loss = loss:item()
  first_loss = first_loss or last_loss
  progress:update{loss = last_loss, norm = norm:item()}
end
progress:done()
print(string.format("loss %.3f -> %.3f (uniform guessing: %.3f)", first_loss, last_loss,
                    math.log(vocab)))

-- 4. Sample: feed one character at a time, draw the next from the softmax.
math.randomseed(3)
local function draw(probs)
  local r, acc = math.random(), 0
  for i, p in ipairs(probs) do
    acc = acc + p
    if r <= acc then return i end
  end
  return #probs
end
local id, s = text[1], nil
local out = {chars[id]}
for _ = 1, sample_length do
  local logits, h, c = model(mf.tensor({{id}}, "int64"), s)
  s = {h, c}
  id = draw(mf.nn.softmax(mf.reshape(logits, {vocab}) / 0.8):totable())   -- temperature 0.8
  out[#out + 1] = chars[id]
end
print("sample:\n" .. table.concat(out))
