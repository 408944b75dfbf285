-- test_strict_args.lua — what `make fuzz` checks for every function, pinned
-- for the cases it found: an extra argument or an unknown option is an
-- error naming the function; errors from inside lib/ functions name the
-- function called; a closed tensor's method names the method.
local T = dofile("tests/lua/harness.lua")

T.test("extra arguments and unknown options are errors naming the function", function()
  local x = mf.ones{2}
  T.raises(function() mf.zeros({2}, {bogus = 1}) end, "zeros: unknown option 'bogus'")
  T.raises(function() mf.ones_like(x, {bogus = 1}) end, "ones_like: unknown option 'bogus'")
  T.raises(function() mf.fill({2}, 1, nil, 4) end, "bad argument #4 to 'fill'")
  T.raises(function() mf.random.normal({2}, {}, 3) end, "bad argument #3 to 'normal'")
  T.raises(function() mf.clock(1) end, "bad argument #1 to 'clock'")
  T.raises(function() mf.Graph(1) end, "bad argument #1 to 'Graph'")
  T.raises(function() mf.grad(function(a) return a end, 5) end, "bad argument #2 to 'grad'")
  T.raises(function() mf.initializers.zeros({}, 1) end, "bad argument #2 to 'zeros'")
  T.raises(function() mf.initializers.constant(coroutine.create(print)) end,
           "bad argument #1 to 'constant'")
  T.raises(function() mf.train.GradientDescentOptimizer(0.1, {}, 3) end,
           "GradientDescentOptimizer")
  T.raises(function() x:numel(1) end, "bad argument #2 to 'numel'")
  T.raises(function() mf.ceil({a = 1}) end, "ceil: expected data")
  T.raises(function() mf.dist.broadcast_variables({a = 1}) end, "broadcast_variables: expected")
  local ds = mf.data.Dataset.range(4)
  T.raises(function() ds:batch(2, {}, 3) end, "batch: takes at most 3 arguments")
  T.raises(function() ds:take(1, 2) end, "take: takes at most 2 arguments")
  -- lib/ functions: refused by their parameter count
  T.raises(function() mf.nn.elu(x, nil, nil, 1) end, "bad argument #4 to 'elu'")
  T.raises(function() mf.layers.Sequential({name = "m"}) end, "Sequential: expected an array")
  -- an options table with no keys is no option
  T.eq(mf.relu(mf.tensor{-1, 2}, setmetatable({}, {__index = function() end})), {0, 2})
end)

T.test("mf.trace(f) refuses any argument after f, after nils too (#35, fuzz seed 2)", function()
  local f = function() end
  T.raises(function() return mf.trace(f, nil, nil, nil, coroutine.create(print)) end,
           "bad argument #5 to 'trace' (no value expected")
  T.raises(function() return mf.trace(f, nil, {jit_compile = true}) end,
           "bad argument #3 to 'trace' (no value expected")
  T.raises(function() return mf.trace(f, {reduce_retracing = true}) end,
           "unknown option 'reduce_retracing'")
  T.ok(mf.trace(f, nil, nil) ~= nil, "trailing nils are no arguments")
end)

T.test("errors from inside lib/ name the function called, at the caller's line", function()
  local ok, err = pcall(function()
    local m = mf.nn.moments(mf.ones{2, 2}, 5)
    return m
  end)
  T.ok(not ok and err:find("test_strict_args.lua:%d+: moments: reduce_mean: axis 5"), err)
  T.raises(function() mf.layers.MaxPool2D("s") end, "MaxPool2D: pool_size")
  T.raises(function() mf.train.AdamW(mf.ones{2, 2, 2}) end, "AdamW: AdamOptimizer")
  T.raises(function() mf.clip_by_average_norm(mf.ones{2}) end,
           "bad argument #2 to 'clip_by_average_norm'")
  T.raises(function() mf.data.Dataset.range() end, "Dataset.range: argument 1 must be")
end)

T.test("a closed tensor or Variable: the method or function called is named", function()
  local c = mf.ones{2}
  getmetatable(c).__close(c)
  T.raises(function() return c:relu() end, "bad argument #1 to 'relu' (tensor is closed)")
  T.raises(function() return mf.add(c, 1) end, "bad argument #1 to 'add' (tensor is closed)")
  T.raises(function() return c.shape end, "index: the tensor is closed (reading shape)")
  local v = mf.Variable(mf.ones{2})
  getmetatable(v).__close(v)
  T.raises(function() return mf.exp(v) end, "bad argument #1 to 'exp' (variable is closed)")
  T.raises(function() return mf.trace(mf.progress{total = 1}) end,
           "bad argument #1 to 'trace' (mf.Tensor expected, got mf.Progress)")
end)

T.test("the binder: an optional tensor input (lstm_cell's c_prev), fused_batch_norm", function()
  local z = mf.tensor{{0.5, -1, 2, 0.25}}
  local h0, c0 = mf.nn.lstm_cell(z)
  local h1, c1 = mf.nn.lstm_cell(z, mf.zeros{1, 1})
  local h2, c2 = mf.nn.lstm_cell(z, nil)
  T.eq(h0, h1); T.eq(c0, c1); T.eq(h2, h1); T.eq(c2, c1)
  local sig = function(v) return 1 / (1 + math.exp(-v)) end
  local c = sig(0.5) * math.tanh(2)   -- gates i, f, g, o; c_prev = 0
  T.eq(c0, {{c}}, 1e-6)
  T.eq(h0, {{sig(0.25) * math.tanh(c)}}, 1e-6)
  T.raises(function() mf.nn.lstm_cell(z, mf.zeros{1, 1}, 3) end, "bad argument #3 to 'lstm_cell'")
  -- a table of options where the optional input stands: the input may be one of them
  T.raises(function() mf.nn.lstm_cell(z, {bogus = 1}) end, "lstm_cell: unknown option 'bogus'")
  local h3, c3 = mf.nn.lstm_cell(z, {c_prev = mf.zeros{1, 1}})
  T.eq(h3, h1); T.eq(c3, c1)
  T.raises(function() mf.nn.lstm_cell(z, mf.zeros{1, 1}, {c_prev = mf.zeros{1, 1}}) end,
           "lstm_cell: c_prev given twice")
  T.raises(function() mf.nn.lstm_cell() end, "bad argument #1 to 'lstm_cell'")
  T.raises(function() mf.nn.fused_batch_norm(mf.ones{2, 1}, mf.ones{1}, mf.zeros{1}, {eps = 1}) end,
           "fused_batch_norm: unknown option 'eps'")
  local y = mf.nn.fused_batch_norm(mf.tensor{{1}, {3}}, mf.ones{1}, mf.zeros{1}, {epsilon = 0})
  T.eq(y, {{-1}, {1}})
end)

T.test("Dataset:cardinality counts without iterating", function()
  local d = mf.data.Dataset.range(10)
  T.eq(d:epochs(2 ^ 40):cardinality(), 10 * 2 ^ 40)
  T.eq(d:batch(3, {drop_remainder = true}):cardinality(), 3)
  T.eq(d:shard(3, 1):cardinality(), 4)   -- 0, 3, 6, 9: TensorFlow's shard keeps every element
  T.eq(d:epochs(2):take(15):skip(2):cardinality(), 13)
  T.eq(d:epochs():cardinality(), mf.data.INFINITE_CARDINALITY)
end)

T.test("shape errors name the function called, not the field it was called through", function()
  -- a callable object as a map function was named 'fn' (Lua's guess from dataset.lua's st.fn)
  local ds = mf.data.Dataset.from_tensor_slices(mf.ones{4, 2})
  ds = ds:map(mf.initializers.glorot_uniform())
  T.raises(function() for _ in ds:iter() do end end,
           "bad argument #2 to 'glorot_uniform' (shape (array of integers) expected, got mf.Tensor)")
  local f = {fn = mf.zeros}
  T.raises(function() f.fn({2, -3}) end, "bad argument #1 to 'zeros' (shape entry 2 must be >= 0")
  T.raises(function() f.fn({2, "a"}) end, "zeros: shape entry 2 must be an integer, got string")
end)

T.test("Lua data converted by a hand binding names that binding, whatever calls it", function()
  -- the name came from the Lua stack before: a local, a field or pcall showed other names
  local cut, t = mf.split, {f = mf.unstack}
  local ok, err = pcall(cut, {1, "a"}, 2)
  T.ok(not ok and err:find("split: expected a number (got string) at data[2]", 1, true), err)
  T.raises(function() return t.f({true, 1}) end, "unstack: expected a boolean (got number)")
  T.raises(function() return mf.nn.dropout({{1}, {1, 2}}, 0.5) end, "dropout: ragged data")
  T.raises(function() return mf.tensordot({{1, "x"}}, mf.ones{2}, 1) end,
           "tensordot: expected a number (got string) at data[1][2]")
end)

T.test("lib/'s methods refuse extra arguments (lib.publish_methods) and name themselves", function()
  local m = mf.layers.Sequential{mf.layers.Dense(2)}
  T.raises(function() m:build({-1, 3}, 5) end, "bad argument #3 to 'build'")
  T.raises(function() m:build({-1, "x"}) end,
           "build: input shape entry 2 must be an integer (-1: unknown), got string")
  T.raises(function() m:summary({}, 1) end, "bad argument #3 to 'summary'")
  T.raises(function() m:state_dict(1) end, "bad argument #2 to 'state_dict'")
  T.raises(function() m:load_state_dict({}, {}, 1) end, "bad argument #4 to 'load_state_dict'")
  T.raises(function() m:save("x.safetensors", 1) end, "bad argument #3 to 'save'")
  T.raises(function() m:load("x.safetensors", 1) end, "bad argument #3 to 'load'")
  T.raises(function() m:add(mf.layers.Dense(1), 2) end, "bad argument #3 to 'add'")
  T.raises(function() m:count_params(1) end, "bad argument #2 to 'count_params'")
  local w = mf.train.AdamW(0.1)
  T.raises(function() w:minimize(mf.ones{1}, {}, 3) end, "bad argument #4 to 'minimize'")
  T.raises(function() w:apply_gradients({}, {}, 3) end, "bad argument #4 to 'apply_gradients'")
  T.raises(function() w:get_slot_names(1) end, "bad argument #2 to 'get_slot_names'")
  T.raises(function() mf.metrics.Mean():result(1) end, "bad argument #2 to 'result'")
  T.raises(function() mf.layers.LSTM(2, {stateful = true}):reset_state(1) end,
           "bad argument #2 to 'reset_state'")
  T.raises(function() mf.layers.Embedding(2, 2):compute_mask({1}, nil, 2) end,
           "bad argument #4 to 'compute_mask'")   -- Keras's (inputs, mask)
  T.raises(function() mf.losses.mse{}(mf.ones{1}, mf.ones{1}, 1, 2) end,
           "mean_squared_error: expected (labels, outputs [, sample_weight]), got 4 arguments")
end)

T.test("a shape is an array: keyed entries and eye's third argument are errors", function()
  -- options written inside the shape were read as shape () and dropped (make fuzz-api)
  T.raises(function() mf.random.normal{mean = 5} end,
           "bad argument #1 to 'random.normal' (shape (array of integers) expected, got a "
           .. "table with key 'mean')")
  T.raises(function() mf.zeros{2, dtype = "int32"} end, "got a table with key 'dtype'")
  T.raises(function() mf.ones{2, [4] = 3} end, "got a table with key '4'")
  T.raises(function() mf.eye(5, {}, {bogus = 1}) end, "bad argument #3 to 'eye'")
  T.raises(function() mf.eye(5, {}, coroutine.create(print)) end, "eye takes at most 2 arguments")
  T.raises(function() mf.eye(5, 3, {}, 1) end, "eye takes at most 3 arguments")
  T.eq(mf.eye(2, 3).shape, {2, 3})
  T.eq(mf.zeros{2, 3}.shape, {2, 3})
end)

T.test("a progress line's done and __close check self first (fuzz seed 13)", function()
  local mt = getmetatable(mf.progress{total = 1, tty = false})
  local done = mt.__index.done
  -- these crashed: the user value was read before self was checked
  T.raises(function() return done(3) end, "mf.Progress expected, got number")
  T.raises(function() return mt.__close({}) end, "mf.Progress expected, got table")
end)

T.done()
