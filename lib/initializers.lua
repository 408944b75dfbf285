-- initializers.lua — mf.initializers: zeros, ones, constant, random_normal,
-- truncated_normal, random_uniform, the variance-scaling family
-- (glorot_uniform, glorot_normal, he_normal, he_uniform, lecun_normal,
-- lecun_uniform) and orthogonal.
--
-- Each constructor returns an initialiser object: a table holding its options
-- (defaults filled in, 'seed' only when given) and 'kind', its name, with the
-- metatable "mf.Initializer", callable as init(shape [, dtype]) -> tensor. The
-- call runs in C (repl/lmf_init.c, lib.init); the list of initialisers, their
-- options and defaults are core/init.c's (lib.init.defs).
local mf, lib = ...
local init = lib.init
local mt = init.metatable

-- "a, b, c", or "none" for an initialiser without options.
local function key_list(def)
  return #def.keys > 0 and table.concat(def.keys, ", ") or "none"
end

-- The options table of 'def' checked (names, then types: numbers, the seed
-- an integer), copied into the object 'obj' with the defaults filled in.
local function copy_options(def, opts, obj)
  local name = def.name
  if opts ~= nil and type(opts) ~= "table" then
    lib.fail(name, "expected an options table {%s}, got %s", key_list(def), type(opts))
  end
  local known = {}
  for _, k in ipairs(def.keys) do known[k] = true end
  for k in next, opts or {} do
    if not known[k] then
      lib.fail(name, "unknown option '%s' (known: %s)", tostring(k), key_list(def))
    end
  end
  for k, v in next, opts or {} do
    if type(v) ~= "number" or (k == "seed" and math.type(v) ~= "integer") then
      lib.fail(name, "option '%s' must be %s, got %s", k,
               k == "seed" and "an integer" or "a number", type(v))
    end
  end
  for i, k in ipairs(def.keys) do
    local v = opts and opts[k]
    if v == nil and k ~= "seed" then v = def.defaults[i] end
    obj[k] = v
  end
end

-- constant(value): a number, boolean, array or tensor (nil: 0).
local function constant_value(value, obj)
  local ty = type(value)
  if ty ~= "nil" and ty ~= "number" and ty ~= "boolean" and ty ~= "table" and
     not init.is_tensor(value) then
    lib.raise(string.format("bad argument #1 to 'constant' (a number, boolean, array or tensor " ..
                            "expected, got %s)", ty))
  end
  if ty == "table" and rawlen(value) == 0 and next(value) ~= nil then
    lib.fail("constant", "the value must be an array, got a table with the key '%s'",
             tostring((next(value))))
  end
  obj.value = value == nil and 0 or value
end

local by_name = {}
for _, def in ipairs(init.defs) do by_name[def.name] = def end

-- mf.initializers.glorot_uniform{seed=1}, mf.initializers.constant(3)
function mt.__tostring(obj)
  if type(obj) ~= "table" then
    error(string.format("bad argument #1 to '__tostring' (table expected, got %s)", type(obj)), 2)
  end
  local kind = obj.kind
  local def = by_name[kind]
  if not def then
    local shown = (type(kind) == "string" or type(kind) == "number") and kind or "?"
    error(string.format("initializer: unknown kind '%s'", shown), 2)
  end
  local parts = {"mf.initializers." .. def.name}
  if def.name == "constant" then
    local v = obj.value
    parts[2] = "(" .. ((type(v) == "number" or type(v) == "boolean") and tostring(v)
                       or type(v)) .. ")"
  end
  local opened = false
  for _, k in ipairs(def.keys) do
    if obj[k] ~= nil then
      parts[#parts + 1] = (opened and ", " or "{") .. k .. "=" .. tostring(obj[k])
      opened = true
    end
  end
  if opened then parts[#parts + 1] = "}" end
  return table.concat(parts)
end

local initializers = {}
for _, def in ipairs(init.defs) do   -- lib.publish adds the argument count check
  initializers[def.name] = function(opts)
    local obj = {}
    if def.name == "constant" then constant_value(opts, obj) else copy_options(def, opts, obj) end
    obj.kind = def.name
    return setmetatable(obj, mt)
  end
end
mf.initializers = initializers
