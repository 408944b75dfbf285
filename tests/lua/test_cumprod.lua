-- test_cumprod.lua — mf.cumprod and mf.cumsum's exclusive option: values
-- against PyTorch (torch.cumprod, float64, printed by /usr/bin/python3) and
-- TensorFlow's documented examples for exclusive/reverse, gradients
-- (exact with zeros, as torch's), graph mode with an unknown batch dim,
-- and errors naming the function.
local T = dofile("tests/lua/harness.lua")

local t = mf.tensor({{1, 2, 3}, {4, 5, 6}}, "float64")

T.test("values against torch.cumprod along each axis", function()
  T.eq(mf.cumprod(t), {{1, 2, 3}, {4, 10, 18}})
  T.eq(t:cumprod(2), {{1, 2, 6}, {4, 20, 120}})
  T.eq(mf.cumprod(t, -1), {{1, 2, 6}, {4, 20, 120}})
  T.eq(mf.cumprod(mf.transpose(t)), {{1, 4}, {2, 20}, {6, 120}})  -- a strided view
  T.eq(mf.cumprod(mf.tensor({2, 3, 4}, "int64")), {2, 6, 24})
  T.eq(mf.cumprod(mf.tensor({2, 3, 4}, "float32")), {2, 6, 24})
end)

T.test("exclusive and reverse (TensorFlow's documented examples)", function()
  local a = mf.tensor{2, 3, 4}          -- tf.math.cumprod([a, b, c], ...)
  T.eq(mf.cumprod(a, {exclusive = true}), {1, 2, 6})       -- [1, a, a * b]
  T.eq(mf.cumprod(a, {reverse = true}), {24, 12, 4})       -- [a * b * c, b * c, c]
  T.eq(mf.cumprod(a, {exclusive = true, reverse = true}), {12, 4, 1})  -- [b * c, c, 1]
  T.eq(mf.cumsum(a, {exclusive = true}), {0, 2, 5})        -- [0, a, a + b]
  T.eq(mf.cumsum(a, {exclusive = true, reverse = true}), {7, 4, 0})  -- [b + c, c, 0]
end)

T.test("gradients: torch's values, with and without zeros", function()
  local z = mf.tensor({2, -1, 3, 0.5}, "float64")
  local wt = mf.tensor({1, 2, 3, 4}, "float64")
  local g = mf.grad(function(v) return mf.reduce_sum(mf.cumprod(v) * wt) end)(z)
  T.eq(g, {-16.0, 34.0, -10.0, -24.0}, 1e-12)
  -- with zeros: exact, as torch (TensorFlow's div_no_nan rule would give 0 at each zero)
  local z0 = mf.tensor({2, 0, 3, 4}, "float64")
  local g0 = mf.grad(function(v) return mf.reduce_sum(mf.cumprod(v)) end)(z0)
  T.eq(g0, {1, 32, 0, 0}, 1e-12)
  local w5 = mf.tensor({1, 2, 3, 4, 5}, "float64")
  local cases = {  -- data, then torch's gradients for {}, reverse, exclusive, both
    {{2, 0, 3, 0, 5}, {1, 22, 0, 0, 0}, {0, 0, 0, 65, 5}, {2, 30, 0, 0, 0}, {0, 0, 0, 45, 4}},
    {{0, 2, 3, 4, 0.5}, {179, 0, 0, 0, 0}, {12, 12, 14, 12.5, 105}, {152, 0, 0, 0, 0},
     {0, 6, 8, 7.5, 64}},
    {{1.5, 2, 0, -1, 3}, {5, 3, -48, 0, 0}, {0, 0, -30, 12, 1}, {8, 4.5, -3, 0, 0},
     {0, 0, -12, 9, 1}},
  }
  local opts = {{}, {reverse = true}, {exclusive = true}, {exclusive = true, reverse = true}}
  for _, case in ipairs(cases) do
    for k, opt in ipairs(opts) do
      local gz = mf.grad(function(v) return mf.reduce_sum(mf.cumprod(v, 1, opt) * w5) end)(
        mf.tensor(case[1], "float64"))
      T.eq(gz, case[k + 1], 1e-12)
    end
  end
  for _, opt in ipairs{{}, {exclusive = true}, {reverse = true},
                       {exclusive = true, reverse = true}} do
    T.ok(mf.test.gradcheck(function(v) return mf.reduce_sum(mf.cumprod(v, 2, opt) * t) end,
                           {mf.tensor({{0.5, -1.2, 2}, {1.5, 0.7, -0.9}}, "float64")}))
  end
end)

T.test("graph mode with an unknown batch dim", function()
  local g = mf.Graph()
  local p, y, d
  g:as_default(function()
    p = mf.placeholder("float64", {-1, 3})
    y = mf.cumprod(p, 2, {exclusive = true})
    d = mf.gradients(mf.reduce_sum(y * t), {p})[1]
  end)
  local out, gd = table.unpack(mf.Session(g):run({y, d}, {[p] = t}))
  T.eq(out, {{1, 1, 2}, {1, 4, 20}})
  local x = mf.tensor({{1, 2, 3}, {4, 5, 6}}, "float64")
  local tape = mf.GradientTape()
  tape:watch(x)
  local want = tape:gradient(mf.reduce_sum(mf.cumprod(x, 2, {exclusive = true}) * t), x)
  T.eq(gd, want, 1e-12)
end)

T.test("errors name cumprod", function()
  T.raises(mf.cumprod, "cumprod: axis 3 out of range for rank 2", t, 3)
  T.raises(mf.cumprod, "cumprod: unknown option 'exclusiv' (known: axis, exclusive, reverse)",
           t, {exclusiv = true})
  T.raises(mf.cumprod, "bad argument #3 to 'cumprod' (no value expected", t, 1, 2)
  T.raises(mf.cumprod, "cumprod: option 'exclusive' must be a boolean, got number", t,
           {exclusive = 1})
  T.raises(mf.cumprod, "cumprod: expected a numeric dtype", mf.tensor{true, false})
end)

T.done()
