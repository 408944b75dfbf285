-- test_type_tag.lua — debug.setmetatable cannot make another userdata pass
-- for a tensor or a Variable (issue #13, item 9): the boxes carry a type tag
-- and their size is checked, not only their metatable. Before, a file
-- handle given the tensor metatable was read as a tensor (UBSan: signed
-- overflow in the add kernel on its bytes; a crash or a wild free at __gc).
local T = dofile("tests/lua/harness.lua")

T.test("a forged tensor or Variable metatable is refused, and collecting it frees nothing", function()
  local tmt = getmetatable(mf.ones{1})
  local vmt = getmetatable(mf.Variable(mf.ones{1}))
  local f = io.tmpfile()
  debug.setmetatable(f, tmt)
  T.raises(mf.add, "mf.Tensor expected", f, 1)
  T.raises(function() return f + 1 end, "mf.Tensor expected")
  local g = io.tmpfile()
  debug.setmetatable(g, vmt)
  T.raises(mf.add, "mf.Tensor expected", g, 1)
  T.raises(function() return g:assign(mf.ones{1}) end, "Variable")
  f, g = nil, nil
  collectgarbage(); collectgarbage()
  T.eq(mf.ones{2} + 1, {2, 2})
end)

T.done()
