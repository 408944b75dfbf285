-- test_fit_edges.lua — model:fit / evaluate where they used to give a
-- silently wrong answer or hang (issue #35: W5 evaluate of no data, W8 a
-- layer swapped by a callback under trace, H6 an endless dataset, fit's
-- option types and the loss's errors; issue #27: fit(x, y, {batch_size,
-- validation_split}) with tensors, Keras's rules).
local T = dofile("tests/lua/harness.lua")
local L, D = mf.layers, mf.data.Dataset

local x = mf.reshape(mf.range(0, 12, 1, {dtype = "float32"}), {6, 2}) / 10
local y = mf.reduce_sum(x, {axis = 2, keepdims = true})

-- A one-Dense model with fixed initial weights, so that two runs agree.
local function model(init)
  return L.Sequential{L.Dense(1, {kernel_initializer = init or "ones"})}
end

local function sgd() return mf.train.GradientDescentOptimizer(0.1) end

T.test("W5: evaluate of no data is an error, not loss 0", function()
  local m = model()
  local ds = D.from_tensor_slices{x, y}:batch(2)
  m:fit(ds, {loss = "mean_squared_error", verbose = 0})
  T.raises(function() m:evaluate(ds:take(0)) end,
           "evaluate: the dataset gave no batches: the loss of no data is undefined")
  T.raises(function() m:evaluate(ds:filter(function() return false end)) end,
           "evaluate: the dataset gave no batches")
  T.raises(function()
    m:fit(ds, {loss = "mean_squared_error", verbose = 0, validation_data = ds:take(0)})
  end, "fit: option 'validation_data' gave no batches")
  T.raises(function() m:fit(ds:take(0), {loss = "mean_squared_error", verbose = 0}) end,
           "fit: the dataset gave no batches in epoch 1")
  -- and the error is at the caller's line, not inside lib/fit.lua
  local ok, err = pcall(function() return m:evaluate(ds:take(0)) end)
  T.ok(not ok and tostring(err):find("test_fit_edges%.lua:%d+: evaluate:"), tostring(err))
end)

T.test("W8: a layer a callback swaps in is the one trained, traced or not", function()
  local function run(trace)
    local m = model()
    local swapped
    m:fit(D.from_tensor_slices{x, y}:batch(3), {loss = "mean_squared_error", epochs = 3,
      optimizer = sgd(), verbose = 0, trace = trace, callbacks = {function(epoch)
        if epoch == 1 then
          swapped = L.Dense(1, {kernel_initializer = "zeros"})
          m.layers[1] = swapped
        end
      end}})
    return swapped
  end
  local traced, eager = run(true), run(false)
  T.ok(traced.kernel ~= nil, "the swapped-in layer was never called under trace")
  T.eq(traced.kernel, eager.kernel, 1e-6)
  T.eq(traced.bias, eager.bias, 1e-6)
  T.ok(math.abs(eager.kernel:totable()[1][1]) > 1e-3, "the new layer trained")
end)

T.test("H6: an endless dataset needs steps_per_epoch; one iterator across epochs", function()
  local m = model()
  local ds = D.from_tensor_slices{x, mf.tensor{{1}, {2}, {3}, {4}, {5}, {6}}}:batch(1)
  T.raises(function() m:fit(ds:epochs(), {loss = "mean_squared_error", verbose = 0}) end,
           "fit: the dataset repeats forever (cardinality -1): pass steps_per_epoch")
  local seen = {}
  local function loss(labels, out)
    seen[#seen + 1] = labels:totable()[1][1]
    return mf.reduce_mean(mf.square(out - labels))
  end
  local h = m:fit(ds:epochs(), {loss = loss, epochs = 3, steps_per_epoch = 4, trace = false,
                                optimizer = sgd(), verbose = 0})
  T.eq(#h.loss, 3)
  -- Keras's rule: epoch 2 goes on where epoch 1 stopped
  T.eq(seen, {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6})
  -- a finite dataset that runs out mid-epoch is an error (Keras warns and stops)
  T.raises(function()
    m:fit(ds, {loss = "mean_squared_error", epochs = 2, steps_per_epoch = 4, verbose = 0})
  end, "fit: the dataset ran out after 2 of the 4 batches of epoch 2 (steps_per_epoch = 4)")
  -- steps_per_epoch equal to one pass: a new pass every epoch
  seen = {}
  m:fit(ds:take(2), {loss = loss, epochs = 2, steps_per_epoch = 2, trace = false, verbose = 0})
  T.eq(seen, {1, 2, 1, 2})
  T.raises(function()
    m:fit(ds, {loss = "mean_squared_error", verbose = 0, validation_data = ds:epochs()})
  end, "fit: option 'validation_data' repeats forever (cardinality -1): pass validation_steps")
  local hv = m:fit(ds, {loss = "mean_squared_error", verbose = 0, validation_data = ds:epochs(),
                        validation_steps = 2})
  T.ok(hv.val_loss[1] > 0)
  T.raises(function() m:evaluate(ds:epochs()) end,
           "evaluate: the dataset repeats forever (cardinality -1): pass steps")
  T.eq(m:evaluate(ds:epochs(), {steps = 6}).loss, m:evaluate(ds).loss, 1e-6)
  T.raises(function() m:predict(ds:epochs()) end,
           "predict: the dataset repeats forever (cardinality -1): pass steps")
  T.eq(m:predict(ds:epochs(), {steps = 8}).shape, {8, 1})
  T.eq(m:predict(ds:epochs(), {steps = 2}), m:predict(mf.slice(x, {1, 1}, {2, 2})), 1e-6)
  T.raises(function() m:predict(x, {steps = 2}) end, "predict: option 'steps' is for a Dataset")
end)

T.test("fit's options are checked: wrong types are errors", function()
  local m = model()
  local ds = D.from_tensor_slices{x, y}:batch(3)
  local function fit(opts)
    opts.loss = opts.loss or "mean_squared_error"
    return function() m:fit(ds, opts) end
  end
  T.raises(fit{verbose = "x"}, "fit: option 'verbose' must be 0, 1, 2 or \"auto\", got 'x'")
  T.raises(fit{verbose = 3}, "fit: option 'verbose' must be 0, 1, 2")
  T.raises(fit{metrics = "accuracy"},
           "fit: option 'metrics' must be an array such as {\"accuracy\"}, got string")
  T.raises(fit{metrics = mf.metrics.Accuracy()}, "fit: option 'metrics' must be an array")
  T.raises(fit{metrics = {acc = "accuracy"}}, "got a table with the key 'acc'")
  T.raises(fit{trace = "no"}, "fit: option 'trace' must be a boolean, got string")
  T.raises(fit{steps_per_epoch = 0}, "fit: option 'steps_per_epoch' must be a positive integer")
  T.raises(fit{batch_size = 2}, "fit: option 'batch_size' is for tensors x, y")
  T.raises(fit{validation_split = 0.5}, "fit: option 'validation_split' is for tensors x, y")
  T.raises(function() m:fit(ds, {loss = "mean_squared_error"}, 5) end,
           "fit: expected (dataset [, options]), got a third argument (number)")
  T.raises(function() m:fit("data") end, "fit: expected an mf.data.Dataset")
  T.raises(function() m:fit(x, y, {loss = "mse"}, 4) end, "fit: takes at most 3 arguments, got 4")
  T.raises(function() m:evaluate(x, y, {}, 4) end, "evaluate: takes at most 3 arguments, got 4")
  T.raises(function() m:predict(x, {}, 4) end, "predict: takes at most 2 arguments, got 3")
  -- verbose 2: one line per epoch
  local old, lines = print, {}
  print = function(s) lines[#lines + 1] = s end
  local ok, err = pcall(m.fit, m, ds, {loss = "mean_squared_error", epochs = 2, verbose = 2})
  print = old
  assert(ok, err)
  T.eq(#lines, 2)
  T.ok(lines[2]:find("^epoch 2/2: loss %d"), lines[2])
end)

T.test("a loss that returns no scalar is named as the user's error, at the user's line", function()
  local m = model()
  local ds = D.from_tensor_slices{x, y}:batch(3)
  for _, trace in ipairs({true, false}) do
    local ok, err = pcall(function()
      m:fit(ds, {loss = function(a, b) return a - b end, verbose = 0, trace = trace})
    end)
    T.ok(not ok, "a (3, 1) loss should fail")
    T.ok(tostring(err):find("fit: the loss function must return a scalar, got shape (3, 1)", 1,
                            true), tostring(err))
    T.ok(not tostring(err):find("lib/fit.lua", 1, true), tostring(err))
  end
  T.raises(function() m:evaluate(ds, {loss = function() return "x" end}) end,
           "evaluate: the loss function must return a scalar tensor, got string")
end)

T.test("fit(x, y, {batch_size, validation_split, shuffle}): Keras's tensors", function()
  -- shuffle = false: the same steps as the Dataset batched the same way
  local a, b = model(), model()
  local ha = a:fit(x, y, {loss = "mean_squared_error", batch_size = 4, shuffle = false,
                          epochs = 2, optimizer = sgd(), verbose = 0})
  local hb = b:fit(D.from_tensor_slices{x, y}:batch(4), {loss = "mean_squared_error", epochs = 2,
                                                         optimizer = sgd(), verbose = 0})
  T.eq(ha.loss, hb.loss, 1e-6)
  T.eq(a.layers[1].kernel, b.layers[1].kernel, 1e-6)
  -- validation_split = 1/3 of 6 samples: train on the first 4, validate on the last 2
  -- (Keras: split_at = floor(6 * (1 - 1/3)) = 4, before shuffling)
  local c = model()
  local step = mf.Variable(0, {dtype = "int64", trainable = false})
  local hc = c:fit(x, y, {loss = "mean_squared_error", batch_size = 3, validation_split = 1 / 3,
                          epochs = 2, optimizer = sgd(), verbose = 0, global_step = step})
  T.eq(step:read_value():item(), 4)          -- 2 batches (3 + 1) of the 4 training rows, twice
  local last = c:evaluate(mf.slice(x, {5, 1}, {2, 2}), mf.slice(y, {5, 1}, {2, 1}))
  T.eq(hc.val_loss[2], last.loss, 1e-6)
  T.eq(c:evaluate(x, y, {batch_size = 4}).loss,
       c:evaluate(D.from_tensor_slices{x, y}:batch(6)).loss, 1e-6)
  -- Keras's validation_data = (x_val, y_val)
  local xv, yv = mf.slice(x, {1, 1}, {3, 2}), mf.slice(y, {1, 1}, {3, 1})
  local hv = c:fit(x, y, {loss = "mean_squared_error", validation_data = {xv, yv}, verbose = 0,
                          batch_size = 2})
  T.eq(hv.val_loss[1], c:evaluate(xv, yv).loss, 1e-6)
  T.raises(function() c:fit(x, y, {loss = "mse", validation_data = {xv}}) end,
           "fit: option 'validation_data' must be a Dataset or {x_val, y_val} (tensors), got table")
  T.raises(function() c:fit(x, y, {loss = "mse", validation_data = {xv, y}}) end,
           "fit: validation_data: x_val has 3 samples but y_val has 6")
  T.raises(function() c:fit(x, y, {loss = "mse", validation_split = 1}) end,
           "fit: option 'validation_split' must be a number in [0, 1), got 1")
  T.raises(function() c:fit(x, y, {loss = "mean_squared_error", validation_split = 0.9}) end,
           "fit: 6 samples cannot be split into training and validation sets with "
           .. "validation_split = 0.9")
  T.raises(function() c:fit(x, {loss = "mse"}) end,
           "fit: expected the labels y after the inputs x (fit(x, y, {...})), got table")
  T.raises(function() c:fit(x, mf.ones{5, 1}, {loss = "mse"}) end,
           "fit: x has 6 samples but y has 5")
  T.raises(function() c:fit(x, y, {loss = "mse", shuffle = 1}) end,
           "fit: option 'shuffle' must be a boolean, got number")
end)

T.done()
