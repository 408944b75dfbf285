-- test_atan2.lua — mf.atan2(y, x): values and gradients against PyTorch
-- (torch.atan2 on the same data, float64, printed by /usr/bin/python3),
-- broadcasting, the method form, graph mode with an unknown batch dim, and
-- errors naming atan2.
local T = dofile("tests/lua/harness.lua")

local y = mf.tensor({{1, -1, 0}, {0.5, -2, 3}}, "float64")
local x = mf.tensor({-2, 0, 1.5}, "float64")
local w = mf.tensor({{1, 2, 3}, {4, 5, 6}}, "float64")

T.test("values against torch.atan2 (broadcasting x over rows)", function()
  local want = {{2.677945044588987, -1.5707963267948966, 0.0},
                {2.896613990462929, -1.5707963267948966, 1.1071487177940904}}
  T.eq(mf.atan2(y, x), want, 1e-15)
  T.eq(y:atan2(x), want, 1e-15)
  T.eq(mf.atan2(mf.tensor{1, -1}, mf.tensor{0, 0}), {math.pi / 2, -math.pi / 2}, 1e-6)
  T.eq(mf.atan2(mf.tensor{0}, mf.tensor{-1}), {math.pi}, 1e-6)
end)

T.test("gradients against torch (summed back over the broadcast rows)", function()
  local tape = mf.GradientTape()
  tape:watch(y); tape:watch(x)
  local loss = mf.reduce_sum(mf.atan2(y, x) * w)
  local gy, gx = table.unpack(tape:gradient(loss, {y, x}))
  T.eq(gy, {{-0.4, 0.0, 2.0}, {-1.8823529411764706, 0.0, 0.8}}, 1e-12)
  T.eq(gx, {-0.6705882352941177, 4.5, -1.6}, 1e-12)
  T.ok(mf.test.gradcheck(function(a, b) return mf.reduce_sum(mf.atan2(a, b) * w) end,
                         {y, mf.tensor({-2, 0.5, 1.5}, "float64")}))
end)

T.test("graph mode with an unknown batch dim", function()
  local g = mf.Graph()
  local py, px, gy, sym
  g:as_default(function()
    py = mf.placeholder("float64", {-1, 3})
    px = mf.placeholder("float64", {3})
    sym = mf.atan2(py, px)
    gy = mf.gradients(mf.reduce_sum(sym * w), {py, px})
  end)
  local sess = mf.Session(g)
  local out, d = table.unpack(sess:run({sym, gy[2]}, {[py] = y, [px] = x}))
  T.eq(out, mf.atan2(y, x), 1e-15)
  T.eq(d, {-0.6705882352941177, 4.5, -1.6}, 1e-12)
end)

T.test("errors name atan2", function()
  T.raises(mf.atan2, "atan2", mf.tensor{1, 2}, mf.tensor{1, 2, 3})
  T.raises(mf.atan2, "atan2: expected a float dtype", mf.tensor({1}, "int32"),
           mf.tensor({1}, "int32"))
  T.raises(mf.atan2, "bad argument #3 to 'atan2'", y, x, 1)
  T.raises(mf.atan2, "bad argument #2 to 'atan2'", y)
end)

T.done()
