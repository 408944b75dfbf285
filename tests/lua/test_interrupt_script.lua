-- test_interrupt_script.lua — Ctrl-C in a script (not the prompt), sent as a
-- real SIGINT to a child `moonflow script.lua` (issue #13, item 5).
--
-- The script catches the interrupt with pcall to save a checkpoint, as a
-- training script does. One Ctrl-C must raise once: the code after the
-- pcall runs (the hook does not fire again), and the engine is usable
-- after (sess:run, tape:gradient, long kernels do not fail with
-- "interrupted"). A second, later Ctrl-C interrupts again. Each phase loops
-- until interrupted: an eager loop of matmuls (the kernel checks the flag),
-- then a plain Lua loop (the hook stops it).
local T = dofile("tests/lua/harness.lua")

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))

local child = [[
local ckpt = ...
local a = mf.ones{1536, 1536}
local function phase(k, body)
  io.stderr:write("RUNNING ", k, "\n")
  local ok, err = pcall(body)
  io.stderr:write("CAUGHT ", k, " ", tostring(err):gsub("\n.*", ""), "\n")
end
phase(1, function() while true do local b = mf.matmul(a, a) end end)
mf.save(ckpt, {a = mf.ones{2}})
io.stderr:write("SAVED\n")
-- the engine is usable: a graph run, a gradient, a long kernel
local g = mf.Graph()
local x, y
g:as_default(function() x = mf.placeholder("float32", {2}); y = mf.reduce_sum(x * 2) end)
local r = mf.Session(g):run(y, {[x] = mf.ones{2}})
local v = mf.Variable(mf.ones{3})
local tape = mf.GradientTape()
local gr = tape:gradient(mf.reduce_sum(v * v), v)
local big = mf.reduce_sum(mf.matmul(a, a)):item()
io.stderr:write("USABLE ", r:item(), " ", mf.reduce_sum(gr):item(), " ", big, "\n")
phase(2, function() local n = 0; while true do n = n + 1 end end)
io.stderr:write("DONE\n")
]]

T.test("a caught Ctrl-C in a script raises once and leaves the engine usable", function()
  local exe = arg and (arg[-1] or arg[0])
  T.ok(exe and exe:find("moonflow"), "cannot find the moonflow binary in arg")
  local script = dir .. "/child.lua"
  local f = assert(io.open(script, "w")); f:write(child); f:close()
  local p = assert(io.popen(string.format(
      "sh -c 'echo PID $$ >&2; exec %s %s %s' 2>&1", exe, script, dir .. "/ck.safetensors")))
  local pid, seen, caught = nil, {}, {}
  local saved, usable, done = false, nil, false
  for line in p:lines() do
    pid = pid or line:match("^PID (%d+)")
    if line:match("^RUNNING %d") and pid then
      os.execute(string.format("sleep 0.5; kill -INT %s", pid))
    end
    local k, msg = line:match("^CAUGHT (%d) (.*)")
    if k then caught[tonumber(k)] = msg end
    if line == "SAVED" then saved = true end
    usable = usable or line:match("^USABLE (.*)")
    if line == "DONE" then done = true end
    seen[#seen + 1] = line
  end
  local _, _, code = p:close()
  local out = table.concat(seen, "\n")
  T.ok(caught[1] and caught[1]:find("interrupted", 1, true), "phase 1 not interrupted:\n" .. out)
  T.ok(saved, "the save after the pcall did not run (a second raise):\n" .. out)
  T.eq(usable, "4 6 3623878656", nil, "the engine after a caught Ctrl-C:\n" .. out)
  T.ok(caught[2] and caught[2]:find("interrupted!", 1, true), "phase 2 not interrupted:\n" .. out)
  T.ok(done, "the script did not finish:\n" .. out)
  T.eq(code, 0, nil, "exit status:\n" .. out)
end)

os.execute("rm -rf " .. dir)
T.done()
