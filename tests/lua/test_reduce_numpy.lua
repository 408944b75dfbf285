-- test_reduce_numpy.lua — reduce_max, reduce_min, reduce_prod, reduce_sum and
-- reduce_mean against NumPy (/usr/bin/python3, called live) on random shapes,
-- axes and layouts (transposed views), float32 and float64, with a NaN in some
-- inputs. The shapes have rows longer than the kernels' vectors (32 lanes)
-- with tails, so the vector bodies, the lane trees and the scalar tails all
-- run. Both sides make the same values from the element index (an integer
-- formula, exact in double), so only the shapes travel to Python.
-- Max and min must equal NumPy's bit for bit (NaN where NumPy has NaN); sums,
-- means and products are compared with NumPy's float64 result: float32 sums
-- and means within u |s| + 8 u sum|x| (u = 2^-24: the final rounding, and the
-- at most 7 float additions an element sees before it reaches a double
-- accumulator, reduce_walk.c), products within 2 ulp of float32 (they
-- accumulate in double); float64 within 1e-12 relative to the sum of
-- magnitudes (another order of additions). A last test compares the error
-- of float32 sums with that of NumPy's own float32 sums.
local T = dofile("tests/lua/harness.lua")

local python = "/usr/bin/python3"
local have_numpy = os.execute(python .. " -c 'import numpy' 2>/dev/null")

local SIZES = {1, 2, 3, 7, 31, 32, 33, 64, 70, 257}
local KINDS = {"max", "min", "prod", "sum", "mean"}
local REDUCE = {max = mf.reduce_max, min = mf.reduce_min, prod = mf.reduce_prod,
                sum = mf.reduce_sum, mean = mf.reduce_mean}

-- the value of element i (0-based, row-major before any transpose): the
-- same double in Lua and NumPy; products get values near 1
local function value(i, kind)
  local v = ((i * 7919) % 10007) / 10007
  if kind == "prod" then return 0.9 + 0.2 * v end
  return v * 8 - 4
end

local function random_case(rng, kind, dtype)
  local rank = rng(1, 4)
  local shape, n = {}, 1
  repeat
    shape, n = {}, 1
    for d = 1, rank do shape[d] = SIZES[rng(1, #SIZES)]; n = n * shape[d] end
  until n <= 60000 and (kind ~= "prod" or n <= 20000)
  local perm = {}
  for d = 1, rank do perm[d] = d end
  if rng(1, 2) == 1 then -- a transposed view: strided input
    for d = rank, 2, -1 do local j = rng(1, d); perm[d], perm[j] = perm[j], perm[d] end
  end
  local axes = {}
  for d = 1, rank do if rng(1, 2) == 1 then axes[#axes + 1] = d end end
  if #axes == 0 and rng(1, 2) == 1 then axes = nil end -- nil: every axis
  local nan = (kind == "max" or kind == "min") and rng(1, 3) == 1 and rng(0, n - 1) or -1
  return {kind = kind, dtype = dtype, shape = shape, perm = perm, axes = axes, nan = nan, n = n}
end

local function input(c)
  local flat = {}
  for i = 0, c.n - 1 do flat[i + 1] = i == c.nan and 0 / 0 or value(i, c.kind) end
  local x = mf.reshape(mf.tensor(flat, c.dtype), c.shape)
  return mf.transpose(x, c.perm)
end

local function flatten(t, out)
  if type(t) ~= "table" then out[#out + 1] = t; return out end
  for _, v in ipairs(t) do flatten(v, out) end
  return out
end

local py = [==[
import sys
import numpy as np
for line in open(sys.argv[1]):
    kind, dtype, shape, perm, axes, nan = line.split()
    shape = [int(s) for s in shape.split(",")]
    perm = [int(p) - 1 for p in perm.split(",")]
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    v = ((i * 7919) % 10007) / 10007
    v = 0.9 + 0.2 * v if kind == "prod" else v * 8 - 4
    if int(nan) >= 0:
        v[int(nan)] = np.nan
    x = np.transpose(v.astype(dtype).reshape(shape), perm)
    ax = None if axes == "all" else tuple(int(a) - 1 for a in axes.split(",") if a)
    if kind in ("max", "min"):
        r = getattr(np, kind)(x, axis=ax) if x.size else np.zeros(0)
    else:
        r = getattr(np, kind)(x.astype(np.float64), axis=ax)
    print(" ".join(float(e).hex() for e in np.ravel(r)))
]==]

local function numpy_results(cases)
  local dir = os.tmpname()
  os.remove(dir)
  local cf, sf = dir .. ".cases", dir .. ".py"
  local f = assert(io.open(cf, "w"))
  for _, c in ipairs(cases) do
    f:write(string.format("%s %s %s %s %s %d\n", c.kind, c.dtype, table.concat(c.shape, ","),
                          table.concat(c.perm, ","), c.axes and (table.concat(c.axes, ",")
                          .. ",") or "all", c.nan))
  end
  f:close()
  f = assert(io.open(sf, "w")); f:write(py); f:close()
  local pipe = io.popen(python .. " " .. sf .. " " .. cf .. " 2>&1")
  local out = pipe:read("a")
  local ok = pipe:close()
  os.remove(cf); os.remove(sf)
  assert(ok, "python failed:\n" .. out)
  local lines = {}
  for line in out:gmatch("[^\n]*\n") do
    local vals = {}
    for w in line:gmatch("%S+") do vals[#vals + 1] = tonumber(w) or (w:find("nan") and 0 / 0) end
    lines[#lines + 1] = vals
  end
  return lines
end

local function describe(c)
  return string.format("reduce_%s %s shape {%s} perm {%s} axes %s nan at %d", c.kind, c.dtype,
                       table.concat(c.shape, ","), table.concat(c.perm, ","),
                       c.axes and "{" .. table.concat(c.axes, ",") .. "}" or "all", c.nan)
end

-- the sum (or mean) of the magnitudes: the scale of a float64 sum's error
local function magnitudes(c, x)
  return flatten(REDUCE[c.kind](mf.abs(x), c.axes):totable(), {})
end

local function check(c, want)
  local x = input(c)
  local got = flatten(REDUCE[c.kind](x, c.axes):totable(), {})
  T.eq(#got, #want, nil, describe(c) .. ": element count")
  local mag = (c.kind == "sum" or c.kind == "mean") and magnitudes(c, x)
  for i = 1, #got do
    local g, w = got[i], want[i]
    local ok
    if c.kind == "max" or c.kind == "min" then
      ok = (g ~= g and w ~= w) or g == w
    elseif c.dtype == "float32" and mag then
      ok = math.abs(g - w) <= 2 ^ -24 * (math.abs(w) + 8 * mag[i])
    elseif c.dtype == "float32" then
      ok = math.abs(g - w) <= 2 * 2 ^ -23 * math.abs(w)
    else
      ok = math.abs(g - w) <= 1e-12 * (mag and mag[i] or math.abs(w))
    end
    if not ok then
      error(string.format("%s: element %d is %a, NumPy %a", describe(c), i, g, w), 2)
    end
  end
end

T.test("max, min, prod, sum, mean: NumPy's values on random shapes, axes and layouts", function()
  if not have_numpy then print("skipped: no numpy for " .. python) return end
  local seed = 29
  local function rng(lo, hi) -- a small LCG: the same cases on every run
    seed = (seed * 1103515245 + 12345) % 2147483648
    return lo + seed % (hi - lo + 1)
  end
  local cases = {}
  for _, dtype in ipairs{"float32", "float64"} do
    for _, kind in ipairs(KINDS) do
      for _ = 1, 12 do cases[#cases + 1] = random_case(rng, kind, dtype) end
    end
  end
  local want = numpy_results(cases)
  T.eq(#want, #cases, nil, "NumPy's result lines")
  for k, c in ipairs(cases) do check(c, want[k]) end
end)

T.test("max and min of long rows and columns: a NaN in any lane or tail wins", function()
  -- rows of 300 (9 blocks of 32 lanes and a tail of 12) and columns of 70
  -- rows (9 blocks of 32 columns and a tail of 12): the NaN in the first,
  -- a middle and the last lane of a block, and in the tail
  local flat = {}
  for i = 0, 300 * 70 - 1 do flat[i + 1] = value(i, "max") end
  for _, dtype in ipairs{"float32", "float64"} do
    for _, r in ipairs{0, 8, 69} do
      for _, col in ipairs{0, 5, 31, 32, 63, 255, 256, 287, 288, 295, 299} do
        local pos = r * 300 + col
        flat[pos + 1] = 0 / 0
        local x = mf.reshape(mf.tensor(flat, dtype), {70, 300})
        flat[pos + 1] = value(pos, "max")
        for _, f in ipairs{mf.reduce_max, mf.reduce_min} do
          local rows, cols = f(x, 2):totable(), f(x, 1):totable()
          local where = string.format("%s, NaN at row %d column %d", dtype, r + 1, col + 1)
          T.ok(rows[r + 1] ~= rows[r + 1], where .. ": its row")
          T.ok(cols[col + 1] ~= cols[col + 1], where .. ": its column")
          T.ok(rows[(r + 1) % 70 + 1] == rows[(r + 1) % 70 + 1], where .. ": another row")
          T.ok(cols[(col + 1) % 300 + 1] == cols[(col + 1) % 300 + 1], where .. ": another column")
        end
      end
    end
  end
end)

-- NumPy's float32 sums on (128, 64, 128): the error of each output element
-- relative to its sum of magnitudes, the largest over the elements
local np_float32_errors = [==[
import sys
import numpy as np
i = np.arange(128 * 64 * 128, dtype=np.int64)
x = ((((i * 7919) % 10007) / 10007) * 8 - 4).astype(np.float32).reshape(128, 64, 128)
for axes in sys.argv[1:]:
    ax = None if axes == "all" else tuple(int(a) - 1 for a in axes.split(","))
    exact = np.sum(x.astype(np.float64), axis=ax)
    mag = np.sum(np.abs(x.astype(np.float64)), axis=ax)
    err = np.abs(np.sum(x, axis=ax).astype(np.float64) - exact) / mag
    print(float(np.max(err)).hex(), " ".join(float(e).hex() for e in np.ravel(exact)))
]==]

T.test("float32 sums: no larger errors than NumPy's float32 sums", function()
  if not have_numpy then print("skipped: no numpy for " .. python) return end
  local AXES = {"1", "2", "3", "1,2", "2,3", "all"}
  local sf = os.tmpname()
  local f = assert(io.open(sf, "w")); f:write(np_float32_errors); f:close()
  local pipe = io.popen(python .. " " .. sf .. " " .. table.concat(AXES, " ") .. " 2>&1")
  local out = pipe:read("a")
  local ok = pipe:close()
  os.remove(sf)
  assert(ok, "python failed:\n" .. out)
  local flat = {}
  for i = 0, 128 * 64 * 128 - 1 do flat[i + 1] = value(i, "sum") end
  local x = mf.reshape(mf.tensor(flat, "float32"), {128, 64, 128})
  local k = 0
  for line in out:gmatch("[^\n]+") do
    k = k + 1
    local np_err, exact = nil, {}
    for w in line:gmatch("%S+") do
      if np_err then exact[#exact + 1] = tonumber(w) else np_err = tonumber(w) end
    end
    local axes = nil
    if AXES[k] ~= "all" then
      axes = {}
      for a in AXES[k]:gmatch("%d") do axes[#axes + 1] = tonumber(a) end
    end
    local got = flatten(mf.reduce_sum(x, axes):totable(), {})
    local mag = flatten(mf.reduce_sum(mf.abs(x), axes):totable(), {})
    T.eq(#got, #exact, nil, "axes " .. AXES[k] .. ": element count")
    local err = 0
    for i = 1, #got do err = math.max(err, math.abs(got[i] - exact[i]) / mag[i]) end
    T.ok(err <= 8 * 2 ^ -24, string.format("axes %s: error %.3g of the magnitudes", AXES[k], err))
    T.ok(err <= np_err, string.format("axes %s: error %.3g, NumPy's %.3g", AXES[k], err, np_err))
  end
  T.eq(k, #AXES, nil, "NumPy's result lines")
end)

T.done()
