-- compute_apply_clip.lua — minimize is compute_gradients then
-- apply_gradients; between the two you may change the gradients. Here they
-- are clipped by their global norm, as TensorFlow's seq2seq recipes do.
-- Run: build/moonflow scripts/compute_apply_clip.lua

-- A linear model whose first gradients are large (the targets are far from 0).
mf.random.seed(3)
local x = mf.random.normal({64, 4})
local y = mf.matmul(x, mf.tensor{{1}, {-2}, {3}, {0.5}}) + 1
local w = mf.Variable(mf.zeros{4, 1}, {name = "w"})
local b = mf.Variable(mf.zeros{1}, {name = "b"})
local function loss_fn() return mf.reduce_mean(mf.square(mf.matmul(x, w) + b - y)) end

-- 1. What minimize does in one call:
--      opt:minimize(loss_fn)
--    is exactly these two:
--      local gv = opt:compute_gradients(loss_fn)   -- { {grad, var}, ... }
--      opt:apply_gradients(gv)
-- 2. So we can step in between: gather the gradients, scale them all by
--    clip_norm / max(global_norm, clip_norm), put them back, apply.
local opt = mf.train.GradientDescentOptimizer(0.1)
local clip_norm = 1.0
for step = 1, 5 do
  local gv = opt:compute_gradients(loss_fn, {var_list = {w, b}})
  local grads = {}
  for i, pair in ipairs(gv) do grads[i] = pair[1] end
  local clipped, norm = mf.clip_by_global_norm(grads, clip_norm)
  for i, pair in ipairs(gv) do gv[i] = {clipped[i], pair[2]} end
  print(string.format("step %d  loss %8.4f  global norm before %8.4f  after %.4f",
                      step, loss_fn():item(), norm:item(), mf.global_norm(clipped):item()))
  opt:apply_gradients(gv)
end

-- 3. Clipping each gradient on its own (clip_by_norm) is the other recipe:
--      for i, p in ipairs(gv) do gv[i] = {mf.clip_by_norm(p[1], 5), p[2]} end
-- Training goes on, clipping every step. Once the global norm is below
-- clip_norm the scale clip_norm / max(norm, clip_norm) is 1: clipping leaves
-- the gradients alone (checked: the clipped ones equal them exactly).
local last_clipped, first_alone, alone = 5, nil, true
for step = 6, 200 do
  local gv = opt:compute_gradients(loss_fn, {var_list = {w, b}})
  local grads = {gv[1][1], gv[2][1]}
  local clipped, norm = mf.clip_by_global_norm(grads, clip_norm)
  if norm:item() > clip_norm then
    last_clipped = step
  else
    first_alone = first_alone or step
    for i = 1, 2 do alone = alone and mf.reduce_all(mf.equal(clipped[i], grads[i])):item() end
  end
  opt:apply_gradients({{clipped[1], w}, {clipped[2], b}})
end
print(string.format("clipped up to step %d; from step %d on the global norm was below %g " ..
                    "and clipping left the gradients %s", last_clipped, first_alone or 0,
                    clip_norm, alone and "alone (equal)" or "CHANGED"))
local gv = opt:compute_gradients(loss_fn, {var_list = {w, b}})
print(string.format("after 200 steps: loss %.6f, global norm %.6f", loss_fn():item(),
                    mf.global_norm({gv[1][1], gv[2][1]}):item()))
