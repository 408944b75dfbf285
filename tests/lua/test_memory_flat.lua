-- test_memory_flat.lua — long runs keep their memory flat without
-- collectgarbage(): an eager training loop, graph session runs, tapes
-- dropped without gradient(), and the prompt fed 100,000 statements through
-- piped stdin (a child `moonflow -i`).
--
-- Each part measures after a warm-up and again at the end: the engine's
-- live tensors and bytes (mf.memory()) and, outside ASan, the resident set
-- (/proc/self/statm). ASan keeps freed memory in quarantine, so its RSS says
-- nothing about leaks; there LSan (make check) and the engine counters do
-- the job. MF_LEAK_SELFTEST=1 makes every part keep one tensor in ten
-- (a leak of about what a forgotten release would cost): the test must then
-- fail, which shows the measurement can see a leak.
local T = dofile("tests/lua/harness.lua")

local SELFTEST = os.getenv("MF_LEAK_SELFTEST") == "1"
local leaked = {}
local function maybe_leak(i, t)
  if SELFTEST and i % 10 == 0 then leaked[#leaked + 1] = t end
end

local function under_asan()
  local f = io.open("/proc/self/maps")
  if not f then return false end
  local maps = f:read("a")
  f:close()
  return maps:find("libasan", 1, true) ~= nil
end
local ASAN = under_asan()

-- Resident KB, less the blocks the engine's caching allocator keeps for
-- reuse (bounded by its cap; they are not leaked).
local function rss_kb()
  local f = io.open("/proc/self/statm")
  if not f then return 0 end
  local _, resident = f:read("n", "n")
  f:close()
  return resident * 4 - mf.memory().cached // 1024
end

-- Runs 'body(i)' for i = 1..warm, then twice 'n' more times. Garbage
-- waiting for the collector makes single samples noisy, so each stretch
-- keeps the floor (the minimum after any call) of live tensors and engine
-- bytes, which only a leak raises, and the peak RSS (outside ASan; sampled
-- every 50 calls). The second stretch may exceed the first by
-- 'tensor_slack' tensors, 1 MB of engine memory and 'rss_slack_kb'.
local function stretch(from, to, body)
  local p = {tensors = math.huge, in_use = math.huge, rss = 0}
  for i = from, to do
    body(i)
    local m = mf.memory()
    p.tensors = math.min(p.tensors, m.tensors)
    p.in_use = math.min(p.in_use, m.in_use)
    if i % 50 == 0 then p.rss = math.max(p.rss, rss_kb()) end
  end
  return p
end

local function flat(name, warm, n, body, tensor_slack, rss_slack_kb)
  for i = 1, warm do body(i) end
  local a = stretch(warm + 1, warm + n, body)
  local b = stretch(warm + n + 1, warm + 2 * n, body)
  local msg = string.format("%s: floor of live tensors %d -> %d, engine bytes %d -> %d, RSS %d -> "
                            .. "%d KB", name, a.tensors, b.tensors, a.in_use, b.in_use, a.rss,
                            b.rss)
  print(msg)
  T.ok(b.tensors - a.tensors <= tensor_slack, msg)
  T.ok(b.in_use - a.in_use <= 1024 * 1024, msg)
  if not ASAN then T.ok(b.rss - a.rss <= rss_slack_kb, msg) end
end

-- A 16-32-4 MLP on a fixed batch.
local function mlp()
  mf.random.seed(7)
  local m = {
    x = mf.random.normal{64, 16},
    y = mf.random.normal{64, 4},
    w1 = mf.Variable(mf.random.normal({16, 32}, {stddev = 0.1})),
    b1 = mf.Variable(mf.zeros{32}),
    w2 = mf.Variable(mf.random.normal({32, 4}, {stddev = 0.1})),
    b2 = mf.Variable(mf.zeros{4}),
  }
  function m.loss()
    local h = mf.relu(mf.matmul(m.x, m.w1) + m.b1)
    return mf.reduce_mean(mf.square(mf.matmul(h, m.w2) + m.b2 - m.y))
  end
  return m
end

T.test("an eager training loop stays flat", function()
  local m = mlp()
  local opt = mf.train.AdamOptimizer(0.01)
  local first, last
  flat("eager", 200, 1000, function(i)
    opt:minimize(m.loss)
    if i % 100 == 0 then
      last = m.loss():item()
      first = first or last
    end
    maybe_leak(i, m.w1 + 0)
  end, 50, 4096)
  T.ok(last < first, "training did not lower the loss: " .. first .. " -> " .. last)
end)

T.test("graph session runs stay flat", function()
  local g = mf.Graph()
  local x, loss, train, init
  g:as_default(function()
    x = mf.placeholder("float32", {-1, 16})
    local w = mf.Variable(mf.random.normal({16, 4}, {stddev = 0.1}))
    loss = mf.reduce_mean(mf.square(mf.matmul(x, w)))
    train = mf.train.GradientDescentOptimizer(0.01):minimize(loss)
    init = mf.global_variables_initializer()
  end)
  local sess = mf.Session(g)
  sess:run(init)
  local batch = mf.random.normal{64, 16}
  flat("graph", 200, 1000, function(i)
    local l = sess:run({loss, train}, {[x] = batch})
    maybe_leak(i, l[1])
  end, 50, 4096)
end)

T.test("tapes dropped without gradient() stay flat", function()
  local v = mf.Variable(mf.random.normal{32, 32})
  flat("tapes", 200, 1500, function(i)
    local tape = mf.GradientTape()
    local y = mf.reduce_sum(mf.tanh(mf.matmul(v, v)))
    maybe_leak(i, y)
    -- neither gradient() nor stop(): the tape is simply dropped
  end, 50, 4096)
end)

-- The prompt: a child 'moonflow -i' reads 100,000 statements from a pipe
-- and prints its memory after 10,000 and at the end.
local function prompt_script(path, n)
  local f = assert(io.open(path, "w"))
  -- mem() counts after a full collection: the live-tensor figure then measures what is
  -- still reachable (a leak), not how far the collector happened to get (dropped tapes wait
  -- for it; under load the count varied 9..86). RSS, read first, still shows growth.
  f:write("function mem() local s = io.open('/proc/self/statm'); local _, r = s:read('n', 'n'); " ..
          "s:close(); collectgarbage(); collectgarbage(); local m = mf.memory(); " ..
          "print('MEM', m.tensors, m.in_use, r * 4 - m.cached // 1024) end\n")
  f:write("keep = {}\na = mf.ones{8, 8}\nx = a\ny = mf.reduce_sum(x)\n")
  -- short lines, to keep the script small
  local kinds = {
    "x = a * %d",
    "y = mf.reduce_sum(x)",
    "do local t = mf.GradientTape(); z = mf.matmul(x, x) end",
    "s = tostring(y)",
    "y:item() + %d",
  }
  for i = 1, n do
    f:write(string.format(kinds[i % #kinds + 1], i % 100), "\n")
    if SELFTEST and i % 10 == 0 then f:write("keep[#keep + 1] = x + 1\n") end
    if i == n // 10 or i == n then f:write("mem()\n") end
  end
  f:close()
end

T.test("the prompt stays flat over 100,000 piped statements", function()
  local exe = arg and (arg[-1] or arg[0])
  T.ok(exe and exe:find("moonflow"), "cannot find the moonflow binary in arg")
  local script = os.tmpname()
  local n = 100000
  prompt_script(script, n)
  local p = assert(io.popen(string.format("HOME= MOONFLOW_HISTORY= %s -i < %s 2>&1", exe,
                                          script)))
  local mems, errors, lines = {}, 0, 0
  for line in p:lines() do
    lines = lines + 1
    local t, b, r = line:match("^MEM%s+(%d+)%s+(%d+)%s+(%d+)")
    if t then mems[#mems + 1] = {tonumber(t), tonumber(b), tonumber(r)} end
    if line:find("error", 1, true) or line:find("stack traceback", 1, true) then
      errors = errors + 1
    end
  end
  p:close()
  os.remove(script)
  T.eq(#mems, 2, nil, "MEM lines from the prompt")
  T.eq(errors, 0, nil, "errors at the prompt")
  local a, b = mems[1], mems[2]
  local msg = string.format("prompt: %d output lines; live tensors %d -> %d, engine bytes " ..
                            "%d -> %d, RSS %d -> %d KB", lines, a[1], b[1], a[2], b[2], a[3], b[3])
  print(msg)
  T.ok(b[1] - a[1] <= 50, msg)
  T.ok(b[2] - a[2] <= 1024 * 1024, msg)
  if not ASAN then T.ok(b[3] - a[3] <= 8192, msg) end
end)

T.done()
