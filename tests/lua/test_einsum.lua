-- test_einsum.lua — mf.einsum(eq, a [, b]): values and gradients against
-- PyTorch (torch.einsum on the same data, float64, printed by
-- /usr/bin/python3), implicit outputs (NumPy's rule), the ops it
-- decomposes into (one MatMul/BatchMatMulV2 for matmul-like equations),
-- graph mode with an unknown batch dim, and errors for malformed equations.
local T = dofile("tests/lua/harness.lua")

local A = mf.reshape(mf.range(1, 7, 1, "float64"), {2, 3})
local B = mf.tensor({{1, -1}, {2, 0.5}, {0, 3}}, "float64")
local C = mf.reshape(mf.range(1, 25, 1, "float64"), {2, 3, 4})
local D = mf.reshape(mf.range(1, 25, 1, "float64"), {2, 4, 3}) * 0.5
local E = mf.tensor({{1, 0}, {0, 1}, {2, -1}, {0.5, 0.5}}, "float64")
local v, w = mf.tensor({1, 2, 3}, "float64"), mf.tensor({4, -1, 2}, "float64")

T.test("values against torch.einsum", function()
  T.eq(mf.einsum("ij,jk->ik", A, B), {{5, 9}, {14, 16.5}})
  T.eq(mf.einsum("ij->ji", A), {{1, 4}, {2, 5}, {3, 6}})
  T.eq(mf.einsum("ij->", A), 21)
  T.eq(mf.einsum("ij->j", A), {5, 7, 9})
  T.eq(mf.einsum("i,i->", v, w), 8)
  T.eq(mf.einsum("i,j->ij", v, w), {{4, -1, 2}, {8, -2, 4}, {12, -3, 6}})
  T.eq(mf.einsum("bij,bjk->bik", C, D),
       {{{35, 40, 45}, {79, 92, 105}, {123, 144, 165}},
        {{515, 544, 573}, {655, 692, 729}, {795, 840, 885}}})
  T.eq(mf.einsum("bij,bkj->bik", C, C),
       {{{30, 70, 110}, {70, 174, 278}, {110, 278, 446}},
        {{846, 1078, 1310}, {1078, 1374, 1670}, {1310, 1670, 2030}}})
  T.eq(mf.einsum("ijk->kji", C),
       {{{1, 13}, {5, 17}, {9, 21}}, {{2, 14}, {6, 18}, {10, 22}}, {{3, 15}, {7, 19}, {11, 23}},
        {{4, 16}, {8, 20}, {12, 24}}})
  T.eq(mf.einsum("ij,kj", A, A), {{14, 32}, {32, 77}})      -- implicit output: "ik"
  T.eq(mf.einsum("bij,jk->bik", C, E), {{{9, 1}, {23, 3}, {37, 5}}, {{51, 7}, {65, 9}, {79, 11}}})
  T.eq(mf.einsum("ij,ij->i", A, A * 2), {28, 154})
  T.eq(mf.einsum("bij,bij->b", C, C), {650, 4250})
  T.eq(mf.einsum("ijk,ij->jk", C, A),
       {{53, 58, 63, 68}, {95, 102, 109, 116}, {153, 162, 171, 180}})
  T.eq(mf.einsum(" jk , bij -> kbi ", E, C),
       {{{9, 23, 37}, {51, 65, 79}}, {{1, 3, 5}, {7, 9, 11}}})
  T.eq(mf.einsum("ij,jk->ik", mf.cast(A, "float32"), mf.cast(B, "float32")), {{5, 9}, {14, 16.5}})
end)

T.test("gradients against torch, and gradcheck", function()
  local wt = mf.tensor({{1, 2}, {3, 4}}, "float64")
  local tape = mf.GradientTape()
  tape:watch(A); tape:watch(B)
  local y = mf.reduce_sum(mf.einsum("ij,jk->ik", A, B) * wt)
  local ga, gb = table.unpack(tape:gradient(y, {A, B}))
  T.eq(ga, {{-1, 3, 6}, {-1, 8, 12}})
  T.eq(gb, {{13, 18}, {17, 24}, {21, 30}})
  local gc = mf.grad(function(c)
    local p = mf.einsum("bij,bjk->bik", c, D)
    return mf.reduce_sum(p * p)
  end)(C)
  T.eq(gc, {{{250, 610, 970, 1330}, {578, 1406, 2234, 3062}, {906, 2202, 3498, 4794}},
            {{22906, 27802, 32698, 37594}, {29138, 35366, 41594, 47822},
             {35370, 42930, 50490, 58050}}}, 1e-9)
  local r = mf.tensor({{0.3, -1.2, 0.8}, {1.5, 0.1, -0.7}}, "float64")
  for _, eq in ipairs{"ij,kj->ik", "ij,ij->j", "ij,jk->ki", "ij,k->jik"} do
    T.ok(mf.test.gradcheck(function(a, b)
      return mf.reduce_sum(mf.square(mf.einsum(eq, a, b)))
    end, {r, eq:find("k->jik") and w or (eq == "ij,jk->ki" and B or r * 0.5)}), eq)
  end
end)

T.test("matmul-like equations are one MatMul / BatchMatMulV2", function()
  local g = mf.Graph()
  g:as_default(function()
    mf.einsum("bij,bjk->bik", mf.placeholder("float64", {2, 3, 4}),
              mf.placeholder("float64", {2, 4, 3}))
  end)
  local kinds = {}
  for _, n in ipairs(g:nodes()) do kinds[n.op] = (kinds[n.op] or 0) + 1 end
  T.eq(kinds.BatchMatMulV2, 1)
  T.eq(kinds.Transpose, nil); T.eq(kinds.Reshape, nil)
end)

T.test("graph mode with an unknown batch dim", function()
  local g = mf.Graph()
  local p, y, d
  g:as_default(function()
    p = mf.placeholder("float64", {-1, 3, 4})
    y = mf.einsum("bij,jk->bik", p, E)
    d = mf.gradients(mf.reduce_sum(y * y), {p})[1]
  end)
  T.eq(y.shape, {-1, 3, 2})
  local yv, dv = table.unpack(mf.Session(g):run({y, d}, {[p] = C}))
  T.eq(yv, {{{9, 1}, {23, 3}, {37, 5}}, {{51, 7}, {65, 9}, {79, 11}}})
  T.eq(dv, mf.grad(function(c) local q = mf.einsum("bij,jk->bik", c, E)
                                return mf.reduce_sum(q * q) end)(C))
end)

T.test("errors for malformed equations name einsum", function()
  T.raises(mf.einsum, "einsum: equation 'ij,jk->ik' names 2 operands, got 1 tensor",
           "ij,jk->ik", A)
  T.raises(mf.einsum, "einsum: operand 1 has rank 2 but its term 'ijk' names 3 axes",
           "ijk->i", A)
  T.raises(mf.einsum, "einsum: index 'j' has size 3 in operand 1 and 2 in operand 2",
           "ij,jk->ik", A, A)
  T.raises(mf.einsum, "einsum: output index 'z' does not appear in any operand", "ij->z", A)
  T.raises(mf.einsum, "einsum: index 'i' appears more than once in the output", "ij->ii", A)
  T.raises(mf.einsum, "einsum: unexpected character '1'", "i1->i", A)
  T.raises(mf.einsum, "einsum: equation 'ij->j->i' has more than one '->'", "ij->j->i", A)
  T.raises(mf.einsum, "einsum: bad argument #1 (an equation string", A, A)
  T.raises(mf.einsum, "einsum: expected an equation and tensors", "ij")
  T.raises(mf.einsum, "einsum: operands differ in dtype: float64 and float32", "i,i->", v,
           mf.tensor{1, 2, 3})
  T.raises(mf.einsum, "einsum: bad argument #3 (a tensor expected, got string)", "i,i->", v, "x")
end)

T.done()
