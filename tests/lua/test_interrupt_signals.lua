-- test_interrupt_signals.lua — Ctrl-C (a real SIGINT) at random moments in
-- traced calls, model:fit (traced and eager) and coroutines (issue #35:
-- L5, H4). Each run starts tests/lua/data/interrupt_phases.lua in one
-- phase, waits for "RUNNING", sleeps a random time (0 included, so some
-- signals land while the function is being traced) and sends SIGINT. The
-- script's pcall must catch the interrupt every time, leave no state
-- behind, save its checkpoint and exit 0; a child that does not finish in
-- time is killed (timeout) and counts as a failure.
--
-- MF_SIGNAL_RUNS sets the number of runs (default 24, spread over the
-- phases), MF_SIGNAL_PHASES the phases (e.g. "traced,fit"), MF_SIGNAL_SEED
-- the seed of the moments (printed on failure).
local T = dofile("tests/lua/harness.lua")

local exe = arg and (arg[-1] or arg[0])
local child = "tests/lua/data/interrupt_phases.lua"
local phases = {"traced", "fit", "fit_eager", "coroutine", "resume", "nested"}
if os.getenv("MF_SIGNAL_PHASES") then   -- a comma-separated choice
  phases = {}
  for p in os.getenv("MF_SIGNAL_PHASES"):gmatch("[^,]+") do phases[#phases + 1] = p end
end
local runs = tonumber(os.getenv("MF_SIGNAL_RUNS")) or 24
local seed = tonumber(os.getenv("MF_SIGNAL_SEED")) or os.time()
local MAX_DELAY = 0.6   -- seconds after RUNNING

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))

-- Runs 'phase' once with SIGINT after 'delay' seconds; returns the child's
-- lines (stderr and stdout) and its exit status.
local function run_once(phase, delay)
  local ckpt = dir .. "/ck.safetensors"
  os.remove(ckpt)
  local p = assert(io.popen(string.format(
      "sh -c 'echo PID $$; exec timeout --foreground -s KILL 60 %s %s %s %s' 2>&1",
      exe, child, phase, ckpt)))
  local pid, lines = nil, {}
  for line in p:lines() do
    pid = pid or line:match("^PID (%d+)")
    if line == "RUNNING" and pid then
      -- timeout passes the SIGINT on to moonflow (once: without --foreground it
      -- also sends it to its process group, and a second Ctrl-C before the
      -- first is taken ends moonflow, as it ends lua)
      os.execute(string.format("sleep %.3f; kill -INT %s", delay, pid))
    end
    lines[#lines + 1] = line
  end
  local _, _, code = p:close()
  return lines, code
end

-- The failure of one run, or nil when it caught the interrupt and went on.
local function check_run(lines, code)
  local out = table.concat(lines, "\n")
  local caught = out:match("\nCAUGHT false ([^\n]*)")
  if not caught then return "the interrupt escaped the pcall (or never came)" end
  if not caught:find("interrupted", 1, true) then return "caught another error: " .. caught end
  if not out:find("\nSTATE eager=true graph=true tape=true traced=true", 1, true) then
    return "state left behind"
  end
  if not out:find("\nSAVED 1\nDONE", 1, true) then return "no checkpoint saved" end
  if code ~= 0 then return "exit status " .. tostring(code) end
  return nil
end

T.test("SIGINT at random moments is caught by the script's pcall every time", function()
  T.ok(exe and exe:find("moonflow"), "cannot find the moonflow binary in arg")
  math.randomseed(seed)
  local failed = {}
  for i = 1, runs do
    local phase = phases[(i - 1) % #phases + 1]
    local delay = math.random() * MAX_DELAY
    local lines, code = run_once(phase, delay)
    local why = check_run(lines, code)
    if why then
      failed[#failed + 1] = string.format("run %d, %s after %.3f s: %s\n%s", i, phase, delay,
                                          why, table.concat(lines, "\n"))
    end
  end
  T.ok(#failed == 0, string.format("%d of %d runs failed (MF_SIGNAL_SEED=%d):\n%s", #failed,
                                   runs, seed, table.concat(failed, "\n")))
end)

os.execute("rm -rf " .. dir)
T.done()
