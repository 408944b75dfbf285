-- einsum.lua — mf.einsum(equation, x1, x2, ...): Einstein summation with
-- NumPy's rules, written with mf ops (reduce_sum, transpose, reshape, a
-- strided slice for diagonals, matmul) so gradients, graph mode and mf.trace
-- come from those ops, and matmul-like equations run as one (batched)
-- OpenBLAS matmul.
--
-- Equations are NumPy's: "ij,jk->ik", or implicit without "->" (the output
-- is '...' when an operand has it, then the letters met once, in ASCII
-- order). Letters name axes; '...' names the leading axes an operand has
-- beyond its letters, broadcast across operands as NumPy broadcasts shapes
-- (aligned on the right, size 1 stretched); a letter of size 1 in one
-- operand also broadcasts against another operand's size. A letter repeated
-- in one operand takes the diagonal; a letter in no other operand and not
-- in the output is summed first; more than two operands are contracted
-- pairwise in opt_einsum's greedy order. Each operand is first brought to
-- distinct letters (diagonals taken, size-1 broadcast axes and lone letters
-- summed away); then pairs are laid out as [batch..., free..., contracted...]
-- and [batch..., contracted..., free...], reshaped to 3-D and multiplied.
local mf, lib = ...
local fail = lib.fail
local F = "einsum"
local ELL = "..."

-- The tokens of one term: its letters and at most one ELL, checked.
local function tokens(term, what)
  local out, i, ell = {}, 1, false
  while i <= #term do
    local ch = term:sub(i, i)
    if term:sub(i, i + 2) == ELL then
      if ell then fail(F, "%s '%s' has more than one ellipsis ('...')", what, term) end
      ell, out[#out + 1], i = true, ELL, i + 3
    elseif ch:match("^%a$") then
      out[#out + 1], i = ch, i + 1
    elseif ch == "." then
      fail(F, "%s '%s' has a '.' that is not part of an ellipsis ('...')", what, term)
    else
      fail(F, "unexpected character '%s' in %s '%s' (letters name axes, '...' the broadcast "
           .. "axes)", ch, what, term)
    end
  end
  return out
end

-- The output of an implicit equation (NumPy's): '...' when an operand has
-- it, then the letters met exactly once over all terms, in ASCII order.
local function implicit_output(terms)
  local count, ell, out = {}, false, {}
  for _, term in ipairs(terms) do
    for _, ch in ipairs(term) do
      if ch == ELL then ell = true else count[ch] = (count[ch] or 0) + 1 end
    end
  end
  for ch, c in pairs(count) do if c == 1 then out[#out + 1] = ch end end
  table.sort(out)
  if ell then table.insert(out, 1, ELL) end
  return out
end

-- Parses 'eq' for 'n' operands: the input terms and the output, as tokens.
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
  for term in (lhs .. ","):gmatch("(.-),") do terms[#terms + 1] = tokens(term, "operand term") end
  if #terms ~= n then
    fail(F, "equation '%s' names %d operand%s, got %d tensor%s", eq, #terms,
         #terms == 1 and "" or "s", n, n == 1 and "" or "s")
  end
  if not rhs then return terms, implicit_output(terms) end
  local out, seen, known = tokens(rhs, "output"), {}, {}
  for _, term in ipairs(terms) do for _, ch in ipairs(term) do known[ch] = true end end
  for _, ch in ipairs(out) do
    if seen[ch] and ch ~= ELL then
      fail(F, "index '%s' appears more than once in the output '%s' (NumPy refuses it too)",
           ch, rhs)
    end
    if ch ~= ELL and not known[ch] then
      fail(F, "output index '%s' does not appear in any operand of '%s'", ch, eq)
    end
    seen[ch] = true
  end
  return terms, out
end

-- ---- labels ---------------------------------------------------------------------------

-- An axis under '...' is labelled "...r", r counting from the right, so the
-- broadcast axes of all operands line up as NumPy aligns shapes.
local function ell_label(r) return ELL .. r end

-- A label as error messages name it.
local function label_name(ch)
  if ch:sub(1, 3) == ELL then return string.format("'...' axis %s from the right", ch:sub(4)) end
  return "index '" .. ch .. "'"
end

-- The labels of operand k's axes: its term with '...' expanded to the axes
-- its letters leave; also how many those are.
local function expand(term, rank, k)
  local named = 0
  for _, ch in ipairs(term) do if ch ~= ELL then named = named + 1 end end
  local has_ell = false
  for _, ch in ipairs(term) do has_ell = has_ell or ch == ELL end
  if named > rank or (not has_ell and named ~= rank) then
    fail(F, "operand %d has rank %d but its term '%s' names %d axes%s", k, rank,
         table.concat(term), named, has_ell and " besides '...'" or "")
  end
  local labels, e = {}, rank - named
  for _, ch in ipairs(term) do
    if ch == ELL then
      for r = e, 1, -1 do labels[#labels + 1] = ell_label(r) end
    else
      labels[#labels + 1] = ch
    end
  end
  return labels, has_ell and e or 0
end

-- The output's labels: its letters with '...' as the broadcast axes of
-- rank 'e' (the most any operand has).
local function output_labels(out, e, eq)
  local labels, has_ell = {}, false
  for _, ch in ipairs(out) do
    if ch == ELL then
      has_ell = true
      for r = e, 1, -1 do labels[#labels + 1] = ell_label(r) end
    else
      labels[#labels + 1] = ch
    end
  end
  if e > 0 and not has_ell then
    fail(F, "operands have broadcast axes ('...') but the output of '%s' has no '...' to "
         .. "keep them (NumPy's rule)", eq)
  end
  return labels
end

local function index_of(list, ch)
  for i, v in ipairs(list) do if v == ch then return i end end
end

local function set_of(list)
  local s = {}
  for _, ch in ipairs(list) do s[ch] = true end
  return s
end

local function concat(...)
  local r = {}
  for _, l in ipairs{...} do for _, ch in ipairs(l) do r[#r + 1] = ch end end
  return r
end

-- ---- plans ----------------------------------------------------------------------------

-- A plan is the list of ops an equation makes for operands of given shapes,
-- worked out once (parsing, broadcasting, the greedy order cost far more
-- than a small matmul) and run on the tensors: each step writes a new
-- register from one or two others; registers 1..n hold the operands. The
-- functions below plan by emitting steps into 'building'.
local building

-- Appends step {kind, src, arg} to the plan being built; returns its register.
local function emit(kind, src, arg)
  local reg = building.nregs + 1
  building.nregs = reg
  building[#building + 1] = {kind, reg, src, arg}
  return reg
end

local run_step = {
  reshape = function(r, s) return mf.reshape(r[s[3]], s[4]) end,
  transpose = function(r, s) return mf.transpose(r[s[3]], s[4]) end,
  -- every (n+1)-th element of a merged pair of axes: a strided view (StridedSlice)
  diagonal = function(r, s) return r[s[3]][{ELL, {1, -1, s[4]}}] end,
  sum = function(r, s) return mf.reduce_sum(r[s[3]], s[4]) end,
  matmul = function(r, s) return mf.matmul(r[s[3]], r[s[4]]) end,
}

-- Runs 'plan' on the operands 'xs'; returns its result.
local function run(plan, xs)
  local r = {}
  for k = 1, xs.n do r[k] = xs[k] end
  for _, s in ipairs(plan) do r[s[2]] = run_step[s[1]](r, s) end
  return r[plan.result]
end

-- ---- shapes ---------------------------------------------------------------------------

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
  return emit("reshape", x, shape)
end

-- x transposed so its labels 'from' come in the order 'to' (no op when
-- they already do); returns the tensor.
local function arrange(x, from, to)
  local perm, same = {}, true
  for i, ch in ipairs(to) do
    perm[i] = index_of(from, ch)
    same = same and perm[i] == i
  end
  if same then return x end
  return emit("transpose", x, perm)
end

-- The size of every label over all operands (-1: unknown in a graph), a
-- size 1 giving way to another (NumPy's broadcasting); sizes that do not
-- broadcast are refused.
local function sizes_of(ops)
  local size, from = {}, {}
  for k, op in ipairs(ops) do
    for i, ch in ipairs(op.labels) do
      local d, had = op.dims[i], size[ch]
      if had and had >= 0 and d >= 0 and had ~= d and had ~= 1 and d ~= 1 then
        fail(F, "%s has size %d in operand %d and %d in operand %d", label_name(ch), had,
             from[ch], d, k)
      end
      if had == nil or had < 0 or had == 1 then size[ch], from[ch] = d, k end
    end
  end
  return size
end

-- ---- one operand: diagonals, broadcast axes, lone letters ----------------------------

-- The diagonal of op's axes i < j (the same label): both moved last, merged
-- into one axis of n*n, and every (n+1)-th element taken (a strided view,
-- whose gradient is the scatter back). The label stays once, last.
local function diagonal(op, i, j)
  local n, ch = op.dims[i], op.labels[i]
  if n >= 0 and op.dims[j] >= 0 and n ~= op.dims[j] then
    fail(F, "repeated index '%s' of operand %d has sizes %d and %d (a diagonal needs a square "
         .. "pair)", ch, op.k, n, op.dims[j])
  end
  n = n >= 0 and n or op.dims[j]
  if n < 0 then
    fail(F, "repeated index '%s' of operand %d needs a known size (give the graph placeholder "
         .. "that dim)", ch, op.k)
  end
  local labels, dims, perm = {}, {}, {}
  for a, c in ipairs(op.labels) do
    if a ~= i and a ~= j then
      labels[#labels + 1], dims[#dims + 1], perm[#perm + 1] = c, op.dims[a], a
    end
  end
  perm[#perm + 1], perm[#perm + 2] = i, j
  local x = j == #perm and i == j - 1 and op.x or emit("transpose", op.x, perm)
  x = reshape(x, concat(dims, {n, n}), concat(dims, {n * n}))
  if n > 0 then x = emit("diagonal", x, n + 1) end
  labels[#labels + 1], dims[#dims + 1] = ch, n
  op.x, op.labels, op.dims = x, labels, dims
end

-- Takes the diagonal of every label repeated in op.
local function diagonals(op)
  local again = true
  while again do
    again = false
    for i = 1, #op.labels do
      local j = index_of({table.unpack(op.labels, i + 1)}, op.labels[i])
      if j then
        diagonal(op, i, i + j)
        again = true
        break
      end
    end
  end
end

-- Sums op over the labels not in 'keep' (a set).
local function sum_out(op, keep)
  local axes, labels, dims = {}, {}, {}
  for i, ch in ipairs(op.labels) do
    if keep[ch] then
      labels[#labels + 1], dims[#dims + 1] = ch, op.dims[i]
    else
      axes[#axes + 1] = i
    end
  end
  if #axes > 0 then op.x = emit("sum", op.x, axes) end
  op.labels, op.dims = labels, dims
end

-- How many operands of 'ops' (but 'skip_a', 'skip_b') and the output have each label.
local function needed(ops, out, skip_a, skip_b)
  local need = set_of(out)
  for k, op in ipairs(ops) do
    if k ~= skip_a and k ~= skip_b then
      for _, ch in ipairs(op.labels) do need[ch] = true end
    end
  end
  return need
end

-- Each operand with distinct labels, its axes of size 1 that broadcast
-- against a larger size summed away (each of its values then stands for
-- every index: the operand does not depend on that label), and the labels
-- no other operand nor the output has summed.
local function prepare(ops, out)
  for _, op in ipairs(ops) do diagonals(op) end
  local size = sizes_of(ops)
  for k, op in ipairs(ops) do
    local keep = needed(ops, out, k)
    for i, ch in ipairs(op.labels) do
      if op.dims[i] == 1 and size[ch] ~= 1 and size[ch] >= 0 then keep[ch] = nil end
    end
    sum_out(op, keep)
  end
  return size
end

-- ---- pairs ---------------------------------------------------------------------------

local function product(size, list)
  local p = 1
  for _, ch in ipairs(list) do
    if size[ch] < 0 then return -1 end
    p = p * size[ch]
  end
  return p
end

local function dims_of(size, list)
  local r = {}
  for i, ch in ipairs(list) do r[i] = size[ch] end
  return r
end

-- The product of operands a and b keeping the labels of 'keep' (a set):
-- one (batched) matmul. Returns the new operand.
local function contract(a, b, keep, size)
  local in_a, in_b = set_of(a.labels), set_of(b.labels)
  local keep_a, keep_b = {}, {}
  for ch in pairs(in_a) do keep_a[ch] = keep[ch] or in_b[ch] end
  for ch in pairs(in_b) do keep_b[ch] = keep[ch] or in_a[ch] end
  sum_out(a, keep_a)
  sum_out(b, keep_b)
  local batch, fa, fb, con = {}, {}, {}, {}
  for _, ch in ipairs(a.labels) do
    if in_b[ch] and keep[ch] then batch[#batch + 1] = ch
    elseif in_b[ch] then con[#con + 1] = ch
    else fa[#fa + 1] = ch end
  end
  for _, ch in ipairs(b.labels) do
    if not in_a[ch] then fb[#fb + 1] = ch end
  end
  local x = arrange(a.x, a.labels, concat(batch, fa, con))
  local y = arrange(b.x, b.labels, concat(batch, con, fb))
  local m, k, n = product(size, fa), product(size, con), product(size, fb)
  local bd = dims_of(size, batch)
  x = reshape(x, dims_of(size, concat(batch, fa, con)), concat(bd, {m, k}))
  y = reshape(y, dims_of(size, concat(batch, con, fb)), concat(bd, {k, n}))
  local have = concat(batch, fa, fb)
  local z = reshape(emit("matmul", x, y), concat(bd, {m, n}), dims_of(size, have))
  return {x = z, labels = have, dims = dims_of(size, have)}
end

-- The elements of a tensor with 'labels' (unknown dims count 1).
local function numel(size, labels)
  local p = 1
  for _, ch in ipairs(labels) do p = p * math.max(size[ch], 1) end
  return p
end

-- Whether ops i and j share a label, and opt_einsum's greedy cost of their
-- product: its size less the sizes of the two.
local function pair_cost(ops, i, j, out, size)
  local need = needed(ops, out, i, j)
  local keep, shares = {}, false
  local in_j = set_of(ops[j].labels)
  for _, ch in ipairs(ops[i].labels) do shares = shares or in_j[ch] == true end
  for _, ch in ipairs(concat(ops[i].labels, ops[j].labels)) do
    if need[ch] and not index_of(keep, ch) then keep[#keep + 1] = ch end
  end
  return numel(size, keep) - numel(size, ops[i].labels) - numel(size, ops[j].labels), shares
end

-- The next pair of opt_einsum's greedy path: among pairs that share a
-- label, the least cost (the first pair on ties); when none shares one,
-- the outer product of the two smallest operands.
local function next_pair(ops, out, size)
  local best, bi, bj
  for i = 1, #ops - 1 do
    for j = i + 1, #ops do
      local cost, shares = pair_cost(ops, i, j, out, size)
      if shares and (not best or cost < best) then best, bi, bj = cost, i, j end
    end
  end
  if bi then return bi, bj end
  local order = {}
  for i = 1, #ops do order[i] = i end
  table.sort(order, function(p, q)
    local np, nq = numel(size, ops[p].labels), numel(size, ops[q].labels)
    return np < nq or (np == nq and p < q)
  end)
  return math.min(order[1], order[2]), math.max(order[1], order[2])
end

-- Contracts 'ops' pairwise down to one operand; the product goes last, as
-- opt_einsum's path numbers it.
local function contract_all(ops, out, size)
  while #ops > 1 do
    local i, j = next_pair(ops, out, size)
    local keep = needed(ops, out, i, j)
    local a, b = ops[i], ops[j]
    table.remove(ops, j)
    table.remove(ops, i)
    ops[#ops + 1] = contract(a, b, keep, size)
  end
  return ops[1]
end

-- ---- mf.einsum -----------------------------------------------------------------------

-- The operands as tensors of one dtype (Lua numbers and tables converted).
local function operands(xs)
  for k = 1, xs.n do
    local x = xs[k]
    if not lib.is_tensor(x) then
      if type(x) ~= "table" and type(x) ~= "number" then
        fail(F, "bad argument #%d (a tensor expected, got %s)", k + 1, type(x))
      end
      xs[k] = mf.tensor(x)
    end
    if xs[k].dtype ~= xs[1].dtype then
      fail(F, "operands differ in dtype: %s and %s (use mf.cast)", xs[1].dtype, xs[k].dtype)
    end
  end
end

lib.help("einsum", "linalg",
  "mf.einsum(equation, x1, x2, ...)",
  "Einstein summation with NumPy's rules (numpy.einsum, tf.einsum, torch.einsum): letters " ..
  "name axes, a letter missing from the output is summed over; '...' names the axes an " ..
  "operand has beyond its letters, broadcast across operands as shapes broadcast (a letter " ..
  "of size 1 broadcasts too); a letter repeated in one operand takes the diagonal (\"ii->i\", " ..
  "trace \"ii\"); without '->' the output is '...' then the letters met once, in ASCII " ..
  "order. A letter may not repeat in the output (NumPy refuses it). More than two operands " ..
  "are multiplied pairwise in opt_einsum's greedy order. Written with reduce_sum, transpose, " ..
  "reshape, a strided slice (diagonals) and (batched) matmul, so gradients, graphs and " ..
  "mf.trace come from those ops and matmul-like equations run as one OpenBLAS product.",
  [[
mf.einsum("ij,jk->ik", mf.tensor{{1, 2}}, mf.tensor{{3}, {4}}) --> {{11}}
mf.einsum("ij->j", mf.tensor{{1, 2}, {3, 4}}) --> {4, 6}
mf.einsum("ii", mf.tensor{{1, 2}, {3, 4}}) --> 5
mf.einsum("...ij,...jk", mf.ones{2, 1, 3}, mf.ones{3, 2}) --> {{{3, 3}}, {{3, 3}}}
mf.einsum("i,i,i->", mf.tensor{1, 2}, mf.tensor{3, 4}, mf.tensor{5, 6}) --> 63]])
-- The plan of 'eq' for operands 'xs' (their shapes and the terms' labels).
local function plan_of(eq, xs)
  local terms, out = parse(eq, xs.n)
  building = {nregs = xs.n}
  local ops, e = {}, 0
  for k = 1, xs.n do
    local dims = xs[k].shape
    local labels, ek = expand(terms[k], #dims, k)
    ops[k], e = {x = k, labels = labels, dims = dims, k = k}, math.max(e, ek)
  end
  local out_labels = output_labels(out, e, eq)
  local size = prepare(ops, out_labels)
  local op = contract_all(ops, out_labels, size)
  sum_out(op, set_of(out_labels))
  local plan = building
  plan.result, building = arrange(op.x, op.labels, out_labels), nil
  return plan
end

-- Plans by equation and shapes: a training loop repeats the same few (at
-- most 256 kept: a program making equations or shapes on the fly starts over).
local plans, nplans = {}, 0
local function cached_plan(eq, xs)
  local key = {eq}
  for k = 1, xs.n do key[k + 1] = table.concat(xs[k].shape, ",") end
  key = table.concat(key, ";")
  local plan = plans[key]
  if plan then return plan end
  plan = plan_of(eq, xs)
  if nplans >= 256 then plans, nplans = {}, 0 end
  plans[key], nplans = plan, nplans + 1
  return plan
end

-- mf.einsum(equation, x1, x2, ...)
function mf.einsum(eq, ...)
  local xs = table.pack(...)
  if xs.n == 0 then fail(F, "expected an equation and tensors, got no tensor") end
  if type(eq) ~= "string" then parse(eq, xs.n) end   -- the equation's error first
  operands(xs)
  return run(cached_plan(eq, xs), xs)
end
