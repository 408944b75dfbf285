-- test_compare.lua — comparisons, logic, is_nan/is_inf/is_finite, where and cast
-- from Lua: functions and methods, Lua numbers beside tensors, errors.
local T = dofile("tests/lua/harness.lua")

local a = mf.tensor({1, 2, 3, -4})
local b = mf.tensor({2, 2, -3, -4})

T.test("comparisons give bool tensors", function()
  T.eq(mf.equal(a, b), {false, true, false, true})
  T.eq(mf.not_equal(a, b), {true, false, true, false})
  T.eq(mf.less(a, b), {true, false, false, false})
  T.eq(mf.less_equal(a, b), {true, true, false, true})
  T.eq(mf.greater(a, b), {false, false, true, false})
  T.eq(mf.greater_equal(a, b), {false, true, true, true})
  T.eq(mf.equal(a, b).dtype, "bool")
end)

T.test("comparisons as methods and with Lua numbers on either side", function()
  T.eq(a:greater(1), {false, true, true, false})
  T.eq(mf.less(2, a), {false, false, true, false})
  local i = mf.tensor({1, 2, 3}, "int64")
  T.eq(i:equal(2), {false, true, false})
  T.eq(mf.greater_equal(i, 2).dtype, "bool")
end)

T.test("comparisons broadcast", function()
  local col = mf.tensor({{1}, {2}, {3}}, "int32")
  local row = mf.tensor({2, 1}, "int32")
  local r = mf.greater(col, row)
  T.eq(r.shape, {3, 2})
  T.eq(r, {{false, false}, {false, true}, {true, true}})
end)

T.test("bool equality and logic", function()
  local p = mf.tensor({true, false, true, false})
  local q = mf.tensor({true, true, false, false})
  T.eq(mf.equal(p, q), {true, false, false, true})
  T.eq(mf.logical_and(p, q), {true, false, false, false})
  T.eq(mf.logical_or(p, q), {true, true, true, false})
  T.eq(mf.logical_not(p), {false, true, false, true})
  T.eq(p:logical_and(true), {true, false, true, false})
  T.eq(mf.logical_not(mf.less(a, 2)), {false, true, true, false})
end)

T.test("is_nan, is_inf, is_finite", function()
  local x = mf.tensor({1, 0 / 0, 1 / 0, -1 / 0}, "float64")
  T.eq(mf.is_nan(x), {false, true, false, false})
  T.eq(mf.is_inf(x), {false, false, true, true})
  T.eq(x:is_finite(), {true, false, false, false})
  T.eq(mf.equal(x, x), {true, false, true, true})
end)

T.test("where selects with broadcasting and Lua numbers", function()
  local cond = mf.tensor({true, false, true})
  T.eq(mf.where(cond, mf.tensor({1, 2, 3}), mf.tensor({10, 20, 30})), {1, 20, 3})
  T.eq(mf.where(cond, 0, mf.tensor({10, 20, 30})), {0, 20, 0})
  local r = mf.where(mf.greater(a, 0), a, 0)
  T.eq(r, {1, 2, 3, 0})
  T.eq(r.dtype, "float32")
  local i = mf.where(cond, mf.tensor({1, 2, 3}, "int64"), -1)
  T.eq(i.dtype, "int64")
  T.eq(i, {1, -1, 3})
  local m = mf.where(mf.tensor({{true}, {false}}), mf.tensor({1, 2}), 9)
  T.eq(m.shape, {2, 2})
  T.eq(m, {{1, 2}, {9, 9}})
  T.eq(cond:where(1, 2), {1, 2, 1})
  T.eq(mf.where({true, false}, 1, 2), {1, 2})
end)

T.test("cast between all dtypes", function()
  local x = mf.tensor({2.7, -2.7, 0, 0.5})
  T.eq(mf.cast(x, "int32"), {2, -2, 0, 0})
  T.eq(mf.cast(x, "int64"):totable(), {2, -2, 0, 0})
  T.eq(mf.cast(x, "bool"), {true, true, false, true})
  T.eq(mf.cast(x, "float64"), {2.7, -2.7, 0, 0.5}, 1e-6)
  T.eq(x:cast("int32").dtype, "int32")
  local bools = mf.tensor({true, false})
  T.eq(mf.cast(bools, "float32"), {1, 0})
  T.eq(mf.cast(bools, "int64"), {1, 0})
  T.eq(mf.cast(mf.tensor({3, 0}, "int32"), "bool"), {true, false})
  T.eq(mf.cast(mf.tensor({5, -1}, "int64"), "float64"), {5, -1})
  T.eq(mf.cast(3.9, "int32"):item(), 3)
  T.eq(mf.cast(mf.greater(a, 0), "float32"), {1, 1, 1, 0})
end)

T.test("cast of a strided view", function()
  local m = mf.tensor({{1.5, 2.5}, {3.5, 4.5}})
  local col = m[1]
  T.eq(mf.cast(col, "int32"), {1, 2})
  if mf.transpose then
    T.eq(mf.cast(mf.transpose(m), "int32"), {{1, 3}, {2, 4}})
  end
end)

T.test("errors", function()
  local i = mf.tensor({1, 2}, "int32")
  local f = mf.tensor({1, 2})
  T.raises(function() return mf.equal(f, i) end, "equal: dtypes differ: float32 and int32")
  T.raises(function() return mf.less(f, mf.tensor({1, 2, 3})) end,
           "less: shapes (2,) and (3,) do not broadcast")
  T.raises(function() return mf.greater(mf.tensor({true}), mf.tensor({false})) end,
           "greater: expected a numeric dtype")
  T.raises(function() return mf.logical_and(f, f) end,
           "logical_and: expected bool inputs, got float32")
  T.raises(function() return mf.logical_not(i) end, "logical_not: expected bool inputs, got int32")
  T.raises(function() return mf.is_nan(i) end, "is_nan: expected a float dtype")
  T.raises(function() return mf.equal(f) end, "bad argument #2 to 'equal'")
  T.raises(function() return mf.where(f, f, f) end, "where: condition must be bool, got float32")
  T.raises(function() return mf.where(mf.tensor({true, false}), f, i) end,
           "where: dtypes differ: float32 and int32")
  T.raises(function() return mf.where(mf.tensor({true, false}), mf.tensor({1, 2, 3}), f) end,
           "where: shapes of condition (2,), x (3,) and y (2,) do not broadcast")
  T.raises(function() return mf.where(mf.tensor({true})) end,
           "bad argument #2 to 'where' (mf.Tensor expected, got no value)")
  T.raises(function() return mf.where(nil, 1, 2) end, "bad argument #1 to 'where'")
  T.raises(function() return mf.cast(f) end,
           "bad argument #2 to 'cast' (dtype expected: a dtype name")
  T.raises(function() return mf.cast(f, "complex64") end,
           "(dtype must be a dtype name (float32, float64, int32, int64, bool, uint8, float16 or bfloat16), got complex64)")
  T.raises(function() return mf.cast(nil, "int32") end, "bad argument #1 to 'cast'")
end)

T.done()
