-- losses.lua — mf.losses: Keras's losses on mf ops. Each name works two
-- ways: mf.losses.mean_squared_error(labels, outputs [, {options}]) gives
-- the scalar mean loss now; mf.losses.mean_squared_error{options} gives a
-- loss function f(labels, outputs) to hand to model:fit{loss = f}.
-- Sparse labels are 1-based classes (int); 'from_logits' defaults to false,
-- as in Keras: the outputs are probabilities unless it is true.
local mf, lib = ...
local fail, check_opts = lib.fail, lib.check_opts

lib.help("losses", "layers",
  "mf.losses.sparse_categorical_crossentropy categorical_crossentropy " ..
  "binary_crossentropy mean_squared_error: f(labels, outputs [, opts]) or f{opts}",
  "Keras's losses: called with (labels, outputs) they return the mean loss; called with " ..
  "an options table ({from_logits = false, reduction = \"mean\"|\"sum\"|\"none\"}) they " ..
  "return a loss function for fit. Sparse labels are 1-based classes. As in Keras the " ..
  "outputs are probabilities unless from_logits = true (then the fused softmax / sigmoid " ..
  "cross-entropies of mf.nn are used).",
  [[
mf.losses.mean_squared_error(mf.tensor{1, 2}, mf.tensor{1, 4})  --> 2
f = mf.losses.sparse_categorical_crossentropy{from_logits = true}
f(mf.tensor({1}, "int64"), mf.tensor{{0, 0}}):item()  --> 0.6931]])
local losses = {}
mf.losses = losses
local EPS = 1e-7 -- Keras's epsilon: probabilities are clipped to [eps, 1 - eps]

local function float_like(t, like)
  if t.dtype ~= like.dtype then return mf.cast(t, like.dtype) end
  return t
end

local function clipped_log(p)
  return mf.log(mf.clip_by_value(p, EPS, 1 - EPS))
end

local impl = {}

function impl.sparse_categorical_crossentropy(labels, out, opts)
  if opts.from_logits then
    return mf.nn.sparse_softmax_cross_entropy_with_logits{labels = labels, logits = out}
  end
  local depth = out.shape[out.ndim]
  local onehot = float_like(mf.one_hot(labels, depth), out)
  return -mf.reduce_sum(onehot * clipped_log(out), {axis = -1})
end

function impl.categorical_crossentropy(labels, out, opts)
  labels = float_like(labels, out)
  if opts.from_logits then
    return mf.nn.softmax_cross_entropy_with_logits{labels = labels, logits = out}
  end
  return -mf.reduce_sum(labels * clipped_log(out), {axis = -1})
end

function impl.binary_crossentropy(labels, out, opts)
  labels = float_like(labels, out)
  if opts.from_logits then
    return mf.nn.sigmoid_cross_entropy_with_logits{labels = labels, logits = out}
  end
  return -(labels * clipped_log(out) + (1 - labels) * clipped_log(1 - out))
end

function impl.mean_squared_error(labels, out)
  return mf.square(float_like(labels, out) - out)
end

local keys = {
  sparse_categorical_crossentropy = {from_logits = true, reduction = true},
  categorical_crossentropy = {from_logits = true, reduction = true},
  binary_crossentropy = {from_logits = true, reduction = true},
  mean_squared_error = {reduction = true},
}

local function reduce(fname, per, reduction)
  if reduction == nil or reduction == "mean" then return mf.reduce_mean(per) end
  if reduction == "sum" then return mf.reduce_sum(per) end
  if reduction == "none" then return per end
  fail(fname, "option 'reduction' must be \"mean\", \"sum\" or \"none\", got %s",
       tostring(reduction))
end

for name, f in pairs(impl) do
  local function compute(labels, out, opts)
    if not lib.is_tensor(out) then
      fail(name, "expected (labels, outputs) tensors, got outputs %s", type(out))
    end
    if not lib.is_tensor(labels) then labels = mf.tensor(labels) end
    return reduce(name, f(labels, out, opts), opts.reduction)
  end
  losses[name] = function(a, b, opts)
    if lib.is_tensor(b) then
      return compute(a, b, check_opts(name, opts, keys[name]))
    end
    if b ~= nil then fail(name, "expected (labels, outputs) or an options table") end
    if a ~= nil and (type(a) ~= "table" or getmetatable(a)) then
      fail(name, "expected (labels, outputs) tensors or an options table, got %s", type(a))
    end
    local o = check_opts(name, a, keys[name])
    if o.from_logits ~= nil and type(o.from_logits) ~= "boolean" then
      fail(name, "option 'from_logits' must be a boolean, got %s", type(o.from_logits))
    end
    local r = o.reduction
    if r ~= nil and r ~= "mean" and r ~= "sum" and r ~= "none" then reduce(name, nil, r) end
    return setmetatable({name = name, opts = o}, {
      __call = function(self, labels, out) return compute(labels, out, self.opts) end,
      __tostring = function(self)
        return string.format("<mf.losses.%s%s>", self.name,
                             self.opts.from_logits and " from_logits" or "")
      end,
    })
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
