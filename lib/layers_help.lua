-- layers_help.lua — one help() page per layer of mf.layers (help(mf.layers.Dense),
-- help "Embedding"): its signature with every option and its default, what it
-- computes, and an example that tests/lua/test_shell.lua runs. The overview of
-- all layers (calling, building, trainable, names) stays the "layers" entry
-- in lib/layers.lua.
local _, lib = ...

local function page(name, signature, text, example)
  lib.help("layers." .. name, "layers", "mf.layers." .. name .. signature,
           text .. " Every layer also takes name and input_shape (help(mf.layers)).", example)
end

page("Dense", "(units [, {activation, use_bias = true, kernel_initializer = \"glorot_uniform\", " ..
     "bias_initializer = \"zeros\"}])",
  "Keras's Dense: y = activation(x kernel + bias), kernel [in, units] made at the first " ..
  "call from x's last axis; activation is a name (\"relu\", \"tanh\", \"softmax\"...) or a " ..
  "function. Passes a mask on.",
  [[
d = mf.layers.Dense(2, {kernel_initializer = "ones"})
d(mf.tensor{{1, 2, 3}})              --> {{6, 6}}
d.kernel.shape                       --> {3, 2}]])

page("Conv2D", "(filters, kernel_size [, {strides = 1, padding = \"VALID\", activation, " ..
     "use_bias = true, dilation_rate = 1, data_format = \"NHWC\", kernel_initializer, " ..
     "bias_initializer}])",
  "Keras's Conv2D over NHWC (or NCHW) images: kernel [kh, kw, C, filters], kernel_size, " ..
  "strides and dilation_rate a number or {h, w}; padding \"VALID\" or \"SAME\".",
  [[
c = mf.layers.Conv2D(4, 3, {padding = "SAME"})
c(mf.ones{1, 5, 5, 2}).shape         --> {1, 5, 5, 4}
c.kernel.shape                       --> {3, 3, 2, 4}]])

page("DepthwiseConv2D", "(kernel_size [, {depth_multiplier = 1, strides = 1, " ..
     "padding = \"VALID\", activation, use_bias = true, dilation_rate = 1, " ..
     "data_format = \"NHWC\", depthwise_initializer, bias_initializer}])",
  "Keras's DepthwiseConv2D: each input channel convolved with its own depth_multiplier " ..
  "filters; weights depthwise_kernel [kh, kw, C, M] and bias [C * M].",
  [[
d = mf.layers.DepthwiseConv2D(3, {depth_multiplier = 2})
d(mf.ones{1, 5, 5, 3}).shape         --> {1, 3, 3, 6}]])

-- the pooling layers under both names (Keras: MaxPooling2D, MaxPool2D)
for _, pool in ipairs{{"MaxPool2D", "MaxPooling2D", "the largest value", "4"},
                      {"AvgPool2D", "AveragePooling2D", "the mean", "2.5"}} do
  for i = 1, 2 do
    page(pool[i], "(pool_size [, {strides = pool_size, padding = \"VALID\", " ..
         "data_format = \"NHWC\"}])",
      "Keras's " .. pool[2] .. " (also mf.layers." .. pool[3 - i] .. "): " .. pool[3] ..
      " of each pool_size window (a number or {h, w}).",
      "p = mf.layers." .. pool[i] .. "(2)\n" ..
      "p(mf.tensor{{{{1}, {2}}, {{3}, {4}}}}) --> {{{{" .. pool[4] .. "}}}}")
  end
end

page("GlobalAveragePooling2D", "([{data_format = \"NHWC\", keepdims = false}])",
  "Keras's GlobalAveragePooling2D: the mean over the height and width of each channel.",
  [[
g = mf.layers.GlobalAveragePooling2D()
g(mf.tensor{{{{1, 2}, {3, 4}}}})      --> {{2, 3}}]])

page("Flatten", "()",
  "Keras's Flatten: every axis after the batch made one.",
  [[
mf.layers.Flatten()(mf.ones{2, 3, 4}).shape  --> {2, 12}]])

page("Dropout", "(rate [, {seed}])",
  "Keras's Dropout: with training = true zeroes each element with probability rate and " ..
  "scales the rest by 1 / (1 - rate); without it the input passes unchanged. Passes a " ..
  "mask on.",
  [[
d = mf.layers.Dropout(0.5, {seed = 1})
d(mf.ones{2})                        --> {1, 1}
d(mf.ones{1000}, {training = true}):reduce_max():item()  --> 2]])

page("BatchNormalization", "([{momentum = 0.99, epsilon = 1e-3, axis = -1, center = true, " ..
     "scale = true, beta_initializer, gamma_initializer, moving_mean_initializer, " ..
     "moving_variance_initializer}])",
  "Keras's BatchNormalization: with training = true normalizes with the batch's statistics " ..
  "(the fused op) and updates the moving mean and variance; otherwise uses the moving " ..
  "ones. gamma and beta train; the moving statistics do not.",
  [[
bn = mf.layers.BatchNormalization()
bn(mf.tensor{{1, 2}, {3, 4}}, {training = true}).shape  --> {2, 2}
#bn.trainable_variables              --> 2
#bn.variables                        --> 4]])

page("LayerNormalization", "([{epsilon = 1e-3, axis = -1 (the only one), center = true, " ..
     "scale = true}])",
  "Keras's LayerNormalization: each example normalized over its last axis (mf.nn.layer_norm), " ..
  "then scaled by gamma and shifted by beta. Passes a mask on.",
  [[
ln = mf.layers.LayerNormalization()
ln(mf.tensor{{1, 3}}):totable()[1][2]  --> 0.9995]])

page("Embedding", "(input_dim, output_dim [, {embeddings_initializer = " ..
     "uniform(-0.05, 0.05), mask_zero = false}])",
  "Keras's Embedding: integer ids (1-based, 1..input_dim, any shape) look up rows of an " ..
  "[input_dim, output_dim] table; the output adds an axis. mask_zero: id 0 is padding " ..
  "(zeros out) and e:compute_mask(ids) is the mask for a recurrent layer; in a Sequential " ..
  "it goes to the next layer by itself.",
  [[
e = mf.layers.Embedding(10, 3)
e(mf.tensor({{1, 2, 5}}, "int64")).shape  --> {1, 3, 3}
e.embeddings.shape                   --> {10, 3}]])

page("Activation", "(activation)",
  "Keras's Activation: applies an activation by name (\"relu\", \"sigmoid\", \"tanh\", " ..
  "\"softmax\", \"gelu\"...) or a function. Passes a mask on.",
  [[
mf.layers.Activation("relu")(mf.tensor{-1, 2})  --> {0, 2}]])

page("ReLU", "()",
  "Keras's ReLU layer: max(x, 0).",
  [[
mf.layers.ReLU()(mf.tensor{-1, 2})   --> {0, 2}]])

local rnn_options = "activation = \"tanh\", return_sequences = false, " ..
  "return_state = false, go_backwards = false, use_bias = true, stateful = false, " ..
  "dropout = 0, recurrent_dropout = 0, seed, zero_output_for_mask, unroll, " ..
  "kernel_initializer = \"glorot_uniform\", recurrent_initializer = \"orthogonal\", " ..
  "bias_initializer = \"zeros\""
local rnn_text = " Input [batch, time, features]; the last output [batch, units] (every " ..
  "step's with return_sequences). Keras's weights; unrolled over time with ops, so BPTT is " ..
  "the tape's or graph's own backward pass; layer(x, {initial_state, mask}) starts from a " ..
  "state and skips masked steps; layer:reset_state() zeroes a stateful layer's states."

page("LSTM", "(units [, {" .. rnn_options .. ", unit_forget_bias = true}])",
  "Keras's LSTM (states h and c)." .. rnn_text,
  [[
l = mf.layers.LSTM(4)
l(mf.ones{2, 5, 3}).shape            --> {2, 4}
mf.layers.LSTM(4, {return_sequences = true})(mf.ones{2, 5, 3}).shape  --> {2, 5, 4}]])

page("GRU", "(units [, {" .. rnn_options .. ", reset_after = true}])",
  "Keras's GRU (reset_after = true: the cuDNN variant, Keras 2's default)." .. rnn_text,
  [[
mf.layers.GRU(4)(mf.ones{2, 5, 3}).shape  --> {2, 4}]])

page("SimpleRNN", "(units [, {" .. rnn_options .. "}])",
  "Keras's SimpleRNN: h = tanh(x W + h U + b)." .. rnn_text,
  [[
mf.layers.SimpleRNN(4)(mf.ones{2, 5, 3}).shape  --> {2, 4}]])

page("Model", "(t [, {name}])",
  "A model from a plain table (Keras's subclassed Model, Torch7's nn.Module): its fields " ..
  "that hold layers (and arrays of layers) make its variables, in sorted field order; " ..
  "calling it runs t:call(x, training). It has every model method: fit, evaluate, " ..
  "predict, summary, save, load, state_dict.",
  [[
net = mf.layers.Model{d = mf.layers.Dense(2, {kernel_initializer = "ones"}), call = function(self, x) return self.d(x) end}
net(mf.tensor{{1, 2}})               --> {{3, 3}}
#net.trainable_variables             --> 2]])

page("MultiHeadAttention", "(num_heads, key_dim [, {value_dim = key_dim, dropout = 0, " ..
     "use_bias = true, output_shape, kernel_initializer = \"glorot_uniform\", " ..
     "bias_initializer = \"zeros\", seed}])",
  "Keras's MultiHeadAttention (lib/layers_attention.lua). Called as mha(query, value [, " ..
  "key] [, {attention_mask, use_causal_mask, return_attention_scores, training}]) on " ..
  "(batch, sequence, features) tensors (key defaults to value); returns (batch, Tq, " ..
  "output_shape or the query's features), and the attention probabilities (batch, heads, " ..
  "Tq, Tk) with return_attention_scores. Weights as Keras's (so are the parameter " ..
  "counts): query, key, value kernels [features, heads, key_dim or value_dim] with biases " ..
  "[heads, dim], attention_output kernel [heads, value_dim, out] and bias [out]. " ..
  "attention_mask (batch, Tq, Tk) or (Tq, Tk): true or 1 attends; use_causal_mask keeps " ..
  "key j <= query i (combined with attention_mask). Runs on " ..
  "mf.nn.scaled_dot_product_attention (flash-tiled) with scale 1/sqrt(key_dim), attention " ..
  "dropout (training = true) included (the op's dropout option); return_attention_scores " ..
  "composes the softmax from ops (with the same dropout mask for a given seed). " ..
  "Unlike Keras, a query whose keys are all masked gives NaN (Keras's large negative " ..
  "number gives it a uniform average); attention_axes is not supported (one sequence axis).",
  [[
mha = mf.layers.MultiHeadAttention(2, 2)
y, s = mha(mf.ones{3, 8, 16}, mf.ones{3, 4, 16}, {return_attention_scores = true})
y.shape                              --> {3, 8, 16}
s.shape                              --> {3, 2, 8, 4}
(mha:count_params())                 --> 284]])

page("PositionEmbedding", "(sequence_length [, {initializer = \"glorot_uniform\"}])",
  "keras_hub's PositionEmbedding: a learned (sequence_length, features) table; called on " ..
  "(batch..., T, features) with T <= sequence_length it returns the first T rows broadcast " ..
  "to the input's shape, to add to token embeddings (GPT's wpe).",
  [[
pe = mf.layers.PositionEmbedding(16)
pe(mf.ones{2, 5, 8}).shape           --> {2, 5, 8}
(pe:count_params())                  --> 128]])
