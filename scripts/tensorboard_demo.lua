-- tensorboard_demo.lua — a training run TensorBoard can show: a small
-- classifier trained in graph mode (TF1 style), with the loss and accuracy
-- as scalars every step, histograms of the weights and their gradients
-- every few steps, and the graph itself (the forward pass and the
-- "gradients/" scope the optimizer added, drawn apart).
-- Run: build/moonflow scripts/tensorboard_demo.lua [logdir]   (default runs/demo)
-- then: tensorboard --logdir runs   (TensorBoard itself is not part of moonflow)
local logdir = arg and arg[1] or "runs/demo"

-- two interleaved spirals: not linearly separable, so the hidden layer matters
mf.random.seed(42)
local n, xs, ys = 400, {}, {}
for i = 1, n do
  local class = i % 2
  local t = (i // 2) / (n / 2) * 3 * math.pi / 2 + 0.3
  local s = class == 0 and 1 or -1
  xs[i] = {s * t * math.cos(t) / 5 + 0.02 * math.sin(i * 7),
           s * t * math.sin(t) / 5 + 0.02 * math.cos(i * 3)}
  ys[i] = class + 1
end
local x_data, y_data = mf.tensor(xs), mf.tensor(ys, "int64")

local g = mf.Graph()
local x, y, loss, accuracy, train_op, W1, grads
g:as_default(function()
  x = mf.placeholder("float32", {-1, 2}, "x")
  y = mf.placeholder("int64", {-1}, "labels")
  local logits
  mf.name_scope("hidden", function()
    W1 = mf.Variable(mf.random.normal({2, 32}, {stddev = 1}), {name = "kernel"})
    local b1 = mf.Variable(mf.zeros({32}), {name = "bias"})
    local h = mf.tanh(mf.matmul(x, W1) + b1)
    mf.name_scope("output", function()
      local W2 = mf.Variable(mf.random.normal({32, 2}, {stddev = 0.3}), {name = "kernel"})
      local b2 = mf.Variable(mf.zeros({2}), {name = "bias"})
      logits = mf.matmul(h, W2) + b2
    end)
  end)
  loss = mf.reduce_mean(mf.nn.sparse_softmax_cross_entropy_with_logits{labels = y,
                                                                       logits = logits})
  accuracy = mf.reduce_mean(mf.cast(mf.equal(mf.argmax(logits, 2), y), "float32"))
  local opt = mf.train.AdamOptimizer(0.05)
  grads = opt:compute_gradients(loss)
  train_op = opt:apply_gradients(grads)
end)

local sess = mf.Session(g)
sess:run(mf.global_variables_initializer(g))
local w = mf.summary.create_file_writer(logdir)
w:graph(g)
local feeds = {[x] = x_data, [y] = y_data}
local steps, events = 150, 1
for step = 1, steps do
  local r = sess:run({train_op, loss, accuracy}, feeds)
  local l, a = r[2], r[3]
  w:scalar("loss", l, step)
  w:scalar("accuracy", a, step)
  events = events + 2
  if step % 25 == 0 then
    local vals = sess:run({W1, grads[1][1]}, feeds)
    w:histogram("hidden/kernel", vals[1], step)
    w:histogram("hidden/kernel/gradient", vals[2], step)
    events = events + 2
    print(("step %3d  loss %.4f  accuracy %.3f"):format(step, l:item(), a:item()))
  end
end
local path = w.path
w:close()
print(("wrote %d events (the graph, %d scalars, %d histograms) to %s"):format(
  events + 1, 2 * steps, 2 * (steps // 25), path))
print("view them with: tensorboard --logdir " .. logdir)
