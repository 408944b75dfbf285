-- test_categorical.lua — mf.random.categorical(logits, num_samples, {seed,
-- dtype}) (tf.random.categorical, the op Multinomial): classes 1-based,
-- [batch, num_samples] int64 (or int32); the frequencies of 40,000 draws per
-- row against the softmax of the logits by a chi-square statistic under the
-- 0.9999 quantile of its distribution (fixed seeds, so the test is
-- deterministic: a wrong sampler fails it, a right one passes for these
-- seeds once and for all); classes of logit -inf never drawn; seeds; graph
-- runs draw fresh samples; errors.
local T = dofile("tests/lua/harness.lua")

-- chi-square quantiles at 0.9999 (scipy.stats.chi2.ppf(0.9999, df))
local chi2_9999 = {[1] = 15.137, [2] = 18.421, [3] = 21.108, [4] = 23.513}

local function chi_square(counts, probs, n)
  local s = 0
  for j, p in ipairs(probs) do
    if p > 0 then s = s + (counts[j] - n * p) ^ 2 / (n * p) end
  end
  return s
end

local function softmax(l)
  local mx, s, p = -math.huge, 0, {}
  for _, v in ipairs(l) do mx = math.max(mx, v) end
  for j, v in ipairs(l) do p[j] = math.exp(v - mx); s = s + p[j] end
  for j = 1, #p do p[j] = p[j] / s end
  return p
end

T.test("frequencies follow the softmax of each row (chi-square)", function()
  local rows = {
    {math.log(0.1), math.log(0.2), math.log(0.3), math.log(0.4)},
    {0, -math.huge, 1, 2, -1},
    {5, 5},
    {-1000, -1001, -1002},     -- large negative logits: softmax is shift-invariant
  }
  local n = 40000
  for ri, l in ipairs(rows) do
    local logits = mf.tensor({l, l}, "float64")
    local s = mf.random.categorical(logits, n, {seed = 100 + ri})
    T.eq(s.shape, {2, n})
    T.eq(s.dtype, "int64")
    local probs = softmax(l)
    for b = 1, 2 do
      local counts = {}
      for j = 1, #l do counts[j] = 0 end
      for _, c in ipairs(s[b]:totable()) do
        T.ok(c >= 1 and c <= #l, "class out of range: " .. c)
        counts[c] = counts[c] + 1
      end
      local df = 0
      for j = 1, #l do
        if probs[j] > 0 then df = df + 1 else T.eq(counts[j], 0, 0, "a class of logit -inf") end
      end
      local x2 = chi_square(counts, probs, n)
      T.ok(x2 < chi2_9999[df - 1], string.format("row %d: chi-square %.2f >= %.2f (counts %s)",
                                                ri, x2, chi2_9999[df - 1],
                                                table.concat(counts, ",")))
    end
    -- the two copies of the row draw different samples
    T.ok(not (s[1] == s[2]), "both rows drew the same samples")
  end
end)

T.test("one class, float32 logits, int32 dtype, zero samples", function()
  T.eq(mf.random.categorical(mf.tensor{{3}}, 5), {{1, 1, 1, 1, 1}})
  local s = mf.random.categorical(mf.tensor{{0, 0, 0}}, 7, {dtype = "int32", seed = 1})
  T.eq(s.dtype, "int32")
  T.eq(s.shape, {1, 7})
  T.eq(mf.random.categorical(mf.zeros{2, 3}, 0).shape, {2, 0})
  T.eq(mf.random.categorical(mf.zeros{0, 3}, 4).shape, {0, 4})
  -- a dominant logit: all samples take it
  T.eq(mf.random.categorical(mf.tensor{{-50, 50, -50}}, 4, {seed = 3}), {{2, 2, 2, 2}})
end)

T.test("seeds: op seeds repeat, the global seed repeats the sequence", function()
  local l = mf.zeros{3, 10}
  local a = mf.random.categorical(l, 20, {seed = 5})
  T.ok(a == mf.random.categorical(l, 20, {seed = 5}))
  T.ok(not (a == mf.random.categorical(l, 20, {seed = 6})))
  mf.random.seed(9)
  local b1, b2 = mf.random.categorical(l, 20), mf.random.categorical(l, 20)
  mf.random.seed(9)
  T.ok(b1 == mf.random.categorical(l, 20))
  T.ok(b2 == mf.random.categorical(l, 20))
  T.ok(not (b1 == b2))
end)

T.test("graph mode: each run draws fresh samples; the first equals eager", function()
  local l = mf.zeros{2, 6}
  local eager = mf.random.categorical(l, 30, {seed = 4})
  local g = mf.Graph()
  local p, s
  g:as_default(function()
    p = mf.placeholder("float32", {-1, 6})
    s = mf.random.categorical(p, 30, {seed = 4})
  end)
  T.eq(s.shape, {-1, 30})
  local sess = mf.Session(g)
  local r1, r2 = sess:run(s, {[p] = l}), sess:run(s, {[p] = l})
  T.ok(r1 == eager)
  T.ok(not (r1 == r2))
  local f = mf.trace(function(x) return mf.random.categorical(x, 30, {seed = 4}) end)
  T.ok(f(l) == eager)
end)

T.test("errors name the function and what was given", function()
  T.raises(mf.random.categorical, "random.categorical: expected logits of rank 2 [batch, "
           .. "classes], got shape (3,) (rank 1)", mf.zeros{3}, 2)
  T.raises(mf.random.categorical, "random.categorical: the logits have no classes (shape (2,0))",
           mf.zeros{2, 0}, 2)
  T.raises(mf.random.categorical, "random.categorical: num_samples must be >= 0, got -1",
           mf.zeros{2, 2}, -1)
  T.raises(mf.random.categorical, "random.categorical: expected dtype int32 or int64, got "
           .. "float32", mf.zeros{2, 2}, 1, {dtype = "float32"})
  T.raises(mf.random.categorical, "random.categorical: expected a float dtype",
           mf.zeros({2, 2}, "int32"), 1)
  T.raises(mf.random.categorical, "random.categorical: row 2 of the logits has a NaN or +Inf "
           .. "logit, or no finite one", mf.tensor{{0, 1}, {0 / 0, 1}}, 1)
  T.raises(mf.random.categorical, "row 1 of the logits", mf.tensor{{-math.huge, -math.huge}}, 1)
  T.raises(mf.random.categorical, "random.categorical: unknown option 'seeds'", mf.zeros{1, 2},
           1, {seeds = 1})
  T.raises(mf.random.categorical, "num_samples", mf.zeros{1, 2})
end)

T.done()
