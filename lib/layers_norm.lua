-- layers_norm.lua — the normalization and lookup layers of mf.layers:
-- BatchNormalization (the fused op mf.nn.fused_batch_norm in training,
-- the moving statistics otherwise), LayerNormalization and Embedding.
--
-- BatchNormalization updates its moving statistics as part of the layer's
-- call, in every mode, with nothing for the user to run (no UPDATE_OPS):
-- eagerly the assigns happen at once; inside mf.trace the captured
-- Variables' assigns run on every call of the traced function; in a graph
-- (g:as_default) the layer's output depends on the two assign ops through
-- control dependencies, so whatever needs the output (a loss, a train op)
-- runs the updates. Like PyTorch and TensorFlow's fused kernel, the moving
-- variance averages the unbiased batch variance (times n / (n - 1)); the
-- batch itself is normalized with the biased one.
local mf, lib = ...
local fail, check_opts = lib.fail, lib.check_opts
local layers, Layer = mf.layers, lib.Layer

-- A graph op (an assign node's output), as opposed to an eager Variable.
local function graph_op(v)
  return getmetatable(v).__name == "mf.Tensor" and v.name ~= nil
end

local function number_opt(fname, what, v, default, lo, hi)
  if v == nil then return default end
  return lib.check_number(fname, "option '" .. what .. "'", v, lo, hi)
end

-- ---- BatchNormalization -----------------------------------------------------------------

local BN = lib.class("BatchNormalization", Layer, "batch_normalization")
BN.refuses_mask_ = "masked batch statistics (Keras's) are not supported: normalize before " ..
                   "the Embedding or after the sequence is reduced"

local bn_inits = {beta_initializer = "zeros", gamma_initializer = "ones",
                  moving_mean_initializer = "zeros", moving_variance_initializer = "ones"}

-- BatchNormalization{momentum = 0.99, epsilon = 1e-3, axis = -1, center = true,
--   scale = true, name, and Keras's four *_initializer}: axis -1 (channels
--   last) or, for NCHW, 2.
function layers.BatchNormalization(opts)
  local fname = "BatchNormalization"
  local keys = {momentum = true, epsilon = true, axis = true, center = true, scale = true,
                name = true, input_shape = true}
  for k in pairs(bn_inits) do keys[k] = true end
  opts = check_opts(fname, opts, keys)
  local self = lib.new_layer(BN, opts)
  self.momentum = number_opt(fname, "momentum", opts.momentum, 0.99, 0, 1)
  self.epsilon = number_opt(fname, "epsilon", opts.epsilon, 1e-3, 0, math.huge)
  self.axis = opts.axis or -1
  if math.type(self.axis) ~= "integer" or self.axis == 0 then
    fail(fname, "option 'axis' must be a non-zero integer (1-based, -1 = last), got %s",
         tostring(opts.axis))
  end
  self.center = lib.check_bool(fname, "center", opts.center, true)
  self.scale = lib.check_bool(fname, "scale", opts.scale, true)
  self.inits_ = {}
  for k, default in pairs(bn_inits) do
    self.inits_[k] = lib.initializer(fname, k, opts[k], default)
  end
  return self
end

function BN:check_input_(shape)
  self:check_rank(shape, 1, true, "batch, ..., channels")
  local axis = self.axis < 0 and #shape + 1 + self.axis or self.axis
  if axis < 1 or axis > #shape or (axis ~= #shape and not (axis == 2 and #shape == 4)) then
    self:fail("axis %d of an input of rank %d: expected the last axis (or 2 for NCHW)",
              self.axis, #shape)
  end
  self.axis_ = axis
  local c = self:known_dim(shape, axis, "number of channels")
  if self.channels and c ~= self.channels then
    self:fail("expected %d channels (built for them), got shape %s", self.channels,
              lib.shape_text(shape))
  end
end

function BN:build(shape, dtype)
  local c = shape[self.axis_]
  self.channels = c
  local init = self.inits_
  -- Keras's order: gamma, beta, moving_mean, moving_variance
  self.gamma = self.scale and self:add_weight("gamma", {c}, init.gamma_initializer, true, dtype)
               or nil
  self.beta = self.center and self:add_weight("beta", {c}, init.beta_initializer, true, dtype)
              or nil
  self.moving_mean = self:add_weight("moving_mean", {c}, init.moving_mean_initializer, false,
                                     dtype)
  self.moving_variance = self:add_weight("moving_variance", {c},
                                         init.moving_variance_initializer, false, dtype)
end

-- NCHW <-> NHWC around the channels-last op.
local TO_LAST, FROM_LAST = {1, 3, 4, 2}, {1, 4, 2, 3}

function BN:update_(mean, var, x)
  local unbiased = var   -- fused_batch_norm's variance has Bessel's correction (TF's op)
  local keep = 1 - self.momentum
  local mm, mv = self.moving_mean, self.moving_variance
  local u1 = mm:assign_sub((mm - mf.stop_gradient(mean)) * keep)
  local u2 = mv:assign_sub((mv - mf.stop_gradient(unbiased)) * keep)
  local ops = {}
  if graph_op(u1) then ops[#ops + 1] = u1 end
  if graph_op(u2) then ops[#ops + 1] = u2 end
  return ops
end

function BN:forward(x, training)
  local nchw = self.axis_ ~= x.ndim
  if nchw then x = mf.transpose(x, TO_LAST) end
  local c = self.channels
  local gamma = self.gamma or mf.ones({c}, x.dtype)
  local beta = self.beta or mf.zeros({c}, x.dtype)
  local y
  if training and self.trainable then   -- a frozen layer uses its moving statistics (Keras)
    local mean, var
    y, mean, var = mf.nn.fused_batch_norm(x, gamma, beta, {epsilon = self.epsilon})
    local ops = self:update_(mean, var, x)
    if #ops > 0 then
      local y0 = y
      y = mf.control_dependencies(ops, function() return mf.identity(y0) end)
    end
  else
    local a = gamma * mf.rsqrt(self.moving_variance + self.epsilon)
    y = x * a + (beta - self.moving_mean * a)
  end
  if nchw then y = mf.transpose(y, FROM_LAST) end
  return y
end

-- ---- LayerNormalization -------------------------------------------------------------------

local LN = lib.class("LayerNormalization", Layer, "layer_normalization")
LN.supports_masking = true   -- each position on its own (Keras)

-- LayerNormalization{epsilon = 1e-3, center = true, scale = true, name}: over the last axis.
function layers.LayerNormalization(opts)
  local fname = "LayerNormalization"
  opts = check_opts(fname, opts, {epsilon = true, center = true, scale = true, axis = true,
                                  name = true, input_shape = true})
  if opts.axis ~= nil and opts.axis ~= -1 then
    fail(fname, "option 'axis' must be -1 (the last axis), got %s", tostring(opts.axis))
  end
  local self = lib.new_layer(LN, opts)
  self.epsilon = number_opt(fname, "epsilon", opts.epsilon, 1e-3, 0, math.huge)
  self.center = lib.check_bool(fname, "center", opts.center, true)
  self.scale = lib.check_bool(fname, "scale", opts.scale, true)
  return self
end

function LN:check_input_(shape)
  self:check_rank(shape, 1, true, "..., features")
  local d = self:known_dim(shape, #shape, "number of features")
  if self.features and d ~= self.features then
    self:fail("expected %d features (built for them), got shape %s", self.features,
              lib.shape_text(shape))
  end
end

function LN:build(shape, dtype)
  local d = shape[#shape]
  self.features = d
  if self.scale then self.gamma = self:add_weight("gamma", {d}, mf.initializers.ones(), true,
                                                  dtype) end
  if self.center then self.beta = self:add_weight("beta", {d}, mf.initializers.zeros(), true,
                                                  dtype) end
end

function LN:forward(x)
  local mean = mf.reduce_mean(x, {axis = -1, keepdims = true})
  local xc = x - mean
  local var = mf.reduce_mean(mf.square(xc), {axis = -1, keepdims = true})
  local y = xc * mf.rsqrt(var + self.epsilon)
  if self.gamma then y = y * self.gamma end
  if self.beta then y = y + self.beta end
  return y
end

-- ---- Embedding --------------------------------------------------------------------------------

local Embedding = lib.class("Embedding", Layer, "embedding")

-- Embedding(input_dim, output_dim, {embeddings_initializer = uniform(-0.05, 0.05),
-- mask_zero = false, name}): ids are 1-based (1..input_dim) integers of any
-- shape; the output adds an axis. mask_zero (Keras's): id 0 is padding, whose
-- output is zeros, and layer:compute_mask(ids) (ids ~= 0) is the mask to hand
-- to a recurrent layer, rnn(x, {mask = ...}). Unlike Keras, where id 0 takes
-- a row of the table, the ids keep their 1..input_dim rows.
function layers.Embedding(input_dim, output_dim, opts)
  local fname = "Embedding"
  input_dim = lib.check_count(fname, "input_dim", input_dim)
  output_dim = lib.check_count(fname, "output_dim", output_dim)
  opts = check_opts(fname, opts, {embeddings_initializer = true, name = true,
                                  input_shape = true, mask_zero = true})
  local self = lib.new_layer(Embedding, opts)
  self.input_dim, self.output_dim = input_dim, output_dim
  self.mask_zero = lib.check_bool(fname, "mask_zero", opts.mask_zero, false)
  self.supports_masking = self.mask_zero   -- Keras: its mask goes to the next layer
  self.input_dtype_ = "int64" -- model:build feeds ids
  self.init = lib.initializer(fname, "embeddings_initializer", opts.embeddings_initializer,
                              mf.initializers.random_uniform{minval = -0.05, maxval = 0.05})
  return self
end

function Embedding:build(_, dtype)
  self.embeddings = self:add_weight("embeddings", {self.input_dim, self.output_dim}, self.init,
                                    true, dtype == "float64" and dtype or "float32")
end

function Embedding:apply_(ids, opts, ...)
  if type(ids) == "table" and not getmetatable(ids) then ids = mf.tensor(ids, "int64") end
  if lib.is_tensor(ids) and ids.dtype ~= "int32" and ids.dtype ~= "int64" then
    self:fail("expected integer ids (1-based), got dtype %s", ids.dtype)
  end
  return Layer.apply_(self, ids, opts, ...)
end

function Embedding:forward(ids)
  if not self.mask_zero then return mf.nn.embedding_lookup(self.embeddings, ids) end
  local keep = mf.not_equal(ids, 0)
  local rows = mf.nn.embedding_lookup(self.embeddings, mf.where(keep, ids, mf.ones_like(ids)))
  return rows * mf.expand_dims(mf.cast(keep, rows.dtype), -1)
end

-- embedding:compute_mask(ids [, mask]) -> (ids ~= 0) as booleans with mask_zero, else nil
-- (Keras's compute_mask(inputs, mask): the previous mask is not used). The ids are
-- checked either way.
function Embedding:compute_mask(ids, mask)
  if type(ids) == "table" and not getmetatable(ids) then
    local ok, t = pcall(mf.tensor, ids, "int64")
    if not ok then self:fail("compute_mask: expected ids (an array of integers): %s", t) end
    ids = t
  end
  if not lib.is_tensor(ids) then self:fail("compute_mask: expected ids, got %s", type(ids)) end
  if mask ~= nil and not lib.is_tensor(mask) then
    self:fail("compute_mask: mask must be a tensor or nil, got %s", type(mask))
  end
  if not self.mask_zero then return nil end
  return mf.not_equal(ids, 0)
end
lib.publish_methods(Embedding, {"compute_mask"})

lib.help("nn.embedding_lookup", "nn",
  "mf.nn.embedding_lookup(params, ids)",
  "The rows of params picked by ids (1-based integers of any shape): a gather along axis " ..
  "1, so the result has ids' shape followed by params' other axes; the gradient reaches " ..
  "params as a scatter-add of the rows used (mf.layers.Embedding uses it).",
  [[
e = mf.tensor{{1, 2}, {3, 4}, {5, 6}}
mf.nn.embedding_lookup(e, mf.tensor({3, 1}, "int64"))  --> {{5, 6}, {1, 2}}]])
-- mf.nn.embedding_lookup(params, ids): rows of params by 1-based ids (a gather).
if not mf.nn.embedding_lookup then
  function mf.nn.embedding_lookup(params, ids)
    if not lib.is_tensor(params) then
      fail("embedding_lookup", "params must be a tensor, got %s", type(params))
    end
    return mf.gather(params, ids)
  end
end
