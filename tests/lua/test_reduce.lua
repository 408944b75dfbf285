-- test_reduce.lua — reductions, arg-reductions and clipping from Lua:
-- every exposed function, its argument forms and its error messages.
local T = dofile("tests/lua/harness.lua")

local function m23() return mf.tensor{{1, 2, 3}, {4, 5, 6}} end

T.test("reduce_sum: all axes, positional axis, arrays, negative axes", function()
  local t = m23()
  T.eq(mf.reduce_sum(t), 21)
  T.eq(mf.reduce_sum(t, 1), {5, 7, 9})
  T.eq(mf.reduce_sum(t, 2), {6, 15})
  T.eq(mf.reduce_sum(t, -1), {6, 15})
  T.eq(mf.reduce_sum(t, {1, 2}), 21)
  T.eq(mf.reduce_sum(t, {axis = 2}), {6, 15})
  T.eq(mf.reduce_sum(t, {axis = {-2}}), {5, 7, 9})
  T.eq(mf.reduce_sum(t, {}), 21)
  T.eq(mf.reduce_sum(t, {axis = {}}), {{1, 2, 3}, {4, 5, 6}})
  T.eq(mf.reduce_sum(t).shape, {})
end)

T.test("keepdims: option, positional boolean, options as third argument", function()
  local t = m23()
  T.eq(mf.reduce_sum(t, {axis = 2, keepdims = true}).shape, {2, 1})
  T.eq(mf.reduce_sum(t, {keepdims = true}).shape, {1, 1})
  T.eq(mf.reduce_max(t, 1, true).shape, {1, 3})
  T.eq(mf.reduce_max(t, 1, {keepdims = true}), {{4, 5, 6}})
end)

T.test("reduce_mean, reduce_max, reduce_min, reduce_prod", function()
  local t = mf.tensor({{1, -2, 3}, {4, 5, -6}}, "float64")
  T.eq(mf.reduce_mean(t), 5 / 6, 1e-12)
  T.eq(mf.reduce_mean(t, 1), {2.5, 1.5, -1.5}, 1e-12)
  T.eq(mf.reduce_max(t, 2), {3, 5})
  T.eq(mf.reduce_min(t), -6)
  T.eq(mf.reduce_prod(t), 720)
  T.eq(mf.reduce_prod(t, 2), {-6, -120})
  T.eq(mf.reduce_max(t).dtype, "float64")
end)

T.test("integer reductions: exact, the mean divides as integers", function()
  local t = mf.tensor({{1, 2}, {-1, -2}}, "int32")
  T.eq(mf.reduce_sum(t, 2), {3, -3})
  T.eq(mf.reduce_mean(t, 2), {1, -1})
  T.eq(mf.reduce_mean(t).dtype, "int32")
  local big = mf.tensor({1000000, 1000000, 1000, 3}, "int64")
  T.eq(mf.reduce_prod(big), 3000000000000000)
end)

T.test("methods", function()
  local t = m23()
  T.eq(t:reduce_sum(2), {6, 15})
  T.eq(t:reduce_mean(), 3.5)
  T.eq(t:reduce_max(), 6)
  T.eq(t:reduce_min(1), {1, 2, 3})
  T.eq(t:reduce_prod({axis = 2, keepdims = true}), {{6}, {120}})
  T.eq(t:argmax(2), {3, 3})
  T.eq(t:argmin(), {1, 1, 1})
end)

T.test("strided input (a row view of a bigger tensor) and Lua tables", function()
  local t = mf.tensor{{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}
  T.eq(mf.reduce_sum(t[2], 1), {12, 14})
  T.eq(mf.reduce_sum(t, {1, 3}), {14, 22})
  T.eq(mf.reduce_sum({{1, 2}, {3, 4}}, 2), {3, 7})
  T.eq(mf.reduce_sum(5), 5)
end)

T.test("NaN propagates through reduce_max and reduce_min", function()
  local t = mf.tensor{{1, 0 / 0, 3}, {4, 5, 6}}
  local mx = mf.reduce_max(t, 2):totable()
  T.ok(mx[1] ~= mx[1], "expected NaN")
  T.eq(mx[2], 6)
end)

T.test("empty reductions: sum 0, prod 1, max is an error naming the axis", function()
  local e = mf.tensor{{}, {}}          -- shape (2, 0)
  T.eq(e.shape, {2, 0})
  T.eq(mf.reduce_sum(e, 2), {0, 0})
  T.eq(mf.reduce_prod(e, 2), {1, 1})
  T.eq(mf.reduce_max(e, 1).shape, {0})
  T.raises(function() mf.reduce_max(e, 2) end, "reduce_max: axis 2 has size 0")
  T.raises(function() mf.reduce_min(e) end, "reduce_min: axis 2 has size 0")
  T.raises(function() mf.argmax(e, 2) end, "argmax: axis 2 has size 0")
end)

T.test("reduction errors", function()
  local t = m23()
  T.raises(function() mf.reduce_sum(t, 3) end,
           "reduce_sum: axis 3 out of range for rank 2 (axes are 1-based: 1..2, or -2..-1)")
  T.raises(function() mf.reduce_sum(t, 0) end, "axes are 1-based")
  T.raises(function() mf.reduce_mean(t, {1, -2}) end, "reduce_mean: axis 1 is listed twice")
  T.raises(function() mf.reduce_sum(t, 1.5) end,
           "bad argument #2 to 'reduce_sum' (axis must be an integer, got 1.5)")
  T.raises(function() mf.reduce_sum(t, {"a"}) end,
           "reduce_sum: axis entry 1 must be an integer, got string")
  T.raises(function() mf.reduce_sum(t, "x") end, "bad argument #2 to 'reduce_sum' (axis must be "
           .. "an integer or an array of integers, got string)")
  T.raises(function() mf.reduce_sum(t, 1, 5) end,
           "bad argument #3 to 'reduce_sum' (keepdims must be a boolean, got number)")
  T.raises(function() mf.reduce_sum(t, {keepdims = 1}) end, "option 'keepdims' must be a boolean")
  T.raises(function() mf.reduce_sum() end, "bad argument #1")
  T.raises(function() mf.reduce_sum(mf.tensor{true, false}) end,
           "reduce_sum: expected a numeric dtype")
  T.raises(function() mf.reduce_sum(mf.tensor(1), 1) end, "reduce_sum: a scalar has no axes")
end)

T.test("argmax / argmin: 1-based int64 positions, default axis 1", function()
  local t = mf.tensor{{3, 7, 7}, {9, 1, 9}}
  local a = mf.argmax(t)
  T.eq(a.dtype, "int64")
  T.eq(a, {2, 1, 2})
  T.eq(mf.argmax(t, 2), {2, 1})       -- ties: the first wins
  T.eq(mf.argmax(t, -1), {2, 1})
  T.eq(mf.argmin(t, {axis = 2}), {1, 2})
  T.eq(mf.argmin(mf.tensor({5, -1, -7}, "int32")), 3)
  T.eq(mf.argmax(mf.tensor{1, 0 / 0, 0 / 0, 9}), 2) -- the first NaN wins
  T.eq(mf.argmin(mf.tensor{1, 0 / 0, -9}), 2)
end)

T.test("argmax errors", function()
  local t = m23()
  T.raises(function() mf.argmax(t, 3) end,
           "argmax: axis 3 out of range for rank 2 (axes are 1-based")
  T.raises(function() mf.argmin(t, "x") end,
           "bad argument #2 to 'argmin' (axis must be an integer, got string)")
  T.raises(function() mf.argmax(mf.tensor(4)) end, "argmax: a scalar has no axes")
end)

T.test("clip_by_value: numbers and tensors", function()
  local t = m23()
  T.eq(mf.clip_by_value(t, 2, 5), {{2, 2, 3}, {4, 5, 5}})
  T.eq(mf.clip_by_value(t, mf.tensor{0, 3, 0}, 4), {{1, 3, 3}, {4, 4, 4}})
  local i = mf.tensor({-5, 0, 5}, "int32")
  local c = mf.clip_by_value(i, -1, 1)
  T.eq(c.dtype, "int32")
  T.eq(c, {-1, 0, 1})
  T.eq(t:clip_by_value(1, 1), {{1, 1, 1}, {1, 1, 1}})
end)

T.test("clip_by_value errors", function()
  local t = m23()
  T.raises(function() mf.clip_by_value(t, 5, 2) end, "clip_by_value: lo (5) must be <= hi (2)")
  T.raises(function() mf.clip_by_value(t, 1) end,
           "bad argument #3 to 'clip_by_value' (mf.Tensor expected, got no value)")
  T.raises(function() mf.clip_by_value(t, mf.tensor{{{1}}, {{2}}}, 5) end,
           "clip_by_value: lo of shape (2,1,1) would broadcast t of shape (2,3)")
  T.raises(function() mf.clip_by_value(t, mf.tensor(1, "float64"), 5) end,
           "dtypes differ: float32 and float64")
end)

T.test("clip_by_norm: whole tensor, per axis, zero norm stays zero", function()
  local t = mf.tensor{{3, 4}, {0, 0}}
  T.eq(mf.clip_by_norm(t, 1), {{0.6, 0.8}, {0, 0}}, 1e-6)
  T.eq(mf.clip_by_norm(t, 10), {{3, 4}, {0, 0}}, 1e-6)
  T.eq(mf.clip_by_norm(t, 1, {axes = 2}), {{0.6, 0.8}, {0, 0}}, 1e-6)
  T.eq(mf.clip_by_norm(t, 1, {axes = {1}}), {{1, 1}, {0, 0}}, 1e-6)  -- per column
  T.eq(mf.clip_by_norm(mf.tensor{{3, 0}, {4, 1}}, 1, 1), {{0.6, 0}, {0.8, 1}}, 1e-6)
  T.eq(mf.clip_by_norm(mf.tensor{0, 0}, 1), {0, 0})
  T.eq(t:clip_by_norm(5), {{3, 4}, {0, 0}}, 1e-6)
end)

T.test("clip_by_norm errors", function()
  local t = mf.tensor{3, 4}
  T.raises(function() mf.clip_by_norm(t, 0) end, "clip_by_norm: clip_norm must be > 0, got 0")
  T.raises(function() mf.clip_by_norm(mf.tensor({1, 2}, "int32"), 1) end,
           "clip_by_norm: expected a float tensor")
  T.raises(function() mf.clip_by_norm(t, 1, {axes = 2}) end,
           "clip_by_norm: axis 2 out of range for rank 1")
  T.raises(function() mf.clip_by_norm(t) end,
           "bad argument #2 to 'clip_by_norm' (mf.Tensor expected, got no value)")
  T.raises(function() mf.clip_by_norm(t, 1, "x") end,
           "bad argument #3 to 'clip_by_norm' (axes must be an integer or an array of integers")
  T.raises(function() t:clip_by_norm(1, 1, 2) end, "bad argument #4 to 'clip_by_norm' (no value")
end)

T.test("global_norm: skips nil entries (holes and n)", function()
  local a, b = mf.tensor{3, 4}, mf.tensor{12}
  T.eq(mf.global_norm{a, b}, 13, 1e-5)
  T.eq(mf.global_norm{a, nil, b}, 13, 1e-5)
  T.eq(mf.global_norm({nil, a, n = 3}), 5, 1e-6)
  T.eq(mf.global_norm({}), 0)
  T.eq(mf.global_norm{a}.shape, {})
end)

T.test("global_norm errors", function()
  T.raises(function() mf.global_norm(mf.tensor{1}) end,
           "bad argument #1 to 'global_norm' (a list of tensors expected, got userdata)")
  T.raises(function() mf.global_norm{mf.tensor{1}, "x"} end,
           "global_norm: list entry 2 must be a mf.Tensor or nil, got string")
  T.raises(function() mf.global_norm{mf.tensor{1}, mf.tensor({1}, "float64")} end,
           "global_norm: entries 1 and 2 have different dtypes: float32 and float64")
  T.raises(function() mf.global_norm{mf.tensor({1}, "int32")} end,
           "global_norm: expected float tensors, entry 1 is int32")
end)

T.test("clip_by_global_norm: TensorFlow's formula, nil passes through", function()
  local a, b = mf.tensor{3, 4}, mf.tensor{12}
  local out, norm = mf.clip_by_global_norm({a, nil, b, n = 3}, 6.5)
  T.eq(out[1], {1.5, 2}, 1e-6)
  T.eq(out[2], nil)
  T.eq(out[3], {6}, 1e-6)
  T.eq(out.n, 3)
  T.eq(norm, 13, 1e-5)
  local same = mf.clip_by_global_norm({a, b}, 100)
  T.eq(same[1], {3, 4}, 1e-5)
  local used, n2 = mf.clip_by_global_norm({a}, 6.5, {use_norm = 100})
  T.eq(used[1], {3 * 0.065, 4 * 0.065}, 1e-6)
  T.eq(n2, 100)
end)

T.test("clip_by_global_norm: a non-finite norm makes every value NaN", function()
  local out, norm = mf.clip_by_global_norm({mf.tensor{1 / 0, 1}, mf.tensor{2}}, 1)
  T.ok(norm:item() == 1 / 0)
  local v = out[2]:totable()
  T.ok(v[1] ~= v[1], "expected NaN")
end)

T.test("clip_by_global_norm errors", function()
  local a = mf.tensor{3, 4}
  T.raises(function() mf.clip_by_global_norm({a}, -1) end,
           "clip_by_global_norm: clip_norm must be > 0, got -1")
  T.raises(function() mf.clip_by_global_norm({a}, a) end,
           "clip_by_global_norm: clip_norm must be a scalar, got rank 1")
  T.raises(function() mf.clip_by_global_norm({a}, 1, 5) end, "options table {use_norm =}")
  T.raises(function() mf.clip_by_global_norm(a, 1) end,
           "(a list of tensors expected, got userdata)")
end)

T.test("the seed recipe: clip each gradient between compute and apply", function()
  local gv = {{mf.tensor{30, 40}, "w"}, {mf.tensor{1, 0}, "b"}}
  for i, p in ipairs(gv) do gv[i] = {mf.clip_by_norm(p[1], 5), p[2]} end
  T.eq(gv[1][1], {3, 4}, 1e-5)
  T.eq(gv[2][1], {1, 0})
end)

T.done()
