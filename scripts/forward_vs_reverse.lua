-- forward_vs_reverse.lua — the two modes of autodiff side by side: dual
-- numbers on a tiny function, a full Jacobian both ways for a wide and a
-- tall function (op counts and time from the profiler), a
-- Hessian-vector product (forward over reverse), and per-example gradients
-- with mf.vmap against a loop. help "forward mode" is the idea in one page.
-- Run: build/moonflow scripts/forward_vs_reverse.lua

-- 1. Dual numbers. Forward mode carries, beside each value x, a tangent dx
--    (x + dx e with e^2 = 0): every op maps (x, dx) to (f(x), f'(x) dx).
--    With dx = 1 at the input, the tangent of the output is the derivative.
local x = mf.tensor(1.5, "float64")
local acc = mf.ForwardAccumulator(x, 1.0)
local y = x * x * mf.sin(x)                  -- f(x) = x^2 sin x
acc:close()
local by_hand = 2 * 1.5 * math.sin(1.5) + 1.5 ^ 2 * math.cos(1.5)
print(string.format("dual numbers: f(1.5) = %.6f, tangent = %.6f (2x sin x + x^2 cos x = %.6f)",
                    y:item(), acc:jvp(y):item(), by_hand))

-- 2. A full Jacobian, both ways. Forward mode gives one column per pass
--    (a unit tangent per input); reverse mode one row per pass (a unit
--    output gradient per output, tape:jacobian). So a wide function (many
--    inputs, few outputs) wants reverse mode, a tall one forward mode.
local function basis(n, i)
  local e = {}
  for k = 1, n do e[k] = k == i and 1 or 0 end
  return mf.tensor(e, "float64")
end

local function forward_jacobian(f, x0)
  local cols = {}
  for i = 1, x0.shape[1] do
    local _, col = mf.jvp(f, x0, basis(x0.shape[1], i))
    cols[i] = col
  end
  return mf.stack(cols, 2)                   -- (outputs, inputs)
end

local function reverse_jacobian(f, x0)
  local tape = mf.GradientTape{persistent = true}
  tape:watch(x0)
  local out = f(x0)
  tape:stop()
  return tape:jacobian(out, x0)
end

-- Runs 'fn' under the profiler: its result, the ops it ran and the time.
local function measured(fn)
  local result
  local t0 = mf.clock()
  local prof = mf.profile(function() result = fn() end)
  local ms = (mf.clock() - t0) * 1e3
  local ops = 0
  for _, row in ipairs(prof:rows()) do ops = ops + row.calls end
  return result, ops, ms
end

local function compare(name, f, x0)
  local jf, ops_f, ms_f = measured(function() return forward_jacobian(f, x0) end)
  local jr, ops_r, ms_r = measured(function() return reverse_jacobian(f, x0) end)
  local diff = mf.reduce_max(mf.abs(jf - jr)):item()
  print(string.format("%s: Jacobian %dx%d  forward %5d ops %8.2f ms | reverse %5d ops %8.2f ms"
                      .. " | max difference %.1e", name, jf.shape[1], jf.shape[2], ops_f, ms_f,
                      ops_r, ms_r, diff))
end

mf.profiler.peak()   -- the profiler measures this machine's GEMM peak once, here, not below
local n = 64
local W = mf.random.normal({4, n}, {seed = 1, dtype = "float64"})
local A = mf.random.normal({n, 4}, {seed = 2, dtype = "float64"})
local function wide(v) return mf.tanh(mf.reshape(mf.matmul(W, mf.reshape(v, {n, 1})), {4})) end
local function tall(v) return mf.tanh(mf.reshape(mf.matmul(A, mf.reshape(v, {4, 1})), {n})) end
compare("wide (64 -> 4)", wide, mf.random.normal({n}, {seed = 3, dtype = "float64"}))
compare("tall (4 -> 64)", tall, mf.random.normal({4}, {seed = 4, dtype = "float64"}))

-- 3. A Hessian-vector product without the Hessian: a forward pass over a
--    backward one. The accumulator sees the tape's gradient ops, so the
--    tangent of the gradient along v is H v, at the cost of about two
--    gradients. For f(x) = sum(x^4), H = diag(12 x^2).
local function quartic(v) return mf.reduce_sum(v ^ 4) end
local x0 = mf.tensor({1, -2, 0.5}, "float64")
local v = mf.tensor({1, 1, 2}, "float64")
local _, hv = mf.hvp(quartic, x0, v)
local want = 12 * x0 * x0 * v
print(string.format("hvp: H v = {%g, %g, %g}, 12 x^2 v = {%g, %g, %g}", hv[1], hv[2], hv[3],
                    want[1], want[2], want[3]))
print("Hessian of sum(x^4) at {1, -2, 0.5}:")
print(mf.hessian(quartic, x0))

-- 4. Per-example gradients: mf.vmap. Reverse mode sums the gradient over
--    a batch; one gradient per example is a loop of backward passes, or
--    mf.vmap of the gradient function: f runs once on one example's
--    shapes, then every op of that graph runs on the whole batch through
--    its batching rule (one GEMM where the loop ran one per example).
local W1 = mf.random.normal({16, 8}, {seed = 5, dtype = "float64"})
local X = mf.random.normal({32, 16}, {seed = 6, dtype = "float64"})
local Y = mf.tensor((function()
  local labels = {}
  for i = 1, 32 do labels[i] = i % 8 + 1 end
  return labels
end)(), "int64")
local function loss(w, x1, y1)
  local logits = mf.matmul(mf.reshape(x1, {1, 16}), w)
  return mf.reduce_mean(mf.nn.sparse_softmax_cross_entropy_with_logits(mf.reshape(y1, {1}), logits))
end
local grad = mf.grad(loss, {argnums = 1})
local vmapped, vops, vms = measured(function()
  return mf.vmap(grad, {in_axes = {nil, 1, 1}})(W1, X, Y)
end)
local looped, lops, lms = measured(function()
  local each = {}
  for i = 1, 32 do each[i] = grad(W1, X[{i}], Y[{i}]) end
  return mf.stack(each, 1)
end)
print(string.format("per-example gradients (32 x 16x8): vmap %4d ops %8.2f ms | loop %5d ops " ..
                    "%8.2f ms | max difference %.1e", vops, vms, lops, lms,
                    mf.reduce_max(mf.abs(vmapped - looped)):item()))
