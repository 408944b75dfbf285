-- test_layers.lua — mf.layers (lib/layers.lua, lib/model.lua): each layer
-- against the hand-written ops it stands for, Sequential and Model,
-- variables (stable, idempotent), summary()'s Keras counts, state_dict and
-- safetensors round trips, the four modes (eager, tape, graph, mf.trace) and
-- build-time errors that name the layer.
local T = dofile("tests/lua/harness.lua")
local L = mf.layers

local function close(a, b, tol)
  T.eq(mf.reduce_max(mf.abs(a - b)):item() <= (tol or 1e-5), true,
       "max |a - b| = " .. mf.reduce_max(mf.abs(a - b)):item())
end

T.test("Dense: matmul + bias + activation, on rank 2 and rank 3", function()
  mf.random.seed(3)
  local d = L.Dense(4, {activation = "relu"})
  local x = mf.random.normal({5, 3})
  local y = d(x)
  T.eq(y.shape, {5, 4})
  T.eq(d.kernel.shape, {3, 4})
  T.eq(d.kernel.name, d.name .. "/kernel")
  close(y, mf.nn.relu(mf.matmul(x, d.kernel) + d.bias))
  local x3 = mf.random.normal({2, 5, 3})
  close(d(x3), mf.nn.relu(mf.tensordot(x3, d.kernel, 1) + d.bias))
  local nb = L.Dense(2, {use_bias = false, kernel_initializer = "ones"})
  T.eq(nb(mf.ones{1, 3}), {{3, 3}})
  T.eq(#nb.variables, 1)
end)

T.test("Conv2D, pooling, GlobalAveragePooling2D, Flatten against mf.nn", function()
  mf.random.seed(4)
  local x = mf.random.normal({2, 7, 7, 3})
  local c = L.Conv2D(5, 3, {strides = 2, padding = "same"})
  local y = c(x)
  T.eq(y.shape, {2, 4, 4, 5})
  close(y, mf.nn.conv2d(x, c.kernel, {1, 2, 2, 1}, "SAME") + c.bias)
  close(L.MaxPool2D(2)(x), mf.nn.max_pool(x, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"))
  close(L.AvgPool2D(3, {strides = 1})(x), mf.nn.avg_pool(x, 3, 1, "VALID"))
  close(L.GlobalAveragePooling2D()(x), mf.reduce_mean(x, {axis = {2, 3}}))
  T.eq(L.Flatten()(x).shape, {2, 147})
  local cd = L.Conv2D(2, {2, 3}, {dilation_rate = 2, use_bias = false})
  close(cd(x), mf.nn.conv2d(x, cd.kernel, 1, "VALID", {dilations = {1, 2, 2, 1}}))
end)

T.test("Dropout acts only with training = true", function()
  local d = L.Dropout(0.5, {seed = 1})
  local x = mf.ones{100, 100}
  T.eq(d(x), x)
  T.eq(d(x, {training = false}), x)
  local y = d(x, {training = true})
  local kept = mf.reduce_sum(mf.cast(mf.not_equal(y, 0), "float32")):item()
  T.ok(kept > 4000 and kept < 6000, "kept " .. kept)
  T.eq(mf.reduce_max(y):item(), 2, 1e-6)
  T.raises(function() d(x, {training = 1}) end, "option 'training' must be a boolean")
  T.raises(function() d(x, {train = true}) end, "unknown option 'train'")
  T.raises(function() L.Dropout(1) end, "Dropout: rate must be a number in [0, 1)")
end)

local function mnist_net()
  return L.Sequential{
    L.Conv2D(32, 3, {activation = "relu", input_shape = {8, 8, 1}}),
    L.Conv2D(64, 3, {activation = "relu"}),
    L.MaxPool2D(2),
    L.Dropout(0.25),
    L.Flatten(),
    L.Dense(128, {activation = "relu"}),
    L.Dropout(0.5),
    L.Dense(10),
  }
end

T.test("summary prints Keras's parameter counts and output shapes", function()
  L.reset_names()
  local m = mnist_net()
  local lines = {}
  local text = m:summary{print_fn = function(s) lines[#lines + 1] = s end}
  T.eq(#lines, 1)
  -- Keras: 320 = 3*3*1*32 + 32; 18,496 = 3*3*32*64 + 64; 32,896 = 256*128 + 128; 1,290
  for _, want in ipairs({'Model: "sequential"', "conv2d (Conv2D)", "(None, 6, 6, 32)", "320",
                         "conv2d_1 (Conv2D)", "(None, 4, 4, 64)", "18,496",
                         "max_pooling2d (MaxPooling2D)", "(None, 2, 2, 64)",
                         "flatten (Flatten)", "(None, 256)", "dense (Dense)", "32,896",
                         "dense_1 (Dense)", "(None, 10)", "1,290", "Total params: 53,002",
                         "Trainable params: 53,002", "Non-trainable params: 0"}) do
    T.ok(text:find(want, 1, true), "summary lacks '" .. want .. "':\n" .. text)
  end
  local unbuilt = L.Sequential{L.Dense(3)}
  T.raises(function() unbuilt:summary() end, "has not been built")
  unbuilt:build{-1, 4}
  T.ok(unbuilt:summary{print_fn = function() end}:find("Total params: 15", 1, true))
end)

T.test("variables: stable order, the same objects on every read", function()
  local m = mnist_net()
  T.raises(function() return m.trainable_variables[1].shape end, "attempt to index")
  m(mf.zeros{2, 8, 8, 1})
  local a, b = m.trainable_variables, m.trainable_variables
  T.eq(#a, 8)
  T.ok(a ~= b, "a fresh array each read")
  for i = 1, #a do T.ok(rawequal(a[i], b[i]), "same object at " .. i) end
  T.ok(a[1].name:find("/kernel$") and a[2].name:find("/bias$"), a[1].name .. " " .. a[2].name)
  m(mf.zeros{3, 8, 8, 1})
  local c = m.variables
  for i = 1, #a do T.ok(rawequal(a[i], c[i]), "unchanged by another call") end
  T.eq(#m.non_trainable_variables, 0)
end)

T.test("state_dict, load_state_dict and save/load round trip", function()
  L.reset_names()
  mf.random.seed(1)
  local m1 = L.Sequential{L.Dense(4, {activation = "tanh"}), L.Dense(2)}
  local x = mf.random.normal({3, 5})
  local y1 = m1(x)
  local sd = m1:state_dict()
  T.eq(sd["dense/kernel"].shape, {5, 4})
  T.eq(sd["dense_1/bias"].shape, {2})
  local path = os.tmpname()
  m1:save(path)
  L.reset_names()
  mf.random.seed(2)
  local m2 = L.Sequential{L.Dense(4, {activation = "tanh"}), L.Dense(2)}
  m2:build{-1, 5}
  T.ok(mf.reduce_max(mf.abs(m2(x) - y1)):item() > 1e-3, "different before load")
  m2:load(path)
  T.eq(m2(x), y1)
  os.remove(path)
  local bad = {}
  for k, v in pairs(sd) do bad[k] = v end
  bad["dense/kernel"] = mf.zeros{4, 4}
  bad["dense_1/bias"] = nil
  bad["extra/w"] = mf.zeros{1}
  local ok, err = pcall(m2.load_state_dict, m2, bad)
  T.ok(not ok)
  for _, want in ipairs({"load_state_dict: 3 mismatches", "'dense/kernel' has shape (4, 4)",
                         "missing 'dense_1/bias'", "unexpected 'extra/w'"}) do
    T.ok(err:find(want, 1, true), err)
  end
  T.eq(m2(x), y1) -- nothing was assigned
end)

T.test("a layer works under a tape, in a graph and inside mf.trace", function()
  mf.random.seed(5)
  local x = mf.random.normal({4, 3})
  local d = L.Dense(2, {activation = "sigmoid"})
  -- tape
  local tape = mf.GradientTape()
  local loss = mf.reduce_sum(d(x))
  local g = tape:gradient(loss, d.trainable_variables)
  T.eq(#g, 2)
  T.eq(g[1].shape, {3, 2})
  -- mf.trace: the first call builds eager Variables outside the traced graph
  local m = L.Sequential{L.Dense(3, {activation = "relu"}), L.Dense(1)}
  local f = mf.trace(function(t) return m(t) end)
  local yt = f(x)
  T.eq(getmetatable(m.variables[1]).__name, "mf.Variable")
  T.ok(not tostring(m.variables[1]):find("graph"), tostring(m.variables[1]))
  T.eq(yt, m(x))
  m.variables[3]:assign(m.variables[3] * 2)
  close(f(x), m(x))
  -- graph mode: TensorFlow 1.x variables, values in the session
  local gr = mf.Graph()
  local model, xp, out, init
  gr:as_default(function()
    model = L.Sequential{L.Dense(3, {activation = "relu"}), L.Dense(1)}
    xp = mf.placeholder("float32", {-1, 3})
    out = model(xp)
    init = mf.global_variables_initializer()
  end)
  T.eq(out.shape, {-1, 1})
  local sess = mf.Session(gr)
  sess:run(init)
  local v = sess:run(model.variables)
  local want = mf.matmul(mf.nn.relu(mf.matmul(x, v[1]) + v[2]), v[3]) + v[4]
  close(sess:run(out, {[xp] = x}), want)
end)

T.test("mf.layers.Model: a table with layers in its fields", function()
  L.reset_names()
  local net = L.Model{
    fc1 = L.Dense(4, {activation = "relu"}),
    fc2 = L.Dense(2),
    call = function(self, x) return self.fc2(self.fc1(x)) end,
  }
  local x = mf.ones{1, 3}
  T.eq(net(x).shape, {1, 2})
  local vars = net.trainable_variables
  T.eq(#vars, 4)
  T.eq(vars[1].name, "dense/kernel") -- fc1 (sorted field order)
  T.ok(net:state_dict()["dense_1/bias"])
  T.raises(function() L.Model{fc = L.Dense(1)} end, "needs a method call")
end)

T.test("shape errors at build time name the layer", function()
  L.reset_names()
  local m = L.Sequential{L.Conv2D(4, 5), L.Dense(2)}
  T.raises(function() m(mf.zeros{1, 3, 3, 1}) end,
           "conv2d (Conv2D): input (1, 3, 3, 1) is smaller than the 5x5 window")
  local d = L.Dense(3)
  d(mf.zeros{2, 4})
  T.raises(function() d(mf.zeros{2, 5}) end,
           "dense_1 (Dense): expected 4 input features (built for them), got shape (2, 5)")
  T.raises(function() L.Dense(3)(mf.zeros{4}) end, "(Dense): expected input of rank >= 2")
  T.raises(function() L.Conv2D(3, 3)(mf.zeros{2, 8, 8}) end, "(Conv2D): expected input of rank 4")
  T.raises(function() L.Dense(0) end, "Dense: units must be a positive integer")
  T.raises(function() L.Dense(3, {activaton = "relu"}) end, "Dense: unknown option 'activaton'")
  T.raises(function() L.Dense(3, {activation = "relux"}) end, "activation must be a function")
  T.raises(function() L.Conv2D(3, 3, {padding = "full"}) end, "option 'padding' must be")
  T.raises(function() L.Sequential{L.Dense(1), 3} end, "Sequential: element 2 is not a layer")
  T.raises(function() L.Dense(2)("x") end, "(Dense): expected a tensor, got string")
  local g = mf.Graph()
  g:as_default(function()
    local p = mf.placeholder("float32", {2, -1})
    T.raises(function() L.Dense(2)(p) end, "number of features (axis 2) of the input must be known")
  end)
end)

T.done()
