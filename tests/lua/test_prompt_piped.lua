-- test_prompt_piped.lua — the prompt (moonflow -i) with stdin from a file
-- or a pipe. Such input is read with buffered stdio, not readline: the
-- transcript shows each prompt and echoes each line (as readline did), a
-- chunk may span lines, errors are reported and the prompt goes on, a Tab in
-- the input is a Tab (not a completion request), input that ends inside a
-- chunk is a syntax error, a last line without a newline still runs, and
-- nothing is written to the history file. Also the prompt's display of mf
-- and its tables.
-- Run as: BUILD/moonflow tests/lua/test_prompt_piped.lua (arg[-1] is the program).
local T = dofile("tests/lua/harness.lua")

local exe = arg and arg[-1]
assert(exe, "run this test with the moonflow program (arg[-1] names it)")

local function quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

local function slurp(name)
  local f = assert(io.open(name, "rb"))
  local text = f:read("a")
  f:close()
  return text
end

-- Runs 'moonflow -i' with 'input' on stdin; returns stdout without the
-- banner (its first three lines), stderr, the exit code and what the
-- history file holds afterwards (nil when it was not created).
local function run_prompt(input)
  local inp, out, err, hist = os.tmpname(), os.tmpname(), os.tmpname(), os.tmpname()
  os.remove(hist)
  local f = assert(io.open(inp, "wb"))
  f:write(input)
  f:close()
  local cmd = string.format("MOONFLOW_HISTORY=%s %s -i < %s > %s 2> %s; echo $?",
                            quote(hist), quote(exe), quote(inp), quote(out), quote(err))
  local p = assert(io.popen(cmd))
  local rc = tonumber(p:read("a"):match("(%d+)"))
  p:close()
  local stdout, stderr = slurp(out), slurp(err)
  local hf = io.open(hist, "rb")
  local history = hf and hf:read("a")
  if hf then hf:close() end
  for _, name in ipairs({inp, out, err, hist}) do os.remove(name) end
  local banner_end = select(2, stdout:find("^[^\n]*\n[^\n]*\n[^\n]*\n"))
  return stdout:sub((banner_end or 0) + 1), stderr, rc, history
end

T.test("a transcript: prompts, echoed lines, values, multi-line chunks", function()
  local out, err, rc, history = run_prompt(
      "x = mf.tensor{1, 2}\nfor i = 1, 2 do\n  io.write(i, ' ')\nend\n=x:numel()\nx.shape\n")
  T.eq(rc, 0)
  T.eq(err, "")
  T.eq(out, "> x = mf.tensor{1, 2}\n" ..
            "> for i = 1, 2 do\n>>   io.write(i, ' ')\n>> end\n1 2 " ..
            "> =x:numel()\n2\n" ..
            "> x.shape\n{2}\n" ..
            "> \n")
  T.eq(history, nil, nil, "piped input is kept out of the history file")
end)

T.test("an error is reported and the prompt goes on; exit status 0", function()
  local out, err, rc = run_prompt("error('piped boom')\nprint('after')\n")
  T.eq(rc, 0)
  T.ok(err:find("[1]:1: piped boom", 1, true), err)
  T.ok(err:find("stack traceback:", 1, true), err)
  T.eq(out, "> error('piped boom')\n> print('after')\nafter\n> \n")
end)

T.test("a Tab in the input is part of the line, not a completion", function()
  local out, err, rc = run_prompt("y\t=\t41\nprint(y + 1)\n")
  T.eq(rc, 0)
  T.eq(err, "")
  T.eq(out, "> y\t=\t41\n> print(y + 1)\n42\n> \n")
end)

T.test("a last line without a newline runs; blank lines are prompts", function()
  local out, err, rc = run_prompt("\nprint('last')")
  T.eq(rc, 0)
  T.eq(err, "")
  T.eq(out, "> \n> print('last')\nlast\n> \n")
end)

T.test("input ending inside a chunk is a syntax error", function()
  local out, err, rc = run_prompt("for i = 1, 3 do\nprint(i)\n")
  T.eq(rc, 0)
  T.eq(out, "> for i = 1, 3 do\n>> print(i)\n>> \n")
  T.ok(err:find("[1]:2: 'end' expected (to close 'for' at line 1) near <eof>", 1, true), err)
end)

T.test("mf and its tables show their names, not function addresses", function()
  local out, err, rc = run_prompt("mf.random\nmf.data\n")
  T.eq(rc, 0)
  T.eq(err, "")
  -- sorted names; functions with "()", tables with "."
  T.ok(out:find("^> mf%.random\nmf%.random: %d+ names %(help%(mf%.random%) explains them%)\n" ..
                "[^\n]*normal%(%)  seed%(%)  shuffle%(%)"), out)
  T.ok(out:find("\n> mf%.data\nmf%.data: %d+ names %(help%(mf%.data%) explains them%)\n" ..
                "AUTOTUNE  Dataset%.  INFINITE_CARDINALITY  UNKNOWN_CARDINALITY  read_csv%(%)\n"
                .. "read_idx%(%)"), out)
  out = run_prompt("mf\n")
  T.ok(out:find("^> mf\nmf: %d+ names %(help%(mf%) explains them%)\n"), out)
  T.ok(out:find("matmul()", 1, true) and not out:find("function: 0x", 1, true), out)
end)

-- Cells like IPython's (issue #30 point 3): the value of a last expression
-- statement, locals that last, entries named [N] with their source lines.
T.test("a line whose last statement is an expression prints its value", function()
  local out, err, rc = run_prompt("function f() return 6 end\na = f(); a\nb = a * 7; b\n" ..
                                  "c = 1; c + 1 -- note; c + 100\nfor i = 1, 2 do\n  c = i\nend; c\n")
  T.eq(rc, 0)
  T.eq(err, "")
  T.eq(out, "> function f() return 6 end\n> a = f(); a\n6\n> b = a * 7; b\n42\n" ..
            "> c = 1; c + 1 -- note; c + 100\n2\n" ..
            "> for i = 1, 2 do\n>>   c = i\n>> end; c\n2\n> \n")
  -- a ';' inside a string or a comment is no statement's end; a block's
  -- 'end' is no value; several values stay several
  out, err = run_prompt("s = 'x; y'\ns\nt = {1;\n 2}\nt[2]\nfor i = 1, 2 do\nend\n1, nil, 3\n")
  T.eq(err, "")
  T.eq(out, "> s = 'x; y'\n> s\nx; y\n> t = {1;\n>>  2}\n> t[2]\n2\n> for i = 1, 2 do\n>> end\n" ..
            "> 1, nil, 3\n1\tnil\t3\n> \n")
end)

T.test("a local at the prompt lasts for the session", function()
  local out, err = run_prompt("local x = 20\nlocal y, z\nlocal function g(v) return v + x end\n" ..
                              "local k <const> = 2\nprint(x + 1, y, z, g(1), k)\n" ..
                              "do local inner = 1 end\nprint(inner)\n" ..
                              "local w <close> = nil\nprint(w == nil)\n")
  T.eq(err, "")
  T.ok(out:find("\n21\tnil\tnil\t21\t2\n", 1, true), out)
  T.ok(out:find("> print(inner)\nnil\n", 1, true), out, "a block's local stays local")
  T.ok(out:find("> print(w == nil)\ntrue\n", 1, true), out)
end)

T.test("tracebacks name entries [N] and show each frame's line", function()
  local _, err = run_prompt("function f(x)\n  return x + nil\nend\nf(1)\n")
  T.eq(err, "[1]:2: attempt to perform arithmetic on a nil value\nstack traceback:\n" ..
            "\t[1]:2: in function 'f'\n\t    return x + nil\n" ..
            "\t[2]:1: in main chunk\n\t    f(1)\n")
end)

T.test("?? shows the source of lib/'s functions and of files at the prompt", function()
  -- a kept cell first: looking a lib/ or file source up past the cells
  -- table left it on the stack ("attempt to call a table value")
  local out, err = run_prompt("x = 1\nmf.layers.reset_names??\nhelp(mf.layers.reset_names)\n")
  T.eq(err, "")
  -- the function itself, not lib.publish's wrapper around it, with its comment
  T.ok(out:find("> mf%.layers%.reset_names%?%?\na Lua function defined at lib/layers%.lua:%d+\n" ..
                "%-%- mf.layers.reset_names%(%): unique names start again[^\n]*\n[^\n]*\n" ..
                "function layers.reset_names%(%) lib.reset_names%(%) end\n"), out)
end)

T.test("an error in a last expression names its own line", function()
  local _, err = run_prompt("t = {}\nt.a.b -- a comment\n")
  T.eq(err, "[2]:1: attempt to index a nil value (field 'a')\nstack traceback:\n" ..
            "\t[2]:1: in main chunk\n\t    t.a.b -- a comment\n")
end)

T.test("name? and name?? ask help() and show a Lua function's source", function()
  local out, err = run_prompt("mf.matmul?\n-- no entry\nfunction twice(v)\n  -- why: a test\n" ..
                              "  return 2 * v\nend\ntwice?\ntwice??\nmf.matmul??\nnothing?\n")
  T.eq(err, "")
  T.ok(out:find("> mf.matmul?\nmf.matmul(a, b [, {transpose_a, transpose_b}])", 1, true), out)
  T.ok(out:find("> twice?\na Lua function defined at [3]:1\nfunction twice(v)\n> ", 1, true), out)
  T.ok(out:find("> twice??\na Lua function defined at [3]:1\nfunction twice(v)\n" ..
                "  -- why: a test\n  return 2 * v\nend\n> ", 1, true), out)
  T.ok(out:find("-- mf.matmul is built into moonflow (C): no Lua source to show", 1, true), out)
  T.ok(out:find("> nothing?\nnothing is nil", 1, true), out)
end)

-- IPython's prefix form asks the same questions: ?name, ??name (a blank allowed after)
T.test("?name and ??name as IPython's prefix form", function()
  local out, err = run_prompt("function twice(v)\n  return 2 * v\nend\n?twice\n?? twice\n" ..
                              "?mf.matmul\n?nothing\nx = 3\n?x + 1\n")
  T.ok(out:find("> ?twice\na Lua function defined at [1]:1\nfunction twice(v)\n> ", 1, true), out)
  T.ok(out:find("> ?? twice\na Lua function defined at [1]:1\nfunction twice(v)\n  return 2 * v" ..
                "\nend\n> ", 1, true), out)
  T.ok(out:find("> ?mf.matmul\nmf.matmul(a, b [, {transpose_a, transpose_b}])", 1, true), out)
  T.ok(out:find("> ?nothing\nnothing is nil", 1, true), out)
  T.ok(err:find("[7]:1: unexpected symbol near '?'", 1, true), err, "an expression is no name")
end)

T.test("packed arrays show without their n; mf.memory() in KiB and MiB", function()
  local out, err = run_prompt("v = mf.Variable(mf.ones{2})\ntable.pack(1, nil, 3)\n{n = 2}\n{1, n = 'x'}\n" ..
                              "gv = mf.train.GradientDescentOptimizer(0.1):compute_gradients(" ..
                              "function() return mf.reduce_sum(v * 2) end, {var_list = {v}})\n" ..
                              "#gv[1], gv[1].n\n" ..
                              "keep = mf.zeros{1024, 1024}\nmf.memory()\n")
  T.eq(err, "")
  T.ok(out:find("> table.pack(1, nil, 3)\n{1, nil, 3}\n", 1, true), out)
  T.ok(out:find("> {n = 2}\n{nil, nil}\n", 1, true), out)
  T.ok(out:find("> {1, n = 'x'}\n{1, n = \"x\"}\n", 1, true), out, "an n that is no length stays")
  T.ok(out:find("> #gv[1], gv[1].n\n2\t2\n", 1, true), out, "the field is still there")
  T.ok(out:match("> mf.memory%(%)\n[%d.]+ MiB in %d+ tensors?, [%d.]+ [KMG]?i?B cached %(fields " ..
                 "in_use, cached: bytes; tensors%)\n"), out)
end)

T.test("long input: many statements and a long line", function()
  local parts = {}
  for i = 1, 2000 do parts[#parts + 1] = string.format("v%d = %d", i, i) end
  local long = {}
  for i = 1, 3000 do long[i] = tostring(i) end
  parts[#parts + 1] = "t = {" .. table.concat(long, ", ") .. "}"
  parts[#parts + 1] = "print(v1 + v2000, #t, t[3000])"
  local out, err, rc = run_prompt(table.concat(parts, "\n") .. "\n")
  T.eq(rc, 0)
  T.eq(err, "")
  T.ok(out:find("\n2001\t3000\t3000\n", 1, true), out:sub(-200))
end)

T.done()
