-- test_csv_shapes.lua — mf.data.read_csv on the file shapes real CSV files
-- have (quotes, CRLF, a UTF-8 BOM, blank lines, no final newline, missing
-- values, huge and tiny numbers, long fields, hex, integer overflow). The
-- expected values are what Python's csv module and numpy.loadtxt give on
-- the same bytes (numpy 1.24), except where noted.
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

local read = mf.data.read_csv

T.test("read_csv: quoting, CRLF, BOM, blank lines, no final newline", function()
  -- csv.reader: [['a', 'b, c', 'd "q"'], ['1', '2.5', '3'], ['4', '5', '6']]
  local q = write_file('a,"b, c","d ""q"""\n1,"2.5","3"\n4,5,6\n')
  T.eq(read(q), {{1, 2.5, 3}, {4, 5, 6}})
  T.eq(read(q, {columns = {'d "q"', "b, c"}}), {{3, 2.5}, {6, 5}})
  T.eq(read(write_file("x,y\r\n1,2\r\n3,4\r\n")), {{1, 2}, {3, 4}})
  T.eq(read(write_file("\u{FEFF}x,y\n1,2\n"), {columns = {"x"}}), {{1}})
  T.eq(read(write_file("x,y\n\n1,2\n\n\n3,4\n\n")), {{1, 2}, {3, 4}})
  T.eq(read(write_file("x,y\n1,2\n3,4")), {{1, 2}, {3, 4}})
  T.eq(read(write_file(" x , y \n 1 , 2 \n")), {{1, 2}})
  T.eq(read(write_file("5")), {{5}})
end)

T.test("read_csv: a first data row with a missing value is not a header", function()
  -- Before: '1,,3\n4,5,6' gave [[4, 5, 6]]: the first row was taken for a
  -- header and dropped without a word. numpy.loadtxt: "could not convert
  -- string '' to float64 at row 0, column 2".
  T.raises(read, ":1: column 2: empty field (expected float32)", write_file("1,,3\n4,5,6\n"))
  T.raises(read, ":2: column 2: empty field", write_file("x,y\n1,\n3,4\n"))
  -- A header with an empty name (pandas' index column) is still a header.
  T.eq(read(write_file(",a,b\n0,1,2\n1,3,4\n")), {{0, 1, 2}, {1, 3, 4}})
  T.eq(read(write_file(",a,b\n0,1,2\n"), {columns = {"b"}}), {{2}})
end)

T.test("read_csv: huge, tiny and special numbers", function()
  local f = write_file("x,y\n1e308,1e-308\n-3.4e38,1e-40\nnan,-inf\n")
  local t = read(f, {dtype = "float64"})
  T.eq(t, {{1e308, 1e-308}, {-3.4e38, 1e-40}, {0 / 0, -1 / 0}})
  local s = read(f) -- float32, as numpy.loadtxt(dtype=float32): inf, 0, subnormal
  T.eq(s[1][1], 1 / 0)
  T.eq(s[1][2], 0)
  T.ok(s[2][2] > 0 and s[2][2] < 1.2e-38, "1e-40 stays a subnormal")
  -- A field longer than 127 characters is still a number (was: "expected a
  -- float32 number, got '0.000...'"); numpy reads 1e-131.
  local long = "0." .. string.rep("0", 130) .. "1"
  T.eq(read(write_file("x\n" .. long .. "\n"), {dtype = "float64"})[1][1], 1e-131,
       1e-145)
  T.eq(read(write_file("x\n" .. string.rep("0", 200) .. "7\n"), {dtype = "int64"}), {{7}})
end)

T.test("read_csv: hex is not a number (as in Python and numpy)", function()
  -- Before: '0x10' read as 16 (C's strtod); numpy: could not convert string '0x10'.
  T.raises(read, "column 1: expected a float32 number, got '0x10'",
           write_file("x\n0x10\n"))
  T.raises(read, "expected a float64 number, got '0x1p3'", write_file("x\n0x1p3\n"),
           {dtype = "float64"})
  T.raises(read, "expected an int64 number, got '0X7'", write_file("0X7\n"),
           {dtype = "int64", header = false})
end)

T.test("read_csv: integers out of range say so", function()
  local f = write_file("x\n3000000000\n")
  T.eq(read(f, {dtype = "int64"}), {{3000000000}})
  T.raises(read, ":2: column 1: '3000000000' is out of the int32 range (use dtype = \"int64\")",
           f, {dtype = "int32"})
  local g = write_file("x\n-99999999999999999999\n")
  T.raises(read, "'-99999999999999999999' is out of the int64 range", g, {dtype = "int64"})
  local h = write_file("x\n" .. string.rep("9", 40) .. "\n")
  T.raises(read, "is out of the int32 range", h, {dtype = "int32"})
  T.raises(read, "expected an int32 number, got '1.5'", write_file("x\n1.5\n"),
           {dtype = "int32"})
end)

T.test("read_csv: header only is a clear error", function()
  -- numpy.loadtxt warns and returns an empty array; read_csv refuses.
  T.raises(read, "has no data rows (only a header line)", write_file("x,y,z\n"))
  T.raises(read, "has no data rows (only a header line)", write_file("x,y,z"))
end)

T.test("read_csv: newlines inside quoted fields, as Python's csv module", function()
  -- Before: "unterminated quote". csv.reader gives
  -- [['a', 'b'], ['multi\nline', '2'], ['x', '3']].
  local f = write_file('a,b\n"multi\r\nline",2\n"x",3\n')
  T.eq(read(f, {columns = {"b"}}), {{2}, {3}})
  T.eq(read(write_file('"note\nwith, comma",b\n"1",2\n')), {{1, 2}}) -- in the header
  -- Messages name the line where the record starts; later lines count on.
  T.raises(read, ":2: column 1: expected a float32 number, got 'multi", f)
  T.raises(read, ":6: column 2: expected a float32 number, got 'zz'",
           write_file('a,b\n"1\n\n",2\n3,4\n5,zz\n'))
  -- A quote inside an unquoted field is text, as in Python ('5"' is 5 inches).
  T.eq(read(write_file('a,b\n5",1\n'), {columns = {2}}), {{1}})
  -- An unterminated quote is reported at the line where it opens.
  T.raises(read, ":2: column 1: unterminated quote", write_file('a,b\n"1,2\n3,4\n'))
end)

for _, name in ipairs(tmpfiles) do os.remove(name) end
T.done()
