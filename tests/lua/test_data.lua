-- test_data.lua — mf.data: read_csv (header, columns, dtype, errors with line
-- numbers), read_idx (plain and gzip, validation), and Dataset
-- (from_tensor_slices, shuffle, batch, epochs, iter).
local T = dofile("tests/lua/harness.lua")

local tmpfiles = {}

local function write_file(text)
  local name = os.tmpname()
  tmpfiles[#tmpfiles + 1] = name
  local f = assert(io.open(name, "wb"))
  f:write(text)
  f:close()
  return name
end

-- An IDX file: magic (0, 0, type, ndims), big-endian dims, then 'payload'.
local function idx_bytes(type_code, dims, payload)
  local parts = {string.char(0, 0, type_code, #dims)}
  for _, d in ipairs(dims) do parts[#parts + 1] = string.pack(">I4", d) end
  parts[#parts + 1] = payload
  return table.concat(parts)
end

local function gzip_file(bytes)
  local name = os.tmpname()
  tmpfiles[#tmpfiles + 1] = name
  local p = assert(io.popen("gzip -c > '" .. name .. "'", "w"))
  p:write(bytes)
  p:close()
  return name
end

-- ---- read_csv ---------------------------------------------------------------

T.test("read_csv: header detected, blank lines and spaces skipped", function()
  local path = write_file("x,y,label\n1, 2.5 ,0\n\n3,-4e1,1\r\n")
  local t = mf.data.read_csv(path)
  T.eq(t.shape, {2, 3})
  T.eq(t.dtype, "float32")
  T.eq(t, {{1, 2.5, 0}, {3, -40, 1}})
end)

T.test("read_csv: without a header", function()
  local path = write_file("1,2\n3,4\n")
  T.eq(mf.data.read_csv(path), {{1, 2}, {3, 4}})
  T.eq(mf.data.read_csv(path, {header = false}), {{1, 2}, {3, 4}})
  -- header = true skips the first line even when it is numeric
  T.eq(mf.data.read_csv(path, {header = true}), {{3, 4}})
end)

T.test("read_csv: columns by index and by name, dtype", function()
  local path = write_file('"a","b,c",species\n1,2,setosa\n3,4,virginica\n')
  T.eq(mf.data.read_csv(path, {columns = {2, 1}}), {{2, 1}, {4, 3}})
  local t = mf.data.read_csv(path, {columns = {"b,c"}, dtype = "int64"})
  T.eq(t.dtype, "int64")
  T.eq(t, {{2}, {4}})
  T.eq(mf.data.read_csv(path, {columns = {"a", 2}, dtype = "float64"}).dtype, "float64")
  T.eq(mf.data.read_csv(path, {columns = {1}, dtype = "int32"}), {{1}, {3}})
end)

T.test("read_csv: errors name the path, line and column", function()
  local bad = write_file("a,b\n1,2\n3,oops\n")
  T.raises(mf.data.read_csv, bad .. ":3: column 2: expected a float32 number, got 'oops'", bad)
  local ragged = write_file("1,2,3\n4,5,6\n7,8\n")
  T.raises(mf.data.read_csv, ragged .. ":3: expected 3 fields (as on the first line), got 2",
           ragged)
  local empty_field = write_file("1,,3\n")
  T.raises(mf.data.read_csv, ":1: column 2: empty field", empty_field, {header = false})
  T.raises(mf.data.read_csv, "is empty", write_file(""))
  T.raises(mf.data.read_csv, "is empty", write_file("\n  \n"))
  T.raises(mf.data.read_csv, "no data rows", write_file("a,b\n"))
  T.raises(mf.data.read_csv, "cannot open '/nonexistent/x.csv': No such file or directory",
           "/nonexistent/x.csv")
  T.raises(mf.data.read_csv, "expected an int32 number, got '1.5'", write_file("1.5\n"),
           {dtype = "int32", header = false})
  T.raises(mf.data.read_csv, "unterminated quote", write_file('"a,b\n1\n'))
end)

T.test("read_csv: bad options", function()
  local path = write_file("a,b\n1,2\n")
  T.raises(mf.data.read_csv, "column 3 out of range", path, {columns = {3}})
  T.raises(mf.data.read_csv, "columns are 1-based: 1..2", path, {columns = {3}})
  T.raises(mf.data.read_csv, "column 0 out of range: " .. path .. " has 2 columns (columns "
           .. "are 1-based: 1..2)", path, {columns = {0}})
  T.raises(mf.data.read_csv, "column -9223372036854775808 out of range", path,
           {columns = {math.mininteger}})
  T.raises(mf.data.read_csv, "column 4294967297 out of range", path, {columns = {2^32 + 1}})
  T.raises(mf.data.read_csv, "no column named 'z'", path, {columns = {"z"}})
  T.raises(mf.data.read_csv, "selected by name, but header = false", path,
           {columns = {"a"}, header = false})
  T.raises(mf.data.read_csv, "unknown option 'headers'", path, {headers = true})
  T.raises(mf.data.read_csv, "option 'header' must be a boolean", path, {header = 1})
  T.raises(mf.data.read_csv, "dtype must be float32, float64, int32 or int64", path,
           {dtype = "bool"})
  T.raises(mf.data.read_csv, "read_csv: columns[2] (a column number) must be an integer, got "
           .. "1.5", path, {columns = {1, 1.5}})
  T.raises(mf.data.read_csv, "read_csv: columns[1] must be a column number or a header name, "
           .. "got boolean", path, {columns = {true}})
  T.raises(mf.data.read_csv, "bad argument #1", nil)
end)

-- ---- read_idx ---------------------------------------------------------------

T.test("read_idx: unsigned bytes, plain and gzip", function()
  local bytes = idx_bytes(0x08, {2, 3}, string.char(0, 1, 2, 253, 254, 255))
  local want = {{0, 1, 2}, {253, 254, 255}}
  local t = mf.data.read_idx(write_file(bytes))
  T.eq(t.dtype, "uint8")
  T.eq(t.shape, {2, 3})
  T.eq(t, want)
  T.eq(mf.data.read_idx(gzip_file(bytes)), want)
end)

T.test("read_idx: the other types", function()
  T.eq(mf.data.read_idx(write_file(idx_bytes(0x09, {2}, string.char(255, 5)))), {-1, 5})
  T.eq(mf.data.read_idx(write_file(idx_bytes(0x0B, {2}, string.pack(">i2>i2", -300, 7)))),
       {-300, 7})
  T.eq(mf.data.read_idx(write_file(idx_bytes(0x0C, {1}, string.pack(">i4", -70000)))), {-70000})
  local f = mf.data.read_idx(write_file(idx_bytes(0x0D, {2}, string.pack(">f>f", 1.5, -2))))
  T.eq(f.dtype, "float32")
  T.eq(f, {1.5, -2})
  local d = mf.data.read_idx(gzip_file(idx_bytes(0x0E, {1, 1}, string.pack(">d", 0.1))))
  T.eq(d.dtype, "float64")
  T.eq(d, {{0.1}})
end)

T.test("read_idx: validation errors", function()
  local good = idx_bytes(0x08, {2, 2}, string.char(1, 2, 3, 4))
  T.raises(mf.data.read_idx, "is truncated: dims (2,2) need 4 data bytes, the file has 3",
           write_file(good:sub(1, -2)))
  T.raises(mf.data.read_idx, "is truncated", gzip_file(good:sub(1, -2)))
  T.raises(mf.data.read_idx, "trailing bytes after the 4 data bytes", write_file(good .. "x"))
  T.raises(mf.data.read_idx, "is not an IDX file", write_file("PK\3\4 not idx"))
  T.raises(mf.data.read_idx, "unknown IDX type code 0x07", write_file(idx_bytes(7, {1}, "x")))
  T.raises(mf.data.read_idx, "0 dimensions in the header (expected 1..8)",
           write_file(string.char(0, 0, 8, 0)))
  T.raises(mf.data.read_idx, "the header ends inside its 2 dimensions",
           write_file(string.char(0, 0, 8, 2, 0, 0, 0, 1)))
  T.raises(mf.data.read_idx, "is empty", write_file(""))
  T.raises(mf.data.read_idx, "cannot open '/nonexistent/t.idx': No such file or directory",
           "/nonexistent/t.idx")
  T.raises(mf.data.read_idx, "cannot read", "/")
end)

-- ---- Dataset ----------------------------------------------------------------

local Dataset = mf.data.Dataset

-- All elements of one pass as Lua tables, one entry per component.
local function collect(ds)
  local out = {}
  for x, y in ds:iter() do
    out[#out + 1] = {x:totable(), y and y:totable()}
  end
  return out
end

T.test("Dataset: slices along axis 1, several components", function()
  local x = mf.tensor{{1, 2}, {3, 4}, {5, 6}}
  local y = mf.tensor({10, 20, 30}, "int64")
  local got = collect(Dataset.from_tensor_slices{x, y})
  T.eq(#got, 3)
  T.eq(got[2][1], {3, 4})
  T.eq(got[3][2], 30)
  local single = {}
  for v in Dataset.from_tensor_slices(y):iter() do single[#single + 1] = v:item() end
  T.eq(single, {10, 20, 30})
  local n = 0
  for v in Dataset.from_tensor_slices{{1, 2}, {3, 4}}:iter() do n = n + 1; T.eq(v.shape, {2}) end
  T.eq(n, 2)
end)

T.test("Dataset: batch sizes and drop_remainder", function()
  local ds = Dataset.from_tensor_slices{mf.range(1, 11), mf.range(11, 21)}
  local sizes = {}
  for x, y in ds:batch(4):iter() do
    sizes[#sizes + 1] = x.shape[1]
    T.eq(y, x + 10)
  end
  T.eq(sizes, {4, 4, 2})
  sizes = {}
  for x in ds:batch(4, {drop_remainder = true}):iter() do sizes[#sizes + 1] = #x end
  T.eq(sizes, {4, 4})
  local first = ds:batch(3):iter()()
  T.eq(first, {1, 2, 3})
  local m = Dataset.from_tensor_slices(mf.reshape(mf.range(1, 13), {6, 2}))
  local b = m:batch(2):iter()()
  T.eq(b.shape, {2, 2})
  T.eq(b, {{1, 2}, {3, 4}})
  local bb = m:batch(2):batch(3):iter()()
  T.eq(bb.shape, {3, 2, 2})
end)

T.test("Dataset: epochs", function()
  local ds = Dataset.from_tensor_slices(mf.range(1, 4))
  local seen = {}
  for v in ds:epochs(3):iter() do seen[#seen + 1] = v:item() end
  T.eq(seen, {1, 2, 3, 1, 2, 3, 1, 2, 3})
  local sizes = {}
  for v in ds:epochs(2):batch(4):iter() do sizes[#sizes + 1] = #v end
  T.eq(sizes, {4, 2})
  local count = 0
  for _ in ds:epochs():iter() do
    count = count + 1
    if count == 10 then break end
  end
  T.eq(count, 10)
  T.eq(tostring(ds:shuffle(3):batch(2):epochs()),
       "mf.data.Dataset: 3 rows, 1 component, shuffle(3) -> batch(2) -> epochs(forever)")
end)

local function order(ds)
  local o = {}
  for v in ds:iter() do
    for _, x in ipairs(v:totable()) do o[#o + 1] = x end
  end
  return o
end

T.test("Dataset: seeded shuffle is reproducible and reshuffles each epoch", function()
  local base = Dataset.from_tensor_slices(mf.range(1, 21))
  local a = order(base:shuffle(20, {seed = 7}):batch(5):epochs(2))
  local b = order(base:shuffle(20, {seed = 7}):batch(5):epochs(2))
  T.eq(a, b)
  T.eq(#a, 40)
  local e1, e2 = {table.unpack(a, 1, 20)}, {table.unpack(a, 21, 40)}
  local s1 = {table.unpack(e1)}
  table.sort(s1)
  T.eq(s1, order(base:batch(20)))
  T.ok(table.concat(e1, ",") ~= table.concat(e2, ","), "each epoch should be reshuffled")
  T.ok(table.concat(e1, ",") ~= table.concat(order(base:batch(20)), ","), "not shuffled")
  local c = order(base:shuffle(20, {seed = 8}):batch(5):epochs(2))
  T.ok(table.concat(a, ",") ~= table.concat(c, ","), "seeds 7 and 8 should differ")
  mf.random.seed(3)
  local d1 = order(base:shuffle(20):batch(20))
  mf.random.seed(3)
  T.eq(order(base:shuffle(20):batch(20)), d1)
  -- a small buffer only moves elements a bounded distance
  local small = order(base:shuffle(2, {seed = 1}):batch(20))
  T.ok(small[1] <= 2, "buffer 2: first element comes from the first two")
end)

T.test("Dataset: errors", function()
  T.raises(Dataset.from_tensor_slices,
           "component 2 has 2 rows along axis 1 but component 1 has 3",
           {mf.zeros{3, 2}, mf.zeros{2}})
  T.raises(Dataset.from_tensor_slices, "component 1 is a scalar", mf.tensor(1))
  T.raises(Dataset.from_tensor_slices, "component 2: expected a tensor", {mf.zeros{2}, "x"})
  local ds = Dataset.from_tensor_slices(mf.zeros{4})
  T.raises(ds.batch, "batch: the batch size must be a positive integer, got 0", ds, 0)
  T.raises(ds.batch, "unknown option 'drop'", ds, 2, {drop = true})
  T.raises(ds.batch, "option 'drop_remainder' must be a boolean", ds, 2, {drop_remainder = 1})
  T.raises(ds.shuffle, "shuffle: buffer_size must be a positive integer, got 1.5", ds, 1.5)
  T.raises(ds.shuffle, "option 'seed' must be an integer", ds, 4, {seed = "a"})
  T.raises(ds.epochs, "epochs: the number of epochs must be a non-negative integer or -1 "
           .. "(forever), got -2", ds, -2)
  local ragged = ds:batch(3):batch(2)
  T.raises(function() for _ in ragged:iter() do end end, "cannot stack batches of different sizes")
end)

for _, name in ipairs(tmpfiles) do os.remove(name) end
T.done()
