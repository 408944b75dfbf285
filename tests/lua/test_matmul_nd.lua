-- test_matmul_nd.lua — mf.matmul of any rank (issue #28): numpy.matmul's
-- broadcasting of the batch axes, vectors on either side, transpose and
-- adjoint flags, views, integers; values and gradients against numpy
-- (/usr/bin/python3, live, on the same float64 data: np.matmul for the
-- values, the products of dy with the other operand summed over the
-- broadcast axes for the gradients), gradchecks, one GEMM for a batch of
-- row-major matrices times one matrix, graph mode with unknown dims, mf.trace.
local T = dofile("tests/lua/harness.lua")

local np = dofile("tests/lua/numpy_live.lua")

-- numpy's side (after numpy_live.lua's prelude): src holds a<i>, b<i>, w<i>
-- and ARG the flags "i:ta:tb"; writes c<i> = matmul(op(a), op(b)) and the
-- gradients of sum(c * w) for a and b.
local numpy_script = [==[
def unbroadcast(g, shape):
    while g.ndim > len(shape):
        g = g.sum(0)
    for i, s in enumerate(shape):
        if s == 1 and g.shape[i] != 1:
            g = g.sum(i, keepdims=True)
    return g

def T(x):
    return np.swapaxes(x, -1, -2)

if ARG.startswith("einsum"):  # einsum:i=eq;...: e<i> = np.einsum(eq, x<i>, y<i>)
    for case in ARG[7:].split(";"):
        i, eq = case.split("=")
        res["e" + i] = np.einsum(eq, src["x" + i], src["y" + i])
for case in ARG.split(",") if not ARG.startswith("einsum") else []:
    i, ta, tb = case.split(":")
    a, b, w = src["a" + i], src["b" + i], src["w" + i]
    oa, ob = (T(a) if ta == "1" else a), (T(b) if tb == "1" else b)
    res["c" + i] = np.matmul(oa, ob)
    # numpy's rule for vectors: a row on the left, a column on the right
    oa2 = oa[None, :] if oa.ndim == 1 else oa
    ob2 = ob[:, None] if ob.ndim == 1 else ob
    w2 = w
    if oa.ndim == 1 and ob.ndim == 1:
        w2 = np.reshape(w, (1, 1))
    elif oa.ndim == 1:
        w2 = np.expand_dims(w, -2)
    elif ob.ndim == 1:
        w2 = np.expand_dims(w, -1)
    da = unbroadcast(np.matmul(w2, T(ob2)), oa2.shape).reshape(oa.shape)
    db = unbroadcast(np.matmul(T(oa2), w2), ob2.shape).reshape(ob.shape)
    res["da" + i] = T(da) if ta == "1" else da
    res["db" + i] = T(db) if tb == "1" else db
]==]

local function run_numpy(tensors, arg)
  return np.run(numpy_script, tensors, arg)
end

-- The matmul cases through numpy.
local function numpy_results(cases)
  local tensors, flags = {}, {}
  for i, c in ipairs(cases) do
    tensors["a" .. i], tensors["b" .. i], tensors["w" .. i] = c.a, c.b, c.w
    flags[i] = string.format("%d:%d:%d", i, c.ta and 1 or 0, c.tb and 1 or 0)
  end
  return run_numpy(tensors, table.concat(flags, ","))
end

-- The stored shape of an operand whose op() has shape 's' (the last two
-- axes swapped when transposed).
local function stored(s, t)
  local r = {table.unpack(s)}
  if t then r[#r - 1], r[#r] = r[#r], r[#r - 1] end
  return r
end

-- The broadcast batch shape numpy gives, for the weights of the loss.
local function out_shape(sa, sb)
  local ra, rb = #sa, #sb
  local a = ra == 1 and {1, sa[1]} or sa
  local b = rb == 1 and {sb[1], 1} or sb
  local na, nb = #a - 2, #b - 2
  local n = math.max(na, nb)
  local r = {}
  for i = 1, n do
    local da = a[na - n + i] or 1
    local db = b[nb - n + i] or 1
    r[i] = da == 1 and db or da
  end
  if ra > 1 then r[#r + 1] = a[#a - 1] end
  if rb > 1 then r[#r + 1] = b[#b] end
  return r
end

local fixed = {
  {{2, 3}, {3, 4}}, {{3}, {3, 4}}, {{2, 3}, {3}}, {{5}, {5}},
  {{2, 4, 3}, {3, 5}},                    -- a batch of matrices times one matrix (one GEMM)
  {{4, 3}, {2, 3, 5}},                    -- one matrix times a batch
  {{2, 3, 4, 5}, {2, 3, 5, 6}},           -- the issue's rank-4 product
  {{2, 1, 3, 4}, {5, 4, 2}},              -- broadcast both ways, ranks 4 and 3
  {{1, 3, 1, 2, 3}, {2, 1, 4, 3, 2}},     -- rank 5
  {{3}, {2, 2, 3, 4}}, {{2, 2, 3, 4}, {4}},
  {{2, 3, 1, 4}, {4, 6}},                 -- M = 1 batches folded into rows
  {{2, 3, 0}, {0, 4}}, {{0, 2, 3}, {3, 4}}, {{2, 0, 3}, {1, 3, 2}},
}

-- Random shapes: up to three batch axes, each operand keeping a tail of
-- them with some sizes 1; sometimes a vector; random transposes.
local function random_case(rng)
  local nbr = rng(0, 3)
  local batch = {}
  for i = 1, nbr do batch[i] = rng(1, 3) end
  local m, k, n = rng(1, 4), rng(1, 4), rng(1, 4)
  local function side(rows, cols)
    local s = {}
    for i = rng(1, nbr + 1), nbr do s[#s + 1] = rng(1, 3) == 1 and 1 or batch[i] end
    s[#s + 1], s[#s + 2] = rows, cols
    return s
  end
  local sa, sb = side(m, k), side(k, n)
  if rng(1, 6) == 1 then sa = {k} end
  if rng(1, 6) == 1 then sb = {k} end
  return sa, sb, #sa > 1 and rng(1, 2) == 1, #sb > 1 and rng(1, 2) == 1
end

local function make_cases()
  mf.random.seed(28)
  math.randomseed(28)
  local cases = {}
  local function add(sa, sb, ta, tb)
    local a = mf.random.normal(stored(sa, ta), {dtype = "float64"})
    local b = mf.random.normal(stored(sb, tb), {dtype = "float64"})
    local w = mf.random.normal(out_shape(sa, sb), {dtype = "float64"})
    cases[#cases + 1] = {a = a, b = b, w = w, ta = ta, tb = tb, sa = sa, sb = sb}
  end
  for _, s in ipairs(fixed) do
    add(s[1], s[2], false, false)
    if #s[1] > 1 and #s[2] > 1 then add(s[1], s[2], true, true) end
  end
  for _ = 1, 60 do add(random_case(math.random)) end
  return cases
end

local function shape_text(s) return "(" .. table.concat(s, ",") .. ")" end

T.test("values and gradients against numpy.matmul, random shapes", function()
  if not np.available then print("skipped: no numpy for /usr/bin/python3") return end
  local cases = make_cases()
  local want = numpy_results(cases)
  for i, c in ipairs(cases) do
    local what = string.format("case %d: %s%s x %s%s", i, shape_text(c.sa), c.ta and "'" or "",
                               shape_text(c.sb), c.tb and "'" or "")
    local tape = mf.GradientTape()
    tape:watch(c.a)
    tape:watch(c.b)
    local y = mf.matmul(c.a, c.b, {transpose_a = c.ta, transpose_b = c.tb})
    local loss = mf.reduce_sum(y * c.w)
    local g = tape:gradient(loss, {c.a, c.b})
    T.eq(y.shape, want["c" .. i].shape, nil, what .. " shape")
    T.eq(y, want["c" .. i], 1e-12, what)
    T.eq(g[1], want["da" .. i], 1e-12, what .. " da")
    T.eq(g[2], want["db" .. i], 1e-12, what .. " db")
  end
end)

T.test("einsum with several batch letters (issue #28's equations) against numpy.einsum", function()
  if not np.available then print("skipped: no numpy for /usr/bin/python3") return end
  local eqs = {
    {"abc,bad->abcd", {2, 3, 4}, {3, 2, 5}},
    {"ijkm,ijln->ijmn", {2, 3, 4, 5}, {2, 3, 4, 6}},
    {"bhqd,bhkd->bhqk", {2, 3, 4, 5}, {2, 3, 6, 5}},
    {"bhqk,bhkd->bqhd", {2, 3, 4, 6}, {2, 3, 6, 5}},
  }
  local tensors, args = {}, {}
  for i, e in ipairs(eqs) do
    tensors["x" .. i] = mf.random.normal(e[2], {dtype = "float64", seed = i})
    tensors["y" .. i] = mf.random.normal(e[3], {dtype = "float64", seed = 100 + i})
    args[i] = i .. "=" .. e[1]
  end
  local want = run_numpy(tensors, "einsum:" .. table.concat(args, ";"))
  for i, e in ipairs(eqs) do
    T.eq(mf.einsum(e[1], tensors["x" .. i], tensors["y" .. i]), want["e" .. i], 1e-12, e[1])
  end
end)

T.test("adjoint_a / adjoint_b are tf.linalg.matmul's names for the transposes", function()
  local a = mf.random.normal({2, 3, 4}, {dtype = "float64", seed = 1})
  local b = mf.random.normal({5, 3}, {dtype = "float64", seed = 2})
  T.eq(mf.matmul(a, b, {adjoint_a = true, adjoint_b = true}),
       mf.matmul(a, b, {transpose_a = true, transpose_b = true}))
end)

T.test("views with any strides, float32 and integers", function()
  -- a transposed and sliced batch (no fold, no copy of the batch axes), a
  -- column-major matrix, each compared with the same product of copies
  local x = mf.random.normal({3, 2, 5, 4}, {seed = 3})
  local xt = mf.transpose(x, {2, 1, 3, 4})                -- (2,3,5,4), batch strides swapped
  local w = mf.random.normal({6, 4}, {seed = 4})
  local want = mf.matmul(xt + 0, mf.transpose(w) + 0)
  T.eq(mf.matmul(xt, mf.transpose(w)), want, 1e-5)
  T.eq(mf.matmul(xt, w, {transpose_b = true}), want, 1e-5)
  local xs = mf.slice(x, {1, 1, 2, 1}, {3, 2, 3, 4})      -- rows 2..4 of every batch
  T.eq(mf.matmul(xs, w, {transpose_b = true}), mf.matmul(xs + 0, w, {transpose_b = true}), 1e-5)
  local ai = mf.cast(mf.random.uniform({2, 1, 3, 4}, {minval = -9, maxval = 9, seed = 5}), "int32")
  local bi = mf.cast(mf.random.uniform({3, 4, 2}, {minval = -9, maxval = 9, seed = 6}), "int32")
  local pf = mf.matmul(mf.cast(ai, "float64"), mf.cast(bi, "float64"))
  T.eq(mf.matmul(ai, bi), pf)
  T.eq(mf.matmul(mf.cast(ai, "int64"), mf.cast(bi, "int64")), pf)
  T.eq(mf.matmul(ai, bi).dtype, "int32")
end)

T.test("a batch of row-major matrices times one matrix is one GEMM", function()
  local prof = mf.profile(function() return mf.matmul(mf.ones{4, 3, 8, 5}, mf.ones{5, 6}) end)
  local g = prof:gemms()
  T.eq(#g, 1)
  T.eq({g[1].M, g[1].N, g[1].K}, {96, 6, 5})
  -- a batched right operand: one GEMM per batch, broadcasting without copies
  prof = mf.profile(function() return mf.matmul(mf.ones{2, 1, 3, 4}, mf.ones{5, 4, 2}) end)
  g = prof:gemms()
  T.eq(#g, 10)
  T.eq({g[1].M, g[1].N, g[1].K}, {3, 2, 4})
end)

T.test("gradchecks in float64 (broadcast batch axes, vectors, transposes)", function()
  local function check(sa, sb, opts)
    local a = mf.random.normal(sa, {dtype = "float64", seed = #sa})
    local b = mf.random.normal(sb, {dtype = "float64", seed = 10 + #sb})
    local ok, msg = mf.test.gradcheck(function(x, y)
      return mf.reduce_sum(mf.sin(mf.matmul(x, y, opts)))
    end, {a, b})
    T.ok(ok, msg)
  end
  check({2, 1, 2, 3}, {3, 3, 2})
  check({3}, {2, 3, 2})
  check({2, 2, 3}, {3})
  check({3}, {3})
  check({2, 3, 2, 4}, {5, 2}, {transpose_a = true, transpose_b = true})
  check({1, 3, 2}, {2, 2, 4, 3}, {adjoint_b = true, adjoint_a = true})
end)

T.test("graph mode with unknown dims, and mf.trace, equal eager", function()
  local a = mf.random.normal({3, 2, 4, 5}, {seed = 7})
  local b = mf.random.normal({2, 5, 6}, {seed = 8})
  local v = mf.random.normal({5}, {seed = 9})
  local eager, eager_v = mf.matmul(a, b), mf.matmul(a, v)
  local ga, gb = mf.grad(function(x, y)
    local p = mf.matmul(x, y)
    return mf.reduce_sum(p * p)
  end)(a, b)
  local g = mf.Graph()
  local pa, pb, pv, y, yv, da
  g:as_default(function()
    pa = mf.placeholder("float32", {-1, 2, -1, 5})
    pb = mf.placeholder("float32", {-1, 5, 6})
    pv = mf.placeholder("float32", {-1})
    y = mf.matmul(pa, pb)
    yv = mf.matmul(pa, pv)
    da = mf.gradients(mf.reduce_sum(y * y), {pa, pb})
  end)
  T.eq(y.shape, {-1, 2, -1, 6})
  T.eq(yv.shape, {-1, 2, -1})
  local sess = mf.Session(g)
  local out = sess:run({y, yv, da[1], da[2]}, {[pa] = a, [pb] = b, [pv] = v})
  T.eq(out[1], eager)
  T.eq(out[2], eager_v)
  T.eq(out[3], ga)
  T.eq(out[4], gb)
  local f = mf.trace(function(x, z) return mf.matmul(x, z) end)
  T.eq(f(a, b), eager)
  T.eq(f(a, v), eager_v)
end)

T.test("errors name what was given", function()
  T.raises(mf.matmul, "matmul: batch dimensions differ: (2,3,4,5) x (2,4,5,6) (batch sizes 3 "
           .. "and 4 do not broadcast)", mf.ones{2, 3, 4, 5}, mf.ones{2, 4, 5, 6})
  T.raises(mf.matmul, "matmul: inner dimensions differ: (2,3,4,5) x (2,3,4,6)",
           mf.ones{2, 3, 4, 5}, mf.ones{2, 3, 4, 6})
  T.raises(mf.matmul, "matmul: transpose_a needs a matrix, got a vector of shape (3,)",
           mf.ones{3}, mf.ones{3, 2}, {transpose_a = true})
  T.raises(mf.matmul, "matmul: expected vectors, matrices or batches of matrices (rank 1 or "
           .. "more), got shapes (2,3) and ()", mf.ones{2, 3}, mf.tensor(1))
  T.raises(mf.matmul, "matmul: unknown option 'adjoint_c'", mf.ones{2, 2}, mf.ones{2, 2},
           {adjoint_c = true})
end)

np.cleanup()
T.done()
