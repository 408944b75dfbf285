-- model.lua — models: mf.layers.Sequential{...} (Keras's Sequential, Torch7's
-- nn.Sequential) and mf.layers.Model(t), which makes any Lua table with
-- layers in its fields (and a call(self, x, training) method) a model.
-- Both share what a model adds to a layer: variables collected from its
-- layers in a stable order, summary() with Keras's parameter counts,
-- state_dict / load_state_dict, save / load (safetensors), and, from
-- lib/fit.lua, fit / evaluate / predict.
local mf, lib = ...
local fail, check_opts = lib.fail, lib.check_opts
local layers, Layer = mf.layers, lib.Layer

local ModelBase = setmetatable({}, {__index = Layer})
lib.ModelBase = ModelBase

-- The model's weights: each layer's in layer order, each Variable once.
-- Each has its key, its path within the model: every layer is named after
-- its class and numbered among the layers of its parent ("dense",
-- "dense_1", "sequential/dense"), then the weight ("dense_1/kernel"), as
-- Keras 3 saves by structure. Layer names are process-wide counters (and
-- users may repeat them), so keys made from them collide in nested models
-- and differ in a model built again: paths do neither. 'layer' is the
-- layer that owns the weight, also inside a nested model.
function ModelBase:weights_list_()
  local out, seen, counts = {}, {}, {}
  for _, layer in ipairs(self:layers_list_()) do
    local base = layer.name_key
    local k = counts[base]
    counts[base] = (k or -1) + 1
    local step = k == nil and base or string.format("%s_%d", base, k + 1)
    for _, w in ipairs(layer:weights_list_()) do
      if not seen[w.var] then
        seen[w.var] = true
        out[#out + 1] = {short = w.short, var = w.var, trainable = w.trainable,
                         layer = w.layer or layer, key = step .. "/" .. (w.key or w.short)}
      end
    end
  end
  return out
end

-- The state_dict key of a weight: its path, "dense_1/kernel".
local function key_of(w) return w.key end

-- The key files had before keys were paths: "<layer name>/<weight>".
local function name_key_of(w) return w.layer.name .. "/" .. w.short end

-- The keys of 't': paths, or for a checkpoint written before paths its
-- layer names, when all of those are in 't' and none repeats.
local function keys_for(list, t)
  local seen = {}
  for _, w in ipairs(list) do
    if t[key_of(w)] == nil then
      for _, v in ipairs(list) do
        local k = name_key_of(v)
        if seen[k] or t[k] == nil then return key_of end
        seen[k] = true
      end
      return name_key_of
    end
  end
  return key_of
end

-- model:state_dict() -> {["dense/kernel"] = tensor, ...} (eager values).
function ModelBase:state_dict()
  local out = {}
  for _, w in ipairs(self:weights_list_()) do
    local ok, v = pcall(w.var.read_value, w.var)
    if not ok or v.name then
      fail("state_dict", "variable '%s' lives in a graph: read it with sess:run or save it "
           .. "with mf.train.Saver", key_of(w))
    end
    out[key_of(w)] = v
  end
  return out
end

-- model:load_state_dict(t [, {strict = true}]): assigns every entry after
-- checking them all; reports every missing, unexpected or misshapen name.
function ModelBase:load_state_dict(t, opts)
  local fname = "load_state_dict"
  if type(t) ~= "table" then fail(fname, "expected a table {name = tensor}, got %s", type(t)) end
  opts = check_opts(fname, opts, {strict = true})
  local strict = opts.strict ~= false
  local problems, known, todo = {}, {}, {}
  local list = self:weights_list_()
  local key = keys_for(list, t)
  for _, w in ipairs(list) do
    local k = key(w)
    known[k] = true
    local v = t[k]
    if v == nil then
      if strict then problems[#problems + 1] = "missing '" .. k .. "'" end
    elseif not lib.is_tensor(v) then
      problems[#problems + 1] = string.format("'%s' is a %s, not a tensor", k, type(v))
    else
      local want, got = lib.shape_text(w.var.shape), lib.shape_text(v.shape)
      if want ~= got then
        problems[#problems + 1] = string.format("'%s' has shape %s, the model's is %s", k,
                                                got, want)
      elseif v.dtype ~= w.var.dtype then
        problems[#problems + 1] = string.format("'%s' is %s, the model's is %s", k, v.dtype,
                                                w.var.dtype)
      else
        todo[#todo + 1] = {w.var, v}
      end
    end
  end
  if strict then
    local extra = {}
    for k in pairs(t) do
      if not known[k] then extra[#extra + 1] = "unexpected '" .. tostring(k) .. "'" end
    end
    table.sort(extra)
    for _, e in ipairs(extra) do problems[#problems + 1] = e end
  end
  if #problems > 0 then
    fail(fname, "%d mismatch%s: %s (keys are paths within the model, e.g. \"dense_1/kernel\" "
         .. "for its second Dense layer: model:state_dict() lists them)", #problems,
         #problems == 1 and "" or "es", table.concat(problems, "; "))
  end
  for _, p in ipairs(todo) do p[1]:assign(p[2]) end
  return self
end

-- model:save(path) / model:load(path): the state_dict in a safetensors file.
function ModelBase:save(path)
  if type(path) ~= "string" then fail("save", "expected a file path, got %s", type(path)) end
  mf.save(path, self:state_dict())
end

function ModelBase:load(path)
  if type(path) ~= "string" then fail("load", "expected a file path, got %s", type(path)) end
  return self:load_state_dict(mf.load(path))
end

-- model:build(input_shape): calls the model once on zeros of that shape
-- (batch 1 for an unknown batch: -1), so summary() knows every shape.
function ModelBase:build(input_shape)
  if type(input_shape) ~= "table" then
    fail("build", "expected an input shape such as {-1, 28, 28, 1}, got %s", type(input_shape))
  end
  local shape = {}
  for i, d in ipairs(input_shape) do
    if math.type(d) ~= "integer" and not (type(d) == "number" and math.tointeger(d)) then
      fail("build", "input shape entry %d must be an integer (-1: unknown), got %s", i,
           type(d) == "number" and tostring(d) or type(d))
    end
    shape[i] = d < 0 and 1 or d
  end
  -- an Embedding first takes ids: ones (1-based), not zeros
  local first = self:layers_list_()[1]
  local dt = first and first.input_dtype_
  mf.init_scope(function() self(dt and mf.ones(shape, dt) or mf.zeros(shape)) end)
  return self
end

-- A row per layer, Keras's columns and totals (the first column widens
-- for long names instead of cutting them).
local function summary_lines(self)
  local list = self:layers_list_()
  local w = 28
  for _, layer in ipairs(list) do w = math.max(w, #layer:label() + 1) end
  local width = w + 37
  local lines, rule = {}, string.rep("_", width)
  local function row(a, b, c)
    lines[#lines + 1] = string.format(" %-" .. w .. "s%-26s%s", a, b, c)
  end
  lines[#lines + 1] = string.format('Model: "%s"', self.name)
  lines[#lines + 1] = rule
  row("Layer (type)", "Output Shape", "Param #")
  lines[#lines + 1] = string.rep("=", width)
  local total, trainable = 0, 0
  for i, layer in ipairs(list) do
    local t, tr = layer:count_params()
    total, trainable = total + t, trainable + tr
    local out = layer.output_shape and lib.shape_text(layer.output_shape, true) or "(not built)"
    row(layer:label(), out, lib.thousands(t))
    if i < #list then lines[#lines + 1] = "" end
  end
  lines[#lines + 1] = string.rep("=", width)
  lines[#lines + 1] = "Total params: " .. lib.thousands(total)
  lines[#lines + 1] = "Trainable params: " .. lib.thousands(trainable)
  lines[#lines + 1] = "Non-trainable params: " .. lib.thousands(total - trainable)
  lines[#lines + 1] = rule
  return lines
end

-- model:summary([{print_fn}]): prints Keras's table and returns nothing, as
-- Keras does (at the prompt the table shows once); with {print_fn} it hands
-- the text to print_fn instead and returns it.
-- A model never called is built first from an 'input_shape' option.
function ModelBase:summary(opts)
  opts = check_opts("summary", opts, {print_fn = true})
  if not self.built then
    local first = self:layers_list_()[1]
    local spec = self.input_spec_ or (first and first.input_spec_)
    if not spec then
      fail("summary", "model '%s' has not been built: call it on a batch (model(x)), or "
           .. "call model:build{-1, ...} with its input shape, or give its first layer "
           .. "{input_shape = {...}}", self.name)
    end
    local shape = {-1}
    for i, d in ipairs(spec) do shape[i + 1] = d end
    self:build(shape)
  end
  local text = table.concat(summary_lines(self), "\n")
  if not opts.print_fn then
    print(text)
    return
  end
  opts.print_fn(text)
  return text
end

-- ---- Sequential -----------------------------------------------------------------------

lib.help("layers.Sequential", "layers",
  "mf.layers.Sequential{layer, ...};  model:add(layer);  " ..
  "model.trainable_variables;  model.variables;  model:summary();  model:state_dict();  " ..
  "model:load_state_dict(t);  model:save(path);  model:load(path);  model:build(shape)",
  "A model of layers applied in order (Keras's Sequential, Torch7's nn.Sequential); " ..
  "mf.layers.Model(t) makes any table with layers in its fields and a method " ..
  "call(self, x, training) a model too. model.trainable_variables and model.variables " ..
  "are fresh arrays of the same Variables in the same order on every read. summary() " ..
  "prints Keras's table (output shapes, parameter counts) and returns nothing; " ..
  "summary{print_fn = f} hands the text to f and returns it. state_dict() maps each " ..
  "weight's path within the model to its value: layers named after their class, numbered " ..
  "among their siblings, \"dense/kernel\", \"dense_1/kernel\", " ..
  "\"sequential/dense/bias\" (Keras 3's rule; the layers' own names are process-wide " ..
  "counters), so a model built again loads the file of the first; load_state_dict checks " ..
  "every key, shape and dtype first and reports every mismatch (a table keyed by layer " ..
  "names, as files were before, loads too); save/load use a safetensors file. " ..
  "Training: help \"layers.fit\".",
  [[
mf.layers.reset_names()
m = mf.layers.Sequential{mf.layers.Dense(4, {input_shape = {3}}), mf.layers.Dense(2)}
m:build{-1, 3}
#m.trainable_variables               --> 4
m:state_dict()["dense_1/kernel"].shape  --> {4, 2}
m(mf.ones{5, 3}).shape               --> {5, 2}]])
local Sequential = lib.class("Sequential", ModelBase, "sequential")
local TRAINING = {training = true}

-- Sequential{layer, ...} (or Sequential({...}, {name})); model:add(layer).
function layers.Sequential(list, opts)
  local fname = "Sequential"
  if list ~= nil and type(list) ~= "table" then
    fail(fname, "expected an array of layers, got %s", type(list))
  end
  for k in pairs(list or {}) do
    if math.type(k) ~= "integer" then
      fail(fname, "expected an array of layers, got a table with the key '%s' (options go " ..
           "second: Sequential({...}, {name = ...}))", tostring(k))
    end
  end
  opts = check_opts(fname, opts, {name = true, input_shape = true})
  local self = lib.new_layer(Sequential, opts)
  self.layers = {}
  for i, layer in ipairs(list or {}) do
    if not lib.is_layer(layer) then
      fail(fname, "element %d is not a layer (got %s)", i, type(layer))
    end
    self.layers[i] = layer
  end
  return self
end

function lib.is_layer(x)
  local mt = type(x) == "table" and getmetatable(x)
  return mt and rawget(mt, "class_name") and lib.layer_classes[mt.class_name] == mt or false
end

function Sequential:add(layer)
  if not lib.is_layer(layer) then fail("add", "expected a layer, got %s", type(layer)) end
  if self.built then
    fail("add", "model '%s' is already built: add layers before its first call", self.name)
  end
  self.layers[#self.layers + 1] = layer
  return self
end

function Sequential:layers_list_() return self.layers end

-- model(x [, {training, mask}]): 'mask' (as Keras's) is the input's mask; each layer's
-- mask goes to the next (lib.output_mask), and the last one is the model's own, so a
-- Sequential inside a Sequential passes masks through as one layer.
Sequential.supports_masking, Sequential.takes_mask_ = true, true
Sequential.mask_from_call_ = true
function Sequential:apply_(x, opts, ...)
  if select("#", ...) > 0 then
    self:fail("expected (x [, {training, mask}]), got %d arguments", select("#", ...) + 2)
  end
  opts = check_opts(self:label(), opts, {training = true, mask = true})
  local training = lib.training_flag(self, opts.training ~= nil and {training = opts.training}
                                           or nil)
  if #self.layers == 0 then self:fail("the model has no layers (model:add(layer))") end
  local topts = training and TRAINING or nil
  local mask = opts.mask
  if mask ~= nil and not lib.is_tensor(mask) then
    self:fail("option 'mask' must be a tensor, got %s", type(mask))
  end
  self.mask_out_ = nil
  for _, layer in ipairs(self.layers) do
    local input = x
    if mask ~= nil and layer.takes_mask_ then
      x = layer(x, {training = training or nil, mask = mask})
    else
      x = layer(x, topts)
    end
    mask = lib.output_mask(layer, input, mask)
  end
  self.built, self.mask_out_ = true, mask
  return x
end

function Sequential:describe_()
  local names = {}
  for i, l in ipairs(self.layers) do names[i] = l.name end
  return string.format("<mf.layers.Sequential '%s': %s>", self.name, table.concat(names, ", "))
end

-- ---- Model(t): any table with layers in its fields ---------------------------------

local Model = lib.class("Model", ModelBase, "model")

-- mf.layers.Model(t): 't' keeps its fields; its layers (fields holding
-- layers, in sorted field order, and arrays of layers) make the model's
-- variables; calling it runs t:call(x, training).
function layers.Model(t, opts)
  local fname = "Model"
  if type(t) ~= "table" or getmetatable(t) then
    fail(fname, "expected a plain table with layers in its fields, got %s", type(t))
  end
  if type(t.call) ~= "function" then
    fail(fname, "the table needs a method call(self, x, training) that applies its layers")
  end
  opts = check_opts(fname, opts, {name = true})
  local self = lib.new_layer(Model, opts)
  for k, v in pairs(self) do t[k] = v end
  return setmetatable(t, Model)
end

function Model:layers_list_()
  local keys = {}
  for k, v in pairs(self) do
    if type(k) == "string" and (lib.is_layer(v) or (type(v) == "table" and lib.is_layer(v[1])))
    then keys[#keys + 1] = k end
  end
  table.sort(keys)
  local out = {}
  for _, k in ipairs(keys) do
    local v = self[k]
    if lib.is_layer(v) then out[#out + 1] = v else
      for _, l in ipairs(v) do out[#out + 1] = l end
    end
  end
  return out
end

function Model:apply_(x, opts)
  local training = lib.training_flag(self, opts)
  local y = self:call(x, training)
  self.built = true
  self.output_shape = lib.is_tensor(y) and y.shape or nil
  return y
end

-- Their argument counts checked as lib/'s functions' are (lib.publish_methods).
lib.publish_methods(ModelBase, {"state_dict", "load_state_dict", "save", "load", "build",
                                "summary"})
lib.publish_methods(Sequential, {"add"})
