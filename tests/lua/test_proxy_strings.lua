-- test_proxy_strings.lua — strings a binding reads through a metamethod
-- (issue #35 M3). A proxy table's __index makes a new string per read that
-- nothing else holds; the binding must keep it until it is done with it.
-- Here each read also collects, so a string the binding let go is freed and
-- its memory handed to the next one: in release the old binaries read every
-- selected column as the last name and labelled every series alike; under
-- make check (no small-object free lists) it is a heap-use-after-free.
local T = dofile("tests/lua/harness.lua")

-- Names longer than 40 bytes: Lua interns shorter strings, so a short name
-- that a literal still holds would stay alive; a long string made by the
-- proxy is held by nobody but the caller.
local LONG = ("_"):rep(40)

-- A read-only array proxy over 'names': each read collects, then returns
-- a new long string (name .. LONG).
local function proxy(names)
  return setmetatable({}, {
    __index = function(_, k)
      collectgarbage()
      local filler = {}   -- takes the memory a freed name had
      for i = 1, 20 do filler[i] = ("y"):rep(48) .. i end
      return names[k] and names[k] .. LONG
    end,
    __len = function() return #names end})
end

local function write_file(text)
  local name = os.tmpname()
  local f = assert(io.open(name, "w"))
  f:write(text)
  f:close()
  return name
end

T.test("read_csv{columns = proxy}: each name selects its own column", function()
  local path = write_file(("alpha%s,beta%s,gamma%s\n1,2,3\n4,5,6\n"):format(LONG, LONG, LONG))
  local t = mf.data.read_csv(path, {columns = proxy{"gamma", "alpha", "beta"}})
  T.eq(t, {{3, 1, 2}, {6, 4, 5}})
  os.remove(path)
end)

T.test("plot{labels = proxy}: each series keeps its label", function()
  local text = mf.plot({{1, 2, 3}, {3, 2, 1}, {2, 2, 2}},
                       {labels = proxy{"first", "second", "third"}, width = 120,
                        print = false, color = false})
  for _, want in ipairs{"first", "second", "third"} do
    T.ok(text:find(want .. LONG, 1, true), "legend lacks " .. want .. ":\n" .. text)
  end
end)

T.test("graph mode constant{name = proxy}: the node has the name given", function()
  local g = mf.Graph()
  local c
  g:as_default(function()
    local opts = setmetatable({}, {__index = function(_, k)
      collectgarbage()
      if k == "name" then return "my_constant" .. LONG end
      local filler = {}   -- takes the memory a freed name had
      for i = 1, 50 do filler[i] = ("x"):rep(50) .. i end
    end})
    c = mf.constant({1, 2}, opts)
  end)
  T.eq(c.name, "my_constant" .. LONG .. ":0")
end)

T.done()
