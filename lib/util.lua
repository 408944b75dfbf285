-- util.lua — helpers the files of lib/ share through the private table
-- 'lib' (repl/lmf_lib.c runs each file with mf and lib): errors raised at the
-- user's line, option checks, Keras-style unique names, activations, and the
-- small class maker the layers use.
local mf, lib = ...

-- lib.help(name, topic, signature, text, example): the help() entry of a
-- function of lib/, declared beside it (as an op's is in its descriptor and
-- the C functions' in doc/help/<topic>.txt; the fields are help.h's). The
-- example is prompt input; tests/lua/test_shell.lua runs it and checks each
-- "--> value". repl/lmf_lib.c hands lib.help_entries to help().
lib.help_entries = {}
function lib.help(name, topic, signature, text, example)
  for i, v in ipairs{name, topic, signature, text, example} do
    assert(type(v) == "string", "lib.help: field " .. i .. " must be a string")
  end
  lib.help_entries[#lib.help_entries + 1] = {name, topic, signature, text, example}
end

-- Raises 'msg' at the first caller outside lib/ (and outside C functions
-- such as pcall), however deep inside the library the check was.
function lib.raise(msg)
  local level = 2
  local info = debug.getinfo(level, "S")
  while info and (info.source:sub(1, 5) == "@lib/" or info.what == "C") do
    level = level + 1
    info = debug.getinfo(level, "S")
  end
  error(msg, info and level or 1)
end

-- Raises "fname: message" the same way.
function lib.fail(fname, fmt, ...)
  lib.raise(fname .. ": " .. string.format(fmt, ...))
end
local fail = lib.fail

-- Refuses arguments past a function's 'n' parameters (the extra ones are
-- '...'), as every mf function does (trailing nils aside): for functions
-- that check their own arguments instead of lib.publish's wrapper.
function lib.no_more(fname, n, ...)
  local k = select("#", ...)
  while k > 0 and select(k, ...) == nil do k = k - 1 end
  if k > 0 then
    fail(fname, "takes at most %d argument%s, got %d", n, n == 1 and "" or "s", n + k)
  end
end

-- Checks an options table against the set 'keys' (name -> true); returns it
-- ({} when nil). The message is the C bindings' (lmf_check_options).
function lib.check_opts(fname, opts, keys)
  if opts == nil then return {} end
  if type(opts) ~= "table" then
    fail(fname, "options must be a table, got %s", type(opts))
  end
  for k in pairs(opts) do
    if not keys[k] then
      local known = {}
      for name in pairs(keys) do known[#known + 1] = name end
      table.sort(known)
      fail(fname, "unknown option '%s' (known: %s)", tostring(k), table.concat(known, ", "))
    end
  end
  return opts
end

-- A positive integer (3.0 counts as 3), else an error naming 'what'.
function lib.check_count(fname, what, v, allow_zero)
  local iv = math.type(v) and math.tointeger(v)
  if not iv or iv < (allow_zero and 0 or 1) then
    fail(fname, "%s must be a %s integer, got %s", what,
         allow_zero and "non-negative" or "positive",
         type(v) == "number" and tostring(v) or type(v))
  end
  return iv
end

-- A number in [lo, hi) (hi exclusive when 'open'), else an error.
function lib.check_number(fname, what, v, lo, hi)
  if type(v) ~= "number" or v ~= v or v < lo or v > hi then
    fail(fname, "%s must be a number in [%s, %s], got %s", what, lo, hi, tostring(v))
  end
  return v
end

-- Two-element sizes (kernel_size, strides, pool_size): a number n means {n, n}.
function lib.pair(fname, what, v)
  if type(v) == "number" then v = {v, v} end
  if type(v) ~= "table" or #v ~= 2 then
    fail(fname, "%s must be a number or an array of 2 numbers, got %s", what, type(v))
  end
  return {lib.check_count(fname, what, v[1]), lib.check_count(fname, what, v[2])}
end

-- Keras's unique layer names: the first Dense is "dense", then "dense_1"...
-- mf.layers.reset_names() starts again (Keras's clear_session), so that a
-- model built again in one process gets the names of its saved file.
local name_counts = {}
function lib.unique_name(base)
  local k = name_counts[base]
  name_counts[base] = (k or -1) + 1
  return k == nil and base or string.format("%s_%d", base, k + 1)
end
function lib.reset_names() name_counts = {} end

-- Activations by name (Keras's strings) or any function of one tensor.
local activations = { -- lib/activations.lua adds elu, gelu, ...
  linear = function(x) return x end,
  relu = mf.nn.relu, sigmoid = mf.nn.sigmoid, tanh = mf.nn.tanh,
  softplus = mf.nn.softplus,
  softmax = function(x) return mf.nn.softmax(x) end,
  log_softmax = function(x) return mf.nn.log_softmax(x) end,
}
lib.activations = activations

function lib.activation(fname, a)
  if a == nil then return nil end
  if type(a) == "function" then return a end
  local f = type(a) == "string" and activations[a]
  if not f then
    local names = {}
    for k in pairs(activations) do names[#names + 1] = k end
    table.sort(names)
    fail(fname, "activation must be a function or one of %s, got %s",
         table.concat(names, ", "), type(a) == "string" and "'" .. a .. "'" or type(a))
  end
  return f
end

-- Shapes as Keras prints them: (None, 8, 8, 32); unknown sizes (-1) are
-- None, and so is the batch (axis 1) when 'batch_none'.
function lib.shape_text(shape, batch_none)
  local parts = {}
  for i, d in ipairs(shape) do
    parts[i] = ((i == 1 and batch_none) or d < 0) and "None" or tostring(d)
  end
  if #parts == 1 then return "(" .. parts[1] .. ",)" end
  return "(" .. table.concat(parts, ", ") .. ")"
end

-- "1,234,567"
function lib.thousands(n)
  local s = tostring(math.tointeger(n) or n)
  local out
  repeat
    s, out = s:sub(1, -4), s:sub(-3) .. (out and "," .. out or "")
  until s == ""
  return out
end

function lib.numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end

-- True for a tensor or a Variable.
function lib.is_tensor(x)
  local mt = getmetatable(x)
  return mt ~= nil and (mt.__name == "mf.Tensor" or mt.__name == "mf.Variable")
end

-- ---- the public face of lib/ ------------------------------------------------
-- Run once after every file of lib/ (repl/lmf_lib.c): each Lua function of
-- lib/ reachable from mf's tables is replaced by a wrapper that (1) refuses arguments past its
-- parameters, as the C bindings do, and (2) names itself in any error that
-- escapes it: an error raised by an op it calls ("reduce_mean: axis 3 out of
-- range", at a line of lib/) reads "moments: reduce_mean: axis 3 ..." at the
-- caller's line; one raised under another name of the same function
-- (MaxPooling2D for MaxPool2D) takes the name the caller used.

local function lib_source(f)
  return debug.getinfo(f, "S").source:sub(1, 5) == "@lib/"
end

-- The message of an error that escaped 'fname' (called under that name;
-- 'aliases': its other names in the same table).
local function rename(fname, msg, aliases)
  if type(msg) ~= "string" then return msg, 0 end
  for _, other in ipairs(aliases) do
    local s, e = msg:find(other .. ":", 1, true)
    if s then return msg:sub(1, s - 1) .. fname .. ":" .. msg:sub(e + 1), 0 end
  end
  -- a message at a line of lib/ is an op's, raised inside: the caller's line instead
  local inner = msg:match("^@?lib/[%w_]+%.lua:%d+: (.*)$")
  if msg:find(fname, 1, true) and not inner then return msg, 0 end
  inner = inner or msg
  if inner:find(fname, 1, true) then return inner, 2 end
  return fname .. ": " .. inner, 2
end

local function relay(fname, aliases, ok, ...)
  if ok then return ... end
  local msg, level = rename(fname, (...), aliases)
  error(msg, level)
end

local function public(fname, f, aliases)
  local info = debug.getinfo(f, "u")
  local nparams, vararg = info.nparams, info.isvararg
  return function(...)
    local n = select("#", ...)
    while n > nparams and not vararg and select(n, ...) == nil do n = n - 1 end
    if n > nparams and not vararg then
      error(string.format("bad argument #%d to '%s' (no value expected: %s takes at most %d " ..
                          "argument%s)", nparams + 1, fname, fname, nparams,
                          nparams == 1 and "" or "s"), 2)
    end
    return relay(fname, aliases, pcall(f, ...))
  end
end

-- Tables a file of lib/ leaves as they are (they check arguments themselves).
lib.publish_skip = {}

-- The methods of a class table (a metric's update_state, a layer's
-- count_params), which mf's tables do not reach: lib.publish wraps
-- cls[name] for each name as it wraps functions, so m:update_state(y, p, w, 4)
-- is "bad argument #5 to 'update_state'" (self counts, as in the C methods).
local method_tables = {}
function lib.publish_methods(cls, names)
  method_tables[#method_tables + 1] = {cls = cls, names = names}
end

function lib.publish(root)
  local seen = {}
  local function walk(t)
    if seen[t] or lib.publish_skip[t] then return end
    seen[t] = true
    local keys, names = {}, {}   -- names: function -> its keys in t
    for k in pairs(t) do
      if type(k) == "string" then keys[#keys + 1] = k end
    end
    table.sort(keys)   -- the same order on every run
    for _, k in ipairs(keys) do
      local v = rawget(t, k)
      if type(v) == "function" and lib_source(v) then
        names[v] = names[v] or {}
        table.insert(names[v], k)
      end
    end
    for _, k in ipairs(keys) do
      local f = rawget(t, k)
      if names[f] then
        local aliases = {}
        for _, other in ipairs(names[f]) do
          if other ~= k and not other:find(k, 1, true) then aliases[#aliases + 1] = other end
        end
        rawset(t, k, public(k, f, aliases))
      end
    end
    for _, k in ipairs(keys) do
      if type(rawget(t, k)) == "table" then walk(rawget(t, k)) end
    end
  end
  walk(root)
  for _, m in ipairs(method_tables) do
    for _, name in ipairs(m.names) do
      local f = rawget(m.cls, name)
      assert(type(f) == "function" and lib_source(f), "lib.publish_methods: no method " .. name)
      rawset(m.cls, name, public(name, f, {}))
    end
  end
end
