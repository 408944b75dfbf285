-- test_rounding_specials.lua — sign, floor, ceil and round of the special
-- values (NaN, +-inf, +-0, subnormals, the largest floats), in the
-- vectorised body of the loop (elements 1-32) and its scalar tail (33-40),
-- float32 and float64: the vectorised selects (sign) and roundings give
-- what the scalar definitions give, as NumPy (sign(-0) is +0 there too).
local T = dofile("tests/lua/harness.lua")
local nan, inf = 0 / 0, math.huge

local SPECIALS = {nan, inf, -inf, -0.0, 0.0, 2.5, -2.5, 1e-40, -1e-40, 3e38}
local WANT = {
  sign = {nan, 1, -1, 0.0, 0.0, 1, -1, 1, -1, 1},
  floor = {nan, inf, -inf, -0.0, 0.0, 2, -3, 0.0, -1, "x"},
  ceil = {nan, inf, -inf, -0.0, 0.0, 3, -2, 1, -0.0, "x"},
  round = {nan, inf, -inf, -0.0, 0.0, 2, -2, 0.0, -0.0, "x"},
}

-- the same value, NaN equal to NaN and -0 told from +0
local function same(a, b)
  if a ~= a then return b ~= b end
  return a == b and (a ~= 0 or 1 / a == 1 / b)
end

for _, dt in ipairs{"float32", "float64"} do
  T.test(dt .. ": sign, floor, ceil, round of specials, vector body and tail", function()
    local xs = {}
    for i = 1, 40 do xs[i] = SPECIALS[(i - 1) % #SPECIALS + 1] end
    local x = mf.tensor(xs, dt)
    local stored = x:totable()  -- 1e-40 and 3e38 as this dtype holds them
    for name, want in pairs(WANT) do
      local got = mf[name](x):totable()
      for i = 1, 40 do
        local k = (i - 1) % #SPECIALS + 1
        local w = want[k] == "x" and stored[i] or want[k]
        T.ok(same(got[i], w), string.format("%s %s(%s) at %d: got %s, want %s", dt, name,
             tostring(xs[i]), i, tostring(got[i]), tostring(w)))
      end
    end
  end)
end

T.done()
