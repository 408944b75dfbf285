-- Keras 3's keras/src/layers/normalization/batch_normalization_test.py (commit 3422977a):
-- test_bn_basics (weight counts), test_correctness (every combination of axis, input shape
-- and moving-statistics initializers) and test_trainable_behavior, line by line with the
-- test's expected values. Keras's axis = 1 of a rank-3 or rank-4 input is moonflow's 2 (NCHW
-- for rank 4); moonflow's layer normalizes along the last axis or, for rank 4, axis 2, so the
-- rank-3 axis = 1 cases are left out. One difference, stated in help "layers": the moving
-- variance averages the unbiased batch variance (n / (n - 1) times Keras 3's biased one), so
-- test_correctness compares Keras's 1.0 with (n - 1) / n of the moving variance. Left out: masks
-- (no Masking layer), renorm, autocast and serialization.
local T = dofile("tests/lua/harness.lua")
local K = dofile("tests/lua/ports/keras_testing.lua")
local L = mf.layers

T.test("test_bn_basics: weight counts", function()
  local bn = L.BatchNormalization{center = true, scale = true}
  T.eq(bn(mf.ones{2, 3}, {training = true}).shape, {2, 3})
  T.eq({#bn.trainable_variables, #bn.non_trainable_variables}, {2, 2})
  bn = L.BatchNormalization{center = false, scale = false}
  T.eq(bn(mf.ones{2, 3}, {training = true}).shape, {2, 3})
  T.eq({#bn.trainable_variables, #bn.non_trainable_variables}, {0, 2})
  bn = L.BatchNormalization{center = true, scale = true}
  T.eq(bn(mf.ones{2, 4, 4, 3}, {training = true}).shape, {2, 4, 4, 3})
  T.eq({#bn.trainable_variables, #bn.non_trainable_variables}, {2, 2})
end)

-- mean and (biased) standard deviation of x over every axis but 'axis'
local function moments(x, axis)
  local axes = {}
  for a = 1, x.ndim do if a ~= axis then axes[#axes + 1] = a end end
  local mean = mf.reduce_mean(x, {axis = axes})
  local var = mf.reduce_mean(mf.square(x - mf.reduce_mean(x, {axis = axes, keepdims = true})),
                             {axis = axes})
  return mean, mf.sqrt(var)
end

local cases = {}
for _, c in ipairs{{-1, {5, 2, 3}}, {-1, {5, 3, 3, 2}}, {2, {5, 3, 3, 2}}} do
  for _, mm in ipairs{"zeros", "ones"} do
    for _, mv in ipairs{"zeros", "ones"} do
      cases[#cases + 1] = {axis = c[1], shape = c[2], mm = mm, mv = mv}
    end
  end
end

for _, c in ipairs(cases) do
  T.test(string.format("test_correctness axis %d shape (%s) %s/%s", c.axis,
                       table.concat(c.shape, ", "), c.mm, c.mv), function()
    local layer = L.BatchNormalization{axis = c.axis, momentum = 0,
                                       moving_mean_initializer = c.mm,
                                       moving_variance_initializer = c.mv}
    -- Random data centered on 5.0, variance 10.0
    local x = mf.random.normal(c.shape, {mean = 5.0, stddev = 10.0, seed = 11})
    local out = x
    for _ = 1, 3 do out = layer(out, {training = true}) end
    local axis = c.axis < 0 and #c.shape or c.axis
    local bshape = {}
    for i = 1, #c.shape do bshape[i] = i == axis and c.shape[i] or 1 end
    out = (out - mf.reshape(layer.beta, bshape)) / mf.reshape(layer.gamma, bshape)
    local mean, std = moments(out, axis)
    K.close(mean, mf.zeros_like(mean), 1e-3)
    K.close(std, mf.ones_like(std), 1e-3)
    K.close(layer.moving_mean, mf.zeros{c.shape[axis]}, 1e-3)
    local n = 1
    for i, d in ipairs(c.shape) do if i ~= axis then n = n * d end end
    -- Keras: moving_variance ~ 1.0 (atol 1e-3), here for the biased part of n / (n - 1)
    K.close(layer.moving_variance * ((n - 1) / n), mf.ones{c.shape[axis]}, 1e-3)
    -- Inference done before training shouldn't match.
    local inference_out = layer(x, {training = false})
    local training_out = layer(x, {training = true})
    T.ok(mf.reduce_max(mf.abs(inference_out - training_out)):item() > 1e-3, "not all close")
    -- Since momentum is zero, inference after training should match (up to n / (n - 1)
    -- in the variance: moonflow's documented moving variance)
    training_out = layer(x, {training = true})
    layer.moving_variance:assign(layer.moving_variance * ((n - 1) / n))
    inference_out = layer(x, {training = false})
    K.close(inference_out, training_out, 1e-5, 1e-5)
  end)
end

T.test("test_trainable_behavior", function()
  local layer = L.BatchNormalization{axis = -1, momentum = 0.8, epsilon = 1e-7}
  layer(mf.zeros{1, 4, 4, 3})   -- layer.build((1, 4, 4, 3))
  layer.trainable = false
  T.eq(#layer.variables, 4)
  T.eq(#layer.trainable_variables, 0)
  T.eq(#layer.non_trainable_variables, 4)
  -- Random data centered on 5.0, variance 10.0
  local x = mf.random.normal({200, 4, 4, 3}, {mean = 5.0, stddev = 10.0, seed = 12})
  local out = layer(x, {training = true})
  K.close(out, x)
  layer.trainable = true
  T.eq(#layer.variables, 4)
  T.eq(#layer.trainable_variables, 2)
  T.eq(#layer.non_trainable_variables, 2)
  for _ = 1, 10 do out = layer(x, {training = true}) end
  out = (out - mf.reshape(layer.beta, {1, 1, 1, 3})) / mf.reshape(layer.gamma, {1, 1, 1, 3})
  local mean, std = moments(out, 4)
  K.close(mean, mf.zeros{3}, 1e-3)
  K.close(std, mf.ones{3}, 1e-3)
end)

T.done()
