-- test_linalg.lua — mf.matmul, transpose, reshape, expand_dims, squeeze, trace, tensordot
-- (functions and methods), against naive Lua loops, and their error messages.
local T = dofile("tests/lua/harness.lua")

-- A rows x cols nested table of small integers (exact in every dtype).
local function mat(rows, cols, seed)
  local m = {}
  for i = 1, rows do
    m[i] = {}
    for j = 1, cols do m[i][j] = ((i * 7 + j * 3 + seed) % 11) - 5 end
  end
  return m
end

local function ttranspose(m)
  local r = {}
  for j = 1, #m[1] do
    r[j] = {}
    for i = 1, #m do r[j][i] = m[i][j] end
  end
  return r
end

local function naive(a, b)
  local c = {}
  for i = 1, #a do
    c[i] = {}
    for j = 1, #b[1] do
      local s = 0
      for k = 1, #b do s = s + a[i][k] * b[k][j] end
      c[i][j] = s
    end
  end
  return c
end

T.test("matmul against a naive loop: shapes, transposes, dtypes", function()
  for _, dt in ipairs{"float32", "float64", "int32", "int64"} do
    for _, s in ipairs{{2, 3, 4}, {1, 1, 1}, {5, 1, 3}, {3, 7, 1}, {9, 20, 13}} do
      local m, n, k = s[1], s[2], s[3]
      local a, b = mat(m, k, 1), mat(k, n, 2)
      local want = naive(a, b)
      T.eq(mf.matmul(mf.tensor(a, dt), mf.tensor(b, dt)), want)
      local at, bt = mf.tensor(ttranspose(a), dt), mf.tensor(ttranspose(b), dt)
      T.eq(mf.matmul(at, bt, {transpose_a = true, transpose_b = true}), want)
      T.eq(mf.matmul(at, mf.tensor(b, dt), {transpose_a = true}), want)
      T.eq(mf.tensor(a, dt):matmul(bt, {transpose_b = true}), want)
      -- transposed views (column-major) and their transposes
      T.eq(mf.matmul(at:transpose(), bt:transpose()), want)
      T.eq(mf.matmul(mf.tensor(a, dt):transpose(), bt:transpose(), {transpose_a = true}), want)
      T.eq(mf.matmul(at:transpose(), bt, {transpose_b = true}).dtype, dt)
    end
  end
end)

T.test("matmul hand-computed and with Lua data", function()
  local a = mf.tensor{{1, 2, 3}, {4, 5, 6}}
  T.eq(a:matmul{{1, 2}, {3, 4}, {5, 6}}, {{22, 28}, {49, 64}})
  T.eq(mf.matmul(a, a, {transpose_b = true}), {{14, 32}, {32, 77}})
  T.eq(mf.matmul(mf.tensor({{2}}, "int64"), mf.tensor({{3}}, "int64")):totable(), {{6}})
end)

T.test("batched matmul and batch broadcasting", function()
  local a = {mat(2, 3, 1), mat(2, 3, 2), mat(2, 3, 3)}
  local b = {mat(3, 4, 4), mat(3, 4, 5), mat(3, 4, 6)}
  local c = mf.matmul(mf.tensor(a), mf.tensor(b))
  T.eq(c.shape, {3, 2, 4})
  T.eq(c, {naive(a[1], b[1]), naive(a[2], b[2]), naive(a[3], b[3])})
  T.eq(mf.matmul(mf.tensor{a[2]}, mf.tensor(b)),
       {naive(a[2], b[1]), naive(a[2], b[2]), naive(a[2], b[3])})
  T.eq(mf.matmul(mf.tensor(a), mf.tensor(b[3])),            -- rank 3 x rank 2
       {naive(a[1], b[3]), naive(a[2], b[3]), naive(a[3], b[3])})
  T.eq(mf.matmul(mf.tensor(b[1]), mf.tensor(b), {transpose_a = true}).shape, {3, 4, 4})
  local bt = mf.transpose(mf.tensor(b), {1, 3, 2})
  T.eq(mf.matmul(mf.tensor(a), bt, {transpose_b = true}), c)
end)

T.test("matmul errors", function()
  local a, b = mf.ones{2, 3}, mf.ones{4, 5}
  T.raises(mf.matmul, "matmul: inner dimensions differ: (2,3) x (4,5)", a, b)
  T.raises(mf.matmul, "(2,3) x (4,5) with transpose_b (3 vs 5)", a, b, {transpose_b = true})
  T.raises(function() return a:matmul(a) end, "matmul: inner dimensions differ: (2,3) x (2,3)")
  T.raises(mf.matmul, "matmul: inner dimensions differ: (1,3) x (2,3) (a vector (rank 1) is a "
           .. "row on the left, a column on the right)", mf.ones{3}, a)
  T.raises(mf.matmul, "matmul: inner dimensions differ: (1,1,2,3) x (2,3)", mf.ones{1, 1, 2, 3}, a)
  T.raises(mf.matmul, "matmul: expected vectors, matrices or batches of matrices (rank 1 or "
           .. "more), got shapes () and (2,3)", mf.tensor(2), a)
  T.raises(mf.matmul, "matmul: batch dimensions differ: (2,2,3) x (3,3,2)",
           mf.ones{2, 2, 3}, mf.ones{3, 3, 2})
  T.raises(mf.matmul, "matmul: dtypes differ: float32 and int32", a, mf.ones({3, 2}, "int32"))
  T.raises(mf.matmul, "matmul: expected a numeric dtype", mf.tensor{{true}}, mf.tensor{{true}})
  T.raises(mf.matmul, "matmul: unknown option 'transpose_c'", a, a, {transpose_c = true})
  T.raises(mf.matmul, "option 'transpose_a' must be a boolean", a, a, {transpose_a = 1})
  T.raises(mf.matmul, "bad argument #2 to 'matmul' (mf.Tensor expected, got nil)", a, nil)
  T.raises(mf.matmul, "bad argument #2 to 'matmul' (mf.Tensor expected, got no value)", a)
  T.raises(mf.matmul, "mf.Tensor, number, boolean or table expected", a, "x")
end)

T.test("transpose", function()
  local t = mf.tensor{{1, 2, 3}, {4, 5, 6}}
  T.eq(mf.transpose(t), {{1, 4}, {2, 5}, {3, 6}})
  T.eq(t:transpose({2, 1}), {{1, 4}, {2, 5}, {3, 6}})
  T.eq(t:transpose{1, 2}, t)
  T.eq(mf.transpose(t, {perm = {-1, 1}}).shape, {3, 2})
  local c = mf.reshape(mf.range(0, 24), {2, 3, 4})
  local p = mf.transpose(c, {2, 3, 1})
  T.eq(p.shape, {3, 4, 2})
  T.eq(p[2][3]:totable(), {c[1][2][3], c[2][2][3]})
  T.eq(mf.transpose(c).shape, {4, 3, 2})
  T.eq(mf.transpose(mf.tensor(5)):item(), 5)
  T.raises(mf.transpose, "transpose: perm has 1 entries but the tensor has rank 2", t, {1})
  T.raises(mf.transpose, "transpose: axis 1 is listed twice", t, {1, 1})
  T.raises(mf.transpose, "transpose: axis 3 out of range for rank 2 (axes are 1-based", t, {3, 1})
  T.raises(mf.transpose, "transpose: unknown option 'axes'", t, {axes = {1, 2}})
  T.raises(mf.transpose, "transpose: perm has 1 entries but the tensor has rank 2", t, 2)
end)

T.test("reshape", function()
  local t = mf.tensor{{1, 2, 3}, {4, 5, 6}}
  T.eq(mf.reshape(t, {3, 2}), {{1, 2}, {3, 4}, {5, 6}})
  T.eq(t:reshape{-1}, {1, 2, 3, 4, 5, 6})
  T.eq(t:reshape{1, -1, 2}.shape, {1, 3, 2})
  T.eq(t:reshape(6).shape, {6})
  T.eq(mf.reshape(mf.tensor{7}, {}).shape, {})
  -- a strided (transposed) input reads in its logical order
  T.eq(t:transpose():reshape{-1}, {1, 4, 2, 5, 3, 6})
  T.eq(t:transpose():reshape{2, 3}, {{1, 4, 2}, {5, 3, 6}})
  T.eq(mf.reshape({1, 2, 3, 4}, {2, 2}), {{1, 2}, {3, 4}})
  T.eq(t:reshape(mf.tensor({3, 2}, "int64")).shape, {3, 2})
  T.raises(mf.reshape, "reshape: cannot reshape a tensor of shape (2,3) (6 elements) into shape "
           .. "(4,2) (8 elements)", t, {4, 2})
  T.raises(mf.reshape, "into shape (4,-1): 6 is not a multiple of 4", t, {4, -1})
  T.raises(mf.reshape, "reshape: only one dimension can be -1", t, {-1, -1})
  T.raises(mf.reshape, "bad argument #2 to 'reshape' (shape expected", t)
  T.raises(mf.reshape, "shape entry 1 must be >= 0", t, {-2, 3})
  T.raises(mf.reshape, "reshape: shape as a tensor must be 1-D int32 or int64", t,
           mf.tensor{3, 2})
end)

T.test("expand_dims and squeeze", function()
  local t = mf.tensor{{1, 2, 3}, {4, 5, 6}}
  T.eq(mf.expand_dims(t, 1).shape, {1, 2, 3})
  T.eq(t:expand_dims(2).shape, {2, 1, 3})
  T.eq(t:expand_dims(3).shape, {2, 3, 1})
  T.eq(t:expand_dims(-1).shape, {2, 3, 1})
  T.eq(t:expand_dims(-3).shape, {1, 2, 3})
  T.eq(t:expand_dims(2), {{{1, 2, 3}}, {{4, 5, 6}}})
  local e = t:expand_dims(1):expand_dims(4)          -- (1,2,3,1)
  T.eq(e:squeeze().shape, {2, 3})
  T.eq(e:squeeze(), t)
  T.eq(mf.squeeze(e, 1).shape, {2, 3, 1})
  T.eq(mf.squeeze(e, {1, -1}).shape, {2, 3})
  T.eq(mf.squeeze(e, {axis = 4}).shape, {1, 2, 3})
  T.eq(mf.squeeze(mf.tensor{{5}}).shape, {})
  T.raises(mf.expand_dims, "expand_dims: axis 4 out of range for rank 2 (axes are 1-based: 1..3",
           t, 4)
  T.raises(mf.expand_dims, "bad argument #2 to 'expand_dims' (axis expected", t)
  T.raises(mf.squeeze, "squeeze: cannot squeeze axis 2 of size 2 (shape (1,2,3,1))", e, 2)
  T.raises(mf.squeeze, "squeeze: axis 5 out of range for rank 4 (axes are 1-based", e, 5)
  T.raises(mf.squeeze, "squeeze: axis 1 is listed twice", e, {1, 1})
  T.raises(mf.squeeze, "squeeze: axis entry 1 must be an integer, got 1.5", e, {1.5})
end)

T.test("trace", function()
  T.eq(mf.trace(mf.tensor{{1, 2}, {3, 4}}):item(), 5)
  T.eq(mf.tensor{{1, 2, 3}, {4, 5, 6}}:trace():item(), 6)
  T.eq(mf.tensor{{1, 2, 3}, {4, 5, 6}}:transpose():trace():item(), 6)
  local i = mf.trace(mf.tensor({{1, 2}, {3, 4}}, "int32"))
  T.eq(i.dtype, "int32")
  T.eq(i.shape, {})
  T.eq(mf.trace({{2, 0}, {0, 3}}):item(), 5)
  T.raises(mf.trace, "trace: expected a matrix (rank 2), got shape (3,) (rank 1)", mf.ones{3})
  T.raises(mf.trace, "trace: expected a numeric dtype", mf.tensor{{true}})
end)

T.test("tensordot", function()
  local a, b = mat(2, 3, 1), mat(3, 4, 2)
  T.eq(mf.tensordot(mf.tensor(a), mf.tensor(b), 1), naive(a, b))
  T.eq(mf.tensordot(mf.tensor(a), mf.tensor(b), {{2}, {1}}), naive(a, b))
  T.eq(mf.tensordot(mf.tensor(a), mf.tensor(a), {2, 2}), naive(a, ttranspose(a)))
  local sq = 0
  for _, row in ipairs(a) do for _, v in ipairs(row) do sq = sq + v * v end end
  T.eq(mf.tensor(a):tensordot(mf.tensor(a), {{1, 2}, {1, 2}}):item(), sq)
  T.eq(mf.tensordot(mf.tensor{1, 2}, mf.tensor{3, 4, 5}, 0), {{3, 4, 5}, {6, 8, 10}})
  -- (2,3,4) . (4,3,5) over a's axes {2,3} and b's {2,1}
  local x = mf.reshape(mf.range(0, 24), {2, 3, 4})
  local y = mf.reshape(mf.range(0, 60), {4, 3, 5})
  local r = mf.tensordot(x, y, {{2, 3}, {2, 1}})
  T.eq(r.shape, {2, 5})
  local s = 0
  for j = 1, 3 do for k = 1, 4 do s = s + x[2][j][k] * y[k][j][5] end end
  T.eq(r[2][5], s)
  T.raises(mf.tensordot, "tensordot: axis 2 of a has size 3 but axis 1 of b has size 2",
           mf.tensor(a), mf.tensor(a), 1)
  T.raises(mf.tensordot, "tensordot: axes = 3, but a has rank 2 and b has rank 2",
           mf.tensor(a), mf.tensor(b), 3)
  T.raises(mf.tensordot, "tensordot: axes = -1, but a has rank 2 and b has rank 2 (it must "
           .. "be 0..2)", mf.tensor(a), mf.tensor(b), -1)
  T.raises(mf.tensordot, "tensordot: axes = 4294967297, but", mf.tensor(a), mf.tensor(b),
           2^32 + 1)
  T.raises(mf.tensordot, "tensordot: axes (a number N) must be an integer, got 1.5",
           mf.tensor(a), mf.tensor(b), 1.5)
  T.raises(mf.tensordot, "tensordot: axis 3 out of range for rank 2 (axes are 1-based",
           mf.tensor(a), mf.tensor(b), {{3}, {1}})
  T.raises(mf.tensordot, "tensordot: axes pair lists 2 axes of a but 1 of b",
           mf.tensor(a), mf.tensor(b), {{1, 2}, {1}})
  T.raises(mf.tensordot, "tensordot: axes must be a number N", mf.tensor(a), mf.tensor(b))
  T.raises(mf.tensordot, "tensordot: axis 1 of a is listed twice",
           mf.tensor(a), mf.tensor(a), {{1, 1}, {1, 2}})
end)

T.test("views share data and stay correct", function()
  local t = mf.tensor{{1, 2, 3}, {4, 5, 6}}
  local v = t:transpose():expand_dims(1):squeeze(1):transpose()
  T.eq(v, t)
  T.eq(mf.matmul(t:transpose():reshape{2, 3}, t:reshape{3, 2}),
       naive({{1, 4, 2}, {5, 3, 6}}, {{1, 2}, {3, 4}, {5, 6}}))
end)

T.done()
