-- The examples of TensorFlow 2's guide "Advanced automatic differentiation"
-- (tensorflow/docs site/en/guide/advanced_autodiff.ipynb), with the guide's printed values,
-- or, for random layers, the guide's own consistency checks.
local T = dofile("tests/lua/harness.lua")

T.test("Stop recording: dz/dy is None", function()
  local x = mf.constant(2.0)
  local y = mf.constant(3.0)
  local t = mf.GradientTape{persistent = false}
  t:watch{x, y}
  local x_sq = x * x
  local y_sq = t:stop_recording(function() return y * y end)
  local z = x_sq + y_sq
  t:stop()
  local grad = t:gradient(z, {x = x, y = y})
  T.eq(grad.x, 4.0)
  T.ok(grad.y == nil, "dz/dy: None")
end)

T.test("Reset a tape: only what follows the reset is differentiated", function()
  local x = mf.constant(2.0)
  local y = mf.constant(3.0)
  local reset = true
  local t = mf.GradientTape()
  t:watch{x, y}
  local y_sq = y * y
  if reset then
    -- Throw out all the tape recorded so far.
    t:reset()
  end
  t:watch(x)
  local x_sq = x * x
  local z = x_sq + y_sq
  t:stop()
  local grad = t:gradient(z, {x = x, y = y})
  T.eq(grad.x, 4.0)
  T.ok(grad.y == nil, "dz/dy: None")
end)

T.test("Stop gradient flow with precision", function()
  local x = mf.constant(2.0)
  local y = mf.constant(3.0)
  local t = mf.GradientTape()
  t:watch{x, y}
  local z = y ^ 2 + x ^ 2 * mf.stop_gradient(y)
  t:stop()
  local grad = t:gradient(z, {x = x, y = y})
  T.eq(grad.x, 12.0)   -- 2 * x * y
  T.eq(grad.y, 6.0)    -- 2 * y
end)

T.test("Custom gradients: clip the gradient norm to 0.5", function()
  -- Establish an identity operation, but clip during the gradient pass.
  local clip_gradients = mf.custom_gradient(function(y)
    local function backward(dy) return mf.clip_by_norm(dy, 0.5) end
    return y, backward
  end)
  local v = mf.Variable(2.0)
  local tape = mf.GradientTape()
  local output = clip_gradients(v * v)
  tape:stop()
  T.eq(tape:gradient(output, v), 2.0)   -- calls "backward", which clips 4 to 2
end)

T.test("Multiple tapes", function()
  local x0 = mf.constant(0.0)
  local x1 = mf.constant(0.0)
  local tape0 = mf.GradientTape()
  local tape1 = mf.GradientTape()
  tape0:watch(x0)
  tape1:watch(x1)
  local y0 = mf.sin(x0)
  local y1 = mf.nn.sigmoid(x1)
  local y = y0 + y1
  local ys = mf.reduce_sum(y)
  tape1:stop()
  tape0:stop()
  T.eq(tape0:gradient(ys, x0), 1.0)    -- cos(x) => 1.0
  T.eq(tape1:gradient(ys, x1), 0.25)   -- sigmoid(x1)*(1-sigmoid(x1)) => 0.25
end)

T.test("Higher-order gradients: 3 and 6", function()
  local x = mf.Variable(1.0)   -- Create a Tensorflow variable initialized to 1.0
  local t2 = mf.GradientTape()
  local t1 = mf.GradientTape()
  local y = x * x * x
  -- Compute the gradient inside the outer `t2` context manager
  -- which means the gradient computation is differentiable as well.
  t1:stop()
  local dy_dx = t1:gradient(y, x)
  t2:stop()
  local d2y_dx2 = t2:gradient(dy_dx, x)
  T.eq(dy_dx, 3.0)
  T.eq(d2y_dx2, 6.0)
end)

T.test("Jacobians: scalar source", function()
  local x = mf.linspace(-10.0, 10.0, 200 + 1)
  local delta = mf.Variable(0.0)
  local tape = mf.GradientTape{persistent = true}
  local y = mf.nn.sigmoid(x + delta)
  tape:stop()
  local dy_dx = tape:jacobian(y, delta)
  T.eq(y.shape, {201})
  T.eq(dy_dx.shape, {201})
  T.eq(dy_dx, y * (1 - y), 1e-7)
end)

-- A Dense layer as the guide's tf.keras.layers.Dense: x @ kernel + bias, then the activation.
local function dense(units, activation, n_in)
  local w = mf.Variable(mf.random.normal({n_in, units}, {seed = units}))
  local b = mf.Variable(mf.zeros{units})
  return function(x) return activation(mf.matmul(x, w) + b) end
end

T.test("Jacobians: tensor source has shape y.shape .. x.shape", function()
  local x = mf.random.normal({7, 5}, {seed = 1})
  local layer = dense(10, mf.nn.relu, 5)
  local tape = mf.GradientTape{persistent = true}
  tape:watch(x)
  local y = layer(x)
  tape:stop()
  T.eq(y.shape, {7, 10})
  local j = tape:jacobian(y, x)
  T.eq(j.shape, {7, 10, 7, 5})
  -- The gradient of the sum is the sum over the target's axes of the jacobian.
  local g = tape:gradient(y, x)
  local j_sum = mf.reduce_sum(j, {axis = {1, 2}})
  T.ok(mf.reduce_max(mf.abs(g - j_sum)):item() < 1e-3, "g == reduce_sum(j, [0, 1])")
end)

T.test("Batch Jacobian: the diagonal blocks of the full jacobian", function()
  local x = mf.random.normal({7, 5}, {seed = 2})
  local layer1 = dense(8, mf.nn.elu, 5)
  local layer2 = dense(6, mf.nn.elu, 8)
  local tape = mf.GradientTape{persistent = true, watch_accessed_variables = false}
  tape:watch(x)
  local y = layer1(x)
  y = layer2(y)
  tape:stop()
  T.eq(y.shape, {7, 6})
  local j = tape:jacobian(y, x)
  T.eq(j.shape, {7, 6, 7, 5})
  -- If the gradients of each item in the stack are independent of each other, then every
  -- (batch, batch) slice of this tensor is a diagonal matrix: summing over the source batch
  -- axis gives the batch jacobian.
  local j_sum = mf.reduce_sum(j, {axis = 3})
  local jb = tape:batch_jacobian(y, x)
  T.eq(jb.shape, {7, 6, 5})
  local delta = mf.reduce_max(mf.abs(j_sum - jb)):item()
  T.ok(delta < 1e-6, "batch_jacobian == sum of the full jacobian's blocks, delta " .. delta)
end)

T.test("Hessian of a scalar: the jacobian of a gradient", function()
  -- f(x) = sum(x^3): the Hessian is diag(6 x).
  local x = mf.Variable{1.0, 2.0, 3.0}
  local t2 = mf.GradientTape{persistent = true}
  local t1 = mf.GradientTape()
  local f = mf.reduce_sum(x ^ 3)
  t1:stop()
  local g = t1:gradient(f, x)
  t2:stop()
  T.eq(t2:jacobian(g, x), {{6, 0, 0}, {0, 12, 0}, {0, 0, 18}})
end)

T.test("custom_gradient: a Variable read inside is passed to grad_fn as variables", function()
  -- tf.custom_gradient: grad_fn(upstream, variables) returns (input grads, variable grads)
  local w = mf.Variable(3.0)
  local f = mf.custom_gradient(function(x)
    local y = x * w
    local function grad_fn(dy, variables)
      T.eq(#variables, 1)
      return dy * w, {dy * x * 10}   -- a recognisable variable gradient
    end
    return y, grad_fn
  end)
  local x = mf.constant(2.0)
  local tape = mf.GradientTape()
  tape:watch(x)
  local y = f(x)
  tape:stop()
  local dx, dw = table.unpack(tape:gradient(y, {x, w}), 1, 2)
  T.eq(dx, 3.0)
  T.eq(dw, 20.0)
end)

T.done()
