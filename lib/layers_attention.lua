-- layers_attention.lua — the transformer layers of mf.layers:
-- MultiHeadAttention (Keras's, on mf.nn.scaled_dot_product_attention) and
-- PositionEmbedding (keras_hub's learned position embedding).
--
-- MultiHeadAttention keeps Keras's weights and shapes, so its parameter
-- counts are Keras's: query/kernel [query_dim, num_heads, key_dim],
-- key/kernel [key_dim_in, num_heads, key_dim], value/kernel [value_dim_in,
-- num_heads, value_dim], their biases [num_heads, key_dim or value_dim],
-- attention_output/kernel [num_heads, value_dim, output_dim] and its bias
-- [output_dim]. A call projects the inputs (one GEMM each, the kernels
-- viewed as matrices), puts the heads before the sequence axis, and runs
-- the fused attention op with scale 1/sqrt(key_dim) (Keras scales the
-- query by it first: the same to rounding), attention dropout (training)
-- included. return_attention_scores needs the probabilities themselves, so
-- those calls compose the scores, mask and softmax from ops instead (with
-- the same dropout mask for a given seed: the op's is mf.nn.dropout's).
local mf, lib = ...
local fail, check_opts = lib.fail, lib.check_opts
local layers, Layer = mf.layers, lib.Layer

-- ---- MultiHeadAttention ------------------------------------------------------------

local MHA = lib.class("MultiHeadAttention", Layer, "multi_head_attention")
local mha_keys = {value_dim = true, dropout = true, use_bias = true, output_shape = true,
                  kernel_initializer = true, bias_initializer = true, seed = true, name = true}

-- MultiHeadAttention(num_heads, key_dim, {value_dim = key_dim, dropout = 0, use_bias = true,
--   output_shape (the query's features), kernel_initializer, bias_initializer, seed, name})
function layers.MultiHeadAttention(num_heads, key_dim, opts)
  local fname = "MultiHeadAttention"
  num_heads = lib.check_count(fname, "num_heads", num_heads)
  key_dim = lib.check_count(fname, "key_dim", key_dim)
  opts = check_opts(fname, opts, mha_keys)
  local self = lib.new_layer(MHA, opts)
  self.num_heads, self.key_dim = num_heads, key_dim
  self.value_dim = opts.value_dim == nil and key_dim or
      lib.check_count(fname, "value_dim", opts.value_dim)
  local rate = opts.dropout or 0
  if type(rate) ~= "number" or rate ~= rate or rate < 0 or rate >= 1 then
    fail(fname, "option 'dropout' must be a number in [0, 1), got %s", tostring(rate))
  end
  self.dropout = rate
  self.use_bias = lib.check_bool(fname, "use_bias", opts.use_bias, true)
  local out = opts.output_shape
  if type(out) == "table" and #out == 1 then out = out[1] end
  if out ~= nil then out = lib.check_count(fname, "output_shape", out) end
  self.output_dim = out
  if opts.seed ~= nil and math.type(opts.seed) ~= "integer" then
    fail(fname, "option 'seed' must be an integer, got %s", tostring(opts.seed))
  end
  self.seed = opts.seed
  self.kernel_init = lib.initializer(fname, "kernel_initializer", opts.kernel_initializer,
                                     "glorot_uniform")
  self.bias_init = lib.initializer(fname, "bias_initializer", opts.bias_initializer, "zeros")
  return self
end

-- The features (last axis) of a (batch, sequence, features) input, known.
function MHA:features_(what, x)
  if not lib.is_tensor(x) then self:fail("%s must be a tensor, got %s", what, type(x)) end
  local s = x.shape
  if #s ~= 3 then
    self:fail("%s must be (batch, sequence, features), got shape %s", what, lib.shape_text(s))
  end
  return self:known_dim(s, 3, what .. "'s number of features")
end

function MHA:build_(qf, kf, vf, dtype)
  local h, kd, vd = self.num_heads, self.key_dim, self.value_dim
  self.output_dim = self.output_dim or qf
  local function dense(name, shape, bias_shape)
    self[name .. "_kernel"] = self:add_weight(name .. "/kernel", shape, self.kernel_init, true,
                                              dtype)
    if self.use_bias then
      self[name .. "_bias"] = self:add_weight(name .. "/bias", bias_shape, self.bias_init, true,
                                              dtype)
    end
  end
  dense("query", {qf, h, kd}, {h, kd})
  dense("key", {kf, h, kd}, {h, kd})
  dense("value", {vf, h, vd}, {h, vd})
  dense("attention_output", {h, vd, self.output_dim}, {self.output_dim})
  self.dims_ = {qf, kf, vf}
end

-- x (batch, T, features) projected to (batch, heads, T, d).
function MHA:project_(x, name, d)
  local h, w, b = self.num_heads, self[name .. "_kernel"], self[name .. "_bias"]
  local y = mf.tensordot(x, mf.reshape(w, {w.shape[1], h * d}), 1)
  if b then y = y + mf.reshape(b, {h * d}) end
  local t = x.shape[2]
  if t < 0 then self:fail("the sequence length of %s must be known", name) end
  return mf.transpose(mf.reshape(y, {-1, t, h, d}), {1, 3, 2, 4})
end

-- attention_mask (batch, Tq, Tk) or (Tq, Tk), bool or 0/1, as a bool mask of the scores.
function MHA:mask_(m, tq, tk)
  if m == nil then return nil end
  if not lib.is_tensor(m) then
    local ok, t = pcall(mf.tensor, m)
    if not ok then self:fail("attention_mask must be a tensor, got %s", type(m)) end
    m = t
  end
  local s = m.shape
  if (#s ~= 3 and #s ~= 2) or (s[#s - 1] >= 0 and s[#s - 1] ~= tq) or
      (s[#s] >= 0 and s[#s] ~= tk) then
    self:fail("attention_mask must be (batch, %d, %d) (query, key positions), got shape %s",
              tq, tk, lib.shape_text(s))
  end
  if m.dtype ~= "bool" then m = mf.not_equal(m, 0) end
  return #s == 3 and mf.expand_dims(m, 2) or m
end

-- The probabilities composed from ops (for dropout or return_attention_scores).
function MHA:probabilities_(q, k, mask, causal)
  local s = mf.matmul(q, k, {transpose_b = true}) * (1 / math.sqrt(self.key_dim))
  local tq, tk = s.shape[3], s.shape[4]
  local ninf = mf.fill({tq, tk}, -math.huge, {dtype = s.dtype})
  if mask then s = mf.where(mask, s, ninf) end
  if causal then s = mf.where(mf.cast(mf.tril(mf.ones{tq, tk}), "bool"), s, ninf) end
  return mf.nn.softmax(s)
end

local call_keys = {attention_mask = true, use_causal_mask = true, return_attention_scores = true,
                   training = true}

-- mha(query, value [, key] [, {attention_mask, use_causal_mask, return_attention_scores,
--   training}]) -> output [, scores]
function MHA:apply_(query, value, key, opts, ...)
  if opts == nil and type(key) == "table" and not lib.is_tensor(key) then key, opts = nil, key end
  if select("#", ...) > 0 then
    self:fail("expected (query, value [, key] [, {options}]), got %d arguments",
              select("#", ...) + 4)
  end
  opts = check_opts(self:label(), opts, call_keys)
  key = key or value
  local qf, vf, kf = self:features_("query", query), self:features_("value", value),
      self:features_("key", key)
  if key.shape[2] ~= value.shape[2] then
    self:fail("key and value must have one sequence length, got shapes %s and %s",
              lib.shape_text(key.shape), lib.shape_text(value.shape))
  end
  if not self.built then
    mf.init_scope(function()
      self:build_(qf, kf, vf, query.dtype == "float64" and "float64" or "float32")
    end)
    self.built = true
  elseif qf ~= self.dims_[1] or kf ~= self.dims_[2] or vf ~= self.dims_[3] then
    self:fail("built for query, key, value features %d, %d, %d, got %d, %d, %d",
              self.dims_[1], self.dims_[2], self.dims_[3], qf, kf, vf)
  end
  local training = opts.training == true
  local causal = lib.check_bool(self:label(), "use_causal_mask", opts.use_causal_mask, false)
  local q = self:project_(query, "query", self.key_dim)
  local k = self:project_(key, "key", self.key_dim)
  local v = self:project_(value, "value", self.value_dim)
  local mask = self:mask_(opts.attention_mask, query.shape[2], key.shape[2])
  local scores, o
  local rate = training and self.dropout or 0
  if opts.return_attention_scores then
    scores = self:probabilities_(q, k, mask, causal)
    local p = scores
    if rate > 0 then p = mf.nn.dropout(p, rate, self.seed and {seed = self.seed} or nil) end
    o = mf.matmul(p, v)
  else   -- the op's dropout mask is mf.nn.dropout's for one seed
    o = mf.nn.scaled_dot_product_attention(q, k, v, {mask = mask, causal = causal,
                                                     scale = 1 / math.sqrt(self.key_dim),
                                                     dropout = rate, seed = self.seed})
  end
  local h, vd, w = self.num_heads, self.value_dim, self.attention_output_kernel
  o = mf.reshape(mf.transpose(o, {1, 3, 2, 4}), {-1, query.shape[2], h * vd})
  local y = mf.tensordot(o, mf.reshape(w, {h * vd, self.output_dim}), 1)
  if self.attention_output_bias then y = y + self.attention_output_bias end
  if not self.output_shape then self.input_shape, self.output_shape = query.shape, y.shape end
  if opts.return_attention_scores then return y, scores end
  return y
end

-- ---- PositionEmbedding ------------------------------------------------------------

local PE = lib.class("PositionEmbedding", Layer, "position_embedding")

-- PositionEmbedding(sequence_length, {initializer = "glorot_uniform", name}) (keras_hub's):
-- a learned (sequence_length, features) table; a call on (batch, T, features) with T <=
-- sequence_length returns its first T rows broadcast over the batch (add them to the
-- token embeddings yourself, as keras_hub's).
function layers.PositionEmbedding(sequence_length, opts)
  local fname = "PositionEmbedding"
  sequence_length = lib.check_count(fname, "sequence_length", sequence_length)
  opts = check_opts(fname, opts, {initializer = true, name = true, input_shape = true})
  local self = lib.new_layer(PE, opts)
  self.sequence_length = sequence_length
  self.init = lib.initializer(fname, "initializer", opts.initializer, "glorot_uniform")
  return self
end

function PE:check_input_(shape)
  self:check_rank(shape, 2, true, "batch..., sequence, features")
  local t = shape[#shape - 1]
  if t and t > self.sequence_length then
    self:fail("the sequence (axis %d) has %d positions, more than sequence_length %d",
              #shape - 1, t, self.sequence_length)
  end
  local f = self:known_dim(shape, #shape, "number of features")
  if self.features and f ~= self.features then
    self:fail("expected %d features (built for them), got shape %s", self.features,
              lib.shape_text(shape))
  end
end

function PE:build(shape, dtype)
  self.features = shape[#shape]
  self.position_embeddings = self:add_weight("embeddings", {self.sequence_length, self.features},
                                             self.init, true, dtype)
end

function PE:forward(x)
  local s = x.shape
  local rows = mf.slice(self.position_embeddings, {1, 1}, {s[#s - 1], -1})
  return mf.broadcast_to(rows, s)
end
