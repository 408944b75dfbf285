-- test_debug_reach.lua — what Lua's debug library may reach (issue #35 M4,
-- repl/lmf_debug.c). Lua code that runs inside a binding (an options
-- table's __index) used debug.setlocal on the binding's C frame to drop the
-- boxes anchoring its operands; after a collection the binding read freed
-- memory (reduce_sum(mf.ones{1000}) gave 7000). C frames now show no slots
-- to getlocal and refuse setlocal; moonflow's user values are out of reach.
local T = dofile("tests/lua/harness.lua")

-- The frame that called the function that calls this one, when it is a C
-- function (the binding running an options __index): {{level as seen from
-- that function, slot count}}, else {}.
local function c_frames()
  local found = {}
  for level = 3, 3 do
    local info = debug.getinfo(level, "S")
    if info and info.what == "C" then
      local n = 0
      while debug.getlocal(level, n + 1) do n = n + 1 end
      found[#found + 1] = {level - 1, n}
    end
  end
  return found
end

T.test("an options __index cannot drop a running op's operands", function()
  local slots = 0
  local opts = setmetatable({}, {__index = function()
    for _, f in ipairs(c_frames()) do
      slots = slots + f[2]
      for i = 1, f[2] do debug.setlocal(f[1], i, nil) end
    end
    collectgarbage(); collectgarbage()
    local junk = {}
    for k = 1, 50 do junk[k] = mf.fill({1000}, 7) end
  end})
  T.eq(mf.reduce_sum(mf.ones{1000}, opts), 1000)
  T.eq(slots, 0, nil, "slots of C frames visible")
end)

T.test("getlocal shows no slot of a C frame; setlocal on one raises", function()
  local ok_level, what, shown
  local getter = setmetatable({}, {__index = function(t, k)   -- luacheck: ignore t k
    -- level 1: this function; level 2: the reduce_sum binding (C)
    what = debug.getinfo(2, "S").what
    shown = select("#", debug.getlocal(2, 1))
    ok_level = debug.getlocal(1, 1) == "t"   -- a Lua frame: its locals as before
  end})
  T.eq(mf.reduce_sum(mf.ones{3}, getter), 3)
  T.eq(what, "C")
  T.eq(shown, 0)
  T.ok(ok_level, "a Lua frame's locals are visible")
  local setter = setmetatable({}, {__index = function() debug.setlocal(2, 1, nil) end})
  T.raises(function() mf.reduce_sum(mf.ones{3}, setter) end,
           "debug.setlocal: level 2 is a C function")
  -- Lua frames keep getlocal and setlocal
  local function locals_work()
    local a = 1
    T.eq(debug.getlocal(1, 1), "a")
    debug.setlocal(1, 1, 5)
    return a
  end
  T.eq(locals_work(), 5)
  -- coroutines: levels counted in the thread, C frames refused too
  local co = coroutine.create(function(x) local y = x + 1; coroutine.yield(y) end)
  coroutine.resume(co, 1)
  T.eq(debug.getlocal(co, 1, 1), "x")
  T.eq(select(2, debug.getlocal(co, 1, 2)), 2)
end)

T.test("debug.getuservalue / setuservalue refuse moonflow's userdata", function()
  local x = mf.ones{2}
  T.raises(debug.getuservalue, "debug.getuservalue: the user values of an mf.Tensor", x, 1)
  T.raises(debug.setuservalue, "debug.setuservalue: the user values of an mf.Tensor", x, {}, 1)
  local w = mf.summary.create_file_writer(os.tmpname() .. ".d")
  T.raises(debug.getuservalue, "mf.SummaryWriter", w, 1)
  w:close()
  -- other userdata keep the standard behaviour
  T.ok(pcall(debug.getuservalue, io.stdout, 1))
end)

T.done()
