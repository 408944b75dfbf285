-- test_blas_memory.lua — GEMMs and LAPACK when memory is used up (issue
-- #35, H3). OpenBLAS maps a 128 MiB work buffer per concurrent call on
-- first use and, when the mapping fails, retries for ever: the first GEMM
-- of a process whose memory was used up spun, deaf to Ctrl-C (also a GEMM
-- split over two threads with one buffer mapped, and eager fit after an
-- out-of-memory error). moonflow maps the buffers at start-up and checks
-- before a call that could need more (core/parallel.c). A child runs under
-- `ulimit -v` and a kill timeout; it must finish, never hang.
-- The sanitizer builds cannot run under ulimit -v: under `make check` this
-- runs build/release/moonflow when it exists, else it is skipped.
local T = dofile("tests/lua/harness.lua")

-- Fills the address space with tensors, frees 24 MB (room for the ops'
-- tensors, not for a 128 MiB buffer), then runs a split GEMM, a convolution,
-- LAPACK and a few steps of eager fit, each under pcall.
local fill_then_compute = [[
local a = mf.ones{512, 512}
local keep, sizes = {}, {}
for _, n in ipairs{4 * 1024 * 1024, 256 * 1024, 16 * 1024} do
  while pcall(function() keep[#keep + 1] = mf.ones{n}; sizes[#keep] = 4 * n end) do end
end
local freed = 0
while freed < 24 * 1024 * 1024 do freed = freed + sizes[#keep]; keep[#keep] = nil; sizes[#sizes] = nil end
collectgarbage()
io.stderr:write("FULL ", #keep, "\n")
local function try(name, f)
  local ok, err = pcall(f)
  io.stderr:write(name, " ", tostring(ok), " ", tostring(err):gsub("\n.*", ""), "\n")
end
try("MATMUL", function() return mf.matmul(a, a)[1][1] end)
try("CONV", function()
  return mf.reduce_sum(mf.nn.conv2d(mf.ones{1, 32, 32, 8}, mf.ones{3, 3, 8, 8}, 1, "VALID")):item()
end)
try("INVERSE", function() return mf.linalg.inv(mf.eye(64) * 2)[1][1] end)
try("FIT", function()
  local ds = mf.data.Dataset.from_tensor_slices{mf.ones{64, 16}, mf.ones{64, 1}}:batch(16)
  local m = mf.layers.Sequential{mf.layers.Dense(64), mf.layers.Dense(1)}
  return #m:fit(ds, {loss = "mean_squared_error", epochs = 2, verbose = 0, trace = false}).loss
end)
io.stderr:write("DONE\n")
]]

local function run_child(exe, limit_kib, env, script_text)
  local script = os.tmpname()
  local f = assert(io.open(script, "w")); f:write(script_text); f:close()
  local p = assert(io.popen(string.format(
      "sh -c 'ulimit -v %d; %s exec timeout -s KILL 60 %s %s' 2>&1", limit_kib, env, exe,
      script)))
  local out = p:read("a")
  p:close()
  os.remove(script)
  return out
end

local exe = T.unsanitized_binary()

for _, threads in ipairs{1, 2} do
  T.test(string.format("with memory used up, BLAS and LAPACK calls on %d thread(s) finish",
                       threads), function()
    if not exe then
      print("skipped: no release build (the sanitizer build cannot run under ulimit -v)")
      return
    end
    local out = run_child(exe, 1000000, string.format(
        "OPENBLAS_NUM_THREADS=1 MOONFLOW_NUM_THREADS=%d", threads), fill_then_compute)
    T.ok(out:find("DONE", 1, true), "the child did not finish (killed after 60 s?):\n" .. out)
    T.ok(out:find("MATMUL true 512.0", 1, true), out)
    T.ok(out:find("CONV true 518400.0", 1, true), out)
    T.ok(out:find("INVERSE true 0.5", 1, true), out)
    T.ok(out:find("FIT true 2", 1, true), out)
  end)
end

-- Too little address space for even one buffer: the start-up reservation
-- fails and the GEMM is a clear error, not a hang.
T.test("without room for OpenBLAS's buffer a GEMM is an out-of-memory error", function()
  if not exe then
    print("skipped: no release build (the sanitizer build cannot run under ulimit -v)")
    return
  end
  -- the address space of a process that ran a GEMM (its buffer mapped)
  local probe = [[local a = mf.ones{256, 256}; local b = mf.matmul(a, a)
    for l in io.lines("/proc/self/status") do
    local v = l:match("^VmSize:%s+(%d+)") if v then io.stderr:write("VM ", v, "\n") end end]]
  local vm = tonumber(run_child(exe, 4000000, "OPENBLAS_NUM_THREADS=1", probe):match("VM (%d+)"))
  T.ok(vm, "no VmSize")
  -- less half of that buffer
  local out = run_child(exe, vm - 65536, "OPENBLAS_NUM_THREADS=1", [[
    local a = mf.ones{256, 256}
    local ok, err = pcall(function() return mf.matmul(a, a)[1][1] end)
    io.stderr:write("MATMUL ", tostring(ok), " ", tostring(err), "\n")
    io.stderr:write("DONE\n")]])
  T.ok(out:find("DONE", 1, true), "the child did not finish (killed after 60 s?):\n" .. out)
  T.ok(out:find("MATMUL false", 1, true) and
       out:find("MatMul: out of memory for OpenBLAS's work buffers", 1, true), out)
end)

T.done()
