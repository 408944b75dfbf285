-- masked_update.lua — update only part of a Variable: multiply its
-- gradient by a mask between compute_gradients and apply_gradients
-- (mask 1 = update this entry, 0 = keep it). Fine-tuning some rows of an
-- embedding, or freezing the weights of one input, work this way.
-- Run: build/moonflow scripts/masked_update.lua

mf.random.seed(3)
local x = mf.random.normal({64, 4})
local y = mf.matmul(x, mf.tensor{{1}, {-2}, {3}, {0.5}}) + 1
local w = mf.Variable(mf.fill({4, 1}, 0.25), {name = "w"})
local b = mf.Variable(mf.zeros{1}, {name = "b"})
local function loss_fn() return mf.reduce_mean(mf.square(mf.matmul(x, w) + b - y)) end

-- Rows 1 and 3 of w may change; rows 2 and 4 stay frozen at 0.25.
local mask = mf.tensor{{1}, {0}, {1}, {0}}
local opt = mf.train.AdamOptimizer(0.1)
local before = w:read_value()
for step = 1, 100 do
  local gv = opt:compute_gradients(loss_fn, {var_list = {w, b}})
  gv[1] = {gv[1][1] * mask, gv[1][2]}        -- gv[1] is {grad of w, w}
  opt:apply_gradients(gv)
end
local after = w:read_value()
print("w before:") print(before)
print("w after 100 masked Adam steps (rows 2 and 4 unchanged):") print(after)
print(string.format("loss %.4f (a full update would reach 0; frozen rows limit the fit)",
                    loss_fn():item()))

-- Adam's update is m / (sqrt(v) + eps): with a zero gradient both slots stay
-- 0, so frozen entries do not move even with momentum-like optimizers.
local changed = mf.not_equal(before, after)
print("masked rows unchanged:", not changed[2][1] and not changed[4][1],
      "free rows changed:", changed[1][1] and changed[3][1])
