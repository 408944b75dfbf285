-- mf.losses as Keras 3 computes them (issue 27 items 3, 4, 5 and the missing options):
-- labels of shape (N, 1), probabilities divided by their row sum, one loss per sample before
-- the reduction, BCE's clipping at exactly 0 and 1, sample_weight, label_smoothing and
-- ignore_class. Expected values are the literals of Keras's losses_test.py or the formula.
local T = dofile("tests/lua/harness.lua")
local L = mf.losses
local eye = mf.tensor{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}

T.test("labels of shape (N, 1): squeezed as Keras does (was 10.745; logits raised)", function()
  local labels = mf.tensor({{1}, {2}, {3}}, "int64")
  T.eq(L.sparse_categorical_crossentropy(labels, eye), 0, 1e-6)
  local logits = mf.tensor{{8, 1, 1}, {0, 9, 1}, {2, 3, 5}}
  T.eq(L.sparse_categorical_crossentropy(labels, logits, {from_logits = true}),
       L.sparse_categorical_crossentropy(mf.tensor({1, 2, 3}, "int64"), logits,
                                         {from_logits = true}))
  -- float labels are class numbers too (Keras casts them)
  T.eq(L.sparse_categorical_crossentropy(mf.tensor{{1}, {2}, {3}}, eye), 0, 1e-6)
  T.raises(function() L.sparse_categorical_crossentropy(mf.tensor({1, 2}, "int64"), eye) end,
           "labels must have the shape of logits without its last axis")
end)

T.test("probability cross-entropies divide each row by its sum (0.3239, was 0.0946)", function()
  local pred = mf.tensor{{0.9, 0.05, 0.05}, {0.5, 0.89, 0.6}, {0.05, 0.01, 0.94}}
  -- -mean(log(0.9), log(0.89 / 1.99), log(0.94)): the rows' sums are 1, 1.99, 1
  local want = -(math.log(0.9) + math.log(0.89 / 1.99) + math.log(0.94)) / 3
  T.eq(L.categorical_crossentropy(eye, pred), want, 1e-6)
  T.eq(L.sparse_categorical_crossentropy(mf.tensor({1, 2, 3}, "int64"), pred), want, 1e-6)
end)

T.test("reduction: one value per sample first ('none' was elementwise, 'sum' 297)", function()
  local y = mf.tensor{{1, 9, 2}, {-5, -2, 6}}
  local p = mf.tensor{{4, 8, 12}, {8, 1, 3}}
  T.eq(L.mean_squared_error(y, p, {reduction = "none"}), {110 / 3, 187 / 3}, 1e-4)
  T.eq(L.mean_squared_error(y, p, {reduction = "sum"}), 99, 1e-4)
  T.eq(L.mean_squared_error(y, p, {reduction = "sum_over_batch_size"}), 49.5, 1e-4)
  T.eq(L.binary_crossentropy(mf.tensor{{0, 1}, {0, 0}}, mf.tensor{{0.6, 0.4}, {0.4, 0.6}},
                             {reduction = "none"}), {0.916, 0.714}, 1e-3)   -- Keras's docstring
  -- labels of rank 1 against outputs (N, 1): expanded, not broadcast to (N, N)
  T.eq(L.mean_squared_error(mf.tensor{4, 8, 12}, mf.tensor{{3}, {0}, {1}}, {reduction = "none"}),
       {1, 64, 121})
  T.raises(function() L.mean_squared_error(y, p, {reduction = "avg"}) end,
           "option 'reduction' must be")
  -- an empty batch: Keras's divide_no_nan gives 0
  T.eq(L.mean_squared_error(mf.zeros{0, 3}, mf.zeros{0, 3}), 0)
end)

T.test("binary_crossentropy at exactly 0 and 1: Keras's clipping (3.98559, was 4.0295)", function()
  local y = mf.tensor{{1, 0}, {1, 0}}
  local p = mf.tensor{{1, 1}, {1, 0}}
  T.eq(L.binary_crossentropy(y, p), 3.98559, 1.5e-3)
  -- the float32 clip bound 1 - 1e-7 rounds to 1 - 2^-23: the loss of p = 1, y = 0
  T.eq(L.binary_crossentropy(mf.tensor{{0}}, mf.tensor{{1}}), -math.log(2 ^ -23), 1e-4)
end)

T.test("sample_weight: a number, per sample, per timestep; the object and option forms", function()
  local y = mf.tensor{{1, 9, 2}, {-5, -2, 6}}
  local p = mf.tensor{{4, 8, 12}, {8, 1, 3}}
  T.eq(L.mean_squared_error(y, p, {sample_weight = 2.3}), 113.85, 1e-3)
  T.eq(L.mean_squared_error{}(y, p, mf.tensor{{1.2}, {3.4}}), 767.8 / 6, 1e-3)
  T.eq(L.mean_squared_error{}(y, p, {1.2, 3.4}), 767.8 / 6, 1e-3)
  T.eq(L.mean_squared_error{reduction = "mean_with_sample_weight"}(y, p, {1.2, 3.4}),
       (110 / 3 * 1.2 + 187 / 3 * 3.4) / 4.6, 1e-3)
  T.raises(function() L.mean_squared_error{}(y, p, "heavy") end,
           "sample_weight must be a number or a tensor, got string")
  T.raises(function() L.mean_squared_error{}(y, p, 1, 2) end,
           "expected (labels, outputs [, sample_weight])")
  T.raises(function() L.mean_squared_error{sample_weight = 1} end, "unknown option 'sample_weight'")
end)

T.test("label_smoothing (binary: towards 0.5; categorical: s / classes)", function()
  local logits = mf.tensor{{10, -10, -10}}
  T.eq(L.binary_crossentropy(mf.tensor{{1, 0, 1}}, logits, {from_logits = true,
                                                            label_smoothing = 0.1}),
       (10 + 5 * 0.1) / 3, 1.5e-3)
  T.eq(L.categorical_crossentropy(mf.tensor{{1, 0, 0}}, mf.tensor{{100, -100, -100}},
                                  {from_logits = true, label_smoothing = 0.1}),
       400 * 0.1 / 3, 1.5e-3)
  T.raises(function() L.binary_crossentropy{label_smoothing = 2} end,
           "option 'label_smoothing' must be a number in [0, 1]")
  T.raises(function() L.sparse_categorical_crossentropy{label_smoothing = 0.1} end,
           "unknown option 'label_smoothing'")
end)

T.test("ignore_class: those labels count 0 and leave the mean; gradients stay finite", function()
  local logits = mf.tensor{{{0.854, 0.698, 0.598}, {0.088, 0.86, 0.018}}}
  local labels = mf.tensor({{-1, 3}}, "int64")
  local f = L.sparse_categorical_crossentropy{from_logits = true, ignore_class = -1}
  T.eq(f(labels, logits), 1.480129, 1e-5)   -- the mean over the one valid entry
  local probs = mf.nn.softmax(logits)
  local g = mf.grad(function(q)
    return L.sparse_categorical_crossentropy(labels, q, {ignore_class = -1})
  end)(probs)
  T.eq(mf.reduce_all(mf.is_finite(g)):item(), true)
  T.eq(mf.reduce_sum(mf.abs(g[1][1])):item(), 0)   -- the ignored row gets no gradient
  T.raises(function() L.sparse_categorical_crossentropy{ignore_class = 0.5} end,
           "option 'ignore_class' must be an integer class")
  -- every label ignored: 0, as Keras
  T.eq(f(mf.tensor({{-1, -1}}, "int64"), logits), 0)
end)

T.test("in a graph with an unknown batch", function()
  local g = mf.Graph()
  local y, p, loss, none
  g:as_default(function()
    y = mf.placeholder("float32", {-1, 3})
    p = mf.placeholder("float32", {-1, 3})
    loss = L.categorical_crossentropy(y, p)
    none = L.mean_squared_error(y, p, {reduction = "none"})
  end)
  local s = mf.Session(g)
  local pred = mf.tensor{{0.9, 0.05, 0.05}, {0.5, 0.89, 0.6}, {0.05, 0.01, 0.94}}
  T.eq(s:run(loss, {[y] = eye, [p] = pred}), L.categorical_crossentropy(eye, pred), 1e-6)
  T.eq(s:run(none, {[y] = eye, [p] = pred}).shape, {3})
end)

T.done()
