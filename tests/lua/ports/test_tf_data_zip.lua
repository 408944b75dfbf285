-- TensorFlow's tensorflow/python/data/kernel_tests/zip_test.py (ZipTest), with the test's own
-- data and expected values. moonflow's elements are flat lists of components, so the nested
-- zip((a, (b, c))) of testNested is zip(a, zip(b, c)) and gives a, b, c. Not ported:
-- testNamedTuple and testAttrs (no named structures of Datasets), the checkpoint test.
local T = dofile("tests/lua/harness.lua")
local D = mf.data.Dataset

-- np.tile(np.array([[a], [b], [c], [d]]), n): 4 rows, each its value n times
local function tile(column, n)
  local rows = {}
  for i, v in ipairs(column) do
    rows[i] = {}
    for j = 1, n do rows[i][j] = v end
  end
  return mf.tensor(rows, "int64")
end

local function components_equal()
  return {tile({1, 2, 3, 4}, 20), tile({12, 13, 14, 15}, 22),
          mf.tensor({37.0, 38.0, 39.0, 40.0}, "float64")}
end

-- _dataset_factory: zip of from_tensor_slices of each component
local function dataset_factory(components)
  local datasets = {}
  for i, c in ipairs(components) do datasets[i] = D.from_tensor_slices(c) end
  return D.zip(datasets)
end

-- the slice i (0-based) of a component, as a table or number
local function row(c, i)
  local v = c:totable()[i + 1]
  return v
end

local function check_elements(get_next, components, count)
  for i = 0, count - 1 do
    local results = table.pack(get_next())
    T.eq(results.n, #components)
    for k, component in ipairs(components) do
      local r = results[k]
      T.eq(r.shape, #component.shape == 1 and {} or {component.shape[2]})
      T.eq(r.dtype, component.dtype)
      T.eq(r:totable(), row(component, i))
    end
  end
  T.eq(get_next(), nil)   -- OutOfRangeError, twice
  T.eq(get_next(), nil)
end

T.test("testZipEqual", function()
  local components = components_equal()
  check_elements(dataset_factory(components):iter(), components, 4)
end)

T.test("testZipUnequal", function()
  local components = {mf.tensor({1, 2, 3, 4}, "int32"), mf.tensor({1, 2, 3, 4, 5}, "int32"),
                      mf.tensor{1.0, 2.0}}
  check_elements(dataset_factory(components):iter(), components, 2)
  T.eq(dataset_factory(components):cardinality(), 2)
end)

T.test("testNested (zip((a, (b, c))) flattened)", function()
  local components = components_equal()
  local datasets = {}
  for i, c in ipairs(components) do datasets[i] = D.from_tensor_slices(c) end
  local dataset = D.zip(datasets[1], D.zip(datasets[2], datasets[3]))
  check_elements(dataset:iter(), components, 4)
end)

T.done()
