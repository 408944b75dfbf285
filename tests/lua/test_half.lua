-- test_half.lua — float16 and bfloat16 as storage dtypes (issue #32): casts
-- rounding to nearest even against PyTorch's bytes (tests/lua/data/
-- half_torch.safetensors, written by gen_half_torch.py) and NumPy (live),
-- printing with float16's own shortest digits, safetensors F16/BF16 files,
-- ops computed in float32 (core/half_call.c) in both modes with gradients,
-- and the clear errors.
local T = dofile("tests/lua/harness.lua")

local function tpath(name) return os.tmpname() .. "_" .. name end

-- The index and values of the first element where two tensors' values
-- differ (NaN equals NaN; +0 and -0 differ), or nil.
local function first_difference(a, b)
  local x, y = mf.cast(a, "float64"):totable(), mf.cast(b, "float64"):totable()
  if #x ~= #y then return 0, #x, #y end
  for i = 1, #x do
    local same = x[i] == y[i] and (x[i] ~= 0 or 1 / x[i] == 1 / y[i]) or
                 (x[i] ~= x[i] and y[i] ~= y[i])
    if not same then return i, x[i], y[i] end
  end
end

local function same_values(a, b, what)
  local i, x, y = first_difference(a, b)
  T.ok(not i, string.format("%s: element %s is %s, expected %s", what, i, x, y))
end

local torch_file = mf.load("tests/lua/data/half_torch.safetensors")

T.test("the dtypes: names, sizes, the 'half' alias", function()
  local h = mf.tensor({1, 2}, "float16")
  T.eq(h.dtype, "float16")
  T.eq(mf.zeros({2}, "half").dtype, "float16")
  T.eq(mf.ones({2, 2}, "bfloat16").dtype, "bfloat16")
  T.eq(mf.ones({2, 2}, "bfloat16"):totable(), {{1, 1}, {1, 1}})
  T.eq(mf.eye(2, 2, "float16"):totable(), {{1, 0}, {0, 1}})
  T.eq(h[1], 1)
end)

T.test("float32 -> float16 and bfloat16: PyTorch's bytes for every class", function()
  local x = torch_file.x
  T.eq(torch_file.f16.dtype, "float16")
  T.eq(torch_file.bf16.dtype, "bfloat16")
  same_values(mf.cast(x, "float16"), torch_file.f16, "float16")
  same_values(mf.cast(x, "bfloat16"), torch_file.bf16, "bfloat16")
  -- a strided view takes the scalar path, a contiguous tensor F16C's: same bits
  local x2 = mf.reshape(x, {2, -1})
  same_values(mf.reshape(mf.transpose(mf.cast(mf.transpose(x2), "float16")), {-1}),
              torch_file.f16, "float16 through a transposed view")
  -- and back: widening is exact
  same_values(mf.cast(torch_file.f16, "float32"),
              mf.cast(mf.cast(torch_file.f16, "float64"), "float32"), "float16 -> float32")
end)

local python = "/usr/bin/python3"
local function numpy_floats(code)
  local p = tpath("half.py")
  local f = assert(io.open(p, "w"))
  f:write("import numpy as np, sys\n", code)
  f:close()
  local pipe = assert(io.popen(python .. " " .. p))
  local out = pipe:read("a")
  assert(pipe:close(), "python failed: " .. out)
  os.remove(p)
  local v = {}
  local special = {nan = 0 / 0, inf = math.huge, ["-inf"] = -math.huge}
  for w in out:gmatch("%S+") do v[#v + 1] = special[w] or tonumber(w) end
  return v
end

T.test("every float16 bit pattern widens as NumPy's astype(float32)", function()
  -- the 65536 patterns, as float16 from their bytes, widened by NumPy
  local want = numpy_floats([[
h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
sys.stdout.write(" ".join(repr(float(v)) for v in h.astype(np.float32)))
]])
  T.eq(#want, 65536)
  local p = tpath("all.safetensors")
  -- the same patterns written by moonflow: from uint16 ids through F16's bytes
  local f = assert(io.open(p, "wb"))
  local header = '{"h":{"dtype":"F16","shape":[65536],"data_offsets":[0,131072]}}'
  local parts = {string.pack("<I8", #header), header}
  for i = 0, 65535 do parts[#parts + 1] = string.pack("<I2", i) end
  f:write(table.concat(parts))
  f:close()
  local got = mf.cast(mf.load(p).h, "float64"):totable()
  os.remove(p)
  for i = 1, 65536 do
    local a, b = got[i], want[i]
    T.ok(a == b and (a ~= 0 or 1 / a == 1 / b) or (a ~= a and b ~= b),
         string.format("pattern 0x%04x: %s, NumPy %s", i - 1, a, b))
  end
end)

T.test("float64 -> float16 rounds once, as NumPy's astype", function()
  -- just above a float16 tie: through float32 it would become the tie and
  -- round to even (down); once, it rounds up
  local xs = {1 + 2^-11 + 2^-40, 1 + 3 * 2^-11 - 2^-40, 2^-25 + 2^-60, 0.1, 65519.99999, -1e-300}
  local parts = {}
  for i, v in ipairs(xs) do parts[i] = string.format("%.17g", v) end
  local want = numpy_floats("x = np.array([" .. table.concat(parts, ", ") .. "])\n" ..
    "sys.stdout.write(' '.join(repr(float(v)) for v in x.astype(np.float16)))\n")
  local got = mf.cast(mf.tensor(xs, "float64"), "float16")
  same_values(got, mf.tensor(want, "float64"), "cast from float64")
  T.eq(got[1], 1 + 2^-10)   -- rounded up, not to the even 1
  same_values(mf.tensor(xs, "float16"), mf.tensor(want, "float64"), "mf.tensor(t, 'float16')")
end)

T.test("printing: the shortest digits that read back in the dtype (NumPy's)", function()
  local h = mf.tensor({0.1, 1 / 3, 65504, -2.5}, "float16")
  T.ok(tostring(h):find("[ 1.000e-01  3.333e-01  6.550e+04 -2.500e+00]", 1, true), tostring(h))
  T.ok(tostring(mf.tensor({0.1, 0.5}, "float16")):find("[0.1 0.5]", 1, true))
  T.ok(tostring(mf.tensor({0.1, 0.5}, "bfloat16")):find("[0.1 0.5]", 1, true))
  T.eq(mf.tensor({0.1}, "float16"):totable()[1], 0.0999755859375)
end)

T.test("safetensors: F16 and BF16 saved and loaded bit for bit", function()
  local p = tpath("h.safetensors")
  mf.save(p, {a = torch_file.f16, b = torch_file.bf16})
  local t = mf.load(p)
  os.remove(p)
  T.eq(t.a.dtype, "float16")
  T.eq(t.b.dtype, "bfloat16")
  same_values(t.a, torch_file.f16, "F16 round trip")
  same_values(t.b, torch_file.bf16, "BF16 round trip")
end)

T.test("ops compute in float32 and give the half dtype back", function()
  local x = mf.tensor({0.5, -1.25, 3, 1000}, "float32")
  local h = mf.cast(x, "float16")
  local want = mf.cast(mf.exp(mf.cast(h, "float32")), "float16")
  same_values(mf.exp(h), want, "exp")
  T.eq(mf.exp(h).dtype, "float16")
  T.eq((h + h).dtype, "float16")
  T.eq((h * 2):totable(), {1, -2.5, 6, 2000})
  T.eq(mf.reduce_sum(h):item(), 1002)   -- 1002.25 in float32, a tie in float16: even
  local b = mf.cast(mf.tensor{{1, 2}, {3, 4}}, "bfloat16")
  T.eq(mf.matmul(b, b).dtype, "bfloat16")
  T.eq(mf.matmul(b, b):totable(), {{7, 10}, {15, 22}})
  T.eq(mf.argmax(h):item(), 4)       -- integer outputs stay integers
  T.eq(mf.greater(h, 0).dtype, "bool")
end)

T.test("traced graphs and gradients through half tensors", function()
  local f = mf.trace(function(a) return mf.tanh(a) * 2 end)
  local h = mf.tensor({0.5, 1}, "float16")
  same_values(f(h), mf.tanh(h) * 2, "traced")
  T.eq(f(h).dtype, "float16")
  local v = mf.Variable({1.0, 2.0})
  local tape = mf.GradientTape()
  local y = mf.reduce_sum(mf.cast(mf.cast(v, "float16") * 3, "float32"))
  T.eq(tape:gradient(y, v), {3, 3})
  local tape2 = mf.GradientTape()
  local b = mf.tensor({0.5, 1}, "bfloat16")
  tape2:watch(b)
  local z = mf.reduce_sum(mf.square(b))
  local g = tape2:gradient(z, b)
  T.eq(g.dtype, "bfloat16")
  T.eq(g, {1, 2})
end)

T.test("errors: mixing dtypes, Variables, unknown names", function()
  local h = mf.tensor({1}, "float16")
  T.raises(function() return h + mf.tensor({1}, "float32") end,
           "add: input 2 is float32 and another is float16: cast one")
  T.raises(function() return h + mf.tensor({1}, "bfloat16") end,
           "add: input 2 is bfloat16 and another is float16")
  T.raises(function() mf.Variable(h) end, "Variable: float16 is a storage dtype")
  T.raises(function() mf.cast(h, "float8") end,
           "dtype must be a dtype name (float32, float64, int32, int64, bool, uint8, float16 or " ..
           "bfloat16), got float8")
end)

T.done()
