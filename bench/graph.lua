-- graph.lua MODE — graph-mode figures (float32, 1 thread, medians of 7 runs):
--   exec:  the in-degree executor's cost per node on 1-element tensors (fusion
--          off: the chain would run as one fused node, help "fusion"):
--          "exec_add US" and "exec_identity US", sess:run of a chain of 1000
--          AddV2 (x + c) or Identity nodes, divided by the 1000 nodes;
--   chain: a 20-op chain of small (1-element) tensors, per call:
--          "chain_eager US" calling the Lua function eagerly,
--          "chain_session US" sess:run of the same graph built by hand,
--          "chain_trace US" the mf.trace'd function (when mf.trace exists).
local mode = arg[1] or "exec"
local runs = 7

local function median(xs)
  table.sort(xs)
  return xs[(#xs + 1) // 2]
end

-- microseconds per unit: 'body(iters)' does 'iters' calls of 'units' units
local function time_us(iters, units, body)
  local times = {}
  for r = 1, runs do
    local t0 = os.clock()
    body(iters)
    times[r] = (os.clock() - t0) / (iters * units) * 1e6
  end
  return median(times)
end

local NODES = 1000

local function chain_graph(step)
  local g = mf.Graph()
  local x, y
  g:as_default(function()
    x = mf.placeholder("float32", {1}, "x")
    y = x
    for _ = 1, NODES do y = step(y) end
  end)
  return mf.Session(g), x, y
end

-- the 20-op chain: a mix of binary and unary ops, as a small model step has
local function f20(x)
  local y = x
  for _ = 1, 4 do
    y = mf.tanh(y * 0.5 + 0.25)
    y = mf.exp(-y) - y
  end
  return y
end

local xv = mf.fill({1}, 0.3)

if mode == "exec" then
  mf.config{fusion = false}   -- the executor's cost per node: every node on its own
  local c = mf.fill({1}, 1e-3)
  local s, x, y = chain_graph(function(t) return t + c end)
  local feeds = {[x] = xv}
  print(string.format("exec_add %.3f", time_us(200, NODES, function(n)
    for _ = 1, n do s:run(y, feeds) end
  end)))
  s, x, y = chain_graph(function(t) return mf.identity(t) end)
  feeds = {[x] = xv}
  print(string.format("exec_identity %.3f", time_us(200, NODES, function(n)
    for _ = 1, n do s:run(y, feeds) end
  end)))
else
  print(string.format("chain_eager %.3f", time_us(20000, 1, function(n)
    for _ = 1, n do f20(xv) end
  end)))
  local g = mf.Graph()
  local x, y
  g:as_default(function()
    x = mf.placeholder("float32", {1}, "x")
    y = f20(x)
  end)
  local s, feeds = mf.Session(g), {[x] = xv}
  print(string.format("chain_session %.3f", time_us(20000, 1, function(n)
    for _ = 1, n do s:run(y, feeds) end
  end)))
  local ok, fn = pcall(mf.trace, f20)
  if ok and fn then
    fn(xv) -- traces once
    print(string.format("chain_trace %.3f", time_us(20000, 1, function(n)
      for _ = 1, n do fn(xv) end
    end)))
  end
end
