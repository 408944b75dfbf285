-- layers_rnn.lua — the recurrent layers of mf.layers: LSTM, GRU and
-- SimpleRNN (Keras's weights, gate order and parameter counts), unrolled
-- over time with ops, so backpropagation through time is the tape's (or the
-- graph's) ordinary backward pass over the unrolled steps, visible in
-- print(tape) and print(g).
--
-- Inputs are (batch, time, features); the time axis must be known (it is
-- unrolled), the batch may be unknown in a graph. The input projection of
-- every step is one matmul over (batch * time) rows before the loop; each
-- step then adds the recurrent matmul. The first step, with zero state,
-- skips the recurrent term, so no zeros of the batch size are ever made.
--   LSTM (gates i, f, g, o as Keras and PyTorch): z = x W + h U + b, then
--     the fused op mf.nn.lstm_cell: c = sigmoid(f) c + sigmoid(i) tanh(g),
--     h = sigmoid(o) tanh(c) (written out in ops for another activation);
--   GRU (Keras's reset_after = true, PyTorch's GRU; gates z, r, n):
--     h = z h + (1 - z) tanh(x Wn + bn + r (h Un + bn'));
--   SimpleRNN: h = tanh(x W + h U + b).
-- Options (Keras's): return_sequences (all steps' h, (batch, time, units)),
-- return_state (also the final state: h [, c]), go_backwards (the steps in
-- reverse; outputs in that order, as Keras), use_bias, stateful (the final
-- states start the next call; layer:reset_state() zeroes them), dropout and
-- recurrent_dropout (with training = true: one mask per call on the inputs
-- and one on h before the recurrent matmul, as Keras's cells), GRU's
-- reset_after (false: the reset gate before the recurrent matmul, one bias),
-- zero_output_for_mask, unroll (accepted: the loop is always unrolled).
-- At call time layer(x, {initial_state = {h0 [, c0]}, mask, training}):
-- 'mask' (batch, time) booleans; a masked step keeps the states and repeats
-- the last output (zeros with zero_output_for_mask), as Keras's rnn.
local mf, lib = ...
local check_opts, check_bool = lib.check_opts, lib.check_bool
local layers, Layer = mf.layers, lib.Layer

local rnn_keys = {return_sequences = true, return_state = true, kernel_initializer = true,
                  recurrent_initializer = true, bias_initializer = true, name = true,
                  input_shape = true, activation = true, unit_forget_bias = true,
                  go_backwards = true, use_bias = true, stateful = true, dropout = true,
                  recurrent_dropout = true, zero_output_for_mask = true, unroll = true,
                  seed = true}

local function rate_opt(fname, what, v)
  if v == nil then return 0 end
  if type(v) ~= "number" or v ~= v or v < 0 or v >= 1 then
    lib.fail(fname, "option '%s' must be a number in [0, 1), got %s", what, tostring(v))
  end
  return v
end

-- The options every recurrent layer reads.
local function read_opts(self, name, opts)
  self.return_sequences = check_bool(name, "return_sequences", opts.return_sequences, false)
  self.return_state = check_bool(name, "return_state", opts.return_state, false)
  self.kernel_init = lib.initializer(name, "kernel_initializer", opts.kernel_initializer,
                                     "glorot_uniform")
  self.recurrent_init = lib.initializer(name, "recurrent_initializer",
                                        opts.recurrent_initializer, "orthogonal")
  self.bias_init = lib.initializer(name, "bias_initializer", opts.bias_initializer, "zeros")
  self.unit_forget_bias = check_bool(name, "unit_forget_bias", opts.unit_forget_bias, true)
  self.activation = lib.activation(name, opts.activation or "tanh")
  self.go_backwards = check_bool(name, "go_backwards", opts.go_backwards, false)
  self.use_bias = check_bool(name, "use_bias", opts.use_bias, true)
  self.stateful = check_bool(name, "stateful", opts.stateful, false)
  self.zero_output_for_mask = check_bool(name, "zero_output_for_mask",
                                         opts.zero_output_for_mask, false)
  check_bool(name, "unroll", opts.unroll, true)
  self.dropout = rate_opt(name, "dropout", opts.dropout)
  self.recurrent_dropout = rate_opt(name, "recurrent_dropout", opts.recurrent_dropout)
  if opts.seed ~= nil and math.type(opts.seed) ~= "integer" then
    lib.fail(name, "option 'seed' must be an integer, got %s", tostring(opts.seed))
  end
  self.seed = opts.seed
end

local function rnn_class(name, key, gates, extra)
  local cls = lib.class(name, Layer, key)
  local keys = {}
  for k in pairs(rnn_keys) do keys[k] = true end
  for k in pairs(extra or {}) do keys[k] = true end
  layers[name] = function(units, opts)
    units = lib.check_count(name, "units", units)
    opts = check_opts(name, opts, keys)
    local self = lib.new_layer(cls, opts)
    self.units, self.gates = units, gates
    read_opts(self, name, opts)
    self.reset_after = check_bool(name, "reset_after", opts.reset_after, true)
    return self
  end
  return cls
end

local LSTM = rnn_class("LSTM", "lstm", 4)
local GRU = rnn_class("GRU", "gru", 3, {reset_after = true})
local SimpleRNN = rnn_class("SimpleRNN", "simple_rnn", 1)
local classes = {LSTM, GRU, SimpleRNN}

local function check_input(self, shape)
  self:check_rank(shape, 3, false, "batch, time, features")
  self:known_dim(shape, 2, "number of time steps")
  local f = self:known_dim(shape, 3, "number of features")
  if self.in_dim and f ~= self.in_dim then
    self:fail("expected %d input features (built for them), got shape %s", self.in_dim,
              lib.shape_text(shape))
  end
end

-- kernel (features, k units), recurrent_kernel (units, k units; orthogonal
-- by default, as Keras), bias: Keras's shapes, so summary() counts as Keras.
local function build_weights(self, shape, dtype, bias_shape, bias_init)
  local f, u, k = shape[3], self.units, self.gates
  self.in_dim = f
  self.kernel = self:add_weight("kernel", {f, k * u}, self.kernel_init, true, dtype)
  self.recurrent_kernel = self:add_weight("recurrent_kernel", {u, k * u}, self.recurrent_init,
                                          true, dtype)
  if self.use_bias then
    self.bias = self:add_weight("bias", bias_shape, bias_init or self.bias_init, true, dtype)
  end
end

function LSTM:build(shape, dtype)
  local u = self.units
  local init = self.bias_init
  if self.unit_forget_bias then
    -- Keras: the forget gate's bias is 1; the initializer makes the other
    -- gates' biases, called for (units) and (2 units) as Keras calls it
    init = function(_, dt)
      return mf.concat({self.bias_init({u}, dt), mf.ones({u}, dt), self.bias_init({2 * u}, dt)}, 1)
    end
  end
  build_weights(self, shape, dtype, {4 * u}, init)
end

function GRU:build(shape, dtype)
  -- reset_after: an input bias and a recurrent bias per gate, (2, 3 units) as Keras
  build_weights(self, shape, dtype, self.reset_after and {2, 3 * self.units} or {3 * self.units})
end

function SimpleRNN:build(shape, dtype)
  build_weights(self, shape, dtype, {self.units})
end

-- ---- the cells: one step from the input projection z (bias included) -------------------
-- cell(self, z, states, h_in) -> new states (h first); 'states' is nil at a
-- first step without state (no zeros made); h_in is h after recurrent dropout.

function LSTM:cell(z, states, h_in)
  local c = states and states[2]
  if states then z = z + mf.matmul(h_in, self.recurrent_kernel) end
  if self.activation == mf.nn.tanh then -- the fused cell (core/ops/lstm_cell.c)
    local h, c2
    if c then h, c2 = mf.nn.lstm_cell(z, c) else h, c2 = mf.nn.lstm_cell(z) end
    return {h, c2}
  end
  local gates = mf.split(z, 4, 2)
  local i, f, g, o = mf.sigmoid(gates[1]), mf.sigmoid(gates[2]),
                     self.activation(gates[3]), mf.sigmoid(gates[4])
  c = c and f * c + i * g or i * g
  return {o * self.activation(c), c}
end

-- Keras's GRUCell: gates z, r, h; reset_after applies r after the
-- recurrent matmul (with its own bias), else to h before it. As Keras, h's
-- update uses h after recurrent dropout.
function GRU:cell(z_in, states, h_in)
  local u = self.units
  local xz, xr, xn = table.unpack(mf.split(z_in, 3, 2))
  local b_rec = self.rec_bias_
  local z, r, n
  if self.reset_after then
    local hz, hr, hn
    if states then
      local hu = mf.matmul(h_in, self.recurrent_kernel)
      if b_rec then hu = hu + b_rec end
      hz, hr, hn = table.unpack(mf.split(hu, 3, 2))
    elseif b_rec then
      hz, hr, hn = table.unpack(mf.split(mf.reshape(b_rec, {1, 3 * u}), 3, 2))
    end
    z = hz and mf.sigmoid(xz + hz) or mf.sigmoid(xz)
    r = hr and mf.sigmoid(xr + hr) or mf.sigmoid(xr)
    n = self.activation(hn and xn + r * hn or xn)
  else
    local k = mf.split(self.recurrent_kernel, {2 * u, u}, 2)
    if states then
      local hz, hr = table.unpack(mf.split(mf.matmul(h_in, k[1]), 2, 2))
      z, r = mf.sigmoid(xz + hz), mf.sigmoid(xr + hr)
      n = self.activation(xn + mf.matmul(r * h_in, k[2]))
    else
      z, r = mf.sigmoid(xz), mf.sigmoid(xr)
      n = self.activation(xn)
    end
  end
  return {states and z * h_in + (1 - z) * n or (1 - z) * n}
end

function SimpleRNN:cell(z, states, h_in)
  if states then z = z + mf.matmul(h_in, self.recurrent_kernel) end
  return {self.activation(z)}
end

-- The bias added to the input projection (GRU reset_after: the input half;
-- the recurrent half is kept in rec_bias_ for the cell).
local function input_bias(self)
  if not self.bias then return nil end
  if self.gates == 3 and self.reset_after then
    local u = self.units
    local b = mf.split(self.bias, 2, 1)
    self.rec_bias_ = mf.reshape(b[2], {3 * u})
    return mf.reshape(b[1], {3 * u})
  end
  return self.bias
end

-- x (batch, time, f) -> the per-step input projections, an array of
-- (batch, k units) in processing order: one matmul over the rows in
-- time-major order, so each step's block is contiguous.
local function projections(self, x, training)
  local t, f = x.shape[2], x.shape[3]
  local ku = self.gates * self.units
  if training and self.dropout > 0 then   -- one mask over time, as Keras's cells
    local ones = mf.ones_like(mf.reduce_sum(x, {axis = 2, keepdims = true}))
    x = x * mf.nn.dropout(ones, self.dropout, self.seed and {seed = self.seed} or nil)
  end
  local xw = mf.matmul(mf.reshape(mf.transpose(x, {2, 1, 3}), {-1, f}), self.kernel)
  local b = input_bias(self)
  if b then xw = xw + b end
  local steps = mf.split(mf.reshape(xw, {t, -1, ku}), t, 1)
  local out = {}
  for i = 1, t do
    out[i] = mf.reshape(steps[self.go_backwards and t + 1 - i or i], {-1, ku})
  end
  return out
end

-- The mask's steps, (batch, 1) booleans in processing order, or nil.
local function mask_steps(self, mask, x)
  if mask == nil then return nil end
  if type(mask) == "table" and not getmetatable(mask) then mask = mf.tensor(mask) end
  if not lib.is_tensor(mask) or mask.ndim ~= 2 or mask.shape[2] ~= x.shape[2] then
    self:fail("option 'mask' must be (batch, time) booleans for input of shape %s, got %s",
              lib.shape_text(x.shape), lib.is_tensor(mask) and lib.shape_text(mask.shape)
              or type(mask))
  end
  if mask.dtype ~= "bool" then mask = mf.not_equal(mask, 0) end
  local t = x.shape[2]
  local parts = mf.split(mask, t, 2)
  local out = {}
  for i = 1, t do out[i] = parts[self.go_backwards and t + 1 - i or i] end
  return out
end

-- ---- stateful layers: the states live in non-trainable Variables --------------------------

local function state_count(self) return self.gates == 4 and 2 or 1 end

local function stored_states(self, x)
  local b = self:known_dim(x.shape, 1, "batch size (stateful)")
  if not self.state_vars_ then
    local dtype = self.kernel.dtype
    mf.init_scope(function()
      local vars = {}
      for i = 1, state_count(self) do
        vars[i] = mf.Variable(mf.zeros({b, self.units}, dtype),
                              {name = self.name .. "/state_" .. i, trainable = false})
      end
      rawset(self, "state_vars_", vars)
    end)
  elseif self.state_vars_[1].shape[1] ~= b then
    self:fail("stateful: built for batches of %d, got shape %s", self.state_vars_[1].shape[1],
              lib.shape_text(x.shape))
  end
  local out = {}
  for i, v in ipairs(self.state_vars_) do out[i] = v:read_value() end
  return out
end

-- Assigns the final states; returns the assign ops a graph must run.
local function store_states(self, states)
  local ops = {}
  for i, v in ipairs(self.state_vars_) do
    local op = v:assign(mf.stop_gradient(states[i]))
    if getmetatable(op).__name == "mf.Tensor" and op.name ~= nil then ops[#ops + 1] = op end
  end
  return ops
end

-- layer:reset_state(): the stored states of a stateful layer back to zeros.
local function reset_state(self)
  if not self.stateful then self:fail("reset_state: the layer is not stateful") end
  for _, v in ipairs(self.state_vars_ or {}) do v:assign(mf.zeros_like(v)) end
end

-- ---- the loop ----------------------------------------------------------------------------

local function step_states(self, z, states, rec_mask)
  local h_in = states and states[1]
  if h_in and rec_mask then h_in = h_in * rec_mask end
  return self:cell(z, states, h_in)
end

-- A masked step keeps the previous states (zeros before any).
local function keep_masked(m, new, old)
  local out = {}
  for i, v in ipairs(new) do out[i] = mf.where(m, v, old and old[i] or mf.zeros_like(v)) end
  return out
end

local function forward(self, x, training)
  local zs = projections(self, x, training)
  local masks = mask_steps(self, self.mask_, x)
  local states = self.initial_
  if not states and self.stateful then states = stored_states(self, x) end
  local rec_mask
  local outs, last = {}, nil
  for t, z in ipairs(zs) do
    if training and self.recurrent_dropout > 0 and states and not rec_mask then
      rec_mask = mf.nn.dropout(mf.ones_like(states[1]), self.recurrent_dropout,
                               self.seed and {seed = self.seed + 1} or nil)
    end
    local new = step_states(self, z, states, rec_mask)
    local out = new[1]
    if masks then
      new = keep_masked(masks[t], new, states)
      out = mf.where(masks[t], out, (not self.zero_output_for_mask and last) or
                     mf.zeros_like(out))
    end
    states, last = new, out
    outs[t] = out
  end
  local y = self.return_sequences and mf.stack(outs, 2) or (masks and states[1] or last)
  if self.stateful and not self.initial_ then
    local ops = store_states(self, states)
    if #ops > 0 then   -- in a graph, whatever needs y runs the assigns
      local y0 = y
      y = mf.control_dependencies(ops, function() return mf.identity(y0) end)
    end
  end
  if self.return_state then return y, states[1], states[2] end
  return y
end

local training_keys = {training = true, initial_state = true, mask = true}

-- layer(x [, {training, initial_state, mask}]) -> output [, final states...]
local function apply(self, x, opts, ...)
  if select("#", ...) > 0 then
    self:fail("expected (x [, {training, initial_state, mask}]), got %d arguments",
              select("#", ...) + 2)
  end
  opts = check_opts(self:label(), opts, training_keys)
  local init = opts.initial_state
  if lib.is_tensor(init) and state_count(self) == 1 then init = {init} end   -- Keras's GRU
  if init ~= nil and (type(init) ~= "table" or #init ~= state_count(self) or
                      not lib.is_tensor(init[1]) or not lib.is_tensor(init[#init])) then
    self:fail("option 'initial_state' must be an array of %d state tensors {h0%s}, got %s",
              state_count(self), self.gates == 4 and ", c0" or "",
              type(init) == "table" and #init .. " values" or type(init))
  end
  self.initial_, self.mask_ = init and {table.unpack(init)} or nil, opts.mask
  local out = table.pack(pcall(Layer.apply_, self, x, opts.training ~= nil and
                               {training = opts.training} or nil))
  self.initial_, self.mask_ = nil, nil
  if not out[1] then error(out[2], 0) end
  return table.unpack(out, 2, out.n)
end

-- layer:compute_mask(x, mask) -> the mask of the output (Keras's): the same mask with
-- return_sequences (one output per step), else nil.
local function compute_mask(self, x, mask)
  if mask ~= nil and not lib.is_tensor(mask) then
    self:fail("compute_mask: mask must be a tensor or nil, got %s", type(mask))
  end
  if x ~= nil and not lib.is_tensor(x) then
    self:fail("compute_mask: expected the layer's input (a tensor) or nil, got %s", type(x))
  end
  return self.return_sequences and mask or nil
end

for _, cls in ipairs(classes) do
  cls.check_input_, cls.apply_, cls.forward, cls.reset_state = check_input, apply, forward,
                                                               reset_state
  cls.compute_mask, cls.supports_masking, cls.takes_mask_ = compute_mask, true, true
  lib.publish_methods(cls, {"reset_state", "compute_mask"})
end
