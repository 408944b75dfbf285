-- dataset.lua — mf.data.Dataset, written in Lua and embedded in the moonflow
-- binary: tools/embed_lua.sh turns this file into string literals at build
-- time ($(BUILD)/gen/dataset_lua.inc) and lmf_open_data (repl/lmf_data.c)
-- runs it once, as chunk "@repl/dataset.lua", with five arguments: the
-- mf.data table to fill and the C helpers take, tensor_of, op_seed and
-- rand_index.
--
-- mf.data.Dataset: a pipeline of row indices; tensors are made only at the end.
local data, take, tensor_of, op_seed, rand_index = ...
local Dataset = {}
Dataset.__index = Dataset
Dataset.__name = "mf.data.Dataset"
data.Dataset = Dataset

-- Raises "fname: message" at the user's line: the first caller outside this
-- file (and outside C functions such as pcall), however deep the check was.
local SOURCE = debug.getinfo(1, "S").source
local function fail(fname, fmt, ...)
  local level = 2
  local info = debug.getinfo(level, "S")
  while info and (info.source == SOURCE or info.what == "C") do
    level = level + 1
    info = debug.getinfo(level, "S")
  end
  error(fname .. ": " .. string.format(fmt, ...), info and level or 1)
end

local function check_opts(fname, opts, keys)
  if opts == nil then return {} end
  if type(opts) ~= "table" then
    fail(fname, "options must be a table, got %s", type(opts))
  end
  for k in pairs(opts) do
    if not keys[k] then
      -- the message of the C bindings' lmf_check_options (repl/lmf_tensor.c)
      local known = {}
      for name in pairs(keys) do known[#known + 1] = name end
      table.sort(known)
      fail(fname, "unknown option '%s' (known: %s)", tostring(k), table.concat(known, ", "))
    end
  end
  return opts
end

-- 3.0 counts as 3; 1.5, 1e308 (no integer form), nan and non-numbers do not.
local function check_count(fname, what, v)
  local iv = math.type(v) and math.tointeger(v)
  if not iv or iv < 1 then
    fail(fname, "%s must be a positive integer, got %s", what,
         type(v) == "number" and tostring(v) or type(v))
  end
  return iv
end

-- Methods called with a dot (ds.batch(4)) get no Dataset: say so, naming the method.
local function check_self(fname, self)
  if getmetatable(self) ~= Dataset then
    fail(fname, "expected a Dataset (call it as ds:%s(...)), got %s", fname, type(self))
  end
end

-- Dataset.from_tensor_slices(t | {t1, t2, ...}): elements are the slices along axis 1.
function Dataset.from_tensor_slices(tensors)
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
  return setmetatable({comps = ds.comps, n = ds.n, stages = stages}, Dataset)
end

-- ds:shuffle(buffer_size [, {seed}]): TensorFlow's buffered shuffle,
-- reshuffled on every pass.
function Dataset:shuffle(buffer_size, opts)
  check_self("shuffle", self)
  local fname = "shuffle"
  buffer_size = check_count(fname, "buffer_size", buffer_size)
  opts = check_opts(fname, opts, {seed = true})
  if opts.seed ~= nil and math.type(opts.seed) ~= "integer" then
    fail(fname, "option 'seed' must be an integer, got %s", tostring(opts.seed))
  end
  return derive(self, {kind = "shuffle", size = buffer_size, seed = op_seed(opts.seed),
                       passes = 0})
end

-- ds:batch(n [, {drop_remainder = false}])
function Dataset:batch(n, opts)
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

-- ds:epochs([n]): TensorFlow's repeat; no count repeats forever.
function Dataset:epochs(n)
  check_self("epochs", self)
  if n ~= nil then n = check_count("epochs", "the number of epochs", n) end
  return derive(self, {kind = "epochs", count = n})
end

-- Stage makers: each takes the upstream factory and returns a factory of iterators.
local make = {}

function make.shuffle(up, st)
  return function()
    local pass, k, it, buf = st.passes, 0, up(), {}
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
function Dataset:iter()
  check_self("iter", self)
  local n = self.n
  local factory = function()
    local i = 0
    return function()
      i = i + 1
      if i <= n then return i end
    end
  end
  for _, st in ipairs(self.stages) do factory = make[st.kind](factory, st) end
  local it, comps = factory(), self.comps
  return function()
    local v = it()
    if v == nil then return nil end
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
    elseif st.kind == "batch" then
      local drop = st.drop and ", drop_remainder" or ""
      parts[i] = "batch(" .. st.size .. drop .. ")"
    else
      parts[i] = "shuffle(" .. st.size .. ")"
    end
  end
  local s = string.format("mf.data.Dataset: %d rows, %d component%s", self.n, #self.comps,
                          #self.comps == 1 and "" or "s")
  if #parts > 0 then s = s .. ", " .. table.concat(parts, " -> ") end
  return s
end
