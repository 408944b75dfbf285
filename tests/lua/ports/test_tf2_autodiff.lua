-- The examples of TensorFlow 2's guide "Introduction to gradients and automatic
-- differentiation" (tensorflow/docs site/en/guide/autodiff.ipynb), in order, with the
-- guide's printed values as expected numbers.
local T = dofile("tests/lua/harness.lua")

T.test("Gradient tapes: dy/dx of x**2 at 3 is 6", function()
  local x = mf.Variable(3.0)
  local tape = mf.GradientTape()
  local y = x ^ 2
  tape:stop()
  local dy_dx = tape:gradient(y, x)
  T.eq(dy_dx, 6.0)
end)

T.test("Gradient tapes: a list and a dictionary of sources", function()
  local w = mf.Variable(mf.random.normal{3, 2}, {name = "w"})
  local b = mf.Variable(mf.zeros{2}, {name = "b"})
  local x = mf.tensor{{1., 2., 3.}}
  local tape = mf.GradientTape{persistent = true}
  local y = mf.matmul(x, w) + b
  local loss = mf.reduce_mean(y ^ 2)
  tape:stop()
  local dl_dw, dl_db = table.unpack(tape:gradient(loss, {w, b}))
  T.eq(dl_dw.shape, {3, 2})
  T.eq(dl_db.shape, {2})
  -- d mean(y^2) / db = y (two outputs: 2y / 2), d/dw = x^T y
  T.eq(dl_db, y[1], 1e-6)
  T.eq(dl_dw, mf.matmul(x, y, {transpose_a = true}), 1e-5)
  local my_vars = {w = w, b = b}
  local grad = tape:gradient(loss, my_vars)
  T.eq(grad.b, dl_db)
  T.eq(grad.w, dl_dw)
end)

T.test("Controlling what the tape watches: trainable Variables only", function()
  -- A trainable variable
  local x0 = mf.Variable(3.0, {name = "x0"})
  -- Not trainable
  local x1 = mf.Variable(3.0, {name = "x1", trainable = false})
  -- Not a Variable: A variable + tensor returns a tensor.
  local x2 = mf.Variable(2.0, {name = "x2"}) + 1.0
  -- Not a variable
  local x3 = mf.constant(3.0, {name = "x3"})
  local tape = mf.GradientTape()
  local y = mf.sin(x0) + x1 + x2 + x3
  tape:stop()
  local grad = tape:gradient(y, {x0, x1, x2, x3})
  T.eq(grad[1], -0.9899925, 1e-6)    -- dy/dx0 = cos(3)
  T.ok(grad[2] == nil and grad[3] == nil and grad[4] == nil, "None for x1, x2, x3")
  local watched = tape:watched_variables()
  T.eq(#watched, 1)
  T.eq(watched[1].name, "x0")
end)

T.test("tape.watch of a constant", function()
  local x = mf.constant(3.0)
  local tape = mf.GradientTape()
  tape:watch(x)
  local y = x ^ 2
  tape:stop()
  T.eq(tape:gradient(y, x), 6.0)
end)

T.test("watch_accessed_variables=False: a string-keyed dictionary of sources", function()
  local x0 = mf.Variable(0.0)
  local x1 = mf.Variable(10.0)
  local tape = mf.GradientTape{watch_accessed_variables = false}
  tape:watch(x1)
  local y0 = mf.sin(x0)
  local y1 = mf.nn.softplus(x1)
  local y = y0 + y1
  local ys = mf.reduce_sum(y)
  tape:stop()
  local grad = tape:gradient(ys, {x0 = x0, x1 = x1})
  T.ok(grad.x0 == nil, "dy/dx0: None")
  T.eq(grad.x1, 0.9999546, 1e-6)
end)

T.test("Intermediate results: dz/dy with y = x*x, z = y*y", function()
  local x = mf.constant(3.0)
  local tape = mf.GradientTape()
  tape:watch(x)
  local y = x * x
  local z = y * y
  tape:stop()
  T.eq(tape:gradient(z, y), 18.0)
end)

T.test("A persistent tape is asked twice", function()
  local x = mf.constant{1, 3.0}
  local tape = mf.GradientTape{persistent = true}
  tape:watch(x)
  local y = x * x
  local z = y * y
  tape:stop()
  T.eq(tape:gradient(z, x), {4.0, 108.0})   -- 4 * x^3 at x = 1 and 3
  T.eq(tape:gradient(y, x), {2.0, 6.0})     -- 2 * x
end)

T.test("Gradient of non-scalar targets: a dictionary of targets sums", function()
  local x = mf.Variable(2.0)
  local tape = mf.GradientTape()
  local y0 = x ^ 2
  local y1 = 1 / x
  tape:stop()
  T.eq(tape:gradient({y0 = y0, y1 = y1}, x), 3.75, 1e-6)
end)

T.test("Gradient of a non-scalar target is the gradient of its sum", function()
  local x = mf.Variable(2.0)
  local tape = mf.GradientTape()
  local y = x * mf.tensor{3., 4.}
  tape:stop()
  T.eq(tape:gradient(y, x), 7.0)
end)

T.test("Gradient of sigmoid over linspace equals its derivative", function()
  local x = mf.linspace(-10.0, 10.0, 200 + 1)
  local tape = mf.GradientTape()
  tape:watch(x)
  local y = mf.nn.sigmoid(x)
  tape:stop()
  local dy_dx = tape:gradient(y, x)
  T.eq(dy_dx, y * (1 - y), 1e-7)
end)

T.test("Control flow: only the branch taken gets a gradient", function()
  local x = mf.constant(1.0)
  local v0 = mf.Variable(2.0)
  local v1 = mf.Variable(2.0)
  local tape = mf.GradientTape{persistent = true}
  tape:watch(x)
  local result
  if x:item() > 0.0 then result = v0 else result = v1 ^ 2 end
  tape:stop()
  local dv0, dv1 = table.unpack(tape:gradient(result, {v0, v1}), 1, 2)
  T.eq(dv0, 1.0)
  T.ok(dv1 == nil, "dv1: None")
  T.ok(tape:gradient(result, x) == nil, "dx: None")   -- x selected the branch only
end)

T.test("Cases where gradient returns None", function()
  local x = mf.Variable(2.)
  local y = mf.Variable(3.)
  local tape = mf.GradientTape()
  local z = y * y
  tape:stop()
  T.ok(tape:gradient(z, x) == nil, "unconnected")

  -- 1. Replaced a variable with a tensor
  x = mf.Variable(2.0)
  for epoch = 1, 2 do
    local t = mf.GradientTape()
    local y2 = x + 1
    t:stop()
    local g = t:gradient(y2, x)   -- a Variable: 1.0; then a tensor: None
    if epoch == 1 then T.eq(g, 1.0) else T.ok(g == nil, "x replaced by a tensor: None") end
    x = x + 1   -- This should be x:assign_add(1)
  end

  -- 2. Did calculations outside of TensorFlow (a Lua number is not recorded)
  local xv = mf.Variable({{1.0, 2.0}, {3.0, 4.0}}, {dtype = "float32"})
  local t2 = mf.GradientTape()
  local x2 = xv:totable()[1][1] * 2     -- a Lua number
  local y3 = mf.reduce_sum(xv) + x2
  t2:stop()
  T.eq(t2:gradient(y3, xv), {{1, 1}, {1, 1}})

  -- 3. Took gradients through an integer
  -- tf.constant(10) is int32; a Lua number makes float32 here
  local xi = mf.constant(10, {dtype = "int32"})
  local t3 = mf.GradientTape()
  t3:watch(xi)
  local yi = xi * xi
  t3:stop()
  T.ok(t3:gradient(yi, xi) == nil, "integer source: None")

  -- 4. Took gradients through a stateful object
  local x0 = mf.Variable(3.0)
  local x1 = mf.Variable(0.0)
  local t4 = mf.GradientTape()
  x1:assign_add(x0)   -- Update x1 = x1 + x0.
  local y4 = x1 ^ 2   -- y = (x1 + x0)**2
  t4:stop()
  T.ok(t4:gradient(y4, x0) == nil, "through assign: None")
end)

T.test("Zeros instead of None", function()
  local x = mf.Variable{2., 2.}
  local y = mf.Variable(3.)
  local tape = mf.GradientTape()
  local z = y ^ 2
  tape:stop()
  T.eq(tape:gradient(z, x, {unconnected = "zero"}), {0, 0})
end)

T.done()
