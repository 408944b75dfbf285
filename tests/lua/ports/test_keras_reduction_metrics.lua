-- Keras 3's keras/src/metrics/reduction_metrics_test.py (commit 3422977a): SumTest, MeanTest
-- and MetricWrapperTest's values, line by line with the test's expected values. Left out:
-- test_config (serialization), the dynamic-shape specs (KerasTensor) and the boolean-model
-- case. MeanMetricWrapper(fn = mse) is written as a Mean of the per-sample values of fn, as
-- the wrapper does (its update_state calls Mean.update_state(fn(y_true, y_pred), weights)).
local T = dofile("tests/lua/harness.lua")
local M = mf.metrics

-- assertAllClose(result, want, atol)
local K = dofile("tests/lua/ports/keras_testing.lua")
local function close(got, want, atol) K.close(got, want, atol or 1e-6) end

T.test("SumTest.test_unweighted / weighted / weighted_nd / weighted_nd_broadcast", function()
  local sum_obj = M.Sum{name = "sum"}
  sum_obj:update_state({1, 3, 5, 7})
  close(sum_obj:result(), 16.0, 1e-3)
  sum_obj = M.Sum{name = "sum"}
  sum_obj:update_state({1, 3, 5, 7}, {1, 1, 0, 0})
  close(sum_obj:result(), 4.0, 1e-3)
  sum_obj = M.Sum{name = "sum"}
  sum_obj:update_state({{1, 3}, {5, 7}}, {{1, 1}, {1, 0}})
  close(sum_obj:result(), 9.0, 1e-3)
  sum_obj = M.Sum{name = "sum"}
  sum_obj:update_state({{1, 3}, {5, 7}}, {{1, 0}})
  close(sum_obj:result(), 6.0, 1e-3)
end)

T.test("MeanTest.test_unweighted / weighted / weighted_negative_weights", function()
  local mean_obj = M.Mean{name = "mean"}
  mean_obj:update_state({1, 3, 5, 7})
  close(mean_obj:result(), 4.0, 1e-3)
  mean_obj = M.Mean{name = "mean"}
  mean_obj:update_state({1, 3, 5, 7}, {1, 1, 0, 0})
  close(mean_obj:result(), 2.0, 1e-3)
  mean_obj = M.Mean{name = "mean"}
  mean_obj:update_state({1, 3, 5, 7}, {-1, -1, 0, 0})
  close(mean_obj:result(), 2.0, 1e-3)
end)

T.test("MeanTest.test_weighted_nd / weighted_nd_broadcast", function()
  local mean_obj = M.Mean{name = "mean"}
  mean_obj:update_state({{1, 3}, {5, 7}}, {{1, 1}, {1, 0}})
  close(mean_obj:result(), 3.0, 1e-3)
  mean_obj = M.Mean{name = "mean"}
  mean_obj:update_state({{1, 3}, {5, 7}}, {{1, 0}})
  close(mean_obj:result(), 3.0, 1e-3)
end)

local y_true = mf.tensor{{0, 1, 0, 1, 0}, {0, 0, 1, 1, 1}, {1, 1, 1, 1, 0}, {0, 0, 0, 0, 1}}
local y_pred = mf.tensor{{0, 0, 1, 1, 0}, {1, 1, 1, 1, 1}, {0, 1, 0, 1, 0}, {1, 1, 1, 1, 1}}
local function mse(a, b) return (a - b) ^ 2 end

T.test("MetricWrapperTest.test_unweighted / weighted / weighted_broadcast", function()
  local mse_obj = M.Mean{name = "mse"}
  mse_obj:update_state(mse(y_true, y_pred))
  close(mse_obj:result(), 0.5, 1e-5)
  mse_obj = M.Mean{name = "mse"}
  mse_obj:update_state(mse(y_true, y_pred), mf.tensor{1.0, 1.5, 2.0, 2.5})
  close(mse_obj:result(), 0.54285, 1e-5)
  mse_obj = M.Mean{name = "mse"}
  mse_obj:update_state(mse(y_true, y_pred), mf.tensor{{1.0, 0.0, 0.5, 0.0, 1.0}})
  close(mse_obj:result(), 0.45, 1e-5)
end)

T.done()
