-- mf.layers as Keras 3 builds and runs them (issue 27 items 2 and 7): LSTM's unit_forget_bias
-- sets the forget gate's bias to 1 (it added 1 to the initializer's value), and
-- layer.trainable = false freezes a layer (and, set on a model, every layer in it) with
-- BatchNormalization in inference mode; the recurrent layers' Keras options beyond the ports
-- (tests/lua/ports/test_keras_lstm.lua, test_keras_gru.lua): parameter counts, dropout, a
-- stateful layer in a graph, gradients through masked steps, errors. Expected values: Keras's
-- lstm_test.py literals and Keras's documented rules.
local T = dofile("tests/lua/harness.lua")
local L = mf.layers
local C = mf.initializers.constant

T.test("LSTM unit_forget_bias: the forget bias is 1, not 1 + the initializer's 0.03", function()
  local lstm = L.LSTM(2, {bias_initializer = C(0.03)})
  lstm(mf.ones{1, 2, 3})
  T.eq(lstm.bias, {0.03, 0.03, 1, 1, 0.03, 0.03, 0.03, 0.03}, 1e-7)
  -- Keras's lstm_test.py test_correctness: the output with the default unit_forget_bias
  local seq = mf.reshape(mf.range(72, {dtype = "float32"}), {3, 6, 4})
  local layer = L.LSTM(3, {kernel_initializer = C(0.01), recurrent_initializer = C(0.02),
                           bias_initializer = C(0.03)})
  T.eq(layer(seq), {{0.6288687, 0.6288687, 0.6288687}, {0.86899155, 0.86899155, 0.86899155},
                    {0.9460773, 0.9460773, 0.9460773}}, 2e-5)
  -- a random initializer is called for (units) and (2 units), as Keras calls it
  local calls = {}
  local rec = L.LSTM(2, {bias_initializer = function(shape, dtype)
    calls[#calls + 1] = shape[1]
    return mf.zeros(shape, dtype)
  end})
  rec(mf.ones{1, 1, 1})
  T.eq(calls, {2, 4})
end)

T.test("trainable = false: no trainable Variables, summary counts them non-trainable", function()
  local dense, bn = L.Dense(3), L.BatchNormalization()
  local m = L.Sequential{dense, bn}
  m(mf.ones{2, 3})
  T.eq({#m.trainable_variables, #bn.trainable_variables, bn.trainable}, {4, 2, true})
  bn.trainable = false
  T.eq({#m.trainable_variables, #bn.trainable_variables, #bn.non_trainable_variables},
       {2, 0, 4})
  T.eq(select(2, m:count_params()), 12)
  m.trainable = false   -- Keras sets it on every layer inside
  T.eq({#m.trainable_variables, dense.trainable}, {0, false})
  m.trainable = true
  T.eq({#m.trainable_variables, bn.trainable}, {4, true})
  T.raises(function() bn.trainable = "no" end,
           "(BatchNormalization): 'trainable' must be a boolean, got string")
end)

T.test("a frozen BatchNormalization runs in inference mode with training = true", function()
  local bn = L.BatchNormalization{momentum = 0.5}
  local x = mf.tensor{{1, 10}, {3, 20}}
  bn(x, {training = true})
  local mm = bn.moving_mean:read_value():totable()
  bn.trainable = false
  local y = bn(x, {training = true})
  T.eq(bn.moving_mean, mm)   -- no update
  local mv = bn.moving_variance:read_value()
  local want = (x - bn.moving_mean) / mf.sqrt(mv + 1e-3)   -- gamma 1, beta 0
  T.eq(y, want, 1e-5)
end)

T.test("BatchNormalization takes Keras's four initializers", function()
  local bn = L.BatchNormalization{moving_mean_initializer = "ones",
                                  moving_variance_initializer = mf.initializers.constant(4),
                                  gamma_initializer = "zeros", beta_initializer = "ones"}
  T.eq(bn(mf.tensor{{1, 2}}), {{1, 1}})   -- gamma 0, beta 1
  T.eq({bn.moving_mean:totable(), bn.moving_variance:totable()}, {{1, 1}, {4, 4}})
  T.raises(function() L.BatchNormalization{gamma_initializer = 5} end,
           "BatchNormalization: gamma_initializer must be a name")
end)

T.test("fit leaves a frozen layer's weights as they were", function()
  local D = mf.data.Dataset
  local first, second = L.Dense(4, {name = "frozen_dense"}), L.Dense(1)
  local m = L.Sequential{first, second}
  m(mf.ones{1, 3})
  first.trainable = false
  local k0 = first.kernel:read_value():totable()
  local s0 = second.kernel:read_value():totable()
  local x = mf.random.normal({16, 3}, {seed = 1})
  m:fit(D.from_tensor_slices{x, mf.reduce_sum(x, {axis = 2, keepdims = true})}:batch(8),
        {loss = "mean_squared_error", optimizer = "sgd", epochs = 2, verbose = 0})
  T.eq(first.kernel, k0)
  T.ok(mf.reduce_max(mf.abs(second.kernel - mf.tensor(s0))):item() > 0, "the other layer trains")
end)

T.test("recurrent layers: Keras's parameter counts without bias or with reset_after = false",
       function()
  local x = mf.ones{2, 3, 5}
  local function count(layer) layer(x); return (layer:count_params()) end
  T.eq(count(L.GRU(4, {reset_after = false})), 3 * (5 * 4 + 4 * 4 + 4))
  T.eq(count(L.GRU(4)), 3 * (5 * 4 + 4 * 4 + 2 * 4))
  T.eq(count(L.LSTM(4, {use_bias = false})), 4 * (5 * 4 + 4 * 4))
  T.eq(count(L.SimpleRNN(4, {use_bias = false})), 5 * 4 + 4 * 4)
end)

T.test("recurrent dropout: only with training = true; one mask per call", function()
  local x = mf.random.normal({4, 5, 3}, {seed = 2})
  local layer = L.SimpleRNN(6, {dropout = 0.5, recurrent_dropout = 0.5, seed = 7})
  local plain = layer(x)
  T.eq(layer(x, {training = false}), plain)
  local y = layer(x, {training = true})
  T.ok(mf.reduce_max(mf.abs(y - plain)):item() > 1e-3, "dropout changes the output")
  -- rate 0: the same computation
  local same = L.GRU(3, {dropout = 0, kernel_initializer = C(0.1),
                         recurrent_initializer = C(0.2)})
  T.eq(same(x, {training = true}), same(x), 1e-7)
end)

T.test("stateful in a graph: each run starts from the last run's states", function()
  local g = mf.Graph()
  local layer = L.SimpleRNN(2, {stateful = true, kernel_initializer = C(0.1),
                                recurrent_initializer = C(0.2)})
  local eager_layer = L.SimpleRNN(2, {stateful = true, kernel_initializer = C(0.1),
                                      recurrent_initializer = C(0.2)})
  local x = mf.reshape(mf.range(12, {dtype = "float32"}), {2, 3, 2}) / 10
  local y, init
  g:as_default(function()
    y = layer(mf.constant(x))
    init = mf.global_variables_initializer()
  end)
  local s = mf.Session(g)
  s:run(init)
  local first, second = s:run(y), s:run(y)
  T.eq(first, eager_layer(x), 1e-6)
  T.eq(second, eager_layer(x), 1e-6)
  T.ok(mf.reduce_max(mf.abs(first - second)):item() > 1e-4, "the state carries over")
end)

T.test("stateful inside mf.trace: each call starts from the last call's states", function()
  local function make()
    return L.SimpleRNN(2, {stateful = true, kernel_initializer = C(0.1),
                           recurrent_initializer = C(0.2)})
  end
  local traced_layer, eager_layer = make(), make()
  local f = mf.trace(function(v) return traced_layer(v) end)
  local x = mf.ones{2, 3, 2}
  T.eq(f(x), eager_layer(x), 1e-6)
  T.eq(f(x), eager_layer(x), 1e-6)   -- the second call's states differ from the first's
end)

T.test("masked steps pass no gradient to their inputs", function()
  local x = mf.random.normal({2, 4, 3}, {seed = 3})
  local layer = L.LSTM(2)
  local mask = mf.tensor({{true, true, false, true}, {true, false, false, false}}, "bool")
  local g = mf.grad(function(v) return mf.reduce_sum(layer(v, {mask = mask})) end)(x)
  local gt = g:totable()
  T.eq(gt[1][3], {0, 0, 0})
  T.eq(gt[2][2], {0, 0, 0}); T.eq(gt[2][4], {0, 0, 0})
  T.ok(math.abs(gt[1][4][1]) > 0, "an unmasked step has a gradient")
end)

T.test("Embedding{mask_zero}: id 0 is padding; its mask makes an LSTM skip those steps", function()
  local e = L.Embedding(3, 2, {mask_zero = true})
  local ids = mf.tensor({{1, 2, 0}, {3, 0, 0}}, "int64")
  local x = e(ids)
  local rows = e.embeddings:read_value():totable()
  T.eq(x, {{rows[1], rows[2], {0, 0}}, {rows[3], {0, 0}, {0, 0}}})
  T.eq(e:compute_mask(ids), {{true, true, false}, {true, false, false}})
  T.eq(L.Embedding(3, 2):compute_mask(ids), nil)
  -- the ids are checked with or without mask_zero (API fuzzer, seeds 2 and 4)
  T.raises(function() L.Embedding(3, 2):compute_mask() end, "compute_mask: expected ids, got nil")
  T.raises(function() L.Embedding(3, 2):compute_mask({bogus = 1}) end,
           "compute_mask: expected ids (an array of integers)")
  T.raises(function() L.Embedding(3, 2):compute_mask(ids, coroutine.create(print)) end,
           "compute_mask: mask must be a tensor or nil, got thread")
  -- Keras: trailing masked steps leave the last valid step's output
  local lstm = L.LSTM(2)
  local y = lstm(x, {mask = e:compute_mask(ids)}):totable()
  T.eq(y[1], lstm(e(mf.tensor({{1, 2}}, "int64")))[1], 1e-6)
  T.eq(y[2], lstm(e(mf.tensor({{3}}, "int64")))[1], 1e-6)
  T.raises(function() L.Embedding(3, 2, {mask_zero = 1}) end,
           "option 'mask_zero' must be a boolean")
end)

T.test("recurrent layers: bad options and call arguments are clear errors", function()
  T.raises(function() L.LSTM(2, {dropout = 1}) end,
           "LSTM: option 'dropout' must be a number in [0, 1)")
  T.raises(function() L.GRU(2, {go_backwards = "yes"}) end,
           "option 'go_backwards' must be a boolean")
  T.raises(function() L.LSTM(2, {reset_after = false}) end, "LSTM: unknown option 'reset_after'")
  local layer = L.LSTM(2)
  local x = mf.ones{2, 3, 1}
  T.raises(function() layer(x, {mask = mf.ones{2, 4}}) end,
           "option 'mask' must be (batch, time) booleans for input of shape (2, 3, 1)")
  T.raises(function() layer(x, {initial_state = {mf.zeros{2, 2}}}) end,
           "option 'initial_state' must be an array of 2 state tensors {h0, c0}, got 1 values")
  T.raises(function() layer:reset_state() end, "reset_state: the layer is not stateful")
  T.raises(function() layer:reset_state(1) end, "bad argument #2 to 'reset_state'")
  local st = L.GRU(2, {stateful = true})
  st(x)
  T.raises(function() st(mf.ones{3, 3, 1}) end,
           "stateful: built for batches of 2, got shape (3, 3, 1)")
  -- a failed call leaves no initial state behind for the next one
  T.raises(function()
    layer(mf.ones{2, 3, 5}, {initial_state = {mf.zeros{2, 2}, mf.zeros{2, 2}}})
  end, "expected 1 input features")
  T.eq(layer(x).shape, {2, 2})
end)

T.done()
