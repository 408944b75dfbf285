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
-- Options: return_sequences (all steps' h, (batch, time, units)) and
-- return_state (also the final state: h [, c]); initial_state at call time
-- as layer(x, {initial_state = {h0 [, c0]}, training}).
local mf, lib = ...
local check_opts = lib.check_opts
local layers, Layer = mf.layers, lib.Layer

local rnn_keys = {return_sequences = true, return_state = true, kernel_initializer = true,
                  recurrent_initializer = true, bias_initializer = true, name = true,
                  input_shape = true, activation = true, unit_forget_bias = true}

local function rnn_class(name, key, gates)
  local cls = lib.class(name, Layer, key)
  layers[name] = function(units, opts)
    units = lib.check_count(name, "units", units)
    opts = check_opts(name, opts, rnn_keys)
    local self = lib.new_layer(cls, opts)
    self.units, self.gates = units, gates
    self.return_sequences = lib.check_bool(name, "return_sequences", opts.return_sequences,
                                           false)
    self.return_state = lib.check_bool(name, "return_state", opts.return_state, false)
    self.kernel_init = lib.initializer(name, "kernel_initializer", opts.kernel_initializer,
                                       "glorot_uniform")
    self.recurrent_init = lib.initializer(name, "recurrent_initializer",
                                          opts.recurrent_initializer, "orthogonal")
    self.bias_init = lib.initializer(name, "bias_initializer", opts.bias_initializer, "zeros")
    self.unit_forget_bias = lib.check_bool(name, "unit_forget_bias", opts.unit_forget_bias,
                                           true)
    self.activation = lib.activation(name, opts.activation or "tanh")
    return self
  end
  return cls
end

local LSTM = rnn_class("LSTM", "lstm", 4)
local GRU = rnn_class("GRU", "gru", 3)
local SimpleRNN = rnn_class("SimpleRNN", "simple_rnn", 1)

local function check_input(self, shape)
  self:check_rank(shape, 3, false, "batch, time, features")
  self:known_dim(shape, 2, "number of time steps")
  local f = self:known_dim(shape, 3, "number of features")
  if self.in_dim and f ~= self.in_dim then
    self:fail("expected %d input features (built for them), got shape %s", self.in_dim,
              lib.shape_text(shape))
  end
end
LSTM.check_input_, GRU.check_input_, SimpleRNN.check_input_ = check_input, check_input,
                                                              check_input

-- kernel (features, k units), recurrent_kernel (units, k units; orthogonal
-- by default, as Keras), bias: Keras's shapes, so summary() counts as Keras.
local function build_weights(self, shape, dtype, bias_shape, bias_init)
  local f, u, k = shape[3], self.units, self.gates
  self.in_dim = f
  self.kernel = self:add_weight("kernel", {f, k * u}, self.kernel_init, true, dtype)
  self.recurrent_kernel = self:add_weight("recurrent_kernel", {u, k * u}, self.recurrent_init,
                                          true, dtype)
  self.bias = self:add_weight("bias", bias_shape, bias_init or self.bias_init, true, dtype)
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
  build_weights(self, shape, dtype, {2, 3 * self.units})
end

function SimpleRNN:build(shape, dtype)
  build_weights(self, shape, dtype, {self.units})
end

-- x (batch, time, f) -> the per-step input projections, an array of
-- (1, batch, k units): one matmul over the rows in time-major order, so each
-- step's block is contiguous (no strided gate slices in the loop).
local function projections(self, x, bias)
  local t, f = x.shape[2], x.shape[3]
  local ku = self.gates * self.units
  local xw = mf.matmul(mf.reshape(mf.transpose(x, {2, 1, 3}), {-1, f}), self.kernel)
  if bias then xw = xw + bias end
  return mf.split(mf.reshape(xw, {t, -1, ku}), t, 1), ku
end

local function step_input(p, ku) return mf.reshape(p, {-1, ku}) end

local training_keys = {training = true, initial_state = true}

-- layer(x [, {training, initial_state}]) -> output [, final states...]
local function apply(self, x, opts, ...)
  if select("#", ...) > 0 then
    self:fail("expected (x [, {training, initial_state}]), got %d arguments", select("#", ...) + 2)
  end
  opts = check_opts(self:label(), opts, training_keys)
  local init = opts.initial_state
  if init ~= nil and (type(init) ~= "table" or not lib.is_tensor(init[1])) then
    self:fail("option 'initial_state' must be an array of state tensors {h0%s}, got %s",
              self.gates == 4 and ", c0" or "", type(init))
  end
  self.initial_ = init
  local out = table.pack(Layer.apply_(self, x, opts.training ~= nil and
                                      {training = opts.training} or nil))
  self.initial_ = nil
  return table.unpack(out, 1, out.n)
end
LSTM.apply_, GRU.apply_, SimpleRNN.apply_ = apply, apply, apply

-- The layer's results from the step outputs 'hs' and final states.
local function results(self, hs, ...)
  local y = self.return_sequences and mf.stack(hs, 2) or hs[#hs]
  if self.return_state then return y, ... end
  return y
end

function LSTM:forward(x)
  local xs, ku = projections(self, x, self.bias)
  local h, c = table.unpack(self.initial_ or {})
  local fused = self.activation == mf.nn.tanh -- the fused cell (core/ops/lstm_cell.c)
  local hs = {}
  for t, p in ipairs(xs) do
    local z = step_input(p, ku)
    if h then z = z + mf.matmul(h, self.recurrent_kernel) end
    if fused then
      if c then h, c = mf.nn.lstm_cell(z, c) else h, c = mf.nn.lstm_cell(z) end
    else
      local gates = mf.split(z, 4, 2)
      local i, f, g, o = mf.sigmoid(gates[1]), mf.sigmoid(gates[2]),
                         self.activation(gates[3]), mf.sigmoid(gates[4])
      c = c and f * c + i * g or i * g
      h = o * self.activation(c)
    end
    hs[t] = h
  end
  return results(self, hs, h, c)
end

function GRU:forward(x)
  local u = self.units
  local b = mf.split(self.bias, 2, 1)
  local b_in = mf.reshape(b[1], {3 * u})
  local b_rec = mf.reshape(b[2], {3 * u})
  local xs, ku = projections(self, x, b_in)
  local h = (self.initial_ or {})[1]
  local hs = {}
  for t, p in ipairs(xs) do
    local xz, xr, xn = table.unpack(mf.split(step_input(p, ku), 3, 2))
    local hz, hr, hn
    if h then
      hz, hr, hn = table.unpack(mf.split(mf.matmul(h, self.recurrent_kernel) + b_rec, 3, 2))
    else
      hz, hr, hn = table.unpack(mf.split(mf.reshape(b_rec, {1, 3 * u}), 3, 2))
    end
    local z, r = mf.sigmoid(xz + hz), mf.sigmoid(xr + hr)
    local n = self.activation(xn + r * hn)
    h = h and z * h + (1 - z) * n or (1 - z) * n
    hs[t] = h
  end
  return results(self, hs, h)
end

function SimpleRNN:forward(x)
  local xs, ku = projections(self, x, self.bias)
  local h = (self.initial_ or {})[1]
  local hs = {}
  for t, p in ipairs(xs) do
    local z = step_input(p, ku)
    if h then z = z + mf.matmul(h, self.recurrent_kernel) end
    h = self.activation(z)
    hs[t] = h
  end
  return results(self, hs, h)
end
