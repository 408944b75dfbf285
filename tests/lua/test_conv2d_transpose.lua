-- test_conv2d_transpose.lua — mf.nn.conv2d_transpose (TensorFlow's: conv2d's
-- backprop-input with the input as out_backprop, filter [kh, kw, out, in]):
-- values and gradients against PyTorch (tests/lua/data/conv_more_torch.lua),
-- float32, NCHW, gradcheck, the gradient ops it records, a graph with an
-- unknown batch dim, and the errors.
local T = dofile("tests/lua/harness.lua")
local ref = dofile("tests/lua/data/conv_more_torch.lua")

local function formula(shape, a, b, dtype)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local k = mf.cast(mf.range(0, n), "float64")
  return mf.cast(mf.reshape(mf.sin(k * a + b), shape), dtype or "float64")
end

local function flat(t) return mf.reshape(t, {-1}):totable() end

local names = {"tr_same_s2", "tr_valid_s2", "tr_same_s1"}

T.test("values and gradients equal PyTorch's (float64, float32)", function()
  for _, name in ipairs(names) do
    local c = ref[name]
    for _, dt in ipairs{"float64", "float32"} do
      local tol = dt == "float64" and 1e-12 or 2e-5
      local x, w = formula(c.x, 0.37, 0.1, dt), formula(c.w, 0.53, -0.4, dt)
      local tape = mf.GradientTape()
      tape:watch(x)
      tape:watch(w)
      local y = mf.nn.conv2d_transpose(x, w, c.output_shape, c.strides, c.padding)
      local loss = mf.reduce_sum(y * formula(y.shape, 0.29, 0.7, dt))
      tape:stop()
      local g = tape:gradient(loss, {x, w})
      T.eq(y.shape, c.output_shape, nil, name)
      T.eq(flat(y), c.y, tol, name .. " y " .. dt)
      T.eq(flat(g[1]), c.dx, tol, name .. " dx " .. dt)
      T.eq(flat(g[2]), c.dw, tol, name .. " dw " .. dt)
    end
  end
end)

T.test("it is conv2d_backprop_input; its gradients are conv2d and backprop_filter", function()
  local c = ref.tr_same_s2
  local x, w = formula(c.x, 0.37, 0.1), formula(c.w, 0.53, -0.4)
  local y = mf.nn.conv2d_transpose(x, w, mf.tensor(c.output_shape, "int64"), 2, "SAME")
  T.eq(y, mf.nn.conv2d_backprop_input(c.output_shape, w, x, 2, "SAME"):totable(), 0)
  local g = mf.Graph()
  g:as_default(function()
    local xp = mf.placeholder("float64", c.x)
    local wp = mf.placeholder("float64", c.w)
    mf.gradients(mf.reduce_sum(mf.nn.conv2d_transpose(xp, wp, c.output_shape, 2, "SAME")),
                 {xp, wp})
  end)
  local ops = {}
  for _, n in ipairs(g:nodes()) do ops[n.op] = true end
  T.ok(ops.Conv2DBackpropInput and ops.Conv2D and ops.Conv2DBackpropFilter,
       "the graph holds Conv2DBackpropInput and its gradients Conv2D, Conv2DBackpropFilter")
end)

T.test("NCHW and gradcheck", function()
  local c = ref.tr_same_s1
  local x, w = formula(c.x, 0.37, 0.1), formula(c.w, 0.53, -0.4)
  local y = mf.nn.conv2d_transpose(mf.transpose(x, {1, 4, 2, 3}), w, {1, 3, 4, 5}, 1, "SAME",
                                   {data_format = "NCHW"})
  T.eq(y.shape, {1, 3, 4, 5})
  T.eq(flat(mf.transpose(y, {1, 3, 4, 2})), c.y, 1e-12)
  T.ok(mf.test.gradcheck(function(a, b)
    return mf.reduce_sum(mf.nn.conv2d_transpose(a, b, {1, 7, 7, 2}, 2, "VALID") ^ 2)
  end, {formula({1, 3, 3, 3}, 0.2, 0.1), formula({3, 3, 2, 3}, 0.4, 0.3)}))
end)

T.test("a graph with an unknown batch dim (output_shape batch -1)", function()
  local c = ref.tr_same_s2
  local g = mf.Graph()
  local xp, wp, y, grads
  g:as_default(function()
    xp = mf.placeholder("float64", {-1, 3, 3, 4})
    wp = mf.placeholder("float64", c.w)
    y = mf.nn.conv2d_transpose(xp, wp, {-1, 6, 6, 2}, 2, "SAME")
    local gy = mf.reshape(mf.sin(mf.cast(mf.range(0, 144), "float64") * 0.29 + 0.7),
                          {2, 6, 6, 2})
    grads = mf.gradients(mf.reduce_sum(y * gy), {xp, wp})
  end)
  T.eq(y.shape, {-1, 6, 6, 2})
  local out = mf.Session(g):run({y, grads[1], grads[2]},
                                {[xp] = formula(c.x, 0.37, 0.1), [wp] = formula(c.w, 0.53, -0.4)})
  T.eq(flat(out[1]), c.y, 1e-12)
  T.eq(flat(out[2]), c.dx, 1e-12)
  T.eq(flat(out[3]), c.dw, 1e-12)
end)

T.test("errors name conv2d_transpose", function()
  local x, w = mf.zeros{1, 3, 3, 4}, mf.zeros{3, 3, 2, 4}
  T.raises(function() mf.nn.conv2d_transpose(x, w, {1, 8, 8, 2}, 2, "SAME") end,
           "conv2d_transpose (the input is conv2d_backprop_input's out_backprop): "
           .. "conv2d_backprop_input: out_backprop has shape (1,3,3,4), but the convolution of "
           .. "an input (1,8,8,2) with a (3,3,2,4) filter gives (1,4,4,4)")
  T.raises(function() mf.nn.conv2d_transpose(x, mf.zeros{3, 3, 2, 5}, {1, 6, 6, 2}, 2, "SAME") end,
           "out_backprop has shape (1,3,3,4), but the convolution of an input (1,6,6,2) with a "
           .. "(3,3,2,5) filter gives (1,3,3,5)")
  T.raises(function() mf.nn.conv2d_transpose(x, w, {1, 6, 6}, 2, "SAME") end,
           "conv2d_transpose: output_shape must be an array of 4 integers")
  T.raises(function() mf.nn.conv2d_transpose(x, w, {1, -1, 6, 2}, 2, "SAME") end,
           "conv2d_transpose: output_shape entry 2 must be a non-negative integer")
  T.raises(function() mf.nn.conv2d_transpose(x, w, {1, 6, 6, 2}, 2, "FULL") end,
           "bad argument #5 to 'conv2d_transpose' (padding must be \"VALID\" or \"SAME\", got "
           .. "FULL)")
  T.raises(function() mf.nn.conv2d_transpose(x, w, {1, 6, 6, 2}, 2, "SAME", {bogus = 1}) end,
           "conv2d_transpose: unknown option 'bogus'")
  T.raises(function() mf.nn.conv2d_transpose(x, w, {1, 6, 6, 2}, 2, "SAME", {}, 1) end,
           "conv2d_transpose")
  T.raises(function() mf.nn.conv2d_transpose(x, mf.zeros({3, 3, 2, 4}, "float64"), {1, 6, 6, 2},
                                             2, "SAME") end,
           "conv2d_backprop_input: dtypes differ: float64 and float32")
end)

T.done()
