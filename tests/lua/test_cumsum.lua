-- test_cumsum.lua — mf.cumsum, an op with attributes added through the
-- schema: values (expected sums worked by hand, as numpy.cumsum gives),
-- axis and reverse, integer dtypes, the gradient, and the schema's errors.
local T = dofile("tests/lua/harness.lua")

local t = mf.tensor({{1, 2, 3}, {4, 5, 6}})

T.test("values along each axis, forward and reversed", function()
  T.eq(mf.cumsum(t), {{1, 2, 3}, {5, 7, 9}})
  T.eq(t:cumsum(2), {{1, 3, 6}, {4, 9, 15}})
  T.eq(mf.cumsum(t, -1, {reverse = true}), {{6, 5, 3}, {15, 11, 6}})
  T.eq(mf.cumsum(t, {axis = 2}), {{1, 3, 6}, {4, 9, 15}})
  T.eq(mf.cumsum(mf.tensor({1, 2, 3}, "int64")), {1, 3, 6})
  T.eq(mf.cumsum(mf.transpose(t)), {{1, 4}, {3, 9}, {6, 15}})   -- a strided view
end)

T.test("gradient", function()
  local x = mf.tensor({{0.5, -1, 2}, {1.5, 0.25, -3}}, "float64")
  T.ok(mf.test.gradcheck(function(v)
    return mf.reduce_sum(mf.cumsum(v, 2, {reverse = true}) * v)
  end, {x}))
end)

T.test("errors name cumsum", function()
  T.raises(mf.cumsum, "cumsum: axis 3 out of range for rank 2", t, 3)
  T.raises(mf.cumsum, "cumsum: unknown option 'exclusiv' (known: axis, exclusive, reverse)",
           t, {exclusiv = true})
  T.raises(mf.cumsum, "bad argument #3 to 'cumsum' (no value expected", t, 1, 2)
  T.raises(mf.cumsum, "cumsum: option 'reverse' must be a boolean, got number", t,
           {reverse = 1})
end)

T.done()
