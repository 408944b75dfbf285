-- test_train_step.lua — mf.train.global_step() after its Variable is
-- closed (a fresh step, as TensorFlow's get_or_create_global_step), and
-- what mf.train.exponential_decay says about wrong or closed arguments.
local T = dofile("tests/lua/harness.lua")

-- Closes a tensor or Variable by hand, as leaving a <close> block does.
local function close(x) getmetatable(x).__close(x) end

T.test("a closed eager global step is replaced by a fresh one at 0", function()
  local gs = mf.train.global_step()
  gs:assign_add(5)
  T.eq(mf.train.global_step():read_value(), 5)
  do
    local s <close> = mf.train.global_step()
    T.ok(rawequal(s, gs), "the same Variable while it is open")
  end
  T.raises(function() return gs:read_value() end, "variable is closed")
  local fresh = mf.train.global_step()
  T.ok(not rawequal(fresh, gs), "a new Variable")
  T.eq(fresh:read_value(), 0)
  T.eq(fresh.name, "global_step")
  T.eq(fresh.dtype, "int64")
  T.eq(fresh.trainable, false)
  T.ok(rawequal(mf.train.global_step(), fresh), "kept until closed")
  -- the fresh step is the one optimizers count with
  local x = mf.Variable(1.0)
  local opt = mf.train.GradientDescentOptimizer(0.1)
  opt:minimize(function() return x * x end, {global_step = fresh})
  opt:minimize(function() return x * x end, {global_step = mf.train.global_step()})
  T.eq(fresh:read_value(), 2)
  close(fresh)
  T.eq(mf.train.global_step():read_value(), 0)
end)

T.test("a closed step given to an optimizer is named as closed", function()
  local gs = mf.Variable(0, {dtype = "int64"})
  close(gs)
  local x = mf.Variable(1.0)
  local opt = mf.train.GradientDescentOptimizer(0.1)
  T.raises(function() opt:minimize(function() return x * x end, {global_step = gs}) end,
           "minimize: global_step must be a Variable (see mf.train.global_step()), got a "
           .. "closed mf.Variable")
  T.raises(function() opt:apply_gradients({}, {global_step = 3}) end,
           "apply_gradients: global_step must be a Variable (see mf.train.global_step()), got "
           .. "number")
end)

T.test("exponential_decay says what it expected and what it got", function()
  local v = mf.Variable(3, {dtype = "int64"})
  close(v)
  T.raises(function() mf.train.exponential_decay(0.1, v, 10, 0.5) end,
           "exponential_decay: global_step must be a Variable, tensor or number, got a closed "
           .. "mf.Variable")
  local t = mf.tensor(0.1)
  close(t)
  T.raises(function() mf.train.exponential_decay(t, 1, 10, 0.5) end,
           "exponential_decay: learning_rate must be a number or a scalar tensor, got a closed "
           .. "mf.Tensor")
  local w = mf.Variable(0.1)
  close(w)
  T.raises(function() mf.train.exponential_decay(w, 1, 10, 0.5) end,
           "learning_rate must be a number or a scalar tensor, got a closed mf.Variable")
  T.raises(function() mf.train.exponential_decay(0.1, "x", 10, 0.5) end,
           "global_step must be a Variable, tensor or number, got string")
  T.raises(function() mf.train.exponential_decay(0.1, mf.train.GradientDescentOptimizer(1), 10,
                                                 0.5) end,
           "global_step must be a Variable, tensor or number, got mf.train.Optimizer")
  T.raises(function() mf.train.exponential_decay(0.1, mf.tensor({1, 2}), 10, 0.5) end,
           "exponential_decay: global_step must be a scalar number, got a float32 tensor of rank 1")
  T.raises(function() mf.train.exponential_decay(0.1, 1, 0, 0.5) end,
           "exponential_decay: decay_steps must be > 0, got 0")
end)

T.test("exponential_decay after its step is closed names the closed step", function()
  local step = mf.Variable(10, {dtype = "int64"})
  local rate = mf.train.exponential_decay(0.1, step, 10, 0.5)
  T.eq(rate(), 0.05, 1e-7)
  local opt = mf.train.GradientDescentOptimizer(rate)
  close(step)
  local want = "exponential_decay: global_step is a closed mf.Variable (closed after the "
               .. "schedule was made)"
  T.raises(rate, want)
  local x = mf.Variable(1.0)
  T.raises(function() opt:minimize(function() return x * x end) end, want)
  T.eq(x:read_value(), 1, nil, "nothing was applied")
  local lr = mf.tensor(0.2)
  local rate2 = mf.train.exponential_decay(lr, 0, 10, 0.5)
  close(lr)
  T.raises(rate2, "exponential_decay: learning_rate is a closed mf.Tensor")
end)

T.done()
