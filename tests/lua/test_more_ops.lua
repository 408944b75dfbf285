-- test_more_ops.lua — the elementwise ops of API.md "More ops" that exist
-- so far (core/ops/unary_more.c): values against Lua's math library and the
-- formulas, float64 gradients by finite differences, integer inputs
-- refused, the same results in a graph (mf.trace) as eagerly.
local T = dofile("tests/lua/harness.lua")

local xs = {-0.7, -0.2, 0.1, 0.45, 0.9}
local refs = {
  tan = math.tan, atan = math.atan, asin = math.asin, acos = math.acos,
  sinh = function(v) return (math.exp(v) - math.exp(-v)) / 2 end,
  cosh = function(v) return (math.exp(v) + math.exp(-v)) / 2 end,
  expm1 = function(v) return math.exp(v) - 1 end,
  reciprocal = function(v) return 1 / v end,
  -- erf by its series (enough terms for |x| < 1)
  erf = function(v)
    local sum, term = 0, v
    for n = 0, 30 do
      sum = sum + term / (2 * n + 1)
      term = -term * v * v / (n + 1)
    end
    return 2 / math.sqrt(math.pi) * sum
  end,
}

for name, ref in pairs(refs) do
  T.test(name .. ": values, gradient, dtypes, graph", function()
    local x = mf.tensor(xs, "float64")
    local want = {}
    for i, v in ipairs(xs) do want[i] = ref(v) end
    T.eq(mf[name](x), want, 1e-12)
    T.eq(x[name](x), want, 1e-12)
    T.eq(mf[name](mf.tensor(xs)), want, 1e-6)
    T.ok(mf.test.gradcheck(function(t) return mf.reduce_sum(mf[name](t) * t) end, {x}))
    T.raises(function() mf[name](mf.tensor({1, 2}, "int32")) end, "a float dtype")
    local f = mf.trace(function(t) return mf[name](t) end)
    T.eq(f(x), want, 1e-12)
  end)
end

T.done()
