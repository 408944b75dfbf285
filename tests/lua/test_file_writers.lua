-- test_file_writers.lua — every file writer goes through the one safe path
-- of core/io/write_file.c (issue #35, L3, L4, H5 and the temporary-file
-- finding): mf.save, Saver:save, mf.onnx.export, g:write_dot, g:render,
-- mf.plot{file}, report:save_trace. For each: a FIFO at the target is refused
-- and left alone (render blocked forever on one), a symlink planted at the
-- old predictable temporary names ("<path>.tmp", "<path>.tmp.<pid>") is not
-- followed, a 0444 or 0600 file keeps its mode, and nothing is left beside
-- the file; two processes exporting to one path never fail or show a reader
-- an empty model; temporary files of a killed writer are removed by the
-- next save or load.
local T = dofile("tests/lua/harness.lua")

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local exe = arg[-1] or arg[0]
local have_dot = os.execute("command -v dot >/dev/null 2>&1")

local function sh(cmd)
  local p = io.popen(cmd)
  local out = p:read("a")
  p:close()
  return (out:gsub("%s+$", ""))
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local function my_pid()
  return read("/proc/self/stat"):match("^(%d+)")
end

-- The writers, each a function of the target path.
local g = mf.Graph()
g:as_default(function() local x = mf.placeholder("float32", {2}); local y = x * 2 end)
local fn = mf.trace(function(x) return x * 2 end)
local v = mf.Variable(mf.ones{2}, {name = "v"})
local saver = mf.train.Saver{v}
local prof = mf.profile(function() return mf.matmul(mf.ones{4, 4}, mf.ones{4, 4}) end)
local writers = {
  {"save", function(p) mf.save(p, {a = mf.ones{2}}) end},
  {"Saver.save", function(p) saver:save(p) end},
  {"onnx.export", function(p) fn:export_onnx(p, mf.ones{2}) end},
  {"write_dot", function(p) g:write_dot(p) end},
  {"plot", function(p) mf.plot({1, 2, 3}, {file = p}) end},
  {"save_trace", function(p) prof:save_trace(p) end},
}
if have_dot then
  writers[#writers + 1] = {"render", function(p) g:render(p) end}
else
  print("  (render skipped: Graphviz 'dot' is not installed; apt-get install graphviz)")
end

local function leftovers(base)
  return sh("ls -a " .. dir .. " | grep -F '" .. base .. ".' || true")
end

T.test("a FIFO at the target is refused and left alone", function()
  for i, w in ipairs(writers) do
    if w[1] == "render" then break end   -- the next test, in a child with a time limit
    local p = dir .. "/fifo" .. i .. ".svg"
    assert(os.execute("mkfifo " .. p))
    T.raises(w[2], "refusing to replace it", p)
    T.eq(sh("stat -c %F " .. p), "fifo", nil, w[1])
    os.remove(p)
  end
end)

-- render used to run dot on the FIFO, which blocked forever: a child with a
-- time limit shows it (exit status 124 from timeout before the fix).
T.test("render with a FIFO at the path returns at once", function()
  if not have_dot then return end
  local p = dir .. "/render_fifo.png"
  assert(os.execute("mkfifo " .. p))
  local script = dir .. "/render_fifo.lua"
  write(script, [[
local g = mf.Graph()
g:as_default(function() local x = mf.placeholder("float32", {2}); local y = x * 2 end)
print(pcall(g.render, g, ...))]])
  local out = sh("timeout 20 " .. exe .. " " .. script .. " " .. p .. " 2>&1; echo status $?")
  T.ok(out:find("false\trender: cannot write '" .. p .. "': it exists and is not a regular " ..
                "file", 1, true), out)
  T.ok(out:find("status 0", 1, true), out)
  os.remove(p)
end)

T.test("a symlink at the old temporary names is not followed", function()
  local victim = dir .. "/victim"
  for i, w in ipairs(writers) do
    write(victim, "precious")
    local p = dir .. "/linked" .. i .. ".svg"
    for _, tmp in ipairs{p .. ".tmp", p .. ".tmp." .. my_pid()} do
      assert(os.execute("ln -sf " .. victim .. " " .. tmp))
    end
    w[2](p)
    T.eq(read(victim), "precious", nil, w[1] .. " wrote through a planted symlink")
    T.ok(#read(p) > 0, w[1])
    os.remove(p .. ".tmp"); os.remove(p .. ".tmp." .. my_pid()); os.remove(p)
  end
  os.remove(victim)
end)

T.test("the replaced file keeps its mode; nothing is left beside it", function()
  for i, w in ipairs(writers) do
    for _, mode in ipairs{"444", "600"} do
      local p = dir .. "/mode" .. i .. ".svg"
      write(p, "old")
      assert(os.execute("chmod " .. mode .. " " .. p))
      w[2](p)
      T.eq(sh("stat -c %a " .. p), mode, nil, w[1])
      T.ok(read(p) ~= "old", w[1] .. " did not replace the file")
      T.eq(leftovers("mode" .. i .. ".svg"), "", nil, w[1] .. " left a file")
      os.remove(p)
    end
  end
end)

-- Two processes export one model to one path 300 times each, reading it
-- back after each export: they shared "<path>.tmp" (exports failed, a
-- reader saw a 0-byte model).
T.test("concurrent onnx.export to one path", function()
  local p = dir .. "/shared.onnx"
  local script = dir .. "/export.lua"
  write(script, [[
local path = ...
local fn = mf.trace(function(x) return x * 2 end)
local failed, empty = 0, 0
for i = 1, 300 do
  if not pcall(fn.export_onnx, fn, path, mf.ones{2}) then failed = failed + 1 end
  local f = io.open(path, "rb")
  local n = f and #f:read("a") or 0
  if f then f:close() end
  if n == 0 then empty = empty + 1 end
end
print("failed " .. failed .. " empty " .. empty)]])
  local cmd = string.format("%s %s %s & %s %s %s; wait", exe, script, p, exe, script, p)
  local out = sh(cmd .. " 2>&1")
  T.eq(select(2, out:gsub("failed 0 empty 0", "")), 2, nil, out)
  T.eq(leftovers("shared.onnx"), "")
end)

-- A pid that has ended: the shell's of a finished command.
local function dead_pid()
  return sh("sh -c 'echo $$'")
end

T.test("temporary files of a killed writer are removed by the next save or load", function()
  local p = dir .. "/killed.safetensors"
  mf.save(p, {a = mf.ones{2}})
  local dead = p .. ".tmp." .. dead_pid() .. ".AbC123"
  local sleeper = sh("sleep 60 >/dev/null 2>&1 & echo $!")   -- a writer still running
  local alive = p .. ".tmp." .. sleeper .. ".XyZ789"
  write(dead, "partial"); write(alive, "partial")
  mf.save(p, {a = mf.ones{2}})
  T.ok(not read(dead), "the dead writer's temporary file is still there")
  T.ok(read(alive), "a running writer's temporary file was removed")
  write(dead, "partial")
  mf.load(p)
  T.ok(not read(dead), "load did not remove the dead writer's temporary file")
  os.execute("kill " .. sleeper)
  os.remove(alive)
  T.eq(leftovers("killed.safetensors"), "")
end)

-- SIGTERM during a save left its temporary file (8 of 8 kills): the
-- program's handler removes the files being written, then ends by the
-- signal (exit status 143 = 128 + SIGTERM).
T.test("SIGTERM during a save leaves no temporary file", function()
  local p = dir .. "/term.safetensors"
  local script = dir .. "/term.lua"
  write(script, [[
local t = mf.ones{25 * 1024 * 1024}   -- 100 MB: the loop is almost always saving
io.stderr:write("READY\n")
while true do mf.save(..., {t = t}) end]])
  local err = dir .. "/term.err"
  for round = 1, 3 do
    os.remove(err)
    -- (a child that dies before READY ends the wait: its status, not a hang)
    local out = sh(string.format("{ %s %s %s 2>%s & pid=$!; until grep -qs READY %s || " ..
                                 "! kill -0 $pid; do sleep 0.05; done; sleep 0.%d; " ..
                                 "kill -TERM $pid; wait $pid; echo status $?; } 2>/dev/null",
                                 exe, script, p, err, err, 2 + round))
    T.eq(out, "status 143", nil, "round " .. round)
    T.eq(leftovers("term.safetensors"), "", nil, "round " .. round)
  end
  os.remove(p)
end)

-- Ctrl-C during mf.save (a real SIGINT to a child, 3 times): either the
-- save raises and the old file stays, or the new file is in place and the
-- interrupt comes after the save returned (the traceback no longer shows
-- mf.save). The save used to rename its file into place and then raise
-- "interrupted!" itself.
T.test("Ctrl-C during a save: it fails and the old file stays, or it succeeds", function()
  local p = dir .. "/int.safetensors"
  local script = dir .. "/int.lua"
  write(script, [[
local path = ...
local big = mf.ones{25 * 1024 * 1024}
mf.save(path, {t = mf.ones{1}, k = mf.fill({1}, 0)})
for round = 1, 3 do
  local attempt = mf.load(path).k:item()   -- every save of the round before the last returned
  io.stderr:write("SAVING ", round, "\n")
  local ok, err = xpcall(function()
    local deadline = os.time() + 60
    while true do
      if os.time() > deadline then io.stderr:write("NO INTERRUPT\n"); os.exit(1) end
      attempt = attempt + 1
      mf.save(path, {t = big, k = mf.fill({1}, attempt)})
    end
  end, debug.traceback)
  local in_save = err:find("in function 'mf.save'", 1, true) ~= nil
  io.stderr:write(string.format("ROUND %d attempt %d file %d %s %s\n", round, attempt,
                                mf.load(path).k:item(), in_save and "raised-by-save" or "after",
                                (err:gsub("\n.*", ""))))
end
io.stderr:write("END\n")]])
  local pr = assert(io.popen(string.format(
      "sh -c 'echo PID $$ >&2; exec %s %s %s' 2>&1", exe, script, p)))
  local pid, rounds, lines = nil, 0, {}
  for line in pr:lines() do
    lines[#lines + 1] = line
    pid = pid or line:match("^PID (%d+)")
    local r = line:match("^SAVING (%d)")
    if r and pid then os.execute(string.format("sleep 0.%d; kill -INT %s", 3 + r, pid)) end
    local attempt, file, how = line:match("^ROUND %d attempt (%d+) file (%d+) (%S+)")
    if attempt then
      rounds = rounds + 1
      local want = how == "raised-by-save" and attempt - 1 or tonumber(attempt)
      T.eq(tonumber(file), want, nil, table.concat(lines, "\n"))
      if how == "raised-by-save" then T.ok(line:find("save: interrupted; '", 1, true), line) end
    end
  end
  pr:close()
  T.eq(rounds, 3, nil, table.concat(lines, "\n"))
  os.remove(p)
end)

-- The writers took the path up to its first NUL byte and wrote "a" for
-- "a\0b"; an empty path said "expected a path and 1 names and tensors".
T.test("NUL bytes and empty paths are errors in every writer", function()
  assert(os.execute("mkdir " .. dir .. "/nul"))
  local nul = dir .. "/nul/a\0b"
  local cases = {
    {"save", function(p) mf.save(p, {a = mf.ones{2}}) end},
    {"Saver.save", function(p) saver:save(p) end},
    {"onnx.export", function(p) mf.onnx.export(fn, p, {inputs = {mf.ones{2}}}) end},
    {"export_onnx", function(p) fn:export_onnx(p, mf.ones{2}) end},
    {"write_dot", function(p) g:write_dot(p) end},
    {"render", function(p) g:render(p) end},
    {"plot", function(p) mf.plot({1, 2, 3}, {file = p}) end},
    {"save_trace", function(p) prof:save_trace(p) end},
    {"create_file_writer", function(p) mf.summary.create_file_writer(p) end},
  }
  for _, c in ipairs(cases) do
    T.raises(c[2], c[1] .. ": the path holds a NUL byte (\\0) at byte " .. #dir + 7, nul)
    T.raises(c[2], c[1] .. ": expected a path, got an empty string", "")
  end
  T.raises(mf.summary.TensorBoard, "TensorBoard: logdir holds a NUL byte (\\0) at byte " ..
           #dir + 7, nul)
  T.eq(sh("ls " .. dir .. "/nul"), "", nil, "a file was written at the path cut at its NUL byte")
end)

-- load refuses headers over 100 MiB (the reference reader's limit): save
-- wrote them, so the checkpoint could not be read back.
T.test("save refuses a header that load would refuse", function()
  local p = dir .. "/big_header.safetensors"
  local big = string.rep("x", 100 * 1024 * 1024)
  T.raises(mf.save, "save: the header would be 104857", p, {a = mf.ones{1}}, {note = big})
  T.ok(not read(p), "the file was written")
  big = nil
  collectgarbage()
  T.eq(leftovers("big_header.safetensors"), "")
end)

os.execute("rm -rf " .. dir)
T.done()
