-- test_window.lua — mf.nn.conv_output_size and mf.nn.conv_padding (the window
-- rule of core/ops/window.h, whose values tests/unit/test_window.c checks
-- against TensorFlow's formula): they agree with what the ops do. A SAME
-- convolution equals a VALID one of the input padded by conv_padding's
-- amounts, output sizes are the ops' shapes, and bad arguments name the
-- function.
local T = dofile("tests/lua/harness.lua")

T.test("conv_output_size is the shape conv2d, depthwise_conv2d and max_pool give", function()
  for _, padding in ipairs({"VALID", "SAME"}) do
    for h = 3, 7 do
      for k = 1, 3 do
        for s = 1, 3 do
          for d = 1, 2 do
            local x, f = mf.ones{1, h, h + 1, 1}, mf.ones{k, k, 1, 1}
            local out, extent = mf.nn.conv_output_size({h, h + 1}, k, s, padding, d)
            T.eq(extent, {(k - 1) * d + 1, (k - 1) * d + 1})
            if out[1] > 0 then
              local y = mf.nn.conv2d(x, f, s, padding, {dilations = d})
              T.eq(y.shape, {1, out[1], out[2], 1}, nil, padding .. " conv2d")
              T.eq(mf.nn.depthwise_conv2d(x, f, s, padding, {dilations = d}).shape, y.shape)
              if d == 1 then
                T.eq(mf.nn.max_pool(x, k, s, padding).shape, y.shape, nil, "max_pool")
              end
            else
              T.raises(function() mf.nn.conv2d(x, f, s, padding, {dilations = d}) end,
                       "larger than the input")
            end
            T.eq(mf.nn.conv_output_size(h, k, s, padding, d), out[1])
          end
        end
      end
    end
  end
end)

T.test("a SAME conv2d is a VALID one of the input padded by conv_padding", function()
  local x = mf.random.normal({2, 7, 6, 3}, {seed = 4})
  local f = mf.random.normal({3, 2, 3, 2}, {seed = 5})
  for s = 1, 3 do
    for d = 1, 2 do
      local p = mf.nn.conv_padding({7, 6}, {3, 2}, s, "SAME", d)
      local padded = mf.pad(x, {{0, 0}, p[1], p[2], {0, 0}})
      T.eq(mf.nn.conv2d(x, f, s, "SAME", {dilations = d}),
           mf.nn.conv2d(padded, f, s, "VALID", {dilations = d}), 1e-5, "s " .. s .. " d " .. d)
      local before, after = mf.nn.conv_padding(7, 3, s, "SAME", d)
      T.eq({before, after}, p[1])
    end
  end
  -- the extra zero goes after (bottom, right); VALID pads nothing
  T.eq(mf.nn.conv_padding({6, 6}, 3, 2, "same"), {{0, 1}, {0, 1}})
  T.eq(mf.nn.conv_padding({6, 6}, 3, 2, "VALID"), {{0, 0}, {0, 0}})
end)

T.test("bad arguments name conv_output_size or conv_padding", function()
  T.raises(function() mf.nn.conv_output_size(5, 0, 1, "SAME") end,
           "conv_output_size: filter_size must be at least 1, got 0")
  T.raises(function() mf.nn.conv_padding(5, 3, 0, "SAME") end,
           "conv_padding: stride must be at least 1, got 0")
  T.raises(function() mf.nn.conv_padding(-1, 3, 1, "SAME") end,
           "conv_padding: input_size must be at least 0, got -1")
  T.raises(function() mf.nn.conv_padding(5, 3, 1, "FULL") end,
           "conv_padding: padding must be \"VALID\" or \"SAME\", got FULL")
  T.raises(function() mf.nn.conv_padding(5, 3, 1, "SAME\0x") end,
           "padding must be \"VALID\" or \"SAME\"")
  T.raises(function() mf.nn.conv_padding(5, 3, 1) end,
           "conv_padding: padding must be \"VALID\" or \"SAME\", got no value")
  T.raises(function() mf.nn.conv_output_size({5, 5}, {3, 3, 3}, 1, "SAME") end,
           "conv_output_size: filter_size must have 2 entries (one per spatial axis), got 3")
  T.raises(function() mf.nn.conv_output_size({}, 3, 1, "SAME") end,
           "input_size must have 1 to 8 entries")
  T.raises(function() mf.nn.conv_output_size("5", 3, 1, "SAME") end,
           "conv_output_size: input_size must be an integer or an array of integers")
  T.raises(function() mf.nn.conv_output_size(5.5, 3, 1, "SAME") end,
           "conv_output_size: input_size must be an integer")
  T.raises(function() mf.nn.conv_output_size(5, 3, 1, "SAME", 1, 2) end, "conv_output_size")
  -- a span over 2^63 fits no input
  local out, extent = mf.nn.conv_output_size(9, 3, 1, "VALID", math.maxinteger)
  T.eq({out, extent}, {0, math.maxinteger})
end)

T.done()
