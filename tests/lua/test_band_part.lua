-- test_band_part.lua — mf.linalg.band_part (tf.linalg.band_part), mf.tril and
-- mf.triu (torch.tril / torch.triu; the op is Trilu): TensorFlow's documented
-- example literals, TensorFlow's own test (matrix_band_part_op_test.py:
-- the band is np.tril(np.triu(m, -lower), upper) for every lower, upper in
-- -1, 0, 1, n - 1, over batches) written out with numpy's rule as a Lua
-- reference, numpy.tril / numpy.triu live for every offset, NaN and Inf kept
-- in place, any dtype, gradients (the band of dy; gradchecks), graph mode
-- with unknown dims, errors.
local T = dofile("tests/lua/harness.lua")

local python = "/usr/bin/python3"
local have_numpy = os.execute(python .. " -c 'import numpy' 2>/dev/null")

T.test("tf.linalg.band_part's documented example", function()
  local x = mf.tensor{{0, 1, 2, 3}, {-1, 0, 1, 2}, {-2, -1, 0, 1}, {-3, -2, -1, 0}}
  T.eq(mf.linalg.band_part(x, 1, -1),
       {{0, 1, 2, 3}, {-1, 0, 1, 2}, {0, -1, 0, 1}, {0, 0, -1, 0}})
  T.eq(mf.linalg.band_part(x, 2, 1),
       {{0, 1, 0, 0}, {-1, 0, 1, 0}, {-2, -1, 0, 1}, {0, -2, -1, 0}})
  -- "Useful special cases": the upper triangle, the lower triangle, the diagonal
  local m = mf.reshape(mf.range(1, 13), {3, 4})
  T.eq(mf.linalg.band_part(m, 0, -1), {{1, 2, 3, 4}, {0, 6, 7, 8}, {0, 0, 11, 12}})
  T.eq(mf.linalg.band_part(m, -1, 0), {{1, 0, 0, 0}, {5, 6, 0, 0}, {9, 10, 11, 0}})
  T.eq(mf.linalg.band_part(m, 0, 0), {{1, 0, 0, 0}, {0, 6, 0, 0}, {0, 0, 11, 0}})
end)

-- numpy's tril / triu on one matrix (a nested table): element (i, j) kept
-- when j - i <= k (tril) or j - i >= k (triu).
local function np_tri(m, k, upper)
  local r = {}
  for i = 1, #m do
    r[i] = {}
    for j = 1, #m[i] do
      local keep = upper and j - i >= k or (not upper and j - i <= k)
      r[i][j] = keep and m[i][j] or 0
    end
  end
  return r
end

T.test("TensorFlow's test: band = tril(triu(m, -lower), upper), batched", function()
  for _, shape in ipairs{{1, 1}, {1, 2}, {3, 1}, {4, 4}, {3, 5}, {5, 3}} do
    for _, batch in ipairs{{}, {2}, {2, 3}} do
      local rows, cols = shape[1], shape[2]
      local m = {}
      for i = 1, rows do
        m[i] = {}
        for j = 1, cols do m[i][j] = 10 * i + j end
      end
      local full = {table.unpack(batch)}
      full[#full + 1], full[#full + 2] = rows, cols
      local x = mf.broadcast_to(mf.tensor(m, "int32"), full)
      for _, lower in ipairs{-1, 0, 1, rows - 1} do
        for _, upper in ipairs{-1, 0, 1, cols - 1} do
          local want = m
          if lower >= 0 then want = np_tri(want, -lower, true) end
          if upper >= 0 then want = np_tri(want, upper, false) end
          local got = mf.linalg.band_part(x, lower, upper)
          T.eq(got.shape, full)
          T.eq(mf.reshape(got, {-1, rows, cols})[1], want, 0,
               string.format("shape {%d,%d} lower %d upper %d", rows, cols, lower, upper))
          T.eq(got, mf.broadcast_to(mf.tensor(want, "int32"), full))
        end
      end
    end
  end
end)

T.test("tril and triu against numpy.tril / numpy.triu, every offset", function()
  if not have_numpy then print("skipped: no numpy for " .. python) return end
  local x = mf.random.normal({2, 3, 4, 6}, {dtype = "float64", seed = 28})
  local dir = os.tmpname()
  mf.save(dir, {x = x})
  local script = [==[
import json, struct, sys
import numpy as np
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8 + n])["x"]
x = np.frombuffer(raw[8 + n + h["data_offsets"][0]:8 + n + h["data_offsets"][1]], "<f8")
x = x.reshape(h["shape"])
for k in range(-5, 8):
    for f in (np.tril, np.triu):
        print(" ".join(repr(v) for v in f(x, k).ravel()))
]==]
  local sp = dir .. ".py"
  local f = assert(io.open(sp, "w"))
  f:write(script)
  f:close()
  local pipe = io.popen(python .. " '" .. sp .. "' '" .. dir .. "' 2>&1")
  local lines = {}
  for line in pipe:lines() do lines[#lines + 1] = line end
  assert(pipe:close(), table.concat(lines, "\n"))
  os.remove(sp)
  os.remove(dir)
  local i = 0
  for k = -5, 7 do
    for _, fn in ipairs{mf.tril, mf.triu} do
      i = i + 1
      local want = {}
      for v in lines[i]:gmatch("%S+") do want[#want + 1] = tonumber(v) end
      T.eq(mf.reshape(fn(x, k), {-1}), want, 0, (fn == mf.tril and "tril " or "triu ") .. k)
    end
  end
  T.eq(mf.tril(x), mf.tril(x, 0))
  T.eq(mf.triu(x, {diagonal = 2}), mf.triu(x, 2))
end)

T.test("kept NaN and Inf stay, masked ones are zeros; any dtype", function()
  local nan, inf = 0 / 0, math.huge
  local x = mf.tensor{{nan, inf}, {-inf, nan}}
  local lo = mf.tril(x):totable()
  T.ok(lo[1][1] ~= lo[1][1] and lo[1][2] == 0 and lo[2][1] == -inf and lo[2][2] ~= lo[2][2])
  T.eq(mf.triu(x, 1), {{0, inf}, {0, 0}})
  T.eq(mf.linalg.band_part(mf.tensor({{true, true}, {true, true}}), 0, 0),
       {{true, false}, {false, true}})
  T.eq(mf.tril(mf.ones({2, 2}, "int64")).dtype, "int64")
  T.eq(mf.triu(mf.ones({3, 3}, "uint8"), 1), {{0, 1, 1}, {0, 0, 1}, {0, 0, 0}})
  T.eq(mf.tril(mf.zeros{0, 3}).shape, {0, 3})
  T.eq(mf.tril(mf.ones{2, 2}, math.maxinteger), {{1, 1}, {1, 1}})
  T.eq(mf.triu(mf.ones{2, 2}, math.maxinteger), {{0, 0}, {0, 0}})
  T.eq(mf.tril(mf.ones{2, 2}, math.mininteger), {{0, 0}, {0, 0}})
  -- a transposed view reads through its strides
  local m = mf.reshape(mf.range(1, 7), {2, 3})
  T.eq(mf.tril(mf.transpose(m)), {{1, 0}, {2, 5}, {3, 6}})
end)

T.test("gradients: the band of dy; gradchecks; graph mode", function()
  local x = mf.random.normal({2, 3, 4}, {dtype = "float64", seed = 3})
  local w = mf.random.normal({2, 3, 4}, {dtype = "float64", seed = 4})
  local g = mf.grad(function(v) return mf.reduce_sum(mf.linalg.band_part(v, 1, 0) * w) end)(x)
  T.eq(g, mf.linalg.band_part(w, 1, 0))
  T.eq(mf.grad(function(v) return mf.reduce_sum(mf.triu(v, 1) * w) end)(x), mf.triu(w, 1))
  for _, f in ipairs{
    function(v) return mf.reduce_sum(mf.sin(mf.linalg.band_part(v, 0, 2))) end,
    function(v) return mf.reduce_sum(mf.sin(mf.tril(v, -1))) end,
    function(v) return mf.reduce_sum(mf.sin(mf.triu(v))) end,
  } do
    local ok, msg = mf.test.gradcheck(f, {x})
    T.ok(ok, msg)
  end
  local gr = mf.Graph()
  local p, y, dy
  gr:as_default(function()
    p = mf.placeholder("float64", {-1, -1, 4})
    y = mf.tril(p, 1)
    dy = mf.gradients(mf.reduce_sum(y * y), {p})[1]
  end)
  local out = mf.Session(gr):run({y, dy}, {[p] = x})
  T.eq(out[1], mf.tril(x, 1))
  T.eq(out[2], mf.tril(x, 1) * 2)
end)

T.test("errors name the function", function()
  T.raises(mf.linalg.band_part, "linalg.band_part: expected a matrix or a batch of matrices "
           .. "(rank 2 or more), got shape (3,) (rank 1)", mf.ones{3}, -1, 0)
  T.raises(mf.linalg.band_part, "linalg.band_part: num_lower and num_upper must be -1 (the "
           .. "whole triangle) or >= 0, got -2 and 0", mf.ones{3, 3}, -2, 0)
  T.raises(mf.tril, "tril: expected a matrix or a batch of matrices (rank 2 or more), got "
           .. "shape () (rank 0)", mf.tensor(1))
  T.raises(mf.triu, "triu: expected a matrix", mf.ones{2})
  T.raises(mf.linalg.band_part, "num_upper", mf.ones{3, 3}, 1)
  T.raises(mf.tril, "tril: unknown option 'k'", mf.ones{3, 3}, {k = 1})
end)

T.done()
