-- test_fusion.lua — fused nodes in graphs (help "fusion", graph/fusion.h):
-- the traced GELU-MLP block gives the same bits with and without fusion,
-- forward and gradients, as eager does; the fused node shows in print(g),
-- g:to_dot, the profiler and the schedule; mf.config{fusion} and
-- mf.trace(f, {fusion}) turn it off. (Random chains, float32 and float64,
-- broadcasting and reductions, compared with memcmp: tests/unit/test_fusion.c.)
local T = dofile("tests/lua/harness.lua")

-- Same values, element for element (0 and -0 told apart).
local function same_bits(a, b, what)
  T.eq(a.shape, b.shape, nil, what)
  local fa, fb = mf.reshape(a, {-1}):totable(), mf.reshape(b, {-1}):totable()
  for i = 1, #fa do
    local x, y = fa[i], fb[i]
    if not (x == y and 1 / x == 1 / y) and not (x ~= x and y ~= y) then
      error(string.format("%s: element %d differs: %.17g and %.17g", what, i, x, y), 2)
    end
  end
end

-- Dense, GELU, Dense on (4, 8, 16) with a squared-sum loss, and its gradients.
local function gelu_mlp(dtype)
  mf.random.seed(7)
  local p = {
    w1 = mf.Variable(mf.random.normal({16, 16}, {dtype = dtype}) * 0.3),
    b1 = mf.Variable(mf.random.normal({16}, {dtype = dtype}) * 0.1),
    w2 = mf.Variable(mf.random.normal({16, 16}, {dtype = dtype}) * 0.3),
    b2 = mf.Variable(mf.random.normal({16}, {dtype = dtype}) * 0.1),
  }
  local function forward(x)
    local h = mf.nn.gelu(mf.tensordot(x, p.w1, 1) + p.b1)
    local y = mf.tensordot(h, p.w2, 1) + p.b2
    return mf.reduce_sum(y * y)
  end
  local function step(x)
    local tape = mf.GradientTape()
    tape:watch(x)
    local loss = forward(x)
    local g = tape:gradient(loss, {x, p.w1, p.b1, p.w2, p.b2})
    return loss, g[1], g[2], g[3], g[4], g[5]
  end
  return step, mf.random.normal({4, 8, 16}, {dtype = dtype})
end

for _, dtype in ipairs({"float32", "float64"}) do
  T.test("GELU-MLP block, " .. dtype .. ": fused, unfused and eager give the same bits",
         function()
    local step, x = gelu_mlp(dtype)
    local fused, plain = mf.trace(step), mf.trace(step, {fusion = false})
    local a, b, e = {fused(x)}, {plain(x)}, {step(x)}
    T.eq(#a, 6)
    for i = 1, 6 do
      same_bits(a[i], b[i], "result " .. i .. " fused/unfused")
      same_bits(a[i], e[i], "result " .. i .. " fused/eager")
    end
    -- the function graph with fusion has fused nodes, forward and backward
    local listing = tostring(fused:graph(x))
    T.ok(listing:find("fused when run", 1, true), listing)
    -- (GELU is one op, Gelu, whose input the backward's GeluGrad reads too)
    T.ok(listing:find("\n  reduce_sum = Fused%[") and listing:find("gradients/[^\n]*Fused%["),
         listing)
    T.ok(not tostring(plain:graph(x)):find("Fused[", 1, true))
  end)
end

T.test("the fused node in print(g), to_dot, the schedule and the profiler", function()
  local g = mf.Graph()
  local x, y
  g:as_default(function()
    x = mf.placeholder("float32", {2, 3}, "x")
    y = mf.reduce_sum(mf.tanh(x * 2 + mf.tensor{1, 2, 3}), 2)
  end)
  local listing = tostring(g)
  T.ok(listing:find("\nfused when run (help \"fusion\"; mf.config{fusion = false} turns it " ..
                    "off): 1 node\n  reduce_sum = Fused[Mul, AddV2, Tanh, Sum](x:0, Const:0, " ..
                    "Const_1:0) of multiply, add, tanh, reduce_sum -> float32 (2,)", 1, true),
       listing)
  local dot = g:to_dot()
  T.ok(dot:find("subgraph cluster_fused_%d+ {\n      style=rounded;\n      label=\"reduce_sum: " ..
                "Fused%[Mul, AddV2, Tanh, Sum%]\";\n      n%d+ %[shape=box, label=\"multiply"), dot)
  local sess = mf.Session(g)
  local feeds = {[x] = {{0, 1, 2}, {-1, -2, 0.5}}}
  local v, sched = sess:run(y, feeds, {schedule = true})
  T.eq(#sched, 3)   -- two Consts, then the fused node
  T.eq(sched[3].name, "reduce_sum")
  T.eq(sched[3].op, "Fused[Mul, AddV2, Tanh, Sum]")
  T.eq(sched[3].indegree, 2)
  T.ok(tostring(sched):find("reduce_sum%s+Fused%[Mul, AddV2, Tanh, Sum%]%s+2"), tostring(sched))
  -- tanh(0 * 2 + 1) + tanh(1 * 2 + 2) + tanh(2 * 2 + 3), the same ops eagerly
  same_bits(v, mf.reduce_sum(mf.tanh(mf.tensor{{0, 1, 2}, {-1, -2, 0.5}} * 2
                                     + mf.tensor{1, 2, 3}), 2), "value")
  local prof = mf.profile(function() sess:run(y, feeds) end)
  local found
  for _, row in ipairs(prof:rows()) do
    if row.label == "Fused[Mul, AddV2, Tanh, Sum]" then found = row end
  end
  T.ok(found and found.op == "reduce_sum" and found.type == "Fused" and found.calls == 1,
       tostring(prof))
  T.ok(tostring(prof):find("reduce_sum (Fused[Mul, AddV2, Tanh, Sum])", 1, true), tostring(prof))
end)

T.test("mf.config{fusion = false} shows every node; a fetched inner value unfuses", function()
  local g = mf.Graph()
  local x, t, y
  g:as_default(function()
    x = mf.placeholder("float64", {3}, "x")
    t = mf.exp(x)
    y = mf.sqrt(t + 1)
  end)
  local sess, feeds = mf.Session(g), {[x] = {0, 1, 2}}
  T.eq(mf.config().fusion, true)
  local _, fused = sess:run(y, feeds, {schedule = true})
  T.eq(#fused, 2)
  T.eq(fused[2].op, "Fused[Exp, AddV2, Sqrt]")
  T.eq(mf.config{fusion = false}.fusion, false)
  local ok, err = pcall(function()
    T.ok(not tostring(g):find("Fused", 1, true), tostring(g))
    T.ok(not g:to_dot():find("cluster_fused", 1, true))
    local _, plain = sess:run(y, feeds, {schedule = true})
    T.eq(#plain, 4)
    T.eq(plain[4].op, "Sqrt")
  end)
  mf.config{fusion = true}
  assert(ok, err)
  -- t fetched: the chain runs node by node, t is returned
  local ty, sched = sess:run({t, y}, feeds, {schedule = true})
  T.eq(ty[1], {1, math.exp(1), math.exp(2)}, 1e-12)
  T.eq(#sched, 4)
  T.raises(function() mf.config{fusion = "no"} end, "config: option 'fusion' must be a boolean")
end)

T.test("a GradientTape around sess:run sees the ops of a fused chain", function()
  local g = mf.Graph()
  local x, y
  g:as_default(function()
    x = mf.placeholder("float32", {3}, "x")
    y = mf.tanh(x * 2 + 1)
  end)
  local sess, xv = mf.Session(g), mf.tensor{1, 2, 3}
  local tape = mf.GradientTape()
  tape:watch(xv)
  local v = sess:run(y, {[x] = xv})
  -- d tanh(2x + 1) / dx = 2 (1 - tanh^2)
  local t = mf.tanh(xv * 2 + 1)
  T.eq(tape:gradient(v, xv), (1 - t * t) * 2, 1e-6)
end)

T.done()
