-- test_uint8.lua — dtype "uint8": creation with range checks, casts to and
-- from every dtype, printing, comparisons, the wrapping arithmetic
-- (add, subtract, multiply, maximum, minimum) against PyTorch's uint8
-- results (values pasted from /usr/bin/python3 with python3-torch), the
-- errors of the ops that refuse it, safetensors U8 (a file written from the
-- format's spec) and IDX unsigned bytes loading as uint8.
local T = dofile("tests/lua/harness.lua")

local a = mf.tensor({{0, 255, 17}, {3, 250, 128}}, "uint8")
local b = mf.tensor({{1, 2, 240}, {3, 10, 128}}, "uint8")

T.test("creation: zeros, ones, fill, tensor, constant, with range checks", function()
  local z = mf.zeros({2, 3}, "uint8")
  T.eq(z.dtype, "uint8")
  T.eq(z, {{0, 0, 0}, {0, 0, 0}})
  T.eq(mf.ones({2}, "uint8"), {1, 1})
  T.eq(mf.fill({2}, 255, "uint8"), {255, 255})
  T.eq(mf.constant(200, {dtype = "uint8"}):item(), 200)
  T.eq(a[1][2], 255)
  T.eq(math.type(a[1][2]), "integer")
  T.eq(mf.eye(2, {dtype = "uint8"}), {{1, 0}, {0, 1}})
  T.raises(function() mf.tensor({256}, "uint8") end, "tensor: 256 does not fit uint8 at data[1]")
  T.raises(function() mf.tensor({1, -1}, "uint8") end, "tensor: -1 does not fit uint8 at data[2]")
  T.raises(function() mf.fill({2}, 300, "uint8") end, "fill: the value 300 does not fit uint8")
  T.raises(function() mf.constant(-5, {dtype = "uint8"}) end, "constant: -5 does not fit uint8")
  T.raises(function() return a + 256 end,
           "add: the number 256 does not fit uint8 (the other operand's dtype)")
end)

T.test("arithmetic wraps as PyTorch's uint8", function()
  T.eq(a + b, {{1, 1, 1}, {6, 4, 0}})
  T.eq(a - b, {{255, 253, 33}, {0, 240, 0}})
  T.eq(a * b, {{0, 254, 240}, {9, 196, 0}})
  T.eq(mf.maximum(a, b), {{1, 255, 240}, {3, 250, 128}})
  T.eq(mf.minimum(a, b), {{0, 2, 17}, {3, 10, 128}})
  T.eq(a + 10, {{10, 9, 27}, {13, 4, 138}})
  T.eq((a + b).dtype, "uint8")
  T.eq(mf.clip_by_value(a, 3, 200), {{3, 200, 17}, {3, 200, 128}})
end)

T.test("comparisons (PyTorch's)", function()
  T.eq(mf.less(a, b), {{true, false, true}, {false, false, false}})
  T.eq(mf.equal(a, b), {{false, false, false}, {true, false, true}})
  T.eq(mf.greater_equal(a, b), {{false, true, false}, {true, true, true}})
  T.eq(mf.where(mf.greater(a, 100), a, b), {{1, 255, 240}, {3, 250, 128}})
end)

T.test("casts to and from every dtype", function()
  T.eq(mf.cast(mf.tensor({-1, 256, 513, 77}, "int32"), "uint8"), {255, 0, 1, 77})
  T.eq(mf.cast(mf.tensor({-300, 1000, 255}, "int64"), "uint8"), {212, 232, 255})
  T.eq(mf.cast(a, "float32") / 255,
       {{0, 1, 0.06666667014360428}, {0.0117647061124444, 0.9803921580314636, 0.501960813999176}},
       1e-7)
  T.eq(mf.cast(mf.tensor{true, false}, "uint8"), {1, 0})
  T.eq(mf.cast(a, "bool"), {{false, true, true}, {true, true, true}})
  T.eq(mf.cast(mf.tensor{0, 7.9, 254.5, 3.2}, "uint8"), {0, 7, 254, 3})
  -- out of range floats saturate and NaN is 0 (mf.cast's rule; C leaves them undefined)
  T.eq(mf.cast(mf.tensor({-3.5, 300, 0 / 0}, "float64"), "uint8"), {0, 255, 0})
  for _, dt in ipairs{"float32", "float64", "int32", "int64", "bool"} do
    local back = mf.cast(mf.cast(mf.tensor({0, 1, 200}, "uint8"), dt), "uint8")
    T.eq(back, dt == "bool" and {0, 1, 1} or {0, 1, 200}, nil, dt)
  end
end)

T.test("printing", function()
  T.eq(tostring(mf.tensor({0, 7, 255}, "uint8")), "[  0   7 255]\nshape=(3,), dtype=uint8")
  T.eq(a:totable(), {{0, 255, 17}, {3, 250, 128}})
end)

T.test("shape ops and graphs carry uint8", function()
  T.eq(mf.transpose(a), {{0, 3}, {255, 250}, {17, 128}})
  T.eq(mf.concat({a, b}, 1).shape, {4, 3})
  T.eq(mf.pad(mf.tensor({5}, "uint8"), {{1, 1}}), {0, 5, 0})
  T.eq(mf.gather(a, mf.tensor({2}, "int64")), {{3, 250, 128}})
  local g = mf.Graph()
  local ph, y
  g:as_default(function()
    ph = mf.placeholder("uint8", {-1, 3})
    y = mf.cast(ph + ph, "float32")
  end)
  T.eq(mf.Session(g):run(y, {[ph] = a}), {{0, 254, 34}, {6, 244, 0}})
end)

T.test("ops that do not take uint8 say so, naming the op and the dtype", function()
  T.raises(function() return a / b end, "divide: uint8 is not supported (add, subtract, "
           .. "multiply, maximum and minimum are): cast it first")
  T.raises(function() return a % 2 end, "mod: uint8 is not supported")
  T.raises(function() return -a end, "negative: expected a numeric dtype (float32, float64, "
           .. "int32, int64), got uint8")
  T.raises(function() mf.exp(a) end, "exp: expected a float dtype")
  T.raises(function() mf.reduce_sum(a) end, "reduce_sum: expected a numeric dtype")
  T.raises(function() mf.matmul(a, mf.transpose(a)) end, "matmul: expected a numeric dtype")
  T.raises(function() return a + mf.ones{2, 3} end, "add: dtypes differ: uint8 and float32")
  T.raises(function() mf.random.normal({2}, {dtype = "uint8"}) end,
           "random.normal: expected dtype float32 or float64, got uint8")
end)

-- A safetensors file as the format's spec lays it out: an 8-byte
-- little-endian header length, the JSON header, the data bytes.
local function safetensors_bytes(json, data)
  return string.pack("<I8", #json) .. json .. data
end

T.test("safetensors: U8 saved and loaded; a file from the spec loads as uint8", function()
  local p = os.tmpname()
  mf.save(p, {img = a})
  local back = mf.load(p).img
  T.eq(back.dtype, "uint8")
  T.eq(back, a:totable())
  local f = assert(io.open(p, "rb"))
  local bytes = f:read("a")
  f:close()
  T.ok(bytes:find('"dtype":"U8"', 1, true), "the header names U8")
  f = assert(io.open(p, "wb"))
  f:write(safetensors_bytes('{"x":{"dtype":"U8","shape":[2,2],"data_offsets":[0,4]}}',
                            string.char(9, 0, 255, 128)))
  f:close()
  local x = mf.load(p).x
  T.eq(x.dtype, "uint8")
  T.eq(x, {{9, 0}, {255, 128}})
  os.remove(p)
end)

T.test("IDX unsigned bytes load as uint8", function()
  local p = os.tmpname()
  local f = assert(io.open(p, "wb"))
  f:write(string.char(0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3, 0, 1, 2, 253, 254, 255))
  f:close()
  local t = mf.data.read_idx(p)
  os.remove(p)
  T.eq(t.dtype, "uint8")
  T.eq(t, {{0, 1, 2}, {253, 254, 255}})
  T.eq(mf.cast(t, "int64") + 1, {{1, 2, 3}, {254, 255, 256}})
end)

T.done()
