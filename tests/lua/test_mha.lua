-- test_mha.lua — mf.layers.MultiHeadAttention (Keras's semantics, on the
-- attention op) and mf.layers.PositionEmbedding (keras_hub's): parameter
-- counts from Keras's formulas, weights shaped as Keras's, outputs against
-- Keras's computation written out with einsum (the layer's own weights),
-- attention masks and the causal mask, return_attention_scores, attention
-- dropout with training (the op's mask is mf.nn.dropout's), gradients, graph
-- mode, errors.
local T = dofile("tests/lua/harness.lua")
local L = mf.layers

local function max_abs(a, b) return mf.reduce_max(mf.abs(a - b)):item() end

-- Keras's parameter count: three EinsumDense projections (features, heads, dim)
-- with (heads, dim) biases, and the output projection (heads, value_dim, out) + (out).
local function keras_count(qf, kf, vf, h, kd, vd, out, bias)
  local b = bias and 1 or 0
  return qf * h * kd + b * h * kd + kf * h * kd + b * h * kd + vf * h * vd + b * h * vd
         + h * vd * out + b * out
end

T.test("parameter counts and weight shapes are Keras's", function()
  -- Keras's docstring example: num_heads=2, key_dim=2 on target (8, 16), source (4, 16)
  local mha = L.MultiHeadAttention(2, 2)
  local y, scores = mha(mf.ones{3, 8, 16}, mf.ones{3, 4, 16}, {return_attention_scores = true})
  T.eq(y.shape, {3, 8, 16})
  T.eq(scores.shape, {3, 2, 8, 4})
  T.eq(mha:count_params(), keras_count(16, 16, 16, 2, 2, 2, 16, true))
  T.eq(mha:count_params(), 284)
  T.eq(#mha.trainable_variables, 8)
  local shapes = {}
  for _, v in ipairs(mha.trainable_variables) do shapes[#shapes + 1] = v.shape end
  T.eq(shapes, {{16, 2, 2}, {2, 2}, {16, 2, 2}, {2, 2}, {16, 2, 2}, {2, 2}, {2, 2, 16}, {16}})
  for _, c in ipairs{
    {h = 3, kd = 4, vd = 5, out = 7, bias = true, qf = 6, kf = 9, vf = 8},
    {h = 1, kd = 2, vd = 2, out = nil, bias = false, qf = 5, kf = 3, vf = 3},
  } do
    local m = L.MultiHeadAttention(c.h, c.kd, {value_dim = c.vd, output_shape = c.out,
                                               use_bias = c.bias})
    local q, v, k = mf.ones{2, 4, c.qf}, mf.ones{2, 6, c.vf}, mf.ones{2, 6, c.kf}
    T.eq(m(q, v, k).shape, {2, 4, c.out or c.qf})
    T.eq(m:count_params(), keras_count(c.qf, c.kf, c.vf, c.h, c.kd, c.vd, c.out or c.qf, c.bias))
  end
end)

-- Keras's call written out (MultiHeadAttention._compute_attention): einsum
-- projections, the query scaled by 1/sqrt(key_dim), masked softmax, einsum back.
local function keras_mha(m, query, value, key, mask)
  local function proj(x, name)
    local y = mf.einsum("abc,cde->abde", x, m[name .. "_kernel"])
    if m[name .. "_bias"] then y = y + m[name .. "_bias"] end
    return y
  end
  local q = proj(query, "query") * (1 / math.sqrt(m.key_dim))
  local k, v = proj(key, "key"), proj(value, "value")
  local s = mf.einsum("aecd,abcd->acbe", k, q)
  if mask then
    s = mf.where(mf.expand_dims(mask, 2), s, mf.fill(s.shape, -math.huge))
  end
  local p = mf.nn.softmax(s)
  local o = mf.einsum("acbe,aecd->abcd", p, v)
  local y = mf.einsum("abcd,cde->abe", o, m.attention_output_kernel)
  if m.attention_output_bias then y = y + m.attention_output_bias end
  return y, p
end

T.test("outputs equal Keras's computation; masks, causal, scores", function()
  mf.random.seed(5)
  local m = L.MultiHeadAttention(3, 4, {value_dim = 5, output_shape = 6,
                                        bias_initializer = "glorot_uniform"})
  local query, value, key = mf.random.normal{2, 7, 8}, mf.random.normal{2, 9, 10},
      mf.random.normal{2, 9, 11}
  local y = m(query, value, key)
  local want = keras_mha(m, query, value, key)
  T.ok(max_abs(y, want) < 2e-5, "no mask: " .. max_abs(y, want))
  local mask = mf.greater(mf.random.uniform({2, 7, 9}, {seed = 3}), 0.4)
  mask = mf.logical_or(mask, mf.cast(mf.eye(7, 9), "bool"))
  local ym, scores = m(query, value, key, {attention_mask = mask, return_attention_scores = true})
  local wm, wp = keras_mha(m, query, value, key, mask)
  T.ok(max_abs(ym, wm) < 2e-5 and max_abs(scores, wp) < 1e-6)
  T.ok(max_abs(m(query, value, key, {attention_mask = mask}), wm) < 2e-5, "fused path")
  -- 0/1 numbers as a mask; use_causal_mask is Keras's lower triangle, combined with it
  T.ok(max_abs(m(query, value, key, {attention_mask = mf.cast(mask, "float32")}), wm) < 2e-5)
  local tri = mf.cast(mf.tril(mf.ones{7, 9}), "bool")
  local both = mf.logical_and(mask, mf.broadcast_to(tri, {2, 7, 9}))
  T.ok(max_abs(m(query, value, key, {attention_mask = mask, use_causal_mask = true}),
               keras_mha(m, query, value, key, both)) < 2e-5)
  -- self-attention: key defaults to value
  local s = L.MultiHeadAttention(2, 3)
  local x = mf.random.normal{1, 5, 4}
  T.ok(max_abs(s(x, x), keras_mha(s, x, x, x)) < 2e-5)
end)

T.test("attention dropout with training, gradients, graph mode", function()
  local m = L.MultiHeadAttention(2, 4, {dropout = 0.5, seed = 7})
  local x = mf.random.normal({2, 6, 8}, {seed = 1})
  local infer = m(x, x)
  T.eq(m(x, x, {training = false}), infer)
  local a, b = m(x, x, {training = true}), m(x, x, {training = true})
  T.ok(max_abs(a, infer) > 1e-3, "dropout changes the output")
  T.eq(a, b)   -- the house seed rule: an op seed gives one mask eagerly (mf.nn.dropout)
  local unseeded = L.MultiHeadAttention(2, 4, {dropout = 0.5})
  T.ok(max_abs(unseeded(x, x, {training = true}), unseeded(x, x, {training = true})) > 1e-3,
       "a fresh mask per call without a seed")
  -- every weight gets a gradient
  local tape = mf.GradientTape()
  local loss = mf.reduce_sum(m(x, x, {use_causal_mask = true}) ^ 2)
  local g = tape:gradient(loss, m.trainable_variables)
  for i = 1, 8 do T.ok(g[i] ~= nil, "gradient " .. i) end
  local traced = mf.trace(function(x) return m(x, x, {use_causal_mask = true}) end)
  T.ok(max_abs(traced(x), m(x, x, {use_causal_mask = true})) < 1e-6)
end)

T.test("training with dropout runs the attention op, with mf.nn.dropout's mask", function()
  local m = L.MultiHeadAttention(2, 4, {dropout = 0.3, seed = 5})
  local x = mf.random.normal({2, 70, 8}, {seed = 2})
  for _, causal in ipairs{false, true} do
    local o = {training = true, use_causal_mask = causal}
    local fused = m(x, x, o)
    o.return_attention_scores = true   -- composed from ops, mf.nn.dropout on the scores
    local composed = m(x, x, o)
    T.ok(max_abs(fused, composed) < 2e-5, "causal " .. tostring(causal))
  end
  local g = mf.Graph()
  g:as_default(function() m(mf.placeholder("float32", {2, 70, 8}), x, {training = true}) end)
  local ops = {}
  for _, n in ipairs(g:nodes()) do ops[n.op] = true end
  T.ok(ops.ScaledDotProductAttention and not ops.Softmax, "the op, not a composed softmax")
end)

T.test("PositionEmbedding: a learned table, the first T rows", function()
  local pe = L.PositionEmbedding(10)
  local x = mf.ones{3, 4, 6}
  local y = pe(x)
  T.eq(y.shape, {3, 4, 6})
  T.eq(pe:count_params(), 10 * 6)
  T.eq(pe.position_embeddings.shape, {10, 6})
  T.eq(y[{2, 3}], pe.position_embeddings[3])
  T.eq(pe(mf.ones{1, 10, 6})[1], pe.position_embeddings)
  T.raises(function() pe(mf.ones{1, 11, 6}) end,
           "(PositionEmbedding): the sequence (axis 2) has 11 positions, "
           .. "more than sequence_length 10")
  local tape = mf.GradientTape()
  local g = tape:gradient(mf.reduce_sum(pe(x)), pe.trainable_variables)[1]
  T.eq(g[1], mf.fill({6}, 3)); T.eq(g[5], mf.zeros{6})
end)

T.test("errors name the layer", function()
  T.raises(function() L.MultiHeadAttention(0, 2) end, "MultiHeadAttention")
  T.raises(function() L.MultiHeadAttention(2, 2, {dropout = 1}) end,
           "MultiHeadAttention: option 'dropout' must be a number in [0, 1), got 1")
  T.raises(function() L.MultiHeadAttention(2, 2, {heads = 1}) end, "unknown option 'heads'")
  local m = L.MultiHeadAttention(2, 2)
  T.raises(function() m(mf.ones{2, 3}, mf.ones{2, 3}) end,
           "query must be (batch, sequence, features), got shape (2, 3)")
  T.raises(function() m(mf.ones{1, 3, 4}, mf.ones{1, 5, 4}, mf.ones{1, 6, 4}) end,
           "key and value must have one sequence length")
  T.raises(function() m(mf.ones{1, 3, 4}, mf.ones{1, 5, 4}, {attention_mask = mf.ones{1, 5, 3}}) end,
           "attention_mask must be (batch, 3, 5) (query, key positions), got shape (1, 5, 3)")
  T.raises(function() m(mf.ones{1, 3, 4}, mf.ones{1, 5, 4}, {causal = true}) end,
           "unknown option 'causal'")
  m(mf.ones{1, 3, 4}, mf.ones{1, 5, 4})
  T.raises(function() m(mf.ones{1, 3, 5}, mf.ones{1, 5, 4}) end,
           "built for query, key, value features 4, 4, 4, got 5, 4, 4")
end)

T.done()
