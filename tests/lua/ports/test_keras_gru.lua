-- Keras 3's keras/src/layers/rnn/gru_test.py (commit 3422977a), line by line with the test's
-- expected values: test_correctness (default reset_after, go_backwards, unroll,
-- reset_after = false, use_bias = false), test_statefulness, test_pass_initial_state,
-- test_pass_return_state and test_masking. Left out: test_basics' regularizers, the legacy
-- 'implementation' argument, a symbolic batch size and the torch cuDNN dispatch.
-- Keras's assertAllClose: atol = rtol = 1e-5.
local T = dofile("tests/lua/harness.lua")
local K = dofile("tests/lua/ports/keras_testing.lua")
local L = mf.layers
local close, arange = function(got, want) K.close(got, want, 1e-5, 1e-5) end, K.arange

local function gru(units, opts) return K.constant_rnn(L.GRU, units, opts) end

T.test("test_correctness", function()
  local sequence = arange(72, {3, 6, 4})
  local default = {{0.5217289, 0.5217289, 0.5217289}, {0.6371659, 0.6371659, 0.6371659},
                   {0.39384964, 0.39384964, 0.3938496}}
  close(gru(3)(sequence), default)
  close(gru(3, {go_backwards = true})(sequence), {{0.24406259, 0.24406259, 0.24406259},
                                                  {0.611516, 0.611516, 0.611516},
                                                  {0.3928808, 0.3928808, 0.3928808}})
  close(gru(3, {unroll = true})(sequence), default)
  close(gru(3, {reset_after = false})(sequence), {{0.51447755, 0.51447755, 0.51447755},
                                                  {0.6426879, 0.6426879, 0.6426879},
                                                  {0.40208298, 0.40208298, 0.40208298}})
  close(gru(3, {use_bias = false})(sequence), {{0.49988455, 0.49988455, 0.49988455},
                                               {0.64701194, 0.64701194, 0.64701194},
                                               {0.4103359, 0.4103359, 0.4103359}})
end)

T.test("test_statefulness", function()
  local sequence = arange(24, {2, 3, 4})
  local layer = gru(4, {stateful = true})
  layer(sequence)
  local want = {{0.29542392, 0.29542392, 0.29542392, 0.29542392},
                {0.5885018, 0.5885018, 0.5885018, 0.5885018}}
  close(layer(sequence), want)
  layer:reset_state()
  layer(sequence)
  close(layer(sequence), want)
end)

T.test("test_pass_initial_state / test_pass_return_state", function()
  local sequence = arange(24, {2, 4, 3})
  local initial_state = arange(4, {2, 2})
  local fwd = {{0.23774096, 0.33508456}, {0.83659905, 1.0227708}}
  local bwd = {{0.13486053, 0.23261218}, {0.78257304, 0.9691353}}
  close(gru(2)(sequence, {initial_state = initial_state}), fwd)
  close(gru(2, {go_backwards = true})(sequence, {initial_state = initial_state}), bwd)
  local output, state = gru(2, {return_state = true})(sequence, {initial_state = initial_state})
  close(output, fwd)
  close(state, output:totable())
  output, state = gru(2, {return_state = true, go_backwards = true})(
    sequence, {initial_state = initial_state})
  close(output, bwd)
  close(state, output:totable())
end)

T.test("test_masking", function()
  local sequence = arange(24, {2, 4, 3})
  local mask = mf.tensor({{true, true, false, true}, {true, false, false, true}}, "bool")
  close(gru(2, {unroll = true})(sequence, {mask = mask}),
        {{0.19393763, 0.19393763}, {0.30818558, 0.30818558}})
  local output = gru(2, {return_sequences = true})(sequence, {mask = mask}):totable()
  close(output[1], {{0.03606692, 0.03606692}, {0.09497581, 0.09497581},
                    {0.09497581, 0.09497581}, {0.19393763, 0.19393763}})
  close(output[2], {{0.16051409, 0.16051409}, {0.16051409, 0.16051409},
                    {0.16051409, 0.16051409}, {0.30818558, 0.30818558}})
  output = gru(2, {return_sequences = true, zero_output_for_mask = true})(
    sequence, {mask = mask}):totable()
  close(output[1], {{0.03606692, 0.03606692}, {0.09497581, 0.09497581},
                    {0.0, 0.0}, {0.19393763, 0.19393763}})
  close(output[2], {{0.16051409, 0.16051409}, {0.0, 0.0}, {0.0, 0.0},
                    {0.30818558, 0.30818558}})
  close(gru(2, {go_backwards = true})(sequence, {mask = mask}),
        {{0.11669192, 0.11669192}, {0.28380975, 0.28380975}})
end)

T.done()
