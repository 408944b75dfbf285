-- test_graph_names.lua — a bad graph node name ('' or with ':', or too
-- long) is reported naming the function the user called, by every entry
-- point that takes a name, and leaves the graph unchanged.
local T = dofile("tests/lua/harness.lua")

local EXPECT = "(expected a non-empty name without ':')"

-- Builds in a fresh graph: fn(g) runs inside g:as_default.
local function in_graph(fn)
  local g = mf.Graph()
  return g:as_default(function() return fn(g) end)
end

local function count(g) return #g:nodes() end

T.test("placeholder names the function", function()
  in_graph(function(g)
    T.raises(function() mf.placeholder("float32", {2}, "") end,
             "placeholder: invalid node name '' " .. EXPECT)
    T.raises(function() mf.placeholder("float32", {2}, "x:0") end,
             "placeholder: invalid node name 'x:0' " .. EXPECT)
    T.eq(count(g), 0, nil, "no node is left behind")
    T.eq(mf.placeholder("float32", {2}, "layer/x").name, "layer/x:0")
  end)
end)

T.test("constant{name=} names the function", function()
  in_graph(function(g)
    T.raises(function() mf.constant(1, {name = ""}) end,
             "constant: invalid node name '' " .. EXPECT)
    T.raises(function() mf.constant({1, 2}, {name = "c:1"}) end,
             "constant: invalid node name 'c:1' " .. EXPECT)
    T.eq(count(g), 0)
    T.eq(mf.constant(1, {name = "c"}).name, "c:0")
  end)
end)

T.test("graph-mode Variable names the function", function()
  in_graph(function(g)
    T.raises(function() mf.Variable(1, {name = ""}) end,
             "Variable: invalid node name '' " .. EXPECT)
    T.raises(function() mf.Variable(mf.zeros({2}), {name = "w:0"}) end,
             "Variable: invalid node name 'w:0' " .. EXPECT)
    T.eq(count(g), 0, nil, "neither the variable nor its initial value is added")
    T.eq(#mf.global_variables(), 0)
    T.eq(mf.Variable(1, {name = "w"}).name, "w")
  end)
end)

T.test("group and variables_initializer name the function", function()
  in_graph(function(g)
    local v = mf.Variable(1, {name = "v"})
    local n = count(g)
    T.raises(function() mf.group({v}, "") end, "group: invalid node name '' " .. EXPECT)
    T.raises(function() mf.group({v}, "a:b") end, "group: invalid node name 'a:b' " .. EXPECT)
    T.raises(function() mf.variables_initializer({v}, "") end,
             "variables_initializer: invalid node name '' " .. EXPECT)
    T.raises(function() mf.variables_initializer({v}, "init:0") end,
             "variables_initializer: invalid node name 'init:0' " .. EXPECT)
    T.eq(count(g), n)
    T.eq(mf.group({v}, "all").name, "all")
    T.eq(mf.variables_initializer({v}, "init_v").name, "init_v")
  end)
end)

T.test("name_scope and optimizer names say what they expect", function()
  in_graph(function()
    T.raises(function() mf.name_scope("", print) end,
             "name_scope: invalid scope name '' (expected a non-empty name without ':' or '/')")
    T.raises(function() mf.name_scope("a:b", print) end, "name_scope: invalid scope name 'a:b'")
  end)
  -- the name becomes a scope in graph mode: checked when the optimizer is made
  T.raises(function() mf.train.GradientDescentOptimizer(0.1, {name = "a:b"}) end,
           "GradientDescentOptimizer: invalid name 'a:b' (expected a non-empty name without "
           .. "':' or '/')")
  T.raises(function() mf.train.AdamOptimizer(0.1, {name = "a/b"}) end,
           "AdamOptimizer: invalid name 'a/b'")
  T.raises(function() mf.train.MomentumOptimizer(0.1, 0.9, {name = ""}) end,
           "MomentumOptimizer: invalid name ''")
  T.raises(function() mf.train.RMSPropOptimizer(0.1, {name = 3}) end,
           "RMSPropOptimizer: name must be a non-empty string, got number")
  T.eq(mf.train.AdagradOptimizer(0.1, {name = "Ada"}):get_name(), "Ada")
end)

T.test("a name too long, alone or with its scope, names the function", function()
  in_graph(function(g)
    T.raises(function() mf.placeholder("float32", {}, string.rep("z", 5000)) end,
             "placeholder: node name 'zzzz")
    T.raises(function() mf.placeholder("float32", {}, string.rep("z", 5000)) end,
             "is too long (expected at most 224 characters with the scope, got 5000)")
    T.raises(function() mf.Variable(1, {name = string.rep("v", 300)}) end,
             "Variable: node name 'vvvv")
    -- each part is short enough, together they are not
    T.raises(function()
      mf.name_scope(string.rep("s", 120), function()
        mf.constant(1, {name = string.rep("c", 120)})
      end)
    end, "constant: node name '" .. string.rep("s", 120) .. "/cccc")
    T.eq(count(g), 0)
    local long = string.rep("n", 224)
    T.eq(mf.placeholder("float32", {}, long).name, long .. ":0")
  end)
end)

T.test("a name is checked in graph mode only", function()
  -- eager Variables are no graph nodes: any name is kept as given
  T.eq(mf.Variable(1, {name = "a:b"}).name, "a:b")
end)

T.done()
