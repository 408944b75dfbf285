-- metrics.lua — mf.metrics: accuracy(labels, outputs) as a scalar tensor
-- (works in every mode), and Keras 3's streaming metrics, which accumulate
-- Lua numbers from eager values: Mean, Sum, Accuracy, BinaryAccuracy,
-- CategoricalAccuracy, SparseCategoricalAccuracy;
--   m:update_state(...[, sample_weight]), m:result() -> number, m:reset_state().
-- As keras/src/metrics/reduction_metrics.py: values are reduced to one per
-- sample (reduce_to_samplewise_values) and weighted; Mean's result is
-- total / count, 0 when the count is 0 (divide_no_nan), so negative weights
-- divide as given and a NaN count gives NaN.
-- Sparse labels are 1-based classes. A sample whose outputs hold a NaN is
-- never a correct prediction (Keras's argmax would call it class 0).
local mf, lib = ...
local fail, check_opts = lib.fail, lib.check_opts

lib.help("metrics", "layers",
  "mf.metrics.accuracy(labels, outputs);  mf.metrics.Mean() Sum() Accuracy() " ..
  "BinaryAccuracy{threshold} CategoricalAccuracy() SparseCategoricalAccuracy();  " ..
  "m:update_state(... [, sample_weight]);  m:result();  m:reset_state()",
  "accuracy: the fraction of rows whose argmax is the label (1-based classes, also of " ..
  "shape (N, 1), or one-hot rows), a scalar tensor. The rest are Keras 3's streaming " ..
  "metrics: update_state adds a batch (values, or labels and outputs) with an optional " ..
  "sample_weight, result() is a Lua number. Mean and Sum reduce values to one per sample " ..
  "first, as Keras; Mean's result is 0 when the weights sum to 0, and divides by a " ..
  "negative or NaN sum as given. Accuracy is keras.metrics.Accuracy: labels equal to " ..
  "outputs exactly. BinaryAccuracy thresholds outputs at 0.5; CategoricalAccuracy compares " ..
  "argmaxes of one-hot labels and outputs; SparseCategoricalAccuracy compares 1-based " ..
  "classes (of shape (N) or (N, 1)) with the outputs' argmax. A sample with a NaN output is " ..
  "counted wrong (Keras's argmax calls it class 0). fit's metrics = {\"accuracy\"} chooses " ..
  "as Keras's compile does: binary for outputs with a last axis of 1 (or rank 1), sparse " ..
  "for labels of lower rank or a last axis of 1, else categorical.",
  [[
mf.metrics.accuracy(mf.tensor({2, 1}, "int64"), mf.tensor{{0, 1}, {0, 1}}):item()  --> 0.5
m = mf.metrics.Mean(); m:update_state(mf.tensor{1, 3, 5, 7}, mf.tensor{1, 1, 0, 0})
m:result()  --> 2
a = mf.metrics.SparseCategoricalAccuracy()
a:update_state(mf.tensor{{2}, {1}}, mf.tensor{{0.1, 0.6, 0.3}, {0.05, 0.95, 0}})
a:result()  --> 0.5]])
local metrics = {}
mf.metrics = metrics

local function as_tensor(fname, what, v)
  if lib.is_tensor(v) then return v end
  if type(v) == "number" or (type(v) == "table" and not getmetatable(v)) then
    return mf.tensor(v)
  end
  fail(fname, "%s must be a number or a tensor, got %s", what, type(v))
end

-- True where a row of 'out' (over its last axis) holds no NaN.
local function no_nan_rows(out)
  return mf.logical_not(mf.reduce_any(mf.is_nan(out), {axis = -1}))
end

-- ---- the per-sample matches (float32 1 or 0) ----------------------------------------------

local function sparse_matches(fname, labels, out)
  if out.ndim < 1 then
    fail(fname, "expected outputs of rank >= 1 (batch, classes), got a scalar")
  end
  if labels.ndim == out.ndim and labels.shape[labels.ndim] == 1 then
    labels = mf.squeeze(labels, -1)   -- Keras: labels (N, 1)
  end
  local fits = labels.ndim == out.ndim - 1
  for i = 1, fits and labels.ndim or 0 do
    local a, b = labels.shape[i], out.shape[i]
    if a >= 0 and b >= 0 and a ~= b then fits = false end
  end
  if not fits then
    fail(fname, "labels of shape %s do not match outputs of shape %s (expected classes of " ..
         "the outputs' shape without the last axis)", lib.shape_text(labels.shape),
         lib.shape_text(out.shape))
  end
  local hit = mf.equal(mf.argmax(out, -1), mf.cast(labels, "int64"))
  return mf.cast(mf.logical_and(hit, no_nan_rows(out)), "float32")
end

local function categorical_matches(fname, labels, out)
  if labels.ndim ~= out.ndim or out.ndim < 1 then
    fail(fname, "expected one-hot labels of the outputs' shape, got labels %s and outputs %s",
         lib.shape_text(labels.shape), lib.shape_text(out.shape))
  end
  local hit = mf.equal(mf.argmax(out, -1), mf.argmax(labels, -1))
  return mf.cast(mf.logical_and(hit, no_nan_rows(out)), "float32")
end

local function binary_matches(threshold)
  return function(_, labels, out)
    labels, out = lib.same_rank(labels, out)
    local dtype = out.dtype == "float64" and "float64" or "float32"
    local pred = mf.cast(mf.greater(out, threshold), dtype)
    local hit = mf.equal(mf.cast(labels, dtype), pred)
    return mf.cast(mf.logical_and(hit, mf.logical_not(mf.is_nan(out))), "float32")
  end
end

local function exact_matches(_, labels, out)
  labels, out = lib.same_rank(labels, out)
  local dtype = out.dtype == "float64" and "float64" or "float32"
  return mf.cast(mf.equal(mf.cast(labels, dtype), mf.cast(out, dtype)), "float32")
end

-- Keras's compile("accuracy"): binary, sparse or categorical by the shapes.
local function auto_matches(fname, labels, out)
  local last = out.shape[out.ndim]
  if out.ndim <= 1 or last == 1 then return binary_matches(0.5)(fname, labels, out) end
  if labels.ndim < out.ndim or labels.shape[labels.ndim] == 1 then
    return sparse_matches(fname, labels, out)
  end
  return categorical_matches(fname, labels, out)
end

-- mf.metrics.accuracy(labels, outputs) -> the fraction of rows whose argmax
-- is the label (a float32 scalar tensor).
function metrics.accuracy(labels, out)
  local fname = "accuracy"
  if not lib.is_tensor(out) then fail(fname, "expected outputs of rank >= 1, got %s", type(out)) end
  labels = as_tensor(fname, "labels", labels)
  local m
  if labels.ndim == out.ndim and out.ndim >= 2 and labels.shape[labels.ndim] ~= 1 then
    m = categorical_matches(fname, labels, out)
  else
    m = sparse_matches(fname, labels, out)
  end
  return mf.reduce_mean(m)
end

-- ---- Keras's reduce_to_samplewise_values ----------------------------------------------------

local function axes_from(first, last)
  local out = {}
  for a = first, last do out[#out + 1] = a end
  return out
end

-- values (and weights) reduced to one per sample with 'reduce' (float64).
local function samplewise(fname, values, sw, reduce)
  local function float64(what, v)   -- Lua numbers are read as doubles
    if type(v) == "number" or (type(v) == "table" and not getmetatable(v)) then
      local ok, t = pcall(mf.tensor, v, "float64")
      if ok then return t end
    end
    return mf.cast(as_tensor(fname, what, v), "float64")
  end
  values = float64("values", values)
  if sw ~= nil then
    sw = float64("sample_weight", sw)
    values, sw = lib.same_rank(values, sw)
    local wn, vn = sw.ndim, values.ndim
    if vn > wn then values = reduce(values, {axis = axes_from(wn + 1, vn)}) end
    local ok, b = pcall(mf.broadcast_to, sw, values.shape)
    if not ok then
      fail(fname, "sample_weight of shape %s does not fit values of shape %s",
           lib.shape_text(sw.shape), lib.shape_text(values.shape))
    end
    sw = b
    values = values * sw
    if wn > 1 then sw = reduce(sw, {axis = axes_from(2, wn)}) end
  end
  if values.ndim > 1 then values = reduce(values, {axis = axes_from(2, values.ndim)}) end
  return values, sw
end

local function total(t) return mf.reduce_sum(t):item() end

-- ---- Mean and Sum -------------------------------------------------------------------------

local function metric_class(name)
  local c = {}
  c.__index = c
  c.__name = "mf.metrics." .. name
  c.__tostring = function(self)
    return string.format("<mf.metrics.%s '%s' %.6g>", name, self.name, self:result())
  end
  return c
end

local Mean = metric_class("Mean")

-- Mean([{name}]): the running (weighted) mean of the values given.
function metrics.Mean(opts)
  opts = check_opts("Mean", opts, {name = true})
  return setmetatable({name = opts.name or "mean", total = 0, count = 0}, Mean)
end

-- m:update_state(values [, sample_weight])
function Mean:update_state(values, sample_weight)
  if type(values) == "number" and (sample_weight == nil or type(sample_weight) == "number") then
    local w = sample_weight or 1   -- a Lua number stays a double (fit's loss each step)
    self.total, self.count = self.total + values * w, self.count + w
    return self
  end
  local v, w = samplewise("update_state", values, sample_weight, mf.reduce_mean)
  self.total = self.total + total(v)
  if w ~= nil then
    self.count = self.count + total(w)
  else
    self.count = self.count + (v.ndim >= 1 and v.shape[1] or 1)
  end
  return self
end

-- Keras's divide_no_nan: 0 only for a count of exactly 0
function Mean:result()
  if self.count == 0 then return 0 end
  return self.total / self.count
end
function Mean:reset_state() self.total, self.count = 0, 0 end
lib.publish_methods(Mean, {"update_state", "result", "reset_state"})

local Sum = metric_class("Sum")

-- Sum([{name}]): the running (weighted) sum of the values given.
function metrics.Sum(opts)
  opts = check_opts("Sum", opts, {name = true})
  return setmetatable({name = opts.name or "sum", total = 0}, Sum)
end

-- s:update_state(values [, sample_weight])
function Sum:update_state(values, sample_weight)
  self.total = self.total + total((samplewise("update_state", values, sample_weight,
                                              mf.reduce_sum)))
  return self
end
function Sum:result() return self.total end
function Sum:reset_state() self.total = 0 end
lib.publish_methods(Sum, {"update_state", "result", "reset_state"})

-- ---- the accuracies: a Mean of per-sample matches --------------------------------------------

-- A class of Mean over matches_of(options)'s per-sample matches; returns
-- its constructor.
local function accuracy_class(name, default_name, matches_of, extra_keys)
  local c = metric_class(name)
  setmetatable(c, {__index = Mean})
  local function new(opts)
    local keys = {name = true}
    for k in pairs(extra_keys or {}) do keys[k] = true end
    opts = check_opts(name, opts, keys)
    local self = setmetatable({name = opts.name or default_name, total = 0, count = 0}, c)
    self.matches_ = matches_of(opts)
    return self
  end
  -- m:update_state(labels, outputs [, sample_weight])
  function c:update_state(labels, out, sample_weight)
    local fname = "update_state"
    labels, out = as_tensor(fname, "labels", labels), as_tensor(fname, "outputs", out)
    return Mean.update_state(self, self.matches_(fname, labels, out), sample_weight)
  end
  lib.publish_methods(c, {"update_state"})
  return new
end

metrics.Accuracy = accuracy_class("Accuracy", "accuracy", function() return exact_matches end)
metrics.BinaryAccuracy = accuracy_class("BinaryAccuracy", "binary_accuracy", function(opts)
  local t = opts.threshold
  if t ~= nil and (type(t) ~= "number" or t ~= t) then
    fail("BinaryAccuracy", "option 'threshold' must be a number, got %s", tostring(t))
  end
  return binary_matches(t or 0.5)
end, {threshold = true})
metrics.CategoricalAccuracy = accuracy_class("CategoricalAccuracy", "categorical_accuracy",
                                             function() return categorical_matches end)
metrics.SparseCategoricalAccuracy = accuracy_class("SparseCategoricalAccuracy",
                                                   "sparse_categorical_accuracy",
                                                   function() return sparse_matches end)
-- fit's "accuracy": the choice Keras's compile makes from the shapes
local make_auto = accuracy_class("accuracy", "accuracy", function() return auto_matches end)

-- A streaming metric for fit's 'metrics' option: "accuracy" or an object
-- with update_state(labels, outputs), result() and reset_state().
function lib.metric_obj(fname, m)
  if m == "accuracy" or m == "acc" then return make_auto{name = m} end
  if type(m) == "table" and m.update_state and m.result and m.reset_state then return m end
  fail(fname, "a metric must be \"accuracy\" or a metric object " ..
       "(mf.metrics.SparseCategoricalAccuracy()), got %s",
       type(m) == "string" and "'" .. m .. "'" or type(m))
end
