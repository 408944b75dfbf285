-- test_sequential_mask.lua — Keras's masks in a Sequential (issue #27): an
-- Embedding{mask_zero} hands its mask (ids ~= 0) to the next layer; a
-- recurrent layer skips masked steps and, with return_sequences, hands the
-- mask on; Dense, Dropout, Activation and LayerNormalization pass it on;
-- other layers drop it; BatchNormalization refuses it. Expected values:
-- PyTorch's LSTMCell stepped with Keras's masking rule
-- (tests/lua/data/mask_torch.lua, written by gen_mask_torch.py beside it).
local T = dofile("tests/lua/harness.lua")
local L = mf.layers
local ref = dofile("tests/lua/data/mask_torch.lua")

local ids = mf.tensor(ref.ids, "int64")

local function set(layer, prefix)
  for _, k in ipairs{"kernel", "recurrent_kernel", "bias"} do
    if ref[prefix .. k] then layer[k]:assign(mf.tensor(ref[prefix .. k])) end
  end
end

-- Embedding -> LSTM [-> LSTM -> Dense], built and given the generator's weights.
local function model(stacked)
  local emb = L.Embedding(6, 3, {mask_zero = true})
  local list = {emb, L.LSTM(4, {return_sequences = stacked})}
  if stacked then
    list[3], list[4] = L.LSTM(3), L.Dense(2)
  end
  local m = L.Sequential(list)
  m(ids)
  emb.embeddings:assign(mf.tensor(ref.embeddings))
  set(list[2], "lstm1_")
  if stacked then set(list[3], "lstm2_"); set(list[4], "dense_") end
  return m, list
end

T.test("Embedding{mask_zero} + LSTM: the mask reaches the LSTM (PyTorch, Keras's rule)", function()
  local m, list = model(false)
  local y = m(ids)
  T.eq(y, ref.single, 1e-5)
  -- the same as handing the mask over by hand
  local emb, lstm = list[1], list[2]
  T.eq(y, lstm(emb(ids), {mask = emb:compute_mask(ids)}), 1e-6)
  -- without the mask, the padded steps change the output (the test can fail)
  local unmasked = mf.reduce_max(mf.abs(lstm(emb(ids)) - y)):item()
  T.ok(unmasked > 1e-2, "unmasked differs by only " .. unmasked)
end)

T.test("LSTM{return_sequences} hands the mask on to the next LSTM, then Dense", function()
  local m = model(true)
  T.eq(m(ids), ref.stacked, 1e-5)
  T.eq(m(ids, {training = true}), ref.stacked, 1e-5)   -- no dropout: the same
  -- in a traced function too
  local f = mf.trace(function(x) return m(x) end)
  T.eq(f(ids), ref.stacked, 1e-5)
end)

T.test("Dense, Dropout, Activation, LayerNormalization and a Sequential pass it on", function()
  -- fixed weights: with some random ones the padded steps barely move the
  -- output, and the "unmasked differs" check below would fail by chance
  mf.random.seed(7)
  local emb = L.Embedding(6, 3, {mask_zero = true})
  local lstm = L.LSTM(2)
  local m = emb:compute_mask(ids)
  for _, mid in ipairs{L.Dense(3), L.Dropout(0.5), L.Activation("tanh"),
                       L.LayerNormalization(), L.Sequential{L.Dense(3), L.Dense(3)}} do
    local model = L.Sequential{emb, mid, lstm}
    local y = model(ids)
    T.eq(y, lstm(mid(emb(ids)), {mask = m}), 1e-6, mid.name)
    T.ok(mf.reduce_max(mf.abs(lstm(mid(emb(ids))) - y)):item() > 1e-3, "unmasked is the same")
  end
  -- a Sequential's own mask option (Keras's call(inputs, mask)) starts the chain
  local inner = L.Sequential{L.Dense(3), L.LSTM(2)}
  local x = emb(ids)
  T.eq(inner(x, {mask = m}), inner.layers[2](inner.layers[1](x), {mask = m}), 1e-6)
end)

T.test("other layers drop the mask; BatchNormalization refuses it; compute_mask", function()
  local emb = L.Embedding(6, 3, {mask_zero = true})
  local x, m = emb(ids), emb:compute_mask(ids)
  T.eq(L.LSTM(2):compute_mask(x, m), nil)
  T.eq(L.GRU(2, {return_sequences = true}):compute_mask(x, m), m)
  T.eq(L.SimpleRNN(2, {return_sequences = true}):compute_mask(x), nil)
  T.eq(L.Embedding(6, 3):compute_mask(ids), nil)
  -- an LSTM without return_sequences ends the mask: the next LSTM sees every step
  local rs = L.Sequential{L.Embedding(6, 3, {mask_zero = true}), L.LSTM(2), L.Dense(2)}
  T.eq(rs(ids).shape, {3, 2})
  -- an Embedding without mask_zero makes no mask: the LSTM sees every step
  local plain_emb, lstm = L.Embedding(6, 3), L.LSTM(2)
  local no_zeros = mf.tensor({{1, 2, 3, 4, 5}, {6, 5, 4, 3, 2}}, "int64")
  T.eq(L.Sequential{plain_emb, lstm}(no_zeros), lstm(plain_emb(no_zeros)), 1e-6)
  local bn = L.Sequential{L.Embedding(6, 3, {mask_zero = true}), L.BatchNormalization()}
  T.raises(function() bn(ids) end, "the input has a mask (from Embedding{mask_zero}")
  T.raises(function() L.LSTM(2):compute_mask(x, "m") end,
           "compute_mask: mask must be a tensor or nil, got string")
  T.raises(function() L.Sequential{L.Dense(2)}(x, {mask = "m"}) end,
           "option 'mask' must be a tensor, got string")
end)

T.done()
