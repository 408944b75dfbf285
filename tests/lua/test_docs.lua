-- test_docs.lua — doc/*.md stay true to the code: every mf name doc/api.md
-- gives exists (and every one under "Not implemented yet" does not), every
-- file of the repository the documents cite exists, and every C name they
-- cite is defined in the sources. (test_readme.lua does the same for the
-- README's examples.)
local T = dofile("tests/lua/harness.lua")

local function read(path)
  local f = assert(io.open(path))
  local s = f:read("a")
  f:close()
  return s
end

local docs = {"doc/design.md", "doc/api.md", "doc/style.md"}

-- The value at a dotted name below the global table, or nil (a missing field
-- of mf is an error, which counts as absent).
local function lookup(name)
  local ok, v = pcall(function()
    local v = _G
    for part in name:gmatch("[^.]+") do
      if type(v) ~= "table" then return nil end
      v = v[part]
    end
    return v
  end)
  return ok and v or nil
end

-- The mf names in 'text' ("mf.nn.conv2d"), once each, in order.
local function mf_names(text)
  local names, seen = {}, {}
  for name in text:gmatch("mf%.[%a_][%w_.]*") do
    name = name:gsub("%.$", "")
    if not seen[name] then
      seen[name] = true
      names[#names + 1] = name
    end
  end
  return names
end

local api = read("doc/api.md")
local cut = assert(api:find("\n## Not implemented yet\n", 1, true), "doc/api.md has no 'Not implemented yet'")
-- metatable names, not fields of mf
local not_fields = {["mf.Tensor"] = true}

T.test("every mf name doc/api.md gives exists", function()
  local missing = {}
  for _, name in ipairs(mf_names(api:sub(1, cut))) do
    if not not_fields[name] and lookup(name) == nil then missing[#missing + 1] = name end
  end
  T.ok(#missing == 0, "doc/api.md names what mf does not have: " .. table.concat(missing, ", "))
end)

T.test("what doc/api.md calls not implemented is absent", function()
  local present = {}
  for _, name in ipairs(mf_names(api:sub(cut))) do
    if lookup(name) ~= nil then present[#present + 1] = name end
  end
  T.ok(#present == 0, "doc/api.md calls these not implemented, but mf has them (move them up): "
       .. table.concat(present, ", "))
end)

-- The repository's top-level folders whose files the documents cite.
local tops = {core = 1, present = 1, autodiff = 1, eager = 1, graph = 1, distributed = 1,
              train = 1, mode = 1, repl = 1, lib = 1, doc = 1, scripts = 1, tests = 1, tools = 1,
              bench = 1}

T.test("every file the documents cite exists", function()
  local missing = {}
  for _, doc in ipairs(docs) do
    for path in read(doc):gmatch("`([%w_]+/[%w_./-]+)`") do
      local top = path:match("^[^/]+")
      if tops[top] and not path:find("[*<]") then
        local f = io.open(path)
        if f then f:close() else missing[#missing + 1] = doc .. ": " .. path end
      end
    end
  end
  T.ok(#missing == 0, "cited but not in the tree: " .. table.concat(missing, "; "))
end)

-- Every C identifier the documents quote (mf_*, lmf_*, MF_*, Mf*, Lmf*), looked
-- for in the C sources; the functions design.md reports deleted are exempt.
local deleted = {lmf_read_axes = 1, mf_grad_at = 1, mf_opt_adam_finish = 1, mf_pb_bool = 1,
                 mf_pb_packed_float = 1, mf_tape_retain = 1, mf_collective_get = 1,
                 mf_saver_restore = 1}

local function c_sources()
  local all = {}
  local p = assert(io.popen("find core present autodiff eager graph distributed train mode repl tests/unit -name '*.[ch]'"))
  for path in p:lines() do all[#all + 1] = read(path) end
  p:close()
  return table.concat(all, "\n")
end

T.test("every C name the documents quote is in the sources", function()
  local src, missing, seen = c_sources(), {}, {}
  for _, doc in ipairs(docs) do
    for code in read(doc):gmatch("`([^`\n]+)`") do
      for id in code:gmatch("[%a_][%w_]*") do
        local c_name = id:find("^l?mf_") or id:find("^MF_") or id:find("^L?Mf%u")
        -- (a bare prefix, "mf_", names the convention, not a function)
        if c_name and not id:find("_$") and not deleted[id] and not seen[id] then
          seen[id] = true
          if not src:find("%f[%w_]" .. id .. "%f[^%w_]") then missing[#missing + 1] = doc .. ": " .. id end
        end
      end
    end
  end
  T.ok(#missing == 0, "quoted but not in the C sources: " .. table.concat(missing, "; "))
end)

T.done()
