-- mf.layers as Keras 3 builds and runs them (issue 27 items 2 and 7): LSTM's unit_forget_bias
-- sets the forget gate's bias to 1 (it added 1 to the initializer's value), and
-- layer.trainable = false freezes a layer (and, set on a model, every layer in it) with
-- BatchNormalization in inference mode. Expected values: Keras's lstm_test.py literals and
-- Keras's documented rules.
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

T.done()
