-- linear_regression.lua — fit y = w x + b by gradient descent, eagerly.
-- Run: build/moonflow scripts/linear_regression.lua [steps]
--
-- The data are synthetic and seeded: y = 3 x + 2 + noise, so the learned
-- w and b should come out close to 3 and 2. The same model in graph mode is
-- scripts/linear_regression_graph.lua.

local steps = math.tointeger(tonumber(arg and arg[1] or 200))
assert(steps and steps >= 1,
       "usage: linear_regression.lua [steps]: steps must be a positive integer")
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

-- 4. The loop, with a progress line (redrawn in place on a terminal) and
--    the loss history kept for a plot.
local opt = mf.train.GradientDescentOptimizer(0.1)
local progress = mf.progress{total = steps}
local history = {}
for step = 1, steps do
  opt:minimize(loss_fn, {var_list = {w, b}})
  history[step] = loss_fn():item()
  progress:update{step = step, loss = history[step]}
end
mf.plot(history, {title = "mean squared error per step", height = 8})

-- 5. The result, close to the truth (3, 2).
local w_val, b_val = w:read_value():reshape{}:item(), b:read_value()[1]
print(string.format("w = %.4f (true %.1f)", w_val, true_w))
print(string.format("b = %.4f (true %.1f)", b_val, true_b))
