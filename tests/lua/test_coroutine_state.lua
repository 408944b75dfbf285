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

T.done()
