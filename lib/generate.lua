-- generate.lua — sampling for autoregressive models, written with ops:
-- mf.random.multinomial (torch.multinomial: draws from probabilities, with
-- or without replacement), mf.nn.top_k_filter and mf.nn.top_p_filter (the
-- logits outside the top k, or outside the nucleus of probability p, set to
-- -inf: nanoGPT's top-k, Holtzman et al.'s top-p as Hugging Face's
-- TopPLogitsWarper), and mf.generate (nanoGPT's GPT.generate for any model
-- called as model(ids) -> logits).
--
-- Without replacement, multinomial takes the n largest of log(p) + Gumbel
-- noise (the Gumbel-top-k trick): the same distribution as drawing one
-- category at a time and removing it, as torch.multinomial does.
local mf, lib = ...
local fail = lib.fail

-- A float tensor from 'x' (a tensor or a nested array) for 'fname'.
local function float_tensor(fname, what, x)
  if not lib.is_tensor(x) then
    local ok, t = pcall(mf.tensor, x)
    if not ok then fail(fname, "%s must be a tensor, got %s", what, type(x)) end
    x = t
  end
  if x.dtype ~= "float32" and x.dtype ~= "float64" then
    fail(fname, "%s must be float32 or float64, got %s", what, x.dtype)
  end
  return x
end

local function seed_opt(fname, seed)
  if seed ~= nil and math.type(seed) ~= "integer" then
    fail(fname, "option 'seed' must be an integer, got %s", tostring(seed))
  end
  return seed
end

-- ---- mf.random.multinomial ----------------------------------------------------------

-- Eager probabilities are checked as torch checks them: finite, >= 0, a positive row
-- sum, and without replacement at least n categories of nonzero probability.
local function check_probs(fname, p, n, replacement)
  if p.name ~= nil then return end   -- symbolic (a graph): checked when it runs? not here
  local bad = mf.reduce_any(mf.logical_or(mf.logical_not(mf.is_finite(p)), mf.less(p, 0)))
  if bad:item() then fail(fname, "probs must be finite and >= 0") end
  local nonzero = mf.reduce_sum(mf.cast(mf.greater(p, 0), "int64"), -1)
  if mf.reduce_min(nonzero):item() == 0 then
    fail(fname, "a row of probs sums to 0 (no category can be drawn)")
  end
  if not replacement and mf.reduce_min(nonzero):item() < n then
    fail(fname, "without replacement num_samples (%d) must be at most the number of categories "
         .. "of nonzero probability (%d in a row)", n, mf.reduce_min(nonzero):item())
  end
end

-- mf.random.multinomial(probs, num_samples [, {replacement = false, seed}])
function mf.random.multinomial(probs, num_samples, opts)
  local fname = "random.multinomial"
  probs = float_tensor(fname, "probs", probs)
  if probs.ndim ~= 1 and probs.ndim ~= 2 then
    fail(fname, "probs must be (categories) or (rows, categories), got shape %s",
         lib.shape_text(probs.shape))
  end
  local n = lib.check_count(fname, "num_samples", num_samples)
  opts = lib.check_opts(fname, opts, {replacement = true, seed = true})
  local replacement = lib.check_bool(fname, "replacement", opts.replacement, false)
  local seed = seed_opt(fname, opts.seed)
  local k = probs.shape[probs.ndim]
  if not replacement and k >= 0 and n > k then
    fail(fname, "without replacement num_samples (%d) must be at most the number of "
         .. "categories (%d)", n, k)
  end
  check_probs(fname, probs, n, replacement)
  local rows = probs.ndim == 1 and mf.expand_dims(probs, 1) or probs
  local out
  if replacement then
    out = mf.random.categorical(mf.log(rows), n, {seed = seed})
  else
    local u = mf.random.uniform(rows.shape, {dtype = rows.dtype, seed = seed, minval = 1e-20})
    local keys = mf.log(rows) - mf.log(-mf.log(u))    -- log p + Gumbel(0, 1)
    local _, idx = mf.top_k(keys, n)
    out = idx
  end
  return probs.ndim == 1 and mf.squeeze(out, 1) or out
end

lib.help("random.multinomial", "random",
  "mf.random.multinomial(probs, num_samples [, {replacement = false, seed}])",
  "torch.multinomial: num_samples 1-based category indices (int64) per row of probs " ..
  "((categories) or (rows, categories); non-negative weights, need not sum to 1). " ..
  "replacement = false (torch's default): no category twice in a row, drawn in order as " ..
  "one at a time without putting back (the n largest of log p + Gumbel noise); " ..
  "num_samples must not exceed the categories of nonzero probability. replacement = " ..
  "true: independent draws (mf.random.categorical of log p). Eager probs are checked " ..
  "(finite, >= 0, a positive sum). seed: the house rule (help \"random\").",
  [[
s = mf.random.multinomial(mf.tensor{0, 0.5, 0.5}, 2, {seed = 1})
s:sort():totable()                   --> {2, 3}]])

-- ---- top-k and top-p filtering --------------------------------------------------------

local function neg_inf_like(x) return mf.fill(x.shape, -math.huge, {dtype = x.dtype}) end

-- mf.nn.top_k_filter(logits, k): logits below the k-th largest of their row become -inf.
function mf.nn.top_k_filter(logits, k)
  local fname = "nn.top_k_filter"
  logits = float_tensor(fname, "logits", logits)
  k = lib.check_count(fname, "k", k)
  local v = logits.shape[logits.ndim]
  if v >= 0 and k >= v then return logits end
  local kth = mf.reduce_min(mf.top_k(logits, k), -1, true)
  return mf.where(mf.less(logits, kth), neg_inf_like(logits), logits)
end

lib.help("nn.top_k_filter", "nn", "mf.nn.top_k_filter(logits, k)",
  "Top-k filtering for sampling (nanoGPT's generate): along the last axis, the logits " ..
  "below the k-th largest become -inf (ties with it stay); k >= the number of logits " ..
  "keeps them all. Sample from the result with mf.random.categorical.",
  [[
mf.nn.top_k_filter(mf.tensor{1, 3, 2, 0}, 2)   --> {-inf, 3, 2, -inf}]])

-- mf.nn.top_p_filter(logits, p): the smallest set of most probable logits whose
-- probabilities reach p kept, the rest -inf.
function mf.nn.top_p_filter(logits, p)
  local fname = "nn.top_p_filter"
  logits = float_tensor(fname, "logits", logits)
  if type(p) ~= "number" or not (p > 0 and p <= 1) then
    fail(fname, "p must be a number in (0, 1], got %s", tostring(p))
  end
  if p == 1 then return logits end
  local sorted = mf.sort(logits, -1, "DESCENDING")
  local before = mf.cumsum(mf.nn.softmax(sorted), -1, {exclusive = true})
  local keep = mf.less(before, p)   -- the probability of the more probable ones is below p
  local inf = mf.fill(sorted.shape, math.huge, {dtype = sorted.dtype})
  local last = mf.reduce_min(mf.where(keep, sorted, inf), -1, true)
  return mf.where(mf.less(logits, last), neg_inf_like(logits), logits)
end

lib.help("nn.top_p_filter", "nn", "mf.nn.top_p_filter(logits, p)",
  "Top-p (nucleus) filtering (Holtzman et al.; Hugging Face's TopPLogitsWarper): along the " ..
  "last axis, keeps the most probable logits until their softmax probabilities sum to at " ..
  "least p (a logit is kept when the more probable ones sum to less than p, so the most " ..
  "probable always is; ties with the last kept one stay), the others become -inf. p in " ..
  "(0, 1]; 1 keeps all.",
  [[
l = mf.log(mf.tensor{0.5, 0.3, 0.15, 0.05})
mf.is_finite(mf.nn.top_p_filter(l, 0.8))   --> {true, true, false, false}]])

-- ---- generate ---------------------------------------------------------------------------

local gen_keys = {temperature = true, top_k = true, top_p = true, seed = true,
                  block_size = true}

-- The logits of the last position of model(ids): (batch, vocab).
local function last_logits(fname, model, ids)
  local out = model(ids)
  if type(out) == "table" and not lib.is_tensor(out) then out = out[1] end
  if not lib.is_tensor(out) or out.ndim ~= 3 then
    fail(fname, "model(ids) must return logits (batch, sequence, vocab), got %s",
         lib.is_tensor(out) and lib.shape_text(out.shape) or type(out))
  end
  local t = out.shape[2]
  return mf.squeeze(mf.slice(out, {1, t, 1}, {-1, 1, -1}), 2)
end

-- mf.generate(model, ids, n [, {temperature = 1, top_k, top_p, seed, block_size}])
function mf.generate(model, ids, n, opts)
  local fname = "generate"
  if not lib.is_tensor(ids) then
    local ok, t = pcall(mf.tensor, ids, "int64")
    if not ok then fail(fname, "ids must be a (batch, sequence) tensor of token ids") end
    ids = t
  end
  if ids.ndim ~= 2 or (ids.dtype ~= "int64" and ids.dtype ~= "int32") then
    fail(fname, "ids must be (batch, sequence) int64 token ids, got %s %s", ids.dtype,
         lib.shape_text(ids.shape))
  end
  n = lib.check_count(fname, "n", n, true)
  opts = lib.check_opts(fname, opts, gen_keys)
  local temperature = opts.temperature or 1
  if type(temperature) ~= "number" or not (temperature > 0) or temperature == math.huge then
    fail(fname, "option 'temperature' must be a number > 0, got %s", tostring(temperature))
  end
  local block = opts.block_size
  if block == nil and type(model) == "table" then
    block = rawget(model, "block_size") or (rawget(model, "cfg") and model.cfg.block_size)
  end
  if block ~= nil then block = lib.check_count(fname, "block_size", block) end
  local seed = seed_opt(fname, opts.seed)
  for i = 1, n do
    local t = ids.shape[2]
    local ctx = (block and t > block) and mf.slice(ids, {1, t - block + 1}, {-1, block}) or ids
    local logits = last_logits(fname, model, ctx)
    if temperature ~= 1 then logits = logits / temperature end
    if opts.top_k then logits = mf.nn.top_k_filter(logits, opts.top_k) end
    if opts.top_p then logits = mf.nn.top_p_filter(logits, opts.top_p) end
    local next_id = mf.random.categorical(logits, 1, {seed = seed and seed + i - 1,
                                                      dtype = ids.dtype})
    ids = mf.concat({ids, next_id}, 2)
  end
  return ids
end

lib.help("generate", "nn",
  "mf.generate(model, ids, n [, {temperature = 1, top_k, top_p, seed, block_size}])",
  "nanoGPT's GPT.generate for any autoregressive model: n times, model(ctx) on the last " ..
  "block_size ids (all of them without one; block_size defaults to model.block_size or " ..
  "model.cfg.block_size), the logits of the last position divided by temperature, " ..
  "filtered by mf.nn.top_k_filter and mf.nn.top_p_filter when given, one token drawn by " ..
  "mf.random.categorical and appended. ids: (batch, sequence) 1-based int64 token ids; " ..
  "model(ids) returns (batch, sequence, vocab) logits (or a table whose first entry they " ..
  "are). Returns the (batch, sequence + n) ids. seed s: step i draws with op seed s + i - " ..
  "1, so the run repeats. top_k = 1 is greedy decoding.",
  [[
model = function(ids) return mf.one_hot(ids % 3 + 1, 3) * 10 end  -- next: id mod 3 + 1
mf.generate(model, mf.tensor({{1}}, "int64"), 3, {top_k = 1}):totable()  --> {{1, 2, 3, 1}}]])
