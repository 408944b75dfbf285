-- api_fuzz.lua — a seeded random walk over every public moonflow function.
--
-- Run by `make fuzz-api` (the ASan moonflow, from a scratch directory, so
-- every file the calls write lands there):
--   FUZZ_CALLS=n FUZZ_SEED=s moonflow api_fuzz.lua
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
    pool_add("function", v)
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
local strings = {"", "float32", "float64", "int32", "int64", "bool", "float16", "SAME", "VALID",
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
  local dts = {"float32", "float64", "int32", "int64", "bool"}
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

local function gen_args(t)
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

-- Accepts a message that names the function ('ones: ...', "bad argument #1
-- to 'ones'"), an error from our callbacks, or Lua's own messages about a
-- value a callback got.
-- Operators and in-place updates report the op they ran.
local aliases = {__add = {"add"}, __sub = {"subtract"}, __mul = {"multiply"},
                 __div = {"divide"}, __mod = {"mod"}, __pow = {"pow"}, __unm = {"negative"},
                 assign_add = {"add"}, assign_sub = {"subtract"},
                 minimize = {"compute_gradients", "apply_gradients"}}

local function names_function(t, msg)
  local short = t.short:gsub("^__", "")
  if msg:find(short, 1, true) or msg:find("fuzzfn:", 1, true) then return true end
  -- a metamethod runs for an operator (t.x = 1, #t, t + u): naming the
  -- class ("tensors are immutable", "Variable: cannot set") is the useful way
  for _, alias in ipairs(aliases[t.short] or {}) do
    if msg:find(alias, 1, true) then return true end
  end
  if t.short:match("^__") and t.class then
    local word = t.class:match("([%w]+)$"):lower()
    return msg:lower():find(word, 1, true) ~= nil
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

local function names_initializer(args, n, msg)
  if msg:find("^traced function: ") then return true end   -- a Function from mf.trace
  local head = msg:match("^([%w_]+)[:.]")
  return head ~= nil and (init_names[head] or makers[head]) == true
end

-- Messages known not to name the function called, kept visible in the
-- summary (counted as "known") without failing the run. Each entry:
-- target name pattern, message pattern, why. Delete an entry once fixed.
local KNOWN = {
  {".", "^hang: .*mf%.data:", "iterating an endless dataset (epochs() without a count) " ..
   "batched or shuffled by a huge size never ends, as TensorFlow's repeat().batch(n) does; " ..
   "Ctrl-C stops it"},
}

local function known(t, msg)
  for _, k in ipairs(KNOWN) do
    if t.name:find(k[1]) and msg:find(k[2]) then return k end
  end
  return nil
end

local stats = {calls = 0, ok = 0, errors = 0, failures = 0, graph_ctx = 0, known = 0}
local known_seen = {}
local failures, seen_failure = {}, {}
local slowest = {t = 0}

local function fail(t, args, n, msg)
  stats.failures = stats.failures + 1
  local key = t.name .. "|" .. tostring(msg):gsub("0x%x+", "")
  if seen_failure[key] then return end
  seen_failure[key] = true
  local d = {}
  for i = 1, n do d[i] = describe(args[i]) end
  local line = string.format("%s(%s) -> %s", t.name, table.concat(d, ", "), tostring(msg))
  failures[#failures + 1] = line
  if LOG then
    local f = io.open(LOG, "a")
    if f then f:write(line, "\n"); f:close() end
  end
end

local function call_one(t)
  local args, n = gen_args(t)
  if TRACE then
    local d = {}
    for i = 1, n do d[i] = describe(args[i]) end
    eprint(string.format("%d %s(%s)", stats.calls + 1, t.name, table.concat(d, ", ")))
  end
  local res
  local function go() res = table.pack(pcall(t.fn, table.unpack(args, 1, n))) end
  local g = R() < 0.15 and pick("mf.Graph")
  hang = false
  local t0 = os.clock()
  debug.sethook(hook, "", MAX_STEPS)
  if g then
    stats.graph_ctx = stats.graph_ctx + 1
    pcall(g.as_default, g, go)   -- fails when the graph was freed by hand
  end
  if not res then go() end
  debug.sethook()
  local dt = os.clock() - t0
  if dt > slowest.t then slowest = {t = dt, name = t.name} end
  stats.calls = stats.calls + 1
  t.calls = t.calls + 1
  if t.short == "set_num_threads" then mf.set_num_threads(1) end
  if hang then
    local k = known(t, "hang: " .. hang)
    if k then
      stats.known = stats.known + 1
      known_seen[k] = (known_seen[k] or 0) + 1
      return
    end
    return fail(t, args, n, "hang: " .. hang)
  end
  if res[1] then
    stats.ok = stats.ok + 1
    t.ok = t.ok + 1
    for i = 2, math.min(res.n, 5) do keep(res[i]) end
    return
  end
  stats.errors = stats.errors + 1
  local msg = res[2]
  if type(msg) ~= "string" then return fail(t, args, n, "non-string error: " .. describe(msg)) end
  if names_function(t, msg) or names_initializer(args, n, msg) then return end
  local k = known(t, msg)
  if k then
    stats.known = stats.known + 1
    known_seen[k] = (known_seen[k] or 0) + 1
    return
  end
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
eprint(string.format("api_fuzz: %d targets never returned normally: %s", #never_ok,
                     table.concat(never_ok, " ")))
for _, k in ipairs(KNOWN) do
  if known_seen[k] then eprint(string.format("api_fuzz: known (%d calls): %s", known_seen[k], k[3])) end
end
for _, line in ipairs(failures) do eprint("FAIL " .. line) end
if stats.failures > 0 then os.exit(1) end
