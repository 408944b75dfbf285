-- TensorFlow's tensorflow/python/data/kernel_tests/take_test.py and skip_test.py (TakeTest,
-- SkipTest and their RandomAccessTest classes), with the tests' own expected values:
-- num_output = min(count, 10) if count != -1 else 10, and the elements from
-- range(start_range, 10). random_access.at(ds, i) is element i + 1 of the iteration
-- (OutOfRangeError: fewer elements). Where moonflow differs on purpose: a count below -1
-- is an error (TensorFlow reads every negative count as -1), so testNegativeSkip's -2 checks
-- the error and -1 the result. Not ported: the checkpoint and global-shuffle classes and
-- testName (no iterator checkpoints, global shuffle or stage names in moonflow).
local T = dofile("tests/lua/harness.lua")
local D = mf.data.Dataset

local function values(ds)
  local out = {}
  for x in ds:iter() do out[#out + 1] = x:item() end
  return out
end

local function at(ds, index)
  if index < 0 then return nil end   -- a negative index is out of range
  return values(ds)[index + 1]
end

local function range_list(a, b)
  local out = {}
  for i = a, b - 1 do out[#out + 1] = i end
  return out
end

T.test("TakeTest.testBasic (count -1, 0, 4, 10, 25)", function()
  for _, count in ipairs{-1, 0, 4, 10, 25} do
    local components = mf.range(0, 10, 1, {dtype = "int64"})    -- np.arange(10)
    local dataset = D.from_tensor_slices{components}:take(count)
    local num_output = count ~= -1 and math.min(count, 10) or 10
    T.eq(values(dataset), range_list(0, num_output), nil, "take(" .. count .. ")")
    for x in dataset:iter() do T.eq(x.shape, {}) end            -- c.shape[1:]
  end
end)

T.test("TakeRandomAccessTest.testInvalidIndex / testEmptyDataset", function()
  local dataset = D.range(10):take(3)
  for _, index in ipairs{-1, 3, 4} do T.eq(at(dataset, index), nil) end
  local empty = D.from_tensor_slices(mf.zeros{0}):take(5)
  for _, index in ipairs{-2, 0, 1} do T.eq(at(empty, index), nil) end
end)

T.test("TakeRandomAccessTest.testBasic", function()
  for _, count in ipairs{-1, 0, 4, 10, 25} do
    local dataset = D.range(10):take(count)
    local num_output = count ~= -1 and math.min(count, 10) or 10
    for i = 0, num_output - 1 do T.eq(at(dataset, i), i) end
    T.eq(at(dataset, num_output), nil)
    T.eq(dataset:cardinality(), num_output)
  end
end)

T.test("SkipTest.testBasic (count -1, 0, 4, 10, 25)", function()
  for _, count in ipairs{-1, 0, 4, 10, 25} do
    local components = mf.range(0, 10, 1, {dtype = "int64"})
    local dataset = D.from_tensor_slices{components}:skip(count)
    local start_range = count ~= -1 and math.min(count, 10) or 10
    T.eq(values(dataset), range_list(start_range, 10), nil, "skip(" .. count .. ")")
  end
end)

T.test("SkipRandomAccessTest.testInvalidIndex / testEmptyDataset / testBasic", function()
  local dataset = D.range(10):skip(8)
  for _, index in ipairs{-1, 2, 3} do T.eq(at(dataset, index), nil) end
  local empty = D.from_tensor_slices(mf.zeros{0}):skip(8)
  for _, index in ipairs{-1, 0} do T.eq(at(empty, index), nil) end
  local basic = D.range(11):skip(3)
  for i = 0, 7 do T.eq(at(basic, i), i + 3) end
end)

T.test("SkipRandomAccessTest.testNegativeSkip (-1; -2 is moonflow's error)", function()
  T.eq(at(D.range(11):skip(-1), 0), nil)
  T.raises(function() D.range(11):skip(-2) end,
           "skip: the count must be a non-negative integer or -1 (all), got -2")
end)

T.test("SkipRandomAccessTest.testSkipGreaterThanNumElements", function()
  for _, skip in ipairs{5, 8} do T.eq(at(D.range(4):skip(skip), 0), nil) end
end)

T.test("SkipRandomAccessTest.testMultipleCombinations", function()
  for _, elements in ipairs{0, 5, 10} do
    for _, skip in ipairs{-1, 0, 5, 15} do
      local dataset = D.range(elements):skip(skip)
      local n = dataset:cardinality()
      T.eq(#values(dataset), n)
      for i = 0, n - 1 do T.eq(at(dataset, i), i + skip) end
    end
  end
end)

T.test("TakeDatasetCheckpointTest / SkipDatasetCheckpointTest: the element counts", function()
  -- verify_fn's num_outputs for range(100).take(count) and range(100).skip(count)
  for _, c in ipairs{{50, 50}, {200, 100}, {100, 100}, {-1, 100}, {0, 0}} do
    T.eq(#values(D.range(100):take(c[1])), c[2], nil, "take(" .. c[1] .. ")")
  end
  for _, c in ipairs{{50, 50}, {200, 0}, {100, 0}, {-1, 0}, {0, 100}} do
    T.eq(#values(D.range(100):skip(c[1])), c[2], nil, "skip(" .. c[1] .. ")")
  end
end)

T.done()
