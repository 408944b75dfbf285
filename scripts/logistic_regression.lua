-- logistic_regression.lua — a linear classifier for two classes of 2-D
-- points, trained eagerly with sigmoid cross-entropy.
-- Run: build/moonflow scripts/logistic_regression.lua [steps]
--
-- Class 1 points gather around (1, 1), class 0 around (-1, -1). The model is
-- p(class 1 | x) = sigmoid(x w + b); its decision boundary is the line
-- x w + b = 0.

local steps = math.tointeger(tonumber(arg and arg[1] or 300))
assert(steps and steps >= 1,
       "usage: logistic_regression.lua [steps]: steps must be a positive integer")

-- 1. Data: 200 seeded points per class, labels 0/1 as floats (one column).
mf.random.seed(11)
local n = 200
local ones = mf.random.normal({n, 2}, {stddev = 0.8}) + 1
local zeros = mf.random.normal({n, 2}, {stddev = 0.8}) - 1
local x = mf.concat({ones, zeros}, 1)                       -- {400, 2}
local labels = mf.concat({mf.ones{n, 1}, mf.zeros{n, 1}}, 1) -- {400, 1}

-- 2. Parameters and the loss. The op takes logits (before the sigmoid):
--    it is the numerically stable form of -[y log p + (1 - y) log(1 - p)].
local w = mf.Variable(mf.zeros{2, 1}, {name = "w"})
local b = mf.Variable(mf.zeros{1}, {name = "b"})
local function logits() return mf.matmul(x, w) + b end
local function loss_fn()
  return mf.reduce_mean(mf.nn.sigmoid_cross_entropy_with_logits{labels = labels,
                                                                logits = logits()})
end

-- 3. Train with plain gradient descent; show progress and the loss curve.
local opt = mf.train.GradientDescentOptimizer(0.5)
local progress = mf.progress{total = steps}
local history = {}
for step = 1, steps do
  opt:minimize(loss_fn)
  history[step] = loss_fn():item()
  progress:update{step = step, loss = history[step]}
end
mf.plot(history, {title = "cross-entropy", height = 6})

-- 4. Predict class 1 when the probability is over 0.5 (logit over 0).
local predicted = mf.cast(mf.greater(logits(), 0), "float32")
local accuracy = mf.reduce_mean(mf.cast(mf.equal(predicted, labels), "float32")):item()
local wv = w:read_value()
print(string.format("boundary: %.3f * x1 + %.3f * x2 + %.3f = 0",
                    wv[1][1], wv[2][1], b:read_value()[1]))
print(string.format("accuracy = %.4f", accuracy))
