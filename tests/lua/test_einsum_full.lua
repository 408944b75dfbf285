-- test_einsum_full.lua — mf.einsum's full NumPy form (issue #28): several batch
-- letters, '...' with broadcasting, size-1 letters broadcast, repeated letters in
-- one operand (diagonals, traces), lone letters summed, implicit outputs with
-- '...', scalars, empty axes and more than two operands (opt_einsum's greedy
-- pairwise order). Values against numpy.einsum 1.24 live (/usr/bin/python3, on
-- the same float64 data) for fixed forms and 60 random equations; gradients by
-- float64 gradchecks; graph mode and mf.trace equal eager; NumPy's errors.
local T = dofile("tests/lua/harness.lua")

local np = dofile("tests/lua/numpy_live.lua")

-- np.einsum of every case {eq, shape1, shape2, ...} on the tensors 'xs' (xs[i][k]).
local function numpy_einsum(cases, xs)
  local tensors, args = {}, {}
  for i, c in ipairs(cases) do
    for k = 1, #c - 1 do tensors[string.format("x%d_%d", i, k)] = xs[i][k] end
    args[i] = string.format("%d=%s=%d", i, c[1], #c - 1)
  end
  return np.run([[
for case in ARG.split(";"):
    i, eq, n = case.split("=")
    res["e" + i] = np.einsum(eq, *[src["x%s_%d" % (i, k)] for k in range(1, int(n) + 1)])
]], tensors, table.concat(args, ";"))
end

local seed = 0
local function operands(c)
  local xs = {}
  for k = 2, #c do
    seed = seed + 1
    xs[k - 1] = mf.random.normal(c[k], {dtype = "float64", seed = seed})
  end
  return xs
end

-- {equation, shapes...}: every form the issue names
local FORMS = {
  {"abc,bad->abcd", {2, 3, 4}, {3, 2, 5}},              -- several batch letters
  {"ijkm,ijln->ijmn", {2, 3, 4, 5}, {2, 3, 4, 6}},
  {"...ij,...jk->...ik", {2, 1, 3, 4}, {5, 4, 2}},      -- '...' broadcast (2,1) with (5)
  {"...ij,jk", {3, 2, 4}, {4, 2}},                      -- implicit: '...' first
  {"ij...,jk...->ik...", {2, 3, 4}, {3, 5, 1}},         -- '...' last, size 1 stretched
  {"...,...->...", {2, 1}, {3}},
  {"...i->...", {2, 3, 4}},
  {"i...->i", {3}},                                     -- an empty '...'
  {"...ii->...i", {2, 3, 3}},                           -- batched diagonal
  {"ii->i", {4, 4}},                                    -- diagonal
  {"ii", {3, 3}},                                       -- trace (implicit)
  {"iij->ij", {3, 3, 2}},
  {"iii->i", {3, 3, 3}},
  {"ijji->ij", {2, 3, 3, 2}},
  {"bii,bi->b", {2, 3, 3}, {2, 3}},
  {"ij,ij->ij", {1, 3}, {2, 3}},                        -- size-1 letters broadcast
  {"ij,jk->ik", {2, 1}, {3, 4}},
  {"bij,bjk->bik", {1, 2, 3}, {4, 3, 2}},
  {"ijk,jl->il", {2, 3, 4}, {3, 5}},                    -- k summed first
  {"ij,kl->", {2, 3}, {4, 5}},
  {"ba", {2, 3}},                                       -- implicit order
  {"Ba,bA", {2, 3}, {4, 5}},                            -- upper case before lower case
  {",ij->ij", {}, {2, 3}},                              -- a scalar operand
  {"->", {}},
  {"ij,jk->ik", {0, 3}, {3, 2}},                        -- empty axes
  {"ii->i", {0, 0}},
  {"ij,jk,kl->il", {2, 3}, {3, 4}, {4, 5}},             -- more than two operands
  {"i,i,i->", {4}, {4}, {4}},
  {"ab,bc,cd,de->ae", {2, 3}, {3, 4}, {4, 5}, {5, 2}},
  {"ij,jk,ki->", {3, 4}, {4, 5}, {5, 3}},
  {"i,j,k->ijk", {2}, {3}, {4}},                        -- outer products only
  {"bij,bjk,bkl->bil", {2, 3, 4}, {2, 4, 5}, {2, 5, 3}},
  {"ea,fb,abcd,gc,hd->efgh", {2, 3}, {2, 4}, {3, 4, 5, 2}, {2, 5}, {2, 2}},  -- opt_einsum's
  {"...ij,...jk,...kl", {2, 1, 3, 4}, {3, 4, 2}, {2, 5}},
  {"ii,ij,jj->j", {3, 3}, {3, 3}, {3, 3}},
}

-- Random equations: 1 to 4 operands over letters a-f (repeats allowed), a
-- random '...' of up to 2 axes (some of size 1), sizes 1 to 3, the output
-- a random subset of the letters (or implicit).
local function random_case(r)
  local size = {}
  for i = 1, 6 do size[string.char(96 + i)] = r(1, 3) end
  local n, use_ell = r(1, 4), r(1, 3) == 1
  local c, seen, terms = {}, {}, {}
  for k = 1, n do
    local term, shape = {}, {}
    if use_ell then   -- the '...' axis q from the right has size q + 1, or 1
      local e = r(0, 2)
      for d = 1, e do shape[#shape + 1] = r(1, 2) == 1 and 1 or e - d + 2 end
      term[1] = "..."
    end
    for _ = 1, r(0, 3) do
      local ch = string.char(96 + r(1, 6))
      term[#term + 1] = ch
      shape[#shape + 1] = size[ch]
      seen[ch] = true
    end
    terms[k], c[k + 1] = table.concat(term), shape
  end
  local eq = table.concat(terms, ",")
  if r(1, 4) > 1 then
    local out = {}
    for ch in pairs(seen) do if r(1, 2) == 1 then out[#out + 1] = ch end end
    table.sort(out, function(p, q) return p > q end)
    eq = eq .. "->" .. (use_ell and "..." or "") .. table.concat(out)
  end
  c[1] = eq
  return c
end

-- mf.einsum of every case equals np.einsum on the same random operands.
local function check_against_numpy(cases)
  if not np.available then print("skipped: no numpy for /usr/bin/python3") return end
  local xs = {}
  for i, c in ipairs(cases) do xs[i] = operands(c) end
  local want = numpy_einsum(cases, xs)
  for i, c in ipairs(cases) do
    local y = mf.einsum(c[1], table.unpack(xs[i]))
    T.eq(y.shape, want["e" .. i].shape, nil, c[1] .. " shape")
    T.eq(y, want["e" .. i], 1e-12, c[1])
  end
end

T.test("every form against numpy.einsum", function() check_against_numpy(FORMS) end)

T.test("60 random equations against numpy.einsum", function()
  math.randomseed(28)
  local cases = {}
  for i = 1, 60 do cases[i] = random_case(math.random) end
  check_against_numpy(cases)
end)

T.test("gradchecks of every form with a gradient", function()
  for _, c in ipairs(FORMS) do
    local xs = operands(c)
    local empty = false
    for _, x in ipairs(xs) do
      for _, d in ipairs(x.shape) do empty = empty or d == 0 end
    end
    if not empty then
      local w = mf.random.normal(mf.einsum(c[1], table.unpack(xs)).shape,
                                 {dtype = "float64", seed = 7})
      T.ok(mf.test.gradcheck(function(...)
        return mf.reduce_sum(mf.einsum(c[1], ...) * w)
      end, xs), c[1])
    end
  end
end)

T.test("greedy order: a chain is multiplied pairwise, cheapest product first", function()
  -- opt_einsum's greedy path for ab,bc,cd with a = 10, b = 2, c = 10, d = 2: (bc,cd) first
  -- (cost 2*2 - 20 - 20 = -36 beats ab,bc's 10*10 - 20 - 20 = 60), then (ab,bd)
  local g = mf.Graph()
  g:as_default(function()
    mf.einsum("ab,bc,cd->ad", mf.placeholder("float64", {10, 2}),
              mf.placeholder("float64", {2, 10}), mf.placeholder("float64", {10, 2}))
  end)
  local shapes = {}
  for _, n in ipairs(g:nodes()) do
    if n.op == "MatMul" or n.op == "BatchMatMulV2" then
      shapes[#shapes + 1] = table.concat(n.outputs[1].shape, "x")
    end
  end
  T.eq(shapes, {"2x2", "10x2"})
end)

T.test("graph mode and mf.trace equal eager, values and gradients", function()
  local cases = {FORMS[3], FORMS[9], FORMS[15], FORMS[17], FORMS[33]}
  for _, c in ipairs(cases) do
    local xs = operands(c)
    local function loss(...) return mf.reduce_sum(mf.square(mf.einsum(c[1], ...))) end
    local want = {mf.grad(loss)(table.unpack(xs))}
    local traced = mf.trace(function(...) return mf.grad(loss)(...) end)
    local got = {traced(table.unpack(xs))}
    for k = 1, #xs do T.eq(got[k], want[k]:totable(), 0, c[1] .. " traced") end
    local g, ps, ys = mf.Graph(), {}, nil
    g:as_default(function()
      for k, x in ipairs(xs) do ps[k] = mf.placeholder("float64", x.shape) end
      ys = mf.gradients(loss(table.unpack(ps)), ps)
    end)
    local feed = {}
    for k, p in ipairs(ps) do feed[p] = xs[k] end
    local gv = mf.Session(g):run(ys, feed)
    for k = 1, #xs do T.eq(gv[k], want[k]:totable(), 1e-12, c[1] .. " graph") end
  end
end)

T.test("NumPy's errors, named by einsum", function()
  local A = mf.ones({2, 3}, "float64")
  T.raises(mf.einsum, "einsum: index 'i' appears more than once in the output 'ii'", "ij->ii", A)
  T.raises(mf.einsum, "einsum: output index 'k' does not appear in any operand", "ij->k", A)
  T.raises(mf.einsum, "einsum: repeated index 'i' of operand 1 has sizes 2 and 3", "ii->i", A)
  T.raises(mf.einsum, "einsum: operands have broadcast axes ('...') but the output of "
           .. "'...ij->ij' has no '...'", "...ij->ij", mf.ones({5, 2, 3}, "float64"))
  T.raises(mf.einsum, "einsum: operand 1 has rank 3 but its term 'ij' names 2 axes", "ij",
           mf.ones({2, 3, 4}))
  T.raises(mf.einsum, "einsum: operand 1 has rank 2 but its term 'ijk' names 3 axes", "ijk", A)
  T.raises(mf.einsum, "einsum: operand 1 has rank 2 but its term 'ijk...' names 3 axes besides "
           .. "'...'", "ijk...", A)
  T.raises(mf.einsum, "einsum: index 'j' has size 3 in operand 1 and 4 in operand 2",
           "ij,jk->ik", A, mf.ones({4, 5}, "float64"))
  T.raises(mf.einsum, "einsum: '...' axis 1 from the right has size 3 in operand 1 and 2",
           "...,...", A, mf.ones({2}, "float64"))
  T.raises(mf.einsum, "einsum: operand term 'i.j' has a '.' that is not part of an ellipsis",
           "i.j->ij", A)
  T.raises(mf.einsum, "einsum: operand term '......' has more than one ellipsis", "......->", A)
  T.raises(mf.einsum, "einsum: unexpected character '1' in operand term 'i1'", "i1->i", A)
  T.raises(mf.einsum, "einsum: equation 'ij,jk' names 2 operands, got 1 tensor", "ij,jk", A)
  T.raises(mf.einsum, "einsum: equation 'ij->i->j' has more than one '->'", "ij->i->j", A)
  T.raises(mf.einsum, "einsum: expected an equation and tensors, got no tensor", "ij")
  T.raises(mf.einsum, "einsum: operands differ in dtype: float64 and float32", "i,i,i->",
           mf.ones({2}, "float64"), mf.ones({2}, "float64"), mf.ones({2}))
  local g = mf.Graph()
  g:as_default(function()
    T.raises(mf.einsum, "einsum: repeated index 'i' of operand 1 needs a known size", "ii->i",
             mf.placeholder("float64", {-1, -1}))
  end)
end)

np.cleanup()
T.done()
