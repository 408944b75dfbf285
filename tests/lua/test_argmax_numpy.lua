-- test_argmax_numpy.lua — mf.argmax and mf.argmin against NumPy's (/usr/bin/python3, called
-- live), + 1 (moonflow's positions are 1-based), on random shapes, axes and layouts
-- (transposed views), float32, float64, int32 and int64: values with many ties (the first
-- position wins), -0 beside 0, infinities and NaN (the first NaN wins, as NumPy's). Both sides
-- make the values from the element index, so only the shapes travel to Python. The kernel
-- takes the max (min) by the vectorised reduction and then its first position.
local T = dofile("tests/lua/harness.lua")

local python = "/usr/bin/python3"
local have_numpy = os.execute(python .. " -c 'import numpy' 2>/dev/null")

local SIZES = {1, 1, 2, 3, 7, 31, 33, 64, 257}

-- element i (0-based, row-major before any transpose); 'special' picks a pattern
local function value(i, special, float)
  local v = (i * 7919) % 23 - 11
  if not float then return v end
  if special == 1 and i % 37 == 5 then return 0 / 0 end
  if special == 2 and i % 29 == 3 then return i % 2 == 0 and math.huge or -math.huge end
  if v == 0 and i % 2 == 1 then return -0.0 end
  return v
end

local function random_case(rng, dtype)
  local rank = rng(1, 4)
  local shape, n
  repeat
    shape, n = {}, 1
    for d = 1, rank do shape[d] = SIZES[rng(1, #SIZES)]; n = n * shape[d] end
  until n <= 40000
  local perm = {}
  for d = 1, rank do perm[d] = d end
  if rng(1, 2) == 1 then
    for d = rank, 2, -1 do local j = rng(1, d); perm[d], perm[j] = perm[j], perm[d] end
  end
  return {dtype = dtype, shape = shape, perm = perm, axis = rng(1, rank), n = n,
          special = dtype:find("float") and rng(0, 2) or 0, kind = rng(1, 2) == 1 and "argmax"
          or "argmin"}
end

local function input(c)
  local flat = {}
  for i = 0, c.n - 1 do flat[i + 1] = value(i, c.special, c.dtype:find("float")) end
  return mf.transpose(mf.reshape(mf.tensor(flat, c.dtype), c.shape), c.perm)
end

local py = [==[
import sys
import numpy as np
for line in open(sys.argv[1]):
    kind, dtype, shape, perm, axis, special = line.split()
    shape = [int(s) for s in shape.split(",")]
    perm = [int(p) - 1 for p in perm.split(",")]
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    v = ((i * 7919) % 23 - 11).astype(np.float64)
    if dtype.startswith("float"):
        v[(v == 0) & (i % 2 == 1)] = -0.0
        if special == "1":
            v[i % 37 == 5] = np.nan
        if special == "2":
            m = i % 29 == 3
            v[m] = np.where(i[m] % 2 == 0, np.inf, -np.inf)
    x = np.transpose(v.astype(dtype).reshape(shape), perm)
    r = getattr(np, kind)(x, axis=int(axis) - 1) + 1
    print(" ".join(str(e) for e in np.ravel(r)))
]==]

local function numpy_results(cases)
  local base = os.tmpname()
  local cf, sf = base .. ".cases", base .. ".py"
  local f = assert(io.open(cf, "w"))
  for _, c in ipairs(cases) do
    f:write(string.format("%s %s %s %s %d %d\n", c.kind, c.dtype, table.concat(c.shape, ","),
                          table.concat(c.perm, ","), c.axis, c.special))
  end
  f:close()
  f = assert(io.open(sf, "w")); f:write(py); f:close()
  local pipe = io.popen(python .. " " .. sf .. " " .. cf .. " 2>&1")
  local out = pipe:read("a")
  local ok = pipe:close()
  os.remove(cf); os.remove(sf); os.remove(base)
  assert(ok, "python failed:\n" .. out)
  local lines = {}
  for line in out:gmatch("[^\n]*\n") do
    local vals = {}
    for w in line:gmatch("%S+") do vals[#vals + 1] = math.tointeger(tonumber(w)) end
    lines[#lines + 1] = vals
  end
  return lines
end

local function flatten(t, out)
  if type(t) ~= "table" then out[#out + 1] = t; return out end
  for _, v in ipairs(t) do flatten(v, out) end
  return out
end

T.test("argmax and argmin equal NumPy's on 200 random cases", function()
  if not have_numpy then print("  (skipped: no numpy)"); return end
  local seed = 12345
  local function rng(lo, hi) -- a fixed LCG: the same cases every run
    seed = (seed * 1103515245 + 12345) % 2147483648
    return lo + seed % (hi - lo + 1)
  end
  local cases, dtypes = {}, {"float32", "float64", "int32", "int64"}
  for k = 1, 200 do cases[k] = random_case(rng, dtypes[(k - 1) % 4 + 1]) end
  local want = numpy_results(cases)
  for k, c in ipairs(cases) do
    local got = flatten(mf[c.kind](input(c), c.axis):totable(), {})
    local what = string.format("%s %s shape {%s} perm {%s} axis %d special %d", c.kind, c.dtype,
                               table.concat(c.shape, ","), table.concat(c.perm, ","), c.axis,
                               c.special)
    T.eq(#got, #want[k], nil, what .. ": count")
    for i = 1, #got do
      if got[i] ~= want[k][i] then
        error(string.format("%s: element %d is %d, NumPy %d", what, i, got[i], want[k][i]))
      end
    end
  end
end)

T.test("ties, NaN, -0 and a single element, by hand", function()
  T.eq(mf.argmax(mf.tensor{3, 7, 7, 1}), 2)
  T.eq(mf.argmin(mf.tensor{3, 1, 7, 1}), 2)
  T.eq(mf.argmax(mf.tensor{1, 0 / 0, 9, 0 / 0}), 2)
  T.eq(mf.argmin(mf.tensor({1, -math.huge, 0 / 0}, "float64")), 3)
  T.eq(mf.argmax(mf.tensor{-0.0, 0.0}), 1)
  T.eq(mf.argmax(mf.tensor{{5}}, 2), {1})
  T.eq(mf.argmax(mf.tensor({{1, 9, 3}, {7, 9, 5}}), 1), {2, 1, 2})
  -- an axis followed by axes of 1: rows as the last axis
  T.eq(mf.argmin(mf.reshape(mf.tensor{4, 2, 8, 2}, {2, 2, 1}), 2), {{2}, {2}})
end)

T.done()
