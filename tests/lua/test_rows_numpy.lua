-- test_rows_numpy.lua — the float32 row kernels (softmax, log_softmax,
-- layer_norm and their gradient ops, core/ops/softmax.c and layer_norm.c)
-- against NumPy (/usr/bin/python3, called live) in float64 on the same
-- float32 inputs, for rows of 1, 7, 64, 65, 128, 256, 257 and 3000 elements
-- (vector bodies, tails, a row sum longer than one leaf). Both sides make
-- the inputs from the element index (an integer formula, exact in double),
-- so only the shapes travel to Python.
--
-- Each element must lie within an error bound NumPy computes beside the
-- exact value, in units of u = 2^-24 (float32's unit roundoff); a row sum
-- (reduce_walk.c's: at most 7 float additions per term, then double) is
-- allowed 8 u times the sum of its terms' magnitudes (written "8 |.|"):
--   softmax     y (|a| + 8)              a = x - max, rounded in float32
--   log_softmax |a| + |log s| + |y| + 8  s = the row's sum of exp(a)
--   softmax'    y ((|w| + |d|) 4 + |w - d| (|a| + 8) + D + 8 |w y|) + 2 |dx|
--               d = sum(w y), D = sum(|w| y (|a| + 8)): y's own error in d
--   log_softmax' |w| 4 + p |S| (|a| + |log s| + |y| + 12) + p 8 |w| + 2 |dx|
--               S = sum(w), p = e^y
--   layer_norm  (|y| + 1) 16 + r 8 |x| / n   (rounded mean, deviations,
--               variance, rsqrt; r = 1 / sqrt(var + eps))
--   layer_norm' r ((|w| + |mw| + |y| |mwy|) 32 + 8 |w| / n + |y| 8 |w y| / n)
--               mw, mwy: the means of w and w y
-- (the gradients are of sum(f(x) * w), w in [-1, 1)). The exponential is
-- fast_mathf.h's (about 1 ulp).
local T = dofile("tests/lua/harness.lua")

local python = "/usr/bin/python3"
local have_numpy = os.execute(python .. " -c 'import numpy' 2>/dev/null")

local ROWS = {{40, 1}, {30, 7}, {24, 64}, {20, 65}, {12, 128}, {8, 256}, {6, 257}, {3, 3000}}

local function values(n, mult, lo, hi)
  local flat = {}
  for i = 0, n - 1 do flat[i + 1] = ((i * mult) % 10007) / 10007 * (hi - lo) + lo end
  return flat
end

local py = [==[
import sys
import numpy as np
u = 2.0 ** -24
kind = sys.argv[1]
for shape in sys.argv[2:]:
    r, n = (int(s) for s in shape.split("x"))
    i = np.arange(r * n, dtype=np.int64)
    x = (((i * 7919) % 10007) / 10007 * 8 - 4).astype(np.float32).astype(np.float64).reshape(r, n)
    w = (((i * 104729) % 10007) / 10007 * 2 - 1).astype(np.float32).astype(np.float64).reshape(r, n)
    a = x - x.max(axis=1, keepdims=True)
    s = np.exp(a).sum(axis=1, keepdims=True)
    p = np.exp(a) / s
    ls = np.log(s)
    if kind == "softmax":
        ref, tol = p, p * (np.abs(a) + 8)
    elif kind == "log_softmax":
        ref = a - ls
        tol = np.abs(a) + np.abs(ls) + np.abs(ref) + 8
    elif kind == "softmax_grad":
        d = (w * p).sum(axis=1, keepdims=True)
        ref = (w - d) * p
        D = (np.abs(w) * p * (np.abs(a) + 8)).sum(axis=1, keepdims=True)
        wy = (np.abs(w) * p).sum(axis=1, keepdims=True)
        tol = p * ((np.abs(w) + np.abs(d)) * 4 + np.abs(w - d) * (np.abs(a) + 8) + D + 8 * wy)
        tol += 2 * np.abs(ref)
    elif kind == "log_softmax_grad":
        S = w.sum(axis=1, keepdims=True)
        ref = w - p * S
        tol = np.abs(w) * 4 + p * np.abs(S) * (np.abs(a) + np.abs(ls) + np.abs(a - ls) + 12)
        tol += p * 8 * np.abs(w).sum(axis=1, keepdims=True) + 2 * np.abs(ref)
    else:
        m = x.mean(axis=1, keepdims=True)
        rs = 1 / np.sqrt(((x - m) ** 2).mean(axis=1, keepdims=True) + 1e-5)
        y = (x - m) * rs
        if kind == "layer_norm":
            ref, tol = y, (np.abs(y) + 1) * 16 + rs * 8 * np.abs(x).mean(axis=1, keepdims=True)
        else:
            mw = w.mean(axis=1, keepdims=True)
            mwy = (w * y).mean(axis=1, keepdims=True)
            ref = rs * (w - mw - y * mwy)
            tol = rs * ((np.abs(w) + np.abs(mw) + np.abs(y) * np.abs(mwy)) * 32
                        + 8 * np.abs(w).mean(axis=1, keepdims=True)
                        + np.abs(y) * 8 * np.abs(w * y).mean(axis=1, keepdims=True))
    print(" ".join(float(e).hex() for e in np.ravel(ref)))
    print(" ".join(float(e).hex() for e in np.ravel(tol * u)))
]==]

local function numpy_lines(kind, shapes)
  local sf = os.tmpname()
  local f = assert(io.open(sf, "w")); f:write(py); f:close()
  local pipe = io.popen(python .. " " .. sf .. " " .. kind .. " " .. table.concat(shapes, " ")
                        .. " 2>&1")
  local out = pipe:read("a")
  local ok = pipe:close()
  os.remove(sf)
  assert(ok, "python failed:\n" .. out)
  local lines = {}
  for line in out:gmatch("[^\n]+") do
    local vals = {}
    for w in line:gmatch("%S+") do vals[#vals + 1] = tonumber(w) end
    lines[#lines + 1] = vals
  end
  return lines
end

local function flatten(t, out)
  if type(t) ~= "table" then out[#out + 1] = t; return out end
  for _, v in ipairs(t) do flatten(v, out) end
  return out
end

local function ln(v) return mf.nn.layer_norm(v, {epsilon = 1e-5}) end

local KINDS = {
  softmax = function(x) return mf.nn.softmax(x) end,
  log_softmax = function(x) return mf.nn.log_softmax(x) end,
  layer_norm = ln,
}
for _, name in ipairs{"softmax", "log_softmax", "layer_norm"} do
  local f = KINDS[name]
  KINDS[name .. "_grad"] = function(x, w)
    return mf.grad(function(v) return mf.reduce_sum(f(v) * w) end)(x)
  end
end

for _, kind in ipairs{"softmax", "log_softmax", "softmax_grad", "log_softmax_grad", "layer_norm",
                      "layer_norm_grad"} do
  T.test(kind .. ": float32 rows within the bound of NumPy's float64 values", function()
    if not have_numpy then print("skipped: no numpy for " .. python) return end
    local shapes = {}
    for k, s in ipairs(ROWS) do shapes[k] = s[1] .. "x" .. s[2] end
    local lines = numpy_lines(kind, shapes)
    T.eq(#lines, 2 * #ROWS, nil, "NumPy's result lines")
    for k, s in ipairs(ROWS) do
      local n = s[1] * s[2]
      local x = mf.reshape(mf.tensor(values(n, 7919, -4, 4), "float32"), s)
      local w = mf.reshape(mf.tensor(values(n, 104729, -1, 1), "float32"), s)
      local got = flatten(KINDS[kind](x, w):totable(), {})
      local want, tol = lines[2 * k - 1], lines[2 * k]
      T.eq(#got, #want, nil, shapes[k] .. ": element count")
      for i = 1, #got do
        if not (math.abs(got[i] - want[i]) <= tol[i]) then
          error(string.format("%s %s: element %d is %a, NumPy %a (bound %.3g)", kind, shapes[k],
                              i, got[i], want[i], tol[i]), 0)
        end
      end
    end
  end)
end

T.done()
