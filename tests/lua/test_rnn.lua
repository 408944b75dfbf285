-- test_rnn.lua — mf.layers.LSTM, GRU and SimpleRNN (lib/layers_rnn.lua):
-- outputs, final states and gradients (backpropagation through time) against
-- PyTorch's nn.LSTM / nn.GRU / nn.RNN on the same weights and input
-- (tests/lua/data/rnn_torch.lua, written by gen_rnn_torch.py beside it);
-- the LSTM against a reference written in plain ops, one step at a time;
-- BPTT visible on the tape and in a graph; Keras's parameter counts; errors.
local T = dofile("tests/lua/harness.lua")
local L = mf.layers
local torch = dofile("tests/lua/data/rnn_torch.lua")

local function f64(v) return mf.tensor(v, "float64") end

local function close(a, b, tol, what)
  local d = mf.reduce_max(mf.abs(a - b)):item()
  T.ok(d <= (tol or 1e-10), (what or "") .. " max |a - b| = " .. d)
end

local makers = {
  lstm = function() return L.LSTM(4, {return_sequences = true, return_state = true}) end,
  gru = function() return L.GRU(4, {return_sequences = true, return_state = true}) end,
  simple_rnn = function()
    return L.SimpleRNN(4, {return_sequences = true, return_state = true})
  end,
}

for _, kind in ipairs({"lstm", "gru", "simple_rnn"}) do
  T.test(kind .. " against PyTorch: outputs, final state, gradients", function()
    local ref = torch[kind]
    local layer = makers[kind]()
    local x = f64(ref.x)
    layer(x) -- builds float64 weights
    layer.kernel:assign(f64(ref.kernel))
    layer.recurrent_kernel:assign(f64(ref.recurrent_kernel))
    layer.bias:assign(f64(ref.bias))
    local tape = mf.GradientTape()
    tape:watch(x)
    local y, h, c = layer(x)
    local loss = mf.reduce_sum(y * f64(ref.wy))
    local g = tape:gradient(loss, {x, layer.kernel, layer.recurrent_kernel, layer.bias})
    close(y, f64(ref.y), 1e-12, "outputs")
    close(h, f64(ref.h), 1e-12, "final h")
    if ref.c then close(c, f64(ref.c), 1e-12, "final c") end
    close(g[1], f64(ref.dx), 1e-12, "d/dx")
    close(g[2], f64(ref.dkernel), 1e-12, "d/dkernel")
    close(g[3], f64(ref.drecurrent_kernel), 1e-12, "d/drecurrent_kernel")
    close(g[4], f64(ref.dbias), 1e-12, "d/dbias")
  end)
end

-- The LSTM written out in plain ops, step by step, with zero initial state.
local function lstm_reference(x, k, rk, b, units)
  local batch, steps = x.shape[1], x.shape[2]
  local h = mf.zeros({batch, units}, x.dtype)
  local c = mf.zeros({batch, units}, x.dtype)
  local hs = {}
  for t = 1, steps do
    local xt = mf.reshape(mf.slice(x, {1, t, 1}, {batch, 1, x.shape[3]}), {batch, x.shape[3]})
    local z = mf.matmul(xt, k) + mf.matmul(h, rk) + b
    local function gate(j) return mf.slice(z, {1, (j - 1) * units + 1}, {batch, units}) end
    c = mf.sigmoid(gate(2)) * c + mf.sigmoid(gate(1)) * mf.tanh(gate(3))
    h = mf.sigmoid(gate(4)) * mf.tanh(c)
    hs[t] = h
  end
  return mf.stack(hs, 2), h, c
end

T.test("LSTM against a reference in plain ops (float32, gradients too)", function()
  mf.random.seed(2)
  local layer = L.LSTM(5, {return_sequences = true, return_state = true})
  local x = mf.random.normal({3, 6, 2})
  local tape = mf.GradientTape({persistent = true})
  local y, h, c = layer(x)
  local ry, rh, rc = lstm_reference(x, layer.kernel, layer.recurrent_kernel, layer.bias, 5)
  close(y, ry, 1e-5, "y")
  close(h, rh, 1e-5, "h")
  close(c, rc, 1e-5, "c")
  local vars = layer.trainable_variables
  local g1 = tape:gradient(mf.reduce_sum(mf.square(y)), vars)
  local g2 = tape:gradient(mf.reduce_sum(mf.square(ry)), vars)
  for i = 1, 3 do close(g1[i], g2[i], 1e-4, vars[i].name) end
  -- Keras: the forget gate's bias starts at 1, the others at 0
  T.eq(mf.slice(layer.bias, {6}, {5}), {1, 1, 1, 1, 1})
  T.eq(mf.reduce_sum(mf.abs(mf.slice(layer.bias, {11}, {10}))):item(), 0)
end)

T.test("BPTT is visible: the unrolled steps on the tape and in a graph", function()
  local layer = L.SimpleRNN(3)
  local x = mf.random.normal({2, 4, 2})
  layer(x)
  local tape = mf.GradientTape()
  local y = layer(x)
  local listing = tostring(tape)
  local _, tanhs = listing:gsub("Tanh", "")
  T.ok(tanhs >= 4, "a Tanh per step on the tape:\n" .. listing)
  tape:gradient(mf.reduce_sum(y), layer.trainable_variables)
  local g = mf.Graph()
  g:as_default(function()
    local lstm = L.LSTM(3)
    local xp = mf.placeholder("float32", {-1, 4, 2})
    local out = lstm(xp)
    local grads = mf.gradients(mf.reduce_sum(out), lstm.trainable_variables)
    T.eq(#grads, 3)
    T.eq(out.shape, {-1, 3})
  end)
  local text = tostring(g)
  local _, steps = text:gsub("LSTMCell%(", "")
  local _, back = text:gsub("LSTMCellGrad%(", "")
  T.ok(steps >= 4 and back >= 4, "a fused cell per step, forward and backward:\n" .. text)
  T.ok(text:find("gradients/", 1, true), "the backward pass is in the graph")
end)

T.test("a traced LSTM equals the eager one; initial_state; return options", function()
  mf.random.seed(3)
  local layer = L.LSTM(4)
  local x = mf.random.normal({2, 3, 5})
  local f = mf.trace(function(t) return layer(t) end)
  close(f(x), layer(x), 1e-6)
  local s = L.LSTM(4, {return_state = true})
  local y, h, c = s(x)
  close(y, h, 0)
  local h0, c0 = mf.ones{2, 4}, mf.zeros{2, 4}
  local y2 = s(x, {initial_state = {h0, c0}})
  T.ok(mf.reduce_max(mf.abs(y2 - y)):item() > 1e-4, "the initial state matters")
  T.eq(c.shape, {2, 4})
  T.eq(L.GRU(4, {return_sequences = true})(x).shape, {2, 3, 4})
end)

T.test("Keras's parameter counts and errors naming the layer", function()
  L.reset_names()
  local m = L.Sequential{L.Embedding(64, 16, {input_shape = {50}}), L.LSTM(128),
                         L.Dense(64)}
  local text = m:summary{print_fn = function() end}
  -- Keras: LSTM 4 * (16 * 128 + 128 * 128 + 128) = 74,240; Embedding 1,024
  for _, want in ipairs({"lstm (LSTM)", "74,240", "embedding (Embedding)", "1,024",
                         "Total params: 83,520"}) do
    T.ok(text:find(want, 1, true), "summary lacks '" .. want .. "':\n" .. text)
  end
  local gru = L.Sequential{L.GRU(8, {input_shape = {5, 3}})}
  T.ok(gru:summary{print_fn = function() end}:find("312", 1, true), "GRU 3 * (24 + 64 + 16)")
  T.raises(function() L.LSTM(4)(mf.zeros{2, 3}) end, "(LSTM): expected input of rank 3")
  T.raises(function() L.GRU(0) end, "GRU: units must be a positive integer")
  T.raises(function() L.LSTM(2)(mf.zeros{1, 2, 3}, {initial_state = 5}) end,
           "option 'initial_state' must be an array")
  T.raises(function() mf.nn.lstm_cell(1) end,
           "lstm_cell: z must be (batch, 4 * units) (gates i, f, g, o), got shape ()")
  T.raises(function() mf.nn.lstm_cell(mf.zeros{2, 6}) end, "got shape (2,6)")
end)

T.test("lstm_cell float32 (vectorized exp/sigmoid/tanh) against float64 (libm)", function()
  -- pre-activations over the whole useful range and past float's exp limits,
  -- the state from tiny (tanh near 0) to large; columns not a multiple of 8
  local rows, u = 7, 37
  local z64 = mf.reshape(mf.linspace(-120, 120, rows * 4 * u, "float64"), {rows, 4 * u})
  z64 = z64 * mf.reshape(mf.linspace(1e-6, 1, rows * 4 * u, "float64") ^ 3, {rows, 4 * u})
  local c64 = mf.reshape(mf.linspace(-30, 30, rows * u, "float64"), {rows, u}) ^ 3 / 900
  local z32, c32 = mf.cast(z64, "float32"), mf.cast(c64, "float32")
  z64, c64 = mf.cast(z32, "float64"), mf.cast(c32, "float64") -- the same inputs
  local function rel(a, b)
    local d = mf.abs(mf.cast(a, "float64") - b) / (mf.abs(b) + 1e-30)
    return mf.reduce_max(d):item()
  end
  for _, with_state in ipairs({true, false}) do
    local h32, cc32 = mf.nn.lstm_cell(z32, with_state and c32 or nil)
    local h64, cc64 = mf.nn.lstm_cell(z64, with_state and c64 or nil)
    T.ok(rel(cc32, cc64) < 2e-6, "c: relative error " .. rel(cc32, cc64))
    T.ok(rel(h32, h64) < 2e-6, "h: relative error " .. rel(h32, h64))
    local dh, dc = c32 * 0.5 + 0.25, c32 * -0.3 + 1
    local tape32 = mf.GradientTape()
    tape32:watch(z32)
    local a, b = mf.nn.lstm_cell(z32, with_state and c32 or nil)
    local g32 = tape32:gradient(mf.reduce_sum(a * dh + b * dc), {z32})[1]
    local tape64 = mf.GradientTape()
    tape64:watch(z64)
    a, b = mf.nn.lstm_cell(z64, with_state and c64 or nil)
    local g64 = tape64:gradient(mf.reduce_sum(a * mf.cast(dh, "float64") +
                                              b * mf.cast(dc, "float64")), {z64})[1]
    -- relative to the largest |dz|: float rounding of dh * o * (1 - tc^2) ...
    local err = mf.reduce_max(mf.abs(mf.cast(g32, "float64") - g64)):item() /
                mf.reduce_max(mf.abs(g64)):item()
    T.ok(err < 1e-6, "dz: error relative to max |dz| " .. err)
  end
  local h, c = mf.nn.lstm_cell(mf.tensor({{0 / 0, 1 / 0, -1 / 0, 0}}))
  T.ok(h:item() ~= h:item() and c:item() ~= c:item(), "NaN in the input gate propagates")
end)

T.done()
