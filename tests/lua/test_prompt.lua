-- test_prompt.lua — drives the real interactive prompt (readline on a
-- terminal, inside tmux) for what a user sees: '_' holds the last printed
-- value, Ctrl-D inside an unfinished block cancels the block (the prompt
-- stays; Ctrl-D on an empty prompt exits), and a nil gradient adds the
-- one-line hint. Needs tmux (tools/configure.sh installs it).
local T = dofile("tests/lua/harness.lua")
local exe = assert(arg and arg[-1], "run with the moonflow program")
if exe:sub(1, 1) ~= "/" then exe = os.getenv("PWD") .. "/" .. exe end

local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  p:close()
  return out
end

T.test("tmux is there to drive a terminal", function()
  T.ok(sh("command -v tmux"):find("tmux"), "tmux is not installed (apt-get install tmux)")
end)

local base = "mf_test_prompt_" .. tostring(os.time()) .. tostring(math.random(1e6))
-- a tmux server of its own (-L): others' sessions, or a kill-server, on the
-- shared default socket cannot end this test's terminal. Each test starts a
-- server of its own too: a new session on the socket of the server the last
-- kill-session is shutting down failed under load ("no server running").
local session, tmux
local terminals = 0
local function new_terminal(command)
  terminals = terminals + 1
  session = base .. "_" .. terminals
  tmux = "tmux -L " .. session .. " "
  sh(tmux .. "new-session -d -s " .. session .. " -x 150 -y 50 \"" .. command .. "\"")
end
local hist = os.tmpname()

local function keys(...)
  local args = {}
  for i, k in ipairs({...}) do args[i] = "'" .. k .. "'" end
  sh(tmux .. "send-keys -t " .. session .. " " .. table.concat(args, " "))
end
local function type_text(s) sh(tmux .. "send-keys -t " .. session .. " -l '" .. s .. "'") end
local function pane() return sh(tmux .. "capture-pane -p -t " .. session) end

-- Waits up to 10 s for 'text' in the pane; returns the pane.
local function expect(what, text)
  local p
  for _ = 1, 100 do
    p = pane()
    if p:find(text, 1, true) then return p end
    sh("sleep 0.1")
  end
  error(what .. ": the pane does not show '" .. text .. "':\n" .. p, 2)
end

T.test("the prompt: _, Ctrl-D in a block, the nil-gradient hint", function()
  if not sh("command -v tmux"):find("tmux") then return end
  new_terminal("env MOONFLOW_HISTORY='" .. hist .. "' OPENBLAS_NUM_THREADS=1 '" .. exe ..
               "'; echo EXIT=\\$?; sleep 30")
  local ok, err = pcall(function()
    expect("banner", "Type help() for help")
    type_text("3 + 4"); keys("Enter")
    expect("a value", "7")
    type_text("_ * 10"); keys("Enter")
    expect("_ holds the last printed value", "70")
    type_text("for i = 1, 3 do"); keys("Enter")
    expect("continuation prompt", ">>")
    keys("C-d")
    expect("Ctrl-D in a block cancels it", "-- block cancelled (Ctrl-D on an empty prompt exits)")
    type_text('print("still " .. "here")'); keys("Enter")
    expect("the prompt stays", "still here")
    type_text("x = mf.tensor(2.0); t = mf.GradientTape(); y = x * x"); keys("Enter")
    type_text("t:gradient(y, x)"); keys("Enter")
    expect("the nil hint", "-- nil: tape:explain(y, x) says why")
    type_text("t2 = mf.GradientTape(); t2:watch(x); z = x * 1"); keys("Enter")
    type_text("t2:explain(z, x)"); keys("Enter")
    expect("explain answers", "connected")
    keys("C-d")
    expect("Ctrl-D on an empty prompt exits", "EXIT=0")
  end)
  sh(tmux .. "kill-session -t " .. session)
  os.remove(hist)
  if not ok then error(err, 0) end
end)

-- Cells like IPython's at a real terminal (issue #30): the last statement's
-- value, a local that lasts, name?, and a traceback with its source line.
T.test("the prompt: cells, locals, ? and tracebacks at a terminal", function()
  if not sh("command -v tmux"):find("tmux") then return end
  new_terminal("env MOONFLOW_HISTORY='" .. hist .. "' OPENBLAS_NUM_THREADS=1 '" .. exe ..
               "'; echo EXIT=\\$?; sleep 30")
  local ok, err = pcall(function()
    expect("banner", "Type help() for help")
    type_text("local base = 40"); keys("Enter")
    type_text("function f() return base + 2 end"); keys("Enter")
    type_text("a = f(); a"); keys("Enter")
    expect("the last statement's value, with the local kept", "\n42\n")
    type_text("mf.reduce_sum?"); keys("Enter")
    expect("name? prints help", "mf.reduce_sum(x")
    -- the prompt numbers the entry a traceback will name
    expect("the prompt shows the entry's number", "\n[5]>")
    type_text("function g() return nil .. 1 end"); keys("Enter")
    type_text("g()"); keys("Enter")
    -- (tmux shows a tab as spaces: 8, then the source line's own 4)
    expect("a frame's source line",
           "[5]:1: in function 'g'\n            function g() return nil .. 1 end")
    expect("the entry's frame", "[6]:1: in main chunk\n            g()")
    -- a model's completion: its API, properties without '('
    type_text("cm = mf.layers.Sequential{mf.layers.Dense(2, {input_shape = {3}})}"); keys("Enter")
    type_text("cm:"); keys("Tab", "Tab")
    expect("methods after ':'", "add(              build(            evaluate(         load(" ..
           "             predict(          state_dict(\nadd_weight(       count_params(     fit(" ..
           "              load_state_dict(  save(             summary(")
    keys("C-u")
    type_text("type(cm.trainable_v"); keys("Tab")
    type_text(")"); keys("Enter")
    expect("a property completes without '('", "> type(cm.trainable_variables)\ntable")
    keys("C-d")
    expect("Ctrl-D on an empty prompt exits", "EXIT=0")
  end)
  sh(tmux .. "kill-session -t " .. session)
  os.remove(hist)
  if not ok then error(err, 0) end
end)

-- Ctrl-C typed at the terminal (the tty sends SIGINT) during a long traced
-- call, a Lua loop in a coroutine and a pcall'd traced loop (issue #35, L5/H4):
-- each stops, the prompt comes back, and the traced function still runs.
T.test("the prompt: Ctrl-C in traced calls and coroutines", function()
  if not sh("command -v tmux"):find("tmux") then return end
  new_terminal("env MOONFLOW_HISTORY='" .. hist .. "' OPENBLAS_NUM_THREADS=1 '" .. exe ..
               "'; echo EXIT=\\$?; sleep 30")
  -- runs 'line' after writing "RUNNING k" (built, so the typed text does not
  -- show it) and presses Ctrl-C once that is shown: the line is running
  local k = 0
  local function interrupt(line)
    k = k + 1
    type_text('io.write("RUN" .. "NING ' .. k .. '\\n"); ' .. line); keys("Enter")
    expect("line " .. k .. " runs", "RUNNING " .. k)
    sh("sleep 0.3")
    keys("C-c")
  end
  local ok, err = pcall(function()
    expect("banner", "Type help() for help")
    type_text("a = mf.ones{64, 64}; f = mf.trace(function(x) local y = x; for i = 1, 8 do " ..
              "y = mf.tanh(mf.matmul(y, x)) end; return mf.reduce_sum(y) end)"); keys("Enter")
    interrupt("while true do f(a) end")
    expect("a traced loop stops", "interrupted")
    type_text('print("one " .. f(a):item())'); keys("Enter")
    expect("the traced function runs after", "one 4096.0")
    interrupt("coroutine.wrap(function() local n = 0; while true do n = n + 1 end end)()")
    type_text('print("two " .. f(a):item())'); keys("Enter")
    expect("a coroutine stops", "two 4096.0")
    interrupt('ok, e = pcall(function() while true do f(a) end end); ' ..
              'print("three " .. tostring(ok) .. " " .. tostring(e:find("interrupted") ~= nil))')
    expect("a pcall catches it", "three false true")
    keys("C-d")
    expect("Ctrl-D on an empty prompt exits", "EXIT=0")
  end)
  sh(tmux .. "kill-session -t " .. session)
  os.remove(hist)
  if not ok then error(err, 0) end
end)

T.done()
