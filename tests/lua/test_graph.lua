-- test_graph.lua — graph mode from Lua: mf.Graph, as_default, placeholder,
-- name_scope, control_dependencies, group, Session:run (one fetch or an
-- array, feeds by tensor or name, schedules), printing, to_dot, t.name,
-- graph results equal eager ones, and the error messages.
local T = dofile("tests/lua/harness.lua")

-- Builds f(inputs...) in a new graph with placeholders shaped like the
-- eager inputs, runs it fed with them and returns the graph's result.
local function graph_of(f, ...)
  local args = table.pack(...)
  local g = mf.Graph()
  local phs, out = {}, nil
  g:as_default(function()
    for i = 1, args.n do phs[i] = mf.placeholder(args[i].dtype, args[i].shape) end
    out = f(table.unpack(phs, 1, args.n))
  end)
  local feeds = {}
  for i = 1, args.n do feeds[phs[i]] = args[i] end
  return mf.Session(g):run(out, feeds)
end

T.test("graph results equal eager results", function()
  local a = mf.tensor({{1, -2, 3}, {-4, 5, 6}}, "float64")
  local b = mf.tensor({{1, 2}, {3, 4}, {5, 6}}, "float64")
  local cases = {
    {function(x, y) return mf.add(x, y) end, a, a},
    {function(x, y) return mf.matmul(x, y) end, a, b},
    {function(x) return mf.reduce_sum(x, 2) end, a},
    {function(x) return mf.reduce_mean(x) end, a},
    {function(x) return mf.relu(x) end, a},
    {function(x) return mf.nn.softmax(x) end, a},
    {function(x) return mf.exp(x) * 2 - 1 end, a},
    {function(x) return mf.transpose(x) end, a},
    {function(x) return mf.reshape(x, {3, 2}) end, a},
    {function(x, y) return mf.concat({x, y}, 1) end, a, a},
    {function(x) return mf.argmax(x, 2) end, a},
    {function(x) return mf.sigmoid(mf.matmul(x, x, {transpose_b = true})) end, a},
  }
  for i, c in ipairs(cases) do
    local f = c[1]
    local eager = f(table.unpack(c, 2))
    local graph = graph_of(f, table.unpack(c, 2))
    T.eq(graph.shape, eager.shape, nil, "case " .. i .. " shape")
    T.eq(graph.dtype, eager.dtype, nil, "case " .. i .. " dtype")
    T.eq(graph, eager, 0, "case " .. i)
  end
end)

T.test("symbolic tensors: names, shapes with unknown dims, scopes", function()
  local g = mf.Graph()
  local x, y, z, w
  g:as_default(function()
    x = mf.placeholder("float32", {-1, 3}, "x")
    y = x + 1
    z = y + 1
    mf.name_scope("layer1", function() w = mf.matmul(z, mf.ones{3, 2}) end)
  end)
  T.eq(x.name, "x:0")
  T.eq(y.name, "add:0")
  T.eq(z.name, "add_1:0")
  T.eq(w.name, "layer1/matmul:0")
  T.eq(w.shape, {-1, 2})
  T.eq(mf.tensor{1}.name, nil)
  T.eq(g:get_tensor("add_1:0").name, "add_1:0")
  T.eq(g:get_tensor("add").name, "add:0")
  T.raises(function() g:get_tensor("nope:0") end, "get_tensor: no tensor 'nope:0' in the graph")
  local nodes = g:nodes()
  T.eq(nodes[1].name, "x")
  T.eq(nodes[1].op, "Placeholder")
  T.eq(nodes[2].op, "Const")
  T.eq(nodes[3].inputs, {"x:0", "Const:0"})
  T.eq(nodes[3].outputs[1].name, "add:0")
  T.raises(function() return x:item() end, "symbolic")
end)

T.test("sess:run: one fetch, an array, names, feeds of inner tensors", function()
  local g = mf.Graph()
  local x, y, z
  g:as_default(function()
    x = mf.placeholder("float64", {2})
    y = x * 2
    z = y + x
  end)
  local sess = mf.Session(g)
  T.eq(sess:run(z, {[x] = {1, 2}}), {3, 6})
  local r = sess:run({y, z}, {[x] = mf.tensor({1, 2}, "float64")})
  T.eq(#r, 2)
  T.eq(r[1], {2, 4})
  T.eq(r[2], {3, 6})
  T.eq(sess:run("add:0", {["Placeholder:0"] = {1, 1}}), {3, 3})
  -- Feeding y replaces it: x * 2 is not computed.
  T.eq(sess:run(z, {[x] = {1, 2}, [y] = {10, 10}}), {11, 12})
  T.eq(sess:run(x, {[x] = {5, 6}}), {5, 6})
  T.ok(tostring(sess):find("mf.Session"))
  sess:close()
  T.raises(function() sess:run(z, {[x] = {1, 2}}) end, "the session is closed")
end)

T.test("schedule: in-degree order, FIFO by creation, prints as a table", function()
  local g = mf.Graph()
  local out
  g:as_default(function()
    local a = mf.constant(1)   -- a value: used twice, one Const node
    local b = mf.constant(2)
    local c = mf.add(a, b)
    local d = mf.multiply(a, b)
    out = mf.subtract(c, d)
  end)
  -- each node on its own (test_fusion.lua shows the fused schedule)
  mf.config{fusion = false}
  local v, sched = mf.Session(g):run(out, nil, {schedule = true})
  mf.config{fusion = true}
  T.eq(v, 1)
  local names = {}
  for i, s in ipairs(sched) do names[i] = s.name; T.eq(s.step, i) end
  T.eq(names, {"Const", "Const_1", "add", "multiply", "subtract"})
  T.eq(sched[1].indegree, 0)
  T.eq(sched[3].indegree, 2)
  T.eq(sched[5].indegree, 2)
  T.eq(sched[1].ready, {"Const_1"})
  T.eq(sched[2].ready, {"add", "multiply"})
  T.eq(sched[5].op, "Sub")
  local text = tostring(sched)
  T.ok(text:find("indegree") and text:find("multiply") and text:find("add, multiply"), text)
end)

T.test("control dependencies and group", function()
  local g = mf.Graph()
  local a, b, grp
  g:as_default(function()
    a = mf.placeholder("float32", {}, "a")
    mf.control_dependencies({a}, function() b = mf.constant(2) + 1 end)
    grp = mf.group({b}, "init")
  end)
  local nodes = g:nodes()
  T.eq(nodes[#nodes].name, "init")
  T.eq(nodes[#nodes].control_inputs, {"add"})
  T.eq(grp.name, "init")
  T.eq(grp.type, "NoOp")
  local listing = tostring(g)
  T.ok(listing:find("add = AddV2%(Const:0, Const_1:0; %^a%)"), listing)
  local sess = mf.Session(g)
  T.raises(function() sess:run(b) end, "placeholder 'a'")   -- b runs after a
  local r = sess:run({grp, b}, {[a] = 0})
  T.eq(r[1], nil)
  T.eq(r[2], 3)
  T.eq(sess:run(grp, {[a] = 0}), nil)
  T.ok(g:to_dot():find("n0 %-> n3 %[style=dashed%]"), g:to_dot())
  T.raises(function() g:as_default(function() mf.group({mf.tensor{1}}) end) end,
           "group: item 1 must be a graph tensor or operation, got a tensor with values")
end)

T.test("print(g) and to_dot", function()
  local g = mf.Graph()
  g:as_default(function()
    local x = mf.placeholder("float32", {-1, 3}, "x")
    mf.reduce_sum(mf.relu(x))
  end)
  local s = tostring(g)
  T.ok(s:find("mf.Graph with 3 nodes", 1, true), s)
  T.ok(s:find("x = Placeholder() -> float32 (?,3)", 1, true), s)
  T.ok(s:find("relu = Relu(x:0) -> float32 (?,3)", 1, true), s)
  local dot = g:to_dot()
  T.ok(dot:find("^digraph"), dot)
  T.ok(dot:find("n1 -> n2;", 1, true), dot)
  T.ok(dot:find("cluster_forward", 1, true) and not dot:find("cluster_backward", 1, true))
end)

T.test("as_default and name_scope restore on error", function()
  local g = mf.Graph()
  T.raises(function() g:as_default(function() error("boom") end) end, "boom")
  T.eq((mf.tensor{1} + 1):totable(), {2})   -- eager again
  T.raises(function() mf.placeholder("float32", {2}) end, "placeholder: no graph is being built")
  g:as_default(function()
    pcall(mf.name_scope, "s", function() error("x") end)
    T.eq((mf.constant(1) + 1).name, "add:0")
    T.eq(g:as_default(function() return 1, 2 end), 1)
  end)
end)

T.test("errors name the node", function()
  local g = mf.Graph()
  local x, y, m
  g:as_default(function()
    x = mf.placeholder("float32", {-1, 3}, "x")
    y = x + 1
    m = mf.matmul(x, x)
  end)
  local sess = mf.Session(g)
  T.raises(function() sess:run(y) end,
           "placeholder 'x' (dtype float32, shape (?,3)) must be fed")
  T.raises(function() sess:run(y, {[x] = {{1, 2}}}) end,
           "the value fed to placeholder 'x:0' has shape (1,2), expected (?,3)")
  T.raises(function() sess:run(y, {[x] = mf.tensor({{1, 2, 3}}, "float64")}) end,
           "has dtype float64, expected float32")
  T.raises(function() sess:run(m, {[x] = {{1, 2, 3}}}) end, "run: node 'matmul' (MatMul)")
  T.raises(function() sess:run(mf.tensor{1}) end, "run: fetch 1 is not a graph tensor")
  T.raises(function() sess:run(42) end, "run: fetch 1 must be a graph tensor")
  T.raises(function() sess:run(y, {[mf.tensor{1}] = 1}) end, "feed keys must be graph tensors")
  local h = mf.Graph()
  local z
  h:as_default(function() z = mf.placeholder("float32", {}, "z") end)
  T.raises(function() sess:run(z) end, "run: fetch 1 ('z:0') is a tensor of another graph")
  T.raises(function() g:as_default(function() return x + z end) end,
           "add: input 2 ('z') is a tensor of another graph")
  T.raises(function() mf.Graph():as_default(function() mf.name_scope("a:b", print) end) end,
           "invalid scope name")
end)

T.test("intermediates are freed during a run", function()
  local g = mf.Graph()
  local x, out
  g:as_default(function()
    x = mf.placeholder("float32", {1000})
    out = x
    for _ = 1, 50 do out = out + x end
  end)
  local sess = mf.Session(g)
  local v = mf.zeros{1000}
  collectgarbage()
  local before = mf.memory().tensors
  local r = sess:run(out, {[x] = v})
  T.eq(mf.memory().tensors, before + 1)
  T.eq(r:reduce_sum():item(), 0)
end)

T.test("run: an operation's name is a fetch (nil), as in TensorFlow", function()
  local g = mf.Graph()
  local v, init
  g:as_default(function()
    v = mf.Variable({1.0, 2.0}, {name = "v"})
    init = mf.global_variables_initializer()
  end)
  local sess = mf.Session(g)
  T.ok(init.name ~= nil)
  local n = select("#", sess:run(init.name))
  T.eq(n, 0)                                   -- ran it: no value, as sess:run(init)
  T.eq(sess:run("v"), {1, 2})                  -- a node with outputs: its first one
  local r = sess:run({init.name, "v:0", init})
  T.ok(r[1] == nil and r[3] == nil)
  T.eq(r[2], {1, 2})
  T.raises(function() sess:run(init.name .. ":0") end, "run: no tensor '" .. init.name .. ":0'")
  T.raises(function() sess:run("nothing") end, "run: no tensor 'nothing'")
end)

T.done()
