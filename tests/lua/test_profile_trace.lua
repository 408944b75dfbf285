-- test_profile_trace.lua — what a practitioner checks in a profile: the
-- GEMM sizes of a strided conv's forward and backward passes (worked out
-- by hand below), and a trace file that the Trace Event Format accepts:
-- complete events with ts, dur, pid and tid, children nested inside their
-- op to the nanosecond, and valid UTF-8 even when a node name is not.
local T = dofile("tests/lua/harness.lua")

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- x (4, 8, 8, 3), filter 3x3x3x16, stride 2, SAME: output (4, 4, 4, 16), so
-- the patches matrix is (N*Ho*Wo) x (9*Cin) = 64 x 27 and dy is 64 x 16.
--   Conv2D:               patches (64x27) x filter (27x16)  M=64 N=16 K=27
--   Conv2DBackpropInput:  dy (64x16) x filter^T (16x27)     M=64 N=27 K=16, then col2im
--   Conv2DBackpropFilter: patches^T (27x64) x dy (64x16)    M=27 N=16 K=64, after im2col
-- Each is 2*M*N*K = 55296 FLOPs.
mf.random.seed(1)
local x = mf.random.normal({4, 8, 8, 3})
local w = mf.Variable(mf.random.normal({3, 3, 3, 16}))
-- the im2col lowering (with Cin = 3 'auto' picks the direct kernel, no GEMMs)
local im2col = {algorithm = "im2col"}

local function gemm_sizes(prof)
  local t = {}
  for _, g in ipairs(prof:gemms()) do
    if g.M then
      t[#t + 1] = string.format("%s %dx%dx%d %s%s %.0f", g.op, g.M, g.N, g.K,
                                g.trans_a and "T" or "N", g.trans_b and "T" or "N", g.flops)
    else
      t[#t + 1] = string.format("%s %s %.0f", g.op, g.step, g.bytes)
    end
  end
  return table.concat(t, "; ")
end

T.test("gemms: a strided conv's three GEMMs match the hand count", function()
  local fwd = mf.profile(function() return mf.nn.conv2d(x, w, 2, "SAME", im2col) end)
  T.eq(gemm_sizes(fwd), "Conv2D im2col 6912; Conv2D 64x16x27 NN 55296")
  local tape = mf.GradientTape{persistent = true}
  tape:watch(x)
  local y = mf.reduce_sum(mf.nn.conv2d(x, w, 2, "SAME", im2col))
  local back = mf.profile(function() return tape:gradient(y, {x, w}) end)
  T.eq(gemm_sizes(back), "Conv2DBackpropInput 64x27x16 NT 55296; " ..
       "Conv2DBackpropInput col2im 6912; Conv2DBackpropFilter im2col 6912; " ..
       "Conv2DBackpropFilter 27x16x64 TN 55296")
end)

-- The complete events of a trace file as {name, ts_ns, dur_ns, depth}.
local function events(s)
  local t = {}
  for ev in s:gmatch('{"name": [^\n]*"ph": "X"[^\n]*') do
    local ts_i, ts_f, dur_i, dur_f = ev:match('"ts": (%d+)%.(%d%d%d), "dur": (%d+)%.(%d%d%d),')
    T.ok(ts_i, "ts and dur with 3 decimals: " .. ev)
    T.ok(ev:find('"pid": 1, "tid": 1,', 1, true), "pid and tid: " .. ev)
    t[#t + 1] = {name = ev:match('^{"name": "([^"]*)"'),
                 ts = tonumber(ts_i) * 1000 + tonumber(ts_f),
                 dur = tonumber(dur_i) * 1000 + tonumber(dur_f),
                 depth = tonumber(ev:match('"depth": (%d+)'))}
  end
  return t
end

T.test("save_trace: children nest inside their op to the nanosecond", function()
  local tape = mf.GradientTape{persistent = true}
  tape:watch(x)
  local y = mf.reduce_sum(mf.nn.conv2d(x, w, 1, "SAME", im2col))
  local prof = mf.profile(function()
    for _ = 1, 20 do tape:gradient(y, {x, w}) end
  end)
  local path = os.tmpname()
  prof:save_trace(path)
  local s = read(path)
  os.remove(path)
  local ev = events(s)
  T.ok(#ev >= 20 * 8, #ev .. " events")
  local parent, children = nil, 0
  for _, e in ipairs(ev) do
    if e.depth == 0 then
      T.ok(not parent or e.ts >= parent.ts + parent.dur, "ops do not overlap: " .. e.name)
      parent = e
    else
      T.ok(parent and e.ts >= parent.ts and e.ts + e.dur <= parent.ts + parent.dur,
           e.name .. " inside " .. (parent and parent.name or "nothing"))
      children = children + 1
    end
  end
  T.ok(children >= 20 * 4, children .. " GEMM and im2col/col2im events")
end)

T.test("save_trace: a node name that is not UTF-8 still gives valid JSON", function()
  local g = mf.Graph()
  local p, y
  g:as_default(function()
    p = mf.placeholder("float32", {2}, "in")
    mf.name_scope("scope\255\192", function() y = mf.add(p, p) end)
  end)
  local sess = mf.Session(g)
  local prof = mf.profile(function() return sess:run(y, {[p] = mf.ones{2}}) end)
  local path = os.tmpname()
  prof:save_trace(path)
  local s = read(path)
  T.ok(utf8.len(s), "the file is valid UTF-8")
  T.ok(s:find('"name": "scope\\ufffd\\ufffd/add"', 1, true), s)
  -- Python's json module reads it (when a python3 is on the PATH).
  if os.execute("command -v python3 > /dev/null 2>&1") then
    T.ok(os.execute("python3 -c 'import json, sys; d = json.load(open(sys.argv[1], " ..
                    "encoding=\"utf-8\")); assert d[\"traceEvents\"][1][\"name\"] == " ..
                    "\"scope\\ufffd\\ufffd/add\"' " .. path), "python json")
  end
  os.remove(path)
end)

T.done()
