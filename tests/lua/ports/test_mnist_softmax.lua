-- TensorFlow 1.x's tutorial mnist_softmax.py, line by line (8x8 digits for MNIST; see
-- digits.lua). Expected numbers: PyTorch on the same data and batch order
-- (gen_mnist_expected.py -> mnist_expected.lua).
local T = dofile("tests/lua/harness.lua")
local E = dofile("tests/lua/ports/mnist_expected.lua")
local mnist = dofile("tests/lua/ports/digits.lua")

T.test("mnist_softmax.py: 1000 steps of GradientDescent(0.5) agree with PyTorch", function()
  local g = mf.Graph()
  local x, W, b, y, y_, cross_entropy, train_step, accuracy, init
  g:as_default(function()
    -- Create the model
    x = mf.placeholder("float32", {-1, 64})              -- tf.placeholder(tf.float32, [None, 784])
    W = mf.Variable(mf.zeros{64, 10})
    b = mf.Variable(mf.zeros{10})
    y = mf.matmul(x, W) + b
    -- Define loss and optimizer
    y_ = mf.placeholder("float32", {-1, 10})
    cross_entropy = mf.reduce_mean(
      mf.nn.softmax_cross_entropy_with_logits{labels = y_, logits = y})
    train_step = mf.train.GradientDescentOptimizer(0.5):minimize(cross_entropy)
    -- Test trained model (TF's axis 1 is moonflow's axis 2: axes are 1-based)
    local correct_prediction = mf.equal(mf.argmax(y, 2), mf.argmax(y_, 2))
    accuracy = mf.reduce_mean(mf.cast(correct_prediction, "float32"))
    init = mf.global_variables_initializer()
  end)
  local sess = mf.Session(g)                             -- tf.InteractiveSession()
  sess:run(init)
  local k = 0
  for i = 0, 999 do
    local batch_xs, batch_ys = mnist.next_batch(i, 100)
    local _, loss = table.unpack(sess:run({train_step, cross_entropy},
                                          {[x] = batch_xs, [y_] = batch_ys}), 1, 2)
    if i % 100 == 99 then
      k = k + 1
      T.eq(loss, E.softmax_losses[k], 1e-6 * math.max(1, E.softmax_losses[k]),
           "loss after step " .. (i + 1))
    end
  end
  T.eq(sess:run(accuracy, {[x] = mnist.test_images, [y_] = mnist.test_labels}),
       E.softmax_accuracy, 1e-6, "test accuracy")
end)

T.done()
