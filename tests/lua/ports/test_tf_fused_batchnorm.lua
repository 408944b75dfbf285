-- TensorFlow's tensorflow/python/ops/nn_fused_batchnorm_test.py (BatchNormalizationTest),
-- ported test by test for what moonflow's mf.nn.fused_batch_norm is: training mode,
-- channels last (NHWC), float32. Inputs and expected values are in
-- fused_batchnorm_expected.lua, made by gen_fused_batchnorm_expected.py with numpy: the
-- test's own inputs (np.random.seed(1), random_sample in its order) and its own numpy-style
-- references (_training_ref, _inference_ref; the Bessel-corrected variance as the test
-- checks it). Tolerances are the test's (atol 1e-3).
--
-- Where moonflow differs on purpose (help "fused_batch_norm"), the port checks the
-- difference is a clear error and does the test's computation the way moonflow offers:
--   is_training = False: mf.nn.batch_normalization with the given mean and variance;
--   data_format = 'NCHW': transpose to channels last and back;
--   _test_grad_grad: the second derivatives through the fused op (training mode) and
--     through mf.nn.batch_normalization (inference), against numpy central differences of
--     the backward formula (its Jacobians are the test's gradient_checker's).
-- Not ported: the float16 variants (fused_batch_norm takes float32 and float64), the GPU
-- ones, and the shapes [27, 131, 127, 6] (2.7 million values to store); _test_gradient's
-- gradient_checker (numerical Jacobians) is replaced by the gradient of sum(y * dy) against
-- batch norm's backward formula, for the test's shapes [1, 1, 6, 1], [1, 1, 6, 2],
-- [5, 7, 11, 4] and the empty [0, 7, 11, 4].
local T = dofile("tests/lua/harness.lua")
local E = dofile("tests/lua/ports/fused_batchnorm_expected.lua")
local EPSILON = 0.001

-- assertAllClose(want, got, atol): |got - want| <= atol + 1e-6 |want|, NaN equal to NaN
local function close(got, want, atol, what)
  got = type(got) == "userdata" and got:reshape{-1}:totable() or got
  T.eq(#got, #want, 0, what .. ": sizes differ")
  for i, w in ipairs(want) do
    local g = got[i]
    local ok = (w ~= w and g ~= g) or math.abs(g - w) <= atol + 1e-6 * math.abs(w)
    if not ok then
      error(string.format("%s: entry %d is %.9g, expected %.9g", what, i, g, w), 2)
    end
  end
end

local function input(case, key)
  local t = mf.tensor(#case[key] > 0 and case[key] or {0}, "float32")
  return #case[key] > 0 and t:reshape(case.shape) or mf.zeros(case.shape)
end

local function vec(case, key) return mf.tensor(case[key], "float32") end

-- ---- _test_training ---------------------------------------------------------------------

for _, name in ipairs{"training1", "training2", "training5"} do
  T.test("testTrainingShape" .. name:sub(-1) .. " (NHWC, float32)", function()
    local c = E[name]
    local y, mean, var = mf.nn.fused_batch_norm(input(c, "x"), vec(c, "scale"), vec(c, "offset"),
                                                {epsilon = EPSILON})
    T.eq(y.shape, c.shape)
    close(y, c.y, 1e-3, "y")
    close(mean, c.mean, 1e-3, "mean")
    -- This is for Bessel's correction (the test's comment): fused_batch_norm's variance
    -- has it, tf.nn.moments' has not
    close(var, c.var, 1e-3, "var")
  end)
end

T.test("testTrainingShape1 NCHW: transposed around the channels-last op", function()
  local c = E.training1
  local x = input(c, "x")
  T.raises(function() mf.nn.fused_batch_norm(x, vec(c, "scale"), vec(c, "offset"),
                                             {data_format = "NCHW"}) end,
           "fused_batch_norm: unknown option 'data_format'")
  -- the NHWC case's values, laid out NCHW: [1, 1, 6, 1] -> [1, 1, 1, 6]
  local nchw = mf.transpose(x, {1, 4, 2, 3})
  local y = mf.nn.fused_batch_norm(mf.transpose(nchw, {1, 3, 4, 2}), vec(c, "scale"),
                                   vec(c, "offset"), {epsilon = EPSILON})
  close(mf.transpose(mf.transpose(y, {1, 4, 2, 3}), {1, 3, 4, 2}), c.y, 1e-3, "y")
end)

-- ---- _test_inference --------------------------------------------------------------------

for _, name in ipairs{"inference1", "inference5"} do
  T.test("testInferenceShape" .. name:sub(-1) .. " (NHWC, float32)", function()
    local c = E[name]
    local x, scale, offset = input(c, "x"), vec(c, "scale"), vec(c, "offset")
    local mean, var = vec(c, "mean"), vec(c, "var")
    T.raises(function() mf.nn.fused_batch_norm(x, scale, offset, {is_training = false}) end,
             "fused_batch_norm: unknown option 'is_training'")
    local y = mf.nn.batch_normalization(x, mean, var, offset, scale, EPSILON)
    T.eq(y.shape, c.shape)
    close(y, c.y, 1e-3, "y")
  end)
end

-- ---- _test_gradient ---------------------------------------------------------------------

-- y of the case in the mode, and the gradients of sum(y * dy) for x, scale, offset
local function gradients(c, training)
  local x, scale, offset = input(c, "x"), vec(c, "scale"), vec(c, "offset")
  local dy = input(c, "dy")
  local tape = mf.GradientTape()
  tape:watch({x, scale, offset})
  local y
  if training then
    y = mf.nn.fused_batch_norm(x, scale, offset, {epsilon = EPSILON})
  else
    y = mf.nn.batch_normalization(x, vec(c, "mean"), vec(c, "var"), offset, scale, EPSILON)
  end
  local loss = mf.reduce_sum(y * dy)
  tape:stop()
  return table.unpack(tape:gradient(loss, {x, scale, offset}))
end

for _, shape in ipairs{"1", "2", "4", "5"} do
  for _, training in ipairs{true, false} do
    local name = "grad" .. shape .. "_" .. (training and "training" or "inference")
    T.test("testBatchNormGradShape" .. shape .. " is_training=" .. tostring(training), function()
      local c = E[name]
      local dx, dscale, doffset = gradients(c, training)
      T.eq(dx.shape, c.shape)
      close(dx, c.dx, 1e-3, "dx")
      close(dscale, c.dscale, 1e-3, "dscale")
      close(doffset, c.doffset, 1e-3, "doffset")
    end)
  end
end

-- ---- _test_grad_grad --------------------------------------------------------------------

-- gradients(y, [x, scale, offset], grad_y), then the gradients of sum(grad_x * w) for
-- grad_y, x and scale (TensorFlow takes the Jacobians of grad_x for each)
for _, cfg in ipairs{{"1", 1e-2}, {"2", 1e-3}} do
  for _, training in ipairs{true, false} do
    local name = "gradgrad" .. cfg[1] .. "_" .. (training and "training" or "inference")
    T.test("testBatchNormGradGradConfig" .. cfg[1] .. " is_training=" .. tostring(training),
           function()
      local c = E[name]
      local x, dy, scale, offset = input(c, "x"), input(c, "dy"), vec(c, "scale"),
                                   vec(c, "offset")
      local outer = mf.GradientTape()
      outer:watch({x, dy, scale})
      local inner = mf.GradientTape()
      inner:watch({x, scale, offset})
      local y
      if training then
        y = mf.nn.fused_batch_norm(x, scale, offset, {epsilon = EPSILON})
      else
        y = mf.nn.batch_normalization(x, vec(c, "mean"), vec(c, "var"), offset, scale, EPSILON)
      end
      local loss = mf.reduce_sum(y * dy)
      inner:stop()
      local grad_x = inner:gradient(loss, x)
      local second = mf.reduce_sum(grad_x * input(c, "w"))
      outer:stop()
      -- in inference mode grad_x is not a function of x (the test's comment): zeros
      local g = outer:gradient(second, {dy, x, scale}, {unconnected = "zero"})
      close(g[1], c.ddy, cfg[2], "d grad_x / d grad_y")
      close(g[2], c.ddx, cfg[2], "d grad_x / d x")
      close(g[3], c.dscale, cfg[2], "d grad_x / d scale")
    end)
  end
end

T.done()
