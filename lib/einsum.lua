-- einsum.lua — mf.einsum(equation, a [, b]): Einstein summation over one or
-- two operands, written with mf ops (reduce_sum, transpose, reshape, matmul)
-- so gradients, graph mode and mf.trace come from those ops, and
-- matmul-like equations run as one (batched) OpenBLAS matmul.
--
-- Equations are NumPy's: "ij,jk->ik", or implicit without "->" (the output
-- is the letters met once, in alphabetical order). Letters name axes; a
-- letter of an operand missing from the output is summed over. Two
-- operands are laid out as [batch..., free..., contracted...] and
-- [batch..., contracted..., free...], reshaped to 3-D and multiplied.
-- Not supported (clear errors): "..." (ellipsis), a letter repeated within
-- one operand (diagonals, traces: use mf.trace), broadcasting of size-1
-- axes, more than two operands.
local mf, lib = ...
local fail = lib.fail
local F = "einsum"

-- The letters of one term as an array, checked.
local function letters(term, what)
  local out = {}
  for ch in term:gmatch(".") do
    if not ch:match("%a") then
      if term:find("...", 1, true) then
        fail(F, "ellipsis ('...') is not supported in %s '%s'; name every axis", what, term)
      end
      fail(F, "unexpected character '%s' in %s '%s' (only letters name axes)", ch, what, term)
    end
    out[#out + 1] = ch
  end
  return out
end

-- Parses 'eq' for 'n' operands: the input terms and the output letters.
local function parse(eq, n)
  if type(eq) ~= "string" then
    fail(F, "bad argument #1 (an equation string such as \"ij,jk->ik\" expected, got %s)",
         type(eq))
  end
  local s = eq:gsub("%s", "")
  local lhs, rhs = s:match("^(.-)%->(.*)$")
  lhs = lhs or s
  if rhs and rhs:find("->", 1, true) then fail(F, "equation '%s' has more than one '->'", eq) end
  local terms = {}
  for term in (lhs .. ","):gmatch("(.-),") do terms[#terms + 1] = letters(term, "operand term") end
  if #terms ~= n then
    fail(F, "equation '%s' names %d operand%s, got %d tensor%s", eq, #terms,
         #terms == 1 and "" or "s", n, n == 1 and "" or "s")
  end
  local count = {}
  for k, term in ipairs(terms) do
    local seen = {}
    for _, ch in ipairs(term) do
      if seen[ch] then
        fail(F, "index '%s' is repeated in operand %d ('%s'): diagonals and traces are not "
             .. "supported (use mf.trace)", ch, k, table.concat(term))
      end
      seen[ch] = true
      count[ch] = (count[ch] or 0) + 1
    end
  end
  local out
  if rhs then
    out = letters(rhs, "output")
    local seen = {}
    for _, ch in ipairs(out) do
      if seen[ch] then fail(F, "index '%s' appears twice in the output '%s'", ch, rhs) end
      if not count[ch] then
        fail(F, "output index '%s' does not appear in any operand of '%s'", ch, eq)
      end
      seen[ch] = true
    end
  else
    out = {}
    for ch, c in pairs(count) do if c == 1 then out[#out + 1] = ch end end
    table.sort(out)
  end
  return terms, out
end

-- parse's results by equation and operand count: parsing costs more than a
-- small matmul, and a training loop repeats the same few equations.
-- (At most 256 kept: a program making equations on the fly starts over.)
local cache, ncached = {}, 0
local function parsed(eq, n)
  local key = type(eq) == "string" and eq .. "\0" .. n
  local hit = key and cache[key]
  if hit then return hit[1], hit[2] end
  local terms, out = parse(eq, n)
  if ncached >= 256 then cache, ncached = {}, 0 end
  cache[key], ncached = {terms, out}, ncached + 1
  return terms, out
end

local function index_of(list, ch)
  for i, v in ipairs(list) do if v == ch then return i end end
end

-- Sizes of every letter from the shapes (-1: unknown in a graph); refuses
-- a rank that does not match its term and sizes that disagree.
local function sizes_of(terms, xs)
  local size = {}
  for k, term in ipairs(terms) do
    local shape = xs[k].shape
    if #shape ~= #term then
      fail(F, "operand %d has rank %d but its term '%s' names %d axes", k, #shape,
           table.concat(term), #term)
    end
    for i, ch in ipairs(term) do
      local d, had = shape[i], size[ch]
      if had and had >= 0 and d >= 0 and had ~= d then
        fail(F, "index '%s' has size %d in one operand and %d in operand %d", ch, had, d, k)
      end
      if not had or had < 0 then size[ch] = d end
    end
  end
  return size
end

-- x transposed so its letters 'from' come in the order 'to' (no op when
-- they already do); returns the tensor.
local function arrange(x, from, to)
  local perm, same = {}, true
  for i, ch in ipairs(to) do
    perm[i] = index_of(from, ch)
    same = same and perm[i] == i
  end
  if same then return x end
  return mf.transpose(x, perm)
end

-- Sums x over the letters of 'term' not in 'keep' (a set); returns x and
-- the remaining letters.
local function sum_out(x, term, keep)
  local axes, rest = {}, {}
  for i, ch in ipairs(term) do
    if keep[ch] then rest[#rest + 1] = ch else axes[#axes + 1] = i end
  end
  if #axes > 0 then x = mf.reduce_sum(x, axes) end
  return x, rest
end

-- The product of the sizes of 'list' (-1 when one is unknown).
local function product(size, list)
  local p = 1
  for _, ch in ipairs(list) do
    if size[ch] < 0 then return -1 end
    p = p * size[ch]
  end
  return p
end

-- x (of shape 'cur', as the letters' sizes give it: reading x.shape again
-- costs more than this whole check) reshaped to 'shape' unless it has it
-- already; at most one unknown dim.
local function reshape(x, cur, shape)
  local same, unknown = #cur == #shape, 0
  for i, d in ipairs(shape) do
    same = same and cur[i] == d
    if d < 0 then unknown = unknown + 1 end
  end
  if same then return x end
  if unknown > 1 then
    fail(F, "more than one axis of unknown size would be merged into one (give the graph "
         .. "placeholders more known dims)")
  end
  return mf.reshape(x, shape)
end

local function set_of(list)
  local s = {}
  for _, ch in ipairs(list) do s[ch] = true end
  return s
end

local function one_operand(x, term, out)
  local rest
  x, rest = sum_out(x, term, set_of(out))
  return arrange(x, rest, out)
end

local function two_operands(a, b, ta, tb, out, size)
  local keep_out, in_a, in_b = set_of(out), set_of(ta), set_of(tb)
  -- letters only one side has and the output lacks are summed first
  local keep_a, keep_b = {}, {}
  for ch in pairs(in_a) do keep_a[ch] = keep_out[ch] or in_b[ch] end
  for ch in pairs(in_b) do keep_b[ch] = keep_out[ch] or in_a[ch] end
  a, ta = sum_out(a, ta, keep_a)
  b, tb = sum_out(b, tb, keep_b)
  local batch, fa, fb, con = {}, {}, {}, {}
  for _, ch in ipairs(ta) do
    if in_b[ch] and keep_out[ch] then batch[#batch + 1] = ch
    elseif in_b[ch] then con[#con + 1] = ch
    else fa[#fa + 1] = ch end
  end
  for _, ch in ipairs(tb) do
    if not in_a[ch] then fb[#fb + 1] = ch end
  end
  local function concat(...)
    local r = {}
    for _, l in ipairs{...} do for _, ch in ipairs(l) do r[#r + 1] = ch end end
    return r
  end
  local function dims(list)
    local r = {}
    for i, ch in ipairs(list) do r[i] = size[ch] end
    return r
  end
  a = arrange(a, ta, concat(batch, fa, con))
  b = arrange(b, tb, concat(batch, con, fb))
  local m, k, n = product(size, fa), product(size, con), product(size, fb)
  local bd = dims(batch)
  a = reshape(a, dims(concat(batch, fa, con)), concat(bd, {m, k}))
  b = reshape(b, dims(concat(batch, con, fb)), concat(bd, {k, n}))
  local y = mf.matmul(a, b)
  local have = concat(batch, fa, fb)
  y = reshape(y, concat(bd, {m, n}), dims(have))
  return arrange(y, have, out)
end

lib.help("einsum", "linalg",
  "mf.einsum(equation, a [, b])",
  "Einstein summation (tf.einsum / NumPy's rules) over one or two tensors: letters name " ..
  "axes, a letter missing from the output is summed over; without '->' the output is the " ..
  "letters met once, in alphabetical order. Written with reduce_sum, transpose, reshape " ..
  "and one (batched) matmul, so gradients, graphs and mf.trace come from those ops and " ..
  "matmul-like equations run as one OpenBLAS product. Not supported (errors say so): " ..
  "'...', a letter repeated in one operand (diagonals: use trace), size-1 broadcasting, " ..
  "more than two operands.",
  [[
mf.einsum("ij,jk->ik", mf.tensor{{1, 2}}, mf.tensor{{3}, {4}}) --> {{11}}
mf.einsum("ij->j", mf.tensor{{1, 2}, {3, 4}}) --> {4, 6}]])
-- mf.einsum(equation, a [, b])
function mf.einsum(eq, ...)
  local xs = table.pack(...)
  if xs.n == 0 then fail(F, "expected an equation and 1 or 2 tensors, got no tensor") end
  if xs.n > 2 then
    fail(F, "at most 2 operands are supported, got %d (chain einsum calls)", xs.n)
  end
  local terms, out = parsed(eq, xs.n)
  for k = 1, xs.n do
    local x = xs[k]
    if not lib.is_tensor(x) then
      if type(x) ~= "table" and type(x) ~= "number" then
        fail(F, "bad argument #%d (a tensor expected, got %s)", k + 1, type(x))
      end
      xs[k] = mf.tensor(x)
    end
  end
  if xs.n == 2 and xs[1].dtype ~= xs[2].dtype then
    fail(F, "operands differ in dtype: %s and %s (use mf.cast)", xs[1].dtype, xs[2].dtype)
  end
  local size = sizes_of(terms, xs)
  if xs.n == 1 then return one_operand(xs[1], terms[1], out) end
  return two_operands(xs[1], xs[2], terms[1], terms[2], out, size)
end
