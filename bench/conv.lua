-- conv.lua [SHAPES [RUNS [ALGORITHM]]] — the three passes of a 2-D convolution
-- (forward, backprop-input, backprop-filter) on your own shapes: median wall
-- time of RUNS timed calls (default 9) after a warm-up, GEMM-equivalent
-- GFLOP/s (2 * N*Ho*Wo * kh*kw*Cin * Cout / time, whatever the algorithm)
-- and the % of this machine's SGEMM peak measured in the same process
-- (mf.profiler.peak(), at the current thread count).
--
--   moonflow bench/conv.lua                       the four benchmark layers
--   moonflow bench/conv.lua "8x14x14x256:3x3x256:1:SAME,..." 15
--
-- A shape is NxHxWxCin:KHxKWxCout[:STRIDE[:PADDING]] (NHWC input, HWIO
-- filter, float32); shapes are separated by commas. ALGORITHM (default:
-- mf's default) is passed as conv_algorithm when that option exists.
-- Threads: OPENBLAS_NUM_THREADS or MOONFLOW_NUM_THREADS. Output, one line a
-- pass: "conv LAYER PASS MS GFLOPS PEAK_PCT" then "peak GFLOPS" (bench/conv.sh
-- reads these).
local default = "32x28x28x1:3x3x32,32x28x28x32:3x3x64,16x56x56x64:3x3x64,8x14x14x256:3x3x256"
local spec = arg[1] and arg[1] ~= "" and arg[1] or default
local runs = math.tointeger(tonumber(arg[2] or 9))
local algorithm = arg[3]
assert(runs and runs >= 1, "conv.lua: RUNS must be a positive integer")

local function parse(s)
  local n, h, w, c, kh, kw, o, rest =
      s:match("^(%d+)x(%d+)x(%d+)x(%d+):(%d+)x(%d+)x(%d+)(.*)$")
  assert(n, "conv.lua: a shape is NxHxWxCin:KHxKWxCout[:STRIDE[:PADDING]], got " .. s)
  local stride, pad = rest:match("^:(%d+):(%a+)$")
  if not stride then stride = rest:match("^:(%d+)$") end
  assert(rest == "" or stride, "conv.lua: bad stride/padding in " .. s)
  local t = {N = n, H = h, W = w, C = c, kh = kh, kw = kw, O = o, s = stride or 1}
  for k, v in pairs(t) do t[k] = math.tointeger(tonumber(v)) end
  t.pad = pad or "SAME"
  t.name = s
  return t
end

local function out_size(i, k, s, pad)
  if pad == "SAME" then return (i + s - 1) // s end
  return (i - k) // s + 1
end

if algorithm and algorithm ~= "" then
  local ok, err = pcall(mf.config, {conv_algorithm = algorithm})
  if not ok then io.stderr:write("conv.lua: conv_algorithm not set: ", tostring(err), "\n") end
end

-- One call whose result is freed as it goes out of scope (<close>), as
-- PyTorch frees by reference count: otherwise each 3 MB output waits for a
-- garbage collection, and the timed calls pay fresh pages (~1.5 ms for layer
-- a's forward) and every third one a full collection.
local function call(f)
  local out <close> = f()
end

local function median(f)
  call(f); call(f)                                  -- warm-up: caches, threads, filter transforms
  local times = {}
  for r = 1, runs do
    local t0 = mf.clock()
    call(f)
    times[r] = (mf.clock() - t0) * 1e3
  end
  table.sort(times)
  return times[(runs + 1) // 2]
end

local peak = mf.profiler.peak()
mf.random.seed(1)
for layer in spec:gmatch("[^,]+") do
  local g = parse(layer)
  local Ho, Wo = out_size(g.H, g.kh, g.s, g.pad), out_size(g.W, g.kw, g.s, g.pad)
  local x = mf.random.normal({g.N, g.H, g.W, g.C})
  local w = mf.random.normal({g.kh, g.kw, g.C, g.O}) * 0.1
  local dy = mf.random.normal({g.N, Ho, Wo, g.O})
  local flops = 2 * g.N * Ho * Wo * g.kh * g.kw * g.C * g.O
  local passes = {
    {"forward", function() return mf.nn.conv2d(x, w, g.s, g.pad) end},
    {"backprop_input", function()
      return mf.nn.conv2d_backprop_input({g.N, g.H, g.W, g.C}, w, dy, g.s, g.pad) end},
    {"backprop_filter", function()
      return mf.nn.conv2d_backprop_filter(x, {g.kh, g.kw, g.C, g.O}, dy, g.s, g.pad) end},
  }
  for _, p in ipairs(passes) do
    local ms = median(p[2])
    local gflops = flops / (ms * 1e6)
    print(string.format("conv %s %s %.3f %.1f %.0f", g.name, p[1], ms, gflops,
                        100 * gflops / peak))
  end
end
print(string.format("peak %.1f", peak))
