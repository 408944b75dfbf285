-- layers.lua — mf.layers: Keras's layers on the public mf API (Torch7's nn
-- on TH, in spirit). A layer is an object called like a function,
-- y = layer(x [, {training}]); it makes its Variables on the first call, from
-- the input's shape, inside mf.init_scope (eagerly even while mf.trace traces;
-- graph Variables under g:as_default), and then only applies ops, so it works
-- eagerly, under a tape, in a graph and in mf.trace alike.
--
-- Every layer keeps its Variables in creation order in 'self.weights_'
-- ({short = "kernel", var = <mf.Variable>, trainable = true}); the Variable of
-- layer "dense_1" is named "dense_1/kernel" (state_dict and files key weights by
-- their path within the model instead: lib/model.lua's weights_list_).
local mf, lib = ...
local fail, check_opts, pair = lib.fail, lib.check_opts, lib.pair

lib.help("layers", "layers",
  "mf.layers.Dense Conv2D DepthwiseConv2D MaxPool2D AvgPool2D " ..
  "GlobalAveragePooling2D " ..
  "Flatten Dropout BatchNormalization LayerNormalization Embedding Activation ReLU " ..
  "LSTM GRU SimpleRNN MultiHeadAttention PositionEmbedding Sequential Model reset_names",
  "Keras's layers, written in Lua on the mf API (lib/layers.lua). A layer is called like " ..
  "a function, y = layer(x [, {training = true}]); its first call makes its Variables from " ..
  "x's shape (named \"dense_1/kernel\"), eagerly, in a graph (g:as_default: graph " ..
  "Variables) or inside mf.trace (eager Variables, via mf.init_scope). " ..
  "Dense(units, {activation, use_bias, kernel_initializer, bias_initializer, name}), " ..
  "Conv2D(filters, kernel_size, {strides, padding = \"VALID\", activation, use_bias, " ..
  "dilation_rate, data_format}), DepthwiseConv2D(kernel_size, {depth_multiplier = 1, " ..
  "strides, padding, activation, use_bias, dilation_rate, data_format}) (weights " ..
  "depthwise_kernel [kh, kw, C, M] and bias [C * M]), " ..
  "MaxPool2D(pool_size, {strides, padding}), AvgPool2D, " ..
  "GlobalAveragePooling2D(), Flatten(), Dropout(rate, {seed}) (only with training = true), " ..
  "BatchNormalization{momentum = 0.99, epsilon = 1e-3, axis = -1, beta_initializer, " ..
  "gamma_initializer, moving_mean_initializer, moving_variance_initializer} (the fused op " ..
  "and batch " ..
  "statistics with training = true, which also update the moving mean and variance in " ..
  "every mode with nothing extra to run; the moving statistics otherwise), " ..
  "LayerNormalization{epsilon}, Embedding(input_dim, output_dim, {mask_zero}) (1-based ids; " ..
  "mask_zero: id 0 is padding, zeros out, e:compute_mask(ids) gives the mask for an RNN; " ..
  "in a Sequential the mask goes to the next layer by itself, as in Keras: recurrent " ..
  "layers skip masked steps and pass it on with return_sequences, Dense, Dropout, " ..
  "Activation, LayerNormalization pass it on, other layers drop it, BatchNormalization " ..
  "refuses it), " ..
  "LSTM(units, {return_sequences, return_state, go_backwards, use_bias, stateful, dropout, " ..
  "recurrent_dropout, unit_forget_bias = true, zero_output_for_mask}), GRU (also " ..
  "reset_after = true), SimpleRNN (Keras's weights; unrolled over time with ops, so BPTT is " ..
  "the tape's or graph's own backward pass; layer(x, {initial_state = {h, c}, mask}) starts " ..
  "from a state and skips masked (batch, time) steps as Keras; layer:reset_state() zeroes a " ..
  "stateful layer's states). " ..
  "MultiHeadAttention(num_heads, key_dim, {...}) (Keras's; mha(query, value [, key], " ..
  "{attention_mask, use_causal_mask, return_attention_scores})) and " ..
  "PositionEmbedding(sequence_length) (keras_hub's): help for each. " ..
  "Every layer takes {input_shape = {...}} (without the batch) so summary() can build it. " ..
  "layer.trainable = false (Keras) freezes its Variables (set on a model, every layer in " ..
  "it); a frozen BatchNormalization uses its moving statistics even with training = true. " ..
  "Shape errors at the first call name the layer: \"dense_1 (Dense): ...\". " ..
  "mf.layers.reset_names() restarts the names (Keras's clear_session).",
  [[
d = mf.layers.Dense(2, {kernel_initializer = "ones"})
d(mf.tensor{{1, 2, 3}})              --> {{6, 6}}
d.kernel.shape                       --> {3, 2}
#d.trainable_variables               --> 2]])
local layers = {}
mf.layers = layers
lib.layer_classes = {}

-- ---- the base class -------------------------------------------------------

local Layer = {class_name = "Layer"}
lib.Layer = Layer

-- Masks, as Keras's: in a Sequential, the mask a layer makes (Embedding{mask_zero}) goes
-- to the next layer: to its call as {mask = m} when it takes one (takes_mask_: the
-- recurrent layers); on past it when it supports masking (layer:compute_mask(x, m) if it
-- has one, else unchanged: Dense, Dropout, Activation, LayerNormalization); any other
-- layer drops it (Keras warns there). BatchNormalization refuses one (Keras's computes
-- masked batch statistics; moonflow's does not).
Layer.supports_masking = false

-- The mask after 'layer', which got input 'x' with mask 'mask' (nil: none).
function lib.output_mask(layer, x, mask)
  if mask ~= nil and layer.refuses_mask_ then
    layer:fail("the input has a mask (from Embedding{mask_zero} or a recurrent layer); %s",
               layer.refuses_mask_)
  end
  if not layer.supports_masking then return nil end
  if layer.mask_from_call_ then return layer.mask_out_ end   -- a Sequential's last mask
  if layer.compute_mask then return layer:compute_mask(x, mask) end
  return mask
end

-- Properties read through model.<name>; each returns a fresh array of the
-- same Variable objects, in the same order, on every read.
local properties = {}
lib.layer_properties = properties

function properties.variables(self)
  local out = {}
  for _, w in ipairs(self:weights_list_()) do out[#out + 1] = w.var end
  return out
end
function properties.trainable_variables(self)
  local out = {}
  for _, w in ipairs(self:weights_list_()) do
    if w.trainable then out[#out + 1] = w.var end
  end
  return out
end
-- layer.trainable (Keras): true unless set to false, which freezes every
-- Variable of the layer (and, for a model, of every layer inside it, as
-- Keras sets it recursively); BatchNormalization then runs in inference
-- mode even with training = true, as Keras's does.
function properties.trainable(self) return rawget(self, "trainable_") ~= false end

local function set_trainable(self, v)
  if type(v) ~= "boolean" then
    fail(self:label(), "'trainable' must be a boolean, got %s", type(v))
  end
  rawset(self, "trainable_", v)
  if self.layers_list_ then
    for _, layer in ipairs(self:layers_list_()) do set_trainable(layer, v) end
  end
end

function properties.non_trainable_variables(self)
  local out = {}
  for _, w in ipairs(self:weights_list_()) do
    if not w.trainable then out[#out + 1] = w.var end
  end
  return out
end

-- Helpers the files of lib/ call on layers that are not Keras's API (names
-- ending in '_' are private anyway): completion and help(obj) leave them out.
lib.layer_private = {check_rank = true, check_window = true, known_dim = true, fail = true,
                     label = true, forward = true}

-- class(name, base, key): a layer class whose instances find methods in the
-- class (then 'base'), the properties above, then their own fields. 'key'
-- is the base of unique names ("dense").
function lib.class(name, base, key)
  local c = {class_name = name, name_key = key}
  c.__name = "mf.layers." .. name
  c.__index = function(self, k)
    local m = c[k]
    if m ~= nil then return m end
    local p = properties[k]
    if p then return p(self) end
    return nil
  end
  c.__newindex = function(self, k, v)
    if k == "trainable" then return set_trainable(self, v) end
    rawset(self, k, v)
  end
  c.__call = function(self, ...) return self:apply_(...) end
  c.__tostring = function(self) return self:describe_() end
  c.__properties = properties   -- completion and help(obj) list them apart from methods
  c.__private = lib.layer_private
  setmetatable(c, {__index = base})
  lib.layer_classes[name] = c
  return c
end

-- A new instance of 'cls' with the common options read from 'opts'.
function lib.new_layer(cls, opts)
  local name = opts.name
  if name ~= nil and (type(name) ~= "string" or name == "" or name:find("[:/]")) then
    fail(cls.class_name, "option 'name' must be a non-empty string without ':' or '/', got %s",
         type(name) == "string" and "'" .. name .. "'" or type(name))
  end
  local self = setmetatable({built = false, weights_ = {}}, cls)
  rawset(self, "name", name or lib.unique_name(cls.name_key))
  if opts.input_shape ~= nil then
    if type(opts.input_shape) ~= "table" then
      fail(cls.class_name, "option 'input_shape' must be an array of sizes without the batch "
           .. "axis, got %s", type(opts.input_shape))
    end
    self.input_spec_ = opts.input_shape
  end
  return self
end

function Layer:describe_()
  return string.format("<mf.layers.%s '%s'%s>", self.class_name, self.name,
                       self.built and "" or " (not built)")
end

-- The layer's weights; all of them non-trainable while layer.trainable is false.
function Layer:weights_list_()
  if rawget(self, "trainable_") ~= false then return self.weights_ end
  local out = {}
  for i, w in ipairs(self.weights_) do
    out[i] = {short = w.short, var = w.var, trainable = false}
  end
  return out
end

-- Makes (once) the layer's Variable 'short' from 'init(shape, dtype)'.
function Layer:add_weight(short, shape, init, trainable, dtype)
  -- the initial value is concrete even while a graph is built (lib.eager)
  local v = mf.Variable(lib.eager(init, shape, dtype), {name = self.name .. "/" .. short,
                                                        trainable = trainable ~= false})
  self.weights_[#self.weights_ + 1] = {short = short, var = v, trainable = trainable ~= false}
  return v
end

-- "dense_1 (Dense)": how errors and summary() name a layer.
function Layer:label() return string.format("%s (%s)", self.name, self.class_name) end

-- Raises "<name> (<Class>): message" at the user's line.
function Layer:fail(fmt, ...)
  fail(self:label(), fmt, ...)
end

local function training_flag(self, opts)
  if opts == nil then return false end
  opts = check_opts(self:label(), opts, {training = true})
  local t = opts.training
  if t ~= nil and type(t) ~= "boolean" then
    self:fail("option 'training' must be a boolean, got %s", type(t))
  end
  return t == true
end
lib.training_flag = training_flag

-- The float dtype a layer's Variables take from its input: float64 inputs
-- make float64 weights, anything else float32 (Keras's floatx).
local function weight_dtype(x)
  return x.dtype == "float64" and "float64" or "float32"
end

-- layer(x [, {training}]): builds on the first call, then applies.
function Layer:apply_(x, opts, ...)
  if select("#", ...) > 0 then
    self:fail("expected (x [, {training}]), got %d arguments", select("#", ...) + 2)
  end
  local training = training_flag(self, opts)
  if type(x) == "table" and not lib.is_tensor(x) and not getmetatable(x) then
    local ok, t = pcall(mf.tensor, x)
    if not ok then self:fail("expected a tensor or an array of numbers (%s)", t) end
    x = t
  elseif not lib.is_tensor(x) then
    self:fail("expected a tensor, got %s", type(x))
  end
  local shape = x.shape
  if not self.built then
    self:check_input_(shape)
    mf.init_scope(function() self:build(shape, weight_dtype(x)) end)
    self.built = true
  else
    self:check_input_(shape)
  end
  local y, s1, s2 = self:forward(x, training) -- recurrent layers: also their states
  if not self.output_shape then -- for summary(); the batch size shows as None
    self.input_shape, self.output_shape = shape, y.shape
  end
  if s1 == nil then return y end
  return y, s1, s2
end

function Layer.build() end
function Layer.check_input_() end

-- Checks that 'shape' has rank 'rank' (or at least 'rank' when 'atleast').
function Layer:check_rank(shape, rank, atleast, what)
  if #shape ~= rank and not (atleast and #shape >= rank) then
    self:fail("expected input of rank %s%d (%s), got shape %s", atleast and ">= " or "",
              rank, what, lib.shape_text(shape))
  end
end

-- The known size of axis 'axis' of 'shape' (an error when unknown).
function Layer:known_dim(shape, axis, what)
  local d = shape[axis]
  if not d or d < 0 then
    self:fail("the %s (axis %d) of the input must be known to build the layer, got shape %s",
              what, axis, lib.shape_text(shape))
  end
  return d
end

-- Parameter counts for summary(): {total, trainable}.
function Layer:count_params()
  local total, trainable = 0, 0
  for _, w in ipairs(self:weights_list_()) do
    local n = lib.numel(w.var.shape)
    total = total + n
    if w.trainable then trainable = trainable + n end
  end
  return total, trainable
end

lib.publish_methods(Layer, {"count_params"})

-- ---- initializers by name ------------------------------------------------

local function initializer(fname, what, v, default)
  if v == nil then v = default end
  if type(v) == "string" then
    local make = mf.initializers[v]
    if not make then fail(fname, "unknown %s '%s'", what, v) end
    return make()
  end
  local mt = getmetatable(v)
  if type(v) ~= "function" and not (mt and mt.__call) then
    fail(fname, "%s must be a name (\"glorot_uniform\") or a callable init(shape, dtype), "
         .. "got %s", what, type(v))
  end
  return v
end
lib.initializer = initializer

local function check_bool(fname, what, v, default)
  if v == nil then return default end
  if type(v) ~= "boolean" then fail(fname, "option '%s' must be a boolean, got %s", what, type(v)) end
  return v
end
lib.check_bool = check_bool

-- ---- Dense ------------------------------------------------------------------

local Dense = lib.class("Dense", Layer, "dense")
Dense.supports_masking = true
local dense_keys = {activation = true, use_bias = true, kernel_initializer = true,
                    bias_initializer = true, name = true, input_shape = true}

-- Dense(units, {activation, use_bias = true, kernel_initializer, bias_initializer, name})
function layers.Dense(units, opts)
  local fname = "Dense"
  units = lib.check_count(fname, "units", units)
  opts = check_opts(fname, opts, dense_keys)
  local self = lib.new_layer(Dense, opts)
  self.units = units
  self.activation = lib.activation(fname, opts.activation)
  self.use_bias = check_bool(fname, "use_bias", opts.use_bias, true)
  self.kernel_init = initializer(fname, "kernel_initializer", opts.kernel_initializer,
                                 "glorot_uniform")
  self.bias_init = initializer(fname, "bias_initializer", opts.bias_initializer, "zeros")
  return self
end

function Dense:check_input_(shape)
  self:check_rank(shape, 2, true, "batch, ..., features")
  local d = self:known_dim(shape, #shape, "number of features")
  if self.in_dim and d ~= self.in_dim then
    self:fail("expected %d input features (built for them), got shape %s", self.in_dim,
              lib.shape_text(shape))
  end
end

function Dense:build(shape, dtype)
  self.in_dim = shape[#shape]
  self.kernel = self:add_weight("kernel", {self.in_dim, self.units}, self.kernel_init, true, dtype)
  if self.use_bias then
    self.bias = self:add_weight("bias", {self.units}, self.bias_init, true, dtype)
  end
end

function Dense:forward(x)
  local y
  if x.ndim == 2 then
    y = mf.matmul(x, self.kernel)
  else
    y = mf.tensordot(x, self.kernel, 1)
  end
  if self.bias then y = y + self.bias end
  if self.activation then y = self.activation(y) end
  return y
end

-- ---- Conv2D -------------------------------------------------------------------

-- "SAME"/"VALID" from Keras's "same"/"valid" too.
local function padding_arg(fname, p)
  p = p or "VALID"
  local up = type(p) == "string" and p:upper()
  if up ~= "SAME" and up ~= "VALID" then
    fail(fname, "option 'padding' must be \"VALID\" or \"SAME\", got %s", tostring(p))
  end
  return up
end
lib.padding_arg = padding_arg

-- "NHWC" (Keras's "channels_last", the default) or "NCHW" ("channels_first").
local function format_arg(fname, f)
  if f == nil or f == "NHWC" or f == "channels_last" then return "NHWC" end
  if f == "NCHW" or f == "channels_first" then return "NCHW" end
  fail(fname, "option 'data_format' must be \"NHWC\" or \"NCHW\", got %s", tostring(f))
end
lib.format_arg = format_arg

-- The 4-element strides/dilations of a 2-element pair in 'fmt'.
local function four(p, fmt)
  if fmt == "NHWC" then return {1, p[1], p[2], 1} end
  return {1, 1, p[1], p[2]}
end
lib.four = four

-- Axes of height, width and channels of 'fmt' (1-based, rank 4).
local function hwc(fmt)
  if fmt == "NHWC" then return 2, 3, 4 end
  return 3, 4, 2
end
lib.hwc = hwc

-- Checks a window of 'k' fits the known spatial sizes of 'shape'.
function Layer:check_window(shape, k, strides, padding, fmt, d)
  local ha, wa = hwc(fmt)
  for i, axis in ipairs({ha, wa}) do
    local n = shape[axis]
    if n and n >= 0 then
      -- the ops' own rule (core/ops/window.h)
      local o, span = mf.nn.conv_output_size(n, k[i], strides[i], padding, d and d[i])
      if o < 1 then
        self:fail("input %s is smaller than the %dx%d window (extent %s, padding VALID); "
                  .. "use padding = \"SAME\" or a larger input", lib.shape_text(shape),
                  k[1], k[2], span == math.maxinteger and "over 2^63" or span)
      end
    end
  end
end

local Conv2D = lib.class("Conv2D", Layer, "conv2d")
local conv_keys = {strides = true, padding = true, activation = true, use_bias = true,
                   dilation_rate = true, data_format = true, kernel_initializer = true,
                   bias_initializer = true, name = true, input_shape = true}

-- Conv2D(filters, kernel_size, {strides = 1, padding = "VALID", activation,
--   use_bias = true, dilation_rate = 1, data_format = "NHWC", ...}): filter HWIO.
function layers.Conv2D(filters, kernel_size, opts)
  local fname = "Conv2D"
  filters = lib.check_count(fname, "filters", filters)
  local k = pair(fname, "kernel_size", kernel_size)
  opts = check_opts(fname, opts, conv_keys)
  local self = lib.new_layer(Conv2D, opts)
  self.filters, self.kernel_size = filters, k
  self.strides = pair(fname, "strides", opts.strides or 1)
  self.dilation = pair(fname, "dilation_rate", opts.dilation_rate or 1)
  self.padding = padding_arg(fname, opts.padding)
  self.data_format = format_arg(fname, opts.data_format)
  self.activation = lib.activation(fname, opts.activation)
  self.use_bias = check_bool(fname, "use_bias", opts.use_bias, true)
  self.kernel_init = initializer(fname, "kernel_initializer", opts.kernel_initializer,
                                 "glorot_uniform")
  self.bias_init = initializer(fname, "bias_initializer", opts.bias_initializer, "zeros")
  return self
end

function Conv2D:check_input_(shape)
  self:check_rank(shape, 4, false, self.data_format == "NHWC" and "batch, height, width, channels"
                  or "batch, channels, height, width")
  local _, _, ca = hwc(self.data_format)
  local c = self:known_dim(shape, ca, "number of channels")
  if self.in_channels and c ~= self.in_channels then
    self:fail("expected %d input channels (built for them), got shape %s", self.in_channels,
              lib.shape_text(shape))
  end
  self:check_window(shape, self.kernel_size, self.strides, self.padding, self.data_format,
                    self.dilation)
end

function Conv2D:build(shape, dtype)
  local _, _, ca = hwc(self.data_format)
  self.in_channels = shape[ca]
  local k = self.kernel_size
  self.kernel = self:add_weight("kernel", {k[1], k[2], self.in_channels, self.filters},
                                self.kernel_init, true, dtype)
  if self.use_bias then
    self.bias = self:add_weight("bias", {self.filters}, self.bias_init, true, dtype)
  end
end

function Conv2D:forward(x)
  local fmt = self.data_format
  local y = mf.nn.conv2d(x, self.kernel, four(self.strides, fmt), self.padding,
                         {data_format = fmt, dilations = four(self.dilation, fmt)})
  if self.bias then y = mf.nn.bias_add(y, self.bias, {data_format = fmt}) end
  if self.activation then y = self.activation(y) end
  return y
end

-- ---- DepthwiseConv2D ------------------------------------------------------------

local DepthwiseConv2D = lib.class("DepthwiseConv2D", Layer, "depthwise_conv2d")
local depthwise_keys = {depth_multiplier = true, strides = true, padding = true,
                        activation = true, use_bias = true, dilation_rate = true,
                        data_format = true, depthwise_initializer = true,
                        bias_initializer = true, name = true, input_shape = true}

-- DepthwiseConv2D(kernel_size, {depth_multiplier = 1, strides = 1, padding = "VALID",
--   activation, use_bias = true, dilation_rate = 1, data_format = "NHWC", ...}):
-- Keras's; its weights 'depthwise_kernel' [kh, kw, C, M] and 'bias' [C * M].
function layers.DepthwiseConv2D(kernel_size, opts)
  local fname = "DepthwiseConv2D"
  local k = pair(fname, "kernel_size", kernel_size)
  opts = check_opts(fname, opts, depthwise_keys)
  local self = lib.new_layer(DepthwiseConv2D, opts)
  self.kernel_size = k
  self.depth_multiplier = lib.check_count(fname, "depth_multiplier", opts.depth_multiplier or 1)
  self.strides = pair(fname, "strides", opts.strides or 1)
  self.dilation = pair(fname, "dilation_rate", opts.dilation_rate or 1)
  self.padding = padding_arg(fname, opts.padding)
  self.data_format = format_arg(fname, opts.data_format)
  self.activation = lib.activation(fname, opts.activation)
  self.use_bias = check_bool(fname, "use_bias", opts.use_bias, true)
  self.kernel_init = initializer(fname, "depthwise_initializer", opts.depthwise_initializer,
                                 "glorot_uniform")
  self.bias_init = initializer(fname, "bias_initializer", opts.bias_initializer, "zeros")
  return self
end

DepthwiseConv2D.check_input_ = Conv2D.check_input_

function DepthwiseConv2D:build(shape, dtype)
  local _, _, ca = hwc(self.data_format)
  self.in_channels = shape[ca]
  local k, m = self.kernel_size, self.depth_multiplier
  self.depthwise_kernel = self:add_weight("depthwise_kernel", {k[1], k[2], self.in_channels, m},
                                          self.kernel_init, true, dtype)
  if self.use_bias then
    self.bias = self:add_weight("bias", {self.in_channels * m}, self.bias_init, true, dtype)
  end
end

function DepthwiseConv2D:forward(x)
  local fmt = self.data_format
  local y = mf.nn.depthwise_conv2d(x, self.depthwise_kernel, four(self.strides, fmt),
                                   self.padding,
                                   {data_format = fmt, dilations = four(self.dilation, fmt)})
  if self.bias then y = mf.nn.bias_add(y, self.bias, {data_format = fmt}) end
  if self.activation then y = self.activation(y) end
  return y
end

-- ---- pooling ----------------------------------------------------------------------

local pool_keys = {strides = true, padding = true, data_format = true, name = true,
                   input_shape = true}

local function pool_class(name, key, op)
  local cls = lib.class(name, Layer, key)
  -- <Name>(pool_size = 2, {strides = pool_size, padding = "VALID", data_format})
  layers[name] = function(pool_size, opts)
    local fname = name
    local k = pair(fname, "pool_size", pool_size or 2)
    opts = check_opts(fname, opts, pool_keys)
    local self = lib.new_layer(cls, opts)
    self.pool_size = k
    self.strides = pair(fname, "strides", opts.strides or k)
    self.padding = padding_arg(fname, opts.padding)
    self.data_format = format_arg(fname, opts.data_format)
    return self
  end
  function cls:check_input_(shape)
    self:check_rank(shape, 4, false, "batch, height, width, channels")
    self:check_window(shape, self.pool_size, self.strides, self.padding, self.data_format)
  end
  function cls:forward(x)
    local fmt = self.data_format
    return op(x, four(self.pool_size, fmt), four(self.strides, fmt), self.padding,
              {data_format = fmt})
  end
  return cls
end
pool_class("MaxPooling2D", "max_pooling2d", mf.nn.max_pool)
pool_class("AveragePooling2D", "average_pooling2d", mf.nn.avg_pool)
layers.MaxPool2D, layers.AvgPool2D = layers.MaxPooling2D, layers.AveragePooling2D

local GAP = lib.class("GlobalAveragePooling2D", Layer, "global_average_pooling2d")

-- GlobalAveragePooling2D({data_format, keepdims = false})
function layers.GlobalAveragePooling2D(opts)
  local fname = "GlobalAveragePooling2D"
  opts = check_opts(fname, opts, {data_format = true, keepdims = true, name = true,
                                  input_shape = true})
  local self = lib.new_layer(GAP, opts)
  self.data_format = format_arg(fname, opts.data_format)
  self.keepdims = check_bool(fname, "keepdims", opts.keepdims, false)
  return self
end

function GAP:check_input_(shape)
  self:check_rank(shape, 4, false, "batch, height, width, channels")
end

function GAP:forward(x)
  local ha, wa = hwc(self.data_format)
  return mf.reduce_mean(x, {axis = {ha, wa}, keepdims = self.keepdims})
end

-- ---- Flatten, Dropout ---------------------------------------------------------------

local Flatten = lib.class("Flatten", Layer, "flatten")

-- Flatten(): (batch, ...) -> (batch, product of the rest); the batch may be unknown.
function layers.Flatten(opts)
  opts = check_opts("Flatten", opts, {name = true, input_shape = true})
  return lib.new_layer(Flatten, opts)
end

function Flatten:check_input_(shape)
  self:check_rank(shape, 1, true, "batch, ...")
  for axis = 2, #shape do self:known_dim(shape, axis, "size") end
end

function Flatten:forward(x)
  local shape = x.shape
  local n = 1
  for axis = 2, #shape do n = n * shape[axis] end
  return mf.reshape(x, {-1, n})
end

local Dropout = lib.class("Dropout", Layer, "dropout")
Dropout.supports_masking = true

-- Dropout(rate, {seed}): zeroes a fraction 'rate' and scales the rest by
-- 1/(1-rate) with training = true; the identity otherwise (Keras).
function layers.Dropout(rate, opts)
  local fname = "Dropout"
  if type(rate) ~= "number" or rate ~= rate or rate < 0 or rate >= 1 then
    fail(fname, "rate must be a number in [0, 1), got %s", tostring(rate))
  end
  opts = check_opts(fname, opts, {seed = true, name = true, input_shape = true})
  if opts.seed ~= nil and math.type(opts.seed) ~= "integer" then
    fail(fname, "option 'seed' must be an integer, got %s", tostring(opts.seed))
  end
  local self = lib.new_layer(Dropout, opts)
  self.rate, self.seed = rate, opts.seed
  return self
end

function Dropout:forward(x, training)
  if not training or self.rate == 0 then return x end
  return mf.nn.dropout(x, self.rate, self.seed and {seed = self.seed} or nil)
end

local Activation = lib.class("Activation", Layer, "activation")
Activation.supports_masking = true

-- Activation(fn or name): applies it ("relu", "sigmoid", ...); ReLU() is Activation("relu").
function layers.Activation(a, opts)
  opts = check_opts("Activation", opts, {name = true, input_shape = true})
  if a == nil then fail("Activation", "expected a function or an activation name, got nil") end
  local self = lib.new_layer(Activation, opts)
  self.fn = lib.activation("Activation", a)
  return self
end

function Activation:forward(x) return self.fn(x) end

function layers.ReLU(opts)
  opts = check_opts("ReLU", opts, {name = true, input_shape = true})
  opts.name = opts.name or lib.unique_name("re_lu")
  return layers.Activation("relu", opts)
end

-- mf.layers.reset_names(): unique names start again from "dense" (Keras's
-- clear_session), so a model rebuilt in one process loads its own file.
function layers.reset_names() lib.reset_names() end
