-- test_readme.lua — runs the commands of README.md, so the README stays true.
-- Conventions (the README's "Testing the README" says the same):
--   ```lua      blocks run in order in one child moonflow (the tour builds on
--               itself), in a scratch directory;
--   ```sh       each line is a shell command run from the scratch directory,
--               'build/moonflow' meaning this binary (arg[-1]); a block whose
--               first line is "# needs: PATH" is skipped when PATH is missing;
--   ```console  lines starting with "make X" are checked with 'make -n X'
--               (the target exists and its recipe expands); others are set-up
--               steps (git clone, cd) shown only;
--   ```text     output, not run.
local T = dofile("tests/lua/harness.lua")

local exe = arg[-1]
local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local f = assert(io.open("README.md"))
local readme = f:read("a")
f:close()

-- The fenced blocks: {lang = "lua", text = "...", line = n}.
local blocks, current, lineno = {}, nil, 0
for line in (readme .. "\n"):gmatch("([^\n]*)\n") do
  lineno = lineno + 1
  local fence = line:match("^```(%w*)%s*$")
  if fence and not current then
    current = {lang = fence, lines = {}, line = lineno}
  elseif fence and current then
    current.text = table.concat(current.lines, "\n") .. "\n"
    blocks[#blocks + 1] = current
    current = nil
  elseif current then
    current.lines[#current.lines + 1] = line
  end
end
T.ok(not current, "README.md has an unclosed code block")

local counts = {}
for _, b in ipairs(blocks) do counts[b.lang] = (counts[b.lang] or 0) + 1 end

T.test("every block has a known kind", function()
  for _, b in ipairs(blocks) do
    T.ok(b.lang == "lua" or b.lang == "sh" or b.lang == "console" or b.lang == "text",
         "README.md line " .. b.line .. ": a block marked '" .. b.lang ..
         "' (use lua, sh, console or text)")
  end
  T.ok((counts.lua or 0) >= 5 and (counts.sh or 0) >= 3, "the tour and the commands are there")
end)

-- A scratch directory with the scripts reachable as scripts/.
local cwd = io.popen("pwd"):read("l")
if exe:sub(1, 1) ~= "/" then exe = cwd .. "/" .. exe end   -- the commands run elsewhere
local scratch = os.tmpname()
os.remove(scratch)
assert(os.execute("mkdir " .. quote(scratch) .. " && ln -s " .. quote(cwd .. "/scripts") .. " " ..
                  quote(scratch .. "/scripts")))

local function sh(cmd)
  local p = assert(io.popen("cd " .. quote(scratch) .. " && (" .. cmd .. ") 2>&1"))
  local out = p:read("a")
  local ok, how, code = p:close()
  return ok and how == "exit" and code == 0, out
end

T.test("the lua blocks run in order", function()
  local parts = {}
  for _, b in ipairs(blocks) do
    if b.lang == "lua" then
      parts[#parts + 1] = string.format("io.write('@@ README.md line %d\\n')\n%s", b.line, b.text)
    end
  end
  local script = scratch .. "/readme.lua"
  local out_f = assert(io.open(script, "w"))
  out_f:write(table.concat(parts))
  out_f:close()
  local ok, out = sh("OPENBLAS_NUM_THREADS=1 " .. quote(exe) .. " readme.lua")
  T.ok(ok, "a README lua block failed (after the last '@@' marker):\n" .. out:sub(-3000))
  -- What the tour promises.
  T.ok(out:find("27.", 1, true) and out:find("12.", 1, true), "tour gradients")
  T.ok(out:find("step 200/200", 1, true), "tour progress")
  T.ok(out:find("Conv2DBackpropFilter", 1, true), "tour profile")
  for _, name in ipairs{"loss.svg", "graph.dot", "conv.json"} do
    T.ok(io.open(scratch .. "/" .. name), "the tour wrote " .. name)
  end
end)

T.test("the sh commands run", function()
  for _, b in ipairs(blocks) do
    if b.lang == "sh" then
      local need = b.text:match("^# needs: (%S+)")
      if not (need and not io.open(need)) then
        for line in b.text:gmatch("[^\n]+") do
          if not line:find("^%s*#") then
            local cmd = line:gsub("build/moonflow", quote(exe))
            local ok, out = sh("OPENBLAS_NUM_THREADS=1 " .. cmd)
            T.ok(ok, "README.md block at line " .. b.line .. ": '" .. line .. "' failed:\n" ..
                 out:sub(-2000))
          end
        end
      end
    end
  end
end)

T.test("the make targets exist", function()
  local n = 0
  for _, b in ipairs(blocks) do
    if b.lang == "console" then
      for target in b.text:gmatch("%f[^\n%z]make (%w+)") do
        local p = assert(io.popen("make -n " .. target .. " 2>&1"))
        local out = p:read("a")
        local ok = p:close()
        T.ok(ok, "make -n " .. target .. " failed:\n" .. out)
        n = n + 1
      end
    end
  end
  T.ok(n >= 3, "found the make commands")
end)

os.execute("rm -rf " .. quote(scratch))
T.done()
