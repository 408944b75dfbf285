-- linear_regression_graph.lua — the model of linear_regression.lua in graph
-- mode (TensorFlow 1.x style): build a graph once with placeholders and
-- Variables, then run it in a Session, feeding a batch at each step.
-- Run: build/moonflow scripts/linear_regression_graph.lua [steps]

local steps = math.tointeger(tonumber(arg and arg[1] or 200))
assert(steps and steps >= 1,
       "usage: linear_regression_graph.lua [steps]: steps must be a positive integer")
local true_w, true_b = 3.0, 2.0

-- The data, made eagerly as in linear_regression.lua: y = 3 x + 2 + noise.
mf.random.seed(7)
local x_data = mf.random.uniform({256, 1}, {minval = -1, maxval = 1})
local y_data = x_data * true_w + true_b + mf.random.normal({256, 1}, {stddev = 0.1})

-- 1. Build. Inside g:as_default nothing is computed: each op adds a node and
--    returns a symbolic tensor. Placeholders are the inputs fed at run time
--    ({-1, 1}: any number of rows); Variables keep their values in the Session.
local g = mf.Graph()
local x, y, w, b, loss, train_op, init
g:as_default(function()
  x = mf.placeholder("float32", {-1, 1}, "x")
  y = mf.placeholder("float32", {-1, 1}, "y")
  w = mf.Variable(mf.zeros{1, 1}, {name = "w"})
  b = mf.Variable(mf.zeros{1}, {name = "b"})
  loss = mf.reduce_mean(mf.square(mf.matmul(x, w) + b - y))
  -- minimize adds the backward nodes (mf.gradients, under "gradients/") and
  -- one update node per Variable; running train_op runs them. Written out:
  --   local grads = mf.gradients(loss, {w, b})
  --   train_op = mf.group{w:assign_sub(grads[1] * 0.1), b:assign_sub(grads[2] * 0.1)}
  train_op = mf.train.GradientDescentOptimizer(0.1):minimize(loss)
  init = mf.global_variables_initializer()
end)
print(string.format("the graph has %d nodes:", #g:nodes()))
print(g)   -- forward, gradients/ (backward) and the update nodes minimize added

-- 2. Run. Variables start uninitialised: run the initializer once. Each step
--    feeds the data to the placeholders and runs the train op.
local sess = mf.Session(g)
sess:run(init)
local feed = {[x] = x_data, [y] = y_data}
local progress = mf.progress{total = steps}
local history = {}
for step = 1, steps do
  sess:run(train_op, feed)
  history[step] = sess:run(loss, feed):item()
  progress:update{step = step, loss = history[step]}
end
mf.plot(history, {title = "mean squared error per step (graph mode)", height = 8})

-- 3. Fetch the Variables' values; close to the truth (3, 2).
local w_val, b_val = table.unpack(sess:run({w, b}))
sess:close()
print(string.format("w = %.4f (true %.1f)", w_val:reshape{}:item(), true_w))
print(string.format("b = %.4f (true %.1f)", b_val[1], true_b))
