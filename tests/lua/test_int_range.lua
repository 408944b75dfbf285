-- test_int_range.lua — numbers that do not fit an integer dtype are errors
-- (as in PyTorch and NumPy), never a silently wrapped or undefined value;
-- mf.cast saturates, as documented.
local T = dofile("tests/lua/harness.lua")

T.test("table and scalar data out of range of int32 / int64", function()
  T.raises(mf.tensor, "tensor: 3000000000.0 does not fit int32", 3e9, "int32")
  local _, e = pcall(mf.tensor, 3e9, "int32")
  T.ok(not tostring(e):find("at data", 1, true), e)
  T.raises(mf.tensor, "does not fit int32 at data[2]", {1, 2^31}, "int32")
  T.raises(mf.tensor, "does not fit int32 at data[1]", {-2^31 - 1}, "int32")
  T.raises(mf.tensor, "does not fit int64 at data[1]", {2^63}, "int64")
  T.raises(mf.tensor, "does not fit int32 at data[1]", {0 / 0}, "int32")
  T.raises(mf.tensor, "does not fit int32 at data[1][2]", {{1, 1 << 40}}, "int32")
end)

T.test("the limits themselves fit", function()
  local t = mf.tensor({-2147483648, 2147483647}, "int32")
  T.eq(t[1], -2147483648)
  T.eq(t[2], 2147483647)
  local u = mf.tensor({math.mininteger, math.maxinteger}, "int64")
  T.eq(u[1], math.mininteger)
  T.eq(u[2], math.maxinteger)
  T.eq(mf.tensor(2.9, "int32"):item(), 2)   -- a fraction is dropped, as C and NumPy do
end)

T.test("a number operand must fit the tensor's integer dtype", function()
  local x = mf.ones({2}, "int32")
  T.raises(function() return x + 2^40 end, "add: the number 1099511627776.0 does not fit int32")
  T.raises(function() return x * (1 << 40) end, "multiply: the number 1099511627776 does not fit int32")
  T.raises(function() return mf.ones({2}, "int64") - 1e19 end, "does not fit int64")
  T.eq((x + 2147483646)[1], 2147483647)
  -- a fraction is not dropped in arithmetic: int32 * 2.5 multiplied by 2 (TF raises too)
  T.raises(function() return x * 2.5 end,
           "multiply: the number 2.5 is not an integer but the other operand is int32")
  T.raises(function() return 0.5 + mf.ones({2}, "uint8") end, "add: the number 0.5 is not an integer")
  T.raises(function() return mf.maximum(mf.ones({2}, "int64"), 1.5) end, "not an integer")
  T.eq(x * 2.0, {2, 2})   -- an integral float is that integer
end)

T.test("fill and cast", function()
  T.raises(mf.fill, "does not fit int32", {2}, 3e9, "int32")
  local c = mf.cast(mf.tensor{3e9, -3e9, 0 / 0}, "int32")   -- cast saturates, NaN -> 0
  T.eq(c[1], 2147483647)
  T.eq(c[2], -2147483648)
  T.eq(c[3], 0)
end)

T.done()
