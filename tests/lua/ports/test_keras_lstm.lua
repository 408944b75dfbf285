-- Keras 3's keras/src/layers/rnn/lstm_test.py (commit 3422977a), line by line with the test's
-- expected values: test_basics (shapes and weight counts; regularizers are left out: moonflow
-- has none), test_correctness (default, go_backwards, unroll, unit_forget_bias = false,
-- use_bias = false; 'implementation' 1 and 2 are one computation here), test_statefulness,
-- test_pass_initial_state and test_masking. Keras's assertAllClose: atol = rtol = 1e-5.
local T = dofile("tests/lua/harness.lua")
local K = dofile("tests/lua/ports/keras_testing.lua")
local L = mf.layers
local close, arange = function(got, want) K.close(got, want, 1e-5, 1e-5) end, K.arange

local function lstm(units, opts) return K.constant_rnn(L.LSTM, units, opts) end

T.test("test_basics: shapes and weight counts (dropout, recurrent_dropout, sequences)", function()
  local x = mf.random.normal({3, 2, 4}, {seed = 1})
  local layer = L.LSTM(3, {dropout = 0.5})
  T.eq(layer(x, {training = true}).shape, {3, 3})
  T.eq({#layer.trainable_variables, #layer.non_trainable_variables}, {3, 0})
  layer = L.LSTM(3, {dropout = 0.5, recurrent_dropout = 0.5})
  T.eq(layer(x, {training = true}).shape, {3, 3})
  T.eq({#layer.trainable_variables, #layer.non_trainable_variables}, {3, 0})
  layer = L.LSTM(3, {return_sequences = true})
  T.eq(layer(x).shape, {3, 2, 3})
  T.eq({#layer.trainable_variables, #layer.non_trainable_variables}, {3, 0})
end)

T.test("test_correctness", function()
  local sequence = arange(72, {3, 6, 4})
  close(lstm(3)(sequence), {{0.6288687, 0.6288687, 0.6288687},
                            {0.86899155, 0.86899155, 0.86899155},
                            {0.9460773, 0.9460773, 0.9460773}})
  close(lstm(3, {go_backwards = true})(sequence), {{0.35622165, 0.35622165, 0.35622165},
                                                   {0.74789524, 0.74789524, 0.74789524},
                                                   {0.8872726, 0.8872726, 0.8872726}})
  close(lstm(3, {unroll = true})(sequence), {{0.6288687, 0.6288687, 0.6288687},
                                             {0.86899155, 0.86899155, 0.86899155},
                                             {0.9460773, 0.9460773, 0.9460773}})
  close(lstm(3, {unit_forget_bias = false})(sequence), {{0.57019705, 0.57019705, 0.57019705},
                                                        {0.8661914, 0.8661914, 0.8661914},
                                                        {0.9459622, 0.9459622, 0.9459622}})
  close(lstm(3, {use_bias = false})(sequence), {{0.54986924, 0.54986924, 0.54986924},
                                                {0.86226785, 0.86226785, 0.86226785},
                                                {0.9443936, 0.9443936, 0.9443936}})
end)

T.test("test_statefulness", function()
  local sequence = arange(24, {2, 3, 4})
  local layer = lstm(4, {stateful = true})
  layer(sequence)
  local want = {{0.3124785, 0.3124785, 0.3124785, 0.3124785},
                {0.6863672, 0.6863672, 0.6863672, 0.6863672}}
  close(layer(sequence), want)
  layer:reset_state()
  layer(sequence)
  close(layer(sequence), want)
end)

T.test("test_pass_initial_state", function()
  local sequence = arange(24, {2, 4, 3})
  local initial_state = {arange(4, {2, 2}), arange(4, {2, 2})}
  close(lstm(2)(sequence, {initial_state = initial_state}),
        {{0.20574439, 0.3558822}, {0.64930826, 0.66276}})
  close(lstm(2, {go_backwards = true})(sequence, {initial_state = initial_state}),
        {{0.13281618, 0.2790356}, {0.5839337, 0.5992567}})
end)

T.test("test_masking", function()
  local sequence = arange(24, {2, 4, 3})
  local mask = mf.tensor({{true, true, true, false}, {true, true, false, false}}, "bool")
  close(lstm(2, {unroll = true})(sequence, {mask = mask}),
        {{0.11755939, 0.11755939}, {0.28556206, 0.28556206}})
  local output = lstm(2, {return_sequences = true})(sequence, {mask = mask}):totable()
  close(output[1], {{0.01588910, 0.01588910}, {0.05552048, 0.05552048},
                    {0.11755939, 0.11755939}, {0.11755939, 0.11755939}})
  close(output[2], {{0.14185596, 0.14185596}, {0.28556206, 0.28556206},
                    {0.28556206, 0.28556206}, {0.28556206, 0.28556206}})
  output = lstm(2, {return_sequences = true, zero_output_for_mask = true})(
    sequence, {mask = mask}):totable()
  close(output[1], {{0.01588910, 0.01588910}, {0.05552048, 0.05552048},
                    {0.11755939, 0.11755939}, {0.0, 0.0}})
  close(output[2], {{0.14185596, 0.14185596}, {0.28556206, 0.28556206},
                    {0.0, 0.0}, {0.0, 0.0}})
  local backwards_mask = mf.tensor({{false, true, true, true}, {false, false, true, true}},
                                   "bool")
  close(lstm(2, {go_backwards = true})(sequence, {mask = backwards_mask}),
        {{0.15341201, 0.15341201}, {0.3844719, 0.3844719}})
end)

T.done()
