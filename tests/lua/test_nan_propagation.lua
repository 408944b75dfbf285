-- test_nan_propagation.lua — NaN goes through sign, relu and max_pool as in
-- PyTorch and TensorFlow (issue #13, item 8), whatever its position in a
-- pooling window; MaxPool's gradient goes to the NaN it pooled.
local T = dofile("tests/lua/harness.lua")
local nan = 0 / 0
local function isnan(x) return x ~= x end

T.test("sign(NaN) is NaN; other values keep their sign", function()
  for _, dt in ipairs{"float32", "float64"} do
    local r = mf.sign(mf.tensor({nan, 2, -3, 0}, dt)):totable()
    T.ok(isnan(r[1]), dt .. ": sign(nan) = " .. tostring(r[1]))
    T.eq({r[2], r[3], r[4]}, {1, -1, 0})
  end
  T.eq(mf.sign(mf.tensor({-4, 0, 5}, "int32")), {-1, 0, 1})
end)

T.test("relu(NaN) is NaN (the split kernel and a strided view)", function()
  for _, dt in ipairs{"float32", "float64"} do
    local r = mf.nn.relu(mf.tensor({nan, 1, -1}, dt)):totable()
    T.ok(isnan(r[1]), dt .. ": relu(nan) = " .. tostring(r[1]))
    T.eq({r[2], r[3]}, {1, 0})
    local big = mf.fill({100000}, nan, dt)
    T.ok(isnan(mf.reduce_sum(mf.nn.relu(big)):item()), "large relu of NaN")
  end
  local m = mf.tensor{{nan, -1}, {2, -3}}
  local r = mf.nn.relu(mf.transpose(m)):totable()   -- a non-contiguous input
  T.ok(isnan(r[1][1]) and r[1][2] == 2 and r[2][1] == 0, "transposed relu")
end)

T.test("max_pool of a window with a NaN anywhere is NaN", function()
  for pos = 1, 4 do
    local v = {1, 2, 3, 4}
    v[pos] = nan
    local x = mf.tensor{{{{v[1]}, {v[2]}}, {{v[3]}, {v[4]}}}}
    local y = mf.nn.max_pool(x, 2, 2, "VALID"):totable()
    T.ok(isnan(y[1][1][1][1]), "NaN at position " .. pos .. " gave " .. tostring(y[1][1][1][1]))
  end
  -- overlapping windows (the general kernel), SAME padding
  local x = mf.tensor{{{{1}, {nan}, {3}}, {{4}, {5}, {6}}, {{7}, {8}, {9}}}}
  local y = mf.nn.max_pool(x, 2, 1, "SAME"):totable()
  T.ok(isnan(y[1][1][1][1]) and isnan(y[1][1][2][1]), "windows over the NaN")
  T.eq(y[1][2][2][1], 9)
end)

T.test("MaxPool's gradient goes to the NaN it pooled (tiled and overlapping windows)", function()
  local x = mf.tensor{{{{1}, {2}}, {{nan}, {4}}}}
  local tape = mf.GradientTape()
  tape:watch(x)
  local g = tape:gradient(mf.reduce_sum(mf.nn.max_pool(x, 2, 2, "VALID")), x):totable()
  T.eq({g[1][1][1][1], g[1][1][2][1], g[1][2][1][1], g[1][2][2][1]}, {0, 0, 1, 0})
  local x2 = mf.tensor{{{{1}, {2}, {0}}, {{nan}, {4}, {0}}, {{0}, {0}, {0}}}}
  local tape2 = mf.GradientTape()
  tape2:watch(x2)
  local g2 = tape2:gradient(mf.reduce_sum(mf.nn.max_pool(x2, 2, 1, "VALID")), x2):totable()
  T.eq(g2[1][2][1], {2}, nil, "two windows pool the NaN")   -- windows (1,1) and (2,1)
end)

T.done()
