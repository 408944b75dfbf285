-- TensorFlow's tensorflow/python/kernel_tests/clip_ops_test.py, line by line, with the test's
-- own expected values (np_ans). IndexedSlices cases have no moonflow counterpart (dense
-- gradients only) and are left out.
local T = dofile("tests/lua/harness.lua")

-- assertAllClose: |got - want| <= 1e-6 + 1e-6 |want|, NaN equal to NaN
local function close(got, want)
  if type(got) == "userdata" then got = got:totable() end
  if type(want) == "number" then got, want = {got}, {want} end
  for i, w in ipairs(want) do
    if type(w) == "table" then
      close(got[i], w)
    elseif not (w ~= w and got[i] ~= got[i]) and
           not (w == got[i] or math.abs(got[i] - w) <= 1e-6 + 1e-6 * math.abs(w)) then
      error(string.format("entry %d: expected %.9g, got %.9g", i, w, got[i]), 2)
    end
  end
end

local function constant(v, shape, dtype)
  return mf.constant(v, {shape = shape, dtype = dtype or "float32"})
end

T.test("testClipByValue", function()
  local x = constant({-5.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3})
  local clip_value = 4.4
  close(mf.clip_by_value(x, -clip_value, clip_value), {{-4.4, 2.0, 3.0}, {4.0, 4.4, 4.4}})
end)

T.test("testClipByValue0Type..3Type: scalar and tensor bounds, float and int dtypes", function()
  for _, dtype in ipairs{"float32", "float64", "int32", "int64"} do
    local x = constant({1, 2, 3, 4, 5, 6}, {2, 3}, dtype)
    close(mf.clip_by_value(x, 2, 4), {{2, 2, 3}, {4, 4, 4}})
    close(mf.clip_by_value(x, constant({2, 2, 2, 3, 3, 3}, {2, 3}, dtype), 4),
          {{2, 2, 3}, {4, 4, 4}})
    close(mf.clip_by_value(x, 4, constant({6, 6, 6, 6, 6, 6}, {2, 3}, dtype)),
          {{4, 4, 4}, {4, 5, 6}})
    close(mf.clip_by_value(x, constant({2, 2, 2, 5, 5, 5}, {2, 3}, dtype),
                           constant({5, 5, 5, 7, 7, 7}, {2, 3}, dtype)),
          {{2, 2, 3}, {5, 5, 6}})
  end
end)

T.test("testClipByValueBadShape", function()
  local x = constant({-5.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3, 1})
  -- Use a nonsensical shape.
  local clip = mf.constant{1.0, 2.0}
  T.raises(function() mf.clip_by_value(x, -clip, clip) end, "clip_by_value")
  T.raises(function() mf.clip_by_value(x, 1.0, clip) end, "clip_by_value")
end)

T.test("testClipByValueNonFinite", function()
  local x = mf.constant{0 / 0, math.huge, -math.huge}
  close(mf.clip_by_value(x, -4.0, 4.0), {0 / 0, 4.0, -4.0})
end)

T.test("testClipByNormClipped / NotClipped / Zero", function()
  local x = constant({-3.0, 0.0, 0.0, 4.0, 0.0, 0.0}, {2, 3})
  -- Norm of x = sqrt(3^2 + 4^2) = 5
  close(mf.clip_by_norm(x, 4.0), {{-2.4, 0.0, 0.0}, {3.2, 0.0, 0.0}})
  close(mf.clip_by_norm(x, mf.constant(4.0)), {{-2.4, 0.0, 0.0}, {3.2, 0.0, 0.0}})
  close(mf.clip_by_norm(x, 6.0), {{-3.0, 0.0, 0.0}, {4.0, 0.0, 0.0}})
  close(mf.clip_by_norm(mf.zeros{2, 3}, 6.0), {{0, 0, 0}, {0, 0, 0}})
end)

T.test("testClipByNormGradientZeros", function()
  local g = mf.Graph()
  local grad
  g:as_default(function()
    local x = mf.zeros{3}
    local b = mf.clip_by_norm(x, 1.)
    grad = mf.gradients(b, x)[1]   -- a constant made in the graph is a graph tensor
  end)
  T.eq(mf.Session(g):run(grad), {1., 1., 1.})
end)

T.test("testClipByNormBadShape", function()
  local x = constant({-3.0, 0.0, 0.0, 4.0, 0.0, 0.0}, {2, 3, 1})
  T.raises(function() mf.clip_by_norm(x, mf.constant{1.0, 2.0}) end, "clip_by_norm")
end)

T.test("testClipByNormClippedWithDim0 / Dim1 / NotClippedWithAxes", function()
  local x = constant({-3.0, 0.0, 0.0, 4.0, 0.0, 3.0}, {2, 3})
  -- Norm of x[:, 0] = sqrt(3^2 + 4^2) = 5, x[:, 2] = 3 (TF's axis 0 is moonflow's 1)
  close(mf.clip_by_norm(x, 4.0, {1}), {{-2.4, 0.0, 0.0}, {3.2, 0.0, 3.0}})
  -- Norm of x[0, :] = 3, x[1, :] = sqrt(3^2 + 4^2) = 5
  close(mf.clip_by_norm(x, 4.0, {2}), {{-3.0, 0.0, 0.0}, {3.2, 0.0, 2.4}})
  close(mf.clip_by_norm(x, 6.0, {2}), {{-3.0, 0.0, 0.0}, {4.0, 0.0, 3.0}})
end)

T.test("testClipByGlobalNormClipped / Tensor / SupportsNone / NotClipped / Zero", function()
  local x0 = constant({-2.0, 0.0, 0.0, 4.0, 0.0, 0.0}, {2, 3})
  local x1 = mf.constant{1.0, -2.0}
  -- Global norm of x0 and x1 = sqrt(1 + 4^2 + 2^2 + 2^2) = 5
  for _, clip_norm in ipairs{4.0, mf.constant(4.0)} do
    local ans, norm = mf.clip_by_global_norm({x0, x1}, clip_norm)
    close(norm, 5.0)
    close(ans[1], {{-1.6, 0.0, 0.0}, {3.2, 0.0, 0.0}})
    close(ans[2], {0.8, -1.6})
  end
  local ans, norm = mf.clip_by_global_norm({x0, nil, x1, nil, n = 4}, 4.0)
  T.ok(ans[2] == nil and ans[4] == nil, "None passes through")
  close(norm, 5.0)
  close(ans[1], {{-1.6, 0.0, 0.0}, {3.2, 0.0, 0.0}})
  close(ans[3], {0.8, -1.6})
  ans, norm = mf.clip_by_global_norm({x0, x1}, 6.0)
  close(norm, 5.0)
  close(ans[1], {{-2.0, 0.0, 0.0}, {4.0, 0.0, 0.0}})
  close(ans[2], {1.0, -2.0})
  ans, norm = mf.clip_by_global_norm({mf.zeros{2, 3}, mf.zeros{2}}, 6.0)
  close(norm, 0.0)
  close(ans[1], {{0, 0, 0}, {0, 0, 0}})
end)

T.test("testClipByGlobalNormInf: all NaN", function()
  local x0 = constant({-2.0, 0.0, math.huge, 4.0, 0.0, 0.0}, {2, 3})
  local x1 = mf.constant{1.0, -2.0}
  local ans, norm = mf.clip_by_global_norm({x0, x1}, 6.0)
  T.eq(norm:item(), math.huge)
  close(ans[1], {{0 / 0, 0 / 0, 0 / 0}, {0 / 0, 0 / 0, 0 / 0}})
  close(ans[2], {0 / 0, 0 / 0})
end)

T.test("testClipByAverageNorm: Clipped / ClippedTensor / NotClipped / Zero", function()
  local x = constant({-3.0, 0.0, 0.0, 4.0, 0.0, 0.0}, {2, 3})
  -- Average norm of x = sqrt(3^2 + 4^2) / 6 = 0.83333333
  close(mf.clip_by_average_norm(x, 0.8), {{-2.88, 0.0, 0.0}, {3.84, 0.0, 0.0}})
  close(mf.clip_by_average_norm(x, mf.constant(0.8)), {{-2.88, 0.0, 0.0}, {3.84, 0.0, 0.0}})
  close(mf.clip_by_average_norm(x, 0.9), {{-3.0, 0.0, 0.0}, {4.0, 0.0, 0.0}})
  close(mf.clip_by_average_norm(mf.zeros{2, 3}, 0.9), {{0, 0, 0}, {0, 0, 0}})
end)

T.test("testClipByAverageNormReplacedWithClipByNorm", function()
  local x = constant({-3.0, 0.0, 0.0, 4.0, 0.0, 0.0}, {2, 3})
  local clip_norm = mf.constant(0.8)
  local with_norm = mf.clip_by_average_norm(x, clip_norm)
  local without_norm = mf.clip_by_norm(x, clip_norm * mf.cast(mf.size(x), "float32"))
  close(with_norm, without_norm:totable())
end)

T.test("clip_by_average_norm on a placeholder with unknown dims", function()
  local g = mf.Graph()
  local x, y
  g:as_default(function()
    x = mf.placeholder("float32", {-1, 3})
    y = mf.clip_by_average_norm(x, 0.8)
  end)
  close(mf.Session(g):run(y, {[x] = {{-3, 0, 0}, {4, 0, 0}}}), {{-2.88, 0, 0}, {3.84, 0, 0}})
end)

T.test("testClipByValueEmptyTensor", function()
  local g = mf.Graph()
  local fetches, zero
  g:as_default(function()
    zero = mf.placeholder("float32")   -- shape=None
    fetches = {mf.clip_by_value(zero, zero, zero), mf.clip_by_value(zero, 1.0, 1.0),
               mf.clip_by_value(zero, zero, 1.0), mf.clip_by_value(zero, 1.0, zero)}
  end)
  local r = mf.Session(g):run(fetches, {[zero] = mf.zeros{7, 0}})
  T.eq(r[1].shape, {7, 0})
end)

T.done()
