-- test_activations.lua — the ops Gelu (exact and tanh form), Silu, Erfc, Acosh and
-- SquaredDifference: values, first and second derivatives against PyTorch 1.13 in float64
-- and against the documented formulas at 40 digits (mpmath), both printed by
-- tests/lua/data/gen_activations_torch.py into tests/lua/data/activations_torch.lua;
-- float32 (the float-lane kernels) within a few ulp of the exact values; special values;
-- layers by name; graph mode; errors naming the op.
local T = dofile("tests/lua/harness.lua")
local ref = dofile("tests/lua/data/activations_torch.lua")

-- |got - want| <= rel |want| + abs, element by element
local function near(got, want, rel, abs, what)
  if type(got) == "userdata" then got = got:totable() end
  for i = 1, #want do
    local g, w = got[i], want[i]
    if type(w) == "table" then
      near(g, w, rel, abs, what)
    elseif not (math.abs(g - w) <= rel * math.abs(w) + abs) then
      error(string.format("%s: element %d: expected %.17g, got %.17g", what, i, w, g), 2)
    end
  end
end

local F32_REL = 6e-7 -- 4 ulp of the bound, and the float32 rounding of the input
local function act(name, x)
  if name == "gelu_tanh" then return mf.nn.gelu(x, {approximate = true}) end
  return mf.nn[name](x)
end

T.test("gelu, gelu tanh form, silu: float64 against the formulas at 40 digits", function()
  local x = mf.tensor(ref.x, "float64")
  for _, name in ipairs({"gelu", "gelu_tanh", "silu"}) do
    near(act(name, x), ref[name .. "_exact"], 4e-14, 0, name)
    -- torch's float64 formula cancels for very negative x; elsewhere it agrees
    near(act(name, x), ref[name].y, 1e-12, 1e-12, name .. " vs torch")
  end
end)

T.test("float32 kernels within a few ulp of the exact values, tiny results too", function()
  local x = mf.tensor(ref.x, "float32")
  for _, name in ipairs({"gelu", "gelu_tanh", "silu"}) do
    near(act(name, x), ref[name .. "_exact"], F32_REL, 1e-45, name)
  end
  local g = mf.nn.gelu(mf.tensor({-12}, "float32")):totable()[1]
  T.ok(g < 0 and g > -3e-32, "gelu(-12) keeps its digits in float32: " .. g)
end)

T.test("first and second derivatives against torch autograd", function()
  local w, w2 = mf.tensor(ref.w, "float64"), mf.tensor(ref.w2, "float64")
  for _, name in ipairs({"gelu", "gelu_tanh", "silu"}) do
    for _, dt in ipairs({"float64", "float32"}) do
      local x = mf.tensor(ref.x, dt)
      local wd, w2d = mf.cast(w, dt), mf.cast(w2, dt)
      local g = mf.grad(function(t) return mf.reduce_sum(act(name, t) * wd) end)
      local h = mf.grad(function(t) return mf.reduce_sum(g(t) * w2d) end)
      local rel, abs = 1e-12, 1e-14
      if dt == "float32" then rel, abs = 2e-6, 2e-7 end
      near(g(x), ref[name].grad, rel, abs, name .. " gradient " .. dt)
      near(h(x), ref[name].grad2, rel * 10, abs * 10, name .. " second derivative " .. dt)
    end
  end
end)

T.test("gradcheck in float64, and the gradient is one op", function()
  local x = mf.tensor({-2.5, -0.7, 0.2, 1.3}, "float64")
  T.ok(mf.test.gradcheck(function(t) return mf.reduce_sum(mf.nn.gelu(t) * t) end, {x}))
  T.ok(mf.test.gradcheck(function(t) return mf.reduce_sum(mf.nn.silu(t) * t) end, {x}))
  T.ok(mf.test.gradcheck(function(t)
    return mf.reduce_sum(mf.nn.gelu(t, {approximate = true}) * t) end, {x}))
  local tape = mf.GradientTape()
  tape:watch(x)
  local y = mf.nn.gelu(x)
  local listing = tostring(tape)
  T.ok(listing:find("Gelu"), listing)
end)

T.test("erfc and acosh against torch and the exact erfc", function()
  local x = mf.tensor(ref.x, "float64")
  near(mf.erfc(x), ref.erfc, 1e-15, 1e-300, "erfc")
  near(mf.erfc(x), ref.erfc_exact, 1e-15, 1e-300, "erfc exact")
  near(mf.erfc(mf.cast(x, "float32")), ref.erfc_exact, F32_REL, 1e-45, "erfc float32")
  local a = mf.tensor(ref.acosh_x, "float64")
  near(mf.acosh(a), ref.acosh, 1e-15, 0, "acosh")
  -- float32: the inputs a float holds (1.0000001 rounds to 1 + 2^-23)
  local a32, want32 = {}, {}
  for i, v in ipairs(ref.acosh_x) do
    if i ~= 2 then a32[#a32 + 1], want32[#want32 + 1] = v, ref.acosh[i] end
  end
  near(mf.acosh(mf.tensor(a32, "float32")), want32, 2e-7, 0, "acosh float32")
  T.ok(mf.test.gradcheck(function(t) return mf.reduce_sum(mf.erfc(t)) end,
                         {mf.tensor({-1.5, 0.2, 2}, "float64")}))
  T.ok(mf.test.gradcheck(function(t) return mf.reduce_sum(mf.acosh(t)) end,
                         {mf.tensor({1.5, 3, 20}, "float64")}))
end)

T.test("squared_difference: values and broadcast gradients against torch", function()
  local x, y = mf.tensor(ref.sd_x, "float64"), mf.tensor(ref.sd_y, "float64")
  local w = mf.tensor(ref.sd_w, "float64")
  T.eq(mf.squared_difference(x, y), ref.sd, 0)
  local tape = mf.GradientTape()
  tape:watch(x); tape:watch(y)
  local loss = mf.reduce_sum(mf.squared_difference(x, y) * w)
  local gx, gy = table.unpack(tape:gradient(loss, {x, y}))
  T.eq(gx, ref.sd_gx, 1e-15)
  T.eq(gy, ref.sd_gy, 1e-15)
  T.eq(mf.squared_difference(mf.tensor({7, -3}, "int32"), 2), {25, 25}, 0)
end)

T.test("special values: inf, -inf (the limit -0), NaN, signed zero", function()
  for _, dt in ipairs({"float32", "float64"}) do
    local x = mf.tensor({math.huge, -math.huge, 0 / 0, -0.0}, dt)
    for _, name in ipairs({"gelu", "gelu_tanh", "silu"}) do
      local v = act(name, x):totable()
      T.ok(v[1] == math.huge, name .. "(inf) " .. dt)
      T.ok(v[2] == 0 and 1 / v[2] < 0, name .. "(-inf) is -0 " .. dt .. ": " .. v[2])
      T.ok(v[3] ~= v[3], name .. "(nan) " .. dt)
      T.ok(v[4] == 0 and 1 / v[4] < 0, name .. "(-0) is -0 " .. dt)
    end
    T.eq(mf.erfc(mf.tensor({math.huge, -math.huge}, dt)), {0, 2}, 0)
    local ac = mf.acosh(mf.tensor({0.5, math.huge}, dt)):totable()
    T.ok(ac[1] ~= ac[1] and ac[2] == math.huge, "acosh(0.5) is NaN, acosh(inf) inf")
  end
end)

T.test("layers take them by name; activations.lua keeps no copy", function()
  local d = mf.layers.Dense(3, {activation = "gelu"})
  local x = mf.tensor({{1, -2}}, "float32")
  local y = d(x)
  T.eq(y, mf.nn.gelu(d.kernel:value() and mf.matmul(x, d.kernel) + d.bias), 1e-7)
  local s = mf.layers.Dense(2, {activation = "swish"})
  T.eq(s(x), mf.nn.silu(mf.matmul(x, s.kernel) + s.bias), 1e-7)
end)

T.test("graph mode with an unknown batch dim, gradients included", function()
  local g = mf.Graph()
  local p, out, dx
  g:as_default(function()
    p = mf.placeholder("float64", {-1, 3})
    out = mf.nn.gelu(p, {approximate = true}) + mf.nn.silu(p)
    dx = mf.gradients(mf.reduce_sum(out), {p})[1]
  end)
  local x = mf.tensor({{-1, 0.5, 2}, {3, -4, 0}}, "float64")
  local sess = mf.Session(g)
  local o, d = table.unpack(sess:run({out, dx}, {[p] = x}))
  T.eq(o, mf.nn.gelu(x, {approximate = true}) + mf.nn.silu(x), 1e-15)
  local tape = mf.GradientTape()
  tape:watch(x)
  local l = mf.reduce_sum(mf.nn.gelu(x, {approximate = true}) + mf.nn.silu(x))
  T.eq(d, tape:gradient(l, x), 1e-15)
end)

T.test("errors name the op", function()
  T.raises(mf.nn.gelu, "gelu", mf.tensor({1}, "int32"))
  T.raises(mf.nn.gelu, "approximate", mf.tensor{1}, {approximate = 1})
  T.raises(mf.nn.silu, "silu", mf.tensor({1}, "int32"))
  T.raises(mf.erfc, "erfc", mf.tensor({1}, "int64"))
  T.raises(mf.acosh, "acosh", mf.tensor({1}, "int64"))
  T.raises(mf.squared_difference, "squared_difference", mf.tensor{1, 2}, mf.tensor{1, 2, 3})
end)

T.done()
