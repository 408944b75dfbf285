-- test_shape_overflow.lua — shape arithmetic on huge sizes is checked, not
-- wrapped (issue #13, item 2): pad, split (concat and element counts are
-- checked too, though the tensor size cap keeps them from overflowing);
-- errors print the value given (an int64 axis is not truncated to an int). Under `make check` UBSan also fails on any signed
-- overflow these calls would reach.
local T = dofile("tests/lua/harness.lua")
local MAX = math.maxinteger

T.test("pad: before + size + after overflowing is an error, not a write out of bounds", function()
  T.raises(mf.pad, "pad: axis 1 of size 2 padded by {9223372036854775807, " ..
           "9223372036854775807} overflows", mf.ones{2}, {{MAX, MAX}})
  T.raises(mf.pad, "overflows", mf.ones{2}, {{MAX - 1, 0}})
  T.eq(mf.pad(mf.ones{2}, {{1, 2}}), {0, 1, 1, 0, 0})
end)

T.test("split: sizes that overflow when added are named", function()
  T.raises(mf.split, "split: sizes overflow (entry 2 is 9223372036854775807)",
           mf.ones{4}, {MAX, MAX, 2})
  T.raises(mf.split, "split: sizes overflow", mf.ones{4}, {MAX, 1, -1})
  local parts = mf.split(mf.ones{4}, {1, -1})
  T.eq(parts[2].shape, {3})
end)

T.test("axes are printed as given, not truncated to int", function()
  T.raises(mf.reduce_sum, "axis 4294967295 out of range for rank 2", mf.ones{2, 2}, 2 ^ 32 - 1)
  T.raises(mf.reduce_sum, "axis 4294967295 out of range", mf.ones{2, 2}, {axis = 2 ^ 32 - 1})
  T.raises(mf.concat, "axis 4294967297 out of range", {mf.ones{2}, mf.ones{2}}, 2 ^ 32 + 1)
  T.raises(mf.expand_dims, "axis 4294967296 out of range", mf.ones{1}, 2 ^ 32)
  T.raises(mf.gather, "axis -9223372036854775808 out of range", mf.ones{2}, {1},
           math.mininteger)
end)

T.done()
