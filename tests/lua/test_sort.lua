-- test_sort.lua — mf.top_k, mf.sort, mf.argsort: values, 1-based positions
-- and gradients against PyTorch (torch.topk / torch.sort(stable=True) on the
-- same data, float64, printed by /usr/bin/python3; positions + 1), ties
-- (stable), NaN last, graph mode with an unknown batch dim, and errors
-- naming the function.
local T = dofile("tests/lua/harness.lua")

local x = mf.tensor({{3, 1, 4, 1, 5}, {9, 2, 6, 5, 3}}, "float64")

T.test("top_k against torch.topk: values, 1-based int64 positions", function()
  local v, i = mf.top_k(x, 3)
  T.eq(v, {{5, 4, 3}, {9, 6, 5}})
  T.eq(i, {{5, 3, 1}, {1, 3, 4}})
  T.eq(i.dtype, "int64")
  local v2, i2 = x:top_k(1, {sorted = true})
  T.eq(v2, {{5}, {9}}); T.eq(i2, {{5}, {1}})
  local v0 = mf.top_k(x, 0)
  T.eq(v0.shape, {2, 0})
  local _, it = mf.top_k(mf.tensor{2, 1, 2, 1}, 4)  -- ties: the lower position first (TF)
  T.eq(it, {1, 3, 2, 4})
  T.eq(mf.top_k(mf.tensor({7, 9, 8}, "int32"), 2), {9, 8})
  -- a long row (k << n: selection without a full sort), ties keep the lower position
  local long = {}
  for i = 0, 39 do long[i + 1] = (i * 37) % 11 end
  local vl, il = mf.top_k(mf.tensor(long, "float64"), 3)
  T.eq(vl, {10, 10, 10}); T.eq(il, {9, 20, 31})
end)

T.test("sort and argsort against torch.sort(stable=True)", function()
  T.eq(mf.sort(x), {{1, 1, 3, 4, 5}, {2, 3, 5, 6, 9}})
  T.eq(mf.argsort(x), {{2, 4, 1, 3, 5}, {2, 5, 4, 3, 1}})
  T.eq(mf.sort(x, {axis = 1, direction = "DESCENDING"}), {{9, 2, 6, 5, 5}, {3, 1, 4, 1, 3}})
  T.eq(x:sort(1, "descending"), {{9, 2, 6, 5, 5}, {3, 1, 4, 1, 3}})
  T.eq(mf.argsort(mf.tensor{2, 1, 2, 1}), {2, 4, 1, 3})
  T.eq(mf.argsort(mf.tensor{2, 1, 2, 1}, {direction = "DESCENDING"}), {1, 3, 2, 4})
  T.eq(mf.argsort(mf.transpose(x), 1), {{2, 2}, {4, 5}, {1, 4}, {3, 3}, {5, 1}})  -- a view
  local s = mf.sort(mf.tensor({2, 0 / 0, 1}, "float64"))
  T.eq(s:totable()[1], 1); T.eq(s:totable()[2], 2); T.ok(s:totable()[3] ~= s:totable()[3])
  T.eq(mf.argsort(mf.tensor({5, -3, 2}, "int64")), {2, 3, 1})
  T.eq(mf.argsort(mf.tensor({5, -7, math.maxinteger, math.mininteger, 0}, "int64")),
       {4, 2, 5, 1, 3})
end)

T.test("gradients go back to the positions (torch's values)", function()
  local w = mf.tensor({{1, 2, 3}, {4, 5, 6}}, "float64")
  local g = mf.grad(function(t) return mf.reduce_sum(mf.top_k(t, 3) * w) end)(x)
  T.eq(g, {{3, 0, 2, 0, 1}, {4, 0, 5, 6, 0}})
  local ws = mf.reshape(mf.range(1, 11, 1, "float64"), {2, 5})
  local gs = mf.grad(function(t) return mf.reduce_sum(mf.sort(t) * ws) end)(x)
  T.eq(gs, {{3, 1, 4, 2, 5}, {10, 6, 9, 8, 7}})
  local r = mf.tensor({{0.3, -1.2, 0.8, 2.1}, {1.5, 0.1, -0.7, 0.4}}, "float64")
  T.ok(mf.test.gradcheck(function(t) return mf.reduce_sum(mf.top_k(t, 2) * mf.top_k(t, 2)) end,
                         {r}))
  T.ok(mf.test.gradcheck(function(t)
    return mf.reduce_sum(mf.sort(t, 1, "DESCENDING") * mf.range(1, 9, 1, "float64"):reshape{2, 4})
  end, {r}))
end)

T.test("graph mode with an unknown batch dim", function()
  local g = mf.Graph()
  local p, v, i, d, s
  g:as_default(function()
    p = mf.placeholder("float64", {-1, 5})
    v, i = mf.top_k(p, 3)
    s = mf.argsort(p)
    d = mf.gradients(mf.reduce_sum(v * mf.tensor({{1, 2, 3}, {4, 5, 6}}, "float64")), {p})[1]
  end)
  T.eq(v.shape, {-1, 3})
  local vv, ii, ss, dd = table.unpack(mf.Session(g):run({v, i, s, d}, {[p] = x}))
  T.eq(vv, {{5, 4, 3}, {9, 6, 5}}); T.eq(ii, {{5, 3, 1}, {1, 3, 4}})
  T.eq(ss, {{2, 4, 1, 3, 5}, {2, 5, 4, 3, 1}})
  T.eq(dd, {{3, 0, 2, 0, 1}, {4, 0, 5, 6, 0}})
end)

T.test("errors name the function", function()
  T.raises(mf.top_k, "top_k: k = 6 out of range: the last axis has 5 entries", x, 6)
  T.raises(mf.top_k, "top_k: k = -1 out of range", x, -1)
  T.raises(mf.top_k, "bad argument #2 to 'top_k' (k expected", x)
  T.raises(mf.top_k, "top_k: input must have rank >= 1", mf.tensor(1), 1)
  T.raises(mf.top_k, "top_k: unknown option 'largest'", x, 2, {largest = true})
  T.raises(mf.sort, "sort: option 'direction' must be \"ASCENDING\" or \"DESCENDING\"", x,
           {direction = "UP"})
  T.raises(mf.sort, "sort: axis 3 out of range for rank 2", x, 3)
  T.raises(mf.argsort, "argsort: expected a numeric dtype", mf.tensor{true})
  T.raises(mf.argsort, "bad argument #4 to 'argsort' (no value expected", x, 1, "ASCENDING", 1)
end)

T.done()
