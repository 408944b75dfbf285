-- test_stream_store.lua — elementwise calls that touch 20 MiB and more write
-- their results with non-temporal stores (core/ops/stream_store.h; a unary
-- op on 16 MiB on one thread, a binary op's 8 MiB pieces on two threads
-- stream, a unary op's 8 MiB pieces do not): the first elements up
-- to a 64-byte boundary and the last partial line with plain stores, the
-- lines between streamed. Every element must be what the same op gives on
-- pieces small enough to be stored as usual, on 1 and 2 threads (a piece of
-- a split call starts anywhere within a line), for the loops of binary_rows.h
-- (same shapes, a broadcast row, a scalar, a column, strided views) and of
-- unary_loop.h, float32 and float64.
local T = dofile("tests/lua/harness.lua")

-- 2^22 + 37 floats: 16 MiB and a partial line at the end
local N = 4194341
local PIECES = 5   -- each under 4 MiB: stored the usual way

local function same(got, want)
  return got.dtype == want.dtype and mf.reduce_all(mf.equal(got, want)):item()
end

-- f(inputs...) on the whole tensors, and on PIECES slices along axis 1
-- concatenated (inputs of one row along axis 1 are passed whole)
local function check(name, f, inputs)
  local big = f(table.unpack(inputs))
  local rows = big.shape[1]
  local parts, begin = {}, 1
  for k = 1, PIECES do
    local size = k < PIECES and rows // PIECES or rows - begin + 1
    local args = {}
    for i, x in ipairs(inputs) do
      if type(x) ~= "number" and #x.shape == #big.shape and x.shape[1] == rows then
        local b, s = {begin}, {size}
        for d = 2, #x.shape do b[d], s[d] = 1, -1 end
        args[i] = mf.slice(x, b, s)
      else
        args[i] = x
      end
    end
    parts[k] = f(table.unpack(args))
    begin = begin + size
  end
  T.ok(same(big, mf.concat(parts, 1)), name .. ": the large result differs from its pieces'")
end

for _, dtype in ipairs{"float32", "float64"} do
  local n = dtype == "float32" and N or N // 2 + 3   -- 16 MiB and a little in both
  local x = mf.cast(mf.random.uniform({n}, {minval = -4, maxval = 4, seed = 1}), dtype)
  local y = mf.cast(mf.random.uniform({n}, {minval = 0.5, maxval = 4, seed = 2}), dtype)
  T.test(dtype .. ": large binary and unary results equal their pieces', 1 and 2 threads",
    function()
      for threads = 1, 2 do
        mf.set_num_threads(threads)
        local tag = dtype .. ", " .. threads .. " thread(s): "
        for _, op in ipairs{"add", "subtract", "multiply", "divide", "maximum", "minimum",
                            "squared_difference"} do
          check(tag .. op, mf[op], {x, y})
        end
        check(tag .. "x * 3", function(a) return a * 3 end, {x})
        check(tag .. "2 - x", function(a) return 2 - a end, {x})
        for _, op in ipairs{"sign", "floor", "ceil", "abs", "negative", "square",
                            "reciprocal"} do
          check(tag .. op, mf[op], {x})
        end
        -- a row broadcast over rows of 7 (no row starts on a line), a column
        local rows = n // 7
        local m = mf.slice(x, {1}, {rows * 7}):reshape{rows, 7}
        local row = mf.slice(y, {1}, {7})
        check(tag .. "rows * row", mf.multiply, {m, row})
        check(tag .. "row - rows", mf.subtract, {row, m})
        local col = mf.slice(y, {1}, {rows}):reshape{rows, 1}
        check(tag .. "rows + column", mf.add, {m, col})
        -- strided inputs (the row walk's general loop) and a strided unary input
        local tr = mf.transpose(mf.slice(x, {1}, {rows * 7}):reshape{7, rows})
        check(tag .. "transposed * rows", mf.multiply, {tr, m})
        check(tag .. "floor(transposed)", mf.floor, {tr})
      end
      mf.set_num_threads(1)
    end)
end

T.test("sign keeps NaN, +-0, +-inf and subnormals in a large result", function()
  local special = {0 / 0, -0.0, 0.0, math.huge, -math.huge, 1e-45, -1e-45, 3, -2}
  local v = {}
  for i = 1, N do v[i] = special[(i - 1) % #special + 1] end
  local s = mf.sign(mf.tensor(v)):totable()
  local want = {nil, 0, 0, 1, -1, 1, -1, 1, -1}
  for i = 1, N, 997 do
    local k = (i - 1) % #special + 1
    if k == 1 then
      T.ok(s[i] ~= s[i], "sign(nan) at " .. i)
    elseif s[i] ~= want[k] or (want[k] == 0 and 1 / s[i] < 0) then
      error(string.format("sign(%g) at %d: %g", special[k], i, s[i]))
    end
  end
end)

T.done()
