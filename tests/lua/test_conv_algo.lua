-- test_conv_algo.lua — choosing the convolution kernel from Lua: the
-- {algorithm} option of conv2d and its backprops, mf.config{conv_algorithm},
-- the profiler's winograd GEMMs, and a first layer whose input needs no
-- gradient computing no Conv2DBackpropInput (eager tape, minimize, graph).
-- Accuracy against a float64 reference is tests/unit/test_conv_algo.c.
local T = dofile("tests/lua/harness.lua")

mf.random.seed(7)
local x = mf.random.normal{2, 9, 7, 16}
local w = mf.random.normal{3, 3, 16, 24}

local function max_abs_diff(a, b) return mf.reduce_max(mf.abs(a - b)):item() end

T.test("every algorithm gives the same convolution (float32 rounding apart)", function()
  local ref = mf.nn.conv2d(x, w, 1, "SAME", {algorithm = "im2col"})
  for _, a in ipairs{"auto", "winograd", "direct"} do
    local y = mf.nn.conv2d(x, w, 1, "SAME", {algorithm = a})
    T.ok(max_abs_diff(y, ref) < 1e-3, a)
  end
  local dy = mf.random.normal(ref.shape)
  local dx = mf.nn.conv2d_backprop_input(x.shape, w, dy, 1, "SAME", {algorithm = "im2col"})
  local dw = mf.nn.conv2d_backprop_filter(x, w.shape, dy, 1, "SAME", {algorithm = "im2col"})
  for _, a in ipairs{"winograd", "direct"} do
    T.ok(max_abs_diff(mf.nn.conv2d_backprop_input(x.shape, w, dy, 1, "SAME",
                                                  {algorithm = a}), dx) < 1e-3, a)
    T.ok(max_abs_diff(mf.nn.conv2d_backprop_filter(x, w.shape, dy, 1, "SAME",
                                                   {algorithm = a}), dw) < 1e-3, a)
  end
end)

T.test("float64 stays on im2col whatever is asked", function()
  local x64, w64 = mf.cast(x, "float64"), mf.cast(w, "float64")
  local a = mf.nn.conv2d(x64, w64, 1, "SAME", {algorithm = "winograd"})
  local b = mf.nn.conv2d(x64, w64, 1, "SAME", {algorithm = "im2col"})
  T.eq(max_abs_diff(a, b), 0)
end)

T.test("profiler: a winograd conv lists 36 GEMMs labelled winograd", function()
  local prof = mf.profile(function()
    return mf.nn.conv2d(x, w, 1, "SAME", {algorithm = "winograd"})
  end)
  local n = 0
  for _, g in ipairs(prof:gemms()) do
    if g.M then
      T.eq(g.algorithm, "winograd")
      T.eq({g.op, g.M, g.N, g.K}, {"Conv2D", 2 * 3 * 2, 24, 16}) -- 9x7 in 4x4 tiles: 3 x 2
      n = n + 1
    end
  end
  T.eq(n, 36)
  T.ok(tostring(prof:gemms()):find("winograd", 1, true), tostring(prof:gemms()))
  local plain = mf.profile(function()
    return mf.nn.conv2d(x, w, 1, "SAME", {algorithm = "im2col"})
  end)
  for _, g in ipairs(plain:gemms()) do T.eq(g.algorithm, nil) end
end)

T.test("mf.config{conv_algorithm} sets the default; a call's option wins", function()
  T.eq(mf.config().conv_algorithm, "auto")
  T.eq(mf.config{conv_algorithm = "im2col"}.conv_algorithm, "im2col")
  local prof = mf.profile(function() return mf.nn.conv2d(x, w, 1, "SAME") end)
  for _, g in ipairs(prof:gemms()) do T.eq(g.algorithm, nil) end
  prof = mf.profile(function() return mf.nn.conv2d(x, w, 1, "SAME", {algorithm = "winograd"}) end)
  local labels = {}
  for _, g in ipairs(prof:gemms()) do labels[#labels + 1] = g.algorithm end
  T.eq(#labels, 36)
  T.eq(labels[1], "winograd")
  mf.config{conv_algorithm = "auto"}
  T.eq(mf.config().conv_algorithm, "auto")
end)

T.test("bad algorithms are named", function()
  T.raises(mf.nn.conv2d, "conv2d: option 'algorithm' must be \"auto\", \"im2col\", " ..
           "\"winograd\" or \"direct\", got fft", x, w, 1, "SAME", {algorithm = "fft"})
  T.raises(mf.config, "config: conv_algorithm must be \"auto\", \"im2col\", \"winograd\" or " ..
           "\"direct\", got number", {conv_algorithm = 3})
  T.raises(mf.config, "config: unknown option 'conv_algo'", {conv_algo = "auto"})
  T.eq(mf.config().conv_algorithm, "auto")
end)

-- The first layer's input is data: its gradient is not wanted, so
-- Conv2DBackpropInput never runs.
local function ops_of(prof)
  local seen = {}
  for _, r in ipairs(prof:rows()) do seen[r.type] = true end   -- op name without attributes
  return seen
end

T.test("first layer: no backprop-input for an unwatched input", function()
  local img = mf.random.normal{4, 8, 8, 1}
  local w1 = mf.Variable(mf.random.normal{3, 3, 1, 32})
  local tape = mf.GradientTape()
  local loss = mf.reduce_sum(mf.nn.conv2d(img, w1, 1, "SAME"))
  local seen = ops_of(mf.profile(function() return tape:gradient(loss, {w1}) end))
  T.ok(seen.Conv2DBackpropFilter and not seen.Conv2DBackpropInput)
  local opt = mf.train.GradientDescentOptimizer(0.01)
  seen = ops_of(mf.profile(function()
    opt:minimize(function() return mf.reduce_sum(mf.nn.conv2d(img, w1, 1, "SAME")) end,
                 {var_list = {w1}})
  end))
  T.ok(seen.Conv2DBackpropFilter and not seen.Conv2DBackpropInput)
  local g = mf.Graph()
  g:as_default(function()
    local xs = mf.placeholder("float32", {4, 8, 8, 1}, "x")
    local wv = mf.Variable(mf.random.normal{3, 3, 1, 32}, {name = "w"})
    mf.gradients(mf.reduce_sum(mf.nn.conv2d(xs, wv, 1, "SAME")), {wv})
  end)
  local listing = tostring(g)
  T.ok(listing:find("Conv2DBackpropFilter", 1, true) and
       not listing:find("Conv2DBackpropInput", 1, true), listing)
  -- watched, it is computed
  local tape2 = mf.GradientTape()
  tape2:watch(img)
  local loss2 = mf.reduce_sum(mf.nn.conv2d(img, w1, 1, "SAME"))
  seen = ops_of(mf.profile(function() return tape2:gradient(loss2, {img, w1}) end))
  T.ok(seen.Conv2DBackpropInput)
end)

T.done()
