-- test_reduce_any_all.lua — mf.reduce_any / mf.reduce_all: values against
-- PyTorch (torch.any / torch.all on the same data, printed by
-- /usr/bin/python3), axes (1-based, lists, negative), keepdims, empty
-- reductions, strided views, graph mode with an unknown batch dim, no
-- gradient, and errors naming the function.
local T = dofile("tests/lua/harness.lua")

local b = mf.tensor({{1, 0, 1}, {1, 1, 1}}):greater(0)
local b3 = mf.tensor({{{1, 0}, {0, 0}}, {{1, 1}, {1, 0}}}):greater(0)

T.test("values against torch.any / torch.all", function()
  T.eq(mf.reduce_any(b, 2), {true, true})
  T.eq(mf.reduce_all(b, 2), {false, true})
  T.eq(mf.reduce_all(b, 1), {true, false, true})
  T.eq(b:reduce_any(), true)
  T.eq(mf.reduce_all(b), false)
  T.eq(mf.reduce_any(b3, {1, 3}), {true, true})
  T.eq(mf.reduce_all(b3, -1, true), {{{false}, {false}}, {{true}, {false}}})
  T.eq(mf.reduce_all(b3, {axis = 3, keepdims = true}), {{{false}, {false}}, {{true}, {false}}})
  T.eq(mf.reduce_all(b3, {axis = 3, keep_dims = true}), {{{false}, {false}}, {{true}, {false}}})
  T.eq(mf.reduce_all(mf.transpose(b), 2), {true, false, true})   -- a strided view
end)

T.test("empty reductions: any is false, all is true (torch)", function()
  local e = mf.zeros({0, 3}):greater(0)
  T.eq(mf.reduce_any(e, 1), {false, false, false})
  T.eq(mf.reduce_all(e, 1), {true, true, true})
end)

T.test("graph mode with an unknown batch dim", function()
  local g = mf.Graph()
  local p, any, all
  g:as_default(function()
    p = mf.placeholder("bool", {-1, 3})
    any = mf.reduce_any(p, 2)
    all = mf.reduce_all(p, 1, true)
  end)
  local a1, a2 = table.unpack(mf.Session(g):run({any, all}, {[p] = b}))
  T.eq(a1, {true, true})
  T.eq(a2, {{true, false, true}})
end)

T.test("no gradient flows through them (only through the product with x)", function()
  local x = mf.tensor({1, -1}, "float64")
  local tape = mf.GradientTape()
  tape:watch(x)
  local y = mf.reduce_sum(mf.cast(mf.reduce_any(x:greater(0)), "float64") * x)
  T.eq(tape:gradient(y, x), {1, 1})
end)

T.test("errors name the function", function()
  T.raises(mf.reduce_any, "reduce_any: expected bool", mf.tensor{1, 2})
  T.raises(mf.reduce_all, "reduce_all: axis 3 out of range for rank 2", b, 3)
  T.raises(mf.reduce_all, "reduce_all: axis 1 is listed twice", b, {1, 1})
  T.raises(mf.reduce_any, "reduce_any: unknown option 'axes'", b, {axes = 1})
  T.raises(mf.reduce_any, "bad argument #4 to 'reduce_any' (no value expected", b, 1, true, 2)
end)

T.done()
