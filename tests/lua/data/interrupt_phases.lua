-- interrupt_phases.lua — the child of test_interrupt_signals.lua: a
-- training-like script that catches Ctrl-C with pcall and saves a
-- checkpoint, as a user's script does. Run as
--   moonflow interrupt_phases.lua PHASE CHECKPOINT
-- Inside a pcall it writes "RUNNING" to stderr, then loops in PHASE until
-- interrupted; the parent sends SIGINT at a random moment. After the pcall it writes
-- "CAUGHT <first line of the error>", checks that no state is left behind
-- (eager mode, no tape recording, graphs still build, the traced function
-- still runs) and writes "STATE ...", then saves and reloads the
-- checkpoint ("SAVED <value>") and ends with "DONE".
local phase, ckpt = ...

local w = mf.Variable(mf.ones{64, 64})
local a = mf.random.normal({64, 64}, {seed = 1})

-- a traced function, traced on its first call inside the loop (so an early
-- Ctrl-C lands in the tracing)
local step = mf.trace(function(x)
  local y = x
  for _ = 1, 8 do y = mf.tanh(mf.matmul(y, w)) end
  return mf.reduce_sum(y)
end)

local function fit(trace)
  local x = mf.random.normal({256, 32}, {seed = 2})
  local y = mf.random.normal({256, 1}, {seed = 3})
  local ds = mf.data.Dataset.from_tensor_slices{x, y}:batch(32)
  local m = mf.layers.Sequential{mf.layers.Dense(128, {activation = "relu"}),
                                 mf.layers.Dense(128, {activation = "relu"}), mf.layers.Dense(1)}
  m:fit(ds, {loss = "mean_squared_error", epochs = 1e9, verbose = 0, trace = trace})
end

local phases = {
  traced = function() while true do step(a) end end,
  fit = function() fit(true) end,
  fit_eager = function() fit(false) end,
  -- plain Lua in a coroutine: only a hook on the coroutine can stop it
  coroutine = function()
    local n = 0
    coroutine.wrap(function() while true do n = n + 1 end end)()
  end,
  -- a generator resumed by hand: resume returns the interrupt as an error
  resume = function()
    local gen = coroutine.create(function()
      while true do coroutine.yield(mf.matmul(a, a)) end
    end)
    while true do
      local ok, err = coroutine.resume(gen)
      if not ok then error(err, 0) end
    end
  end,
  -- traced calls and training in a coroutine in a coroutine
  nested = function()
    coroutine.wrap(function()
      coroutine.wrap(function()
        local n = 0
        while true do n = n + 1; if n % 1000 == 0 then step(a) end end
      end)()
    end)()
  end,
}

local function eager()
  local ok, v = pcall(function() return (mf.ones{2} + 1):totable()[1] end)
  return ok and v == 2
end

local function graphs_build()
  local g, sym = mf.Graph(), nil
  g:as_default(function() sym = mf.ones{2} + 1 end)
  return not pcall(function() return sym:totable() end)
end

local function no_tape()   -- under a recording tape a traced function runs inline
  local f = mf.trace(function(x) return x * 2 end)
  f(mf.ones{2})
  return f:trace_count() == 1
end

local ok, err = pcall(function()
  io.stderr:write("RUNNING\n")   -- inside the pcall: a signal right after it is caught
  phases[phase]()
end)
io.stderr:write("CAUGHT ", tostring(ok), " ", (tostring(err):gsub("\n.*", "")), "\n")
local y = mf.ones{1, 64}
for _ = 1, 8 do y = mf.tanh(mf.matmul(y, w)) end
local want = mf.reduce_sum(y):item()
local got = step(mf.ones{1, 64}):item()
io.stderr:write(string.format("STATE eager=%s graph=%s tape=%s traced=%s\n", eager(),
                              graphs_build(), no_tape(), math.abs(got - want) < 1e-3))
mf.save(ckpt, {w = w:read_value()})
io.stderr:write("SAVED ", mf.load(ckpt).w[1][1], "\n")
io.stderr:write("DONE\n")
