-- mf.metrics as Keras 3 computes them (issue 27 items 3 and 6, issue 35 W5): labels of shape
-- (N, 1), sample weights everywhere (Accuracy ignored them), Mean's result for a zero,
-- negative or NaN weight total (Keras's divide_no_nan), NaN outputs, fit's "accuracy" chosen
-- from the shapes as Keras's compile does, and methods that refuse extra arguments.
-- Expected values are Keras's (reduction_metrics.py, accuracy_metrics.py) or the formula.
local T = dofile("tests/lua/harness.lua")
local M = mf.metrics

T.test("labels (N, 1): the sparse accuracies squeeze them (were 0 and 0.333)", function()
  local s = M.SparseCategoricalAccuracy()
  s:update_state(mf.tensor({{3}, {2}}, "int64"), mf.tensor{{0.1, 0.6, 0.3}, {0.05, 0.95, 0}})
  T.eq(s:result(), 0.5)
  s = M.SparseCategoricalAccuracy()
  s:update_state(mf.tensor{{1}, {2}, {3}}, mf.tensor{{0.9, 0.05, 0.05}, {0.05, 0.9, 0.05},
                                                    {0.05, 0.05, 0.9}})
  T.eq(s:result(), 1.0)
  T.eq(M.accuracy(mf.tensor({{2}, {2}}, "int64"), mf.tensor{{0, 1}, {1, 0}}):item(), 0.5)
end)

T.test("sample_weight is used by every metric (Accuracy ignored it)", function()
  local a = M.SparseCategoricalAccuracy()
  a:update_state(mf.tensor{3, 2}, mf.tensor{{0.1, 0.6, 0.3}, {0.05, 0.95, 0}}, {0.7, 0.3})
  T.eq(a:result(), 0.3, 1e-7)
  local b = M.BinaryAccuracy()
  b:update_state({1, 1, 0, 0}, {0.98, 1, 0, 0.6}, {1, 0, 0, 1})
  T.eq(b:result(), 0.5)
  T.raises(function() b:update_state({1, 0}, {1, 0}, "w") end,
           "update_state: sample_weight must be a number or a tensor, got string")
  T.raises(function() b:update_state({1, 0}, {1, 0}, {1, 2, 3}) end,
           "update_state: sample_weight of shape (3,) does not fit values of shape (2,)")
end)

T.test("Mean: weight totals of 0, negative and NaN as Keras (all gave 0)", function()
  local m = M.Mean()
  m:update_state({1, 3, 5, 7}, {-1, -1, 0, 0})
  T.eq(m:result(), 2.0)                 -- Keras's test_weighted_negative_weights
  m = M.Mean()
  m:update_state({1, 3, 5, 7}, {0, 0, 0, 0})
  T.eq(m:result(), 0)                   -- divide_no_nan: nothing counted
  m = M.Mean()
  m:update_state({1, 3}, {0 / 0, 1})
  T.ok(m:result() ~= m:result(), "a NaN weight total gives NaN, got " .. m:result())
  m = M.Mean()
  T.eq(m:result(), 0)
end)

T.test("Mean and Sum keep Lua numbers as doubles (fit's running loss)", function()
  local m = mf.metrics.Mean()
  m:update_state(0.1)
  m:update_state(0.2, 3)
  T.eq(m:result(), (0.1 + 0.2 * 3) / 4, 1e-15)
  m = mf.metrics.Mean()
  m:update_state({0.1, 0.2})
  T.eq(m:result(), (0.1 + 0.2) / 2, 1e-16)
  local s = mf.metrics.Sum()
  s:update_state({0.1, 0.2}, {1, 1})
  T.eq(s:result(), 0.1 + 0.2, 1e-16)
end)

T.test("a NaN output is never a correct prediction (all-NaN accuracy was 1.0)", function()
  local nan = 0 / 0
  local s = M.SparseCategoricalAccuracy()
  s:update_state(mf.tensor({1, 1}, "int64"), mf.tensor{{nan, nan}, {nan, nan}})
  T.eq(s:result(), 0)
  T.eq(M.accuracy(mf.tensor({1, 2}, "int64"), mf.tensor{{nan, 0}, {0, 1}}):item(), 0.5)
  local c = M.CategoricalAccuracy()
  c:update_state(mf.tensor{{1, 0}}, mf.tensor{{nan, nan}})
  T.eq(c:result(), 0)
  local b = M.BinaryAccuracy()
  b:update_state({0, 0}, {nan, 0.1})
  T.eq(b:result(), 0.5)
end)

T.test("fit's \"accuracy\" is binary, sparse or categorical by the shapes (Keras compile)",
       function()
  local D = mf.data.Dataset
  local id = mf.layers.Model({call = function(_, x) return x end})
  local function acc(x, y)
    return id:evaluate(D.from_tensor_slices{x, y}:batch(4),
                       {loss = "mean_squared_error", metrics = {"accuracy"}, verbose = 0})
             .accuracy
  end
  -- outputs with one column: thresholded at 0.5
  T.eq(acc(mf.tensor{{0.9}, {0.2}, {0.7}, {0.1}}, mf.tensor{{1}, {0}, {0}, {0}}), 0.75)
  -- labels (N, 1) against class scores: sparse
  T.eq(acc(mf.tensor{{0.1, 0.9}, {0.8, 0.2}}, mf.tensor{{2}, {2}}), 0.5)
  -- one-hot labels: categorical
  T.eq(acc(mf.tensor{{0.1, 0.9}, {0.8, 0.2}}, mf.tensor{{0, 1}, {0, 1}}), 0.5)
end)

T.test("methods refuse extra arguments; constructors unknown options", function()
  local m = M.Mean()
  T.raises(function() m:update_state(1, 1, 3) end, "bad argument #4 to 'update_state'")
  T.raises(function() m:result(1) end, "bad argument #2 to 'result'")
  T.raises(function() m:reset_state(nil, 2) end, "bad argument #2 to 'reset_state'")
  local a = M.Accuracy()
  T.raises(function() a:update_state({1}, {1}, {1}, 4) end, "bad argument #5 to 'update_state'")
  T.raises(function() M.Sum():update_state({1}, nil, 1) end, "bad argument #4 to 'update_state'")
  T.raises(function() M.BinaryAccuracy{threshhold = 0.3} end,
           "BinaryAccuracy: unknown option 'threshhold'")
  T.raises(function() M.BinaryAccuracy{threshold = "high"} end,
           "BinaryAccuracy: option 'threshold' must be a number")
  T.raises(function() M.SparseCategoricalAccuracy{name = "a"}:update_state({1}, 5) end,
           "update_state: expected outputs of rank >= 1 (batch, classes), got a scalar")
  local d = mf.layers.Dense(2)
  d(mf.ones{1, 3})
  T.raises(function() d:count_params(1) end, "bad argument #2 to 'count_params'")
end)

T.done()
