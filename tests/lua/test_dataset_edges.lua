-- test_dataset_edges.lua — mf.data.Dataset at the edges, where tf.data's
-- rules give the answer (issue #27: shard, edge counts, cardinality, zip,
-- reshuffle_each_iteration; issue #35: W4 map returning nil, W6 overflow in
-- the size arithmetic). Expected values are tf.data's documented results
-- (tf.data.Dataset.shard, repeat, take, skip, range, cardinality, zip).
local T = dofile("tests/lua/harness.lua")
local D = mf.data.Dataset
local maxint = math.maxinteger

-- The elements of a Dataset of scalars (or of its first component), as numbers.
local function items(ds)
  local out = {}
  for x in ds:iter() do out[#out + 1] = x:item() end
  return out
end

T.test("shard keeps every element, as TensorFlow's range(k, size, n)", function()
  -- tf.data.Dataset.range(10).shard(num_shards=7, index=k) for k = 0..6
  local want = {{0, 7}, {1, 8}, {2, 9}, {3}, {4}, {5}, {6}}
  for k = 1, 7 do
    T.eq(items(D.range(10):shard(7, k)), want[k], nil, "shard(7, " .. k .. ")")
    T.eq(D.range(10):shard(7, k):cardinality(), #want[k], nil, "cardinality of shard " .. k)
  end
  -- more shards than elements: the first 10 shards hold one each, the rest none
  for k = 1, 20 do
    T.eq(items(D.range(10):shard(20, k)), k <= 10 and {k - 1} or {}, nil, "shard(20, " .. k .. ")")
  end
  -- moonflow's drop_remainder: equal parts, the last incomplete group dropped
  T.eq(items(D.range(10):shard(7, 1, {drop_remainder = true})), {0})
  T.eq(items(D.range(10):shard(7, 4, {drop_remainder = true})), {3})
  T.eq(D.range(10):shard(3, 1, {drop_remainder = true}):cardinality(), 3)
  T.eq(items(D.range(10):shard(20, 1, {drop_remainder = true})), {})
  T.eq(tostring(D.range(4):shard(2, 1, {drop_remainder = true})):match("shard.*"),
       "shard(2, 1, drop_remainder)")
  T.raises(function() D.range(4):shard(2, 1, {drop_remainder = 1}) end,
           "shard: option 'drop_remainder' must be a boolean, got number")
  T.raises(function() D.range(4):shard(2, 1, {drop = true}) end, "shard: unknown option 'drop'")
end)

T.test("edge counts give an empty or whole Dataset (epochs, take, skip, prefetch)", function()
  local ds = D.range(5)
  T.eq(items(ds:epochs(0)), {})
  T.eq(ds:epochs(0):cardinality(), 0)
  T.eq(items(ds:take(0)), {})
  T.eq(items(ds:skip(0)), {0, 1, 2, 3, 4})
  T.eq(items(ds:prefetch(0)), {0, 1, 2, 3, 4})
  T.eq(items(ds:prefetch(mf.data.AUTOTUNE)), {0, 1, 2, 3, 4})
  T.eq(items(ds:take(-1)), {0, 1, 2, 3, 4})
  T.eq(ds:take(-1):cardinality(), 5)
  T.eq(items(ds:skip(-1)), {})
  T.eq(ds:skip(-1):cardinality(), 0)
  T.eq(items(ds:epochs(-1):take(7)), {0, 1, 2, 3, 4, 0, 1})
  T.eq(items(D.range(0)), {})
  T.eq(D.range(0):cardinality(), 0)
  T.eq(items(D.range(10, 2)), {})
  T.eq(items(D.range(2, 10, -1)), {})
  T.eq(items(D.range(10, 2, -3)), {10, 7, 4})
  T.eq(items(D.range(0):batch(3)), {})
  T.eq(items(D.range(0):epochs()), {})        -- forever over nothing ends
  T.raises(function() ds:take(-2) end,
           "take: the count must be a non-negative integer or -1 (all), got -2")
  T.raises(function() ds:epochs(-5) end, "epochs: the number of epochs must be a non-negative")
  T.raises(function() ds:prefetch(1.5) end, "prefetch: the buffer size must be a non-negative")
  T.raises(function() D.range(1, 2, 0) end, "Dataset.range: delta must not be 0")
end)

T.test("cardinality: TensorFlow's -1 (infinite) and -2 (unknown)", function()
  T.eq(mf.data.INFINITE_CARDINALITY, -1)
  T.eq(mf.data.UNKNOWN_CARDINALITY, -2)
  local ds = D.range(10)
  T.eq(ds:epochs():cardinality(), -1)
  T.eq(ds:epochs():batch(3):cardinality(), -1)
  T.eq(ds:epochs():take(25):cardinality(), 25)
  T.eq(ds:epochs():skip(25):cardinality(), -1)
  T.eq(ds:epochs():shard(3, 1):cardinality(), -1)
  local odd = ds:filter(function(x) return x:item() % 2 == 1 end)
  T.eq(odd:cardinality(), -2)
  T.eq(odd:take(3):cardinality(), -2)
  T.eq(odd:epochs(2):cardinality(), -2)
  T.eq(odd:epochs():cardinality(), -1)
  T.eq(D.range(0):epochs():cardinality(), 0)
  T.eq(ds:epochs(0):cardinality(), 0)
  T.eq(ds:epochs():epochs(0):cardinality(), 0)
end)

T.test("W6: sizes near the integer limit count right or raise", function()
  local ds = D.range(10)
  T.eq(ds:batch(maxint):cardinality(), 1)
  T.eq(items(ds:batch(maxint):map(function(x) return mf.reduce_sum(x) end)), {45})
  T.eq(ds:batch(maxint, {drop_remainder = true}):cardinality(), 0)
  T.eq(ds:shard(maxint, 1):cardinality(), 1)
  T.eq(ds:shard(maxint, maxint):cardinality(), 0)
  T.eq(ds:take(maxint):cardinality(), 10)
  T.eq(ds:skip(maxint):cardinality(), 0)
  T.eq(ds:epochs(2 ^ 59):cardinality(), 10 * 2 ^ 59)
  T.raises(function() return ds:epochs(2 ^ 62):cardinality() end,
           "cardinality: 4611686018427387904 epochs of 10 elements are more elements than an "
           .. "integer holds")
  T.eq(items(D.range(0, maxint, maxint)), {0})
  T.eq(items(D.range(0, maxint, 2 ^ 62)), {0, 2 ^ 62})
  T.eq(items(D.range(maxint - 2, maxint)), {maxint - 2, maxint - 1})
  T.eq(items(D.range(math.mininteger, math.mininteger + 2)), {math.mininteger, math.mininteger + 1})
  T.eq(items(D.range(maxint, math.mininteger, math.mininteger)), {maxint, -1})  -- Python's range
  T.eq(items(D.range(-1, maxint, maxint)), {-1, maxint - 1})
  -- the layers compute SAME/VALID output sizes without overflow (mf.nn.max_pool's answer)
  local x = mf.ones{1, 5, 5, 1}
  T.eq(mf.layers.MaxPool2D(2, {strides = maxint, padding = "SAME"})(x).shape,
       mf.nn.max_pool(x, 2, maxint, "SAME").shape)
  T.eq(mf.layers.Conv2D(2, 3, {strides = maxint, padding = "SAME"})(x).shape, {1, 1, 1, 2})
  T.eq(mf.layers.Conv2D(2, 3, {strides = maxint})(x).shape, {1, 1, 1, 2})
  T.raises(function() mf.layers.Conv2D(2, 3, {dilation_rate = maxint})(x) end,
           "is smaller than the 3x3 window (extent over 2^63, padding VALID)")
end)

T.test("W4: a map function returning nil is an error, not the end of the data", function()
  local ds = D.range(32):map(function(x)
    if x:item() % 8 == 4 then return nil end
    return x
  end)
  T.raises(function() for _ in ds:iter() do end end,
           "map: the function returned nil as component 1 of element 5")
  local two = D.range(3):map(function(x) return x, nil end)
  T.raises(function() for _ in two:iter() do end end,
           "map: the function returned nil as component 2 of element 1")
  local gap = D.range(3):map(function(x) return nil, x end)
  T.raises(function() for _ in gap:iter() do end end,
           "map: the function returned nil as component 1 of element 1")
end)

T.test("Dataset.zip: the components of one element of each, as long as the shortest", function()
  local a = D.range(5)
  local b = D.from_tensor_slices{mf.tensor{10, 20, 30}, mf.tensor{{1, 2}, {3, 4}, {5, 6}}}
  local rows = {}
  for x, y, z in D.zip(a, b):iter() do rows[#rows + 1] = {x:item(), y:item(), z:totable()} end
  T.eq(#rows, 3)
  T.eq(rows[3][1], 2)
  T.eq(rows[3][2], 30)
  T.eq(rows[3][3], {5, 6})
  T.eq(D.zip{a, b}:cardinality(), 3)
  T.eq(D.zip(a, a:epochs()):cardinality(), 5)
  T.eq(D.zip(a:epochs(), a:epochs()):cardinality(), -1)
  T.eq(D.zip(a, a:filter(function() return true end)):cardinality(), -2)
  local n = 0
  for x, y in D.zip(a, a:skip(1)):batch(2):iter() do
    n = n + 1
    T.eq(y - x, n == 1 and {1, 1} or {1, 1})
  end
  T.eq(n, 2)
  T.eq(tostring(D.zip(a, b):batch(2)), "mf.data.Dataset: zip of 2 Datasets, batch(2)")
  T.raises(function() D.zip(a, 5) end, "Dataset.zip: argument 2 must be a Dataset, got number")
  T.raises(function() D.zip() end, "Dataset.zip: expected Datasets")
end)

T.test("shuffle{reshuffle_each_iteration = false}: the same order on every pass", function()
  local ds = D.range(20)
  local fixed = ds:shuffle(20, {seed = 4, reshuffle_each_iteration = false})
  local first, second = items(fixed), items(fixed)
  T.eq(second, first)
  local two = items(fixed:epochs(2))
  T.eq({table.unpack(two, 21, 40)}, first)
  local moving = ds:shuffle(20, {seed = 4})
  local m1, m2 = items(moving), items(moving)
  T.ok(table.concat(m1, ",") ~= table.concat(m2, ","), "the default reshuffles every pass")
  T.raises(function() ds:shuffle(4, {reshuffle_each_iteration = 1}) end,
           "shuffle: option 'reshuffle_each_iteration' must be a boolean, got number")
end)

T.done()
