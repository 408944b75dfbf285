-- test_self_lifetime.lua — the object a method runs on may be closed or
-- freed by Lua code the method runs itself (issue #35 M2): converting a big
-- table (an allocation that runs the collector and so finalizers), an
-- options table's __index, a traced function, a learning-rate function.
-- The method must notice and raise "... is closed" / "... is freed", never
-- write through the freed object (a segfault in release, a
-- heap-use-after-free under make check).
local T = dofile("tests/lua/harness.lua")

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p " .. d))
  return d
end

-- 3M numbers: their 12 MB tensor passes the collector's 2 MiB slack, so
-- converting them runs a full collection and the pending finalizers.
local big = {}
for i = 1, 3000000 do big[i] = 1 end

-- Leaves an unreachable object whose finalizer runs 'fn'; returns a
-- function that tells whether it ran.
local function on_collect(fn)
  local ran = false
  setmetatable({}, {__gc = function() ran = true; fn() end})
  return function() return ran end
end

-- An options table whose first field read runs 'fn' (then reads as nil).
local function evil(fn)
  local done = false
  return setmetatable({}, {__index = function()
    if not done then done = true; fn() end
  end})
end

T.test("w:histogram: a finalizer closes the writer while the values convert", function()
  local dir = tmpdir()
  local w = mf.summary.create_file_writer(dir)
  local ran = on_collect(function() w:close() end)
  T.raises(function() w:histogram("h", big, 1) end, "histogram: the summary writer is closed")
  T.ok(ran(), "the finalizer did not run during the call")
  os.execute("rm -rf " .. dir)
end)

T.test("w:graph: the traced function closes the writer", function()
  local dir = tmpdir()
  local w = mf.summary.create_file_writer(dir)
  local f = mf.trace(function(x) w:close(); collectgarbage(); return x * 2 end)
  T.raises(function() w:graph(f, mf.ones{2}) end, "graph: the summary writer is closed")
  os.execute("rm -rf " .. dir)
end)

T.test("w:scalar of a closed tensor says it is closed", function()
  local dir = tmpdir()
  local w = mf.summary.create_file_writer(dir)
  local t = mf.tensor(1.5)
  getmetatable(t).__close(t)
  T.raises(function() w:scalar("s", t, 1) end, "tensor is closed")
  T.raises(function() w:scalar("s", 1, t) end, "tensor is closed")
  w:close()
  os.execute("rm -rf " .. dir)
end)

T.test("opt:apply_gradients: the options' __index frees the optimizer", function()
  local v = mf.Variable(mf.ones{4})
  local opt = mf.train.GradientDescentOptimizer(0.1)
  local opts = evil(function() getmetatable(opt).__gc(opt); collectgarbage() end)
  T.raises(function() opt:apply_gradients({{mf.ones{4}, v}}, opts) end, "optimizer is closed")
  T.eq(v, {1, 1, 1, 1})
end)

T.test("sess:run: a finalizer frees the Session while a feed converts", function()
  local g = mf.Graph()
  local x, y
  g:as_default(function()
    x = mf.placeholder("float32", {#big})
    y = mf.reduce_sum(x)
  end)
  local sess = mf.Session(g)
  local ran = on_collect(function() getmetatable(sess).__gc(sess) end)
  T.raises(function() sess:run(y, {[x] = big}) end, "Session is freed")
  T.ok(ran(), "the finalizer did not run during the call")
end)

T.test("saver:restore: the options' __index closes the Saver", function()
  local dir = tmpdir()
  local v = mf.Variable(mf.ones{3})
  local saver = mf.train.Saver{v}
  local path = saver:save(dir .. "/ckpt")
  local opts = evil(function() getmetatable(saver).__gc(saver); collectgarbage() end)
  T.raises(function() saver:restore(path, opts) end, "Saver is closed")
  os.execute("rm -rf " .. dir)
end)

T.test("tape:watch: a proxy list's __index frees the tape", function()
  local tape = mf.GradientTape()
  local list = setmetatable({}, {
    __index = function()
      getmetatable(tape).__gc(tape); collectgarbage()
      return mf.ones{2}
    end,
    __len = function() return 2 end})
  T.raises(function() tape:watch(list) end, "GradientTape is closed")
end)

-- Runs 'call' with the collector starting cycles at once and working in big
-- steps, so that a finalizer left by on_collect just before runs during the
-- call's own allocations rather than at some later point.
-- (The 3M-number table is dropped first: a cycle over it would not end
-- within the call.)
big = nil
local function eager_collector(call)
  collectgarbage("incremental", 1, 1000)
  -- coming from generational mode the collector keeps the allowance left
  -- for its next young collection, which may be more than the call
  -- allocates: "restart" clears it (without a step), so the call's first
  -- allocation starts the cycle
  collectgarbage("restart")
  local res = table.pack(pcall(call))
  collectgarbage("incremental", 200, 100)
  return table.unpack(res, 1, res.n)
end

T.test("prof:rows() and prof:gemms(): a finalizer frees the report mid-loop", function()
  local prof = mf.profile(function()
    for i = 1, 2000 do mf.reshape(mf.ones{i}, {i, 1}) end   -- 2000 rows
  end)
  local ran = on_collect(function() getmetatable(prof).__gc(prof) end)
  local ok, err = eager_collector(function() return prof:rows() end)
  T.ok(ran(), "the finalizer did not run during the call")
  T.ok(not ok and tostring(err):find("ProfileReport is freed"), tostring(err))
  local a = mf.ones{2, 2}
  prof = mf.profile(function() for _ = 1, 3000 do mf.matmul(a, a) end end)
  ran = on_collect(function() getmetatable(prof).__gc(prof) end)
  ok, err = eager_collector(function() return prof:gemms() end)
  T.ok(ran(), "the finalizer did not run during the call")
  T.ok(not ok and tostring(err):find("ProfileReport is freed"), tostring(err))
end)

T.test("g:nodes(), g:to_dot(): a finalizer frees the graph's box mid-call", function()
  for _ = 1, 20 do
    local g = mf.Graph()
    g:as_default(function() mf.placeholder("float32", {2}, "only") end)
    local ran = on_collect(function() getmetatable(g).__gc(g) end)
    local ok, nodes = eager_collector(function() return g:nodes() end)
    T.ok(ok and nodes[1].name == "only" and nodes[1].op == "Placeholder", tostring(nodes))
    if ran() then T.raises(function() g:nodes() end, "Graph is freed") end
  end
  -- to_dot allocates once (its buffer) before reading the graph
  for _ = 1, 20 do
    local g = mf.Graph()
    g:as_default(function() mf.placeholder("float32", {2}, "only") end)
    on_collect(function() getmetatable(g).__gc(g) end)
    local ok, dot = eager_collector(function() return g:to_dot() end)
    T.ok(ok and dot:find("only") or not ok and dot:find("Graph is freed"), tostring(dot))
  end
end)

T.test("g:get_tensor, g:write_dot: converting the argument frees the graph", function()
  local g = mf.Graph()
  g:as_default(function() mf.placeholder("float32", {2}, "only") end)
  -- a number converts to a string: an allocation, so a collection step
  local ran = on_collect(function() getmetatable(g).__gc(g) end)
  local ok, err = eager_collector(function() return g:get_tensor(12345678901) end)
  T.ok(not ok, "get_tensor of a freed graph returned")
  T.ok(err:find("Graph is freed") or err:find("no tensor"), err)
  T.ok(ran() or err:find("no tensor"), "neither freed nor looked up")
end)

T.test("tape:gradient, tape:jacobian: a custom gradient frees the tape", function()
  local tape
  local times3 = mf.custom_gradient(function(x)
    return x * 3, function(dy)
      getmetatable(tape).__gc(tape); collectgarbage(); collectgarbage()
      return dy * 3
    end
  end)
  local x = mf.tensor{1, 2}
  tape = mf.GradientTape()
  tape:watch(x)
  local y = times3(x) * x   -- dy/dx = 3x + 3x
  T.eq(tape:gradient(y, x), {6, 12})
  T.raises(function() tape:gradient(y, x) end, "GradientTape is closed")
  tape = mf.GradientTape{persistent = true}
  tape:watch(x)
  T.eq(tape:jacobian(times3(x), x), {{3, 0}, {0, 3}})
  T.raises(function() tape:jacobian(y, x) end, "GradientTape is closed")
end)

T.test("p:update: its table's __index ends the line with p:done()", function()
  local p = mf.progress{total = 10, tty = false}
  local upd = setmetatable({loss = 1}, {__index = function() p:done() end})
  T.raises(function() p:update(upd) end, "update: the progress line was ended by done()")
  T.raises(function() p:update(2) end, "ended by done()")
  p:done()   -- again: nothing (a <close> variable calls it after an explicit done)
end)

T.done()
