-- cases.lua — calls the API fuzzer (tests/fuzz/api_fuzz.lua) once found to
-- crash, to trip a sanitizer or to raise a message that did not name the
-- function. Each case: {name, function, pattern}; the function must raise
-- an error matching the plain-text pattern, or, when pattern is false,
-- return normally. Replayed by tests/lua/test_fuzz_api_regress.lua.
local reg = debug.getregistry()
local function freed(mt_name, obj)
  reg[mt_name].__gc(obj)
  return obj
end

return {
  {"a Graph freed by hand", function()
    local g = freed("mf.Graph", mf.Graph())
    return g:get_tensor("x:0")
  end, "Graph is freed"},
  {"printing a freed Graph", function() return tostring(freed("mf.Graph", mf.Graph())) end,
   false},
  {"a ProfileReport freed by hand", function()
    local r = freed("mf.ProfileReport", mf.profile(function() end))
    assert(tostring(r) == "<freed mf.ProfileReport>")
    return r:rows()
  end, "ProfileReport is freed"},
  {"an Operation freed by hand", function()
    local g, op = mf.Graph(), nil
    g:as_default(function() op = mf.group({}) end)
    assert(tostring(freed("mf.Operation", op)) == "<freed mf.Operation>")
    return op.name
  end, "Operation is freed"},
  {"mf.tensor of a symbolic tensor (a NULL storage read)", function()
    local g, x = mf.Graph(), nil
    g:as_default(function() x = mf.placeholder("float32", {2}) end)
    return mf.tensor(x)
  end, "tensor: a symbolic (graph) tensor has no values yet"},
  {"printing an optimizer whose learning rate is a graph tensor", function()
    local g, opt = mf.Graph(), nil
    g:as_default(function() opt = mf.train.AdamOptimizer(mf.placeholder("float32", {})) end)
    assert(tostring(opt):find("<graph tensor>", 1, true))
  end, false},
  {"table data errors name the function", function() return mf.matmul({"x"}, mf.ones{1, 1}) end,
   "matmul: expected a number (got string) at data[1]"},
  {"table data errors name one_hot", function() return mf.one_hot({"x"}, 2) end,
   "one_hot: expected a number (got string) at data[1]"},
  {"table data errors name assign_add", function()
    return mf.Variable(mf.ones{2}):assign_add({"x"})
  end, "assign_add: expected a number (got string) at data[1]"},
  {"a Dataset method called with a dot", function()
    local ds = mf.data.Dataset.from_tensor_slices(mf.ones{3})
    return ds.batch(2)
  end, "batch: expected a Dataset (call it as ds:batch(...)), got number"},
  {"Dataset.from_tensor_slices() made a dataset that could not be printed", function()
    return mf.data.Dataset.from_tensor_slices()
  end, "expected a tensor or an array of tensors, got nil"},
  {"a shuffle buffer of 1e308 (no integer form) broke iteration", function()
    return mf.data.Dataset.from_tensor_slices(mf.ones{3}):shuffle(1e308)
  end, "shuffle: buffer_size must be a positive integer, got 1e+308"},
  {"a batch size of -1e308 broke string.format", function()
    return mf.data.Dataset.from_tensor_slices(mf.ones{3}):batch(-1e308)
  end, "batch: the batch size must be a positive integer, got -1e+308"},
  {"tile multiples overflowing int64", function()
    return mf.tile(mf.ones{2, 2}, {math.maxinteger, 1})
  end, "tile: axis 1 of size 2 times 9223372036854775807 overflows"},
  {"an initializer printed with extra arguments", function()
    local init = mf.initializers.glorot_uniform{seed = 1}
    assert(reg["mf.Initializer"].__tostring(init, print, 3))
  end, false},
  {"an initializer called on a number", function()
    return reg["mf.Initializer"].__call(2)
  end, "table expected, got number"},
  {"a schedule printed from a table of numbers", function()
    return reg["mf.Schedule"].__tostring({1, 2})
  end, "Schedule: step 1 is a number, not a step record"},
  {"an empty tensor with huge dims overflowed kernels", function()
    return mf.zeros{0, 2 ^ 40, 2 ^ 40}
  end, "is too large"},
  {"reshape of an empty tensor to huge dims", function()
    return mf.reshape(mf.zeros{0, 3}, {0, 2 ^ 40, 2 ^ 40})
  end, "reshape: shape (0,1099511627776,1099511627776) is too large"},
  {"a placeholder whose numel overflows", function()
    local g = mf.Graph()
    return g:as_default(function() return mf.placeholder("float32", {2 ^ 40, 2 ^ 40}) end)
  end, "placeholder: tensor: shape (1099511627776,1099511627776) is too large"},
  {"a graph broadcast_to whose numel overflows", function()
    local g = mf.Graph()
    return g:as_default(function()
      return mf.broadcast_to(mf.placeholder("float32", {-1}), {2 ^ 40, 2 ^ 40})
    end)
  end, "broadcast_to: tensor: shape (1099511627776,1099511627776) is too large"},
  {"slice begin math.mininteger (begin - 1 overflowed)", function()
    return mf.slice(mf.ones{2}, math.mininteger)
  end, "slice: begin -9223372036854775808 out of range for axis 1 of size 2"},
  {"slice size math.maxinteger (begin + size overflowed)", function()
    return mf.slice(mf.ones{2}, 1, math.maxinteger)
  end, "runs past the end of axis 1"},
  {"an integer option of 1e308 (a C cast of it is undefined)", function()
    return mf.nn.softmax(mf.ones{2, 2}, {axis = 1e308})
  end, "softmax: option 'axis' must be an integer, got 1e+308"},
  {"a trace guard closed on a tensor wrote into the tensor's box", function()
    return reg["mf.TraceGuard"].__close(mf.ones{2})
  end, "mf.TraceGuard expected"},
  {"gather index math.mininteger (the message's index + 1 overflowed)", function()
    return mf.gather(mf.ones{3}, mf.tensor({math.mininteger}, "int64"))
  end, "gather: index -9223372036854775808 out of range for axis 1 of size 3"},
  {"a progress bar past step math.maxinteger (step + 1 overflowed)", function()
    local p = mf.progress{}
    p:update{step = math.maxinteger}
    p:update{}
    p:done()
  end, false},
  {"gradcheck of a symbolic input read a NULL storage", function()
    local g, x = mf.Graph(), nil
    g:as_default(function() x = mf.placeholder("float32", {2}) end)
    return mf.test.gradcheck(function(a) return mf.reduce_sum(a) end, {x})
  end, "gradcheck: an input is a symbolic (graph) tensor"},
  {"a captured variable's read kept by a Dataset outlived its graph (use after free)",
   function()
    local v = mf.Variable(mf.ones{3})
    local ds
    do
      local g = mf.Graph()
      g:as_default(function() ds = mf.data.Dataset.from_tensor_slices({v}) end)
    end
    collectgarbage()
    collectgarbage()   -- the Graph box goes; the dataset's tensor must keep the graph
    ds = nil
    collectgarbage()
    collectgarbage()
  end, false},
  {"mf.group of an op of another graph named control_dependencies", function()
    local g1, g2, op = mf.Graph(), mf.Graph(), nil
    g1:as_default(function() op = mf.group({}) end)
    return g2:as_default(function() return mf.group({op}) end)
  end, "group: item 1 ('NoOp') is in another graph"},
  {"a Variable field set with a closed tensor as the key", function()
    local t = mf.ones{2}
    reg["mf.Tensor"].__close(t)
    local v = mf.Variable(mf.ones{2})
    v[t] = 1   -- a tensor key is a mask or positions (v[mask] = 1): this one is closed
  end, "tensor is closed"},
  {"unstack of a tensor of another graph named the inner gather", function()
    local g1, g2, x = mf.Graph(), mf.Graph(), nil
    g1:as_default(function() x = mf.placeholder("float32", {2, 3}) end)
    return g2:as_default(function() return mf.unstack(x) end)
  end, "unstack: gather: input 1 ('Placeholder') is a tensor of another graph"},
  {"l2_loss of a tensor of another graph named the inner square", function()
    local g1, g2, x = mf.Graph(), mf.Graph(), nil
    g1:as_default(function() x = mf.placeholder("float32", {2}) end)
    return g2:as_default(function() return mf.nn.l2_loss(x) end)
  end, "l2_loss: square: input 1 ('Placeholder') is a tensor of another graph"},
  {"gather indices of another graph named the inner subtract", function()
    local g1, g2, i = mf.Graph(), mf.Graph(), nil
    g1:as_default(function() i = mf.placeholder("int64", {2}) end)
    return g2:as_default(function() return mf.gather(mf.ones{3}, i) end)
  end, "gather: subtract: input 1 ('Placeholder') is a tensor of another graph"},
  {"one_hot indices of another graph named the inner subtract", function()
    local g1, g2, i = mf.Graph(), mf.Graph(), nil
    g1:as_default(function() i = mf.placeholder("int64", {2}) end)
    return g2:as_default(function() return mf.one_hot(i, 3) end)
  end, "one_hot: subtract: input 1 ('Placeholder') is a tensor of another graph"},
  {"mf.trace forwarded to the matrix trace through lua_call ('?')", function()
    return mf.trace()
  end, "bad argument #1 to 'trace' (mf.Tensor expected, got no value)"},
  {"a traced C function's argument error said '?' and not the call", function()
    return mf.trace(mf.placeholder)("float32", "x")
  end, "traced function: bad argument #2"},
  {"a traced function inlined in a graph reported the bare inner error", function()
    local f = mf.trace(function() error("boom", 0) end)
    return mf.Graph():as_default(function() return f() end)
  end, "traced function: boom"},
  {"Function:graph's tracing errors did not name graph", function()
    return mf.trace(function() error("boom", 0) end):graph()
  end, "graph: boom"},
  {"p:update errors said 'progress:'", function()
    local p = mf.progress{tty = false}
    return p:update{step = 0}
  end, "update: 'step' must be at least 1, got 0"},
  {"p:update metric errors said 'progress:'", function()
    local p = mf.progress{tty = false}
    return p:update{loss = "x"}
  end, "update: 'loss' must be a number or a one-element tensor, got string"},
  {"an eager apply_gradients with a graph-tensor learning rate said 'rank 0'", function()
    local opt
    mf.Graph():as_default(function()
      opt = mf.train.GradientDescentOptimizer(mf.placeholder("float32", {}))
    end)
    local v = mf.Variable(mf.ones{2})
    return opt:apply_gradients({{mf.ones{2}, v}})
  end, "apply_gradients: learning_rate is a graph tensor"},
  {"a constant initializer's reshape error did not name constant", function()
    return mf.initializers.constant(mf.zeros{0})({2 ^ 31, 2 ^ 31, 0})
  end, "constant: shape (2147483648,2147483648,0) is too large: the dimensions other than 0 "
        .. "of an empty shape may multiply to at most 2^56"},
  {"max_pool with strides of math.maxinteger overflowed SAME's in + s - 1 (UBSan)", function()
    local M = math.maxinteger
    local y = mf.nn.max_pool(mf.ones{1, 3, 3, 2}, {1, 2, 2, 1}, {1, M, M, 1}, "SAME")
    assert(y.shape[2] == 1 and y.shape[3] == 1)
    y = mf.nn.avg_pool(mf.ones{1, 3, 3, 2}, {1, M, M, 1}, {1, M, M, 1}, "SAME")
    assert(y.shape[2] == 1 and mf.reduce_sum(y):item() == 2)
  end, false},
  {"conv2d with strides of math.maxinteger overflowed SAME's in + s - 1 (UBSan)", function()
    local M = math.maxinteger
    local y = mf.nn.conv2d(mf.ones{1, 3, 3, 1}, mf.ones{2, 2, 1, 1}, {1, M, M, 1}, "SAME")
    assert(y.shape[2] == 1 and y:item() == 4)
  end, false},
  {"conv2d with a dilation of math.maxinteger overflowed (k - 1) * d + 1 (UBSan)", function()
    return mf.nn.conv2d(mf.ones{1, 3, 3, 1}, mf.ones{2, 2, 1, 1}, {1, 1, 1, 1}, "SAME",
                        {dilations = {1, math.maxinteger, 1, 1}})
  end, "conv2d: the filter (2 x 2) with dilations {9223372036854775807, 1} is too large"},
  {"conv2d_backprop_filter sizes times a dilation overflowed (UBSan)", function()
    return mf.nn.conv2d_backprop_filter(mf.ones{1, 3, 3, 1}, {math.maxinteger, 2, 1, 1},
                                        mf.ones{1, 3, 3, 1}, {1, 1, 1, 1}, "SAME",
                                        {dilations = {1, 2, 1, 1}})
  end, "conv2d_backprop_filter: the filter (9223372036854775807 x 2) with dilations {2, 1} " ..
        "is too large"},
  {"a traced function's signature of a long array overran a luaL_Buffer (ASan double free)",
   function()
    local t = {}
    for i = 1, 300 do t[i] = i + 0.5 end
    local f = mf.trace(function() return mf.tensor{1} end)
    assert(f(t):item() == 1 and f(t):item() == 1 and f:trace_count() == 1)
  end, false},
  {"initializers.constant counted a huge shape's elements before checking it (UBSan)",
   function()
    return mf.initializers.constant(mf.tensor{1, 2})({2 ^ 40, 2 ^ 40})
  end, "constant: shape (1099511627776,1099511627776) of float32 is too large"},
  {"split of a graph tensor inside another graph named slice", function()
    local g1, g2 = mf.Graph(), mf.Graph()
    local p
    g1:as_default(function() p = mf.placeholder("float32", {4}, "p") end)
    g2:as_default(function() return mf.split(p, 2) end)
  end, "split: "},
  {"an axis of math.maxinteger overflowed n + axis in mf_axis_one_based (UBSan)", function()
    return mf.tensor{1, 2}:argmin(math.maxinteger)
  end, "argmin: axis 9223372036854775807 out of range"},
}
