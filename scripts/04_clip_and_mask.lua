-- 04_clip_and_mask.lua — minimize is compute_gradients then apply_gradients;
-- between the two you can change the gradients: clip them by their global
-- norm, or mask them so only part of a Variable is updated.
-- Run: build/moonflow scripts/04_clip_and_mask.lua

mf.random.seed(3)
local x = mf.random.normal({64, 4})
local y = mf.matmul(x, mf.tensor{{1}, {-2}, {3}, {0.5}}) + 1

local w = mf.Variable(mf.zeros{4, 1}, {name = "w"})
local b = mf.Variable(mf.zeros{1}, {name = "b"})
local function loss_fn() return mf.reduce_mean(mf.square(mf.matmul(x, w) + b - y)) end

-- 1. Gradient clipping: compute -> clip_by_global_norm -> apply.
local opt = mf.train.GradientDescentOptimizer(0.1)
for step = 1, 5 do
  local pairs_ = opt:compute_gradients(loss_fn, {var_list = {w, b}})   -- { {grad, var}, ... }
  local grads = {}
  for i, p in ipairs(pairs_) do grads[i] = p[1] end
  local clipped, norm = mf.clip_by_global_norm(grads, 1.0)
  for i, p in ipairs(pairs_) do pairs_[i] = {clipped[i], p[2]} end
  print(string.format("step %d  loss %.4f  global norm before %.4f  after %.4f",
                      step, loss_fn():item(), norm:item(), mf.global_norm(clipped):item()))
  opt:apply_gradients(pairs_)
end

-- 2. A masked partial update: grad * mask, mask 1 = update, 0 = keep.
--    Here only rows 1 and 3 of w may change; rows 2 and 4 stay frozen.
local before = w:read_value()
local mask = mf.tensor{{1}, {0}, {1}, {0}}
local gv = opt:compute_gradients(loss_fn, {var_list = {w}})
gv[1] = {gv[1][1] * mask, gv[1][2]}
opt:apply_gradients(gv)
local after = w:read_value()
print("w before the masked step:") print(before)
print("w after it (rows 2 and 4 unchanged):") print(after)
local changed = mf.not_equal(before, after)
print("masked rows unchanged:", not changed[2][1] and not changed[4][1])
