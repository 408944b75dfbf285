-- Keras 3's keras/src/losses/losses_test.py (commit 3422977a), the classes of the losses
-- moonflow has: MeanSquaredErrorTest, BinaryCrossentropyTest, CategoricalCrossentropyTest and
-- SparseCategoricalCrossentropyTest, line by line with the test's own expected values.
-- Keras's classes are moonflow's option form: losses.MeanSquaredError(reduction = r)(y, p, w)
-- is mf.losses.mean_squared_error{reduction = r}(y, p, w). Sparse labels are 1-based here
-- (Keras's class 0 is 1); ignore_class = -1 is the same class in both. Left out:
-- test_config (serialization), test_dtype_arg (bfloat16), the axis argument (moonflow's
-- classes are the last axis) and the SyntaxWarning test.
local T = dofile("tests/lua/harness.lua")
local L = mf.losses

local K = dofile("tests/lua/ports/keras_testing.lua")
local almost = K.almost
local function close(got, want, atol) K.close(got, want, atol) end

local function array(v, dtype) return mf.tensor(v, dtype or "float32") end

-- ---- MeanSquaredErrorTest ----------------------------------------------------------------
local mse_true = array{{1, 9, 2}, {-5, -2, 6}}
local mse_pred = array{{4, 8, 12}, {8, 1, 3}}

T.test("MeanSquaredErrorTest.test_base_function_reduction", function()
  local loss = L.mean_squared_error(array{4, 8, 12}, array{{3}, {0}, {1}}, {reduction = "none"})
  T.eq(loss.shape, {3})
end)

T.test("MeanSquaredErrorTest.test_all_correct_unweighted", function()
  local y_true = array{{4, 8, 12}, {8, 1, 3}}
  almost(L.mean_squared_error{}(y_true, y_true), 0.0)
end)

T.test("MeanSquaredErrorTest.test_unweighted / scalar / sample / zero weighted", function()
  local mse_obj = L.mean_squared_error{}
  almost(mse_obj(mse_true, mse_pred), 49.5)
  almost(mse_obj(mse_true, mse_pred, 2.3), 113.85)
  almost(mse_obj(mse_true, mse_pred, array{{1.2}, {3.4}}), 767.8 / 6)
  almost(mse_obj(mse_true, mse_pred, 0), 0.0)
end)

T.test("MeanSquaredErrorTest.test_timestep_weighted", function()
  local y_true = mf.reshape(array{1, 9, 2, -5, -2, 6}, {2, 3, 1})
  local y_pred = mf.reshape(array{4, 8, 12, 8, 1, 3}, {2, 3, 1})
  local sample_weight = mf.reshape(array{3, 6, 5, 0, 4, 2}, {2, 3})
  almost(L.mean_squared_error{}(y_true, y_pred, sample_weight), 97.833336)
end)

T.test("MeanSquaredErrorTest.test_no_reduction / sum / mean_with_sample_weight", function()
  almost(L.mean_squared_error{reduction = "none"}(mse_true, mse_pred, 2.3),
         {84.3333, 143.3666})
  almost(L.mean_squared_error{reduction = "sum"}(mse_true, mse_pred, 2.3), 227.69998)
  almost(L.mean_squared_error{reduction = "mean_with_sample_weight"}(
           mse_true, mse_pred, array{{1.2}, {3.4}}),
         (110 / 3 * 1.2 + 187 / 3 * 3.4) / (1.2 + 3.4))
end)

-- ---- BinaryCrossentropyTest --------------------------------------------------------------
local eye = array{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}

T.test("BinaryCrossentropyTest.test_all_correct_unweighted", function()
  almost(L.binary_crossentropy{}(eye, eye), 0.0)
  local logits = array{{10.0, -10.0, -10.0}, {-10.0, 10.0, -10.0}, {-10.0, -10.0, 10.0}}
  almost(L.binary_crossentropy{from_logits = true}(eye, logits), 0.0)
end)

T.test("BinaryCrossentropyTest.test_unweighted", function()
  local y_pred = array{{0.9, 0.1, 0.2}, {0.3, 0.8, 0.1}, {0.1, 0.2, 0.7}}
  close(L.binary_crossentropy{}(eye, y_pred), 0.20046903)
  local y_true = mf.reshape(array{1, 0, 1, 0}, {2, 2})
  y_pred = mf.reshape(array{1, 1, 1, 0}, {2, 2})
  almost(L.binary_crossentropy{}(y_true, y_pred), 3.98559)
  y_true = array{{1, 0, 1}, {0, 1, 1}}
  local logits = array{{10.0, -10.0, 10.0}, {10.0, 10.0, -10.0}}
  almost(L.binary_crossentropy{from_logits = true}(y_true, logits), 3.3333)
end)

T.test("BinaryCrossentropyTest.test_scalar_weighted / test_sample_weighted", function()
  local y_true = mf.reshape(array{1, 0, 1, 0}, {2, 2})
  local y_pred = mf.reshape(array{1, 1, 1, 0}, {2, 2})
  almost(L.binary_crossentropy{}(y_true, y_pred, 2.3), 9.1668)
  almost(L.binary_crossentropy{}(y_true, y_pred, mf.reshape(array{1.2, 3.4}, {2, 1})), 4.7827)
  local yt = array{{1, 0, 1}, {0, 1, 1}}
  local logits = array{{10.0, -10.0, 10.0}, {10.0, 10.0, -10.0}}
  almost(L.binary_crossentropy{from_logits = true}(yt, logits, 2.3), 7.666)
  almost(L.binary_crossentropy{from_logits = true}(yt, logits, array({4, 3}, "int64")), 10.0)
end)

T.test("BinaryCrossentropyTest.test_no_reduction", function()
  local y_true = array{{1, 0, 1}, {0, 1, 1}}
  local logits = array{{10.0, -10.0, 10.0}, {10.0, 10.0, -10.0}}
  close(L.binary_crossentropy{from_logits = true, reduction = "none"}(y_true, logits),
        {0.0, 6.666}, 1e-3)
end)

T.test("BinaryCrossentropyTest.test_label_smoothing", function()
  local logits = array{{10.0, -10.0, -10.0}}
  local y_true = array{{1, 0, 1}}
  local label_smoothing = 0.1
  local loss = L.binary_crossentropy{from_logits = true, label_smoothing = label_smoothing}(
    y_true, logits)
  almost(loss, (10.0 + 5.0 * label_smoothing) / 3.0)
end)

T.test("BinaryCrossentropyTest.test_shape_mismatch", function()
  local y_true = array{{0}, {1}, {2}}
  local y_pred = array{{0.9, 0.05, 0.05}, {0.5, 0.89, 0.6}, {0.05, 0.01, 0.94}}
  T.raises(function() L.binary_crossentropy{}(y_true, y_pred) end, "must have the same shape")
end)

-- ---- CategoricalCrossentropyTest ---------------------------------------------------------
local cce_pred = array{{0.9, 0.05, 0.05}, {0.5, 0.89, 0.6}, {0.05, 0.01, 0.94}}
local cce_logits = array{{8.0, 1.0, 1.0}, {0.0, 9.0, 1.0}, {2.0, 3.0, 5.0}}

T.test("CategoricalCrossentropyTest.test_all_correct_unweighted", function()
  local y_true = array(eye:totable(), "int64")
  almost(L.categorical_crossentropy{}(y_true, eye), 0.0)
  local logits = array{{10.0, 0.0, 0.0}, {0.0, 10.0, 0.0}, {0.0, 0.0, 10.0}}
  almost(L.categorical_crossentropy{from_logits = true}(y_true, logits), 0.0)
end)

T.test("CategoricalCrossentropyTest.test_unweighted / scalar / sample weighted", function()
  local y_true = array({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, "int64")
  almost(L.categorical_crossentropy{}(y_true, cce_pred), 0.3239)
  almost(L.categorical_crossentropy{from_logits = true}(y_true, cce_logits), 0.0573)
  almost(L.categorical_crossentropy{}(y_true, cce_pred, 2.3), 0.7449)
  almost(L.categorical_crossentropy{from_logits = true}(y_true, cce_logits, 2.3), 0.1317)
  local sample_weight = array{{1.2}, {3.4}, {5.6}}
  almost(L.categorical_crossentropy{}(y_true, cce_pred, sample_weight), 1.0696)
  almost(L.categorical_crossentropy{from_logits = true}(y_true, cce_logits, sample_weight),
         0.31829)
end)

T.test("CategoricalCrossentropyTest.test_no_reduction", function()
  local loss = L.categorical_crossentropy{from_logits = true, reduction = "none"}(eye, cce_logits)
  close(loss, {0.001822, 0.000459, 0.169846})
end)

T.test("CategoricalCrossentropyTest.test_label_smoothing (and _ndarray)", function()
  local logits = array{{100.0, -100.0, -100.0}}
  local y_true = array{{1, 0, 0}}
  local loss = L.categorical_crossentropy{from_logits = true, label_smoothing = 0.1}(y_true,
                                                                                      logits)
  almost(loss, 400.0 * 0.1 / 3.0)
end)

T.test("CategoricalCrossentropyTest.test_shape_mismatch", function()
  T.raises(function() L.categorical_crossentropy{}(array{{0}, {1}, {2}}, cce_pred) end,
           "must have the same shape")
end)

-- ---- SparseCategoricalCrossentropyTest (classes 1-based) ----------------------------------
T.test("SparseCategoricalCrossentropyTest.test_all_correct_unweighted", function()
  local y_true = array({{1}, {2}, {3}}, "int64")
  almost(L.sparse_categorical_crossentropy{}(y_true, eye), 0.0, 3)
  local logits = array{{10.0, 0.0, 0.0}, {0.0, 10.0, 0.0}, {0.0, 0.0, 10.0}}
  almost(L.sparse_categorical_crossentropy{from_logits = true}(y_true, logits), 0.0, 3)
end)

T.test("SparseCategoricalCrossentropyTest.test_unweighted / scalar / sample weighted", function()
  local scce, logit_scce = L.sparse_categorical_crossentropy{},
                           L.sparse_categorical_crossentropy{from_logits = true}
  almost(scce(array({1, 2, 3}, "int64"), cce_pred), 0.3239, 3)
  almost(logit_scce(array({1, 2, 3}, "int64"), cce_logits), 0.0573, 3)
  local y_true = array({{1}, {2}, {3}}, "int64")
  almost(scce(y_true, cce_pred, 2.3), 0.7449, 3)
  almost(logit_scce(y_true, cce_logits, 2.3), 0.1317, 3)
  local sample_weight = array{{1.2}, {3.4}, {5.6}}
  almost(scce(y_true, cce_pred, sample_weight), 1.0696, 3)
  almost(logit_scce(y_true, cce_logits, sample_weight), 0.31829, 3)
end)

T.test("SparseCategoricalCrossentropyTest.test_no_reduction", function()
  local loss = L.sparse_categorical_crossentropy{from_logits = true, reduction = "none"}(
    array({{1}, {2}, {3}}, "int64"), cce_logits)
  close(loss, {0.001822, 0.000459, 0.169846})
end)

T.test("SparseCategoricalCrossentropyTest.test_ignore_class", function()
  local logits = array{{{0.854, 0.698, 0.598}, {0.088, 0.86, 0.018}}}
  local f = L.sparse_categorical_crossentropy{from_logits = true, ignore_class = -1,
                                              reduction = "none"}
  close(f(array({{-1, 3}}, "int64"), logits), {{0.0, 1.480129}})
  close(f(array({{{-1}, {3}}}, "int64"), logits), {{0.0, 1.480129}})
end)

T.test("SparseCategoricalCrossentropyTest.test_binary_segmentation (first case)", function()
  local y_true = mf.tensor({{0, 1, 1, 0}, {1, 0, 1, 0}, {0, 0, 1, 1}, {1, 1, 0, 1}}, "int64") + 1
  local y_pred = array{
    {{1.0, 0.0}, {0.0, 1.0}, {0.0, 1.0}, {1.0, 0.0}},
    {{0.0, 1.0}, {1.0, 0.0}, {0.0, 1.0}, {1.0, 0.0}},
    {{1.0, 0.0}, {1.0, 0.0}, {0.0, 1.0}, {0.0, 1.0}},
    {{0.0, 1.0}, {0.0, 1.0}, {1.0, 0.0}, {0.0, 1.0}},
  }
  close(L.sparse_categorical_crossentropy{}(y_true, y_pred), 0.0)
end)

T.done()
