-- test_graph_random.lua — random ops in graph mode behave as TensorFlow 1's
-- stateful random ops: every sess:run (and every call of a traced function)
-- draws fresh values; the first run equals eager mode with the same seeds;
-- a graph built alike, in this process or a fresh one, repeats the same
-- sequence of runs; dropout's graph gradient uses the mask of its own run;
-- eager results do not change.
local T = dofile("tests/lua/harness.lua")

-- True when 'a' and 'b' have one dtype and shape and equal values.
local function same(a, b)
  if a.dtype ~= b.dtype or a:numel() ~= b:numel() then return false end
  local x, y = mf.reshape(a, {-1}):totable(), mf.reshape(b, {-1}):totable()
  for i = 1, #x do
    if x[i] ~= y[i] then return false end
  end
  return true
end

-- Builds one graph with every random op, runs it twice and returns the
-- values of both runs as text (all digits), so that two processes can be
-- compared. Also returns the two runs, for the checks in this process.
local PROG = [[
mf.random.seed(11)
local g = mf.Graph()
local f = {}
local x
g:as_default(function()
  x = mf.placeholder("float32", {3, 4}, "x")
  f[1] = mf.random.normal({3, 4}, {seed = 1})
  f[2] = mf.random.uniform({3, 4})
  f[3] = mf.random.truncated_normal({3, 4}, {seed = 2, dtype = "float64"})
  f[4] = mf.random.uniform({3, 4}, {maxval = 1000, dtype = "int32", seed = 3})
  f[5] = mf.random.shuffle(mf.range(12), {seed = 4})
  f[6] = mf.nn.dropout(x, 0.5, {seed = 5})
end)
local s = mf.Session(g)
local runs, parts = {}, {}
for r = 1, 2 do
  runs[r] = s:run(f, {[x] = mf.ones{3, 4}})
  for _, t in ipairs(runs[r]) do
    for _, v in ipairs(mf.reshape(t, {-1}):totable()) do
      parts[#parts + 1] = string.format("%.17g", v)
    end
  end
end
return table.concat(parts, " "), runs
]]

T.test("each sess:run draws fresh values; the first run equals eager mode", function()
  local _, runs = load(PROG)()
  mf.random.seed(11)
  local eager = {
    mf.random.normal({3, 4}, {seed = 1}),
    mf.random.uniform({3, 4}),
    mf.random.truncated_normal({3, 4}, {seed = 2, dtype = "float64"}),
    mf.random.uniform({3, 4}, {maxval = 1000, dtype = "int32", seed = 3}),
    mf.random.shuffle(mf.range(12), {seed = 4}),
    mf.nn.dropout(mf.ones{3, 4}, 0.5, {seed = 5}),
  }
  local names = {"normal", "uniform", "truncated_normal", "uniform int", "shuffle", "dropout"}
  for i, name in ipairs(names) do
    T.ok(same(runs[1][i], eager[i]), name .. ": the first run differs from eager mode")
    T.ok(not same(runs[1][i], runs[2][i]), name .. ": two runs gave the same values")
  end
  -- the shuffles are permutations and the masks keep or drop whole elements
  T.eq(mf.reduce_sum(runs[2][5]), 66)
  for _, v in ipairs(mf.reshape(runs[2][6], {-1}):totable()) do
    T.ok(v == 0 or v == 2, "dropout value " .. v)
  end
end)

T.test("a graph built alike repeats the sequence, in this process and a fresh one", function()
  local here = load(PROG)()
  T.eq(load(PROG)(), here)
  local exe = arg and (arg[-1] or arg[0])
  T.ok(exe and exe:find("moonflow"), "cannot find the moonflow binary in arg")
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write("io.write((load(", string.format("%q", PROG), ")()))\n")
  f:close()
  local p = assert(io.popen(exe .. " " .. path .. " 2>&1"))
  local there = p:read("a")
  p:close()
  os.remove(path)
  T.ok(there == here, "a fresh process gave another sequence:\n" .. there .. "\n" .. here)
end)

T.test("a traced function draws a fresh dropout mask on each call", function()
  local x = mf.ones{4, 8}
  local f = mf.trace(function(v) return mf.nn.dropout(v, 0.5, {seed = 9}) end)
  local a, b, c = f(x), f(x), f(x)
  T.ok(same(a, mf.nn.dropout(x, 0.5, {seed = 9})), "the first call differs from eager mode")
  T.ok(not same(a, b) and not same(b, c) and not same(a, c), "two calls gave the same mask")
  local unseeded = mf.trace(function(v) return mf.nn.dropout(v, 0.5) end)
  T.ok(not same(unseeded(x), unseeded(x)), "unseeded: two calls gave the same mask")
end)

T.test("dropout's graph gradient uses the mask of the same run", function()
  local g = mf.Graph()
  local x, y, dx
  g:as_default(function()
    x = mf.placeholder("float32", {4, 8}, "x")
    y = mf.nn.dropout(x, 0.5, {seed = 6})
    dx = mf.gradients(mf.reduce_sum(y), x)[1]
  end)
  local s = mf.Session(g)
  local xv = mf.range(1, 33, 1, {dtype = "float32"}):reshape{4, 8}
  local masks = {}
  for r = 1, 3 do
    local out = s:run({y, dx}, {[x] = xv})
    masks[r] = out[1] / xv           -- 0 or 1 / (1 - rate) = 2 per element
    T.eq(out[2], masks[r], 0, "run " .. r .. ": dx is not y / x")
    T.ok(mf.reduce_sum(masks[r]):item() > 0, "run " .. r .. ": everything dropped")
  end
  T.ok(not same(masks[1], masks[2]) and not same(masks[2], masks[3]), "masks repeat")
end)

T.test("graph gradients through a random op's consumer see that run's values", function()
  local g = mf.Graph()
  local w, noise, dw
  g:as_default(function()
    w = mf.placeholder("float64", {5}, "w")
    noise = mf.random.normal({5}, {seed = 8, dtype = "float64"})
    dw = mf.gradients(mf.reduce_sum(w * noise), w)[1]
  end)
  local s = mf.Session(g)
  local first
  for r = 1, 2 do
    local out = s:run({noise, dw}, {[w] = mf.ones({5}, "float64")})
    T.eq(out[2], out[1], 0, "run " .. r)
    if first then T.ok(not same(first, out[1]), "the noise repeats") end
    first = out[1]
  end
end)

T.test("eager random ops are unchanged: the same seed gives the same values", function()
  local a = mf.random.normal({6}, {seed = 1})
  T.ok(same(a, mf.random.normal({6}, {seed = 1})))
  local d = mf.nn.dropout(mf.ones{16}, 0.5, {seed = 2})
  T.ok(same(d, mf.nn.dropout(mf.ones{16}, 0.5, {seed = 2})))
  mf.random.seed(3)
  local u1 = mf.random.uniform({6})
  mf.random.seed(3)
  T.ok(same(u1, mf.random.uniform({6})))
end)

T.test("a fresh Session of the same graph repeats the sequence", function()
  local g = mf.Graph()
  local r, w, init
  g:as_default(function()
    r = mf.random.uniform({8}, {seed = 12})
    w = mf.Variable(mf.random.normal({4}, {seed = 13}), {name = "w"})
    init = mf.global_variables_initializer()
  end)
  local s1, s2 = mf.Session(g), mf.Session(g)
  s1:run(init)
  local a1, a2 = s1:run(r), s1:run(r)
  s2:run(init)
  T.ok(same(s2:run(w), s1:run(w)), "the sessions initialised w differently")
  local b1 = s2:run(r)
  local a3 = s1:run(r)
  local b2 = s2:run(r)
  T.ok(same(b1, a1) and same(b2, a2), "the second session did not repeat the first")
  T.ok(not same(a1, a2) and not same(a3, a1) and not same(a3, a2), "runs repeat")
end)

T.done()
