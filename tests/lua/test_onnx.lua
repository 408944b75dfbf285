-- test_onnx.lua — mf.onnx.export and fn:export_onnx: every exported model
-- passes ONNX's checker (full_check) and strict shape inference
-- (tests/interop/check_onnx.py, Debian's python3-onnx); an op without a
-- mapping is an error naming the op and the node, and no file is written.
-- Numeric equality with onnxruntime is `make interop`.
local T = dofile("tests/lua/harness.lua")

local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)

local function check(path)
  local p = assert(io.popen("/usr/bin/python3 tests/interop/check_onnx.py " .. path .. " 2>&1"))
  local out = p:read("a")
  local ok, how, code = p:close()
  return ok and how == "exit" and code == 0, out
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

local function has(s, t) return s:find(t, 1, true) ~= nil end

mf.random.seed(3)
local W = mf.Variable(mf.random.normal({4, 3}), {name = "dense/kernel"})
local b = mf.Variable(mf.zeros({3}), {name = "dense/bias"})
local mlp = mf.trace(function(x) return mf.nn.log_softmax(mf.nn.relu(mf.matmul(x, W) + b)) end)

T.test("a traced MLP passes the checker and strict shape inference", function()
  local path = dir .. "/mlp.onnx"
  mlp:export_onnx(path, mf.ones({2, 4}))
  local ok, out = check(path)
  T.ok(ok, out)
  T.ok(has(out, "IR 7, opset 13") and has(out, "LogSoftmax MatMul Relu"), out)
  T.ok(not exists(path .. ".tmp"), "no temporary file left")
end)

T.test("mf.onnx.export of a function: example inputs, output names, opset", function()
  local path = dir .. "/mlp17.onnx"
  mf.onnx.export(mlp, path, {inputs = {mf.ones({5, 4})}, outputs = {"log_probs"}, opset = 17})
  local ok, out = check(path)
  T.ok(ok and has(out, "IR 8, opset 17"), out)
  T.eq(mlp:trace_count(), 2)   -- the {5, 4} signature was traced for the export
end)

-- The names live in a userdata on the binding's stack; it was popped by
-- mistake, so a collection while the export traced the function (a new
-- signature runs f) freed them and the export read freed memory ("9 names
-- for 1 outputs" in make interop). f collects and churns memory while traced.
T.test("output names survive a collection while the export traces", function()
  local path = dir .. "/mlp_gc.onnx"
  local churned = mf.trace(function(x)
    collectgarbage("collect")
    local junk = {}
    for i = 1, 2000 do junk[i] = ("%031d"):format(i) end
    return mf.nn.log_softmax(mf.matmul(x, W) + b)
  end)
  mf.onnx.export(churned, path, {inputs = {mf.ones({3, 4})}, outputs = {"kept_name"}})
  local f = assert(io.open(path, "rb"))
  local bytes = f:read("a")
  f:close()
  T.ok(has(bytes, "kept_name"), "the output is named kept_name")
  local ok, out = check(path)
  T.ok(ok, out)
end)

T.test("a graph with an unknown batch, graph variables from a session", function()
  local g = mf.Graph()
  local x, y, v
  g:as_default(function()
    x = mf.placeholder("float32", {-1, 6, 6, 2}, "images")
    v = mf.Variable(mf.random.normal({3, 3, 2, 4}), {name = "conv/kernel"})
    local h = mf.nn.max_pool(mf.nn.relu(mf.nn.conv2d(x, v, 1, "SAME")), 2, 2, "VALID")
    y = mf.nn.softmax(mf.reshape(h, {-1, 36}))
  end)
  local sess = mf.Session(g)
  local path = dir .. "/graph.onnx"
  T.raises(function() mf.onnx.export(g, path, {inputs = {x}, outputs = {y}}) end,
           "variable 'conv/kernel' has no value")
  T.ok(not exists(path), "no file after an error")
  sess:run(mf.global_variables_initializer(g))
  mf.onnx.export(g, path, {inputs = {x}, outputs = {y}, session = sess,
                           input_names = {"pixels"}, output_names = {"probs"}})
  local ok, out = check(path)
  T.ok(ok and has(out, "Conv") and has(out, "Transpose"), out)
  -- fetches by name work too
  mf.onnx.export(g, dir .. "/graph2.onnx", {inputs = {x}, outputs = {y.name}, session = sess})
  ok, out = check(dir .. "/graph2.onnx")
  T.ok(ok, out)
end)

-- BiasAdd read its data format from the wrong MfAttrs field (n, which it
-- never sets), so an NCHW bias was added along the last axis: (2,3,4,5) +
-- (3,) fails strict shape inference. The bias must be reshaped to (3,1,1).
T.test("bias_add NCHW: the bias runs along axis 2", function()
  local f = mf.trace(function(x, b) return mf.nn.bias_add(x, b, {data_format = "NCHW"}) end)
  local path = dir .. "/bias_nchw.onnx"
  f:export_onnx(path, mf.ones({2, 3, 4, 5}), mf.ones({3}))
  local ok, out = check(path)
  T.ok(ok and has(out, "Add Reshape"), out)
end)

T.test("an op without a mapping names the op and the node; no file", function()
  local f = mf.trace(function(x) return mf.mod(x, 3) end)
  local path = dir .. "/mod.onnx"
  T.raises(function() f:export_onnx(path, mf.ones({2})) end,
           "onnx.export: node 'mod' (op FloorMod) cannot be exported: ONNX export has no mapping")
  T.ok(not exists(path), "no file after an error")
  local labels = mf.tensor({1, 2}, "int64")
  local loss = mf.trace(function(logits)
    return mf.nn.sparse_softmax_cross_entropy_with_logits{labels = labels, logits = logits}
  end)
  T.raises(function() loss:export_onnx(path, mf.ones({2, 3})) end,
           "(op SparseSoftmaxCrossEntropyWithLogits) cannot be exported")
  local idiv = mf.trace(function(x) return x / 2 end)
  T.raises(function() idiv:export_onnx(path, mf.tensor({3, 4}, "int32")) end,
           "integer division floors in moonflow and truncates in ONNX")
  T.ok(not exists(path), "no file after an error")
end)

T.test("bad arguments", function()
  local path = dir .. "/bad.onnx"
  T.raises(function() mf.onnx.export(function() end, path) end, "wrap it in mf.trace(f) first")
  T.raises(function() mf.onnx.export(mlp, path) end, "needs its example arguments")
  T.raises(function() mf.onnx.export(mlp, path, {inputs = {mf.ones({2, 4})}, opset = 12}) end,
           "opset must be 13..17, got 12")
  -- the opset's reader: an integer (the range is the exporter's, above)
  local function export_opset(v)
    return function() mf.onnx.export(mlp, path, {inputs = {mf.ones({2, 4})}, opset = v}) end
  end
  T.raises(export_opset(13.5), "onnx.export: option 'opset' must be an integer, got 13.5")
  T.raises(export_opset("13"), "onnx.export: option 'opset' must be an integer, got string")
  T.raises(export_opset(2^32 + 13), "opset must be 13..17, got 4294967309")
  T.raises(function() mf.onnx.export(mlp, path, {inputs = {mf.ones({2, 4})}, opsett = 13}) end,
           "unknown option 'opsett'")
  T.raises(function() mf.onnx.export(mlp, path, {inputs = {mf.ones({2, 4})},
                                                 outputs = {"a", "b"}}) end,
           "output_names has 2 names for 1 outputs")
  T.raises(function() mf.onnx.export(42, path, {}) end, "mf.Graph expected")
  local g = mf.Graph()
  local x, z, y
  g:as_default(function()
    x = mf.placeholder("float32", {2}, "x")
    z = mf.placeholder("float32", {2}, "z")
    y = x + z
  end)
  T.raises(function() mf.onnx.export(g, path, {inputs = {x}, outputs = {y}}) end,
           "the outputs need placeholder 'z', which is not among the inputs")
  T.raises(function() mf.onnx.export(g, path, {inputs = {y}, outputs = {y}}) end,
           "input 1 must be a placeholder of the graph")
  T.raises(function() mf.onnx.export(g, path, {inputs = {x, z}, outputs = {mf.ones({2})}}) end,
           "output 1 is not a tensor of the graph being exported")
  T.raises(function() mf.onnx.export(g, dir .. "/no/such/dir/m.onnx",
                                     {inputs = {x, z}, outputs = {y}}) end, "cannot create")
  T.ok(not exists(path), "no file after an error")
end)

os.execute("rm -rf " .. dir)
T.done()
