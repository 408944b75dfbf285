-- eager_vs_graph.lua — one function, run both ways: eagerly (each op runs
-- when Lua reaches it, a tape records for gradients) and as a graph (built
-- once, with symbolic gradients, then run by a Session). Same results; the
-- graph saves the per-op Lua work on every call.
-- Run: build/moonflow scripts/eager_vs_graph.lua [calls]

local calls = math.tointeger(tonumber(arg and arg[1] or 200))
assert(calls and calls >= 1, "usage: eager_vs_graph.lua [calls]: calls must be a positive integer")
local clock = mf.clock or os.clock           -- wall clock when available

-- The function: a small two-layer network's loss on a batch, and its
-- gradient with respect to the first weights.
mf.random.seed(1)
local W1 = mf.random.normal({16, 32}, {stddev = 0.3})
local W2 = mf.random.normal({32, 1}, {stddev = 0.3})
local function loss_of(x, w1)
  return mf.reduce_mean(mf.square(mf.matmul(mf.tanh(mf.matmul(x, w1)), W2)))
end
local batch = mf.random.normal({8, 16})

-- 1. Eager: a tape watches w1, gradient walks the recorded ops backwards.
local function eager(x)
  local tape = mf.GradientTape()
  tape:watch(W1)
  local loss = loss_of(x, W1)
  return loss, tape:gradient(loss, W1)
end

-- 2. Graph: the same Lua function builds nodes once; mf.gradients adds the
--    backward nodes (under "gradients/"); the graph then runs with the
--    in-degree executor on every call. mf.trace(f) (TensorFlow's tf.function)
--    does the building on the first call; without it, by hand: a Graph, a
--    placeholder and a Session.
local function loss_and_grad(x)
  local w1 = mf.identity(W1)                 -- a node we can differentiate by
  local loss = loss_of(x, w1)
  return loss, mf.gradients(loss, {w1})[1]   -- one gradient per source
end
local graph, graph_nodes
if pcall(mf.trace, function() end) then     -- this mf.trace accepts functions
  graph = mf.trace(loss_and_grad)
  graph_nodes = function() return #graph:graph(batch):nodes() end
  print("graph mode with mf.trace; the traced graph (forward and gradients/):")
  print(graph:graph(batch))
else
  local g = mf.Graph()
  local x_ph, loss_t, grad_t
  g:as_default(function()
    x_ph = mf.placeholder("float32", {-1, 16}, "x")
    loss_t, grad_t = loss_and_grad(x_ph)
  end)
  local sess = mf.Session(g)
  graph = function(x)
    local out = sess:run({loss_t, grad_t}, {[x_ph] = x})
    return out[1], out[2]
  end
  graph_nodes = function() return #g:nodes() end
  print("graph mode with a hand-built graph and a Session")
end

-- 3. Equal results (float32: equal up to rounding).
local le, ge = eager(batch)
local lg, gg = graph(batch)
local diff = math.max(math.abs(le:item() - lg:item()),
                      mf.reduce_max(mf.abs(ge - gg)):item())
print(string.format("loss eager %.6f  graph %.6f  largest difference %.2g",
                    le:item(), lg:item(), diff))

-- 4. Timing: the median of 5 rounds of 'calls' calls each (a busy machine makes
--    these noisy; the graph wins when Lua-side work per op dominates).
local function time_per_call(fn)
  local rounds = {}
  for r = 1, 5 do
    local t0 = clock()
    for _ = 1, calls do fn(batch) end
    rounds[r] = (clock() - t0) / calls * 1e6
  end
  table.sort(rounds)
  return rounds[3]
end
local te, tg = time_per_call(eager), time_per_call(graph)
print(string.format("per call: eager %.1f us, graph %.1f us (%d nodes in the graph)",
                    te, tg, graph_nodes()))
print("equal results:", diff < 1e-5)
