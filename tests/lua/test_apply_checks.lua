-- test_apply_checks.lua — apply_gradients' checks of each (gradient, variable)
-- pair, which graph mode and mf.trace share (train/graph_train.c): a float
-- variable, a gradient of the same graph, and a gradient whose dtype, rank
-- and dims fit the variable; plus the "no gradient" error of both modes.
local T = dofile("tests/lua/harness.lua")

local other_ph
mf.Graph():as_default(function() other_ph = mf.placeholder("float32", {2}) end)

T.test("graph mode: each pair's gradient must fit its variable", function()
  mf.Graph():as_default(function()
    local w = mf.Variable({1, 2}, {name = "w", dtype = "float32"})
    local wi = mf.Variable({1, 2}, {name = "wi", dtype = "int32"})
    local u = mf.Variable({{1, 2}}, {name = "u", dtype = "float32"})
    local opt = mf.train.AdamOptimizer(0.1)
    local function apply(grad, var) return function() opt:apply_gradients({{grad, var}}) end end
    T.raises(apply(mf.tensor({1, 2, 3}, "float32"), w),
             "apply_gradients: pair 1: gradient (3,) float32 does not fit variable 'w' (2,) float32")
    T.raises(apply(mf.tensor({1, 2}, "float64"), w),
             "apply_gradients: pair 1: gradient (2,) float64 does not fit variable 'w' (2,) float32")
    T.raises(apply(mf.tensor({1, 2}, "float32"), u),
             "apply_gradients: pair 1: gradient (2,) float32 does not fit variable 'u' (1,2) float32")
    T.raises(apply(mf.tensor({1, 2}, "int32"), wi),
             "apply_gradients: variable 'wi' (pair 1) has dtype int32; optimizers update float32 " ..
             "or float64 variables")
    T.raises(apply(other_ph, w), "apply_gradients: pair 1: the gradient is a tensor of another graph")
    -- an unknown dim of the gradient fits any size
    local ph = mf.placeholder("float32", {-1})
    T.ok(opt:apply_gradients({{ph, w}}), "a (?,) gradient fits a (2,) variable")
  end)
end)

T.test("inside mf.trace: each pair's gradient must fit its eager variable", function()
  local e = mf.Variable({1, 2}, {name = "e", dtype = "float32"})
  local ei = mf.Variable({1, 2}, {name = "ei", dtype = "int32"})
  local opt = mf.train.AdamOptimizer(0.1)
  local function traced(pairs_of)
    local f = mf.trace(function(x)
      opt:apply_gradients(pairs_of(x))
      return x
    end)
    return function() f(mf.tensor({1, 2}, "float32")) end
  end
  T.raises(traced(function() return {{mf.tensor({1, 2, 3}, "float32"), e}} end),
           "apply_gradients: pair 1: gradient (3,) float32 does not fit variable 'e' (2,) float32")
  T.raises(traced(function(x) return {{x, ei}} end),
           "apply_gradients: variable 'ei' (pair 1) has dtype int32; optimizers update float32 " ..
           "or float64 variables")
  T.raises(traced(function() return {{other_ph, e}} end),
           "apply_gradients: pair 1: the gradient is a tensor of another graph")
  T.raises(traced(function() return {{nil, e}} end),
           "apply_gradients: No gradients provided for any variable")
end)

T.done()
