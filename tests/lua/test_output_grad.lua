-- test_output_grad.lua — the gradients of sigmoid and tanh as one op each
-- (SigmoidGrad, TanhGrad: core/ops/output_grad.c, TensorFlow's ops of those
-- names): one op in the profile where Sub, Mul, Mul were; the same bits as
-- that composition; any thread count; second derivatives (TensorFlow's
-- _SigmoidGradGrad, _TanhGradGrad) against the closed forms in float64.
local T = dofile("tests/lua/harness.lua")

local function op_counts(fn)
  local prof = mf.profile(fn)
  local seen = {}
  for _, r in ipairs(prof:rows()) do seen[r.type] = (seen[r.type] or 0) + r.calls end
  return seen
end

local FNS = {sigmoid = "SigmoidGrad", tanh = "TanhGrad"}

T.test("the gradient of sigmoid and of tanh is one op", function()
  local x = mf.random.uniform({64, 32}, {minval = -4, maxval = 4, seed = 3})
  local w = mf.random.uniform({64, 32}, {minval = -1, maxval = 1, seed = 4})
  for name, op in pairs(FNS) do
    local g = mf.grad(function(v) return mf.reduce_sum(mf[name](v) * w) end)
    local seen = op_counts(function() return g(x) end)
    T.eq(seen[op], 1, 0, name .. ": " .. op)
    T.ok(seen.Sub == nil, name .. ": no Sub left in its gradient")
  end
end)

-- dy * (y * (1 - y)) and dy * (1 - y * y) by separate ops, rounded as the op does
local function composed(name, y, dy)
  if name == "sigmoid" then return dy * (y * (1 - y)) end
  return dy * (1 - y * y)
end

T.test("float32 and float64: the bits of the composition, on 1 and 2 threads", function()
  for _, dtype in ipairs({"float32", "float64"}) do
    local x = mf.cast(mf.random.uniform({300, 257}, {minval = -6, maxval = 6, seed = 5}), dtype)
    local w = mf.cast(mf.random.uniform({300, 257}, {minval = -1, maxval = 1, seed = 6}), dtype)
    for name in pairs(FNS) do
      local want = composed(name, mf[name](x), w):totable()
      local g = mf.grad(function(v) return mf.reduce_sum(mf[name](v) * w) end)
      for threads = 1, 2 do
        mf.set_num_threads(threads)
        local got = g(x):totable()
        for i = 1, #want do
          for j = 1, #want[i] do
            if got[i][j] ~= want[i][j] then
              error(string.format("%s %s, %d threads: [%d][%d] %.9g, composition %.9g",
                name, dtype, threads, i, j, got[i][j], want[i][j]))
            end
          end
        end
      end
      mf.set_num_threads(1)
    end
  end
end)

T.test("second derivatives against the closed forms (float64)", function()
  local xs = {-3.5, -0.8, 0, 0.3, 2.2}
  local x = mf.tensor(xs, "float64")
  local function second(f)
    local d1 = mf.grad(function(v) return mf.reduce_sum(f(v)) end)
    return mf.grad(function(v) return mf.reduce_sum(d1(v)) end)(x) -- elementwise: the diagonal
  end
  local ds, dt = second(mf.sigmoid):totable(), second(mf.tanh):totable()
  for i, v in ipairs(xs) do
    local s, t = 1 / (1 + math.exp(-v)), math.tanh(v)
    T.eq(ds[i], s * (1 - s) * (1 - 2 * s), 1e-15, "sigmoid'' at " .. v)
    T.eq(dt[i], -2 * t * (1 - t * t), 1e-15, "tanh'' at " .. v)
  end
  -- through both inputs of the gradient op: d/dx of (dy-weighted) gradients
  local w = mf.tensor({0.5, -1.5, 2, 1, -0.25}, "float64")
  T.ok(mf.test.gradcheck(function(v)
    local g = mf.grad(function(u) return mf.reduce_sum(mf.sigmoid(u) * w) end)(v)
    return mf.reduce_sum(g * g)
  end, {x}))
  T.ok(mf.test.gradcheck(function(v)
    local g = mf.grad(function(u) return mf.reduce_sum(mf.tanh(u) * w) end)(v)
    return mf.reduce_sum(g * g)
  end, {x}))
end)

T.test("graph mode: the graph holds the one op, with an unknown batch dim", function()
  local g = mf.Graph()
  local p, dx
  g:as_default(function()
    p = mf.placeholder("float32", {-1, 3})
    dx = mf.gradients(mf.reduce_sum(mf.tanh(p) + mf.sigmoid(p)), {p})[1]
  end)
  local x = mf.tensor({{-1, 0, 1}, {2, -2, 0.5}})
  local got = mf.Session(g):run({dx}, {[p] = x})[1]
  local t, s = mf.tanh(x), mf.sigmoid(x)
  T.eq(got, (1 - t * t) + s * (1 - s), 0)
  local listing = tostring(g)
  T.ok(listing:find("TanhGrad") and listing:find("SigmoidGrad"), listing)
end)

T.done()
