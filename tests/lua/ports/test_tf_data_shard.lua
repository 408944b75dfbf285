-- TensorFlow's tensorflow/python/data/kernel_tests/shard_test.py (ShardTest and
-- ShardRandomAccessTest), with the test's own expected values. moonflow's shard index is
-- 1-based: TensorFlow's shard(n, k) is ds:shard(n, k + 1). random_access.at(ds, i) is
-- element i + 1 of the iteration, and OutOfRangeError at index i means fewer than i + 1
-- elements. Not ported: the checkpoint and global-shuffle classes (no iterator checkpoints,
-- no global shuffle in moonflow), testName (no op names on Dataset stages).
local T = dofile("tests/lua/harness.lua")
local D = mf.data.Dataset

-- assertDatasetProduces: the elements, each a number or a tuple of numbers
local function produces(ds, want)
  local got = {}
  for a, b in ds:iter() do
    got[#got + 1] = b == nil and a:item() or {a:item(), b:item()}
  end
  T.eq(got, want)
end

T.test("testSimpleCase", function()
  produces(D.range(10):shard(5, 2 + 1), {2, 7})
end)

T.test("testNestedData", function()
  local dataset_a = D.range(10)
  local dataset_b = D.range(10, 0, -1)
  produces(D.zip(dataset_a, dataset_b):shard(5, 2 + 1), {{2, 8}, {7, 3}})
end)

T.test("testOffsetZero", function()
  produces(D.range(10):shard(5, 0 + 1), {0, 5})
end)

T.test("testOffsetGreaterNumShards, testNegativeOffset, testNegativeNumShards, testZeroNumShards",
       function()
  T.raises(function() D.range(10):shard(5, 7 + 1) end, "shard: the shard index must be in 1..5")
  T.raises(function() D.range(10):shard(5, -3 + 1) end, "shard: the shard index must be a positive")
  T.raises(function() D.range(10):shard(-3, 1 + 1) end,
           "shard: the number of shards must be a positive integer")
  T.raises(function() D.range(10):shard(0, 1 + 1) end,
           "shard: the number of shards must be a positive integer")
end)

T.test("testIteratorEndsBeforeFirstElem", function()
  produces(D.range(1):shard(5, 2 + 1), {})
end)

T.test("testLargerWorkerPool", function()
  produces(D.range(10):shard(7, 5 + 1), {5})
end)

T.test("testIndexEqualsNumShards", function()
  produces(D.range(10):shard(5, 4 + 1), {4, 9})
end)

T.test("testIndexEqualsNumShards2", function()
  produces(D.range(10):shard(4, 3 + 1), {3, 7})
end)

T.test("testNumShardsLargerThanDataset", function()
  produces(D.range(10):shard(20, 5 + 1), {5})
end)

-- ShardRandomAccessTest: at(ds, i) read as the (i + 1)-th element of the iteration
local function at(ds, index)
  local i = 0
  for x in ds:iter() do
    if i == index then return x:item() end
    i = i + 1
  end
  return nil   -- OutOfRangeError
end

T.test("ShardRandomAccessTest.testInvalidIndex (index 2, 3, 4)", function()
  local dataset = D.range(4):shard(2, 0 + 1)
  for _, index in ipairs{2, 3, 4} do T.eq(at(dataset, index), nil) end
end)

T.test("ShardRandomAccessTest.testEmptyDataset", function()
  local dataset = D.from_tensor_slices(mf.zeros{0}):shard(2, 1 + 1)
  T.eq(at(dataset, 0), nil)
end)

T.test("ShardRandomAccessTest.testNumShardsAndIndexLessThanNumElements", function()
  local dataset = D.range(10):shard(5, 0 + 1)
  T.eq(at(dataset, 0), 0)
  T.eq(at(dataset, 1), 5)
  T.eq(at(dataset, 2), nil)
end)

T.test("ShardRandomAccessTest.testNumShardsGreaterThanNumElementsIndexLess", function()
  local dataset = D.range(7):shard(8, 3 + 1)
  T.eq(at(dataset, 0), 3)
  T.eq(at(dataset, 1), nil)
end)

T.test("ShardRandomAccessTest.testNumShardsAndIndexGreaterThanNumElements", function()
  T.eq(at(D.range(13):shard(23, 21 + 1), 0), nil)
end)

T.test("ShardRandomAccessTest.testMultipleCombinations", function()
  for _, elements in ipairs{0, 10, 50} do
    for _, num_shards in ipairs{5, 7, 10} do
      for index = 0, 4 do
        local dataset = D.range(elements):shard(num_shards, index + 1)
        local len_dataset = dataset:cardinality()
        local got = {}
        for x in dataset:iter() do got[#got + 1] = x:item() end
        T.eq(#got, len_dataset)
        for i = 0, len_dataset - 1 do
          T.eq(got[i + 1], index + num_shards * i)   -- components[index + (num_shards * i)]
        end
      end
    end
  end
end)

T.done()
