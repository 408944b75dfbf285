-- test_more_ops.lua — the elementwise ops of doc/api.md "Ops" that exist
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
  atanh = function(v) return 0.5 * math.log((1 + v) / (1 - v)) end,
  asinh = function(v) return math.log(v + math.sqrt(v * v + 1)) end,
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

local acts = {
  leaky_relu = function(v) return v > 0 and v or 0.2 * v end,
  elu = function(v) return v > 0 and v or math.exp(v) - 1 end,
  selu = function(v)
    return 1.0507009873554805 * (v > 0 and v or 1.6732632423543772 * (math.exp(v) - 1))
  end,
  gelu = function(v) return 0.5 * v * (1 + refs.erf(v / math.sqrt(2))) end,
  silu = function(v) return v / (1 + math.exp(-v)) end,
  softsign = function(v) return v / (1 + math.abs(v)) end,
  relu6 = function(v) return math.min(math.max(v, 0), 6) end,
}

for name, ref in pairs(acts) do
  T.test("nn." .. name .. ": values, gradient, graph, errors", function()
    local vals = {-0.9, -0.3, 0.2, 0.7, 0.95}
    local x = mf.tensor(vals, "float64")
    local want = {}
    for i, v in ipairs(vals) do want[i] = ref(v) end
    T.eq(mf.nn[name](x), want, 1e-12)
    T.ok(mf.test.gradcheck(function(t) return mf.reduce_sum(mf.nn[name](t) * t) end, {x}))
    local f = mf.trace(function(t) return mf.nn[name](t) end)
    T.eq(f(x), want, 1e-12)
    T.raises(function() mf.nn[name](x, {bogus = 1}) end, name .. ": unknown option 'bogus'")
    -- gelu and silu are ops (core/ops/activation.c): the schema binder's message
    local op = name == "gelu" or name == "silu"
    T.raises(function() mf.nn[name](x, nil, 3) end,
             op and ("called as " .. name .. "(x") or (name .. ": takes (x [, {options}])"))
  end)
end

T.test("gelu approximate, leaky_relu alpha, activations by name in layers", function()
  local v = 0.7
  local tanh_form = 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ^ 3)))
  T.eq(mf.nn.gelu(mf.tensor({v}, "float64"), {approximate = true}), {tanh_form}, 1e-12)
  T.eq(mf.nn.leaky_relu(mf.tensor{-1, 1}, {alpha = 0.5}), {-0.5, 1})
  T.eq(mf.nn.leaky_relu(mf.tensor{-1, 1}, {alpha = 2}), {-2, 1})
  local d = mf.layers.Dense(2, {activation = "gelu", kernel_initializer = "ones"})
  T.eq(d(mf.tensor{{0.5}}), mf.nn.gelu(mf.tensor{{0.5, 0.5}}))
end)

T.test("moments, batch_normalization, reduce_logsumexp, norm", function()
  local x = mf.tensor({{1, 2, 6}, {3, 4, 2}}, "float64")
  local m, v = mf.nn.moments(x, {1})
  T.eq(m, {2, 3, 4})
  T.eq(v, {1, 1, 4})
  local mk = mf.nn.moments(x, {2}, {keepdims = true})
  T.eq(mk.shape, {2, 1})
  T.ok(mf.test.gradcheck(function(t)
    local mm, vv = mf.nn.moments(t, {1})
    return mf.reduce_sum(mm * vv)
  end, {x}))
  T.eq(mf.nn.batch_normalization(x, m, v, mf.tensor({1, 1, 1}, "float64"),
                                 mf.tensor({2, 2, 2}, "float64"), 0),
       {{-1, -1, 3}, {3, 3, -1}}, 1e-12)
  local lse = math.log(math.exp(1) + math.exp(2) + math.exp(6))
  T.eq(mf.reduce_logsumexp(x, 2):totable()[1], lse, 1e-12)
  T.eq(mf.reduce_logsumexp(mf.tensor{1000, 1000}):item(), 1000 + math.log(2), 1e-3)
  T.eq(mf.reduce_logsumexp(x, {axis = 1, keepdims = true}).shape, {1, 3})
  T.ok(mf.test.gradcheck(function(t) return mf.reduce_logsumexp(t) end, {x}))
  T.eq(mf.norm(x):item(), math.sqrt(1 + 4 + 36 + 9 + 16 + 4), 1e-12)
  T.eq(mf.norm(x, {ord = 1, axis = 2}), {9, 9})
  T.eq(mf.norm(x, {ord = math.huge}):item(), 6)
  T.ok(mf.test.gradcheck(function(t) return mf.norm(t) end, {x}))
  T.raises(function() mf.norm(x, {ord = 3}) end, "norm: option 'ord' must be")
  T.raises(function() mf.nn.moments(x) end, "moments: expected the axes")
end)


T.test("asinh against PyTorch's torch.asinh", function()
  -- /usr/bin/python3: torch.asinh(torch.tensor([-2.0, 0.5, 3.0], dtype=torch.float64))
  T.eq(mf.asinh(mf.tensor({-2, 0.5, 3}, "float64")),
       {-1.4436354751788103, 0.48121182505960347, 1.8184464592320668}, 1e-15)
end)
T.done()
