-- test_tracebacks.lua — an error inside a function that moonflow calls back
-- (a loss for minimize, f for mf.grad, a traced, profiled or graph-building
-- function, a custom gradient) shows the user's own frames in the traceback,
-- as calling the function directly does; moonflow's own Lua frames
-- (lib/dataset.lua) are not shown.
local T = dofile("tests/lua/harness.lua")
local exe = assert(arg and arg[-1], "run with the moonflow program")

-- The traceback of 'f' failing, as xpcall with debug.traceback gives it.
local function traceback_of(f)
  local ok, tb = xpcall(f, debug.traceback)
  T.ok(not ok, "expected an error")
  return tb
end

-- A user function two frames deep: 'loss' calls 'predict', which fails.
-- Global functions, as a script at the prompt defines them: Lua names a
-- function called from C (here by a binding) only when it is a global.
function predict(x)
  local y = x * 2
  error("bad prediction")
  return y
end
function loss(x)
  local p = predict(x or mf.tensor(1.0))
  return p
end

local function has_user_frames(tb)
  T.ok(tb:find("bad prediction", 1, true), tb)
  T.ok(tb:find("'predict'", 1, true), "no frame of predict in:\n" .. tb)
  T.ok(tb:find("'loss'", 1, true), "no frame of loss in:\n" .. tb)
end

T.test("minimize shows the loss function's frames", function()
  local w = mf.Variable(1.0)
  local opt = mf.train.GradientDescentOptimizer(0.1)
  local tb = traceback_of(function() opt:minimize(function() local l = loss(w); return l end) end)
  has_user_frames(tb)
  T.ok(tb:find("in method 'minimize'", 1, true), tb)
  T.ok(tb:find("in method 'compute_gradients'", 1, true) == nil, tb)
end)

T.test("compute_gradients too", function()
  local opt = mf.train.AdamOptimizer(0.1)
  has_user_frames(traceback_of(function()
    opt:compute_gradients(function() local l = loss(); return l end)
  end))
end)

T.test("mf.grad and mf.value_and_grad", function()
  has_user_frames(traceback_of(function() mf.grad(loss)(mf.tensor(2.0)) end))
  has_user_frames(traceback_of(function() mf.value_and_grad(loss)(mf.tensor(2.0)) end))
end)

T.test("mf.trace, first call and later calls", function()
  local f = mf.trace(function(x) local l = loss(x); return l end)
  has_user_frames(traceback_of(function() f(mf.tensor(2.0)) end))
  local tape = mf.GradientTape()   -- under a tape a traced function runs eagerly
  has_user_frames(traceback_of(function() f(mf.tensor(3.0)) end))
  tape:stop()
end)

T.test("mf.profile", function()
  has_user_frames(traceback_of(function()
    mf.profile(function() local l = loss(); return l end)
  end))
end)

T.test("g:as_default", function()
  local g = mf.Graph()
  has_user_frames(traceback_of(function()
    g:as_default(function() local l = loss(); return l end)
  end))
end)

T.test("custom_gradient: the function and its gradient function", function()
  local f = mf.custom_gradient(function(x) local l = loss(x); return l end)
  has_user_frames(traceback_of(function() f(mf.tensor(1.0)) end))
  local g = mf.custom_gradient(function(x)
    return x * 1, function(dy) local d = loss(dy); return d end
  end)
  local tape = mf.GradientTape()
  local x = mf.tensor(1.0)
  tape:watch(x)
  local y = g(x)
  local tb = traceback_of(function() return tape:gradient(y, x) end)
  has_user_frames(tb)
  T.ok(tb:find("custom_gradient: the gradient function failed", 1, true), tb)
end)

T.test("nested callbacks keep the innermost frames", function()
  local opt = mf.train.GradientDescentOptimizer(0.1)
  local w = mf.Variable(1.0)
  local tb = traceback_of(function()
    opt:minimize(function() return mf.grad(loss)(w) end)
  end)
  has_user_frames(tb)
  T.ok(tb:find("in method 'minimize'", 1, true), tb)
end)

T.test("a stale record is not shown for a later error", function()
  pcall(function() mf.grad(loss)(mf.tensor(2.0)) end)
  local tb = traceback_of(function() error("bad prediction") end)
  T.ok(not tb:find("'predict'", 1, true), "stale frames in:\n" .. tb)
end)

T.test("moonflow's own Lua frames are hidden", function()
  local ds = mf.data.Dataset.from_tensor_slices(mf.ones{4, 2})
  local tb = traceback_of(function() return ds:batch(-1) end)
  T.ok(tb:find("batch size must be a positive integer", 1, true), tb)
  T.ok(not tb:find("dataset.lua", 1, true), "internal frames in:\n" .. tb)
end)

-- What a user running a script sees on standard error.
local function run_script(code)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(code)
  f:close()
  local p = assert(io.popen(exe .. " " .. path .. " 2>&1"))
  local out = p:read("a")
  p:close()
  os.remove(path)
  return out
end

T.test("a script's error through minimize names the user's functions", function()
  local out = run_script([[
local w = mf.Variable(1.0)
function predict(x) return x * w + undefined_table.field end
function loss() local y = predict(2); return y end
mf.train.GradientDescentOptimizer(0.1):minimize(loss)
]])
  T.ok(out:find("attempt to index a nil value (global 'undefined_table')", 1, true), out)
  T.ok(out:find("in function 'predict'", 1, true), out)
  T.ok(out:find("in function 'loss'", 1, true), out)
  T.ok(out:find("in method 'minimize'", 1, true), out)
end)

T.done()
