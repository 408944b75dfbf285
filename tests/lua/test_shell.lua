-- test_shell.lua — the moonflow program (options, scripts, piped stdin, exit
-- codes), mf.config / mf.set_num_threads / mf.__version, and help(): every
-- function of the API has a help text, every present mf function has one,
-- and every example in the help (doc/help/*.txt, the ops' descriptors, lib/)
-- runs and prints what its "-->" says; a malformed doc/help file is an error.
-- Run as: BUILD/moonflow tests/lua/test_shell.lua (arg[-1] is the program).
local T = dofile("tests/lua/harness.lua")

local exe = arg and arg[-1]
assert(exe, "run this test with the moonflow program (arg[-1] names it)")

local function quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

local function write_file(text)
  local name = os.tmpname()
  local f = assert(io.open(name, "w"))
  f:write(text)
  f:close()
  return name
end

-- Runs the program with a shell argument string (and optional stdin text);
-- returns its combined output and exit code.
local function run(args, stdin_text, env)
  local input = stdin_text and write_file(stdin_text)
  local cmd = (env or "") .. " " .. quote(exe) .. " " .. args .. " 2>&1"
  if input then cmd = cmd .. " < " .. quote(input) else cmd = cmd .. " < /dev/null" end
  local p = assert(io.popen(cmd .. "; echo \"rc=$?\""))
  local out = p:read("a")
  p:close()
  if input then os.remove(input) end
  local rc = tonumber(out:match("rc=(%d+)%s*$"))
  return out:gsub("rc=%d+%s*$", ""), rc
end

local function has(text, pattern)
  return string.find(text, pattern, 1, true) ~= nil
end

T.test("--version and --help", function()
  local out, rc = run("--version")
  T.eq(rc, 0)
  T.ok(has(out, "moonflow " .. mf.__version), out)
  T.ok(has(out, "Lua 5.4"), out)
  T.ok(has(out, "BLAS"), out)
  T.ok(has(out, "thread"), out)
  out, rc = run("--help")
  T.eq(rc, 0)
  T.ok(has(out, "usage:") and has(out, "-e stat") and has(out, "-i"), out)
  out, rc = run("-h")
  T.eq(rc, 0)
  T.ok(has(out, "usage:"), out)
end)

T.test("bad options", function()
  local out, rc = run("--bogus")
  T.ok(rc ~= 0)
  T.ok(has(out, "unrecognized option '--bogus'"), out)
  out, rc = run("-e")
  T.ok(rc ~= 0)
  T.ok(has(out, "'-e' needs argument"), out)
end)

T.test("-e runs strings in order", function()
  local out, rc = run("-e " .. quote("x = mf.tensor{1, 2}:numel() + 40") .. " -e " ..
                      quote("print(x)"))
  T.eq(rc, 0)
  T.eq(out, "42\n")
  out, rc = run("-e " .. quote("error('nope')"))
  T.ok(rc ~= 0)
  T.ok(has(out, "nope"), out)
end)

T.test("a script with arguments", function()
  local script = write_file([[
print(select('#', ...), ...)
print(arg[0] == SCRIPT, arg[1], arg[2], #arg)
print(mf.reduce_sum(mf.tensor{1, 2, 3}):item())
]])
  local out, rc = run("-e " .. quote("SCRIPT = " .. string.format("%q", script)) .. " " ..
                      quote(script) .. " one two")
  os.remove(script)
  T.eq(rc, 0)
  T.eq(out, "2\tone\ttwo\ntrue\tone\ttwo\t2\n6.0\n")
end)

T.test("an error in a script: traceback and non-zero exit", function()
  local script = write_file("local function f()\n  error('boom')\nend\nf()\n")
  local out, rc = run(quote(script))
  os.remove(script)
  T.ok(rc ~= 0, "exit code should be non-zero")
  T.ok(has(out, "boom"), out)
  T.ok(has(out, "stack traceback:"), out)
  T.ok(has(out, ":2:"), out)
  local missing, rc2 = run(quote("/nonexistent/script.lua"))
  T.ok(rc2 ~= 0)
  T.ok(has(missing, "cannot open"), missing)
  local bad = write_file("x = = 1\n")
  local out3, rc3 = run(quote(bad))
  os.remove(bad)
  T.ok(rc3 ~= 0)
  T.ok(has(out3, "unexpected symbol"), out3)
end)

T.test("piped stdin runs as one chunk, without banner or prompt", function()
  local out, rc = run("", "x = mf.tensor{{1, 2}, {3, 4}}\nprint(x:numel())\n" ..
                      "print(mf.reduce_sum(x, 1):totable()[2])\n")
  T.eq(rc, 0)
  T.eq(out, "4\n6.0\n")
  out, rc = run("-", "print(1 + 1)\n")
  T.eq(rc, 0)
  T.eq(out, "2\n")
  out, rc = run("", "print(1)\nerror('piped failure')\n")
  T.ok(rc ~= 0)
  T.ok(has(out, "piped failure"), out)
end)

T.test("-i with piped stdin runs the prompt after the script", function()
  local out, rc = run("-e " .. quote("y = 20") .. " -i", "y + 1\n")
  T.eq(rc, 0)
  T.ok(has(out, "21"), out)
  T.ok(has(out, "moonflow " .. mf.__version), out)
end)

T.test("MOONFLOW_NUM_THREADS", function()
  local out, rc = run("-e " .. quote("print(mf.config().threads)"), nil,
                      "MOONFLOW_NUM_THREADS=1")
  T.eq(rc, 0)
  T.eq(out, "1\n")
  out, rc = run("-e " .. quote("print(1)"), nil, "MOONFLOW_NUM_THREADS=zero")
  T.eq(rc, 0)
  T.ok(has(out, "ignoring MOONFLOW_NUM_THREADS='zero'"), out)
  out, rc = run("-e " .. quote("print(mf.config().threads)"), nil, "MOONFLOW_NUM_THREADS=4097")
  T.eq(rc, 0)
  T.ok(has(out, "ignoring MOONFLOW_NUM_THREADS='4097' (expected an integer from 1 to 4096)"),
       out)
end)

T.test("mf.config, mf.set_num_threads, mf.__version", function()
  T.eq(mf.__version, "0.1.0")
  local c = mf.config()
  T.eq(c.version, mf.__version)
  T.ok(c.lua:find("^Lua 5%.4"), c.lua)
  T.ok(type(c.blas) == "string" and #c.blas > 0)
  T.ok(type(c.corename) == "string" and #c.corename > 0)
  T.ok(math.type(c.threads) == "integer" and c.threads >= 1)
  T.eq(c.coretype_env, os.getenv("OPENBLAS_CORETYPE"))
  local s = tostring(c)
  T.ok(has(s, "moonflow " .. mf.__version) and has(s, "threads:"), s)
  mf.set_num_threads(1)
  T.eq(mf.config().threads, 1)
  T.raises(function() mf.set_num_threads(0) end,
           "set_num_threads: expected an integer from 1 to 4096, got 0")
  T.raises(function() mf.set_num_threads(4097) end, "from 1 to 4096, got 4097")
  T.raises(function() mf.set_num_threads(2^32 + 1) end, "from 1 to 4096, got 4294967297")
  T.raises(function() mf.set_num_threads(1.5) end,
           "set_num_threads: the thread count must be an integer, got 1.5")
  T.raises(function() mf.set_num_threads("x") end,
           "set_num_threads: the thread count must be an integer, got string")
  T.eq(mf.config().threads, 1)
end)

-- Runs help(...) and returns what it printed.
local help_text = T.help_text

T.test("help: topics, names, values, suggestions", function()
  T.ok(help == mf.help)
  local top = help_text()
  for _, topic in ipairs{"creation", "random", "math", "compare", "reduce", "linalg", "shape",
                         "clipping", "printing", "shell"} do
    T.ok(has(top, "  " .. topic .. " "), "topic " .. topic .. " missing in help()")
    T.ok(not has(help_text(topic), "no entry"), "topic " .. topic)
  end
  T.ok(has(top, "mf.config()"), "help() should mention mf.config()")
  local m = help_text("matmul")
  T.ok(has(m, "mf.matmul(a, b [, {transpose_a, transpose_b}])") and has(m, "Example:"), m)
  T.eq(help_text(mf.matmul), m)
  T.eq(help_text("mf.matmul"), m)
  T.eq(help_text("t:matmul"), m)
  local n = help_text("mf.random.normal")
  T.ok(has(n, "mf.random.normal(shape"), n)
  T.eq(help_text(mf.random.normal), n)
  T.eq(help_text("normal"), n)
  T.ok(has(help_text("math"), "mf.add(x, y)"))
  T.ok(has(help_text(mf.tensor{1}), "mf.Tensor"))
  T.ok(has(help_text(mf.tensor{1}.numel), "t:numel()"))
  T.ok(has(help_text(mf), "Topics"))
  T.ok(has(help_text(mf.random), "mf.random.seed"))
  local s = help_text("matmull")
  T.ok(has(s, "no entry for 'matmull'") and has(s, "Did you mean: matmul"), s)
  s = help_text("reduce_summ")
  T.ok(has(s, "reduce_sum"), s)
  s = help_text("zzzzzz")
  T.ok(has(s, "no entry for 'zzzzzz'") and has(s, "help() lists the topics"), s)
  T.ok(has(help_text(print), "no entry for this function"))
  T.ok(has(help_text(mf.config), "mf.config()"))
  -- every table of mf is searched for a function's name (mf.onnx, mf.summary too)
  T.ok(has(help_text(mf.onnx.export), "mf.onnx.export("))
  T.ok(has(help_text(mf.summary.create_file_writer), "mf.summary.create_file_writer("))
end)

-- Every name doc/api.md lists for Tensors, Ops (not mf.nn), Clipping and Shell.
local api_names = [[
tensor constant zeros ones fill zeros_like ones_like eye range linspace random.seed random.normal
random.uniform random.truncated_normal random.shuffle cast item totable numel
add subtract multiply divide mod pow negative abs sign square sqrt rsqrt exp log log1p sin cos tanh
sigmoid relu softplus maximum minimum floor ceil round
equal not_equal less less_equal greater greater_equal logical_and logical_or logical_not is_nan
is_inf is_finite where
reduce_sum reduce_mean reduce_max reduce_min reduce_prod argmax argmin
matmul transpose trace tensordot
reshape expand_dims squeeze concat stack split slice gather reverse tile pad broadcast_to one_hot
identity stop_gradient size rank shape
clip_by_value clip_by_norm clip_by_global_norm global_norm
set_printoptions get_printoptions help config set_num_threads
]]

T.test("help: every API name has a text", function()
  local missing = {}
  for name in api_names:gmatch("%S+") do
    local text = help_text(name)
    if has(text, "no entry") or not has(text, "Example:") then missing[#missing + 1] = name end
  end
  T.ok(#missing == 0, "no help for: " .. table.concat(missing, " "))
end)

T.test("help: every present mf function has a text", function()
  local missing = {}
  local function walk(tbl, prefix)
    for k, v in pairs(tbl) do
      if type(k) == "string" and type(v) == "function" and not k:find("^_") then
        if has(help_text(prefix .. k), "no entry") then missing[#missing + 1] = prefix .. k end
      end
    end
  end
  walk(mf, "")
  walk(mf.random or {}, "random.")
  walk(mf.nn or {}, "nn.")
  walk(mf.profiler or {}, "profiler.")
  table.sort(missing)
  T.ok(#missing == 0, "mf functions without help: " .. table.concat(missing, " "))
end)

-- Formats a value as the help examples write it: tensors as nested tables.
local function show(v)
  if type(v) == "userdata" and v.totable then v = v:totable() end
  if type(v) == "table" then
    local parts = {}
    for i = 1, #v do parts[i] = show(v[i]) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return tostring(v)
end

local NUM = "%-?%d+%.?%d*[eE]?[-+]?%d*"

-- Compares printed text with an expected one: same text around numbers,
-- numbers equal within the 4 decimals the examples show.
local function same_text(got, want)
  local function skeleton(s) return (s:gsub(NUM, "#"):gsub("%s", "")) end
  if skeleton(got) ~= skeleton(want) then return false end
  local g = {}
  for x in got:gmatch(NUM) do g[#g + 1] = tonumber(x) end
  local i = 0
  for x in want:gmatch(NUM) do
    i = i + 1
    local a, b = g[i], tonumber(x)
    if not (a and b and math.abs(a - b) <= 1e-3 * math.max(1, math.abs(b))) then return false end
  end
  return true
end

-- The example lines of an entry's help text, with "-->" continuations joined.
local function example_lines(text)
  local lines, inside = {}, false
  for line in (text .. "\n"):gmatch("(.-)\n") do
    if line:find("^  Example:") then
      inside = true
    elseif inside and line:find("^    ") then
      local code = line:sub(5)
      if code:find("^%s*%-%->") and #lines > 0 then
        lines[#lines] = lines[#lines] .. " " .. code:gsub("^%s*", "")
      else
        lines[#lines + 1] = code
      end
    elseif inside then
      break
    end
  end
  return lines
end

-- Whether 'code' is a statement the prompt would continue on the next line.
local function incomplete(code, env)
  local f, err = load(code, "=example", "t", env)
  return not f and err:find("<eof>$") ~= nil and not load("return " .. code, "=example", "t", env)
end

-- Runs one example line as the prompt would; returns ok, message.
local checked = 0

local function run_example(line, env)
  local code, want = line:match("^(.-)%s*%-%->%s*(.-)%s*$")
  code = code or line
  local f = load("return " .. code, "=example", "t", env) or load(code, "=example", "t", env)
  if not f then return false, "does not compile: " .. code end
  local res = table.pack(pcall(f))
  if not res[1] then return false, code .. ": " .. tostring(res[2]) end
  if want then
    local got = {}
    for i = 2, res.n do got[#got + 1] = show(res[i]) end
    got = table.concat(got, "\t")
    if not same_text(got, want) then
      return false, string.format("%s: printed %s, help says %s", code, got, want)
    end
    checked = checked + 1
  end
  return true
end

-- The help topics' files, doc/help/<topic>.txt: {topic, names of its entries} each.
local function doc_topics()
  local topics = {}
  local ls = assert(io.popen("ls doc/help/*.txt"))
  for path in ls:lines() do
    local names = {}
    for line in io.lines(path) do names[#names + 1] = line:match("^== (%S+)$") end
    topics[#topics + 1] = {path:match("([^/]+)%.txt$"), names}
  end
  ls:close()
  return topics
end

-- help for the entry 'name' of doc/help: a typed name finds a concept first
-- ("gradients": the idea), so a function with a concept twin is asked by value.
local function entry_text(name, names)
  if not names["concept." .. name] then return help_text(name) end
  local v = mf
  for part in name:gmatch("[^.]+") do v = v[part] end
  return help_text(v)
end

-- Whether mf has the function a doc/api.md name documents (the methods of Tensor count).
local function present(name)
  if name == "item" or name == "totable" or name == "numel" or name == "help" then return true end
  local v = mf
  for part in name:gmatch("[^.]+") do v = type(v) == "table" and rawget(v, part) or nil end
  return v ~= nil
end

T.test("help: every doc/help entry is shown under its file's topic", function()
  local n, all = 0, {}
  for _, topic in ipairs(doc_topics()) do
    for _, name in ipairs(topic[2]) do all[name] = true end
  end
  for _, topic in ipairs(doc_topics()) do
    T.ok(not has(help_text(topic[1]), "no entry"), "help " .. topic[1])
    for _, name in ipairs(topic[2]) do
      n = n + 1
      T.ok(has(entry_text(name, all), "(topic: " .. topic[1] .. ";"),
           name .. " not under " .. topic[1])
    end
  end
  T.ok(n >= 100, "only " .. n .. " entries in doc/help")
end)

T.test("help: every example runs and prints what it says", function()
  local failures = {}
  local names, seen = {}, {}
  local function add(name)
    if not seen[name] then names[#names + 1], seen[name] = name, true end
  end
  for _, topic in ipairs(doc_topics()) do   -- every hand-written entry
    for _, name in ipairs(topic[2]) do add(name) end
  end
  for name in api_names:gmatch("%S+") do
    if present(name) then add(name) end
  end
  for _, op in ipairs(mf.test.ops()) do   -- every op whose descriptor holds an example
    if op.example then add(op.lua) end
  end
  for _, entry in ipairs(debug.getregistry()["lmf.lib_help"]) do   -- lib.help's, lib/*.lua
    add(entry[1])
  end
  local old_print = print
  for _, name in ipairs(names) do
    local env, pending = setmetatable({}, {__index = _G}), nil
    print = function() end
    for _, line in ipairs(example_lines(entry_text(name, seen))) do
      line = pending and pending .. "\n" .. line or line
      pending = incomplete(line:gsub("%s*%-%->.*$", ""), env) and line or nil
      if not pending then
        local ok, msg = run_example(line, env)
        if not ok then failures[#failures + 1] = name .. ": " .. msg end
      end
    end
    print = old_print
    if pending then failures[#failures + 1] = name .. ": unfinished: " .. pending end
  end
  mf.set_printoptions{precision = 4}
  T.ok(#failures == 0, "\n  " .. table.concat(failures, "\n  "))
  T.ok(checked >= 350, "only " .. checked .. " example values were checked")
  T.ok(same_text("{1.0, -2.00001}", "{1, -2}") and not same_text("{1.0, 3.0}", "{1, 2}"))
end)

-- tools/embed_help.sh, which makes doc/help/*.txt C at build time, stops at a
-- malformed file with an error naming the file and line: no entry is dropped.
T.test("help files: a malformed one is an error naming its file and line", function()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir " .. quote(dir)))
  local good = "# comment\n\nsummary\n\n== a\nmf.a()\n\nText.\n\n    mf.a()   --> 1\n\n"
  local function embed(text, topics)
    local f = assert(io.open(dir .. "/t.txt", "w"))
    f:write(text)
    f:close()
    local p = assert(io.popen("sh tools/embed_help.sh " .. quote(dir) .. " " .. (topics or "t")
                              .. " 2>&1; echo rc=$?"))
    local out = p:read("a")
    p:close()
    return out
  end
  local out = embed(good .. "== b\nmf.b(x, \\\n    y)\n\nB.\n\n    mf.b(1, \\\n        2)\n")
  T.ok(has(out, "rc=0") and has(out, 'HELP_TOPIC("t",') and has(out, '"mf.b(x, y)"')
       and has(out, '"mf.b(1, 2)"'), out)
  for _, case in ipairs{
    {good .. "== b\n\nText.\n\n    x\n", 13, "expected the signature line of \"b\""},
    {good .. "== b\nmf.b()\n\nText.\n\n== c\n", 17, "expected the example of \"b\""},
    {good .. "== b\nmf.b()\n\nText.\n    x = 1\n", 16, "a paragraph line of \"b\" is indented"},
    {good .. "== b\nmf.b()\n\nText.\n", 15, "the entry \"b\" ends before its example"},
    {good .. "== b\nmf.b()\nText.\n", 14, "expected a blank line after the signature"},
    {good .. "== a\nmf.a()\n\nT.\n\n    x\n", 12, '"a" has an entry already, at ' .. dir .. "/t.txt:5"},
    {good .. "b()\n", 12, 'expected "== name"'},
    {good:gsub("Text%.", "Text. "), 8, "trailing whitespace"},
    {good .. "== b\nmf.b()\n\nB.\n\n    x = \\\n\n", 18, "followed by a blank line"},
    {"# only a comment\n", 1, "no topic summary"},
  } do
    out = embed(case[1])
    T.ok(has(out, "rc=1") and has(out, "embed_help.sh: " .. dir .. "/t.txt:" .. case[2] .. ":")
         and (not case[3] or has(out, case[3])), out)
  end
  out = embed(good, "t other")
  T.ok(has(out, "rc=1") and has(out, dir .. "/other.txt:1: missing or empty"), out)
  local f = assert(io.open(dir .. "/extra.txt", "w"))
  f:write(good)
  f:close()
  out = embed(good)
  T.ok(has(out, "rc=1") and has(out, dir .. "/extra.txt:1: not a topic"), out)
  os.execute("rm -r " .. quote(dir))
end)

T.done()
