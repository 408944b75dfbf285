-- test_profile_attrs.lua — profiler rows and the Chrome trace show each op's
-- non-default attributes as the listings do (the schema's formatter,
-- core/attrs.c): eager rows are told apart by them ("MatMul[transpose_b]"
-- next to "MatMul"), a graph node's row carries its label, and the trace's
-- op events give it in args.label.
local T = dofile("tests/lua/harness.lua")

local function find(list, pred)
  for _, r in ipairs(list) do
    if pred(r) then return r end
  end
end

local function has(text, piece)
  T.ok(text:find(piece, 1, true), "missing '" .. piece .. "' in:\n" .. text)
end

T.test("eager rows: one per op and attributes", function()
  local a, img = mf.ones{2, 3}, mf.ones{1, 8, 8, 2}
  local prof = mf.profile(function()
    mf.matmul(a, a, {transpose_b = true})
    mf.matmul(a, mf.ones{3, 2})
    mf.reduce_sum(a, 2, true)
    mf.nn.conv2d(img, mf.ones{3, 3, 2, 4}, 2, "SAME")
  end)
  local rows = prof:rows()
  local mt = find(rows, function(r) return r.op == "MatMul[transpose_b]" end)
  T.ok(mt, "no MatMul[transpose_b] row:\n" .. tostring(prof))
  T.eq(mt.type, "MatMul")
  T.eq(mt.label, "MatMul[transpose_b]")
  T.eq(mt.calls, 1)
  T.eq(mt.flops, 2 * 2 * 2 * 3)
  local plain = find(rows, function(r) return r.op == "MatMul" end)
  T.ok(plain, "the plain MatMul has its own row")
  T.eq(plain.label, "MatMul")
  T.ok(find(rows, function(r) return r.op == "Sum[axis=2, keepdims]" end), tostring(prof))
  -- a convolution's row says which algorithm ran (2 input channels: direct)
  local conv = find(rows, function(r) return r.op == "Conv2D[strides=2, SAME] (direct)" end)
  T.ok(conv, tostring(prof))
  T.eq(conv.type, "Conv2D")
  local text = tostring(prof)
  has(text, "MatMul[transpose_b]")
  has(text, "Conv2D[strides=2, SAME] (direct)")
end)

-- issue #30: conv_algorithm "auto" rows name the algorithm that ran; gemms()
-- says why a direct convolution has no GEMM; no GEMM row is above 100% of
-- the peak, which the report names.
T.test("conv rows name their algorithm; gemms() explains a direct kernel", function()
  local rgb = mf.random.normal{2, 12, 12, 3}
  local wide = mf.random.normal{2, 12, 12, 16}
  local prof = mf.profile(function()
    mf.nn.conv2d(rgb, mf.ones{3, 3, 3, 8}, 1, "SAME")      -- Cin = 3: direct
    mf.nn.conv2d(wide, mf.ones{3, 3, 16, 16}, 1, "SAME")   -- 3x3, 16 channels: winograd
  end)
  local text = tostring(prof)
  has(text, "Conv2D[SAME] (direct)")
  has(text, "Conv2D[SAME] (winograd)")
  has(text, "GEMM peak ")
  local gemms = tostring(prof:gemms())
  has(gemms, "1 convolution ran the direct kernel, which computes without GEMMs")
  for pct in gemms:gmatch("%s([%d.]+)%%") do
    T.ok(tonumber(pct) <= 100, "a GEMM above 100% of the peak:\n" .. gemms)
  end
  -- the Winograd row counts the products it ran (its GEMMs'), not the direct sum's 4x more:
  -- an op row's % of peak was 4x too high (above 100%)
  local ran = 0
  for _, g in ipairs(prof:gemms()) do
    if g.algorithm == "winograd" then ran = ran + g.flops end
  end
  local direct_sum = 2 * (2 * 12 * 12) * (3 * 3 * 16) * 16
  T.ok(ran > 0 and ran < direct_sum / 2, "winograd GEMMs " .. ran)
  local seen = 0
  for _, row in ipairs(prof:rows()) do
    if row.label:find("winograd", 1, true) then
      T.eq(row.flops, ran, 0, "the winograd row's FLOPs are its GEMMs'")
      seen = seen + 1
    end
    T.ok(not row.peak_pct or row.peak_pct <= 100, row.label .. " at " ..
         tostring(row.peak_pct) .. "% of peak")
  end
  T.eq(seen, 1)
  local only_direct = mf.profile(function() mf.nn.conv2d(rgb, mf.ones{3, 3, 3, 8}, 1, "SAME") end)
  has(tostring(only_direct:gemms()), "0 GEMMs, 1 step\n1 convolution ran the direct kernel")
end)

T.test("graph rows: node name with its label; the trace's args.label", function()
  local g = mf.Graph()
  local x, s, grads
  g:as_default(function()
    x = mf.placeholder("float32", {2, 3}, "x")
    local w = mf.constant(mf.ones{3, 4})
    s = mf.reduce_sum(mf.matmul(x, w), 2, true)
    grads = mf.gradients(s, {x})
  end)
  local sess = mf.Session(g)
  local prof = mf.profile(function()
    sess:run({s, grads[1]}, {[x] = mf.ones{2, 3}})
  end)
  local rows = prof:rows()
  local red = find(rows, function(r) return r.op == "reduce_sum" end)
  T.ok(red, tostring(prof))
  T.eq(red.type, "Sum")
  T.eq(red.label, "Sum[axis=2, keepdims]")
  local mg = find(rows, function(r) return r.op == "gradients/matmul_grad/matmul" end)
  T.ok(mg, tostring(prof))
  T.eq(mg.label, "MatMul[transpose_b]")
  has(tostring(prof), "gradients/matmul_grad/matmul (MatMul[transpose_b])")
  has(tostring(prof), "reduce_sum (Sum[axis=2, keepdims])")
  local path = os.tmpname()
  prof:save_trace(path)
  local f = assert(io.open(path, "rb"))
  local json = f:read("a")
  f:close()
  os.remove(path)
  has(json, '"name": "reduce_sum"')
  has(json, '"op": "Sum", "label": "Sum[axis=2, keepdims]"')
  has(json, '"op": "MatMul", "label": "MatMul[transpose_b]"')
end)

T.test("eager trace events are named by the label", function()
  local a = mf.ones{2, 3}
  local prof = mf.profile(function() mf.matmul(a, a, {transpose_b = true}) end)
  local path = os.tmpname()
  prof:save_trace(path)
  local f = assert(io.open(path, "rb"))
  local json = f:read("a")
  f:close()
  os.remove(path)
  has(json, '"name": "MatMul[transpose_b]"')
  has(json, '"op": "MatMul", "label": "MatMul[transpose_b]"')
end)

T.done()
