-- Keras 3's keras/src/metrics/accuracy_metrics_test.py (commit 3422977a): AccuracyTest,
-- BinaryAccuracyTest, CategoricalAccuracyTest and SparseCategoricalAccuracyTest, line by line
-- with the test's expected values. Sparse labels are 1-based here (Keras's class 0 is 1).
-- Left out: test_config (serialization), the top-k metrics (moonflow has none), and
-- test_reshape_matches, whose labels (2, 1) against outputs (1, 2, 3) only pass in Keras by
-- broadcasting (2, 1) against (1, 2); moonflow refuses labels that do not have the outputs'
-- shape without the class axis (tested at the end).
local T = dofile("tests/lua/harness.lua")
local M = mf.metrics

local K = dofile("tests/lua/ports/keras_testing.lua")
local function close(got, want, atol) K.close(got, want, atol or 1e-6) end

local function array(v, dtype) return mf.tensor(v, dtype or "float32") end

T.test("AccuracyTest.test_unweighted / weighted / weighted_rank_1", function()
  local acc_obj = M.Accuracy{name = "accuracy"}
  acc_obj:update_state(array{{1}, {2}, {3}, {4}}, array{{0}, {2}, {3}, {4}})
  close(acc_obj:result(), 0.75, 1e-3)
  acc_obj = M.Accuracy{name = "accuracy"}
  acc_obj:update_state(array{{1}, {2}, {3}, {4}}, array{{0}, {2}, {3}, {4}}, array{1, 1, 0, 0})
  close(acc_obj:result(), 0.5, 1e-3)
  acc_obj = M.Accuracy{name = "accuracy"}
  acc_obj:update_state(array{1, 2, 3, 4}, array{0, 2, 3, 4}, array{1, 1, 0, 0})
  close(acc_obj:result(), 0.5, 1e-3)
end)

T.test("AccuracyTest.test_weighted_nd_weights / nd_broadcast_weights", function()
  local acc_obj = M.Accuracy{name = "accuracy"}
  acc_obj:update_state(array{{1, 2}, {3, 4}}, array{{0, 2}, {3, 4}}, array{{1, 0}, {0, 1}})
  close(acc_obj:result(), 0.5, 1e-3)
  acc_obj = M.Accuracy{name = "accuracy"}
  acc_obj:update_state(array{{1, 2}, {3, 4}}, array{{0, 2}, {3, 4}}, array{{1, 0}})
  close(acc_obj:result(), 0.5, 1e-3)
end)

T.test("BinaryAccuracyTest.test_unweighted (and the broadcasting case)", function()
  local bin_acc_obj = M.BinaryAccuracy{name = "binary_accuracy"}
  bin_acc_obj:update_state(array{{1}, {1}, {0}, {0}}, array{{0.98}, {1}, {0}, {0.6}})
  close(bin_acc_obj:result(), 0.75, 1e-3)
  bin_acc_obj = M.BinaryAccuracy{name = "binary_accuracy"}
  bin_acc_obj:update_state(array{1, 1, 0, 0}, array{{0.98}, {1}, {0}, {0.6}})
  close(bin_acc_obj:result(), 0.75, 1e-3)
end)

T.test("BinaryAccuracyTest.test_weighted / rank_1 / nd_weights / nd_broadcast_weights", function()
  local b = M.BinaryAccuracy{name = "binary_accuracy"}
  b:update_state(array{{1}, {1}, {0}, {0}}, array{{0.98}, {1}, {0}, {0.6}}, array{1, 0, 0, 1})
  close(b:result(), 0.5, 1e-3)
  b = M.BinaryAccuracy{name = "binary_accuracy"}
  b:update_state(array{1, 1, 0, 0}, array{0.98, 1, 0, 0.6}, array{1, 0, 0, 1})
  close(b:result(), 0.5, 1e-3)
  b = M.BinaryAccuracy{name = "binary_accuracy"}
  b:update_state(array{{1, 1}, {0, 0}}, array{{0.98, 1}, {0, 0.6}}, array{{1, 0}, {0, 1}})
  close(b:result(), 0.5, 1e-3)
  b = M.BinaryAccuracy{name = "binary_accuracy"}
  b:update_state(array{{1, 1}, {0, 0}}, array{{0.98, 1}, {0, 0.6}}, array{{1, 0}})
  close(b:result(), 1.0, 1e-3)
end)

T.test("BinaryAccuracyTest.test_threshold", function()
  local b1 = M.BinaryAccuracy{name = "binary_accuracy", threshold = 0.3}
  local b2 = M.BinaryAccuracy{name = "binary_accuracy", threshold = 0.9}
  local y_true, y_pred = array{{1}, {1}, {0}, {0}}, array{{0.98}, {0.5}, {0.1}, {0.2}}
  b1:update_state(y_true, y_pred)
  b2:update_state(y_true, y_pred)
  close(b1:result(), 1.0)
  close(b2:result(), 0.75)
end)

T.test("CategoricalAccuracyTest.test_unweighted / weighted", function()
  local y_true = array{{0, 0, 1}, {0, 1, 0}}
  local y_pred = array{{0.1, 0.9, 0.8}, {0.05, 0.95, 0}}
  local c = M.CategoricalAccuracy{name = "categorical_accuracy"}
  c:update_state(y_true, y_pred)
  close(c:result(), 0.5, 1e-3)
  c = M.CategoricalAccuracy{name = "categorical_accuracy"}
  c:update_state(y_true, y_pred, array{0.7, 0.3})
  close(c:result(), 0.3, 1e-3)
end)

T.test("SparseCategoricalAccuracyTest.test_unweighted / weighted", function()
  local y_true = array({{3}, {2}}, "int64")
  local y_pred = array{{0.1, 0.6, 0.3}, {0.05, 0.95, 0}}
  local s = M.SparseCategoricalAccuracy{name = "sparse_categorical_accuracy"}
  s:update_state(y_true, y_pred)
  close(s:result(), 0.5, 1e-3)
  s = M.SparseCategoricalAccuracy{name = "sparse_categorical_accuracy"}
  s:update_state(y_true, y_pred, array{0.7, 0.3})
  close(s:result(), 0.3, 1e-3)
end)

T.test("SparseCategoricalAccuracyTest.test_squeeze_y_true (and _shape)", function()
  local s = M.SparseCategoricalAccuracy()
  s:update_state(array({{1}, {2}, {3}}, "int64"),
                 array{{0.9, 0.05, 0.05}, {0.05, 0.9, 0.05}, {0.05, 0.05, 0.9}})
  close(s:result(), 1.0, 1e-4)
  s = M.SparseCategoricalAccuracy()
  s:update_state(array({1, 2}, "int64"), array{{0.9, 0.1}, {0.1, 0.9}})
  close(s:result(), 1.0, 1e-4)
  s = M.SparseCategoricalAccuracy()
  s:update_state(array({{1}, {2}, {3}}, "int64"), array{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}})
  close(s:result(), 1.0, 1e-4)
  s = M.SparseCategoricalAccuracy()
  s:update_state(array({1, 2, 3}, "int32"),
                 array({{0.9, 0.1, 0.0}, {0.0, 0.9, 0.1}, {0.1, 0.0, 0.9}}, "float64"))
  close(s:result(), 1.0, 1e-4)
end)

T.test("SparseCategoricalAccuracyTest.test_reshape_matches_to_original_y_true_shape", function()
  local s = M.SparseCategoricalAccuracy()
  s:update_state(array({{1}, {2}}, "int64"), array{{0.9, 0.1}, {0.1, 0.9}})
  close(s:result(), 1.0, 1e-4)
end)

T.test("SparseCategoricalAccuracyTest.test_matching_shapes_without_squeeze", function()
  local s = M.SparseCategoricalAccuracy()
  s:update_state(array({3, 2, 1}, "int32"), array{{0, 0, 1}, {0, 1, 0}, {1, 0, 0}})
  close(s:result(), 1.0, 1e-4)
end)

T.test("test_reshape_matches' shapes: refused, not broadcast", function()
  local s = M.SparseCategoricalAccuracy()
  T.raises(function()
    s:update_state(array({{1}, {1}}, "int64"), array{{{0.9, 0.1, 0.0}, {0.8, 0.15, 0.05}}})
  end, "update_state: labels of shape (2, 1) do not match outputs of shape (1, 2, 3)")
end)

T.done()
