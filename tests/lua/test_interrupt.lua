-- test_interrupt.lua — Ctrl-C at the prompt, sent as a real SIGINT.
--
-- A child `moonflow -i` reads statements from piped stdin (no terminal, no
-- tmux). Before each long operation it writes "RUNNING k" to stderr; the
-- test then waits a moment and sends SIGINT to it. Each operation loops
-- until interrupted, so the signal always lands inside it: an eager loop, a
-- graph session run (a chain of large matmuls, so most of the time is in the
-- executor, which checks the flag between nodes), a convolution (whose
-- kernel checks the flag), and checkpoint saves of a large table over an
-- older checkpoint. After each one the prompt must come back and run the
-- next statement ("ALIVE k"); the last statements check that the state is
-- still usable and that the checkpoint on disk is whole: the old one or the
-- new one, never half of either, and no temporary file is left.
local T = dofile("tests/lua/harness.lua")

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local ckpt = dir .. "/model.safetensors"

local operations = {
  -- an eager loop
  "a = mf.ones{64, 64}; while true do b = mf.matmul(a, a) + 1 end",
  -- a graph session run
  "while true do sess:run(chain) end",
  -- a convolution
  "while true do c = mf.nn.conv2d(img, filt, 1, 'SAME') end",
  -- checkpoint saves over the old file
  "while true do mf.save(CKPT, new) end",
}

local function child_script(path)
  local f = assert(io.open(path, "w"))
  f:write("CKPT = '", ckpt, "'\n")
  f:write("g = mf.Graph()\n")
  f:write("g:as_default(function() local x = mf.ones{768, 768}; chain = x; " ..
          "for i = 1, 40 do chain = mf.matmul(chain, x) * (1 / 768) end end)\n")
  f:write("sess = mf.Session(g)\n")
  f:write("img = mf.random.normal{1, 160, 160, 32}\n")
  f:write("filt = mf.random.normal{3, 3, 32, 32}\n")
  -- 64 tensors of 1 M floats (256 MB): the old checkpoint holds ones, the new twos
  f:write("old, new = {}, {}\n")
  f:write("for i = 1, 64 do old['t' .. i] = mf.fill({1024, 1024}, 1); " ..
          "new['t' .. i] = mf.fill({1024, 1024}, 2) end\n")
  f:write("mf.save(CKPT, old)\n")
  for k, op in ipairs(operations) do
    f:write(string.format("io.stderr:write('RUNNING %d\\n'); %s\n", k, op))
    f:write(string.format("io.stderr:write('ALIVE %d\\n')\n", k))
  end
  -- the state is usable after all that
  f:write("io.stderr:write('SUM ', mf.reduce_sum(mf.matmul(mf.ones{2, 2}, mf.ones{2, 2})):item(), " ..
          "'\\n')\n")
  f:write("ck = mf.load(CKPT); v = ck.t1[1][1]; whole = true\n")
  f:write("for i = 1, 64 do local t = ck['t' .. i]; whole = whole and t ~= nil and " ..
          "mf.reduce_min(t):item() == v and mf.reduce_max(t):item() == v end\n")
  f:write("io.stderr:write('CKPT ', v, ' ', tostring(whole), '\\n')\n")
  f:write("io.stderr:write('DONE\\n')\n")
  f:close()
end

T.test("Ctrl-C interrupts loops, graph runs, convs and saves at the prompt", function()
  local exe = arg and (arg[-1] or arg[0])
  T.ok(exe and exe:find("moonflow"), "cannot find the moonflow binary in arg")
  local script = dir .. "/input.lua"
  child_script(script)
  local p = assert(io.popen(string.format(
      "HOME= MOONFLOW_HISTORY= sh -c 'echo PID $$ >&2; exec %s -i' < %s 2>&1", exe, script)))
  local pid, seen = nil, {}
  local interrupted, alive, sum, ck_value, ck_whole, done = 0, 0, nil, nil, nil, false
  for line in p:lines() do
    pid = pid or line:match("^PID (%d+)")
    local k = line:match("^RUNNING (%d+)")
    if k and pid then
      -- let the operation get going, then press Ctrl-C
      os.execute(string.format("sleep 0.7; kill -INT %s", pid))
    end
    if line:find("interrupted", 1, true) then interrupted = interrupted + 1 end
    if line:match("^ALIVE %d+") then alive = alive + 1 end
    sum = sum or tonumber(line:match("^SUM (%S+)"))
    local v, w = line:match("^CKPT (%S+) (%S+)")
    if v then ck_value, ck_whole = tonumber(v), w end
    if line == "DONE" then done = true end
    seen[#seen + 1] = line
  end
  p:close()
  local out = table.concat(seen, "\n", math.max(1, #seen - 40))
  if os.getenv("MF_DEBUG") then print(table.concat(seen, "\n")) end
  T.ok(done, "the child did not reach its last statement:\n" .. out)
  T.eq(alive, #operations, nil, "prompts that came back")
  T.ok(interrupted >= #operations, "expected an 'interrupted' message per operation:\n" .. out)
  T.eq(sum, 8, nil, "a computation after the interrupts")
  T.ok(ck_value == 1 or ck_value == 2, "checkpoint value " .. tostring(ck_value))
  T.eq(ck_whole, "true", nil, "every tensor of the checkpoint from the same save")
  local ls = io.popen("ls " .. dir)
  local files = ls:read("a")
  ls:close()
  T.ok(not files:find("tmp", 1, true), "a temporary file was left: " .. files)
end)

os.execute("rm -rf " .. dir)
T.done()
