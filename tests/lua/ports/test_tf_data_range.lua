-- TensorFlow's tensorflow/python/data/kernel_tests/range_test.py, with the test's own
-- expected values (Python's range(...) written out). Not ported: testOutputType
-- (moonflow's Dataset.range gives int64 only, as mf.range with {dtype = "int64"}).
local T = dofile("tests/lua/harness.lua")
local D = mf.data.Dataset

local function produces(ds, want)
  local got = {}
  for x in ds:iter() do
    T.eq(x.dtype, "int64")
    got[#got + 1] = x:item()
  end
  T.eq(got, want)
end

T.test("testStop", function() produces(D.range(5), {0, 1, 2, 3, 4}) end)

T.test("testStartStop", function() produces(D.range(2, 5), {2, 3, 4}) end)

T.test("testStartStopStep", function() produces(D.range(2, 10, 2), {2, 4, 6, 8}) end)

T.test("testZeroStep", function()
  T.raises(function() D.range(2, 10, 0) end, "Dataset.range: delta must not be 0")
end)

T.test("testNegativeStep", function() produces(D.range(2, 10, -1), {}) end)

T.test("testStopLessThanStart", function() produces(D.range(10, 2), {}) end)

T.test("testStopLessThanStartWithPositiveStep", function() produces(D.range(10, 2, 2), {}) end)

T.test("testStopLessThanStartWithNegativeStep", function()
  produces(D.range(10, 2, -1), {10, 9, 8, 7, 6, 5, 4, 3})
end)

T.done()
