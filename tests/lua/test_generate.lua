-- test_generate.lua — sampling for autoregressive models (lib/generate.lua):
-- mf.random.multinomial (torch.multinomial) with replacement (frequencies
-- against the normalised weights) and without (ordered pairs against
-- p_i p_j / (1 - p_i), never a category twice), by chi-square statistics under
-- the 0.9999 quantile (scipy.stats.chi2.ppf; fixed seeds, so deterministic: a
-- wrong sampler fails, this one passes for these seeds once and for all);
-- mf.nn.top_k_filter (nanoGPT's rule), mf.nn.top_p_filter (Hugging Face's
-- TopPLogitsWarper's rule written out); mf.generate: greedy decoding, block
-- cropping, temperature (chi-square), seeds, errors.
local T = dofile("tests/lua/harness.lua")

local chi2_9999 = {[2] = 18.421, [3] = 21.108, [5] = 25.745, [11] = 37.367}

local function chi_square(counts, probs, n)
  local s = 0
  for j, p in pairs(probs) do
    if p > 0 then s = s + ((counts[j] or 0) - n * p) ^ 2 / (n * p) end
  end
  return s
end

local function tally(list)
  local c = {}
  for _, v in ipairs(list) do c[v] = (c[v] or 0) + 1 end
  return c
end

T.test("multinomial with replacement: frequencies of the normalised weights", function()
  local w = {2, 0, 1, 3, 4}           -- weights, not probabilities (sum 10)
  local n = 40000
  local s = mf.random.multinomial(mf.tensor({w, w}, "float64"), n, {replacement = true,
                                                                   seed = 11})
  T.eq(s.shape, {2, n}); T.eq(s.dtype, "int64")
  for b = 1, 2 do
    local c = tally(s[b]:totable())
    T.eq(c[2], nil, 0, "a category of weight 0 is never drawn")
    local x2 = chi_square(c, {0.2, 0, 0.1, 0.3, 0.4}, n)
    T.ok(x2 < chi2_9999[3], string.format("row %d: chi-square %.2f", b, x2))
  end
  local one = mf.random.multinomial(mf.tensor{0, 1, 0}, 3, {replacement = true})
  T.eq(one, {2, 2, 2})
end)

T.test("multinomial without replacement: ordered pairs, no repeats", function()
  local p = {0.1, 0.2, 0.3, 0.4}
  local rows = 20000
  local probs = mf.broadcast_to(mf.tensor(p, "float64"), {rows, 4})
  local s = mf.random.multinomial(probs, 2, {seed = 5}):totable()
  local counts, want = {}, {}
  for _, r in ipairs(s) do
    T.ok(r[1] ~= r[2], "a category twice")
    local key = r[1] * 10 + r[2]
    counts[key] = (counts[key] or 0) + 1
  end
  for i = 1, 4 do
    for j = 1, 4 do
      if i ~= j then want[i * 10 + j] = p[i] * p[j] / (1 - p[i]) end
    end
  end
  local x2 = chi_square(counts, want, rows)
  T.ok(x2 < chi2_9999[11], string.format("chi-square %.2f over 12 ordered pairs", x2))
  -- all categories: a permutation; zero weights last only when asked for
  local perm = mf.random.multinomial(mf.tensor{1, 1, 1, 1}, 4, {seed = 3}):totable()
  table.sort(perm)
  T.eq(perm, {1, 2, 3, 4})
  T.eq(mf.random.multinomial(mf.tensor{0, 5, 0}, 1, {seed = 4}), {2})
end)

T.test("multinomial: seeds and errors as torch's", function()
  local p = mf.tensor{0.25, 0.25, 0.5}
  T.eq(mf.random.multinomial(p, 2, {seed = 9}), mf.random.multinomial(p, 2, {seed = 9}))
  T.raises(mf.random.multinomial, "random.multinomial: probs must be finite and >= 0",
           mf.tensor{0.5, -0.1}, 1)
  T.raises(mf.random.multinomial, "probs must be finite and >= 0", mf.tensor{0.5, 0 / 0}, 1)
  T.raises(mf.random.multinomial, "a row of probs sums to 0", mf.tensor{{1, 1}, {0, 0}}, 1)
  T.raises(mf.random.multinomial, "without replacement num_samples (3) must be at most the "
           .. "number of categories (2)", mf.tensor{1, 1}, 3)
  T.raises(mf.random.multinomial, "without replacement num_samples (2) must be at most the "
           .. "number of categories of nonzero probability (1 in a row)", mf.tensor{1, 0, 0}, 2)
  T.raises(mf.random.multinomial, "probs must be (categories) or (rows, categories)",
           mf.ones{2, 2, 2}, 1)
  T.raises(mf.random.multinomial, "unknown option 'replace'", p, 1, {replace = true})
  T.raises(mf.random.multinomial, "probs must be float32 or float64, got int64",
           mf.tensor({1, 2}, "int64"), 1)
end)

T.test("top_k_filter: nanoGPT's rule", function()
  local inf = math.huge
  T.eq(mf.nn.top_k_filter(mf.tensor{1, 3, 2, 0}, 2), {-inf, 3, 2, -inf})
  T.eq(mf.nn.top_k_filter(mf.tensor{{1, 3, 3, 0}, {5, 4, 3, 2}}, 2),
       {{-inf, 3, 3, -inf}, {5, 4, -inf, -inf}})          -- ties with the k-th stay
  T.eq(mf.nn.top_k_filter(mf.tensor{1, 2}, 5), {1, 2})
  T.raises(mf.nn.top_k_filter, "nn.top_k_filter", mf.tensor{1, 2}, 0)
end)

-- Hugging Face's TopPLogitsWarper (min_tokens_to_keep = 1), written out: sort
-- ascending, remove the tokens whose ascending cumulative probability is <= 1 - p.
local function hf_top_p(l, p)
  local idx, mx, s = {}, -math.huge, 0
  for i = 1, #l do idx[i] = i; mx = math.max(mx, l[i]) end
  table.sort(idx, function(a, b) return l[a] < l[b] end)
  local probs = {}
  for i = 1, #l do probs[i] = math.exp(l[i] - mx); s = s + probs[i] end
  local out, cum = {}, 0
  for r, i in ipairs(idx) do
    cum = cum + probs[i] / s
    local remove = cum <= 1 - p and r < #l
    out[i] = remove and -math.huge or l[i]
  end
  return out
end

T.test("top_p_filter: Hugging Face's TopPLogitsWarper", function()
  mf.random.seed(3)
  local x = mf.random.normal({50, 12}, {dtype = "float64"}) * 2
  for _, p in ipairs{0.05, 0.3, 0.5, 0.9, 0.99} do
    local got = mf.nn.top_p_filter(x, p):totable()
    for r, row in ipairs(x:totable()) do T.eq(got[r], hf_top_p(row, p)) end
  end
  T.eq(mf.nn.top_p_filter(x, 1), x)
  local l = mf.log(mf.tensor{0.5, 0.3, 0.15, 0.05})
  T.eq(mf.is_finite(mf.nn.top_p_filter(l, 0.75)), {true, true, false, false})
  T.eq(mf.is_finite(mf.nn.top_p_filter(l, 0.4)), {true, false, false, false})
  T.raises(mf.nn.top_p_filter, "nn.top_p_filter: p must be a number in (0, 1], got 0", l, 0)
end)

T.test("generate: greedy, block cropping, temperature, seeds", function()
  local seen = 0
  local model = {block_size = 3}
  setmetatable(model, {__call = function(_, ids)
    seen = math.max(seen, ids.shape[2])
    return mf.one_hot(ids % 3 + 1, 3) * 10            -- next token: id mod 3 + 1
  end})
  local out = mf.generate(model, mf.tensor({{1, 2}, {3, 3}}, "int64"), 5, {top_k = 1})
  T.eq(out, {{1, 2, 3, 1, 2, 3, 1}, {3, 3, 1, 2, 3, 1, 2}})
  T.eq(seen, 3, 0, "the context is cropped to block_size")
  -- temperature: one step over 40000 rows draws from softmax(logits / t)
  local logits = {0, 1, 2}
  local fixed = function(ids)
    return {mf.broadcast_to(mf.tensor(logits), {ids.shape[1], ids.shape[2], 3}), "loss"}
  end
  local n = 40000
  local ids = mf.ones({n, 1}, {dtype = "int64"})
  for _, t in ipairs{0.5, 2} do
    local s = mf.generate(fixed, ids, 1, {temperature = t, seed = 7})
    local col = mf.squeeze(mf.slice(s, {1, 2}, {-1, 1}), 2):totable()
    local e, z = {}, 0
    for j, v in ipairs(logits) do e[j] = math.exp(v / t); z = z + e[j] end
    for j = 1, 3 do e[j] = e[j] / z end
    local x2 = chi_square(tally(col), e, n)
    T.ok(x2 < chi2_9999[2], string.format("temperature %g: chi-square %.2f", t, x2))
  end
  local a = mf.generate(fixed, mf.ones({4, 1}, {dtype = "int64"}), 6, {seed = 1, top_p = 0.9})
  T.eq(a, mf.generate(fixed, mf.ones({4, 1}, {dtype = "int64"}), 6, {seed = 1, top_p = 0.9}))
  T.raises(mf.generate, "generate: option 'temperature' must be a number > 0, got 0", fixed,
           ids, 1, {temperature = 0})
  T.raises(mf.generate, "generate: ids must be (batch, sequence) int64 token ids",
           fixed, mf.ones{2}, 1)
  T.raises(mf.generate, "generate: model(ids) must return logits (batch, sequence, vocab)",
           function() return mf.ones{2, 2} end, ids, 1)
end)

T.done()
