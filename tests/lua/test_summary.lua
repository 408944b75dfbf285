-- test_summary.lua — mf.summary event files, read back by an independent
-- reader (tests/interop/read_events.py: python3-protobuf decodes every
-- event, python3-crcmod checks every CRC), and its argument errors.
local T = dofile("tests/lua/harness.lua")

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  return d
end

-- Runs the reader on 'path' (extra arguments after it); ok, output.
local function reader(path, ...)
  local cmd = {"/usr/bin/python3", "tests/interop/read_events.py", path, ...}
  local p = assert(io.popen(table.concat(cmd, " ") .. " 2>&1"))
  local out = p:read("a")
  local ok, how, code = p:close()
  return ok and how == "exit" and code == 0, out
end

local function has(s, t) return s:find(t, 1, true) ~= nil end

local function file_size(path)
  local f = assert(io.open(path, "rb"))
  local n = f:seek("end")
  f:close()
  return n
end

T.test("a writer's file: name, version record, scalars, histograms, graph", function()
  local dir = tmpdir()
  local w = mf.summary.create_file_writer(dir .. "/run1")   -- parents are created
  T.ok(w.path:match("/run1/events%.out%.tfevents%.%d+%.[^/]+$"), w.path)
  T.eq(w.logdir, dir .. "/run1")
  w:scalar("loss", 0.5, 1)
  w:scalar("loss", mf.tensor(0.25), 2)                       -- a one-element tensor
  w:scalar("lr", 3, mf.tensor(7, "int64"))                   -- an integer tensor step
  w:histogram("w", mf.tensor({1, 2, 3, 4}), 3)
  w:histogram("v", mf.Variable(mf.fill({10}, -2)), 4)
  local g = mf.Graph()
  g:as_default(function()
    local x = mf.placeholder("float32", {-1, 3}, "x")
    local v = mf.Variable(mf.ones({3, 2}), {name = "w"})
    mf.gradients(mf.reduce_sum(mf.matmul(x, v)), {v})
  end)
  w:graph(g)
  w:close()
  w:close()   -- twice is harmless
  local files = io.popen("ls " .. dir .. "/run1"):read("a")
  local path = dir .. "/run1/" .. files:match("(events%.out%.tfevents%.%S+)")
  local ok, out = reader(path)
  T.ok(ok, out)
  local lines = {}
  for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
  T.eq(lines[1], "version brain.Event:2")
  T.eq(lines[2], "scalar loss 1 0.5")
  T.eq(lines[3], "scalar loss 2 0.25")
  T.eq(lines[4], "scalar lr 7 3")
  T.ok(has(lines[5], "histogram w 3 num=4 min=1 max=4 sum=10 "), lines[5])
  T.ok(has(lines[6], "histogram v 4 num=10 min=-2 max=-2 sum=-20 "), lines[6])
  T.ok(lines[7]:match("^graph %d+ forward=%d+ gradients=[1-9]%d*$"), lines[7])
  T.eq(#lines, 7)
  os.execute("rm -rf " .. dir)
end)

T.test("each record is on disk as soon as it is written", function()
  local dir = tmpdir()
  local w = mf.summary.create_file_writer(dir)
  w:scalar("a", 1, 1)
  local ok, out = reader(w.path)   -- no flush, no close
  T.ok(ok and has(out, "scalar a 1 1"), out)
  w:flush()
  w:close()
  T.eq(w.path, nil)
  os.execute("rm -rf " .. dir)
end)

T.test("a flipped byte anywhere is detected", function()
  local dir = tmpdir()
  local w = mf.summary.create_file_writer(dir)
  local path = w.path
  w:scalar("loss", 1.5, 1)
  w:histogram("h", mf.range(0, 50), 2)
  w:close()
  local n = file_size(path)
  -- the version record's length, its length CRC, its data and data CRC;
  -- then bytes spread over the later records
  for _, off in ipairs({0, 9, 14, 20, 30, 45, 70, n // 2, n - 5, n - 1}) do
    local ok, out = reader(path, "--flip", off)
    T.ok(ok and has(out, "rejected"), "offset " .. off .. ": " .. out)
  end
  os.execute("rm -rf " .. dir)
end)

T.test("traced functions: w:graph(fn, example_args...)", function()
  local dir = tmpdir()
  local w = mf.summary.create_file_writer(dir)
  local f = mf.trace(function(x) return mf.nn.relu(x * 2) end)
  w:graph(f, mf.ones({2, 2}))
  local path = w.path
  w:close()
  local ok, out = reader(path)
  T.ok(ok and out:match("graph 4 forward=4 gradients=0"), out)
  os.execute("rm -rf " .. dir)
end)

T.test("bad arguments name the method and what it expected", function()
  local dir = tmpdir()
  local w = mf.summary.create_file_writer(dir)
  T.raises(function() w:scalar("", 1, 1) end, "scalar: tag must be a non-empty string")
  T.raises(function() w:scalar(3, 1, 1) end, "scalar: tag must be a non-empty string, got number")
  T.raises(function() w:scalar("a", "x", 1) end, "scalar: value must be a number or a one-element")
  T.raises(function() w:scalar("a", mf.ones({2}), 1) end, "a tensor of another size or dtype")
  T.raises(function() w:scalar("a", 1, 1.5) end, "scalar: step must be an integer, got 1.5")
  T.raises(function() w:scalar("a", 1, "2") end, "scalar: step must be an integer or a "
           .. "one-element integer tensor (e.g. mf.train.global_step()), got string")
  T.raises(function() w:scalar("a", 1) end, "scalar: step must be an integer")
  T.raises(function() w:scalar("a", 1, 1, 2) end, "bad argument #5 to 'scalar' (no value expected")
  T.raises(function() w:histogram("h", mf.tensor({1, 0 / 0}), 1) end,
           "histogram: 'h' has a non-finite value")
  T.raises(function() w:histogram("h", mf.tensor({true}), 1) end, "dtype bool")
  T.raises(function() w:graph(42) end, "mf.Graph expected")
  w:close()
  T.raises(function() w:scalar("a", 1, 1) end, "scalar: the summary writer is closed")
  w:flush()   -- a no-op after close, as TensorFlow's (issue #27: it raised)
  w:close()   -- closing twice too
  T.raises(function() mf.summary.create_file_writer("") end,
           "create_file_writer: expected a path, got an empty string")
  local f = os.tmpname()   -- a file where a directory must go
  T.raises(function() mf.summary.create_file_writer(f .. "/sub") end, "is not a directory")
  os.remove(f)
  T.raises(function() mf.summary.create_file_writer(dir, 1) end, "takes only the log directory")
  os.execute("rm -rf " .. dir)
end)

-- Issue #35 L2: a write failed part-way (here at a 50 KiB file size limit,
-- as at a full disk) left a torn record ("bad data CRC"), and the writer
-- went on reporting success for events no reader saw. The torn part is now
-- cut off and every later write and flush is an error naming the failure.
T.test("a failed write cuts its torn record; the writer then refuses", function()
  local dir = tmpdir()
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write([[
local w = mf.summary.create_file_writer(...)
local n, ok, err = 0, true, nil
while ok do
  ok, err = pcall(w.scalar, w, "loss", n / 7, n + 1)
  if ok then n = n + 1 end
end
print("WRITTEN " .. n)
print("PATH " .. w.path)
print("FAILED " .. err)
print("AFTER " .. select(2, pcall(w.scalar, w, "loss", 1, 1)))
print("FLUSH " .. select(2, pcall(w.flush, w)))
print("CLOSE " .. tostring(pcall(w.close, w)))]])
  f:close()
  local exe = arg[-1] or arg[0]
  local p = io.popen(string.format("sh -c 'trap \"\" XFSZ; ulimit -f 100; exec %s %s %s' 2>&1",
                                   exe, script, dir))
  local out = p:read("a")
  p:close()
  os.remove(script)
  local written = tonumber(out:match("WRITTEN (%d+)"))
  T.ok(written and written > 100, out)
  local ok, text = reader(out:match("PATH (%S+)"))
  T.ok(ok, text)   -- every CRC checks: no torn record
  T.eq(select(2, text:gsub("scalar loss", "")), written)
  T.ok(has(out, "FAILED scalar: tfrecord: cannot write to '"), out)
  T.ok(has(out, "File too large"), out)
  T.ok(has(out, "AFTER scalar: the summary writer failed earlier and writes nothing more " ..
                "(tfrecord: cannot write to '"), out)
  T.ok(has(out, "FLUSH flush: the summary writer failed earlier"), out)
  T.ok(has(out, "CLOSE true"), out)
  os.execute("rm -rf " .. dir)
end)

T.test("a writer dropped without close is closed by the collector", function()
  local dir = tmpdir()
  local path
  do
    local w = mf.summary.create_file_writer(dir)
    path = w.path
    w:scalar("x", 2, 5)
  end
  collectgarbage()
  collectgarbage()
  local ok, out = reader(path)
  T.ok(ok and has(out, "scalar x 5 2"), out)
  os.execute("rm -rf " .. dir)
end)

T.done()
