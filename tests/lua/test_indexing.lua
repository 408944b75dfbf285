-- test_indexing.lua — Torch7's table index with NumPy's meaning, checked
-- against NumPy run live (/usr/bin/python3) on random shapes and every
-- index form: values, shapes, views against np.shares_memory, gradients
-- eager and traced; narrow and select; sliced and scatter writes against
-- TensorFlow's documented examples and NumPy's assignment; the errors.
local T = dofile("tests/lua/harness.lua")

local python = "/usr/bin/python3"
local have_numpy = os.execute(python .. " -c 'import numpy' 2>/dev/null")

-- Runs 'script' with python and returns what it printed.
local function run_python(script)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(script)
  f:close()
  local pipe = io.popen(python .. " '" .. path .. "' 2>&1")
  local out = pipe:read("a")
  local ok = pipe:close()
  os.remove(path)
  assert(ok, "python failed:\n" .. out)
  return out
end

-- NumPy's side: each case is (shape, entries); an entry is ('i', p) a
-- Torch7 position, ('r', [numbers]) a Torch7 range table, ('n',) a new
-- axis, ('e',) the ellipsis, ('m', flat, shape) a bool mask, ('x', flat,
-- shape) 1-based positions. x = arange(size), w = 1..y.size; prints per
-- case a Lua table: y's shape and values, whether y shares x's memory, and
-- the gradient of sum(y * w) by x (np.add.at over the positions y reads).
local numpy_side = [==[
import numpy as np

def pos(p, n):            # Torch7: 1-based, negative from the end
    return p - 1 if p > 0 else n + p

def entry(e, n):
    kind = e[0]
    if kind == 'i':
        return pos(e[1], n)
    if kind == 'r':
        r = e[1]
        if not r:
            return slice(None)
        a = pos(r[0], n)
        b = pos(r[1], n) if len(r) > 1 else a
        step = r[2] if len(r) > 2 else 1
        return slice(a, b + 1, step)
    if kind == 'n':
        return None
    if kind == 'e':
        return Ellipsis
    if kind == 'm':
        return np.array(e[1], dtype=bool).reshape(e[2])
    return np.array(e[1], dtype=np.int64).reshape(e[2]) - 1

def index_of(shape, entries):
    if entries and entries[0][0] in 'mx':
        return entry(entries[0], shape[0])
    out, d = [], 0
    taken = sum(1 for e in entries if e[0] not in 'ne')
    for e in entries:
        if e[0] == 'e':
            out.append(Ellipsis)
            d += len(shape) - taken
            continue
        out.append(entry(e, shape[d] if d < len(shape) else 0))
        d += e[0] not in 'n'
    return tuple(out)

def lua(v):
    if isinstance(v, (list, tuple)):
        return '{' + ', '.join(lua(x) for x in v) + '}'
    if isinstance(v, (bool, np.bool_)):
        return 'true' if v else 'false'
    return repr(float(v)) if isinstance(v, (float, np.floating)) else str(int(v))

for shape, entries in CASES:
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    ix = index_of(shape, entries)
    y = x[ix]
    w = np.arange(1, y.size + 1, dtype=np.float64).reshape(y.shape)
    at = np.arange(x.size).reshape(shape)[ix]
    g = np.zeros(x.size)
    np.add.at(g, np.asarray(at).reshape(-1), w.reshape(-1))
    print('{shape = %s, v = %s, view = %s, g = %s}' % (lua(y.shape), lua(y.reshape(-1).tolist()),
          lua(bool(np.shares_memory(x, y))), lua(g.tolist())))
]==]

local function flatten(v, out)
  out = out or {}
  if type(v) ~= "table" then out[#out + 1] = v; return out end
  for _, e in ipairs(v) do flatten(e, out) end
  return out
end

-- A random Torch7 range on an axis of size n, as a Lua table.
local function random_range(n)
  local kind = math.random(5)
  if kind == 1 then return {} end
  local a = math.random(n) - 1
  local b = math.random(a, n - 1)
  local function either(k) return math.random(2) == 1 and k + 1 or k - n end
  if kind == 2 then return {either(a)} end
  if kind == 3 and a >= 1 then return {a + 1, a} end   -- empty, as Torch7's
  if kind == 4 then return {either(a), either(b)} end
  return {either(a), either(b), math.random(3)}
end

-- A random key for 'shape': the Lua key and NumPy's entries.
local function random_key(shape)
  local r, key, py = #shape, {}, {}
  local used = math.random(0, r)
  local ell = math.random(4) == 1 and math.random(used + 1) or nil
  for d = 1, used do
    if ell == d then key[#key + 1] = "..."; py[#py + 1] = "('e',)" end
    if math.random(6) == 1 then key[#key + 1] = mf.newaxis; py[#py + 1] = "('n',)" end
    local n = shape[d + (ell and ell <= d and r - used or 0)]
    if math.random(3) == 1 then
      local p = math.random(n)
      if math.random(2) == 1 then p = p - n - 1 end
      key[#key + 1] = p; py[#py + 1] = string.format("('i', %d)", p)
    else
      local rg = random_range(n)
      key[#key + 1] = rg
      py[#py + 1] = "('r', [" .. table.concat(rg, ", ") .. "])"
    end
  end
  if ell == used + 1 then key[#key + 1] = mf.ellipsis; py[#py + 1] = "('e',)" end
  return key, "[" .. table.concat(py, ", ") .. "]"
end

-- A random bool mask over the leading k axes, or 1-based positions.
local function random_tensor_key(shape)
  if math.random(2) == 1 then
    local k = math.random(#shape)
    local mshape, n, flat = {}, 1, {}
    for d = 1, k do mshape[d] = shape[d]; n = n * shape[d] end
    for i = 1, n do flat[i] = math.random(2) == 1 end
    local pyflat = {}
    for i, b in ipairs(flat) do pyflat[i] = b and "True" or "False" end
    return mf.reshape(mf.tensor(flat), mshape),
           string.format("[('m', [%s], %s)]", table.concat(pyflat, ", "),
                         "(" .. table.concat(mshape, ", ") .. ",)")
  end
  local ishape = math.random(2) == 1 and {math.random(4)} or {2, math.random(3)}
  local flat = {}
  for i = 1, ishape[1] * (ishape[2] or 1) do flat[i] = math.random(shape[1]) end
  return mf.reshape(mf.tensor(flat, "int64"), ishape),
         string.format("[('x', [%s], (%s,))]", table.concat(flat, ", "),
                       table.concat(ishape, ", "))
end

local function arange(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return mf.reshape(mf.range(0, n, "float64"), shape)
end

local function weights_like(y)
  return mf.reshape(mf.range(1, y:numel() + 1, "float64"), y.shape)
end

T.test("every index form against NumPy on random shapes, gradients eager and traced", function()
  if not have_numpy then print("skipped: no numpy for " .. python) return end
  math.randomseed(30)
  local cases, keys, shapes = {}, {}, {}
  for c = 1, 120 do
    local shape = {}
    for d = 1, math.random(4) do shape[d] = math.random(5) end
    local key, py
    if c % 4 == 0 then key, py = random_tensor_key(shape) else key, py = random_key(shape) end
    cases[c] = "((" .. table.concat(shape, ", ") .. ",), " .. py .. ")"
    keys[c], shapes[c] = key, shape
  end
  local out = run_python("CASES = [" .. table.concat(cases, ",\n") .. "]\n" .. numpy_side)
  local c = 0
  for line in out:gmatch("[^\n]+") do
    c = c + 1
    local want = assert(load("return " .. line))()
    local x, key = arange(shapes[c]), keys[c]
    local label = "case " .. c .. ": " .. cases[c]
    local y = x[key]
    T.eq(y.shape, want.shape, nil, label)
    T.eq(flatten(y:totable()), want.v, nil, label)
    local loss = function(t) return mf.reduce_sum(t[key] * weights_like(y)) end
    T.eq(flatten(mf.grad(loss)(x):totable()), want.g, nil, label .. " (eager gradient)")
    local traced = mf.trace(function(t) return mf.grad(loss)(t) end)
    T.eq(flatten(traced(x):totable()), want.g, nil, label .. " (traced gradient)")
  end
  T.eq(c, #cases)
end)

T.test("views exactly where NumPy's basic indexing gives views", function()
  if not have_numpy then print("skipped: no numpy for " .. python) return end
  local shape = {100, 60, 4}
  local forms = {
    {{2, {}}, "[('i', 2), ('r', [])]"},
    {{{1, 3}, -1}, "[('r', [1, 3]), ('i', -1)]"},
    {{{}, {1, -1, 2}}, "[('r', []), ('r', [1, -1, 2])]"},
    {{mf.newaxis, "...", 2}, "[('n',), ('e',), ('i', 2)]"},
    {{mf.ellipsis, {2}}, "[('e',), ('r', [2])]"},
  }
  local mask = mf.greater(mf.range(100), 49)
  forms[#forms + 1] = {mask, "[('m', [" .. string.rep("False, ", 50) ..
                       string.rep("True, ", 50) .. "], (100,))]"}
  forms[#forms + 1] = {mf.tensor({3, 1, 3}, "int64"), "[('x', [3, 1, 3], (3,))]"}
  local py = {}
  for i, f in ipairs(forms) do py[i] = "((100, 60, 4), " .. f[2] .. ")" end
  local out = run_python("CASES = [" .. table.concat(py, ",\n") .. "]\n" .. numpy_side)
  local x, i = arange(shape), 0
  for line in out:gmatch("[^\n]+") do
    i = i + 1
    local want = assert(load("return " .. line))()
    local before = mf.memory().in_use
    local y = x[forms[i][1]]
    local grew = mf.memory().in_use - before
    T.eq(y.shape, want.shape, nil, forms[i][2])
    -- a view adds a header (about 200 bytes); a copy its elements (here at least 3 x 240 x 8)
    T.eq(grew < 1024, want.view, nil, forms[i][2] .. " grew by " .. grew)
    y = nil
  end
  T.eq(i, #forms)
end)

T.test("x[i] keeps working; x[{i}] of a 1-D tensor is a rank-0 tensor", function()
  local x = mf.tensor{{1, 2}, {3, 4}, {5, 6}}
  T.eq(x[2], {3, 4}); T.eq(x[-1][1], 5); T.eq(x[2][2], 4)
  T.eq(type(x[1][1]), "number")
  local r = mf.tensor{7, 8, 9}[{2}]
  T.eq(r.shape, {}); T.eq(r:item(), 8)
  T.eq(mf.grad(function(t) return t[{-1}] * 3 end)(mf.tensor{1.0, 2.0}), {0, 3})
  -- a Variable reads through its value; the tape watches it
  local v = mf.Variable(mf.tensor{{1.0, 2.0}, {3.0, 4.0}})
  T.eq(v[{{}, 2}], {2, 4})
  local tape = mf.GradientTape()
  local y = mf.reduce_sum(v[{2, {}}] * 2)
  T.eq(tape:gradient(y, v), {{0, 0}, {2, 2}})
end)

T.test("narrow and select as Torch7's, as views", function()
  local x = arange{3, 4}
  -- torch.arange(12.).reshape(3, 4).narrow(1, 1, 2) (0-based dim and start in torch)
  T.eq(x:narrow(2, 2, 2), {{1, 2}, {5, 6}, {9, 10}})
  T.eq(x:narrow(1, -1, 1), {{8, 9, 10, 11}})
  T.eq(x:narrow(2, 3, 0).shape, {3, 0})
  -- torch.arange(12.).reshape(3, 4).select(1, 2)
  T.eq(x:select(2, 3), {2, 6, 10})
  T.eq(x:select(-2, 1), {0, 1, 2, 3})
  T.eq(x:select(1, 2):select(1, 4):item(), 7)
  T.eq(mf.grad(function(t) return mf.reduce_sum(t:narrow(1, 2, 2)) end)(x),
       {{0, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 1, 1}})
  T.raises(function() return x:narrow(3, 1, 1) end, "narrow: dim 3 out of range for rank 2")
  T.raises(function() return x:narrow(2, 3, 3) end,
           "narrow: length 3 from start 3 runs past the end of axis 2 of size 4 (at most 2)")
  T.raises(function() return x:select(1, 4) end,
           "select: index 4 out of range for axis 1 of size 3")
  T.raises(function() return x:select(1) end, "select: index must be an integer, got no value")
end)

T.test("sliced writes on a Variable as TensorFlow's assign and NumPy's", function()
  -- TensorFlow's _SliceHelperVar example: A[:2, :2].assign(22. * tf.ones((2, 2)))
  local A = mf.Variable(mf.tensor{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}})
  T.eq(A[{{1, 2}, {1, 2}}], {{1, 2}, {4, 5}})
  A[{{1, 2}, {1, 2}}] = 22 * mf.ones{2, 2}
  T.eq(A, {{22, 22, 3}, {22, 22, 6}, {7, 8, 9}})
  -- a = np.arange(12.).reshape(3, 4); a[:, ::2] = [1, 2]; a[1] = 5; a[-1, 1:3] = 0
  local v = mf.Variable(arange{3, 4})
  v[{{}, {1, -1, 2}}] = mf.tensor({1, 2}, "float64")
  v[2] = 5
  v[{-1, {2, 3}}] = 0
  T.eq(v, {{1, 1, 2, 3}, {5, 5, 5, 5}, {1, 0, 0, 11}})
  -- the masked update in one line: a[a > 4] = 0
  v[v:greater(4)] = 0
  T.eq(v, {{1, 1, 2, 3}, {0, 0, 0, 0}, {1, 0, 0, 0}})
  -- positions: a[[2, 0]] = [[9, 9, 9, 9], [8, 8, 8, 8]]
  v[mf.tensor({3, 1}, "int64")] = mf.tensor({{9, 9, 9, 9}, {8, 8, 8, 8}}, "float64")
  T.eq(v, {{8, 8, 8, 8}, {0, 0, 0, 0}, {9, 9, 9, 9}})
  -- in a traced function the write happens when it runs
  local w = mf.Variable(mf.zeros{2, 3})
  local step = mf.trace(function(a) w[{2, {}}] = a; return a end)
  step(mf.tensor{7, 8, 9})
  T.eq(w, {{0, 0, 0}, {7, 8, 9}})
end)

T.test("scatter writes as TensorFlow's documented examples (1-based here)", function()
  -- tf.tensor_scatter_nd_update(tensor=[0]*8, indices=[[1],[3],[4],[7]], updates=[9,10,11,12])
  T.eq(mf.tensor_scatter_update(mf.zeros({8}, "int32"), {{2}, {4}, {5}, {8}},
                                mf.tensor({9, 10, 11, 12}, "int32")),
       {0, 9, 0, 10, 11, 0, 0, 12})
  -- tf.tensor_scatter_nd_add(tf.ones([8], tf.int32), [[4],[3],[1],[7]], [9,10,11,12])
  local ix = {{5}, {4}, {2}, {8}}
  local up = mf.tensor({9, 10, 11, 12}, "int32")
  T.eq(mf.tensor_scatter_add(mf.ones({8}, "int32"), ix, up), {1, 12, 1, 11, 10, 1, 1, 13})
  -- tf.tensor_scatter_nd_sub with the same
  T.eq(mf.tensor_scatter_sub(mf.ones({8}, "int32"), ix, up), {1, -10, 1, -9, -8, 1, 1, -11})
  -- tf.tensor_scatter_nd_update of rows: tensor (4,4,4) zeros, indices [[0],[2]], updates 2 slabs
  local slab = mf.tensor({{5, 5, 5, 5}, {6, 6, 6, 6}, {7, 7, 7, 7}, {8, 8, 8, 8}}, "int32")
  local t = mf.tensor_scatter_update(mf.zeros({4, 4, 4}, "int32"), {{1}, {3}},
                                     mf.stack({slab, slab}, 1))
  T.eq(t[1], slab); T.eq(t[2], mf.zeros({4, 4}, "int32")); T.eq(t[3], slab)
  -- tf.compat.v1.scatter_update / scatter_add / scatter_sub on ref = [1..8],
  -- indices [4, 3, 1, 7], updates [9, 10, 11, 12]
  local function ref() return mf.Variable(mf.tensor({1, 2, 3, 4, 5, 6, 7, 8}, "int32")) end
  local iv = {5, 4, 2, 8}
  T.eq(ref():scatter_update(iv, up), {1, 11, 3, 10, 9, 6, 7, 12})
  T.eq(ref():scatter_add(iv, up), {1, 13, 3, 14, 14, 6, 7, 20})
  T.eq(ref():scatter_sub(iv, up), {1, -9, 3, -6, -4, 6, 7, -4})
  -- along axis 1 of a matrix, a scalar update broadcast (TF allows a scalar)
  local m = mf.Variable(mf.zeros{3, 2})
  T.eq(m:scatter_update({3}, 1), {{0, 0}, {0, 0}, {1, 1}})
  T.eq(m:scatter_add(mf.tensor({1, 1}, "int32"), mf.ones{2, 2}), {{2, 2}, {0, 0}, {1, 1}})
  -- the tensor itself is unchanged: tensors are immutable
  local z = mf.zeros{3}
  mf.tensor_scatter_update(z, {{1}}, {1})
  T.eq(z, {0, 0, 0})
  -- gradients: dy with the written slices zeroed, gather_nd(dy) for updates
  local g = mf.grad(function(a, u)
    return mf.reduce_sum(mf.tensor_scatter_update(a, {{2}}, u) * mf.tensor{1.0, 2.0, 3.0})
  end)
  local ga, gu = g(mf.zeros{3}, mf.tensor{5.0})
  T.eq(ga, {1, 0, 3}); T.eq(gu, {2})
end)

T.test("graph mode: placeholders with unknown dims, graph Variables", function()
  local g, feed = mf.Graph(), arange{4, 3}:cast("float32")
  g:as_default(function()
    local p = mf.placeholder("float32", {-1, 3})
    local y = p[{{}, {2, -1}}]
    T.eq(y.shape, {-1, 2})
    local w = mf.Variable(mf.zeros{3}, {name = "w"})
    local op = w:scatter_update({2}, {5})
    local s = mf.Session(g)
    s:run(mf.global_variables_initializer())
    T.eq(s:run(y, {[p] = feed}), {{1, 2}, {4, 5}, {7, 8}, {10, 11}})
    T.eq(s:run(op), {0, 5, 0})
    T.raises(function() w[1] = 3 end, "index: v[...] = value on a graph Variable")
    T.raises(function() return p[{{}, -1, 1}] end, "index: 3 positions or ranges for a " ..
             "tensor of rank 2")
    T.raises(function() return p[{-1}] end, "index: axis 1 has an unknown size in this graph")
    T.raises(function() return p[p:greater(0)] end, "index: x[mask] needs the mask's values")
  end)
end)

T.test("bad indices and writes give clear errors", function()
  local x = arange{3, 4}
  T.raises(function() return x[{4, 1}] end, "index: index 4 out of range for axis 1 of size 3 " ..
           "(indices are 1-based: 1..3, or -3..-1)")
  T.raises(function() return x[{1, 0}] end, "index: index 0 out of range for axis 2 of size 4")
  T.raises(function() return x[{{}, {1, 5}}] end, "index: stop 5 out of range for axis 2 of size 4")
  T.raises(function() return x[{{3, 1}}] end, "index: the range in entry 1 runs backwards " ..
           "on axis 1: stop 1 comes before start 3")
  T.raises(function() return x[{{1, 3, 0}}] end, "index: step 0 in entry 1 (axis 1) must be >= 1")
  T.raises(function() return x[{{1, 3, -1}}] end, "mf.reverse reverses an axis")
  T.raises(function() return x[{{1, 2, 3, 4}}] end, "index: entry 1 is a range of 4 numbers")
  T.raises(function() return x[{1.5}] end, "index: the position in entry 1 must be an " ..
           "integer, got a fraction")
  T.raises(function() return x[{"a"}] end, "index: entry 1 is string; expected a position")
  T.raises(function() return x[{{}, mf.tensor{1}}] end, "a tensor index goes alone")
  T.raises(function() return x[{1, 2, 3}] end, "index: 3 positions or ranges for a tensor of " ..
           "rank 2 (shape (3,4))")
  T.raises(function() return x[{"...", 1, "..."}] end, "index: entries 1 and 3 are both an " ..
           "ellipsis (one at most)")
  T.raises(function() return x[mf.tensor{1.0}] end, "index: a float32 tensor as an index")
  T.raises(function() return x[mf.tensor{true, false}] end, "index: a mask of shape (2,) for " ..
           "a tensor of shape (3,4)")
  T.raises(function() return x[mf.tensor({4}, "int32")] end, "index: gather_nd: index {4}")
  T.raises(function() return mf.tensor(1)[{}] end, "index: a scalar cannot be indexed")
  -- writes
  T.raises(function() x[1] = 0 end, "tensors are immutable (as TensorFlow's): write into a " ..
           "mf.Variable (v[{...}] = value")
  local v = mf.Variable(mf.zeros{2, 3})
  T.raises(function() v[{1, {}}] = mf.ones{2} end, "index: a value of shape (2,) cannot be " ..
           "written where the index selects shape (3,)")
  T.raises(function() v[1] = mf.ones({3}, "int32") end, "index: the value has dtype int32 but " ..
           "the Variable holds float32")
  T.raises(function() v[{mf.newaxis, 1}] = 1 end, "index: mf.newaxis in a write")
  T.raises(function() v.name = "w" end, "Variable: cannot set 'name'")
  T.raises(function() v:scatter_update({3}, mf.ones{1, 3}) end,
           "scatter_update: index: gather_nd: index {3}")
  T.raises(function() v:scatter_add({1}, mf.ones{2, 3}) end, "scatter_add: a value of shape " ..
           "(2,3) cannot be written where the index selects shape (1,3)")
  T.raises(function() mf.tensor_scatter_update(mf.zeros{3}, {{1}}, {1, 2}) end,
           "tensor_scatter_update: updates of shape (2,), expected (1,)")
  T.eq(v, {{0, 0, 0}, {0, 0, 0}})   -- nothing written by a failed write
end)

-- Positions given as Lua numbers were truncated to int64: gather(x, {1.5}) read position 1
-- without a word (a silent wrong answer). A fraction is an error naming the entry.
T.test("positions with a fraction are refused, never truncated", function()
  local x = mf.tensor{10, 20, 30}
  T.raises(mf.gather, "gather: positions must be integers, got 1.5 at data[1]", x, {1.5})
  T.raises(mf.gather_nd, "gather_nd: positions must be integers, got 2.5 at data[1][2]",
           mf.tensor{{1, 2}, {3, 4}}, {{1, 2.5}})
  T.raises(mf.scatter_nd, "scatter_nd: positions must be integers, got 1.5 at data[1][1]",
           {{1.5}}, mf.tensor{1}, {3})
  T.raises(mf.tensor_scatter_update, "positions must be integers, got 1.5 at data[1][1]",
           mf.zeros{3}, {{1.5}}, mf.tensor{1})
  T.raises(mf.one_hot, "one_hot: positions must be integers, got 0.5 at data[2]", {1, 0.5}, 3)
  local v = mf.Variable(mf.zeros{3})
  T.raises(function() v:scatter_update({2.5}, mf.tensor{1}) end,
           "scatter_update: positions must be integers, got 2.5 at data[1]")
  T.eq(v, {0, 0, 0})
  T.eq(mf.gather(x, {3.0, 1}), {30, 10})   -- a float without a fraction is a position
end)

T.done()
