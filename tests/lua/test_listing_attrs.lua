-- test_listing_attrs.lua — graph listings (print(g), g:nodes(), g:to_dot())
-- and the tape listing show each node's non-default attributes from the op
-- schema (a gradient MatMul's transpose, a reduction's axes, a strided SAME
-- conv), and a control input as ^name apart from the values.
local T = dofile("tests/lua/harness.lua")

local g = mf.Graph()
g:as_default(function()
  local x = mf.placeholder("float32", {2, 3}, "x")
  local w = mf.Variable(mf.ones{3, 4}, {name = "w"})
  local s = mf.reduce_sum(mf.matmul(x, w), 2, true)
  local img = mf.placeholder("float32", {1, 8, 8, 2}, "img")
  local c = mf.nn.conv2d(img, mf.ones{3, 3, 2, 4}, 2, "SAME")
  mf.gradients(s, {x})
  mf.control_dependencies({s}, function() return mf.identity(c) end)
end)

local function has(text, piece)
  T.ok(text:find(piece, 1, true), "missing '" .. piece .. "' in:\n" .. text)
end

T.test("print(g) shows attributes and control inputs", function()
  local text = tostring(g)
  has(text, "matmul = MatMul(x:0, w:0)")                 -- defaults are not shown
  has(text, "reduce_sum = Sum[axis=2, keepdims](matmul:0)")
  has(text, "conv2d = Conv2D[strides=2, SAME](img:0, Const:0)")
  has(text, "gradients/matmul_grad/matmul = MatMul[transpose_b](")
  has(text, "identity = Identity(conv2d:0; ^reduce_sum)")
end)

T.test("g:nodes() and DOT carry the same attributes", function()
  local attrs = {}
  for _, n in ipairs(g:nodes()) do attrs[n.name] = n.attrs end
  T.eq(attrs.reduce_sum, "axis=2, keepdims")
  T.eq(attrs.conv2d, "strides=2, SAME")
  T.eq(attrs.matmul, "")
  T.eq(attrs["gradients/matmul_grad/matmul"], "transpose_b")
  local dot = g:to_dot()
  has(dot, "Sum[axis=2, keepdims]")
  has(dot, "Conv2D[strides=2, SAME]")
  has(dot, "style=dashed")                               -- the control edge
end)

T.test("the tape listing shows attributes", function()
  local x, img = mf.Variable(mf.ones{2, 3}), mf.Variable(mf.ones{1, 4, 4, 1})
  local tape = mf.GradientTape()
  mf.reduce_sum(mf.matmul(x, x, {transpose_b = true}), 2, true)
  mf.nn.max_pool(img, 2, 2, "same")
  tape:stop()
  local text = tostring(tape)
  has(text, "MatMul[transpose_b](")
  has(text, "Sum[axis=2, keepdims](t1)")
  has(text, "MaxPool[ksize=2, strides=2, SAME](")
end)

T.done()
