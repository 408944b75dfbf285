-- test_memory_recovery.lua — memory recovers after a large phase (issue #13,
-- item 3). A child moonflow runs under `ulimit -v` (1.25 GB of address
-- space): a 1 GB phase is dropped and collected (its blocks sit in the
-- tensor cache), then training with a 20 MB working set must run (the GC
-- threshold follows the live set down, not the old peak), then a new 600 MB
-- live set of another block size must fit (the cache is trimmed when the
-- system refuses memory), then memory held only by dropped, uncollected
-- tensors must be found (a failed allocation runs a full collection and
-- retries). The sanitizer builds compile the cache out and cannot run under
-- ulimit -v, so this test uses the release allocator: under `make check` it
-- runs build/release/moonflow when it exists, else it is skipped.
local T = dofile("tests/lua/harness.lua")

local child = [[
local function mb(n) return n >> 20 end
local function say(what)
  local m = mf.memory()
  io.stderr:write(string.format("%s in_use %d MB cached %d MB\n", what, mb(m.in_use),
                                mb(m.cached)))
end
local big = {}
for i = 1, 10 do big[i] = mf.fill({25, 1000, 1000}, i) end   -- 100 MB each
big = nil
collectgarbage()
say("BIG")
local w = mf.Variable(mf.random.normal({1000, 1000}, {stddev = 0.01}))
local x = mf.random.normal{1000, 1000}
local opt = mf.train.GradientDescentOptimizer(0.01)
for step = 1, 200 do
  local tape = mf.GradientTape()
  local loss = mf.reduce_mean(mf.square(mf.matmul(x, w) + step))
  opt:apply_gradients({{tape:gradient(loss, w), w}})
end
say("TRAIN")
local mid = {}
for i = 1, 3 do mid[i] = mf.fill({50, 1000, 1000}, i) end      -- 200 MB each
say("MID")
-- 600 MB held by boxes nobody references, with no collection since: the
-- next 600 MB only fit once a failed allocation has collected them
mid = nil
local again = {}
for i = 1, 3 do again[i] = mf.fill({50, 1000, 1000}, i) end
say("AGAIN")
io.stderr:write("DONE\n")
]]

T.test("after a 1 GB phase, training and new large tensors fit in 1.25 GB", function()
  local exe = T.unsanitized_binary()
  if not exe then
    print("skipped: no release build (the sanitizer build cannot run under ulimit -v)")
    return
  end
  local script = os.tmpname()
  local f = assert(io.open(script, "w")); f:write(child); f:close()
  local p = assert(io.popen(string.format(
      "sh -c 'ulimit -v 1300000; OPENBLAS_NUM_THREADS=1 exec %s %s' 2>&1", exe, script)))
  local out = p:read("a")
  p:close()
  os.remove(script)
  T.ok(out:find("DONE", 1, true), "the child ran out of memory:\n" .. out)
  T.ok(out:find("BIG in_use 0 MB cached 9%d%d MB"), "the large phase did not fill the cache:\n" .. out)
end)

T.done()
