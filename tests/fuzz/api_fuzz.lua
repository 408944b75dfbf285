-- api_fuzz.lua — a seeded random walk over every public moonflow function.
--
-- Run by `make fuzz-api` (the ASan moonflow, from a scratch directory, so
-- every file the calls write lands there):
--   FUZZ_CALLS=n FUZZ_SEED=s moonflow api_fuzz.lua
-- FUZZ_MODE=mixed (default), shaped or random picks how arguments are made
-- (see "shaped calls" below; random is the plain walk of earlier versions,
-- call for call the same per seed).
-- FUZZ_HOSTILE=p makes that share of the calls hostile (see "hostile calls").
-- FUZZ_TRACE=1 prints each call to stderr before making it (to find the call
-- behind a crash or a hang); FUZZ_LOG=path appends the failures found.
--
-- The targets are discovered, not listed: every function reachable from the
-- `mf` table, and every method and metamethod of every "mf.*" metatable in
-- the registry (methods sit in an __index table or in the upvalues of an
-- __index function), so new functions are covered without editing this file.
-- Arguments are drawn at random from pools of values: tensors of every dtype
-- and awkward shapes (empty, scalar, NaN/inf), symbolic tensors of several
-- graphs, Variables, open, stopped and closed tapes, open and closed
-- sessions, optimizers, datasets, bad shapes and huge sizes over the engine's
-- cap, options tables with random fields, and callbacks. Results of calls go
-- back into the pools, so the walk builds on what it made.
--
-- Each call must return or raise a string error naming the function (its
-- last name component); errors raised by our own callbacks pass through and
-- carry "fuzzfn:". A call running more than MAX_STEPS Lua instructions is a
-- hang. Failures are counted and printed; the exit status is non-zero when
-- there is any. A crash or sanitizer report ends the process, which fails
-- `make fuzz` by itself. A fixed computation is checked every 2000 calls, so
-- a call that corrupts engine state is caught too.

local CALLS = math.tointeger(tonumber(os.getenv("FUZZ_CALLS") or "")) or 20000
local SEED = math.tointeger(tonumber(os.getenv("FUZZ_SEED") or "")) or 1
local TRACE = os.getenv("FUZZ_TRACE")
local LOG = os.getenv("FUZZ_LOG")
local MAX_STEPS = 20000000
local POOL_MAX = 24
local KEEP_NUMEL = 4096        -- bigger results are not kept for later calls

math.randomseed(SEED)
local R = math.random
local eprint = function(...) io.stderr:write(table.concat({...}, "\t"), "\n") end

-- ---- discovery --------------------------------------------------------------

local targets = {}

-- Calls 'fn' through a field named 'short', as a script would (mf.add(...)),
-- so Lua's argument errors can name it ("bad argument #1 to 'add'").
local function named_caller(short, fn)
  if not short:match("^[%a_][%w_]*$") then return fn end
  local src = string.format("local f = ...; local T = {%s = f}; " ..
                            "return function(...) local r = table.pack(T.%s(...)); " ..
                            "return table.unpack(r, 1, r.n) end", short, short)
  return assert(load(src, "=fuzzcall"))(fn)
end

local function add_target(name, short, fn, class)
  targets[#targets + 1] = {name = name, short = short, fn = named_caller(short, fn),
                           class = class, calls = 0, ok = 0}
end

local function walk_table(prefix, t, seen)
  for k, v in pairs(t) do
    if type(k) == "string" then
      if type(v) == "function" then
        add_target(prefix .. k, k, v, nil)
      elseif type(v) == "table" and not seen[v] then
        seen[v] = true
        walk_table(prefix .. k .. ".", v, seen)
      end
    end
  end
end
walk_table("mf.", mf, {[mf] = true})

-- Tables of methods reachable from a metatable's __index.
local function method_tables(mt)
  local out, idx = {}, rawget(mt, "__index")
  if type(idx) == "table" and idx ~= mt then out[#out + 1] = idx end
  if type(idx) == "function" then
    for i = 1, 8 do
      local name, up = debug.getupvalue(idx, i)
      if not name then break end
      if type(up) == "table" then out[#out + 1] = up end
    end
  end
  return out
end

local classes = {}
for key, mt in pairs(debug.getregistry()) do
  if type(key) == "string" and key:match("^mf%.") and type(mt) == "table" then
    classes[#classes + 1] = key
    for k, v in pairs(mt) do
      if type(v) == "function" and k ~= "__index" then
        add_target(key .. ":" .. k, k, v, key)
      end
    end
    if type(mt.__index) == "function" then add_target(key .. ":__index", "__index", mt.__index, key) end
    local seen = {}
    for _, m in ipairs(method_tables(mt)) do
      for k, v in pairs(m) do
        if type(v) == "function" and type(k) == "string" and not seen[k] then
          seen[k] = true
          add_target(key .. ":" .. k, k, v, key)
        end
      end
    end
  end
end
-- Dataset is a Lua class (a table with methods), reached from mf.data.
for k, v in pairs(mf.data.Dataset) do
  if type(v) == "function" and type(k) == "string" and not k:match("^__") then
    add_target("mf.data.Dataset:" .. k, k, v, "mf.data.Dataset")
  end
end
-- lib/'s classes (streaming metrics, layers, models): their public methods
-- are the ones lib.publish_methods wrapped (functions made in lib/util.lua),
-- found along each object's chain of class tables; setup puts an object of
-- each class in the pools.
local lib_makers = {
  ["mf.metrics.Mean"] = function() return mf.metrics.Mean() end,
  ["mf.metrics.Sum"] = function() return mf.metrics.Sum() end,
  ["mf.metrics.Accuracy"] = function() return mf.metrics.Accuracy() end,
  ["mf.metrics.BinaryAccuracy"] = function() return mf.metrics.BinaryAccuracy() end,
  ["mf.metrics.CategoricalAccuracy"] = function() return mf.metrics.CategoricalAccuracy() end,
  ["mf.metrics.SparseCategoricalAccuracy"] = function()
    return mf.metrics.SparseCategoricalAccuracy()
  end,
  ["mf.layers.Dense"] = function() local d = mf.layers.Dense(2); d(mf.ones{1, 2}); return d end,
  ["mf.layers.LSTM"] = function() return mf.layers.LSTM(2, {stateful = true}) end,
  ["mf.layers.Embedding"] = function() return mf.layers.Embedding(4, 2, {mask_zero = true}) end,
  ["mf.layers.Sequential"] = function() return mf.layers.Sequential{mf.layers.Dense(2)} end,
  ["mf.layers.Conv2D"] = function() return mf.layers.Conv2D(2, 3, {padding = "SAME"}) end,
  ["mf.layers.BatchNormalization"] = function() return mf.layers.BatchNormalization() end,
  ["mf.layers.Dropout"] = function() return mf.layers.Dropout(0.5) end,
}
local lib_classes = {}
for class in pairs(lib_makers) do lib_classes[#lib_classes + 1] = class end
table.sort(lib_classes)
for _, class in ipairs(lib_classes) do
  local seen, cls = {}, getmetatable(lib_makers[class]())
  while type(cls) == "table" do
    for k, v in pairs(cls) do
      if type(v) == "function" and type(k) == "string" and not seen[k] and
         debug.getinfo(v, "S").source == "@lib/util.lua" then
        seen[k] = true
        add_target(class .. ":" .. k, k, v, class)
      end
    end
    local up = getmetatable(cls)
    cls = up and rawget(up, "__index")
  end
end
table.sort(targets, function(a, b) return a.name < b.name end)
table.sort(classes)

-- ---- value pools ------------------------------------------------------------

local pools = {}
local friendly = {}   -- well-formed tensors for gen_friendly, made by setup

local function class_of(v)
  local mt = getmetatable(v)
  local name = type(mt) == "table" and rawget(mt, "__name")
  return type(name) == "string" and name or nil
end

local function pool_add(kind, v)
  local p = pools[kind]
  if not p then p = {}; pools[kind] = p end
  if #p < POOL_MAX then p[#p + 1] = v else p[R(#p)] = v end
end

local function small_enough(v)
  local ok, n = pcall(function() return v:numel() end)
  return not ok or (math.type(n) == "integer" and n <= KEEP_NUMEL)
end

local function keep(v, depth)
  local c = class_of(v)
  if c then
    if (c ~= "mf.Tensor" and c ~= "mf.Variable") or small_enough(v) then pool_add(c, v) end
  elseif type(v) == "table" and (depth or 0) < 1 then
    pool_add("table", v)
    for i = 1, math.min(#v, 8) do keep(v[i], 1) end
  elseif type(v) == "function" then
    -- a function the API returned (a learning-rate schedule, an iterator)
    -- goes on as a callback: its errors name it, not the function called
    pool_add("function", function(...)
      local r = table.pack(pcall(v, ...))
      if not r[1] then error("fuzzfn: " .. tostring(r[2]), 0) end
      return table.unpack(r, 2, r.n)
    end)
  end
end

local function pick(kind)
  local p = pools[kind]
  if p and #p > 0 then return p[R(#p)] end
  return nil
end

local numbers = {0, 1, 2, 3, -1, -2, 0.5, -0.5, 1e-3, 7, 100, 65536, 2 ^ 40, 2 ^ 62,
                 math.maxinteger, math.mininteger, 1e308, -1e308, 1 / 0, -1 / 0, 0 / 0, 5e-324,
                 0.1, 1e6}
local strings = {"", "float32", "float64", "int32", "int64", "bool", "uint8", "float16", "SAME", "VALID",
                 "NHWC", "NCHW", "none", "zero", "x", "a/b", "w:0", "add", "m", "v", "momentum",
                 "ok.safetensors", "ok.csv", "ok.idx", "ok.idx.gz", "bad.bin", "out.safetensors",
                 "out.dot", "missing/none.csv", ".", "data", "training", "ops", "\0x",
                 string.rep("z", 5000), "nan", "sum", "mean", "__metadata__"}
local shapes = {{}, {0}, {1}, {3}, {2, 3}, {3, 2}, {2, 2}, {1, 4, 4, 1}, {2, 3, 3, 2}, {-1},
                {-1, 3}, {2, -5}, {0, 0}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {2 ^ 40, 2 ^ 40},
                {1e7, 1e7}, {0, 2 ^ 40, 2 ^ 40}, {2 ^ 31, 2 ^ 31, 0}, {math.maxinteger}, {1.5}, {"a"}, {2, nil, 3}, {3, 3, 3},
                {1, 1, 1, 1, 1, 1, 1, 1}, {4}}

local function gen_shape()
  if R() < 0.7 then return shapes[R(#shapes)] end
  local s = {}
  for i = 1, R(0, 4) do s[i] = R(0, 4) end
  return s
end

local gen_value

local function gen_nested()
  local r = R(6)
  if r == 1 then return {{1, 2}, {3, 4}} end
  if r == 2 then return {{1}, {1, 2}} end
  if r == 3 then return {1, 0 / 0, 1 / 0, -1 / 0} end
  if r == 4 then return {true, false} end
  if r == 5 then return {{{1.5}}} end
  return {1, "x", {}}
end

local option_keys = {"dtype", "name", "axis", "keepdims", "seed", "mean", "stddev", "minval",
                     "maxval", "persistent", "watch_accessed_variables", "trainable", "header",
                     "columns", "var_list", "global_step", "unconnected", "output_gradients",
                     "schedule", "data_format", "dilations", "labels", "logits", "use_norm",
                     "argnums", "grad_ys", "eps", "atol", "rtol", "gain", "use_nesterov",
                     "initial_accumulator_value", "decay", "momentum", "epsilon", "beta1",
                     "beta2", "precision", "threshold", "edgeitems", "linewidth", "batch_size",
                     "drop_remainder", "staircase", "validate_shape", "shape", "value"}

local function gen_options(depth)
  local t = {}
  for _ = 1, R(0, 3) do t[option_keys[R(#option_keys)]] = gen_value(depth + 1) end
  if R() < 0.3 then t[1] = gen_value(depth + 1) end
  return t
end

local function gen_list(depth)
  local t = {}
  for i = 1, R(0, 4) do t[i] = R() < 0.7 and pick("mf.Tensor") or gen_value(depth + 1) end
  return t
end

local function any_object()
  local names = {}
  for k, p in pairs(pools) do if #p > 0 then names[#names + 1] = k end end
  table.sort(names)
  if #names == 0 then return nil end
  return pick(names[R(#names)])
end

-- One random argument. Deeper levels get plainer values.
function gen_value(depth)
  depth = depth or 0
  local r = R(100)
  if depth > 2 then r = R(30) end
  if r <= 25 then return pick("mf.Tensor")
  elseif r <= 33 then return numbers[R(#numbers)]
  elseif r <= 40 then return R(-2, 5)
  elseif r <= 45 then return strings[R(#strings)]
  elseif r <= 55 then return gen_shape()
  elseif r <= 60 then return gen_nested()
  elseif r <= 68 then return gen_options(depth)
  elseif r <= 75 then return gen_list(depth)
  elseif r <= 81 then return nil
  elseif r <= 84 then return R() < 0.5
  elseif r <= 93 then return any_object()
  elseif r <= 96 then return pick("function")
  else return pick("mf.Variable") end
end

-- ---- callbacks --------------------------------------------------------------

-- Callbacks passed to the API. Their own errors are tagged so the check
-- below tells them from the API's.
local function cb(body)
  return function(...)
    local r = table.pack(pcall(body, ...))
    if not r[1] then error("fuzzfn: " .. tostring(r[2]), 0) end
    return table.unpack(r, 2, r.n)
  end
end

local callbacks = {
  cb(function(...) return ... end),
  cb(function(x) return x * 2 end),
  cb(function() error("boom") end),
  cb(function() return mf.ones{2} end),
  cb(function(x) return mf.reduce_sum(x) end),
  cb(function(a) return mf.reduce_sum(mf.multiply(a, a)) end),
  cb(function(x) return x, function(dy) return dy end end),
  cb(function(x) return x, function() return nil end end),
  cb(function() return nil end),
  cb(function() return "str" end),
  cb(function(x) return mf.reduce_sum(x), 3 end),
  cb(function() local v = pick("mf.Variable"); return v and mf.reduce_sum(v * v) end),
  cb(function() return pick("mf.Tensor") end),
}

-- ---- seed objects -----------------------------------------------------------

local function setup()
  local dts = {"float32", "float64", "int32", "int64", "bool", "uint8"}
  for _, dt in ipairs(dts) do
    pool_add("mf.Tensor", mf.ones({2, 3}, dt))
    pool_add("mf.Tensor", mf.zeros({}, dt))
    pool_add("mf.Tensor", mf.zeros({0, 3}, dt))
  end
  pool_add("mf.Tensor", mf.tensor{{1, 0 / 0}, {1 / 0, -1 / 0}})
  pool_add("mf.Tensor", mf.tensor{{{{1}, {2}}, {{3}, {4}}}})
  pool_add("mf.Tensor", mf.random.normal{1, 4, 4, 2})
  pool_add("mf.Tensor", mf.tensor({0, 2, 1}, "int64"))
  pool_add("mf.Tensor", mf.ones{3, 3})
  local closed = mf.ones{2}
  getmetatable(closed).__close(closed)
  pool_add("mf.Tensor", closed)
  pool_add("mf.Variable", mf.Variable(mf.ones{2, 2}, {name = "v"}))
  pool_add("mf.Variable", mf.Variable(mf.zeros{3}, {trainable = false}))
  for i = 1, 2 do
    local g = mf.Graph()
    g:as_default(function()
      local x = mf.placeholder("float32", {-1, 2}, "x")
      pool_add("mf.Tensor", x)
      pool_add("mf.Tensor", mf.matmul(x, mf.ones{2, 2}))
      pool_add("mf.Variable", mf.Variable(mf.ones{2}))
    end)
    pool_add("mf.Graph", g)
    pool_add("mf.Session", mf.Session(g))
  end
  local s = mf.Session(pick("mf.Graph"))
  s:close()
  pool_add("mf.Session", s)
  pool_add("mf.GradientTape", mf.GradientTape())
  local stopped = mf.GradientTape{persistent = true}
  stopped:stop()
  pool_add("mf.GradientTape", stopped)
  local t = mf.GradientTape()
  getmetatable(t).__close(t)
  pool_add("mf.GradientTape", t)
  pool_add("mf.train.Optimizer", mf.train.AdamOptimizer(0.1))
  pool_add("mf.train.Optimizer", mf.train.GradientDescentOptimizer(0.1))
  pool_add("mf.train.Saver", mf.train.Saver({pools["mf.Variable"][1]}))
  pool_add("mf.data.Dataset", mf.data.Dataset.from_tensor_slices(mf.ones{4, 2}))
  pool_add("mf.Initializer", mf.initializers.glorot_uniform{seed = 1})
  for _, class in ipairs(lib_classes) do pool_add(class, lib_makers[class]()) end
  for _, f in ipairs(callbacks) do pool_add("function", f) end
  friendly = {mf.tensor{{1, 2}, {3, 4}}, mf.tensor{{0.5, -1}, {2, 0}}, mf.ones{2, 2},
              mf.tensor{1, 2, 3, 4}, mf.random.normal{1, 4, 4, 2}, mf.random.normal{2, 2, 2, 2},
              mf.tensor({1, 2}, "int64"), mf.tensor(3), mf.Variable(mf.ones{2, 2}), mf.eye(2),
              mf.Variable(mf.tensor{1, 2, 3, 4})}
  -- files for the readers (the current directory is a scratch directory)
  mf.save("ok.safetensors", {a = mf.ones{2}, b = mf.tensor({1, 2}, "int64")})
  local f = assert(io.open("ok.csv", "wb")); f:write("a,b\n1,2\n3,4\n"); f:close()
  f = assert(io.open("ok.idx", "wb"))
  f:write("\0\0\8\2\0\0\0\2\0\0\0\2\1\2\3\4"); f:close()
  f = assert(io.open("bad.bin", "wb")); f:write("\255\0\0\0\0\0\0\0{"); f:close()
end

-- ---- one call ---------------------------------------------------------------

local hang = false
local function hook()
  hang = debug.traceback("where it ran", 2)
  error("fuzz: call ran over " .. MAX_STEPS .. " Lua instructions", 0)
end

local function describe(v)
  local c = class_of(v)
  if c then return c end
  if type(v) == "table" then return "table#" .. #v end
  if type(v) == "string" then return string.format("%q", v:sub(1, 20)) end
  return tostring(v)
end

-- Well-formed arguments (matching float shapes, small valid integers, a
-- known dtype), so a third of the calls get past the argument checks and
-- reach the kernels, gradients and graph code behind them ('friendly' is
-- filled by setup).

local function gen_friendly()
  local r = R(12)
  if r <= 7 then return friendly[R(#friendly)]
  elseif r == 6 then return R(1, 2)
  elseif r == 7 then return ({{2, 2}, {4}, {1, 4}, {2, 2, 1, 1}})[R(4)]
  elseif r == 8 then return ({"float32", "SAME", "VALID", "float64"})[R(4)]
  elseif r == 9 then return {friendly[R(#friendly)], friendly[R(#friendly)]}
  elseif r == 10 then return R() < 0.5 and 1 or {1, 1, 1, 1}
  else return {} end
end

-- The random walk's arguments: random values, or (40%) friendly ones.
local function gen_args_random(t)
  local args, n = {}, R(0, 4)
  local nice = R() < 0.4
  local gen = nice and gen_friendly or gen_value
  if nice then n = R(1, 3) end
  for i = 1, n do args[i] = gen(0) end
  if nice and (t.class == "mf.Tensor" or t.class == "mf.Variable") then
    args[1] = friendly[R(#friendly)]
  elseif t.class and R() < 0.85 then
    args[1] = pick(t.class) or args[1]
    n = math.max(n, 1)
  end
  return args, n
end

-- ---- shaped calls -----------------------------------------------------------

-- Random arguments rarely fit structured functions (matmul needs matching
-- inner dimensions, conv2d an NHWC input and an HWIO filter, a loss its
-- labels/logits pair, Session:run a fetch of its own graph), so their success
-- paths would go unfuzzed. A shaper builds a near-valid call for one target;
-- then, half of the time, mutate() changes ONE argument slightly (a dim off
-- by one, another dtype, NaN, a negative or empty value), so both the
-- success path and the error paths just beside it run. FUZZ_MODE=random
-- turns shapers off (the plain walk), FUZZ_MODE=shaped uses them for every
-- target that has one; the default mixes them into SHAPED_P of the calls.
local MODE = os.getenv("FUZZ_MODE") or "mixed"
local SHAPED_P = ({random = 0, shaped = 1})[MODE] or 0.35
local MUTATE_P = 0.5

local FLOATS = {"float32", "float64"}
local function fdt() return FLOATS[R(2)] end
local function rn(shape, dt) return mf.random.normal(shape, {dtype = dt or "float32"}) end
local function ru(shape, lo, hi, dt)
  return mf.random.uniform(shape, {minval = lo, maxval = hi, dtype = dt or "float32"})
end
local function dims(n, lo, hi)
  local s = {}
  for i = 1, n do s[i] = R(lo or 1, hi or 4) end
  return s
end
local function labels(b, c, dt)   -- 1-based class ids, as the API takes them
  local l = {}
  for i = 1, b do l[i] = R(c) end
  return mf.tensor(l, dt or "int64")
end
local function stride4() local s = R(2); return R() < 0.5 and s or {1, s, s, 1} end
local function sval(s) return type(s) == "table" and s[2] or s end
local function pad_s() return R() < 0.5 and "SAME" or "VALID" end
local function out_dim(n, k, s, padding)
  if padding == "SAME" then return (n + s - 1) // s end
  return (n - k) // s + 1
end

-- An NHWC input, an HWIO filter and the conv's output shape.
local function conv_parts()
  local dt, s, p = fdt(), stride4(), pad_s()
  local n, h, w, c, o = R(1, 2), R(2, 6), R(2, 6), R(1, 3), R(1, 3)
  local kh, kw = R(1, math.min(h, 3)), R(1, math.min(w, 3))
  local x, f = rn({n, h, w, c}, dt), rn({kh, kw, c, o}, dt)
  local oshape = {n, out_dim(h, kh, sval(s), p), out_dim(w, kw, sval(s), p), o}
  return x, f, s, p, oshape, dt
end

-- A small graph: placeholder x, a variable w, y = sum(x @ w); with a session
-- whose variables are initialised.
local function small_graph()
  local g, parts = mf.Graph(), {}
  g:as_default(function()
    parts.x = mf.placeholder("float32", {-1, 2}, "x")
    parts.w = mf.Variable(mf.ones{2, 2}, {name = "w"})
    parts.y = mf.reduce_sum(mf.matmul(parts.x, parts.w))
    parts.init = mf.global_variables_initializer()
  end)
  parts.g = g
  return parts
end

local function eager_loss()
  local v = mf.Variable(rn{2, 2})
  return v, cb(function() return mf.reduce_sum(v * v) end)
end

local function one_of(...) local t = {...}; return t[R(#t)] end

-- shaper(t) returns args, n [, graph to build in]. Keyed by a target's
-- short name; methods get their object as args[1] (see shaped_args).
local shapers = {}
local function shape_for(names, fn) for n in names:gmatch("%S+") do shapers[n] = fn end end

shape_for("matmul", function()
  local dt, m, k, n = fdt(), R(1, 4), R(1, 4), R(1, 4)
  local ta, tb = R() < 0.3, R() < 0.3
  local pre = R() < 0.3 and {R(1, 3)} or {}
  local function sh(a, b) local s = {table.unpack(pre)}; s[#s + 1] = a; s[#s + 1] = b; return s end
  local a = rn(ta and sh(k, m) or sh(m, k), dt)
  local b = rn(tb and sh(n, k) or sh(k, n), dt)
  if ta or tb then return {a, b, {transpose_a = ta, transpose_b = tb}}, 3 end
  return {a, b}, 2
end)
shape_for("tensordot", function()
  local dt, m, k, n = fdt(), R(1, 4), R(1, 4), R(1, 4)
  return {rn({m, k}, dt), rn({k, n}, dt), one_of(1, {{2}, {1}}, 0)}, 3
end)
shape_for("trace", function() local n = R(1, 4); return {rn({n, n}, fdt())}, 1 end)
shape_for("conv2d", function()
  local x, f, s, p = conv_parts()
  return {x, f, s, p}, 4
end)
shape_for("conv2d_backprop_input", function()
  local x, f, s, p, os = conv_parts()
  return {x.shape, f, rn(os, f.dtype), s, p}, 5
end)
shape_for("conv2d_backprop_filter", function()
  local x, f, s, p, os = conv_parts()
  return {x, f.shape, rn(os, x.dtype), s, p}, 5
end)
shape_for("max_pool avg_pool", function()
  local h, w, k, s = R(2, 6), R(2, 6), R(1, 2), R(1, 2)
  return {rn({R(1, 2), h, w, R(1, 3)}, fdt()), one_of(k, {1, k, k, 1}), one_of(s, {1, s, s, 1}),
          pad_s()}, 4
end)
shape_for("softmax_cross_entropy_with_logits", function()
  local dt, b, c = fdt(), R(1, 4), R(2, 5)
  return {{labels = mf.nn.softmax(rn({b, c}, dt)), logits = rn({b, c}, dt)}}, 1
end)
shape_for("sparse_softmax_cross_entropy_with_logits", function()
  local b, c = R(1, 4), R(2, 5)
  return {{labels = labels(b, c, one_of("int32", "int64")), logits = rn({b, c}, fdt())}}, 1
end)
shape_for("sigmoid_cross_entropy_with_logits", function()
  local dt, s = fdt(), dims(R(1, 2))
  return {{labels = ru(s, 0, 1, dt), logits = rn(s, dt)}}, 1
end)
shape_for("bias_add", function()
  local dt, s = fdt(), dims(R(2, 4))
  return {rn(s, dt), rn({s[#s]}, dt)}, 2
end)
shape_for("softmax log_softmax", function() return {rn(dims(R(1, 3)), fdt()), one_of(-1, 1)}, 2 end)
shape_for("dropout", function() return {rn(dims(2), fdt()), one_of(0, 0.5, 0.9), {seed = R(9)}}, 3 end)
shape_for("l2_loss global_norm", function(t)
  if t.short == "global_norm" then return {{rn(dims(2)), rn(dims(1))}}, 1 end
  return {rn(dims(2), fdt())}, 1
end)
shape_for("clip_by_global_norm", function() return {{rn(dims(2)), rn(dims(1))}, one_of(1, 0.5)}, 2 end)
shape_for("one_hot", function()
  local d = R(1, 5)
  return {labels(R(1, 4), d, one_of("int32", "int64")), d}, 2
end)
shape_for("gather", function()
  local s = dims(2, 2, 4)
  local ax = R(2)
  return {rn(s), labels(R(1, 3), s[ax]), ax}, 3
end)
shape_for("slice", function()
  local s = dims(2, 2, 4)
  local b = {R(s[1]), R(s[2])}
  return {rn(s), b, {R(0, s[1] - b[1] + 1), one_of(-1, 1)}}, 3
end)
shape_for("split", function()
  local s = {R(1, 3) * 2, R(1, 3)}
  return {rn(s), one_of(2, 1, {1, s[1] - 1}), 1}, 3
end)
shape_for("concat stack", function(t)
  local s = dims(2)
  return {{rn(s), rn(s), rn(s)}, one_of(1, 2, -1)}, 2
end)
shape_for("unstack", function() return {rn(dims(2)), one_of(1, 2)}, 2 end)
shape_for("tile", function() return {rn(dims(2)), {R(1, 3), R(1, 2)}}, 2 end)
shape_for("pad", function() return {rn(dims(2)), {{R(0, 2), R(0, 1)}, {R(0, 1), R(0, 2)}}, one_of(0, 9)}, 3 end)
shape_for("reshape", function()
  local a, b = R(1, 4), R(1, 4)
  return {rn({a, b}), one_of({b, a}, {a * b}, {-1}, {a, -1, 1})}, 2
end)
shape_for("transpose", function() return {rn(dims(3)), one_of({3, 1, 2}, {2, 1, 3}, nil)}, 2 end)
shape_for("reverse", function() return {rn(dims(2)), one_of(1, {1, 2}, -1)}, 2 end)
shape_for("squeeze expand_dims", function(t)
  if t.short == "squeeze" then return {rn{2, 1, 3}, one_of(2, nil)}, 2 end
  return {rn(dims(2)), one_of(1, 3, -1)}, 2
end)
shape_for("broadcast_to", function() local n = R(1, 4); return {rn{1, n}, {R(1, 3), n}}, 2 end)
shape_for("reduce_sum reduce_mean reduce_max reduce_min reduce_prod argmax argmin", function(t)
  local x = rn(dims(R(1, 3)), fdt())
  if t.short:match("^arg") then return {x, R(x.ndim)}, 2 end
  return {x, {axis = one_of(1, -1, {1}), keepdims = R() < 0.5}}, 2
end)
shape_for("clip_by_value clip_by_norm", function(t)
  if t.short == "clip_by_norm" then return {rn(dims(2)), one_of(1, 0.1)}, 2 end
  return {rn(dims(2)), -0.5, 0.5}, 3
end)
shape_for("where", function()
  local s = dims(2)
  return {mf.greater(rn(s), 0), rn(s), rn(s)}, 3
end)
shape_for("add subtract multiply divide mod pow maximum minimum equal not_equal less less_equal " ..
          "greater greater_equal __add __sub __mul __div __mod __pow __lt __le", function()
  local dt, s = fdt(), dims(R(0, 3))
  local b = {table.unpack(s)}
  if #b > 0 and R() < 0.3 then b[R(#b)] = 1 end
  return {rn(s, dt), R() < 0.2 and 2 or rn(b, dt)}, 2
end)
shape_for("logical_and logical_or", function()
  local s = dims(2)
  return {mf.greater(rn(s), 0), mf.less(rn(s), 0)}, 2
end)
shape_for("logical_not", function() return {mf.greater(rn(dims(2)), 0)}, 1 end)
shape_for("cast", function() return {rn(dims(2)), one_of("float64", "int32", "int64", "bool")}, 2 end)
shape_for("zeros ones fill eye range linspace", function(t)
  if t.short == "fill" then return {dims(2), 1.5}, 2 end
  if t.short == "eye" then return {R(0, 4)}, 1 end
  if t.short == "range" then return {R(0, 3), R(3, 8), one_of(1, 2, nil)}, 3 end
  if t.short == "linspace" then return {0, 1, R(1, 5)}, 3 end
  return {dims(R(0, 3)), one_of("float32", "int64", nil)}, 2
end)
shape_for("normal uniform truncated_normal", function()
  return {dims(2), {seed = R(9), dtype = fdt()}}, 2
end)
shape_for("shuffle", function(t)
  if t.class == "mf.data.Dataset" or t.name:find("Dataset", 1, true) then
    return {mf.data.Dataset.from_tensor_slices(rn{R(1, 6), 2}), R(1, 8), {seed = R(9)}}, 3
  end
  return {rn{R(1, 5), 2}, {seed = R(9)}}, 2
end)
shape_for("placeholder", function()
  return {one_of("float32", "int64"), one_of({-1, 2}, {3}, {}), "p"}, 3, mf.Graph()
end)

-- graph mode
shape_for("run", function()
  local p = small_graph()
  local sess = mf.Session(p.g)
  sess:run(p.init)
  local feeds = {[p.x] = rn{R(1, 3), 2}}
  return {sess, one_of(p.y, {p.y, p.init}, p.w), feeds, R() < 0.3 and {schedule = true} or nil}, 4
end)
shape_for("gradients", function()
  local p = small_graph()
  return {p.y, one_of(p.w, {p.w, p.x})}, 2, p.g
end)
shape_for("global_variables_initializer trainable_variables global_variables", function()
  return {}, 0, small_graph().g
end)
shape_for("group control_dependencies name_scope", function(t)
  local p = small_graph()
  if t.short == "group" then return {{p.init, p.y}}, 1, p.g end
  if t.short == "name_scope" then return {"layer", cb(function() return mf.add(p.y, 1) end)}, 2, p.g end
  return {{p.init}, cb(function() return mf.identity(p.y) end)}, 2, p.g
end)
shape_for("get_tensor nodes to_dot", function(t)
  local p = small_graph()
  return {p.g, t.short == "get_tensor" and one_of("x:0", "w:0", p.y.name) or nil}, 2
end)

-- eager autodiff
shape_for("gradient explain", function(t)
  local v = mf.Variable(rn{2, 2})
  local tape = mf.GradientTape{persistent = R() < 0.5}
  local y = mf.reduce_sum(mf.matmul(v, v))
  if t.short == "explain" then return {tape, y, v}, 3 end
  return {tape, y, one_of(v, {v}), R() < 0.3 and {unconnected = "zero"} or nil}, 4
end)
shape_for("watch", function() return {mf.GradientTape(), rn{2}}, 2 end)
shape_for("grad value_and_grad custom_gradient", function(t)
  if t.short == "custom_gradient" then
    return {cb(function(x) return x * 2, function(dy) return dy * 2 end end)}, 1
  end
  return {cb(function(x) return mf.reduce_sum(x * x) end)}, 1
end)
shape_for("gradcheck", function()
  return {cb(function(x) return mf.reduce_sum(mf.tanh(x)) end), {rn({2}, "float64")}}, 2
end)
shape_for("__call", function(t)
  if t.class == "mf.Function" then
    return {mf.trace(cb(function(x) return x * x + 1 end)), rn(dims(R(1, 2)))}, 2
  end
  if t.class == "mf.Initializer" then
    return {mf.initializers.glorot_uniform{seed = R(9)}, dims(2), fdt()}, 3
  end
  return nil
end)

-- training
local OPTS = {function() return mf.train.GradientDescentOptimizer(0.1) end,
              function() return mf.train.MomentumOptimizer(0.1, 0.9) end,
              function() return mf.train.AdagradOptimizer(0.1) end,
              function() return mf.train.RMSPropOptimizer(0.01) end,
              function() return mf.train.AdamOptimizer(0.01) end}
local function an_optimizer() return OPTS[R(#OPTS)]() end
shape_for("minimize compute_gradients", function()
  local v, loss = eager_loss()
  return {an_optimizer(), loss, R() < 0.5 and {var_list = {v}} or nil}, 3
end)
shape_for("apply_gradients get_slot get_slot_names", function(t)
  local v, loss = eager_loss()
  local opt = mf.train.AdamOptimizer(0.01)
  local pairs_ = opt:compute_gradients(loss)
  if t.short == "apply_gradients" then return {opt, pairs_}, 2 end
  opt:apply_gradients(pairs_)
  return {opt, v, one_of("m", "v")}, 3
end)
shape_for("save load", function(t)
  local path = "shaped.safetensors"
  mf.save(path, {a = rn{2, 2}, b = mf.tensor({1, 2}, "int64")})
  if t.short == "load" then return {path}, 1 end
  if t.class then return nil end   -- Saver:save below
  return {one_of(path, "shaped2.safetensors"), {a = rn(dims(2)), c = mf.ones({3}, "int32")}}, 2
end)
shapers["mf.train.Saver:save"] = function()
  local v = mf.Variable(rn{2})
  return {mf.train.Saver({v}), "saver.safetensors"}, 2
end
shapers["mf.train.Saver:restore"] = function()
  local v = mf.Variable(rn{2})
  local s = mf.train.Saver({v})
  s:save("saver_r.safetensors")
  return {s, "saver_r.safetensors"}, 2
end
shape_for("Saver", function() return {{mf.Variable(rn{2})}}, 1 end)

-- data
local function a_dataset()
  local n = R(1, 6)
  return mf.data.Dataset.from_tensor_slices(one_of(rn{n, 2}, {rn{n, 2}, labels(n, 3)}))
end
shape_for("from_tensor_slices", function() return {one_of(rn{R(1, 5), 2}, {rn{3, 2}, rn{3}})}, 1 end)
shape_for("batch", function() return {a_dataset(), R(1, 4), {drop_remainder = R() < 0.5}}, 3 end)
shape_for("epochs", function() return {a_dataset(), R(1, 3)}, 2 end)
shape_for("iter", function()
  local ds = a_dataset():batch(R(1, 3))
  if R() < 0.5 then ds = ds:epochs(2) end
  return {ds}, 1
end)
shape_for("read_csv read_idx", function(t)
  if t.short == "read_idx" then return {"ok.idx"}, 1 end
  return {"ok.csv", one_of({header = true}, {header = true, columns = {1}}, nil)}, 2
end)

shape_for("assign assign_add assign_sub", function()
  local s = dims(2)
  return {mf.Variable(rn(s)), rn(s)}, 2
end)
shape_for("as_default", function()
  return {mf.Graph(), cb(function() return mf.add(mf.placeholder("float32", {2}), 1) end)}, 2
end)
shapers["mf.Session"] = function() return {small_graph().g}, 1 end
shape_for("variables_initializer", function()
  local p = small_graph()
  return {{p.w}, one_of("init", nil)}, 2, p.g
end)
shape_for("exponential_decay", function()
  -- the eager global step is one Variable for the whole run: once the walk
  -- closes it, it stays closed, so a fresh step Variable is used too
  local gs = one_of(mf.train.global_step(), mf.Variable(mf.tensor(R(0, 50), "int64"),
                    {trainable = false}), R(0, 50))
  return {0.1, gs, R(1, 100), one_of(0.5, 0.96), {staircase = R() < 0.5}}, 5
end)
shape_for("MomentumOptimizer RMSPropOptimizer AdagradOptimizer AdamOptimizer", function(t)
  if t.short == "MomentumOptimizer" then return {0.1, 0.9, {use_nesterov = R() < 0.5}}, 3 end
  if t.short == "RMSPropOptimizer" then return {0.01, {decay = 0.9, momentum = 0.1}}, 2 end
  return {0.01}, 1
end)
shape_for("plot", function()
  return {one_of({3, 2, 1.5, 1.2}, mf.tensor{3, 2, 1}), {width = 20, height = 4, print = false}}, 2
end)

local function a_function()
  local fn = mf.trace(cb(function(x) return mf.reduce_sum(x * x) end))
  if R() < 0.7 then fn(rn{2}) end
  return fn
end
for _, m in ipairs{"graph", "trace_count", "__tostring"} do
  shapers["mf.Function:" .. m] = function() return {a_function(), rn{2}}, m == "graph" and 2 or 1 end
end
shapers["mf.Graph:write_dot"] = function()
  return {small_graph().g, one_of("shaped.dot", "missing/none.dot")}, 2
end
shapers["mf.Operation:__index"] = function()
  return {small_graph().init, one_of("name", "type", "inputs", "device")}, 2
end
shapers["mf.data.Dataset.__tostring"] = function() return {a_dataset():batch(2)}, 1 end

-- lib/: models and fit, layer calls, metrics, mf.grad, the writers' paths
local function a_model()
  return one_of(mf.layers.Sequential{mf.layers.Dense(3, {activation = "relu"}),
                                     mf.layers.Dense(2)},
                mf.layers.Sequential{mf.layers.Dense(2)})
end
local function fit_data()
  local n = R(1, 6)
  return mf.data.Dataset.from_tensor_slices{rn{n, 4}, labels(n, 2)}:batch(R(1, 3))
end
local function fit_opts()
  return {loss = mf.losses.sparse_categorical_crossentropy{from_logits = true},
          optimizer = an_optimizer(), epochs = R(1, 2), verbose = 0, trace = R() < 0.5,
          metrics = R() < 0.5 and {"accuracy"} or nil,
          validation_data = R() < 0.3 and fit_data() or nil}
end
shape_for("fit evaluate", function(t)
  local m = a_model()
  if t.short == "evaluate" then
    pcall(m.fit, m, fit_data(), fit_opts())
    return {m, fit_data(), {loss = mf.losses.sparse_categorical_crossentropy{from_logits = true}}}, 3
  end
  return {m, fit_data(), fit_opts()}, 3
end)
shape_for("predict", function() return {a_model(), rn{R(1, 4), 4}}, 2 end)
shape_for("__call", function(t)
  if t.class and t.class:match("^mf%.layers%.") then
    local layer = pick(t.class)
    return {layer, layer and layer.kernel_size and rn{1, 4, 4, 2} or rn{2, 4}}, 2
  end
  return nil
end)
shape_for("update_state", function(t)
  return {pick(t.class) or mf.metrics.Mean(), rn{R(1, 4)}}, 2
end)
shapers["mf.grad"] = function()
  return {cb(function(v) return mf.reduce_sum(v * v) end)}, 1
end
shape_for("save", function() return {one_of("w_out.safetensors", "missing/w.safetensors"),
                                      {a = rn{2}, b = rn{3}}}, 2 end)

-- A method shaped for mf.X works for Tensor:X and Variable:X: the object
-- goes first, a Variable made from the tensor for Variable methods.
local function shaped_args(t)
  local s = shapers[t.name] or shapers[t.short]
  if not s then return nil end
  local ok, args, n, g = pcall(s, t)
  if not ok or not args then return nil end
  if t.class == "mf.Variable" and class_of(args[1]) == "mf.Tensor" then
    local okv, v = pcall(mf.Variable, args[1])
    if okv then args[1] = v end
  end
  return args, n, g
end

-- ---- mutation of one argument -----------------------------------------------

local function other_dtype(dt)
  local all = {"float32", "float64", "int32", "int64", "bool"}
  local d = all[R(#all)]
  return d == dt and "int32" or d
end

local function mutate_shape(s)
  local m = {table.unpack(s)}
  local r = R(6)
  if r == 1 and #m > 0 then m[R(#m)] = m[R(#m)] + one_of(1, -1)
  elseif r == 2 then m[#m + 1] = R(1, 3)
  elseif r == 3 and #m > 0 then table.remove(m, R(#m))
  elseif r == 4 and #m > 0 then m[R(#m)] = 0
  elseif r == 5 and #m > 0 then m[R(#m)] = one_of(-1, -3, 0 / 0, 2 ^ 40)
  else m = {} end
  return m
end

local function mutate_tensor(x)
  local s, dt = x.shape, x.dtype
  for i = 1, #s do if s[i] < 0 then s[i] = 2 end end
  local r = R(6)
  if r == 1 then return mf.zeros(mutate_shape(s), dt)
  elseif r == 2 then return mf.cast(x, other_dtype(dt))
  elseif r == 3 then return mf.fill(s, one_of(0 / 0, 1 / 0, -1 / 0), dt)
  elseif r == 4 then return mf.negative(x)
  elseif r == 5 then return mf.zeros({0}, dt)
  else return mf.zeros({}, dt) end
end

local function mutate_value(v)
  local c = class_of(v)
  if c == "mf.Tensor" then return mutate_tensor(v) end
  if c == "mf.Variable" then return mutate_tensor(v:read_value()) end
  if math.type(v) then
    return one_of(v + 1, v - 1, -v, 0, 0 / 0, 2 ^ 40, v + 0.5, math.mininteger)
  end
  if type(v) == "string" then return one_of("", v .. "x", "float16", "SAME", "NCHW") end
  if type(v) == "table" and not c then
    if v.labels or v.logits then
      local m = {labels = v.labels, logits = v.logits}
      local k = one_of("labels", "logits")
      m[k] = R() < 0.2 and nil or mutate_value(m[k])
      return m
    end
    if #v > 0 and math.type(v[1]) then return mutate_shape(v) end
    if #v > 0 then
      local m = {table.unpack(v)}
      local i = R(#m)
      if R() < 0.3 then table.remove(m, i) else m[i] = mutate_value(m[i]) end
      return m
    end
    return v
  end
  if v == nil then return gen_value(1) end
  return gen_value(1)
end

-- Changes one argument in place (never args[1] of a method: the object).
local function mutate(t, args, n)
  local lo = t.class and 2 or 1
  if n < lo then return n end
  local i = R(lo, n)
  local ok, m = pcall(mutate_value, args[i])
  if ok then args[i] = m end
  return n
end

local shaped_calls = {shaped = 0, mutated = 0}

-- Arguments for one call: shaped (and maybe mutated) with probability
-- SHAPED_P when the target has a shaper, else the random walk's. The third
-- result is the graph a shaped call must be built in, if any.
local function gen_args(t)
  if SHAPED_P > 0 and R() < SHAPED_P then
    local args, n, g = shaped_args(t)
    if args then
      shaped_calls.shaped = shaped_calls.shaped + 1
      if R() < MUTATE_P then
        shaped_calls.mutated = shaped_calls.mutated + 1
        n = mutate(t, args, n)
      end
      return args, n, g or false
    end
  end
  return gen_args_random(t)
end

-- Accepts a message that names the function ('ones: ...', "bad argument #1
-- to 'ones'"), an error from our callbacks, or Lua's own messages about a
-- value a callback got.
-- Operators and in-place updates report the op they ran.
local aliases = {__add = {"add"}, __sub = {"subtract"}, __mul = {"multiply"},
                 __div = {"divide"}, __mod = {"mod"}, __pow = {"pow"}, __unm = {"negative"},
                 assign_add = {"add"}, assign_sub = {"subtract"},
                 minimize = {"compute_gradients", "apply_gradients"},
                 export_onnx = {"onnx.export"}}

local function names_function(t, msg)
  local short = t.short:gsub("^__", "")
  if msg:find(short, 1, true) or msg:find("fuzzfn:", 1, true) then return true end
  -- a metamethod runs for an operator (t.x = 1, #t, t + u): naming the
  -- class ("tensors are immutable", "Variable: cannot set") is the useful way
  for _, alias in ipairs(aliases[t.short] or {}) do
    if msg:find(alias, 1, true) then return true end
  end
  if t.short:match("^__") and t.class then
    local word = t.class:match("([%w]+)$"):lower()   -- "profile report" names ProfileReport
    return msg:lower():gsub(" ", ""):find(word, 1, true) ~= nil
  end
  return false
end

-- Initializer objects report the initializer that made them
-- ("glorot_uniform: expected a shape"), and some delegate to mf.random.
local init_names = {}
for k in pairs(mf.initializers) do init_names[k] = true end

-- Functions the API returns (mf.grad(f), mf.custom_gradient(f), ...) and
-- Initializer objects are callables: passed on (as a Variable's initial
-- value, an optimizer's learning rate, a loss), their own errors name the
-- function that made them ("custom_gradient: f must return ...").
local makers = {custom_gradient = true, grad = true, value_and_grad = true, trace = true,
                random = true}
-- mf.losses.X{options} makes a loss object; called (as minimize's loss, a
-- map function) its errors name X ("mean_squared_error: expected ...")
for k in pairs(mf.losses) do makers[k] = true end

local function names_initializer(args, n, msg)
  if msg:find("^traced function: ") then return true end   -- a Function from mf.trace
  -- a layer or model passed where a callable goes (a Variable's initial value,
  -- a loss) names itself when it is called: "dense_1 (Dense): ..."
  if msg:find("%f[%w][%w_]+ %(%u[%w]*%): ") then return true end
  -- an error raised from Lua code (dataset.lua calling a map function) carries its position
  msg = msg:gsub("^[^%s:]+:%d+: ", "")
  local head = msg:match("^([%w_]+)[:.]") or msg:match("^bad argument #%d+ to '([%w_]+)'")
  return head ~= nil and (init_names[head] or makers[head]) == true
end

-- Messages known not to name the function called, kept visible in the
-- summary (counted as "known") without failing the run. Each entry:
-- target name pattern, message pattern, why. Delete an entry once fixed.
local KNOWN = {
  {".", "^hang: .*mf%.data:", "iterating an endless dataset (epochs() without a count) " ..
   "batched or shuffled by a huge size never ends, as TensorFlow's repeat().batch(n) does; " ..
   "Ctrl-C stops it"},
  {"datasets%.fortunes", "^hang: ", "fortunes() turns 2.5 MB into ids in Lua: about 30 " ..
   "million instructions (0.4 s), past the step limit, not a hang"},
}

local function known(t, msg)
  for _, k in ipairs(KNOWN) do
    if t.name:find(k[1]) and msg:find(k[2]) then return k end
  end
  return nil
end

local stats = {calls = 0, ok = 0, errors = 0, failures = 0, graph_ctx = 0, known = 0}
local known_seen = {}

-- Counts 'msg' as a known exception when it is one; true then.
local function count_known(t, msg)
  local k = known(t, msg)
  if not k then return false end
  stats.known = stats.known + 1
  known_seen[k] = (known_seen[k] or 0) + 1
  return true
end

local failures, seen_failure = {}, {}
local slowest = {t = 0}

local function fail(t, args, n, msg)
  stats.failures = stats.failures + 1
  local key = t.name .. "|" .. tostring(msg):gsub("0x%x+", "")
  if seen_failure[key] then return end
  seen_failure[key] = true
  local d = {}
  for i = 1, n do d[i] = describe(args[i]) end
  local line = string.format("%s(%s) -> %s [call %d]", t.name, table.concat(d, ", "),
                             tostring(msg), stats.calls)
  failures[#failures + 1] = line
  if LOG then
    local f = io.open(LOG, "a")
    if f then f:write(line, "\n"); f:close() end
  end
end

-- A Dataset iterator made by a call is drained for a few elements, so the
-- batching, shuffling and repeating behind it run too (not in random mode,
-- which stays the walk it was). Its errors must name a Dataset step.
local function drain(t, it, args, n)
  hang = false
  debug.sethook(hook, "", MAX_STEPS)
  local ok, err = pcall(function()
    for _ = 1, 16 do if it() == nil then break end end
  end)
  debug.sethook()
  if ok then return end
  local msg = hang and ("hang: " .. hang) or err
  if type(msg) ~= "string" then return fail(t, args, n, "iterating: non-string error") end
  for _, w in ipairs{"batch", "shuffle", "epochs", "iter", "from_tensor_slices", "map", "filter",
                     "take", "skip", "prefetch", "shard", "fuzzfn:"} do
    if not hang and msg:find(w, 1, true) then return end
  end
  -- a layer or model given to map/filter names itself: "sequential_6 (Sequential): ..."
  if not hang and msg:find("%f[%w][%w_]+ %(%u[%w]*%): ") then return end
  -- so does an initializer or loss object given to map
  if not hang and names_initializer(args, n, msg) then return end
  if count_known(t, msg) then return end
  return fail(t, args, n, "iterating: " .. msg)
end

-- ---- hostile calls ------------------------------------------------------------

-- Lua code that runs inside a call (issue #13): in HOSTILE_P of the calls
-- (FUZZ_HOSTILE=p; 1 makes every call hostile, 0 none), the call's tensor
-- and Variable arguments are replaced by fresh copies that hold the last
-- reference to their values, its table arguments get an __index metamethod,
-- and a few garbage objects get finalizers; each of these, when it runs,
-- assigns a Variable operand a new value, closes a tensor operand (a <close>
-- variable) or closes a Variable, or closes the object a method runs on (a
-- Session, a writer, an optimizer: its __close or __gc), then runs a full
-- collection. A binding
-- that uses an operand it does not own then reads freed memory (ASan).
local HOSTILE_P = tonumber(os.getenv("FUZZ_HOSTILE") or "") or 0.25
local hostile_stats = {calls = 0, fired = 0}

local function fresh_copy(v)
  local c = class_of(v)
  if c == "mf.Tensor" then
    local ok, copy = pcall(function() return v:numel() >= 0 and mf.identity(v) end)
    return ok and copy or v
  elseif c == "mf.Variable" then
    local ok, copy = pcall(function() return mf.Variable(mf.identity(v:read_value()) * 1) end)
    return ok and copy or v
  end
  return v
end

-- A C-made object other than a tensor (a Session, a summary writer, a
-- Saver, an optimizer, a tape, a Graph): Lua code inside a call on it may
-- close or free it (issue #35 M2), and the call must notice.
local function closable(v)
  local c = class_of(v)
  local mt = c and c ~= "mf.Tensor" and c ~= "mf.Variable" and getmetatable(v)
  return type(mt) == "table" and type(rawget(mt, "__gc")) == "function"
end

local function havoc(operands)
  hostile_stats.fired = hostile_stats.fired + 1
  pcall(function()
    local x = operands[R(#operands)]
    local c = class_of(x)
    local r = R(3)
    if closable(x) then
      local mt = getmetatable(x)
      ;(rawget(mt, "__close") or rawget(mt, "__gc"))(x)
    elseif c == "mf.Variable" and r <= 2 then
      x:assign(mf.zeros_like(x:read_value()))
    elseif c == "mf.Variable" then
      getmetatable(x).__close(x)
    elseif c == "mf.Tensor" then
      local closing <close> = x   -- closed when this function returns
    end
  end)
  collectgarbage()
end

local function make_hostile(args, n)
  hostile_stats.calls = hostile_stats.calls + 1
  local operands = {}
  for i = 1, n do
    args[i] = fresh_copy(args[i])
    local c = class_of(args[i])
    if c == "mf.Tensor" or c == "mf.Variable" then operands[#operands + 1] = args[i] end
    -- the object a method runs on (its first argument), closed now and then
    if i == 1 and closable(args[i]) and R() < 0.3 then operands[#operands + 1] = args[i] end
  end
  if #operands == 0 then return end
  for i = 1, n do
    local a = args[i]
    if type(a) == "table" and getmetatable(a) == nil then
      -- a metamethod that fires once, then reads as the plain table would
      local fired = false
      setmetatable(a, {__index = function()
        if not fired then fired = true; havoc(operands) end
      end})
    end
  end
  for _ = 1, R(0, 3) do
    setmetatable({}, {__gc = function() havoc(operands) end})
  end
end

-- ---- strict calls: extra arguments and unknown options ----------------------

-- The first STRICT_TRIES calls of each target that return normally (not
-- hostile ones) are made again twice, in the same graph: with one more
-- positional argument (a coroutine, a type no parameter takes), and with an
-- unknown option key (added to a final options table, or as a new final
-- table). Each must raise an error naming the function, as for any other
-- bad input; one that returns silently accepts what it ignores.
-- FUZZ_STRICT=0 turns the check off.
local STRICT_TRIES = tonumber(os.getenv("FUZZ_STRICT") or "") or 2
local EXTRA = coroutine.create(function() end)
local UNKNOWN = "fuzz_unknown_option"
local strict_stats = {calls = 0}

-- Functions that take any number of arguments by design.
local VARIADIC = {
  ["mf.Function:__call"] = "a traced function takes its function's arguments",
  ["mf.init_scope"] = "init_scope(fn, ...) passes the rest to fn",
  ["mf.help"] = "help(x) explains any value",
  ["mf.Function:graph"] = "fn:graph(...) takes the traced function's arguments",
  ["mf.Function:export_onnx"] = "fn:export_onnx(path, ...) takes example arguments",
  ["mf.profile"] = "mf.profile(fn, ...) passes the rest to fn",
  ["mf.GradientTape:stop_recording"] = "tape:stop_recording(fn, ...) passes the rest to fn",
}

local function is_options(v)
  if type(v) ~= "table" or getmetatable(v) ~= nil or #v > 0 then return false end
  for k in pairs(v) do if type(k) ~= "string" then return false end end
  return next(v) ~= nil
end

local function strict_calls(t, args, n, run)
  -- Lua calls a metamethod with its fixed arguments (__call aside: it
  -- takes the caller's)
  if VARIADIC[t.name] or (t.short:match("^__") and t.short ~= "__call") then return end
  local extra = {table.unpack(args, 1, n)}
  extra[n + 1] = EXTRA
  local unknown = {table.unpack(args, 1, n)}
  local m = n
  if n > 0 and is_options(args[n]) then
    local o = {}
    for k, v in pairs(args[n]) do o[k] = v end
    o[UNKNOWN] = true
    unknown[n] = o
  else
    m = n + 1
    unknown[m] = {[UNKNOWN] = true}
  end
  for _, c in ipairs{{extra, n + 1, "an extra argument #" .. (n + 1)},
                     {unknown, m, "an unknown option '" .. UNKNOWN .. "'"}} do
    strict_stats.calls = strict_stats.calls + 1
    local res = run(c[1], c[2])
    if hang then                      -- a hang is the main walk's business
      hang = false
    elseif res and res[1] then
      fail(t, c[1], c[2], "silently accepts " .. c[3])
    elseif res and type(res[2]) == "string" and not names_function(t, res[2]) and
           not names_initializer(c[1], c[2], res[2]) then
      fail(t, c[1], c[2], "refuses " .. c[3] .. " without naming the function: " .. res[2])
    end
  end
end

local function call_one(t)
  local args, n, shaped_g = gen_args(t)
  local hostile = R() < HOSTILE_P
  if hostile then make_hostile(args, n) end
  if TRACE then
    local d = {}
    for i = 1, n do d[i] = describe(args[i]) end
    eprint(string.format("%d %s(%s)", stats.calls + 1, t.name, table.concat(d, ", ")))
  end
  -- a shaped call runs in its own graph or none (false); a random one
  -- sometimes inside a graph of the pool
  local g
  if shaped_g ~= nil then g = shaped_g else g = R() < 0.15 and pick("mf.Graph") end
  local function run(a, k)
    local res
    local function go() res = table.pack(pcall(t.fn, table.unpack(a, 1, k))) end
    hang = false
    debug.sethook(hook, "", MAX_STEPS)
    if g then pcall(g.as_default, g, go) end   -- fails when the graph was freed by hand
    if not res then go() end
    debug.sethook()
    return res
  end
  if g then stats.graph_ctx = stats.graph_ctx + 1 end
  local t0 = os.clock()
  local res = run(args, n)
  local dt = os.clock() - t0
  if dt > slowest.t then slowest = {t = dt, name = t.name} end
  stats.calls = stats.calls + 1
  t.calls = t.calls + 1
  if t.short == "set_num_threads" then mf.set_num_threads(1) end
  if hang then
    if count_known(t, "hang: " .. hang) then return end
    return fail(t, args, n, "hang: " .. hang)
  end
  if res[1] then
    stats.ok = stats.ok + 1
    t.ok = t.ok + 1
    if not hostile and t.ok <= STRICT_TRIES then strict_calls(t, args, n, run) end
    for i = 2, math.min(res.n, 5) do keep(res[i]) end
    if MODE ~= "random" and t.short == "iter" and type(res[2]) == "function" then
      drain(t, res[2], args, n)
    end
    return
  end
  stats.errors = stats.errors + 1
  local msg = res[2]
  if type(msg) ~= "string" then return fail(t, args, n, "non-string error: " .. describe(msg)) end
  if names_function(t, msg) or names_initializer(args, n, msg) then return end
  if count_known(t, msg) then return end
  return fail(t, args, n, msg)
end

-- The engine still computes right after whatever the walk did.
local function sanity()
  local ok, err = pcall(function()
    local a = mf.tensor{{1, 2}, {3, 4}}
    local v = mf.Variable(mf.tensor{1, 1})
    local tape = mf.GradientTape()
    local y = mf.reduce_sum(mf.matmul(a, mf.reshape(v, {2, 1})))
    local g = tape:gradient(y, v)
    assert(y:item() == 10, "matmul+reduce_sum gave " .. tostring(y:item()))
    local gt = g:totable()
    assert(gt[1] == 4 and gt[2] == 6, "gradient gave " .. tostring(g))
  end)
  if not ok then
    stats.failures = stats.failures + 1
    failures[#failures + 1] = "sanity check after " .. stats.calls .. " calls: " .. tostring(err)
  end
end

-- ---- main -------------------------------------------------------------------

setup()
mf.set_num_threads(1)
local t_start = os.clock()
for i = 1, CALLS do
  call_one(targets[R(#targets)])
  if i % 2000 == 0 then sanity() end
  if i % 100000 == 0 then
    eprint(string.format("api_fuzz: %d calls, %d failures, %.0f s", i, stats.failures,
                         os.clock() - t_start))
  end
end
sanity()
-- The hostile finalizers still pending run now, while the state is whole: run
-- by lua_close at exit, the tensors and Variables they make would get no
-- finalizer (Lua sets none during close) and LeakSanitizer would count them.
collectgarbage()
collectgarbage()

local never_ok = {}
for _, t in ipairs(targets) do
  if t.ok == 0 then never_ok[#never_ok + 1] = t.name end
end
eprint(string.format("api_fuzz: seed %d, %d targets (%d classes), %d calls: %d returned, " ..
                     "%d raised a named error (%d known exceptions), %d failures; %d calls inside a graph; " ..
                     "slowest call %.2f s (%s); %.0f s CPU",
                     SEED, #targets, #classes, stats.calls, stats.ok, stats.errors,
                     stats.known, stats.failures, stats.graph_ctx, slowest.t, slowest.name or "-",
                     os.clock() - t_start))
eprint(string.format("api_fuzz: mode %s: %d shaped calls (%d with one argument mutated)",
                     MODE, shaped_calls.shaped, shaped_calls.mutated))
eprint(string.format("api_fuzz: %d hostile calls (operands assigned or closed %d times " ..
                     "by metamethods and finalizers)", hostile_stats.calls, hostile_stats.fired))
eprint(string.format("api_fuzz: %d strict calls (an extra argument, an unknown option)",
                     strict_stats.calls))
eprint(string.format("api_fuzz: %d targets never returned normally: %s", #never_ok,
                     table.concat(never_ok, " ")))
for _, k in ipairs(KNOWN) do
  if known_seen[k] then eprint(string.format("api_fuzz: known (%d calls): %s", known_seen[k], k[3])) end
end
for _, line in ipairs(failures) do eprint("FAIL " .. line) end
if stats.failures > 0 then os.exit(1) end
