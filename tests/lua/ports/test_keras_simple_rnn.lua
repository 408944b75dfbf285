-- Keras 3's keras/src/layers/rnn/simple_rnn_test.py (commit 3422977a), line by line with the
-- test's expected values: test_basics (shapes and weight counts; regularizers left out),
-- test_correctness (default, unroll, go_backwards), test_statefulness,
-- test_pass_initial_state and test_masking. Keras's assertAllClose: atol = rtol = 1e-5.
local T = dofile("tests/lua/harness.lua")
local K = dofile("tests/lua/ports/keras_testing.lua")
local L = mf.layers
local close, arange = function(got, want) K.close(got, want, 1e-5, 1e-5) end, K.arange

local function rnn(units, opts) return K.constant_rnn(L.SimpleRNN, units, opts) end

local function rows(v, n)   -- n copies of v in a row, as the test's arrays are
  local r = {}
  for i = 1, n do r[i] = v end
  return r
end

T.test("test_basics: shapes and weight counts", function()
  local x = mf.random.normal({3, 2, 4}, {seed = 4})
  local layer = L.SimpleRNN(3, {dropout = 0.5, recurrent_dropout = 0.5})
  T.eq(layer(x, {training = true}).shape, {3, 3})
  T.eq({#layer.trainable_variables, #layer.non_trainable_variables}, {3, 0})
  layer = L.SimpleRNN(3, {return_sequences = true})
  T.eq(layer(x).shape, {3, 2, 3})
end)

T.test("test_correctness", function()
  local sequence = arange(24, {2, 3, 4})
  local fwd = {rows(0.405432, 4), rows(0.73605347, 4)}
  local bwd = {rows(0.11144729, 4), rows(0.5528889, 4)}
  close(rnn(4)(sequence), fwd)
  close(rnn(4, {unroll = true})(sequence), fwd)
  close(rnn(4, {go_backwards = true})(sequence), bwd)
  close(rnn(4, {go_backwards = true, unroll = true})(sequence), bwd)
end)

T.test("test_statefulness", function()
  local sequence = arange(24, {2, 3, 4})
  local layer = rnn(4, {stateful = true})
  layer(sequence)
  local want = {rows(0.40559256, 4), rows(0.7361247, 4)}
  close(layer(sequence), want)
  layer:reset_state()
  layer(sequence)
  close(layer(sequence), want)
end)

T.test("test_pass_initial_state", function()
  local sequence = arange(24, {2, 4, 3})
  local initial_state = arange(8, {2, 4})
  close(rnn(4)(sequence, {initial_state = initial_state}),
        {rows(0.33621645, 4), rows(0.6262637, 4)})
  close(rnn(4, {go_backwards = true})(sequence, {initial_state = initial_state}),
        {rows(0.07344437, 4), rows(0.43043602, 4)})
end)

T.test("test_masking", function()
  local sequence = arange(24, {2, 4, 3})
  local mask = mf.tensor({{true, true, false, true}, {true, false, false, true}}, "bool")
  close(rnn(4, {unroll = true})(sequence, {mask = mask}),
        {rows(0.32951632, 4), rows(0.61799484, 4)})
  local output = rnn(2, {return_sequences = true})(sequence, {mask = mask}):totable()
  close(output[1], {rows(0.0599281, 2), rows(0.15122814, 2), rows(0.15122814, 2),
                    rows(0.32394567, 2)})
  close(output[2], {rows(0.3969304, 2), rows(0.3969304, 2), rows(0.3969304, 2),
                    rows(0.608085, 2)})
  output = rnn(2, {return_sequences = true, zero_output_for_mask = true})(
    sequence, {mask = mask}):totable()
  close(output[1], {rows(0.0599281, 2), rows(0.15122814, 2), {0, 0}, rows(0.32394567, 2)})
  close(output[2], {rows(0.3969304, 2), {0, 0}, {0, 0}, rows(0.608085, 2)})
  close(rnn(4, {go_backwards = true})(sequence, {mask = mask}),
        {rows(0.07376196, 4), rows(0.43645123, 4)})
end)

T.done()
