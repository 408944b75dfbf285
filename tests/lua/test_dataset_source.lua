-- test_dataset_source.lua — mf.data.Dataset is lib/dataset.lua embedded at
-- build time (tools/embed_lua.sh): its chunk is named after that file and
-- its line numbers are the file's, so errors and tracebacks point at the
-- source. Run from the repository root, as tests/run.sh does.
local T = dofile("tests/lua/harness.lua")
local Dataset = mf.data.Dataset

local function source_lines()
  local lines = {}
  for line in io.lines("lib/dataset.lua") do lines[#lines + 1] = line end
  return lines
end

T.test("each Dataset method is defined at its line of lib/dataset.lua", function()
  local lines = source_lines()
  local methods = {from_tensor_slices = ".", shuffle = ":", batch = ":", epochs = ":",
                   iter = ":", __tostring = ":"}
  for name, sep in pairs(methods) do
    local info = debug.getinfo(Dataset[name], "S")
    T.eq(info.source, "@lib/dataset.lua", nil, name .. ": chunk name")
    local want = "function Dataset" .. sep .. name .. "("
    local line = lines[info.linedefined] or ""
    T.ok(line:find(want, 1, true) == 1,
         string.format("%s: line %d is '%s', expected it to start with '%s'", name,
                       info.linedefined, line, want))
  end
end)

T.test("a Dataset argument error points at the user's line, not into lib/dataset.lua", function()
  local ds = Dataset.from_tensor_slices(mf.zeros{4})
  local here = debug.getinfo(1, "l").currentline
  local ok, err = pcall(function() return ds:batch(0) end)   -- checked two calls deep
  T.ok(not ok, "batch(0) should fail")
  local src, line = tostring(err):match("^(.-):(%d+): batch: ")
  T.ok(src and src:find("test_dataset_source.lua", 1, true),
       "error '" .. tostring(err) .. "' should name this test file")
  T.eq(tonumber(line), here + 1, nil, "the line of the ds:batch(0) call")
  ok, err = pcall(function() return ds:shuffle(4, {seed = 1.5}) end)
  T.ok(tostring(err):find("test_dataset_source.lua:%d+: shuffle: option 'seed'"), tostring(err))
  T.raises(ds.batch, "batch: the batch size must be a positive integer, got 0", ds, 0)
end)

T.test("a runtime error inside Dataset code gives a traceback into the file", function()
  -- a stage kind the pipeline does not know: make[kind] is nil in Dataset:iter
  local bad = setmetatable({comps = {}, n = 1, stages = {{kind = "nope"}}}, Dataset)
  local ok, tb = xpcall(bad.iter, debug.traceback, bad)
  T.ok(not ok, "iter over an unknown stage should fail")
  T.ok(tb:find("lib/dataset.lua:%d+: attempt to call a nil value"), tb)
  T.ok(tb:find("stack traceback:", 1, true), tb)
end)

T.done()
