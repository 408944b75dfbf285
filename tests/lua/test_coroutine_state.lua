-- test_coroutine_state.lua — no global state is left behind when Lua code
-- errors inside a coroutine (issue #13, item 6): a traced function that
-- raises while tracing inside a coroutine that is never closed must not
-- leave its graph as the default (every later eager op would be symbolic).
local T = dofile("tests/lua/harness.lua")

local function eager_ok()
  local r = mf.ones{2} + 1
  return r:totable()[1] == 2   -- a symbolic tensor has no values
end

T.test("a traced function erroring inside a coroutine leaves eager mode on", function()
  local f = mf.trace(function(x) error("boom") end)
  local co = coroutine.create(function() return f(mf.ones{2}) end)
  local ok, err = coroutine.resume(co)
  T.ok(not ok and err:find("boom", 1, true), tostring(err))
  T.ok(eager_ok(), "ops after the dead coroutine are still eager")
  -- and one that yields (refused: a trace cannot yield), then is dropped
  local g = mf.trace(function(x) coroutine.yield(1); return x end)
  local co2 = coroutine.create(function() return g(mf.ones{2}) end)
  local ok2, err2 = coroutine.resume(co2)
  T.ok(not ok2 and err2:find("yield", 1, true), tostring(err2))
  T.ok(eager_ok(), "ops after a yield refused inside a trace are still eager")
  -- the traced function still works afterwards
  local h = mf.trace(function(x) return x * 3 end)
  T.eq(h(mf.ones{2}), {3, 3})
end)

T.test("g:as_default erroring inside a coroutine leaves eager mode on", function()
  local g = mf.Graph()
  local co = coroutine.create(function() g:as_default(function() error("boom") end) end)
  T.ok(not coroutine.resume(co))
  T.ok(eager_ok())
end)

T.test("mf.grad's f raising or yielding inside a coroutine leaves no tape recording", function()
  local function no_tape()   -- a traced function traces instead of running inline
    local f = mf.trace(function(x) return x * 2 end)
    T.eq(f(mf.ones{2}), {2, 2})
    T.eq(f:trace_count(), 1)
  end
  local raises = mf.grad(function(x) error("boom") end)
  local co = coroutine.create(function() return raises(mf.tensor{1, 2}) end)
  local ok, err = coroutine.resume(co)
  T.ok(not ok and err:find("boom", 1, true), tostring(err))
  no_tape()
  local df = mf.grad(function(x) coroutine.yield(1); return mf.reduce_sum(x * x) end)
  local co2 = coroutine.create(function() return df(mf.tensor{1, 2}) end)
  local ok2, err2 = coroutine.resume(co2)
  T.ok(not ok2 and err2:find("yield", 1, true), tostring(err2))
  no_tape()
end)

-- coroutine.resume, wrap and close are moonflow's (repl/interrupt.c keeps the
-- chain of running coroutines for Ctrl-C): they behave as Lua 5.4's own.
T.test("coroutine.resume, wrap and close behave as Lua's", function()
  T.raises(coroutine.resume, "bad argument #1 to 'coroutine.resume' (thread expected, got no value)")
  T.raises(coroutine.wrap, "bad argument #1 to 'coroutine.wrap' (function expected, got number)", 1)
  T.raises(coroutine.close, "bad argument #1 to 'coroutine.close' (thread expected, got table)", {})
  local co = coroutine.create(function(a, b) local c, d = coroutine.yield(a + b, nil); return c .. d end)
  T.eq({select("#", coroutine.resume(co, 1, 2)), coroutine.resume(co, "x", "y")}, {3, true, "xy"})
  T.eq({coroutine.resume(co)}, {false, "cannot resume dead coroutine"})
  -- wrap: an error gets the caller's position, a non-string error passes as is
  local line = debug.getinfo(1, "l").currentline + 1
  local w = coroutine.wrap(function() error("boom", 0) end)
  local ok, err = pcall(function() w() end)
  T.eq({ok, err}, {false, "tests/lua/test_coroutine_state.lua:" .. (line + 1) .. ": boom"})
  local obj = {}
  local ok2, err2 = pcall(coroutine.wrap(function() error(obj) end))
  T.ok(not ok2 and err2 == obj)
  -- an error ends a wrapped coroutine: its <close> variables are closed
  local closed = false
  local w2 = coroutine.wrap(function()
    local x <close> = setmetatable({}, {__close = function() closed = true end})
    error("end")
  end)
  T.ok(not pcall(w2) and closed, "the <close> variable of a failed wrap was not closed")
  -- close runs a suspended coroutine's <close> variables, refuses a running one
  local order = {}
  local co2 = coroutine.create(function()
    local x <close> = setmetatable({}, {__close = function() order[#order + 1] = "closed" end})
    coroutine.yield()
  end)
  coroutine.resume(co2)
  T.eq({coroutine.close(co2)}, {true})
  T.eq(order, {"closed"})
  local co3 = coroutine.create(function() return pcall(coroutine.close, coroutine.running()) end)
  T.eq({coroutine.resume(co3)}, {true, false, "cannot close a running coroutine"})
end)

T.done()
