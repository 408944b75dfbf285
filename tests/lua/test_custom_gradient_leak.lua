-- test_custom_gradient_leak.lua — a graph-mode custom_gradient whose
-- gradient function captures a tensor of its graph (graph -> node ->
-- function -> tensor -> graph) no longer keeps the graph alive once
-- nothing else holds it (issue #13, item 6): 50 dropped graphs, each with a
-- 256 KB constant, come back to the baseline of engine bytes and tensors
-- after a collection, without any cleanup by the user. The gradient
-- function still works while the graph is held, also through a tensor
-- fetched again by name after every box of the custom node was dropped.
local T = dofile("tests/lua/harness.lua")

local function full_gc()
  for _ = 1, 4 do collectgarbage() end   -- finalizers, then what they freed
end

-- A graph with y = custom(x * c) whose gradient function captures y and c.
local function build()
  local g = mf.Graph()
  local x, y
  g:as_default(function()
    local c = mf.constant(mf.fill({256, 256}, 0.5))
    x = mf.placeholder("float32", {256, 256})
    local f = mf.custom_gradient(function(u)
      local out = u * 3
      return out, function(dy) return dy * out * c end
    end)
    y = f(x * c)
  end)
  return g, x, y
end

T.test("dropped graphs with a gradient function capturing their tensors are freed", function()
  full_gc()
  local base = mf.memory()
  for _ = 1, 50 do
    local g, x, y = build()
    g:as_default(function() mf.gradients(mf.reduce_sum(y), {x}) end)
  end
  full_gc()
  local now = mf.memory()
  T.eq(now.tensors, base.tensors, nil, "live tensors back to the baseline")
  T.ok(now.in_use - base.in_use < 256 * 1024,
       string.format("engine bytes back to the baseline: %d more (50 graphs hold %d)",
                     now.in_use - base.in_use, 50 * 256 * 256 * 4))
end)

T.test("the gradient function lives as long as the graph is held", function()
  local g, x, y = build()
  local yname = y.name
  y = nil
  full_gc()
  local gx
  g:as_default(function()
    local y2 = g:get_tensor(yname)
    gx = mf.gradients(mf.reduce_sum(y2), {x})[1]
  end)
  local xv = mf.fill({256, 256}, 2)
  local got = mf.Session(g):run(gx, {[x] = xv})
  -- d/dx sum(custom(x * c)) with the function's rule: dy * out * c * c = 1 * (3 * 2 * 0.5) * 0.25
  T.eq(got[1][1], 0.75)
end)

T.done()
