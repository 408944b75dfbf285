-- test_check_numerics.lua — mf.debugging.enable_check_numerics() (issue #33
-- item 4): every op checks its outputs and raises at the first one holding
-- NaN or Inf, naming the op, its inputs' ranges and the user's line; under
-- tape:gradient it names the op whose gradient ran; in graph mode (mf.trace)
-- it names the node and the line that made it, fused groups included. Off
-- by default.
local T = dofile("tests/lua/harness.lua")

local function here() return debug.getinfo(2, "l").currentline end
local FILE = "test_check_numerics.lua:"

-- The error of fn() as a string (it must fail).
local function err_of(fn)
  local ok, err = pcall(fn)
  T.ok(not ok, "expected an error")
  return tostring(err)
end

local function has(s, part)
  T.ok(string.find(s, part, 1, true), "'" .. s .. "' does not contain '" .. part .. "'")
end

T.test("off by default: NaN and Inf flow as values", function()
  local y = mf.log(mf.constant{-1, 1})
  T.ok(y[1] ~= y[1])
  T.eq(mf.exp(mf.constant{1000})[1], math.huge)
end)

-- Every test below runs with the check on and turns it off after.
local function checked(name, fn)
  T.test(name, function()
    mf.debugging.enable_check_numerics()
    local ok, err = pcall(fn)
    mf.debugging.disable_check_numerics()
    if not ok then error(err, 0) end
  end)
end

checked("log of a negative names Log, its input's range and the line", function()
  local line
  local e = err_of(function() line = here(); return mf.log(mf.constant{-1, 2, 4}) end)
  has(e, "check_numerics: Log (log) produced NaN in output 1 (1 of 3 values, " ..
         "the first at flat index 1)")
  has(e, "inputs: x float32 (3,) in [-1, 4]")
  has(e, FILE .. line)
end)

checked("0/0 names RealDiv and both inputs", function()
  local z = mf.constant{0, 1}
  local line
  local e = err_of(function() line = here(); return z / z end)
  has(e, "check_numerics: RealDiv (divide) produced NaN")
  has(e, "inputs: x float32 (2,) in [0, 1], y float32 (2,) in [0, 1]")
  has(e, FILE .. line)
end)

checked("exp overflow names Exp and says Inf", function()
  local e = err_of(function() return mf.exp(mf.constant({1, 1000}, "float64")) end)
  has(e, "check_numerics: Exp (exp) produced Inf in output 1 (1 of 2 values, " ..
         "the first at flat index 2)")
  has(e, "x float64 (2,) in [1, 1000]")
end)

checked("finite results and integer ops pass", function()
  T.eq(mf.log(mf.constant{1, 4}), {0, math.log(4)}, 1e-6)
  T.eq(mf.cast(mf.constant{7.5, 2}, "int32") + mf.constant({1, 1}, "int32"), {8, 3})
  T.eq(mf.reduce_sum(mf.exp(mf.constant{0, 0})):item(), 2)
end)

checked("an input that already held NaN is shown as such", function()
  local e = err_of(function() return mf.constant{0 / 0, 1} * 2 end)
  has(e, "check_numerics: Mul (multiply) produced NaN")
  has(e, "in [1, 1], 1 NaN")
end)

checked("an op run by lib/ Lua code is placed at the user's line", function()
  local line
  local e = err_of(function()
    line = here(); local l = mf.losses.categorical_crossentropy(mf.constant{{1, 0}},
                                                                mf.constant{{0, 0}})
    return l   -- not a tail call: a tail call leaves no frame for the line
  end)
  has(e, "check_numerics: RealDiv (divide) produced NaN")
  has(e, FILE .. line)
end)

checked("tape:gradient names the op whose gradient produced Inf", function()
  local x = mf.constant{0, 4}
  local tape = mf.GradientTape()
  tape:watch(x)
  local y = mf.reduce_sum(mf.sqrt(x * 1))   -- records: Mul, Sqrt, Sum
  local line
  local e = err_of(function() line = here(); return tape:gradient(y, x) end)
  has(e, "check_numerics: RealDiv (divide) produced Inf")
  has(e, FILE .. line .. ", in the gradient of Sqrt (tape record 2)")
end)

checked("graph mode: the node and the line that made it", function()
  local line
  local f = mf.trace(function(a) line = here(); return mf.log(a) * 2 end)
  local e = err_of(function() return f(mf.constant{-1, 3}) end)
  has(e, "node 'log' (Log): check_numerics: Log (log) produced NaN")
  has(e, "inputs: x float32 (2,) in [-1, 3]")
  has(e, "graph node 'log', made at tests/lua/" .. FILE .. line)
  T.eq(f(mf.constant{1, 1}), {0, 0})
end)

checked("graph mode: an op inside a fusable chain is checked on its own", function()
  local line
  local g = mf.trace(function(a) line = here(); return mf.exp(mf.log(a) * 2) + 1 end)
  local e = err_of(function() return g(mf.constant{-1, 3}) end)
  has(e, "check_numerics: Log (log) produced NaN")
  has(e, "made at tests/lua/" .. FILE .. line)
  T.eq(g(mf.constant{1, 2}), {2, 5}, 1e-5)
end)

checked("graph gradients: the gradient node says whose gradient it is", function()
  local line
  local f = mf.trace(function(a)
    local tape = mf.GradientTape()
    tape:watch(a)
    local y = mf.reduce_sum(mf.sqrt(a))
    line = here(); return tape:gradient(y, a)
  end)
  local e = err_of(function() return f(mf.constant{0, 3}) end)
  has(e, "check_numerics: RealDiv (divide) produced Inf")
  has(e, "made at tests/lua/" .. FILE .. line .. ", in the gradient of Sqrt")
end)

checked("float16 and bfloat16: an overflow in the cast back is caught", function()
  -- the op computes in float32 (finite there); its result leaves the half range
  local line
  local e = err_of(function() line = here(); return mf.exp(mf.tensor({10, 12}, "float16")) end)
  has(e, "check_numerics: Cast (cast) produced Inf in output 1 (1 of 2 values, the first at " ..
         "flat index 2); inputs: x float32 (2,) in [22026.5, 162755]")
  has(e, FILE .. line .. " (the float32 result of exp cast back to float16)")
  local big, small = mf.tensor({3.3895e38}, "bfloat16"), mf.tensor({1e36}, "bfloat16")
  has(err_of(function() return big + small end),
      "(the float32 result of add cast back to bfloat16)")
  -- a cast the user asks for, and a half output that is finite
  has(err_of(function() return mf.cast(mf.tensor{70000}, "float16") end),
      "check_numerics: Cast (cast) produced Inf")
  T.eq(mf.exp(mf.tensor({0, 1}, "float16")):totable(), {1, 2.71875})
end)

T.test("disable_check_numerics turns it off; arguments are refused", function()
  mf.debugging.enable_check_numerics()
  mf.debugging.disable_check_numerics()
  local y = mf.log(mf.constant{-1})
  T.ok(y[1] ~= y[1])
  T.raises(function() mf.debugging.enable_check_numerics(3) end,
           "mf.debugging.enable_check_numerics: expected no arguments, got 1")
  T.raises(function() mf.debugging.disable_check_numerics({}) end,
           "mf.debugging.disable_check_numerics: expected no arguments, got 1")
end)

T.done()
