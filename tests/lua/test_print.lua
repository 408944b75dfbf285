-- test_print.lua — tostring/print of tensors (NumPy style) and mf.set_printoptions.
local T = dofile("tests/lua/harness.lua")

local defaults = {precision = 4, threshold = 1000, edgeitems = 3, linewidth = 75}

-- Runs fn with the given print options, restoring the defaults afterwards.
local function with_options(opts, fn)
  mf.set_printoptions(opts)
  local ok, err = pcall(fn)
  mf.set_printoptions(defaults)
  if not ok then error(err, 0) end
end

local function same(t, want)
  local got = tostring(t)
  if got ~= want then
    error(string.format("expected\n%s\ngot\n%s", want, got), 2)
  end
end

T.test("whole floats print like NumPy, then the shape line", function()
  same(mf.tensor({{1, 2}, {3, 4}}), "[[1. 2.]\n [3. 4.]]\nshape=(2,2), dtype=float32")
  same(mf.tensor({1, 2, 3}, "float64"), "[1. 2. 3.]\nshape=(3,), dtype=float64")
end)

T.test("small ints, negatives and widths", function()
  same(mf.tensor({{1, -20, 300}, {4, 5, 6}}, "int32"),
       "[[  1 -20 300]\n [  4   5   6]]\nshape=(2,3), dtype=int32")
  same(mf.tensor({0, 7}, "int64"), "[0 7]\nshape=(2,), dtype=int64")
end)

T.test("int64 extremes print exactly", function()
  same(mf.tensor({math.maxinteger, math.mininteger, 9007199254740993}, "int64"),
       "[ 9223372036854775807 -9223372036854775808     9007199254740993]\n" ..
       "shape=(3,), dtype=int64")
end)

T.test("fractions: shortest digits, at most precision, aligned points", function()
  same(mf.tensor({1.5, -2.25, 3}), "[ 1.5  -2.25  3.  ]\nshape=(3,), dtype=float32")
  same(mf.tensor({0.1, 0.2}), "[0.1 0.2]\nshape=(2,), dtype=float32")
  same(mf.tensor({1 / 3, 2 / 3}), "[0.3333 0.6667]\nshape=(2,), dtype=float32")
  same(mf.tensor({123.456789, -0.5}, "float64"),
       "[123.4568  -0.5   ]\nshape=(2,), dtype=float64")
  same(mf.tensor({0.99999, 2}), "[1. 2.]\nshape=(2,), dtype=float32")
  same(mf.tensor({1, 1000}), "[   1. 1000.]\nshape=(2,), dtype=float32")
end)

T.test("scientific notation when magnitudes call for it", function()
  same(mf.tensor({1e-5, 1}), "[1.e-05 1.e+00]\nshape=(2,), dtype=float32")
  same(mf.tensor({1.5e-5, 1}), "[1.5e-05 1.0e+00]\nshape=(2,), dtype=float32")
  same(mf.tensor({1e8, 1}, "float64"), "[1.e+08 1.e+00]\nshape=(2,), dtype=float64")
  same(mf.tensor({1, 1001}), "[1.000e+00 1.001e+03]\nshape=(2,), dtype=float32")
  same(mf.tensor({1e100, 1}, "float64"), "[1.e+100 1.e+000]\nshape=(2,), dtype=float64")
  same(mf.tensor({-1.23456e-7, 0, 5e9}, "float64"),
       "[-1.2346e-07  0.0000e+00  5.0000e+09]\nshape=(3,), dtype=float64")
  same(mf.tensor({0, 1e-5}), "[0.e+00 1.e-05]\nshape=(2,), dtype=float32")
end)

T.test("nan and inf", function()
  same(mf.tensor({0 / 0, 1, -math.huge}), "[ nan   1. -inf]\nshape=(3,), dtype=float32")
  same(mf.tensor({0 / 0, -math.huge}), "[ nan -inf]\nshape=(2,), dtype=float32")
  same(mf.tensor({math.huge, 0.25}, "float64"), "[ inf 0.25]\nshape=(2,), dtype=float64")
  same(mf.tensor({0 / 0, 1e-6}), "[   nan 1.e-06]\nshape=(2,), dtype=float32")
end)

T.test("bools print as true/false", function()
  same(mf.tensor({{true, false}, {false, true}}),
       "[[ true false]\n [false  true]]\nshape=(2,2), dtype=bool")
  same(mf.tensor({true, true}), "[true true]\nshape=(2,), dtype=bool")
  same(mf.equal(mf.tensor({1, 2}), mf.tensor({1, 3})), "[ true false]\nshape=(2,), dtype=bool")
end)

T.test("rank 0 prints just the value", function()
  same(mf.tensor(3.5), "3.5\nshape=(), dtype=float32")
  same(mf.tensor(2), "2.\nshape=(), dtype=float32")
  same(mf.tensor(-7, "int64"), "-7\nshape=(), dtype=int64")
  same(mf.tensor(false), "false\nshape=(), dtype=bool")
  same(mf.tensor(0 / 0), "nan\nshape=(), dtype=float32")
end)

T.test("rank 3 has a blank line between 2-D blocks", function()
  same(mf.tensor({{{0, 1}, {2, 3}}, {{4, 5}, {6, 7}}}, "int32"),
       "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]\nshape=(2,2,2), dtype=int32")
end)

T.test("empty tensors print []", function()
  same(mf.zeros({0, 3}), "[]\nshape=(0,3), dtype=float32")
  same(mf.zeros({2, 0}, "int32"), "[]\nshape=(2,0), dtype=int32")
  same(mf.zeros({0}), "[]\nshape=(0,), dtype=float32")
end)

T.test("large tensors are summarised with edgeitems", function()
  same(mf.range(0, 2000), "[   0    1    2 ... 1997 1998 1999]\nshape=(2000,), dtype=int32")
  same(mf.range(0, 2000, 1, "float32"),
       "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]\n" ..
       "shape=(2000,), dtype=float32")
  with_options({threshold = 5, edgeitems = 2}, function()
    same(mf.range(0, 10), "[0 1 ... 8 9]\nshape=(10,), dtype=int32")
    local rows = {}
    for i = 0, 9 do
      rows[i + 1] = {}
      for j = 0, 9 do rows[i + 1][j + 1] = 10 * i + j end
    end
    same(mf.tensor(rows, "int32"),
         "[[ 0  1 ...  8  9]\n [10 11 ... 18 19]\n ...\n [80 81 ... 88 89]\n" ..
         " [90 91 ... 98 99]]\nshape=(10,10), dtype=int32")
    same(mf.tensor({1, 2, 3, 4, 5}, "int32"), "[1 2 3 4 5]\nshape=(5,), dtype=int32")
  end)
  with_options({threshold = 10, edgeitems = 1}, function()
    local blocks = {}
    for i = 0, 4 do blocks[i + 1] = {{4 * i, 4 * i + 1}, {4 * i + 2, 4 * i + 3}} end
    same(mf.tensor(blocks, "int32"),
         "[[[ 0  1]\n  [ 2  3]]\n\n ...\n\n [[16 17]\n  [18 19]]]\nshape=(5,2,2), dtype=int32")
  end)
  with_options({threshold = math.huge}, function()
    local s = tostring(mf.range(0, 2000))
    T.ok(not s:find("...", 1, true), "threshold = math.huge never summarises")
  end)
end)

T.test("rows wrap at linewidth", function()
  same(mf.range(0, 30, 1, "float32"),
       "[ 0.  1.  2.  3.  4.  5.  6.  7.  8.  9. 10. 11. 12. 13. 14. 15. 16. 17.\n" ..
       " 18. 19. 20. 21. 22. 23. 24. 25. 26. 27. 28. 29.]\nshape=(30,), dtype=float32")
  with_options({linewidth = 20}, function()
    same(mf.tensor({{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}}, "int32"),
         "[[ 0  1  2  3  4\n   5]\n [ 6  7  8  9 10\n  11]]\nshape=(2,6), dtype=int32")
  end)
end)

T.test("precision option", function()
  with_options({precision = 2}, function()
    same(mf.tensor({1 / 3, 2.5}, "float64"), "[0.33 2.5 ]\nshape=(2,), dtype=float64")
  end)
  with_options({precision = 0}, function()
    same(mf.tensor({1.4, 2.6}), "[1. 3.]\nshape=(2,), dtype=float32")
  end)
  with_options({precision = 8}, function()
    same(mf.tensor({1 / 3}, "float64"), "[0.33333333]\nshape=(1,), dtype=float64")
    same(mf.tensor({1 / 3}), "[0.33333334]\nshape=(1,), dtype=float32")
  end)
end)

T.test("strided views print their own elements", function()
  local t = mf.tensor({{1, 2, 3}, {4, 5, 6}})
  same(mf.slice(t, {1, 2}, {2, 2}), "[[2. 3.]\n [5. 6.]]\nshape=(2,2), dtype=float32")
  same(mf.slice(t, {1, 3}, {2, 1}), "[[3.]\n [6.]]\nshape=(2,1), dtype=float32")
  same(t[2], "[4. 5. 6.]\nshape=(3,), dtype=float32")
end)

T.test("print uses __tostring", function()
  T.ok(pcall(print, mf.tensor({1, 2})))
  local tostr = getmetatable(mf.tensor(1)).__tostring
  T.eq(tostr(mf.tensor({1, 2})), "[1. 2.]\nshape=(2,), dtype=float32")
end)

T.test("get_printoptions returns the current options", function()
  T.eq(mf.get_printoptions().precision, 4)
  T.eq(mf.get_printoptions().threshold, 1000)
  T.eq(mf.get_printoptions().edgeitems, 3)
  T.eq(mf.get_printoptions().linewidth, 75)
  with_options({precision = 6, linewidth = 100, threshold = math.huge}, function()
    local o = mf.get_printoptions()
    T.eq(o.precision, 6)
    T.eq(o.linewidth, 100)
    T.eq(o.threshold, math.huge)
    T.eq(o.edgeitems, 3)
  end)
  T.eq(select("#", mf.set_printoptions({})), 0)
  T.eq(mf.get_printoptions().precision, 4)
end)

T.test("set_printoptions checks its fields", function()
  T.raises(function() mf.set_printoptions({precison = 3}) end,
           "set_printoptions: unknown option 'precison'")
  T.raises(function() mf.set_printoptions({precision = -1}) end,
           "set_printoptions: precision must be an integer from 0 to 17, got -1")
  T.raises(function() mf.set_printoptions({precision = 2.5}) end,
           "precision must be an integer from 0 to 17, got 2.5")
  T.raises(function() mf.set_printoptions({edgeitems = 0}) end,
           "set_printoptions: edgeitems must be an integer from 1 to")
  T.raises(function() mf.set_printoptions({linewidth = "wide"}) end,
           "set_printoptions: linewidth must be an integer from 1 to 1000000, got string")
  T.raises(function() mf.set_printoptions({threshold = -5}) end,
           "set_printoptions: threshold must be an integer >= 0 (or math.huge), got -5")
  T.raises(function() mf.set_printoptions({[1] = 3}) end,
           "set_printoptions: unknown option '1' (known: precision, threshold, edgeitems, "
           .. "linewidth)")
  T.raises(function() mf.set_printoptions(3) end, "bad argument #1 to 'set_printoptions'")
  -- a failed call changes nothing, even for the fields that were valid
  T.raises(function() mf.set_printoptions({precision = 2, linewidth = 0}) end, "linewidth")
  T.eq(mf.get_printoptions().precision, 4)
end)

T.test("a closed tensor cannot be printed", function()
  local t = mf.tensor({1})
  getmetatable(t).__close(t)
  T.raises(function() return tostring(t) end, "closed")
end)

T.done()
