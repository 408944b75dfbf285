-- 03_linear_regression.lua — fit y = w x + b by gradient descent, eagerly.
-- Run: build/moonflow scripts/03_linear_regression.lua [steps]
--
-- The data are synthetic and seeded: y = 3 x + 2 + noise, so the learned
-- w and b should come out close to 3 and 2.

local steps = tonumber(arg and arg[1]) or 200
local true_w, true_b = 3.0, 2.0

-- 1. Data: 256 points, x uniform in [-1, 1], Gaussian noise of stddev 0.1.
mf.random.seed(7)
local x = mf.random.uniform({256, 1}, {minval = -1, maxval = 1})
local y = x * true_w + true_b + mf.random.normal({256, 1}, {stddev = 0.1})

-- 2. Parameters are Variables (trainable, so tapes watch them).
local w = mf.Variable(mf.zeros{1, 1}, {name = "w"})
local b = mf.Variable(mf.zeros{1}, {name = "b"})

-- 3. The loss is a function of no arguments: minimize runs it under a tape,
--    takes the gradients w.r.t. the trainable variables and applies them.
local function loss_fn()
  local pred = mf.matmul(x, w) + b
  return mf.reduce_mean(mf.square(pred - y))
end

local opt = mf.train.GradientDescentOptimizer(0.1)
for step = 1, steps do
  opt:minimize(loss_fn, {var_list = {w, b}})
  if step % 25 == 0 or step == 1 then
    print(string.format("step %4d  loss %.5f", step, loss_fn():item()))
  end
end

-- 4. The result, close to the truth (3, 2).
local w_val, b_val = w:read_value():reshape{}:item(), b:read_value()[1]
print(string.format("w = %.4f (true %.1f)", w_val, true_w))
print(string.format("b = %.4f (true %.1f)", b_val, true_b))
