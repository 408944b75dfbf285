-- losses.lua — mf.losses: Keras 3's losses on mf ops. Each name works two
-- ways: mf.losses.mean_squared_error(labels, outputs [, {options}]) gives
-- the reduced loss now; mf.losses.mean_squared_error{options} gives a loss
-- object f(labels, outputs [, sample_weight]) to hand to model:fit{loss = f}
-- (Keras's MeanSquaredError()(y_true, y_pred, sample_weight)).
--
-- As Keras (keras/src/losses/loss.py and losses.py): each loss is first one
-- value per sample (the mean over the last axis for MSE and BCE, the sum of
-- the class axis for the cross-entropies), then weighted by sample_weight
-- and reduced: "sum_over_batch_size" (= "mean", the default) sums and divides
-- by the number of per-sample values, "sum" sums, "mean_with_sample_weight"
-- divides by the sum of the weights, "none" returns the per-sample values.
-- Labels one rank above or below the outputs with a last axis of 1 are
-- squeezed or expanded to the outputs' rank (squeeze_or_expand_to_same_rank).
-- Sparse labels are 1-based classes; 'from_logits' defaults to false: the
-- outputs are probabilities, clipped to [1e-7, 1 - 1e-7] in their dtype.
local mf, lib = ...
local fail, check_opts = lib.fail, lib.check_opts

lib.help("losses", "layers",
  "mf.losses.sparse_categorical_crossentropy categorical_crossentropy " ..
  "binary_crossentropy mean_squared_error: f(labels, outputs [, opts]) or " ..
  "f{opts}(labels, outputs [, sample_weight])",
  "Keras 3's losses: called with (labels, outputs [, opts]) they return the reduced loss; " ..
  "called with an options table they return a loss object for fit, called as " ..
  "f(labels, outputs [, sample_weight]). Each loss is one value per sample (the mean over " ..
  "the last axis for mean_squared_error and binary_crossentropy, the class sum for the " ..
  "cross-entropies), times sample_weight (a number or a tensor of samples), then reduced " ..
  "by 'reduction': \"sum_over_batch_size\" = \"mean\" (default: the sum over the number " ..
  "of values), \"sum\", \"mean_with_sample_weight\" (the sum over the weights' sum) or " ..
  "\"none\" (the per-sample values). Options: from_logits = false (probabilities, which the " ..
  "cross-entropies first divide by their row sum and clip to [1e-7, 1 - 1e-7], as Keras; " ..
  "from_logits = true uses the fused ops of mf.nn), reduction, label_smoothing (binary and " ..
  "categorical: labels * (1 - s) + s / classes, s / 2 for binary), ignore_class (sparse: " ..
  "labels equal to it count 0 and are left out of the mean), and sample_weight in the " ..
  "(labels, outputs, opts) form. Sparse labels are 1-based classes; labels of shape " ..
  "(N, 1) are squeezed as Keras does.",
  [[
mf.losses.mean_squared_error(mf.tensor{1, 2}, mf.tensor{1, 4})  --> 2
f = mf.losses.sparse_categorical_crossentropy{from_logits = true}
f(mf.tensor({1}, "int64"), mf.tensor{{0, 0}}):item()  --> 0.6931
f = mf.losses.mean_squared_error{reduction = "none"}
f(mf.tensor{{1, 2}, {3, 4}}, mf.tensor{{1, 4}, {3, 4}})  --> {2, 0}]])
local losses = {}
mf.losses = losses
local EPS = 1e-7 -- Keras's epsilon: probabilities are clipped to [eps, 1 - eps]

local function float_like(t, like)
  if t.dtype ~= like.dtype then return mf.cast(t, like.dtype) end
  return t
end

-- Keras's squeeze_or_expand_to_same_rank(x1, x2): a last axis of 1 on the
-- higher-rank side is squeezed, or the rank-1 side is expanded.
local function same_rank(x1, x2)
  if x1.ndim == x2.ndim + 1 and x1.shape[x1.ndim] == 1 then
    if x2.ndim == 1 then x2 = mf.expand_dims(x2, -1) else x1 = mf.squeeze(x1, -1) end
  elseif x2.ndim == x1.ndim + 1 and x2.shape[x2.ndim] == 1 then
    if x1.ndim == 1 then x1 = mf.expand_dims(x1, -1) else x2 = mf.squeeze(x2, -1) end
  end
  return x1, x2
end
lib.same_rank = same_rank

local function same_shape(fname, labels, out)
  local a, b = labels.shape, out.shape
  local same = #a == #b
  for i = 1, #a do
    if a[i] >= 0 and b[i] and b[i] >= 0 and a[i] ~= b[i] then same = false end
  end
  if not same then
    fail(fname, "labels and outputs must have the same shape, got labels %s and outputs %s",
         lib.shape_text(a), lib.shape_text(b))
  end
end

local function smooth(labels, s, classes)
  if not s or s == 0 then return labels end
  return labels * (1 - s) + s / classes
end

local function sum_last(x) return mf.reduce_sum(x, {axis = -1}) end

-- impl[name](labels, outputs, opts) -> per-sample losses [, mask of the valid ones]
local impl = {}

function impl.sparse_categorical_crossentropy(labels, out, opts)
  local fname = "sparse_categorical_crossentropy"
  if labels.ndim == out.ndim and labels.shape[labels.ndim] == 1 then
    labels = mf.squeeze(labels, -1)
  end
  if labels.ndim ~= out.ndim - 1 then
    fail(fname, "labels of shape %s do not fit outputs of shape %s (expected classes of " ..
         "rank %d)", lib.shape_text(labels.shape), lib.shape_text(out.shape), out.ndim - 1)
  end
  if labels.dtype ~= "int32" and labels.dtype ~= "int64" then
    labels = mf.cast(labels, "int64")   -- as Keras: class numbers of any dtype
  end
  local valid
  if opts.ignore_class ~= nil then
    valid = mf.not_equal(labels, mf.cast(mf.tensor(opts.ignore_class), labels.dtype))
    labels = mf.where(valid, labels, mf.ones_like(labels))   -- any class: masked below
  end
  local logits = out
  if not opts.from_logits then   -- Keras: log of the clipped probabilities as logits
    logits = mf.log(mf.clip_by_value(out, EPS, 1 - EPS))
  end
  local per = mf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
  if valid then per = per * float_like(valid, per) end
  return per, valid
end

function impl.categorical_crossentropy(labels, out, opts)
  same_shape("categorical_crossentropy", labels, out)
  labels = smooth(float_like(labels, out), opts.label_smoothing, out.shape[out.ndim])
  if opts.from_logits then
    return mf.nn.softmax_cross_entropy_with_logits(labels, out)
  end
  -- Keras: each row divided by its sum, then clipped
  local p = mf.clip_by_value(out / mf.reduce_sum(out, {axis = -1, keepdims = true}),
                             EPS, 1 - EPS)
  return -sum_last(labels * mf.log(p))
end

function impl.binary_crossentropy(labels, out, opts)
  labels, out = same_rank(labels, out)
  same_shape("binary_crossentropy", labels, out)
  labels = float_like(labels, out)
  local s = opts.label_smoothing
  if s and s ~= 0 then labels = labels * (1 - s) + 0.5 * s end
  local per
  if opts.from_logits then
    per = mf.nn.sigmoid_cross_entropy_with_logits(labels, out)
  else
    -- Keras clips the probability, then takes log(p) and log(1 - p)
    local p = mf.clip_by_value(out, EPS, 1 - EPS)
    per = -(labels * mf.log(p) + (1 - labels) * mf.log(1 - p))
  end
  return mf.reduce_mean(per, {axis = -1})
end

function impl.mean_squared_error(labels, out)
  labels, out = same_rank(labels, out)
  return mf.reduce_mean(mf.square(float_like(labels, out) - out), {axis = -1})
end

local keys = {
  sparse_categorical_crossentropy = {from_logits = true, reduction = true, ignore_class = true},
  categorical_crossentropy = {from_logits = true, reduction = true, label_smoothing = true},
  binary_crossentropy = {from_logits = true, reduction = true, label_smoothing = true},
  mean_squared_error = {reduction = true},
}

local REDUCTIONS = {sum_over_batch_size = true, mean = true, sum = true,
                    mean_with_sample_weight = true, none = true}

-- The options of loss 'fname' (and the key 'extra': sample_weight at a
-- call), checked; returns them.
local function check_loss_opts(fname, opts, extra)
  local known = {[extra or ""] = extra and true or nil}
  for k in pairs(keys[fname]) do known[k] = true end
  local o = check_opts(fname, opts, known)
  if o.from_logits ~= nil and type(o.from_logits) ~= "boolean" then
    fail(fname, "option 'from_logits' must be a boolean, got %s", type(o.from_logits))
  end
  local r = o.reduction
  if r ~= nil and not REDUCTIONS[r] then
    fail(fname, "option 'reduction' must be \"sum_over_batch_size\", \"mean\", \"sum\", " ..
         "\"mean_with_sample_weight\" or \"none\", got %s",
         type(r) == "string" and "'" .. r .. "'" or tostring(r))
  end
  if o.label_smoothing ~= nil then
    lib.check_number(fname, "option 'label_smoothing'", o.label_smoothing, 0, 1)
  end
  if o.ignore_class ~= nil and math.type(o.ignore_class) ~= "integer" and
     not (type(o.ignore_class) == "number" and math.tointeger(o.ignore_class)) then
    fail(fname, "option 'ignore_class' must be an integer class, got %s",
         tostring(o.ignore_class))
  end
  return o
end

-- The number of elements of 'x' as a number when its shape is known, else
-- a tensor computed when the graph runs; at least 1 (Keras's divide_no_nan:
-- the sum of no values over no values is 0).
local function count_of(x)
  local n = 1
  for _, d in ipairs(x.shape) do
    if d < 0 then return mf.maximum(mf.cast(mf.size(x), x.dtype), 1) end
    n = n * d
  end
  return math.max(n, 1)
end

local function as_weight(fname, w, like)
  if type(w) == "number" then return mf.cast(mf.tensor(w), like.dtype) end
  if type(w) == "table" and not getmetatable(w) then w = mf.tensor(w) end
  if not lib.is_tensor(w) then
    fail(fname, "sample_weight must be a number or a tensor, got %s", type(w))
  end
  return float_like(w, like)
end

-- Keras's reduce_weighted_values: the mask (ignore_class) and sample
-- weights applied, then the reduction.
local function reduce(fname, values, sw, mask, reduction)
  reduction = reduction or "sum_over_batch_size"
  local by_size = reduction == "sum_over_batch_size" or reduction == "mean"
  if mask then
    local m = float_like(mask, values)
    if by_size then   -- the valid entries' mean: each weighs total / valid
      m = m * (count_of(m) / mf.maximum(mf.reduce_sum(m), 1))
    end
    if sw then
      local a, b = same_rank(m, sw)
      sw = a * b
    else
      sw = m
    end
  end
  if sw then
    local v, w = same_rank(values, sw)
    values = v * w
    sw = w
  end
  if reduction == "none" or values.ndim == 0 then return values end
  local total = mf.reduce_sum(values)
  if reduction == "sum" then return total end
  if reduction == "mean_with_sample_weight" and sw then
    return total / mf.reduce_sum(sw)
  end
  return total / count_of(values)
end

local function compute(name, labels, out, opts, sw)
  if not lib.is_tensor(out) or out.ndim < 1 then
    fail(name, "expected (labels, outputs) tensors with outputs of rank >= 1, got outputs %s",
         lib.is_tensor(out) and "of rank 0" or type(out))
  end
  if not lib.is_tensor(labels) then labels = mf.tensor(labels) end
  if sw ~= nil then sw = as_weight(name, sw, out) end
  local per, mask = impl[name](labels, out, opts)
  return reduce(name, per, sw, mask, opts.reduction)
end

local Loss = {__name = "mf.losses.Loss"}
Loss.__index = Loss
function Loss.__call(self, labels, out, sample_weight, ...)
  if select("#", ...) > 0 then
    fail(self.name, "expected (labels, outputs [, sample_weight]), got %d arguments",
         select("#", ...) + 3)
  end
  return compute(self.name, labels, out, self.opts, sample_weight)
end
function Loss.__tostring(self)
  return string.format("<mf.losses.%s%s>", self.name,
                       self.opts.from_logits and " from_logits" or "")
end

for name in pairs(impl) do
  losses[name] = function(a, b, opts)
    if lib.is_tensor(b) then
      local o = check_loss_opts(name, opts, "sample_weight")
      return compute(name, a, b, o, o.sample_weight)
    end
    if b ~= nil then fail(name, "expected (labels, outputs) or an options table") end
    if a ~= nil and (type(a) ~= "table" or getmetatable(a)) then
      fail(name, "expected (labels, outputs) tensors or an options table, got %s", type(a))
    end
    return setmetatable({name = name, opts = check_loss_opts(name, a)}, Loss)
  end
end
losses.mse = losses.mean_squared_error

-- The loss function of fit's 'loss' option: a name, a function or a loss object.
function lib.loss_fn(fname, loss)
  if type(loss) == "string" then
    local f = losses[loss]
    if not f then fail(fname, "unknown loss '%s' (mf.losses has its names)", loss) end
    return f{}
  end
  local mt = getmetatable(loss)
  if type(loss) == "function" or (mt and mt.__call) then return loss end
  fail(fname, "option 'loss' must be a name, a function(labels, outputs) or an mf.losses "
       .. "object, got %s", type(loss))
end
