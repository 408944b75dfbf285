-- keras_testing.lua — Keras 3's testing.TestCase assertions (keras/src/testing/test_case.py)
-- for the ports of Keras's tests: local K = dofile("tests/lua/ports/keras_testing.lua").
local K = {}

local function totable(v)
  if type(v) == "userdata" then return v:totable() end
  return v
end

-- assertAllClose(actual, desired, atol = 1e-6, rtol = 1e-6): |got - want| <= atol + rtol |want|
-- for every element (nested tables or tensors; a number against a number).
function K.close(got, want, atol, rtol)
  got, want = totable(got), totable(want)
  atol, rtol = atol or 1e-6, rtol or 1e-6
  if type(want) == "table" then
    for i, w in ipairs(want) do K.close(got[i], w, atol, rtol) end
    return
  end
  if not (math.abs(got - want) <= atol + rtol * math.abs(want)) then
    error(string.format("expected %.9g, got %.9g", want, got), 2)
  end
end

-- assertAlmostEqual(actual, desired, decimal = 3): |got - want| < 1.5 * 10^-decimal
function K.almost(got, want, decimal)
  got, want = totable(got), totable(want)
  if type(want) == "table" then
    for i, w in ipairs(want) do K.almost(got[i], w, decimal) end
    return
  end
  if not (math.abs(got - want) < 1.5 * 10 ^ -(decimal or 3)) then
    error(string.format("expected %.7g, got %.7g (decimal %d)", want, got, decimal or 3), 2)
  end
end

-- np.arange(n).reshape(shape).astype("float32")
function K.arange(n, shape) return mf.reshape(mf.range(n, {dtype = "float32"}), shape) end

-- The recurrent layers of Keras's rnn tests: kernel 0.01, recurrent 0.02, bias 0.03.
function K.constant_rnn(make, units, opts)
  opts = opts or {}
  local C = mf.initializers.constant
  opts.kernel_initializer, opts.recurrent_initializer = C(0.01), C(0.02)
  opts.bias_initializer = C(0.03)
  return make(units, opts)
end

return K
