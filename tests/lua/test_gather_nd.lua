-- test_gather_nd.lua — mf.gather_nd / mf.scatter_nd with 1-based index
-- tuples (as mf.gather): TensorFlow's documented examples (positions + 1),
-- values and gradients against PyTorch's advanced indexing / index_put
-- (accumulate) on the same data (float64, printed by /usr/bin/python3),
-- graph mode with an unknown batch dim, and errors naming the function and
-- the index.
local T = dofile("tests/lua/harness.lua")

T.test("gather_nd: TensorFlow's documented examples", function()
  local p = mf.tensor{{1, 2}, {3, 4}}                       -- {{a, b}, {c, d}}
  T.eq(mf.gather_nd(p, {{1, 1}, {2, 2}}), {1, 4})            -- {a, d}
  T.eq(mf.gather_nd(p, {{2}, {1}}), {{3, 4}, {1, 2}})        -- {{c, d}, {a, b}}
  T.eq(mf.gather_nd(p, {{{1, 2}}, {{2, 1}}}), {{2}, {3}})    -- {{b}, {c}}
  T.eq(p:gather_nd({1, 2}), 2)
  local p3 = mf.tensor{{{10, 11}, {12, 13}}, {{20, 21}, {22, 23}}}  -- {{{a0, b0}, {c0, d0}}, ...}
  T.eq(mf.gather_nd(p3, {{1, 2}, {2, 1}}), {{12, 13}, {20, 21}})   -- {{c0, d0}, {a1, b1}}
  T.eq(mf.gather_nd(p3, {{1, 1, 2}, {2, 1, 2}}), {11, 21})         -- {b0, b1}
  T.eq(mf.gather_nd(p, mf.tensor({{2, 2}}, "int32")), {4})
  T.eq(mf.gather_nd(mf.tensor({{1, 2}, {3, 4}}, "int64"), {{2, 1}}), {3})
end)

T.test("scatter_nd: TensorFlow's documented examples", function()
  T.eq(mf.scatter_nd({{5}, {4}, {2}, {8}}, {9, 10, 11, 12}, {8}),
       {0, 11, 0, 10, 9, 0, 0, 12})
  local slab = {{5, 5, 5, 5}, {6, 6, 6, 6}, {7, 7, 7, 7}, {8, 8, 8, 8}}
  local zero = {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}
  T.eq(mf.scatter_nd({{1}, {3}}, {slab, slab}, {4, 4, 4}), {slab, zero, slab, zero})
  T.eq(mf.scatter_nd(mf.tensor({{2}}, "int32"), mf.tensor({7}, "int64"), {3}), {0, 7, 0})
  T.eq(mf.scatter_nd({{2}}, {7}, mf.tensor({3}, "int64")), {0, 7, 0})  -- shape as a tensor
end)

T.test("values and gradients against PyTorch (repeats add up)", function()
  local p = mf.tensor({{1, 2, 3}, {4, 5, 6}}, "float64")
  local idx = {{1, 3}, {2, 1}, {1, 3}}
  T.eq(mf.gather_nd(p, idx), {3, 4, 3})
  local w = mf.tensor({1, 2, 3}, "float64")
  local g = mf.grad(function(t) return mf.reduce_sum(mf.gather_nd(t, idx) * w) end)(p)
  T.eq(g, {{0, 0, 4}, {2, 0, 0}})
  local u = mf.tensor({{1, 2}, {3, 4}, {5, 6}}, "float64")
  local six = {{3}, {1}, {3}}
  T.eq(mf.scatter_nd(six, u, {4, 2}), {{3, 4}, {0, 0}, {6, 8}, {0, 0}})
  local ws = mf.reshape(mf.range(1, 9, 1, "float64"), {4, 2})
  local gu = mf.grad(function(t) return mf.reduce_sum(mf.scatter_nd(six, t, {4, 2}) * ws) end)(u)
  T.eq(gu, {{5, 6}, {1, 2}, {5, 6}})
  T.ok(mf.test.gradcheck(function(t)
    local s = mf.gather_nd(t, idx)
    return mf.reduce_sum(s * s)
  end, {p}))
  T.ok(mf.test.gradcheck(function(t)
    local s = mf.scatter_nd(six, t, {4, 2})
    return mf.reduce_sum(s * s * ws)
  end, {u}))
end)

T.test("graph mode with an unknown batch dim", function()
  local g = mf.Graph()
  local ph, ix, out, d, sc
  g:as_default(function()
    ph = mf.placeholder("float64", {-1, 3})
    ix = mf.placeholder("int64", {-1, 2})
    out = mf.gather_nd(ph, ix)
    d = mf.gradients(mf.reduce_sum(out * out), {ph})[1]
    sc = mf.scatter_nd(ix, out, {2, 3})
  end)
  T.eq(out.shape, {-1})
  local p = mf.tensor({{1, 2, 3}, {4, 5, 6}}, "float64")
  local v, dv, sv = table.unpack(mf.Session(g):run({out, d, sc},
    {[ph] = p, [ix] = mf.tensor({{1, 3}, {2, 1}, {1, 3}}, "int64")}))
  T.eq(v, {3, 4, 3})
  T.eq(dv, {{0, 0, 12}, {8, 0, 0}})
  T.eq(sv, {{0, 0, 6}, {4, 0, 0}})
end)

T.test("errors name the function and the index", function()
  local p = mf.tensor{{1, 2}, {3, 4}}
  T.raises(mf.gather_nd, "gather_nd: index {3, 1} (entry 2 of indices) out of range for params "
           .. "of shape (2,2): position 3 of axis 1 is not in 1..2 (indices are 1-based)",
           p, {{1, 1}, {3, 1}})
  T.raises(mf.gather_nd, "gather_nd: index {1, 0} (entry 1 of indices)", p, {{1, 0}})
  T.raises(mf.scatter_nd, "scatter_nd: index {0} (entry 1 of indices) out of range for an "
           .. "output of shape (3,)", {{0}}, {1}, {3})
  T.raises(mf.gather_nd, "gather_nd: index tuples of length 3 for params of rank 2", p,
           {{1, 1, 1}})
  T.raises(mf.gather_nd, "gather_nd: expected int32 or int64 indices", p,
           mf.tensor{{1, 1}})
  T.raises(mf.gather_nd, "gather_nd: indices must have rank >= 1", p, 1)
  T.raises(mf.scatter_nd, "scatter_nd: updates of shape (3,), expected (2,)", {{1}, {2}},
           {1, 2, 3}, {4})
  T.raises(mf.scatter_nd, "bad argument #3 to 'scatter_nd' (shape expected", {{1}}, {1})
  T.raises(mf.scatter_nd, "scatter_nd: shape entry 1 must be >= 0", {{1}}, {1}, {-2})
  T.raises(mf.gather_nd, "bad argument #3 to 'gather_nd' (no value expected", p, {{1, 1}}, 1)
end)

T.done()
