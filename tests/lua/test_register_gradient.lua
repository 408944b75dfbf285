-- test_register_gradient.lua — mf.ops(), help(mf.add) naming AddV2 and its
-- gradient, mf.RegisterGradient and mf.gradient_override_map in eager mode
-- (tapes, nested tapes, mf.grad) and in graph mode (mf.gradients, mf.trace),
-- checked against hand-computed gradients; the tape listing names values
-- and marks custom and registered gradients.
local T = dofile("tests/lua/harness.lua")

local function help_text(x)
  local lines = {}
  local old = print
  print = function(...) lines[#lines + 1] = table.concat({...}, "\t") end
  local ok, err = pcall(help, x)
  print = old
  assert(ok, err)
  return (table.concat(lines, "\n"):gsub("%s+", " "))   -- help wraps its paragraphs
end

T.test("mf.ops lists the op table", function()
  local ops = mf.ops()
  T.ok(#ops > 50)
  local by = {}
  for _, o in ipairs(ops) do by[o.name] = o end
  T.eq(by.AddV2.api, "add"); T.eq(by.AddV2.inputs, 2); T.eq(by.AddV2.differentiable, true)
  T.eq(by.Square.api, "square"); T.eq(by.ArgMax.differentiable, false)
  T.eq(by.MatMul.attrs[1].name, "transpose_a"); T.eq(by.MatMul.attrs[1].type, "bool")
  T.eq(by.MatMul.attrs[1].default, false)
  T.eq(by.Sum.attrs[1].name, "axis"); T.eq(by.Sum.attrs[1].type, "axes")
  T.eq(by.Sum.attrs[1].positional, true); T.eq(by.Sum.attrs[2].alias, "keep_dims")
  local pad
  for _, a in ipairs(by.Conv2D.attrs) do if a.name == "padding" then pad = a end end
  T.eq(pad.type, "enum"); T.eq(pad.required, true)
  T.eq(table.concat(pad.choices, "|"), "VALID|SAME")
  T.eq(#by.AddV2.attrs, 0)
  local s = tostring(ops)
  T.ok(s:find("AddV2%s+add%s+2%s+yes"), s)
  T.ok(s:find("ops %(%+: or more inputs%)"), s)
end)

T.test("a registered gradient reads the op's attributes (1-based axes)", function()
  local seen
  mf.RegisterGradient("SeeSumAttrs", function(op, dy)
    seen = op.attrs
    return mf.ones_like(op.inputs[1]) * 7
  end)
  local x = mf.tensor{{1, 2}, {3, 4}}
  local t = mf.GradientTape(); t:watch(x)
  local y
  mf.gradient_override_map({Sum = "SeeSumAttrs"}, function()
    y = mf.reduce_sum(x, {axis = 2, keepdims = true})
  end)
  T.eq(t:gradient(y, x):totable()[2][1], 7)
  T.eq(#seen.axis, 1); T.eq(seen.axis[1], 2); T.eq(seen.keepdims, true)
end)

T.test("help(mf.add) names AddV2 and how its gradient is computed", function()
  local text = help_text(mf.add)
  T.ok(text:find("Op: AddV2", 1, true), text)
  T.ok(text:find("summed over the axes it was broadcast along", 1, true), text)
  T.ok(help_text(mf.argmax):find("No gradient: it is not differentiable", 1, true))
  T.ok(help_text(mf.exp):find("Op: Exp", 1, true))
end)

-- d/dx of x^2 is 2x; the registered gradient says 3x (and 5x) so the test
-- sees which one ran.
mf.RegisterGradient("TestTripleSquare", function(op, dy)
  T.eq(op.type, "Square")
  T.eq(op.name, "square")
  T.eq(#op.inputs, 1); T.eq(#op.outputs, 1)
  return dy * 3 * op.inputs[1]
end)
mf.RegisterGradient("TestFiveSquare", function(op, dy) return dy * 5 * op.inputs[1] end)

T.test("eager: the override is used for ops created inside the map only", function()
  local x = mf.tensor{1.0, 2.0}
  local t = mf.GradientTape({persistent = true})
  t:watch(x)
  local y = mf.gradient_override_map({Square = "TestTripleSquare"}, function()
    return mf.square(x)
  end)
  local z = mf.square(x)
  T.eq(t:gradient(mf.reduce_sum(y), x), {3, 6})   -- 3x
  T.eq(t:gradient(mf.reduce_sum(z), x), {2, 4})   -- 2x: created outside
  local w = x ^ 2                                   -- x ^ 2 runs as Square
  T.eq(t:gradient(mf.reduce_sum(w), x), {2, 4})
  local listing = tostring(t)
  T.ok(listing:find("t1 = Square%(watched%)%s+%(2,%) %-> %(2,%)  %[gradient: TestTripleSquare%]"),
       listing)
end)

T.test("eager: maps nest, the innermost wins; mf.grad and second order", function()
  local x = mf.tensor(2.0)
  local f = function(v)
    return mf.gradient_override_map({Square = "TestTripleSquare"}, function()
      local a = mf.square(v)
      local b = mf.gradient_override_map({Square = "TestFiveSquare"}, function()
        return mf.square(v)
      end)
      return a + b
    end)
  end
  T.eq(mf.grad(f)(x), 3 * 2 + 5 * 2)
  -- the registered gradient is written with ops: an outer tape differentiates it
  T.eq(mf.grad(mf.grad(f))(x), 3 + 5)
end)

T.test("graph: mf.gradients uses the override; traced functions too", function()
  local g = mf.Graph()
  local x, dy, dz
  g:as_default(function()
    x = mf.placeholder("float32", {2}, "x")
    local y = mf.gradient_override_map({Square = "TestTripleSquare"}, function()
      return mf.reduce_sum(mf.square(x))
    end)
    local z = mf.reduce_sum(mf.square(x))
    dy = mf.gradients(y, {x})[1]
    dz = mf.gradients(z, {x})[1]
  end)
  local sess = mf.Session(g)
  local r = sess:run({dy = dy, dz = dz}, {[x] = {1, 2}})
  T.eq(r.dy, {3, 6}); T.eq(r.dz, {2, 4})
  local v = mf.Variable({1.0, 2.0})
  local step = mf.trace(function()
    local tape = mf.GradientTape()
    local l = mf.gradient_override_map({Square = "TestFiveSquare"}, function()
      return mf.reduce_sum(mf.square(v))
    end)
    return tape:gradient(l, v)
  end)
  T.eq(step(), {5, 10})
end)

T.test("errors: unknown op type, unknown gradient, twice, bad results", function()
  T.raises(function() mf.gradient_override_map({Sqare = "TestTripleSquare"}, function() end) end,
           "no op type 'Sqare'")
  T.raises(function() mf.gradient_override_map({Square = "Nope"}, function() end) end,
           "no gradient registered as 'Nope'")
  T.raises(function() mf.RegisterGradient("TestTripleSquare", print) end,
           "registered already")
  mf.RegisterGradient("TestBadShape", function(op, dy) return mf.ones{3} end)
  local x = mf.tensor{1.0, 2.0}
  local t = mf.GradientTape(); t:watch(x)
  local y = mf.gradient_override_map({Square = "TestBadShape"}, function() return mf.square(x) end)
  T.raises(function() t:gradient(y, x) end, "gradient 'TestBadShape' (registered for Square)")
  -- an error inside fn leaves no override behind
  pcall(mf.gradient_override_map, {Square = "TestFiveSquare"}, function() error("inside") end)
  local t2 = mf.GradientTape(); t2:watch(x)
  T.eq(t2:gradient(mf.reduce_sum(mf.square(x)), x), {2, 4})
end)

T.test("the tape listing names values and marks custom gradients", function()
  local w = mf.Variable({1.0, 2.0}, {name = "weights"})
  local x = mf.tensor{3.0, 4.0}
  local t = mf.GradientTape({persistent = true})
  local f = mf.custom_gradient(function(a) return a * 1, function(dy) return dy end end)
  local y = mf.reduce_sum(f(x * w + 2))
  local s = tostring(t)
  T.ok(s:find("t1 = Mul%(const, weights%)"), s)
  T.ok(s:find("t2 = AddV2%(t1, 2%)"), s)
  T.ok(s:find("custom_gradient%(t2%).-%[custom_gradient%]"), s)
  T.ok(s:find("= Sum%(t4%)"), s)
  T.ok(y)
end)

T.done()
