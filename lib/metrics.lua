-- metrics.lua — mf.metrics: accuracy(labels, outputs) as a scalar tensor
-- (works in every mode), and Keras's streaming metrics Mean() and
-- Accuracy(), which accumulate Lua numbers from eager values:
--   m:update_state(...), m:result() -> number, m:reset_state().
-- Labels are 1-based classes, or one-hot rows (the same rank as outputs);
-- outputs are logits or probabilities (the argmax is the same).
local mf, lib = ...
local fail = lib.fail

lib.help("metrics", "layers",
  "mf.metrics.accuracy(labels, outputs);  mf.metrics.Mean();  " ..
  "mf.metrics.Accuracy();  m:update_state(...);  m:result();  m:reset_state()",
  "accuracy: the fraction of rows whose argmax is the label (1-based classes or one-hot " ..
  "rows), a scalar tensor. Mean and Accuracy are Keras's streaming metrics: update_state " ..
  "adds a batch (values, or labels and outputs), result() is a Lua number.",
  [[
mf.metrics.accuracy(mf.tensor({2, 1}, "int64"), mf.tensor{{0, 1}, {0, 1}}):item()  --> 0.5
m = mf.metrics.Mean(); m:update_state(mf.tensor{1, 2, 3})
m:result()  --> 2]])
local metrics = {}
mf.metrics = metrics

-- The 1-based predicted classes and int64 labels of (labels, outputs).
local function classes(fname, labels, out)
  if not lib.is_tensor(out) or out.ndim < 1 then
    fail(fname, "expected outputs of rank >= 1 (batch, classes), got %s",
         lib.is_tensor(out) and "a scalar" or type(out))
  end
  if not lib.is_tensor(labels) then labels = mf.tensor(labels) end
  if labels.ndim == out.ndim and out.ndim >= 2 then
    labels = mf.argmax(labels, -1)
  elseif labels.ndim ~= out.ndim - 1 then
    fail(fname, "labels of rank %d do not match outputs of rank %d (expected classes of rank "
         .. "%d or one-hot rows of rank %d)", labels.ndim, out.ndim, out.ndim - 1, out.ndim)
  end
  return mf.argmax(out, -1), mf.cast(labels, "int64")
end

-- mf.metrics.accuracy(labels, outputs) -> the fraction of rows whose argmax
-- is the label (a float32 scalar tensor).
function metrics.accuracy(labels, out)
  local pred, lab = classes("accuracy", labels, out)
  return mf.reduce_mean(mf.cast(mf.equal(pred, lab), "float32"))
end

local function number_of(fname, v)
  if type(v) == "number" then return v end
  if lib.is_tensor(v) then return v end
  fail(fname, "expected a number or a tensor, got %s", type(v))
end

local Mean = {}
Mean.__index = Mean
Mean.__name = "mf.metrics.Mean"

-- Mean([{name}]): the running mean of every value given to update_state.
function metrics.Mean(opts)
  opts = lib.check_opts("Mean", opts, {name = true})
  return setmetatable({name = opts.name or "mean", total = 0, count = 0}, Mean)
end

-- m:update_state(values [, sample_weight]): adds every element (weighted).
function Mean:update_state(v, w)
  v = number_of("update_state", v)
  if type(v) == "number" then
    local weight = w or 1
    self.total, self.count = self.total + v * weight, self.count + weight
    return self
  end
  if w ~= nil then
    local wt = lib.is_tensor(w) and mf.cast(w, v.dtype) or w
    self.total = self.total + mf.reduce_sum(v * wt):item()
    self.count = self.count + (type(w) == "number" and w * v:numel() or mf.reduce_sum(
      mf.broadcast_to(mf.cast(w, "float64"), v.shape)):item())
  else
    self.total = self.total + mf.reduce_sum(mf.cast(v, "float64")):item()
    self.count = self.count + v:numel()
  end
  return self
end

function Mean:result() return self.count > 0 and self.total / self.count or 0 end
function Mean:reset_state() self.total, self.count = 0, 0 end
function Mean:__tostring()
  return string.format("<mf.metrics.Mean '%s' %.6g over %g>", self.name, self:result(),
                       self.count)
end

local Accuracy = {}
Accuracy.__index = Accuracy
Accuracy.__name = "mf.metrics.Accuracy"

-- Accuracy([{name}]): the running fraction of correct rows.
function metrics.Accuracy(opts)
  opts = lib.check_opts("Accuracy", opts, {name = true})
  return setmetatable({name = opts.name or "accuracy", correct = 0, count = 0}, Accuracy)
end

-- m:update_state(labels, outputs)
function Accuracy:update_state(labels, out)
  local pred, lab = classes("update_state", labels, out)
  self.correct = self.correct + mf.reduce_sum(mf.cast(mf.equal(pred, lab), "int64")):item()
  self.count = self.count + lab:numel()
  return self
end

function Accuracy:result() return self.count > 0 and self.correct / self.count or 0 end
function Accuracy:reset_state() self.correct, self.count = 0, 0 end
function Accuracy:__tostring()
  return string.format("<mf.metrics.Accuracy '%s' %.6g over %d>", self.name, self:result(),
                       self.count)
end

-- A streaming metric for fit's 'metrics' option: "accuracy" or an object
-- with update_state(labels, outputs), result() and reset_state().
function lib.metric_obj(fname, m)
  if m == "accuracy" or m == "acc" then return metrics.Accuracy() end
  if type(m) == "table" and m.update_state and m.result and m.reset_state then return m end
  fail(fname, "a metric must be \"accuracy\" or a metric object (mf.metrics.Accuracy()), got %s",
       type(m) == "string" and "'" .. m .. "'" or type(m))
end
