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
   "matmul: expected a number at data[1]"},
  {"table data errors name one_hot", function() return mf.one_hot({"x"}, 2) end,
   "one_hot: expected a number at data[1]"},
  {"table data errors name assign_add", function()
    return mf.Variable(mf.ones{2}):assign_add({"x"})
  end, "assign_add: expected a number at data[1]"},
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
  end, "softmax: option 'axis' must be an integer, got a non-integer number"},
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
    v[t] = 1
  end, "Variable: cannot set 'userdata'"},
}
