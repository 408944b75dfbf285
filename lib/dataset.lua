-- dataset.lua — mf.data.Dataset, part of the Lua library above the face
-- (doc/design.md), embedded with the other
-- files of lib/ by repl/lmf_lib.c. Besides the public mf API it uses the
-- private C helpers lib.data (repl/lmf_data.c): take, tensor_of, op_seed,
-- rand_index and range_int64 (mf.range as int64).
--
-- mf.data.Dataset: a pipeline of row indices; tensors are made only at the end.
local mf, lib = ...
local data, stack = mf.data, mf.stack
local take, tensor_of, op_seed = lib.data.take, lib.data.tensor_of, lib.data.op_seed
local rand_index, range = lib.data.rand_index, lib.data.range_int64
lib.help("data.Dataset", "data",
  "ds:shuffle(buffer_size [, {seed, reshuffle_each_iteration}]) " ..
  "ds:batch(n [, {drop_remainder}]) ds:epochs([n]) ds:map(fn) ds:filter(fn) ds:take(n) " ..
  "ds:skip(n) ds:prefetch(n) ds:shard(n, i [, {drop_remainder}]) ds:cardinality() " ..
  "Dataset.range([start,] limit [, delta]) Dataset.zip(ds1, ds2, ...) ds:iter()",
  "The methods of a mf.data.Dataset (tf.data's; see help \"data.Dataset.from_tensor_slices\"). " ..
  "shuffle keeps a buffer of buffer_size elements and picks from it at random (a buffer " ..
  "at least as long as the data gives a uniform shuffle), a new order on every pass unless " ..
  "reshuffle_each_iteration = false; batch groups n elements, keeping " ..
  "a smaller last batch unless drop_remainder = true; epochs(n) repeats the whole pipeline " ..
  "before it n times (TensorFlow's repeat: no n or -1 forever, 0 none); iter() returns a Lua " ..
  "iterator. map(fn) makes each element " ..
  "fn(x, y, ...) (a batch after it stacks the results; fn returning nil is an error), " ..
  "filter(fn) keeps those for which " ..
  "fn is true, take/skip the first n or all but them (0 and -1, all, as TensorFlow's; " ..
  "a count below -1 is an error, where TensorFlow reads it as -1); " ..
  "prefetch(n) reads n elements ahead (0 none, mf.data.AUTOTUNE one; Lua runs one thing at " ..
  "a time: it keeps the pipeline's shape but overlaps nothing); " ..
  "cardinality() is the elements of one pass, or TensorFlow's " ..
  "mf.data.INFINITE_CARDINALITY (-1, after epochs()) and mf.data.UNKNOWN_CARDINALITY (-2, " ..
  "after a filter). " ..
  "shard(n, i) keeps element i, i + n, i + 2n... (i is 1-based: data-parallel training " ..
  "ds:shard(mf.dist.size(), mf.dist.rank() + 1)); as TensorFlow's, every element goes to " ..
  "one part and the parts differ in length by at most 1; {drop_remainder = true} " ..
  "(moonflow's) drops the last incomplete group so all n parts have the same length " ..
  "(every process runs the same steps). " ..
  "Dataset.range gives int64 scalars as mf.range (limit exclusive; an empty range is an " ..
  "empty Dataset). Dataset.zip's elements are the components of one element of each " ..
  "Dataset in order (TensorFlow's nested tuple, flattened), as long as the shortest.",
  [[
ds = mf.data.Dataset.from_tensor_slices(mf.range(1, 6))
sizes = {}; for x in ds:batch(2):iter() do sizes[#sizes + 1] = #x end
sizes                                --> {2, 2, 1}
c = 0; for x in ds:epochs(2):batch(2, {drop_remainder = true}):iter() do c = c + 1 end
c                                    --> 5]])
local Dataset = {}
Dataset.__index = Dataset
Dataset.__name = "mf.data.Dataset"
data.Dataset = Dataset
-- Dataset checks its own arguments and names itself (fail and no_more below),
-- and its methods keep their lines for tracebacks: lib.publish leaves it as it is.
lib.publish_skip[Dataset] = true

-- Errors name the function at the user's line (lib.fail, lib/util.lua).
local fail, check_opts = lib.fail, lib.check_opts

-- 3.0 counts as 3; 1.5, 1e308 (no integer form), nan and non-numbers do not.
local function check_count(fname, what, v)
  local iv = math.type(v) and math.tointeger(v)
  if not iv or iv < 1 then
    fail(fname, "%s must be a positive integer, got %s", what,
         type(v) == "number" and tostring(v) or type(v))
  end
  return iv
end

-- A count of take, skip, epochs or prefetch: 0 or more, or -1 (TensorFlow's
-- "all" / "forever" / AUTOTUNE, named by 'minus_one').
local function check_count_or_all(fname, what, v, minus_one)
  local iv = math.type(v) and math.tointeger(v)
  if not iv or iv < -1 then
    fail(fname, "%s must be a non-negative integer or -1 (%s), got %s", what, minus_one,
         type(v) == "number" and tostring(v) or type(v))
  end
  return iv
end

local no_more = lib.no_more

-- Methods called with a dot (ds.batch(4)) get no Dataset: say so, naming the method.
local function check_self(fname, self)
  if getmetatable(self) ~= Dataset then
    fail(fname, "expected a Dataset (call it as ds:%s(...)), got %s", fname, type(self))
  end
end

lib.help("data.Dataset.from_tensor_slices", "data",
  "mf.data.Dataset.from_tensor_slices(tensor | {t1, t2, ...})",
  "A Dataset whose elements are the slices of the tensors along axis 1 (each component " ..
  "must have the same length there). Chain ds:shuffle(buffer_size, {seed}), " ..
  "ds:batch(n, {drop_remainder}) and ds:epochs(n) (TensorFlow's repeat; no n repeats " ..
  "forever), each returning a new Dataset, then iterate with for x, y in ds:iter() do ... " ..
  "end (one value per component). Batches stack rows along a new axis 1 with one gather. " ..
  "The shuffle is TensorFlow's buffered one; a seed (or mf.random.seed) makes it " ..
  "reproducible, and every pass (each epoch, each new ds:iter()) draws a new order.",
  [[
ds = mf.data.Dataset.from_tensor_slices{mf.tensor{{1, 2}, {3, 4}, {5, 6}}, {7, 8, 9}}
x, y = ds:batch(2):iter()()
x                                    --> {{1, 2}, {3, 4}}
y                                    --> {7, 8}
n = 0; for x, y in ds:shuffle(3, {seed = 1}):batch(2):epochs(2):iter() do n = n + 1 end
n                                    --> 4]])
-- Dataset.from_tensor_slices(t | {t1, t2, ...}): elements are the slices along axis 1.
function Dataset.from_tensor_slices(tensors, ...)
  no_more("Dataset.from_tensor_slices", 1, ...)
  local fname = "Dataset.from_tensor_slices"
  if tensors == nil then
    fail(fname, "expected a tensor or an array of tensors, got nil")
  end
  local list = tensors
  if type(tensors) ~= "table" or type(tensors[1]) ~= "userdata" then
    list = {tensors}
  end
  local comps, n = {}, nil
  for i, x in ipairs(list) do
    local ok, t, rank, len = pcall(tensor_of, x)
    if not ok then
      fail(fname, "component %d: %s", i, tostring(t):gsub("^tensor: ", ""))
    elseif not t then
      fail(fname, "component %d: expected a tensor or a nested table of numbers, got %s",
           i, type(x))
    elseif rank == 0 then
      fail(fname, "component %d is a scalar: slicing needs rank 1 or more", i)
    elseif n and len ~= n then
      fail(fname, "component %d has %d rows along axis 1 but component 1 has %d "
           .. "(all must agree)", i, len, n)
    end
    comps[i], n = t, len
  end
  return setmetatable({comps = comps, n = n, stages = {}}, Dataset)
end

local function derive(ds, stage)
  local stages = {}
  for i, s in ipairs(ds.stages) do stages[i] = s end
  stages[#stages + 1] = stage
  return setmetatable({comps = ds.comps, n = ds.n, zipped = ds.zipped, stages = stages}, Dataset)
end

-- ds:shuffle(buffer_size [, {seed}]): TensorFlow's buffered shuffle,
-- reshuffled on every pass.
-- {reshuffle_each_iteration = false}: every pass draws the first pass's order.
function Dataset:shuffle(buffer_size, opts, ...)
  no_more("shuffle", 3, ...)
  check_self("shuffle", self)
  local fname = "shuffle"
  buffer_size = check_count(fname, "buffer_size", buffer_size)
  opts = check_opts(fname, opts, {seed = true, reshuffle_each_iteration = true})
  if opts.seed ~= nil and math.type(opts.seed) ~= "integer" then
    fail(fname, "option 'seed' must be an integer, got %s", tostring(opts.seed))
  end
  local reshuffle = opts.reshuffle_each_iteration
  if reshuffle ~= nil and type(reshuffle) ~= "boolean" then
    fail(fname, "option 'reshuffle_each_iteration' must be a boolean, got %s", type(reshuffle))
  end
  return derive(self, {kind = "shuffle", size = buffer_size, seed = op_seed(opts.seed),
                       passes = 0, reshuffle = reshuffle ~= false})
end

-- ds:batch(n [, {drop_remainder = false}])
function Dataset:batch(n, opts, ...)
  no_more("batch", 3, ...)
  check_self("batch", self)
  local fname = "batch"
  n = check_count(fname, "the batch size", n)
  opts = check_opts(fname, opts, {drop_remainder = true})
  local drop = opts.drop_remainder
  if drop ~= nil and type(drop) ~= "boolean" then
    fail(fname, "option 'drop_remainder' must be a boolean, got %s", type(drop))
  end
  return derive(self, {kind = "batch", size = n, drop = drop == true})
end

-- ds:shard(n, i [, {drop_remainder}]): the i-th of n disjoint parts (1-based
-- i), for data-parallel training: ds:shard(mf.dist.size(), mf.dist.rank() + 1).
-- Element k of the stream goes to part ((k - 1) % n) + 1, every element to
-- one part, as TensorFlow's shard (whose parts differ in length by at most
-- 1). {drop_remainder = true} (moonflow's) also drops the last (stream length
-- % n) elements, so that every part has the same length and every process
-- runs the same number of steps. Placed after a seeded shuffle (the same seed
-- on every process) the parts are a fresh disjoint split on every pass.
function Dataset:shard(n, i, opts, ...)
  no_more("shard", 4, ...)
  check_self("shard", self)
  n = check_count("shard", "the number of shards", n)
  i = check_count("shard", "the shard index", i)
  if i > n then fail("shard", "the shard index must be in 1..%d, got %d", n, i) end
  opts = check_opts("shard", opts, {drop_remainder = true})
  local drop = opts.drop_remainder
  if drop ~= nil and type(drop) ~= "boolean" then
    fail("shard", "option 'drop_remainder' must be a boolean, got %s", type(drop))
  end
  return derive(self, {kind = "shard", count = n, index = i, drop = drop == true})
end

-- ds:epochs([n]): TensorFlow's repeat; no count (or -1) repeats forever,
-- 0 gives an empty Dataset.
function Dataset:epochs(n, ...)
  no_more("epochs", 2, ...)
  check_self("epochs", self)
  if n ~= nil then n = check_count_or_all("epochs", "the number of epochs", n, "forever") end
  return derive(self, {kind = "epochs", count = n ~= -1 and n or nil})
end

-- Stage makers: each takes the upstream factory and returns a factory of iterators.
local make = {}

function make.shuffle(up, st)
  return function()
    local pass, k, it, buf = st.reshuffle and st.passes or 0, 0, up(), {}
    st.passes = st.passes + 1
    while #buf < st.size do
      local v = it()
      if v == nil then break end
      buf[#buf + 1] = v
    end
    return function()
      local m = #buf
      if m == 0 then return nil end
      k = k + 1
      local j = rand_index(st.seed, pass, k, m)
      local v, nxt = buf[j], it()
      if nxt ~= nil then
        buf[j] = nxt
      else
        buf[j] = buf[m]
        buf[m] = nil
      end
      return v
    end
  end
end

function make.batch(up, st)
  return function()
    local it = up()
    return function()
      local b = {}
      for i = 1, st.size do
        local v = it()
        if v == nil then break end
        b[i] = v
      end
      if #b == 0 or (#b < st.size and st.drop) then return nil end
      return b
    end
  end
end

-- Reads the stream in groups of n and keeps the i-th of each group (of each
-- full group when st.drop). 'done': the stream is not read past its end.
function make.shard(up, st)
  return function()
    local it, done = up(), false
    return function()
      local keep
      for k = 1, st.count do
        local v = not done and it() or nil
        if v == nil then
          done = true
          return not st.drop and keep or nil
        end
        if k == st.index then keep = v end
      end
      return keep
    end
  end
end

function make.epochs(up, st)
  return function()
    local e, it, produced = 0, nil, true
    return function()
      while true do
        if it == nil then
          if (st.count and e >= st.count) or not produced then return nil end
          e, it, produced = e + 1, up(), false
        end
        local v = it()
        if v ~= nil then
          produced = true
          return v
        end
        it = nil
      end
    end
  end
end

-- ds:iter(): for x, y in ds:iter() do ... end (one value per component).
-- Elements are row numbers until the first map or filter, which makes them
-- tuples of tensors ({n = count, ...}); a batch of tuples stacks them.
function Dataset:iter(...)
  no_more("iter", 1, ...)
  check_self("iter", self)
  local n, comps = self.n, self.comps
  local factory = function()
    local i = 0
    return function()
      i = i + 1
      if i <= n then return i end
    end
  end
  local tuples = false
  if self.zipped then factory, tuples = make.zip_source(self.zipped), true end
  for _, st in ipairs(self.stages) do
    if (st.kind == "map" or st.kind == "filter") and not tuples then
      factory, tuples = make.tuples(factory, comps), true
    end
    factory = make[st.kind](factory, st)
    if st.kind == "batch" and tuples then factory = make.stack(factory) end
  end
  local it = factory()
  return function()
    local v = it()
    if v == nil then return nil end
    if tuples then return table.unpack(v, 1, v.n) end
    local out = {}
    for i, c in ipairs(comps) do out[i] = take(c, v) end
    return table.unpack(out, 1, #comps)
  end
end

function Dataset:__tostring()
  check_self("__tostring", self)
  local parts = {}
  for i, st in ipairs(self.stages) do
    if st.kind == "epochs" then
      parts[i] = "epochs(" .. (st.count or "forever") .. ")"
    elseif st.kind == "shard" then
      local drop = st.drop and ", drop_remainder" or ""
      parts[i] = "shard(" .. st.count .. ", " .. st.index .. drop .. ")"
    elseif st.kind == "batch" then
      local drop = st.drop and ", drop_remainder" or ""
      parts[i] = "batch(" .. st.size .. drop .. ")"
    elseif st.text then
      parts[i] = st.text
    else
      parts[i] = "shuffle(" .. st.size .. ")"
    end
  end
  local s = self.zipped and string.format("mf.data.Dataset: zip of %d Datasets", #self.zipped)
    or string.format("mf.data.Dataset: %d rows, %d component%s", self.n, #self.comps,
                     #self.comps == 1 and "" or "s")
  if #parts > 0 then s = s .. ", " .. table.concat(parts, " -> ") end
  return s
end

-- ---- map, filter, take, skip, prefetch, range, cardinality -----------------

-- Element tuples from row numbers: {n = #comps, take(c1, row), ...}.
function make.tuples(up, comps)
  return function()
    local it = up()
    return function()
      local v = it()
      if v == nil then return nil end
      local t = {n = #comps}
      for i, c in ipairs(comps) do t[i] = take(c, v) end
      return t
    end
  end
end

-- A batch (an array) of tuples as one tuple of stacked components.
function make.stack(up)
  return function()
    local it = up()
    return function()
      local b = it()
      if b == nil then return nil end
      local t = {n = b[1].n}
      for k = 1, t.n do
        local parts = {}
        for j, e in ipairs(b) do parts[j] = e[k] end
        local ok, r = pcall(stack, parts)
        if not ok then fail("batch", "cannot stack component %d of the mapped elements: %s", k,
                            tostring(r)) end
        t[k] = r
      end
      return t
    end
  end
end

-- A nil result would end the iteration early (a silent loss of the rest)
-- or shift the components: it is an error, as in TensorFlow.
function make.map(up, st)
  return function()
    local it, k = up(), 0
    return function()
      local v = it()
      if v == nil then return nil end
      k = k + 1
      local r = table.pack(st.fn(table.unpack(v, 1, v.n)))
      for i = 1, math.max(r.n, 1) do
        if r[i] == nil then
          fail("map", "the function returned nil as component %d of element %d (it must "
               .. "return the new components, tensors or numbers; ds:filter drops elements)",
               i, k)
        end
      end
      return r
    end
  end
end

-- A predicate's result as a Lua boolean (a bool tensor of one element too).
local function truth(r)
  if type(r) == "boolean" then return r end
  if type(r) == "userdata" then
    local ok, b = pcall(function() return r:item() end)
    if ok and type(b) == "boolean" then return b end
  end
  fail("filter", "the predicate must return a boolean or a one-element bool tensor, got %s",
       type(r))
end

function make.filter(up, st)
  return function()
    local it = up()
    return function()
      while true do
        local v = it()
        if v == nil then return nil end
        if truth(st.fn(table.unpack(v, 1, v.n))) then return v end
      end
    end
  end
end

-- take(-1) is every element, skip(-1) none (TensorFlow's).
function make.take(up, st)
  if st.count == -1 then return up end
  return function()
    local it, k = up(), 0
    return function()
      if k >= st.count then return nil end
      k = k + 1
      return it()
    end
  end
end

function make.skip(up, st)
  return function()
    local it, k = up(), 0
    while st.count == -1 or k < st.count do
      if it() == nil then return function() return nil end end
      k = k + 1
    end
    return it
  end
end

-- Reads up to 'size' elements ahead into a queue. Lua runs one thing at a
-- time, so this keeps TensorFlow's pipeline shape but overlaps no work.
function make.prefetch(up, st)
  if st.size == 0 then return up end
  return function()
    local it, queue, head, tail, done = up(), {}, 1, 0, false
    return function()
      while not done and tail - head + 1 < st.size do
        local v = it()
        if v == nil then done = true else tail = tail + 1; queue[tail] = v end
      end
      if head > tail then return nil end
      local v = queue[head]
      queue[head], head = nil, head + 1
      return v
    end
  end
end

local function check_fn(fname, fn)
  local mt = getmetatable(fn)
  if type(fn) ~= "function" and not (mt and mt.__call) then
    fail(fname, "expected a function of the element's components, got %s", type(fn))
  end
  return fn
end

-- ds:map(fn): each element becomes fn(x, y, ...) (its results are the new
-- components: tensors or numbers).
function Dataset:map(fn, ...)
  no_more("map", 2, ...)
  check_self("map", self)
  return derive(self, {kind = "map", fn = check_fn("map", fn), text = "map"})
end

-- ds:filter(fn): keeps the elements for which fn(x, y, ...) is true.
function Dataset:filter(fn, ...)
  no_more("filter", 2, ...)
  check_self("filter", self)
  return derive(self, {kind = "filter", fn = check_fn("filter", fn), text = "filter"})
end

-- ds:take(n) / ds:skip(n): the first n elements / all but the first n;
-- -1: all of them (TensorFlow's).
function Dataset:take(n, ...)
  no_more("take", 2, ...)
  check_self("take", self)
  n = check_count_or_all("take", "the count", n, "all")
  return derive(self, {kind = "take", count = n, text = "take(" .. n .. ")"})
end

function Dataset:skip(n, ...)
  no_more("skip", 2, ...)
  check_self("skip", self)
  n = check_count_or_all("skip", "the count", n, "all")
  return derive(self, {kind = "skip", count = n, text = "skip(" .. n .. ")"})
end

-- ds:prefetch(n): reads n elements ahead (see make.prefetch); 0 reads none
-- ahead, mf.data.AUTOTUNE (-1) one.
data.AUTOTUNE = -1
function Dataset:prefetch(n, ...)
  no_more("prefetch", 2, ...)
  check_self("prefetch", self)
  n = check_count_or_all("prefetch", "the buffer size", n, "mf.data.AUTOTUNE")
  return derive(self, {kind = "prefetch", size = n == -1 and 1 or n,
                       text = "prefetch(" .. n .. ")"})
end

-- Dataset.range(limit) or (start, limit [, delta]): int64 scalars as mf.range
-- makes them (limit exclusive, as TensorFlow's range).
function Dataset.range(a, b, d, ...)
  no_more("Dataset.range", 3, ...)
  local fname = "Dataset.range"
  local args = {a, b or 0, d or 1}
  for i = 1, 3 do
    local v = args[i]
    if math.type(v) ~= "integer" and not (math.type(v) == "float" and math.tointeger(v)) then
      fail(fname, "argument %d must be an integer, got %s", i,
           type(v) == "number" and tostring(v) or type(v))
    end
  end
  if b == nil then a, b = 0, a end
  d = d or 1
  if d == 0 then fail(fname, "delta must not be 0") end
  -- compared, never subtracted: b - a may not fit an integer
  if (d > 0 and a >= b) or (d < 0 and a <= b) then
    return Dataset.from_tensor_slices(mf.zeros({0}, "int64"))
  end
  return Dataset.from_tensor_slices(range(a, b, d))
end

-- Dataset.zip(ds1, ds2, ...) or Dataset.zip{ds1, ds2, ...}: elements whose
-- components are those of one element of each, in order; as long as the
-- shortest (TensorFlow's zip, its nested tuple flattened).
function Dataset.zip(first, ...)
  local parts = table.pack(first, ...)
  if parts.n == 1 and type(first) == "table" and getmetatable(first) ~= Dataset then
    parts = table.pack(table.unpack(first))
  end
  if parts.n == 0 or (parts.n == 1 and first == nil) then
    fail("Dataset.zip", "expected Datasets (zip(a, b) or zip{a, b}), got none")
  end
  for i = 1, parts.n do
    if getmetatable(parts[i]) ~= Dataset then
      fail("Dataset.zip", "argument %d must be a Dataset, got %s", i, type(parts[i]))
    end
  end
  return setmetatable({zipped = {table.unpack(parts, 1, parts.n)}, stages = {}}, Dataset)
end

-- The tuples of a zip: one element of each part, their components in order;
-- ends at the first part that ends (and reads no part past it).
function make.zip_source(parts)
  return function()
    local its, done = {}, false
    for i, p in ipairs(parts) do its[i] = p:iter() end
    return function()
      if done then return nil end
      local t = {n = 0}
      for _, it in ipairs(its) do
        local v = table.pack(it())
        if v[1] == nil then
          done = true
          return nil
        end
        table.move(v, 1, v.n, t.n + 1, t)
        t.n = t.n + v.n
      end
      return t
    end
  end
end

-- TensorFlow's cardinality constants: ds:cardinality() of an endless
-- Dataset, and of one whose length is only known by running it (a filter).
local INFINITE, UNKNOWN = -1, -2
data.INFINITE_CARDINALITY, data.UNKNOWN_CARDINALITY = INFINITE, UNKNOWN

-- The element count after a stage from the count 'n' before it (INFINITE
-- and UNKNOWN included): TensorFlow's rules (each dataset op's
-- CardinalityInternal). Stages not here keep the count.
local stage_count = {}
function stage_count.batch(n, st)
  if n < 0 then return n end
  return n // st.size + ((n % st.size == 0 or st.drop) and 0 or 1)
end
function stage_count.shard(n, st)
  if n < 0 then return n end
  return n // st.count + ((not st.drop and st.index <= n % st.count) and 1 or 0)
end
function stage_count.epochs(n, st)
  if st.count == nil then return n == 0 and 0 or INFINITE end
  if st.count == 0 then return 0 end
  if n < 0 then return n end
  if n > 0 and st.count > math.maxinteger // n then
    fail("cardinality", "%d epochs of %d elements are more elements than an integer holds",
         st.count, n)
  end
  return n * st.count
end
function stage_count.take(n, st)
  if n == UNKNOWN then return n end
  if n == INFINITE then return st.count end
  return st.count == -1 and n or math.min(n, st.count)
end
function stage_count.skip(n, st)
  if n < 0 then return n end
  return st.count == -1 and 0 or math.max(0, n - st.count)
end
function stage_count.filter() return UNKNOWN end

-- A zip is as long as its shortest part; unknown if any part is.
local function zip_count(parts)
  local n = INFINITE
  for _, p in ipairs(parts) do
    local c = p:cardinality()
    if c == UNKNOWN then return UNKNOWN end
    if c ~= INFINITE and (n == INFINITE or c < n) then n = c end
  end
  return n
end

-- ds:cardinality() -> the number of elements of one pass, or
-- mf.data.INFINITE_CARDINALITY (-1: epochs() repeats forever) or
-- mf.data.UNKNOWN_CARDINALITY (-2: after a filter), as TensorFlow's.
function Dataset:cardinality(...)
  no_more("cardinality", 1, ...)
  check_self("cardinality", self)
  -- counted stage by stage, without running anything (a huge epochs(n) or
  -- take(n) stays instant)
  local n = self.zipped and zip_count(self.zipped) or self.n
  for _, st in ipairs(self.stages) do
    local count = stage_count[st.kind]
    if count then n = count(n, st) end
  end
  return n
end
