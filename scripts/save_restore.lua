-- save_restore.lua — train, save a checkpoint, restore it in a new process
-- and continue: the continued run ends exactly where an uninterrupted one does.
-- Run: build/moonflow scripts/save_restore.lua
--
-- The checkpoint (safetensors) holds the Variables, the optimizer's slots
-- (Adam's m and v, "w/Adam" and "w/Adam_1") and the global step, which is
-- what training needs to go on as if never stopped.

-- The same model and data in both processes: seeded, so they are equal.
mf.random.seed(21)
local x = mf.random.normal({128, 3})
local y = mf.matmul(x, mf.tensor{{2}, {-1}, {0.5}}) + 0.3
local w = mf.Variable(mf.zeros{3, 1}, {name = "w"})
local b = mf.Variable(mf.zeros{1}, {name = "b"})
local opt = mf.train.AdamOptimizer(0.05)
local step = mf.train.global_step()
local saver = mf.train.Saver{var_list = {w, b}, optimizers = {opt}}
local function loss_fn() return mf.reduce_mean(mf.square(mf.matmul(x, w) + b - y)) end
local function train(n)
  for _ = 1, n do opt:minimize(loss_fn, {global_step = step}) end
end
local function state()
  local wv = w:read_value()
  return string.format("step %d  loss %.6f  w = %.5f %.5f %.5f  b = %.5f", step:read_value():item(),
                       loss_fn():item(), wv[1][1], wv[2][1], wv[3][1], b:read_value()[1])
end

-- The second process: "save_restore.lua --continue CHECKPOINT".
if arg and arg[1] == "--continue" then
  saver:restore(arg[2])                      -- makes Adam's slots from the file
  print("restored:  " .. state())
  train(50)
  print("continued: " .. state())
  return
end

-- 1. Train 50 steps and save.
train(50)
local path = os.tmpname()
saver:save(path)
print("saved:     " .. state())

-- 2. A new process restores and trains 50 more steps. arg[-1] is this
--    moonflow program and arg[0] this script, as in the lua command.
local cmd = string.format("%q %q --continue %q", arg[-1], arg[0], path)
local child = assert(io.popen(cmd))
local out = child:read("a")
child:close()
os.remove(path)
io.write(out)

-- 3. This process trains the same 50 steps without stopping; the lines agree.
train(50)
local here = "continued: " .. state()
print("here:      " .. here:sub(12))
local there = out:match("continued: [^\n]*")
print("restored run matches the uninterrupted one:", there == here)
