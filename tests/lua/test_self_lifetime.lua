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

-- 3M numbers: their 12 MB tensor passes the collector's 8 MiB slack, so
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

T.done()
