-- test_conv.lua — mf.nn.conv2d, mf.nn.conv2d_backprop_input and
-- mf.nn.conv2d_backprop_filter: values against a direct Lua loop, strides and
-- dilations in their three spellings, NCHW, gradients (tape, gradcheck,
-- second order) and every argument error.
local T = dofile("tests/lua/harness.lua")

-- Direct convolution of nested tables x[n][h][w][c] with w[i][j][c][o] (NHWC, HWIO).
local function ref_conv(x, w, sh, sw, dh, dw, same)
  local N, H, W, C = #x, #x[1], #x[1][1], #x[1][1][1]
  local kh, kw, O = #w, #w[1], #w[1][1][1]
  local function axis(n, k, s, d)
    local ek = (k - 1) * d + 1
    if same then
      local out = (n + s - 1) // s
      return out, math.max((out - 1) * s + ek - n, 0) // 2
    end
    return (n - ek) // s + 1, 0
  end
  local Ho, pt = axis(H, kh, sh, dh)
  local Wo, pl = axis(W, kw, sw, dw)
  local y = {}
  for n = 1, N do
    y[n] = {}
    for oh = 1, Ho do
      y[n][oh] = {}
      for ow = 1, Wo do
        local row = {}
        for o = 1, O do
          local s = 0
          for i = 1, kh do
            for j = 1, kw do
              local ih = (oh - 1) * sh - pt + (i - 1) * dh + 1
              local iw = (ow - 1) * sw - pl + (j - 1) * dw + 1
              if ih >= 1 and ih <= H and iw >= 1 and iw <= W then
                for c = 1, C do s = s + x[n][ih][iw][c] * w[i][j][c][o] end
              end
            end
          end
          row[o] = s
        end
        y[n][oh][ow] = row
      end
    end
  end
  return y
end

local function rand(shape, seed, dtype)
  return mf.random.uniform(shape, {minval = -1, maxval = 1, seed = seed, dtype = dtype or "float64"})
end

T.test("conv2d matches a direct loop (paddings, strides, dilations)", function()
  local x, w = rand({2, 7, 6, 3}, 1), rand({3, 2, 3, 4}, 2)
  local xt, wt = x:totable(), w:totable()
  for _, c in ipairs{{1, 1, 1, 1}, {2, 2, 1, 1}, {2, 1, 1, 2}, {1, 1, 2, 2}, {3, 2, 2, 1}} do
    for _, pad in ipairs{"SAME", "VALID"} do
      local y = mf.nn.conv2d(x, w, {1, c[1], c[2], 1}, pad, {dilations = {1, c[3], c[4], 1}})
      T.eq(y, ref_conv(xt, wt, c[1], c[2], c[3], c[4], pad == "SAME"), 1e-12,
           pad .. " " .. table.concat(c, ","))
    end
  end
end)

T.test("float32 and Lua tables as arguments", function()
  local y = mf.nn.conv2d({{{{1}, {2}, {3}}, {{4}, {5}, {6}}, {{7}, {8}, {9}}}},
                         {{{{1}}, {{1}}}, {{{1}}, {{1}}}}, 2, "SAME")
  T.eq(y.dtype, "float32")
  T.eq(y.shape, {1, 2, 2, 1})
  T.eq(y, {{{{12}, {9}}, {{15}, {9}}}}) -- SAME pads the extra row / column at the bottom / right
end)

T.test("strides and dilations: a number, a pair or four entries", function()
  local x, w = rand({1, 9, 8, 2}, 3), rand({2, 2, 2, 1}, 4)
  local a = mf.nn.conv2d(x, w, 2, "VALID", {dilations = 2})
  local b = mf.nn.conv2d(x, w, {2, 2}, "VALID", {dilations = {2, 2}})
  local c = mf.nn.conv2d(x, w, {1, 2, 2, 1}, "VALID", {dilations = {1, 2, 2, 1}})
  T.eq(a.shape, {1, 4, 3, 1})
  T.eq(a, b:totable(), 0)
  T.eq(a, c:totable(), 0)
end)

T.test("1x1 stride-1 convolution is a matmul over channels", function()
  local x, w = rand({2, 3, 4, 5}, 5), rand({1, 1, 5, 3}, 6)
  local y = mf.nn.conv2d(x, w, 1, "SAME")
  local m = mf.matmul(mf.reshape(x, {24, 5}), mf.reshape(w, {5, 3}))
  T.eq(y, mf.reshape(m, {2, 3, 4, 3}):totable(), 1e-12)
end)

T.test("backprops equal the tape's gradients of conv2d", function()
  local x, w = rand({2, 6, 5, 3}, 7), rand({3, 3, 3, 2}, 8)
  for _, pad in ipairs{"SAME", "VALID"} do
    local dy = rand(mf.nn.conv2d(x, w, 2, pad).shape, 9)
    local tape = mf.GradientTape{persistent = true}
    tape:watch(x)
    tape:watch(w)
    local loss = mf.reduce_sum(mf.nn.conv2d(x, w, 2, pad) * dy)
    local gx, gw = table.unpack(tape:gradient(loss, {x, w}))
    T.eq(mf.nn.conv2d_backprop_input({2, 6, 5, 3}, w, dy, 2, pad), gx:totable(), 1e-12)
    T.eq(mf.nn.conv2d_backprop_filter(x, {3, 3, 3, 2}, dy, 2, pad), gw:totable(), 1e-12)
    T.eq(mf.nn.conv2d_backprop_input(mf.tensor({2, 6, 5, 3}, "int32"), w, dy, 2, pad),
         gx:totable(), 1e-12)
  end
end)

T.test("NCHW gives the NHWC result transposed, and its gradients", function()
  local x, w = rand({2, 3, 7, 6}, 10), rand({3, 2, 3, 4}, 11)
  local y = mf.nn.conv2d(x, w, {1, 1, 2, 1}, "SAME", {data_format = "NCHW", dilations = {1, 1, 1, 2}})
  local yn = mf.nn.conv2d(mf.transpose(x, {1, 3, 4, 2}), w, {1, 2, 1, 1}, "SAME",
                          {dilations = {1, 1, 2, 1}})
  T.eq(y.shape, {2, 4, 4, 6})
  T.eq(y, mf.transpose(yn, {1, 4, 2, 3}):totable(), 1e-12)
  local dx = mf.nn.conv2d_backprop_input({2, 3, 7, 6}, w, y, {1, 1, 2, 1}, "SAME",
                                         {data_format = "NCHW", dilations = {1, 1, 1, 2}})
  T.eq(dx.shape, {2, 3, 7, 6})
  local dw = mf.nn.conv2d_backprop_filter(x, {3, 2, 3, 4}, y, {1, 1, 2, 1}, "SAME",
                                          {data_format = "NCHW", dilations = {1, 1, 1, 2}})
  T.eq(dw.shape, {3, 2, 3, 4})
  local f = function(a, b)
    return mf.reduce_sum(mf.nn.conv2d(a, b, 2, "SAME", {data_format = "NCHW"}) ^ 2)
  end
  T.ok(mf.test.gradcheck(f, {rand({1, 2, 5, 4}, 12), rand({2, 2, 2, 3}, 13)}))
end)

T.test("gradcheck of the three functions", function()
  local x, w = rand({2, 5, 4, 2}, 14), rand({3, 2, 2, 3}, 15)
  local dy = rand({2, 3, 4, 3}, 16)
  local opts = {dilations = {1, 1, 2, 1}}
  T.ok(mf.test.gradcheck(function(a, b)
    return mf.reduce_sum(mf.nn.conv2d(a, b, {2, 1}, "SAME", opts) ^ 2)
  end, {x, w}))
  T.ok(mf.test.gradcheck(function(b, d)
    return mf.reduce_sum(mf.nn.conv2d_backprop_input({2, 5, 4, 2}, b, d, {2, 1}, "SAME", opts) ^ 2)
  end, {w, dy}))
  T.ok(mf.test.gradcheck(function(a, d)
    return mf.reduce_sum(mf.nn.conv2d_backprop_filter(a, {3, 2, 2, 3}, d, {2, 1}, "SAME", opts) ^ 2)
  end, {x, dy}))
end)

T.test("second order: the gradient of a gradient", function()
  local x = rand({1, 4, 4, 2}, 17)
  local loss = function(w) return mf.reduce_sum(mf.nn.conv2d(x, w, 1, "SAME") ^ 2) end
  local g = mf.grad(loss)
  T.ok(mf.test.gradcheck(function(w) return mf.reduce_sum(g(w) ^ 2) end,
                         {rand({2, 2, 2, 2}, 18)}))
end)

-- Issue #35 M1: a dilated span or stride far beyond the input made the
-- direct kernel's padded copy and ring wrap in int64 (a segfault). With SAME
-- padding and dilation 2^59 - 2 only a 3x3 filter's centre tap lands on the
-- input: y = sum over the 2 channels of x * w = 2; dx gets the centre taps
-- of the 4 output channels (4), dw's centre tap sums the 25 pixels (25).
T.test("huge dilations and strides: values from the centre tap, no wrap", function()
  local x, w, d = mf.ones{1, 5, 5, 2}, mf.ones{3, 3, 2, 4}, 2^59 - 2
  for _, algo in ipairs{"auto", "direct", "im2col"} do
    local o = {dilations = d, algorithm = algo}
    T.eq(mf.nn.conv2d(x, w, 1, "SAME", o), mf.fill({1, 5, 5, 4}, 2):totable())
    local dy = mf.ones{1, 5, 5, 4}
    T.eq(mf.nn.conv2d_backprop_input({1, 5, 5, 2}, w, dy, 1, "SAME", o),
         mf.fill({1, 5, 5, 2}, 4):totable())
    local dw = mf.nn.conv2d_backprop_filter(x, {3, 3, 2, 4}, dy, 1, "SAME", o):totable()
    T.eq(dw[2][2], mf.fill({2, 4}, 25):totable())
    T.eq(dw[1][1], mf.zeros{2, 4}:totable())
    -- one output pixel: the stride never steps; SAME pads nothing (3 < 5)
    local s = {strides = math.maxinteger, algorithm = algo}
    T.eq(mf.nn.conv2d(x, w, nil, "SAME", s), mf.fill({1, 1, 1, 4}, 18):totable())
    T.eq(mf.nn.conv2d_backprop_filter(x, {3, 3, 2, 4}, mf.ones{1, 1, 1, 4}, nil, "SAME", s),
         mf.ones{3, 3, 2, 4}:totable())
  end
  local layer = mf.layers.Conv2D(4, 3, {padding = "SAME", dilation_rate = d, use_bias = false,
                                        kernel_initializer = "ones"})
  T.eq(layer(x), mf.fill({1, 5, 5, 4}, 2):totable())
end)

T.test("errors name the function and say what was expected", function()
  local x, w = mf.zeros{1, 5, 5, 3}, mf.zeros{3, 3, 3, 2}
  T.raises(function() mf.nn.conv2d(x, mf.zeros{3, 3, 4, 2}, 1, "SAME") end,
           "conv2d: the input has 3 channels but the filter expects 4")
  T.eq(mf.nn.conv2d(x, w, 1, "same").shape, mf.nn.conv2d(x, w, 1, "SAME").shape)
  T.raises(function() mf.nn.conv2d(x, w, 1, "FULL") end,
           "bad argument #4 to 'conv2d' (padding must be \"VALID\" or \"SAME\", got FULL)")
  T.raises(function() mf.nn.conv2d(x, w, 1) end,
           "bad argument #4 to 'conv2d' (padding expected: \"VALID\" or \"SAME\"")
  T.raises(function() mf.nn.conv2d(x, w, {2, 1, 1, 1}, "SAME") end,
           "conv2d: strides on the batch and channel axes must be 1, got {2, 1, 1, 1}")
  T.raises(function() mf.nn.conv2d(x, w, {1, 2, 2, 1}, "SAME", {data_format = "NCHW"}) end,
           "conv2d: strides on the batch and channel axes must be 1, got {1, 2, 2, 1} (NCHW)")
  T.raises(function()
    return mf.nn.conv2d(mf.ones{1, 3, 5, 5}, mf.ones{3, 3, 2, 4}, 1, "SAME", {data_format = "NCHW"})
  end, "conv2d: the input has 3 channels but the filter expects 2 (input (1,5,5,3) NHWC, filter " ..
       "(3,3,2,4) HWIO) (data_format NCHW: shapes shown after transposing to NHWC)")
  T.raises(function() mf.nn.conv2d(x, w, 0, "SAME") end, "conv2d: strides must be positive")
  T.raises(function() mf.nn.conv2d(x, w, {1, 2, 3}, "SAME") end,
           "conv2d: strides must be a number or an array of 1, 2 or 4 integers, got 3 entries")
  T.raises(function() mf.nn.conv2d(x, mf.zeros{6, 6, 3, 1}, 1, "VALID") end,
           "conv2d: the filter (6 x 6, 6 x 6 with dilations) is larger than the input (5 x 5)")
  T.raises(function() mf.nn.conv2d(x, w, 1, "VALID", {dilations = 3}) end,
           "conv2d: the filter (3 x 3, 7 x 7 with dilations) is larger than the input")
  T.raises(function() mf.nn.conv2d(x, w, 1, "SAME", {data_format = "NWHC"}) end,
           "conv2d: option 'data_format' must be \"NHWC\" or \"NCHW\", got NWHC")
  T.raises(function() mf.nn.conv2d(x, w, 1, "SAME", {dilation = 2}) end,
           "conv2d: unknown option 'dilation' (known: strides, padding, data_format, dilations, "
           .. "algorithm)")
  T.raises(function() mf.nn.conv2d(mf.zeros{5, 5, 3}, w, 1, "SAME") end,
           "conv2d: expected an input of rank 4 (NHWC), got shape (5,5,3)")
  T.raises(function() mf.nn.conv2d(mf.zeros({1, 5, 5, 3}, "int32"), mf.zeros({3, 3, 3, 2}, "int32"), 1, "SAME") end,
           "conv2d: expected float32 or float64, got int32")
  T.raises(function() mf.nn.conv2d(x, mf.zeros({3, 3, 3, 2}, "float64"), 1, "SAME") end,
           "conv2d: dtypes differ: float32 and float64")
  T.raises(function() mf.nn.conv2d(x, nil, 1, "SAME") end, "conv2d")
  local dy = mf.zeros{1, 3, 3, 2}
  T.raises(function() mf.nn.conv2d_backprop_input({1, 5, 5, 3}, w, dy, 1, "SAME") end,
           "conv2d_backprop_input: out_backprop has shape (1,3,3,2), but the convolution of an "
           .. "input (1,5,5,3) with a (3,3,3,2) filter gives (1,5,5,2)")
  T.raises(function() mf.nn.conv2d_backprop_input({1, 5, 5}, w, dy, 1, "SAME") end,
           "conv2d_backprop_input: input_sizes must be an array of 4 integers")
  T.raises(function() mf.nn.conv2d_backprop_filter(x, {3, 3, 3, 2}, dy, 1, "SAME") end,
           "conv2d_backprop_filter: out_backprop has shape (1,3,3,2)")
  T.raises(function() mf.nn.conv2d_backprop_filter(x, {3, 3, 4, 2}, mf.zeros{1, 5, 5, 2}, 1, "SAME") end,
           "conv2d_backprop_filter: the input has 3 channels but the filter expects 4")
  T.raises(function() mf.nn.conv2d_backprop_filter(x, {3, 3, "a", 2}, dy, 1, "SAME") end,
           "conv2d_backprop_filter: filter_sizes entry 3 must be an integer, got string")
end)

T.done()
