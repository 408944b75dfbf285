-- models/gpt.lua — nanoGPT's model (Karpathy's model.py as its train.py sets it up:
-- no biases in the Linear and LayerNorm layers, GELU, tied input and output
-- embeddings, no dropout) and its training step, for scripts/char_gpt.lua,
-- the parity test (tests/lua/test_gpt_parity.lua) and the bench
-- (bench/char_gpt.lua), so the three run one model:
--   local gpt = dofile("scripts/models/gpt.lua")
--   local model = gpt.new{vocab_size = 65}           -- nanoGPT's CPU recipe otherwise
--   local step = gpt.trainer(model, {traced = true})  -- AdamW, clipping, the schedule
--   local loss = step(x, y, it)                      -- x, y: (batch, block) 1-based ids
-- The weights are Variables named as model.py's state_dict keys
-- ("transformer.h.0.attn.c_attn.weight"), stored as torch stores them
-- (a Linear's weight is (out, in): y = x W^T), so model:load(path) reads a
-- safetensors file PyTorch wrote.
local gpt = {}

-- nanoGPT's CPU recipe (its README: block 64, batch 12, 4 layers, 4 heads,
-- 128 wide, 2000 iterations, dropout 0) over config/train_shakespeare_char.py
-- (lr 1e-3 down to 1e-4 by a cosine, 100 warm-up iterations, AdamW with
-- beta2 = 0.99 and weight decay 0.1 on the 2-D weights, clipping at 1.0).
gpt.recipe = {n_layer = 4, n_head = 4, n_embd = 128, block_size = 64, batch_size = 12,
              learning_rate = 1e-3, min_lr = 1e-4, warmup_iters = 100, lr_decay_iters = 2000,
              max_iters = 2000, weight_decay = 0.1, beta1 = 0.9, beta2 = 0.99, grad_clip = 1.0}

-- The learning rate of iteration 'it' (0-based), train.py's get_lr: a
-- linear warm-up, then a cosine from learning_rate to min_lr.
function gpt.get_lr(cfg, it)
  if it < cfg.warmup_iters then return cfg.learning_rate * (it + 1) / (cfg.warmup_iters + 1) end
  if it > cfg.lr_decay_iters then return cfg.min_lr end
  local ratio = (it - cfg.warmup_iters) / (cfg.lr_decay_iters - cfg.warmup_iters)
  return cfg.min_lr + 0.5 * (1 + math.cos(math.pi * ratio)) * (cfg.learning_rate - cfg.min_lr)
end

local Model = {}
Model.__index = Model
-- model(ids) is model:forward(ids), so mf.generate(model, ids, n, {...})
-- samples from it (reading model.cfg.block_size)
Model.__call = function(self, ids) return self:forward(ids) end

-- cfg's fields over the recipe's; vocab_size is required.
local function config(cfg)
  local c = {}
  for k, v in pairs(gpt.recipe) do c[k] = v end
  for k, v in pairs(cfg or {}) do c[k] = v end
  assert(math.type(c.vocab_size) == "integer", "gpt.new: vocab_size (an integer) is required")
  assert(c.n_embd % c.n_head == 0, "gpt.new: n_embd must be a multiple of n_head")
  return c
end

-- A new model with model.py's initialisation: N(0, 0.02) for the Linear and
-- Embedding weights, N(0, 0.02 / sqrt(2 n_layer)) for the projections into
-- the residual stream (c_proj), ones for the LayerNorm weights.
function gpt.new(cfg)
  local c = config(cfg)
  local self = setmetatable({cfg = c, variables = {}, by_name = {}}, Model)
  local seed = c.seed or 1337
  local function weight(name, shape, std)
    seed = seed + 1
    local init = std and mf.random.normal(shape, {stddev = std, seed = seed}) or mf.ones(shape)
    local v = mf.Variable(init, {name = name})
    self.variables[#self.variables + 1], self.by_name[name] = v, v
    return v
  end
  local C, std = c.n_embd, 0.02
  local proj_std = 0.02 / math.sqrt(2 * c.n_layer)
  self.wte = weight("transformer.wte.weight", {c.vocab_size, C}, std)
  self.wpe = weight("transformer.wpe.weight", {c.block_size, C}, std)
  self.blocks = {}
  for i = 0, c.n_layer - 1 do
    local p = "transformer.h." .. i .. "."
    self.blocks[i + 1] = {
      ln_1 = weight(p .. "ln_1.weight", {C}),
      c_attn = weight(p .. "attn.c_attn.weight", {3 * C, C}, std),
      attn_proj = weight(p .. "attn.c_proj.weight", {C, C}, proj_std),
      ln_2 = weight(p .. "ln_2.weight", {C}),
      c_fc = weight(p .. "mlp.c_fc.weight", {4 * C, C}, std),
      mlp_proj = weight(p .. "mlp.c_proj.weight", {C, 4 * C}, proj_std),
    }
  end
  self.ln_f = weight("transformer.ln_f.weight", {C})
  return self
end

-- The weights of a safetensors file PyTorch wrote from this model's
-- state_dict (lm_head.weight, tied to wte, may be there or not).
function Model:load(path)
  local t = mf.load(path)
  for name, v in pairs(self.by_name) do
    assert(t[name], "gpt: " .. path .. " has no tensor '" .. name .. "'")
    v:assign(mf.cast(t[name], v.dtype))
  end
end

-- The Variables that get no weight decay: nanoGPT decays the 2-D weights only.
function Model:no_decay()
  local out = {}
  for _, v in ipairs(self.variables) do
    if #v.shape < 2 then out[#out + 1] = v end
  end
  return out
end

function Model:num_params()
  local n = 0
  for _, v in ipairs(self.variables) do
    local k = 1
    for _, d in ipairs(v.shape) do k = k * d end
    n = n + k
  end
  return n
end

-- x W^T over the last axis of x, the other axes folded into the rows of one
-- GEMM, as torch's nn.Linear does (its weight gradient is then one GEMM too,
-- not one per batch and a sum).
local function linear(x, w)
  local shape = x.shape
  local y = mf.matmul(mf.reshape(x, {-1, shape[#shape]}), w, {transpose_b = true})
  shape[#shape] = w.shape[1]
  return mf.reshape(y, shape)
end
local function layer_norm(x, w) return mf.nn.layer_norm(x, {epsilon = 1e-5}) * w end

-- model.py's CausalSelfAttention: q, k, v from one product, heads split
-- (B, H, T, hd), softmax(q k^T / sqrt(hd) + causal mask) v, heads joined,
-- projected. The product is cut into heads before q, k and v are split
-- apart: each is then a view (B, T, H, hd) of it, and their gradients meet
-- in one ConcatV2 whose result is already the product's gradient (split
-- first, each head reshape would copy a strided slice, forward and back).
function Model:attention(x, blk)
  local B, T, C = x.shape[1], x.shape[2], x.shape[3]
  local H = self.cfg.n_head
  local hd = C // H
  local qkv = mf.reshape(linear(x, blk.c_attn), {B, T, 3 * H, hd})
  local q, k, v = table.unpack(mf.split(qkv, 3, 3))
  local function heads(t) return mf.transpose(t, {1, 3, 2, 4}) end
  q, k, v = heads(q), heads(k), heads(v)
  -- softmax(q k^T / sqrt(hd) + causal mask) v, one op (flash-style tiles)
  local y = mf.transpose(mf.nn.scaled_dot_product_attention(q, k, v, {causal = true}),
                         {1, 3, 2, 4})
  return linear(mf.reshape(y, {B, T, C}), blk.attn_proj)
end

-- The logits (B, T, vocab) of ids (B, T), 1-based, T <= block_size.
function Model:forward(ids)
  local T = ids.shape[2]
  assert(T <= self.cfg.block_size, "gpt: a sequence longer than block_size")
  local x = mf.gather(self.wte, ids, 1) + self.wpe[{{1, T}}]
  for _, blk in ipairs(self.blocks) do
    x = x + self:attention(layer_norm(x, blk.ln_1), blk)
    x = x + linear(mf.nn.gelu(linear(layer_norm(x, blk.ln_2), blk.c_fc)), blk.mlp_proj)
  end
  return linear(layer_norm(x, self.ln_f), self.wte)   -- lm_head tied to wte
end

-- The mean cross-entropy of the next ids 'targets' (B, T).
function Model:loss(ids, targets)
  local logits = self:forward(ids)
  return mf.reduce_mean(mf.nn.sparse_softmax_cross_entropy_with_logits{
    labels = mf.reshape(targets, {-1}), logits = mf.reshape(logits, {-1, self.cfg.vocab_size})})
end

-- torch.nn.utils.clip_grad_norm_'s rule: grads * min(1, clip / (norm + 1e-6)).
local function clip_grad_norm(grads, clip)
  local norm = mf.global_norm(grads)
  local coef = mf.minimum(clip / (norm + 1e-6), 1.0)
  local out = {}
  for i, g in ipairs(grads) do out[i] = g * coef end
  return out, norm
end

-- The training step of train.py: loss, gradients, clipping, AdamW with
-- PyTorch's epsilon placement at get_lr(it). Returns step(x, y, it) ->
-- loss; opts.traced = true makes it one mf.trace graph (the rate is a
-- Variable it reads), cfg fields override the model's.
function gpt.trainer(model, opts)
  opts = opts or {}
  local c = model.cfg
  local lr = mf.Variable(mf.tensor(c.learning_rate, "float32"), {name = "learning_rate"})
  local opt = mf.train.AdamW(lr, {weight_decay = c.weight_decay, beta1 = c.beta1,
                                  beta2 = c.beta2, epsilon = 1e-8, epsilon_placement = "pytorch",
                                  exclude_from_weight_decay = model:no_decay()})
  local vars = model.variables
  local function step(x, y)
    local tape = mf.GradientTape()
    local loss = model:loss(x, y)
    tape:stop()
    local grads = clip_grad_norm(tape:gradient(loss, vars), c.grad_clip)
    local gv = {}
    for i, v in ipairs(vars) do gv[i] = {grads[i], v} end
    opt:apply_gradients(gv)
    return loss
  end
  if opts.traced then step = mf.trace(step) end
  return function(x, y, it)
    lr:assign(gpt.get_lr(c, it))
    return step(x, y)
  end
end

return gpt
