-- test_create.lua — mf.constant, zeros, ones, fill, zeros_like, ones_like, eye, range,
-- linspace and mf.random (seed, normal, uniform, truncated_normal, shuffle).
local T = dofile("tests/lua/harness.lua")

T.test("zeros and ones", function()
  local z = mf.zeros{2, 3}
  T.eq(z.shape, {2, 3}); T.eq(z.dtype, "float32"); T.eq(z, {{0, 0, 0}, {0, 0, 0}})
  local o = mf.ones({2}, "int64")
  T.eq(o.dtype, "int64"); T.eq(o, {1, 1})
  T.eq(mf.ones({3}, {dtype = "bool"}), {true, true, true})
  T.eq(mf.zeros({}).ndim, 0)
  T.eq(mf.zeros(4).shape, {4})
  T.eq(mf.zeros(mf.tensor({2, 2}, "int32")).shape, {2, 2})
  T.eq(mf.zeros{0, 5}:numel(), 0)
end)

T.test("absurd sizes are clear errors", function()
  T.raises(mf.zeros, "zeros: shape (1000000,1000000) of float32 is too large", {1e6, 1e6})
  T.raises(mf.ones, "ones: shape", {1e6, 1e6, 1e6})
  T.raises(mf.fill, "fill: shape", {1e7, 1e7}, 3)
  T.raises(mf.random.normal, "random.normal: shape (1000000,1000000) of float32 is too large",
           {1e6, 1e6})
  T.raises(mf.zeros, "shape entry 2 must be >= 0", {2, -1})
  -- the shared integer reader: a string "2" is not a size (it was taken before)
  T.raises(mf.zeros, "zeros: shape entry 1 must be an integer, got string", {"2"})
  T.raises(mf.zeros, "zeros: shape entry 2 must be an integer, got 2.5", {2, 2.5})
  T.raises(mf.ones, "ones: shape entry 1 must be an integer, got 1e+300", 1e300)
  T.eq(mf.zeros{2.0}.shape, {2})
  T.raises(mf.zeros, "unknown dtype 'float8'", {2}, "float8")
  T.raises(mf.zeros, "shape (array of integers) expected", "big")
end)

-- Issue #35: zeros{0, 2^40} was accepted but zeros{2^40, 0} "too large".
-- One rule (mf_shape_fits, help "zeros"): a 0 anywhere makes the shape
-- empty; its other dimensions multiply to at most 2^56.
T.test("empty shapes: one rule wherever the 0 stands", function()
  for _, shape in ipairs{{0, 2^40}, {2^40, 0}, {2^20, 0, 2^36}, {2^56, 0}, {0, 2^28, 2^28}} do
    local z = mf.zeros(shape)
    T.eq(z.shape, shape)
    T.eq(z:numel(), 0)
    T.eq(mf.ones(shape, "float64").shape, shape)
    T.eq(mf.fill(shape, 3).shape, shape)
    T.eq(mf.reshape(z, shape).shape, shape)
  end
  T.eq((mf.zeros{2^40, 0} + 1).shape, {2^40, 0})
  for _, shape in ipairs{{1 << 57, 0}, {0, 1 << 57}, {0, 1 << 30, 1 << 30}} do
    T.raises(mf.zeros, "zeros: shape (" .. table.concat(shape, ",") .. ") is too large: the "
             .. "dimensions other than 0 of an empty shape may multiply to at most 2^56", shape)
  end
  T.ok(T.help_text("mf.zeros"):find("{2^40, 0} are both accepted", 1, true), "help says so")
end)

-- Issue #35 H7: kernels walked every empty row of a (2^36, 0) tensor (mf.sort
-- took over a minute); an op whose inputs and outputs are all empty runs no
-- kernel. Each call here took seconds to minutes before.
T.test("ops on (2^36, 0) and (0, 2^36): no walk over empty rows", function()
  for _, shape in ipairs{{2^36, 0}, {0, 2^36}} do
    local x = mf.zeros(shape)
    local t0 = os.clock()
    T.eq(mf.sort(x).shape, shape)
    T.eq(mf.argsort(x).shape, shape)
    T.eq(mf.cumsum(x, 2).shape, shape)
    T.eq(mf.cumsum(x, 1, {reverse = true}).shape, shape)
    T.eq(mf.cumprod(x, 2).shape, shape)
    T.eq(mf.nn.softmax(x).shape, shape)
    T.eq(mf.nn.log_softmax(x).shape, shape)
    T.eq(mf.reverse(x, 2).shape, shape)
    T.eq(mf.transpose(x).shape, {shape[2], shape[1]})
    local values, indices = mf.top_k(x, 0)
    T.eq(values.shape, {shape[1], 0})
    T.eq(indices.shape, {shape[1], 0})
    T.ok(os.clock() - t0 < 5, "took " .. (os.clock() - t0) .. " s")
  end
end)

T.test("fill", function()
  local f = mf.fill({2, 2}, 7)
  T.eq(f.dtype, "float32"); T.eq(f, {{7, 7}, {7, 7}})
  T.eq(mf.fill({2}, true), {true, true})
  T.eq(mf.fill({2}, true).dtype, "bool")
  T.eq(mf.fill({2}, 3, "int32").dtype, "int32")
  T.eq(mf.fill({1}, 9007199254740993, "int64"), {9007199254740993})
  T.eq(mf.fill({2}, mf.tensor(5, "int64")).dtype, "int64")
  T.raises(mf.fill, "fill: the value for an integer dtype must be an integer, got 2.5",
           {2}, 2.5, "int32")
  T.raises(mf.fill, "fill: a boolean value does not fit dtype float32", {2}, true, "float32")
  T.raises(mf.fill, "fill: a number value does not fit dtype bool", {2}, 1, "bool")
  T.raises(mf.fill, "fill: the value 3000000000 does not fit int32", {2}, 3000000000, "int32")
  T.raises(mf.fill, "fill: expected a value as argument 2", {2})
  T.raises(mf.fill, "fill: value must be a number, a boolean or a one-element tensor",
           {2}, mf.tensor{1, 2})
end)

T.test("zeros_like and ones_like", function()
  local t = mf.tensor({{1, 2, 3}}, "int32")
  local z = mf.zeros_like(t)
  T.eq(z.dtype, "int32"); T.eq(z, {{0, 0, 0}})
  local o = mf.ones_like(t, "float64")
  T.eq(o.dtype, "float64"); T.eq(o, {{1, 1, 1}})
  T.eq(mf.ones_like({1, 2}), {1, 1})
  T.raises(mf.zeros_like, "bad argument #1", "x")
end)

T.test("constant", function()
  T.eq(mf.constant(3).ndim, 0)
  T.eq(mf.constant({1, 2, 3}, {dtype = "int64"}).dtype, "int64")
  T.eq(mf.constant({1, 2}, "float64").dtype, "float64")
  T.eq(mf.constant(3, {shape = {2, 2}}), {{3, 3}, {3, 3}})
  T.eq(mf.constant(true, {shape = {2}}), {true, true})
  T.eq(mf.constant(2, {shape = {3}, dtype = "int32"}).dtype, "int32")
  local r = mf.constant({1, 2, 3, 4, 5, 6}, {shape = {2, 3}, dtype = "int32"})
  T.eq(r, {{1, 2, 3}, {4, 5, 6}}); T.eq(r.dtype, "int32")
  T.eq(mf.constant({{1, 2}, {3, 4}}, {shape = {4}}), {1, 2, 3, 4})
  local t = mf.tensor{1, 2, 3, 4}
  T.ok(mf.constant(t) == t, "a tensor passes through")
  T.eq(mf.constant(t, {shape = {2, 2}}), {{1, 2}, {3, 4}})
  T.eq(mf.constant(mf.tensor(4), {shape = {2}}), {4, 4})
  T.eq(mf.constant(1, {name = "c"}), 1)
  T.raises(mf.constant, "constant: data has 5 element(s) (shape (5,)) but shape (2,3) needs 6",
           {1, 2, 3, 4, 5}, {shape = {2, 3}})
  T.raises(mf.constant, "constant: data has dtype float32 but dtype int32 was asked", t,
           {dtype = "int32"})
  T.raises(mf.constant, "constant: ragged data", {{1, 2}, {3}})
  T.raises(mf.constant, "constant: expected a number", {true}, {dtype = "float32"})
  T.raises(mf.constant, "constant: unknown option 'shpe'", 1, {shpe = {2}})
  T.raises(mf.constant, "constant: option 'name' must be a string", 1, {name = 3})
  T.raises(mf.constant, "constant' (number, boolean, table or mf.Tensor expected, got string)",
           "text")
  T.raises(mf.constant, "constant: option 'dtype' must be a dtype name", 1, {dtype = "quarter"})
end)

T.test("eye", function()
  T.eq(mf.eye(2), {{1, 0}, {0, 1}})
  local e = mf.eye(2, {num_columns = 3, dtype = "int32"})
  T.eq(e.dtype, "int32"); T.eq(e, {{1, 0, 0}, {0, 1, 0}})
  T.eq(mf.eye(3, 2), {{1, 0}, {0, 1}, {0, 0}})
  T.eq(mf.eye(0).shape, {0, 0})
  T.raises(mf.eye, "eye: sizes must be >= 0, got -1 x -1", -1)
  T.raises(mf.eye, "eye: n must be an integer, got 2.5", 2.5)
  T.raises(mf.eye, "eye: unknown option 'columns'", 2, {columns = 3})
end)

T.test("range", function()
  local r = mf.range(5)
  T.eq(r, {0, 1, 2, 3, 4}); T.eq(r.dtype, "int32")
  T.eq(mf.range(2, 5), {2, 3, 4})
  T.eq(mf.range(5, 0, -2), {5, 3, 1})
  T.eq(mf.range(0, 5, -1).shape, {0})
  local f = mf.range(1, 2, 0.25)
  T.eq(f.dtype, "float32"); T.eq(f, {1, 1.25, 1.5, 1.75})
  T.eq(mf.range(0.0, 3.0).dtype, "float32")
  T.eq(mf.range(3, {dtype = "int64"}).dtype, "int64")
  T.eq(mf.range(0, 3, 1, {dtype = "float64"}).dtype, "float64")
  T.eq(mf.range(0.0, 3.0, 1.0, {dtype = "int64"}), {0, 1, 2})
  T.raises(mf.range, "range: delta must not be 0", 0, 5, 0)
  T.raises(mf.range, "range: delta must not be 0", 0.0, 5.0, 0.0)
  T.raises(mf.range, "range: dtype int32 needs integer start, limit and delta", 0, 1, 0.5,
           {dtype = "int32"})
  T.raises(mf.range, "range: dtype bool is not a number type", 3, {dtype = "bool"})
  T.raises(mf.range, "range: expected a number as argument 1", "x")
  T.raises(mf.range, "does not fit int32", 0, 3000000000)
  T.raises(mf.range, "range: shape (1000000000000,) of float32 is too large", 0, 1e12, 1.0)
end)

T.test("linspace", function()
  local l = mf.linspace(0, 1, 5)
  T.eq(l.dtype, "float32"); T.eq(l, {0, 0.25, 0.5, 0.75, 1})
  T.eq(mf.linspace(2, 3, 1), {2})
  T.eq(mf.linspace(0, 1, 3, {dtype = "float64"}).dtype, "float64")
  T.raises(mf.linspace, "linspace: n must be >= 1, got 0", 0, 1, 0)
  T.raises(mf.linspace, "linspace: n must be an integer, got 2.5", 0, 1, 2.5)
  T.raises(mf.linspace, "linspace: expected float32 or float64, got int32", 0, 1, 3,
           {dtype = "int32"})
end)

local function same(a, b)
  local x, y = a:totable(), b:totable()
  for i = 1, #x do if x[i] ~= y[i] then return false end end
  return #x == #y
end

T.test("random: seeds make results reproducible", function()
  mf.random.seed(7)
  local a1, a2 = mf.random.normal{100}, mf.random.normal{100}
  mf.random.seed(7)
  local b1, b2 = mf.random.normal{100}, mf.random.normal{100}
  T.ok(same(a1, b1) and same(a2, b2), "same global seed, same sequence")
  T.ok(not same(a1, a2), "successive calls differ")
  mf.random.seed(8)
  T.ok(not same(mf.random.normal{100}, a1), "another global seed differs")
  local s1 = mf.random.uniform({50}, {seed = 3})
  mf.random.normal{10}
  local s2 = mf.random.uniform({50}, {seed = 3})
  T.ok(same(s1, s2), "an op seed does not depend on the call count")
  T.ok(not same(s1, mf.random.uniform({50}, {seed = 4})), "op seeds differ")
  T.ok(same(mf.random.shuffle(mf.range(20), {seed = 1}),
            mf.random.shuffle(mf.range(20), {seed = 1})), "shuffle seed")
end)

T.test("random.normal statistics", function()
  local x = mf.random.normal({100000}, {mean = 2, stddev = 3, dtype = "float64", seed = 1})
  T.eq(x.dtype, "float64")
  local s, s2, n = 0, 0, x:numel()
  for _, v in ipairs(x:totable()) do s = s + v; s2 = s2 + v * v end
  local mean = s / n
  T.eq(mean, 2, 0.05); T.eq(math.sqrt(s2 / n - mean * mean), 3, 0.05)
  T.eq(mf.random.normal{2, 3}.shape, {2, 3})
  T.eq(mf.random.normal({}).ndim, 0)
end)

T.test("random.uniform ranges", function()
  local u = mf.random.uniform({10000}, {minval = -2, maxval = 5, seed = 2})
  T.eq(u.dtype, "float32")
  for _, v in ipairs(u:totable()) do T.ok(v >= -2 and v < 5, "in [-2, 5): " .. v) end
  local d = mf.random.uniform({1000})
  for _, v in ipairs(d:totable()) do T.ok(v >= 0 and v < 1) end
  local i = mf.random.uniform({10000}, {minval = 1, maxval = 7, dtype = "int64", seed = 2})
  T.eq(i.dtype, "int64")
  local seen = {}
  for _, v in ipairs(i:totable()) do
    T.ok(math.type(v) == "integer" and v >= 1 and v < 7); seen[v] = true
  end
  for k = 1, 6 do T.ok(seen[k], "value " .. k .. " drawn") end
  T.raises(mf.random.uniform, "random.uniform: maxval is required for integer dtypes",
           {3}, {dtype = "int32"})
  T.raises(mf.random.uniform, "random.uniform: expected integer minval < maxval", {3},
           {minval = 5, maxval = 5, dtype = "int32"})
  T.raises(mf.random.uniform, "random.uniform: expected finite minval <= maxval", {3},
           {minval = 2, maxval = 1})
  T.raises(mf.random.uniform, "random.uniform: expected dtype float32, float64, int32 or int64",
           {3}, {dtype = "bool"})
  T.raises(mf.random.uniform, "random.uniform: option 'maxval' must be a number", {3},
           {maxval = "1"})
end)

T.test("random.truncated_normal stays within 2 stddev", function()
  local t = mf.random.truncated_normal({20000}, {mean = 1, stddev = 0.5, seed = 9})
  for _, v in ipairs(t:totable()) do T.ok(v >= 0 - 1e-6 and v <= 2 + 1e-6, "within: " .. v) end
  T.raises(mf.random.truncated_normal, "random.truncated_normal: expected dtype float32 or "
           .. "float64, got int32", {2}, {dtype = "int32"})
end)

T.test("random.shuffle permutes along axis 1", function()
  local x = mf.random.shuffle(mf.range(100), {seed = 5}):totable()
  local sorted = {}
  for k, v in ipairs(x) do sorted[k] = v end
  table.sort(sorted)
  for k = 1, 100 do T.eq(sorted[k], k - 1) end
  local m = mf.random.shuffle({{1, 1}, {2, 2}, {3, 3}}, {seed = 2}):totable()
  local rows = {}
  for _, row in ipairs(m) do T.eq(row[1], row[2]); rows[row[1]] = true end
  T.ok(rows[1] and rows[2] and rows[3], "every row kept")
  T.eq(mf.random.shuffle(mf.tensor(3)):item(), 3)
  T.raises(mf.random.shuffle, "random.shuffle: unknown option 'sed'", {1, 2}, {sed = 1})
  T.raises(mf.random.shuffle, "bad argument #2", {1, 2}, 5)
end)

T.test("random option errors", function()
  T.raises(mf.random.normal, "random.normal: unknown option 'std' (known: mean, stddev, "
           .. "dtype, seed)", {2}, {std = 2})
  T.raises(mf.random.normal, "random.normal: mean must be finite and stddev finite and >= 0",
           {2}, {stddev = -1})
  T.raises(mf.random.normal, "random.normal: option 'seed' must be an integer, got 1.5", {2},
           {seed = 1.5})
  T.raises(mf.random.seed, "random.seed: the seed must be an integer, got no value")
end)

T.done()
