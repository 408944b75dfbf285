-- fuzz.lua [CALLS [SEED]] — a seeded random walk over mf.dist, run by
-- tests/lua/test_dist.lua under mpirun (-np 2, 3); longer by hand:
--   mpirun -np 2 build/moonflow tests/dist/fuzz.lua 5000 7
-- Every process draws the same choices (one seed), so the walk's
-- collectives pair up; some calls differ on purpose on one process. Kinds:
--   ok        collectives of every dtype, awkward shapes (empty, scalar, a
--             transposed view), ops, roots, check on or off, a graph's
--             allreduce, broadcast_variables and DistributedOptimizer steps
--             with random options: values checked against the formula
--             (weights: identical on every process)
--   mismatch  one process calls with another shape, dtype, collective or
--             run-time size, or its step's loss raises: every process must
--             raise (naming both sides), none may hang, and the walk goes on
--   hostile   bad arguments (the same everywhere): a clear error naming the
--             function, no collective made; options whose __index raises,
--             makes a collective of its own, or closes the operand
-- Every 16 calls the processes compare what each call gave (its outcome
-- and result checksums), so a call that answers differently on one
-- process is caught. Prints "PASS fuzz RANK: N calls (...)".
local CALLS = math.tointeger(tonumber(arg[1] or "")) or 300
local SEED = math.tointeger(tonumber(arg[2] or "")) or 1
local rank, size = mf.dist.rank(), mf.dist.size()
math.randomseed(SEED)
local R = math.random
local DTYPES = {"float32", "float64", "int32", "int64", "bool"}
local OPS = {"sum", "mean", "max", "min"}

local function pick(list) return list[R(#list)] end

local function random_shape()
  local k = R(5)
  if k == 1 then return {} end
  if k == 2 then return {0} end
  if k == 3 then return {R(5)} end
  if k == 4 then return {R(0, 3), R(4)} end
  return {R(3), R(3), R(2)}
end

-- Process r's values: r + 1 + index (bool: r odd), so every reduction of
-- all processes is known on each.
local function of_rank(r, dtype, shape)
  if dtype == "bool" then return mf.fill(shape, r % 2 == 1, "bool") end
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return mf.fill(shape, r + 1, dtype) + mf.cast(mf.reshape(mf.range(0, n), shape), dtype)
end

local function reduce_all(dtype, shape, op)
  local acc = of_rank(0, dtype, shape)
  for r = 1, size - 1 do
    local x = of_rank(r, dtype, shape)
    if dtype == "bool" then
      acc = op == "min" and mf.logical_and(acc, x) or mf.logical_or(acc, x)
    elseif op == "max" then acc = mf.maximum(acc, x)
    elseif op == "min" then acc = mf.minimum(acc, x)
    else acc = acc + x end
  end
  return op == "mean" and acc / size or acc
end

local function same(got, want, what)
  assert(got.dtype == want.dtype, what .. ": dtype " .. got.dtype .. ", want " .. want.dtype)
  assert(#got.shape == #want.shape, what .. ": rank differs")
  for i = 1, #want.shape do assert(got.shape[i] == want.shape[i], what .. ": shape differs") end
  if mf.size(want):item() > 0 then
    local d = mf.reduce_max(mf.abs(mf.cast(got, "float64") - mf.cast(want, "float64"))):item()
    assert(d <= 1e-6, what .. ": values differ by " .. d)
  end
end

local function identical_everywhere(t, what)
  local rows = mf.dist.allgather(mf.reshape(mf.cast(t, "float64"), {1, -1}))
  assert(mf.reduce_max(mf.abs(rows - rows[1])):item() == 0, what .. " differs between processes")
end

-- ---- ok: calls that must succeed -------------------------------------------------

local ok_calls = {}

function ok_calls.allreduce()
  local dtype, shape = pick(DTYPES), random_shape()
  local op = dtype:find("float") and pick(OPS) or pick{"sum", "max", "min"}
  local x = of_rank(rank, dtype, shape)
  local want = reduce_all(dtype, shape, op)
  if #shape == 2 and R(2) == 1 then   -- a transposed (non-contiguous) operand
    x = mf.transpose(of_rank(rank, dtype, {shape[2], shape[1]}))
    want = mf.transpose(reduce_all(dtype, {shape[2], shape[1]}, op))
  end
  local got = mf.dist.allreduce(x, {op = op, check = R(4) > 1})
  same(got, want, "allreduce(" .. op .. ") " .. dtype)
  return mf.cast(mf.reduce_sum(mf.cast(got, "float64")), "float64"):item()
end

function ok_calls.broadcast()
  local dtype, shape, root = pick(DTYPES), random_shape(), R(0, size - 1)
  local got = mf.dist.broadcast(of_rank(rank, dtype, shape), {root = root, check = R(4) > 1})
  same(got, of_rank(root, dtype, shape), "broadcast root " .. root)
end

function ok_calls.allgather()
  local dtype, base = pick(DTYPES), R(0, 2)
  local function mine(r) return of_rank(r, dtype, {(base + r) % 3, 2}) end
  local rows = {}
  for r = 0, size - 1 do rows[r + 1] = mine(r) end
  same(mf.dist.allgather(mine(rank), {check = R(4) > 1}), mf.concat(rows, 1), "allgather")
end

function ok_calls.barrier() mf.dist.barrier({check = R(2) == 1}) end

function ok_calls.broadcast_variables()
  local vars, root = {}, R(0, size - 1)
  for i = 1, R(0, 3) do
    local dtype, shape = pick{"float32", "float64", "int32"}, random_shape()
    vars[i] = mf.Variable(of_rank(rank, dtype, shape), {name = "v" .. i})
  end
  mf.dist.broadcast_variables(vars, {root = root, check = R(4) > 1})
  for i, v in ipairs(vars) do
    same(mf.identity(v), of_rank(root, v.dtype, v.shape), "broadcast_variables " .. i)
  end
end

function ok_calls.optimizer()
  local options = {overlap = R(2) == 1, check = R(4) > 1, bucket_bytes = R(1, 64),
                   fusion_bytes = R(1, 256)}
  local ws = {}
  for i = 1, R(1, 3) do
    ws[i] = mf.Variable(mf.fill({R(1, 4), R(1, 3)}, 0.5 * i, pick{"float32", "float64"}),
                        {name = "w" .. i})
  end
  local opt = mf.dist.DistributedOptimizer(pick{mf.train.GradientDescentOptimizer(0.1),
                                                mf.train.AdamOptimizer(0.05)}, options)
  for step = 1, R(1, 3) do
    opt:minimize(function()
      local loss = mf.tensor(0.0)
      for _, w in ipairs(ws) do
        loss = loss + mf.cast(mf.reduce_sum(mf.square(w - (rank + step))), "float32")
      end
      return loss
    end)
  end
  for i, w in ipairs(ws) do identical_everywhere(w, "w" .. i) end
end

function ok_calls.graph_allreduce()
  local g, x, y = mf.Graph()
  local n, op = R(0, 5), pick(OPS)
  g:as_default(function()
    x = mf.placeholder("float64", {-1}, "x")
    y = mf.dist.allreduce(x, {op = op})
  end)
  local got = mf.Session(g):run(y, {[x] = of_rank(rank, "float64", {n})})
  same(got, reduce_all("float64", {n}, op), "graph allreduce")
end

-- ---- mismatch: one process differs, every process raises -------------------------

local mismatches = {}

function mismatches.shape(v)
  return function() return mf.dist.allreduce(mf.zeros{rank == v and 3 or 2}) end, "do not match"
end

function mismatches.dtype(v)
  return function() return mf.dist.broadcast(mf.zeros({2}, rank == v and "int32" or "float32")) end,
         "do not match"
end

function mismatches.collective(v)
  local other = pick{function() return mf.dist.barrier() end,
                     function() return mf.dist.allgather(mf.zeros{1}) end,
                     function() return mf.dist.broadcast(mf.zeros{2}) end}
  return function()
    if rank == v then return other() end
    return mf.dist.allreduce(mf.zeros{2})
  end, "do not match"
end

function mismatches.run_time_size(v)
  local g, x, y = mf.Graph()
  g:as_default(function()
    x = mf.placeholder("float32", {-1, 2}, "x")
    y = mf.dist.allreduce(x, {op = "sum"})
  end)
  local sess = mf.Session(g)
  return function() return sess:run(y, {[x] = mf.ones{rank == v and 3 or 1, 2}}) end,
         "elements"
end

function mismatches.step_failed(v)
  local w = mf.Variable(mf.zeros{2}, {name = "w"})
  local opt = mf.dist.DistributedOptimizer(mf.train.GradientDescentOptimizer(0.1),
                                           {overlap = R(2) == 1})
  return function()
    return opt:minimize(function()
      if rank == v then error("fuzz: step failed on purpose") end
      return mf.reduce_sum(w * w)
    end)
  end, rank == v and "fuzz: step failed on purpose" or ("rank " .. v .. " failed its step")
end

-- ---- hostile: bad arguments, the same everywhere ----------------------------------

local function closed_tensor()
  local t = mf.ones{2}
  getmetatable(t).__close(t)
  return t
end

local hostile = {
  {"allreduce", function() return mf.dist.allreduce(mf.ones{2}, {op = "avg"}) end},
  {"allreduce", function() return mf.dist.allreduce(mf.ones{2}, {op = 5}) end},
  {"allreduce", function() return mf.dist.allreduce(mf.ones{2}, {check = "yes"}) end},
  {"allreduce", function() return mf.dist.allreduce(mf.ones{2}, {root = 0}) end},
  {"allreduce", function() return mf.dist.allreduce(nil) end},
  {"allreduce", function() return mf.dist.allreduce("x") end},
  {"allreduce", function() return mf.dist.allreduce(closed_tensor()) end},
  {"allreduce", function() return mf.dist.allreduce(mf.ones({2}, "int32")) end},
  {"allreduce", function() return mf.dist.allreduce(mf.ones{2}, {}, 3) end},
  {"broadcast", function() return mf.dist.broadcast(mf.ones{2}, {root = size}) end},
  {"broadcast", function() return mf.dist.broadcast(mf.ones{2}, {root = -1}) end},
  {"broadcast", function() return mf.dist.broadcast(mf.ones{2}, {root = math.maxinteger}) end},
  {"broadcast", function() return mf.dist.broadcast(mf.ones{2}, {root = 0.5}) end},
  {"broadcast", function() return mf.dist.broadcast(mf.ones{2}, {root = "0"}) end},
  {"allgather", function() return mf.dist.allgather(closed_tensor()) end},
  {"barrier", function() return mf.dist.barrier(3) end},
  {"broadcast_variables", function() return mf.dist.broadcast_variables({1}) end},
  {"broadcast_variables", function() return mf.dist.broadcast_variables({x = 1}) end},
  {"broadcast_variables", function() return mf.dist.broadcast_variables(mf.ones{2}) end},
  {"broadcast_variables", function()
    return mf.dist.broadcast_variables({mf.Variable(1.0)}, {session = 1})
  end},
  {"DistributedOptimizer", function() return mf.dist.DistributedOptimizer(3) end},
  {"DistributedOptimizer", function()
    return mf.dist.DistributedOptimizer(mf.train.AdamOptimizer(0.1), {fusion_bytes = -1})
  end},
  {"DistributedOptimizer", function()
    return mf.dist.DistributedOptimizer(mf.train.AdamOptimizer(0.1), {overlap = "no"})
  end},
  {"fuzzfn:", function()   -- an options table that raises passes its error on
    return mf.dist.allreduce(mf.ones{2}, setmetatable({}, {__index = function()
      error("fuzzfn: options index")
    end}))
  end},
}

-- Options whose __index makes a collective of its own (on every process):
-- the outer allreduce still gives its own sum.
local function reentrant()
  local opts = setmetatable({}, {__index = function(_, k)
    if k == "op" then
      mf.dist.barrier()
      return "sum"
    end
  end})
  same(mf.dist.allreduce(mf.fill({3}, rank + 1.0), opts),
       mf.fill({3}, size * (size + 1) / 2.0), "allreduce with a reentrant option")
end

-- Options whose __index closes the operand: the call keeps it alive (the
-- sum of the values it was given) or says it is closed, everywhere alike.
local function closes_operand()
  local t = mf.fill({4}, rank + 1.0)
  local opts = setmetatable({}, {__index = function(_, k)
    if k == "op" then getmetatable(t).__close(t); return "sum" end
  end})
  local ok, got = pcall(mf.dist.allreduce, t, opts)
  if ok then same(got, mf.fill({4}, size * (size + 1) / 2.0), "allreduce of a closed operand")
  else assert(tostring(got):find("closed", 1, true), tostring(got)) end
  return ok and "kept" or "closed"
end

-- ---- the walk -----------------------------------------------------------------------

local names = {}
for k in pairs(ok_calls) do names[#names + 1] = k end
table.sort(names)
local mnames = {}
for k in pairs(mismatches) do mnames[#mnames + 1] = k end
table.sort(mnames)

local counts = {ok = 0, mismatch = 0, hostile = 0}
local log = {}   -- what each call gave, compared between the processes

local function one_call(i)
  local kind = R(10)
  if kind <= 6 then
    local name = pick(names)
    local ok, res = pcall(ok_calls[name])
    assert(ok, string.format("call %d, %s: %s", i, name, tostring(res)))
    counts.ok = counts.ok + 1
    return name .. " " .. tostring(res)
  elseif kind <= 8 then
    local name, v = pick(mnames), R(0, size - 1)
    local f, want = mismatches[name](v)
    local ok, err = pcall(f)
    assert(not ok, string.format("call %d, mismatch %s on rank %d did not raise", i, name, v))
    assert(tostring(err):find(want, 1, true),
           string.format("call %d, mismatch %s on rank %d: '%s' not in: %s", i, name, v, want,
                         tostring(err)))
    counts.mismatch = counts.mismatch + 1
    return "mismatch " .. name
  end
  counts.hostile = counts.hostile + 1
  local k = R(#hostile + 2)
  if k == #hostile + 1 then reentrant(); return "reentrant" end
  if k == #hostile + 2 then return closes_operand() end
  local who, f = hostile[k][1], hostile[k][2]
  local ok, err = pcall(f)
  assert(not ok, string.format("call %d, hostile #%d (%s) did not raise", i, k, who))
  assert(type(err) == "string" and err:find(who, 1, true),
         string.format("call %d, hostile #%d: the error does not name %s: %s", i, k, who,
                       tostring(err)))
  return "hostile " .. k .. " " .. err:gsub("^[^:]*:%d+: ", "")
end

-- Every process's log of the last calls hashed and compared.
local function compare_logs(upto)
  local h = 0
  for _, s in ipairs(log) do
    for j = 1, #s do h = (h * 31 + s:byte(j)) % 2147483647 end
  end
  local all = mf.dist.allgather(mf.tensor({h}, "int64"))
  if mf.reduce_max(all):item() ~= mf.reduce_min(all):item() then
    error(string.format("calls up to %d answered differently on the processes; rank %d's:\n%s",
                        upto, rank, table.concat(log, "\n")))
  end
  log = {}
end

for i = 1, CALLS do
  log[#log + 1] = one_call(i)
  if i % 16 == 0 then compare_logs(i) end
end
compare_logs(CALLS)
assert(mf.dist.allreduce(mf.tensor{1}, {op = "sum"}):item() == size, "the run no longer works")
print(string.format("PASS fuzz %d: %d calls (%d ok, %d mismatches, %d hostile), seed %d", rank,
                    CALLS, counts.ok, counts.mismatch, counts.hostile, SEED))
