-- test_profile.lua — mf.profile, mf.profiler.start/stop/peak and the report:
-- printing, rows, gemms (records and printing), save_trace (read back,
-- write errors), errors in the profiled function, the profiler being off
-- afterwards, and the three GEMMs (with im2col / col2im steps) of a conv's
-- forward and backward pass with doc/design.md's M, N, K.
local T = dofile("tests/lua/harness.lua")

local function has(text, part)
  return string.find(text, part, 1, true) ~= nil
end

local function find(list, pred)
  for _, r in ipairs(list) do
    if pred(r) then return r end
  end
end

T.test("mf.profile of a matmul: rows", function()
  local a, b = mf.ones{64, 32}, mf.ones{32, 16}
  local prof, y, extra = mf.profile(function(x) return mf.matmul(a, b) + x, "more" end, 1)
  T.eq(y.shape, {64, 16})
  T.eq(y:totable()[1][1], 33)
  T.eq(extra, "more")
  local rows = prof:rows()
  T.eq(#rows, 2)
  local mm = find(rows, function(r) return r.op == "MatMul" end)
  T.ok(mm, "no MatMul row")
  T.eq(mm.type, "MatMul")
  T.eq(mm.calls, 1)
  T.eq(mm.flops, 2 * 64 * 16 * 32)
  T.ok(mm.total_ms > 0 and mm.self_ms <= mm.total_ms and mm.avg_ms == mm.total_ms)
  T.ok(mm.gflops > 0 and mm.peak_pct > 0)
  T.ok(find(rows, function(r) return r.op == "AddV2" end), "no AddV2 row")
  T.ok(rows[1].total_ms >= rows[2].total_ms, "rows sorted by total")
  local text = tostring(prof)
  for _, col in ipairs{"op", "calls", "total ms", "self ms", "avg ms", "FLOPs", "GFLOP/s",
                       "% peak", "MatMul", "AddV2"} do
    T.ok(has(text, col), "table lacks " .. col .. ":\n" .. text)
  end
  T.eq(tostring(rows), text)
end)

T.test("gemms: records with M, N, K and transposes", function()
  local a, b = mf.ones{20, 30}, mf.ones{40, 30}
  local prof = mf.profile(function() return mf.matmul(a, b, {transpose_b = true}) end)
  local g = prof:gemms()
  T.eq(#g, 1)
  T.eq(g[1].op, "MatMul")
  T.eq({g[1].M, g[1].N, g[1].K}, {20, 40, 30})
  T.eq(g[1].trans_a, false)
  T.eq(g[1].trans_b, true)
  T.ok(g[1].ms > 0 and g[1].gflops > 0 and g[1].peak_pct > 0)
  T.eq(g[1].flops, 2 * 20 * 40 * 30)
  local text = tostring(g)
  T.ok(has(text, "GEMM") and has(text, "MatMul") and has(text, "N T"), text)
  T.ok(has(text, "1 GEMM, 0 steps"), text)
end)

T.test("batched matmul: one GEMM per batch", function()
  local prof = mf.profile(function() return mf.matmul(mf.ones{3, 4, 5}, mf.ones{3, 5, 6}) end)
  local g = prof:gemms()
  T.eq(#g, 3)
  for i = 1, 3 do
    T.eq(g[i].op, "BatchMatMulV2")
    T.eq({g[i].M, g[i].N, g[i].K}, {4, 6, 5})
  end
end)

T.test("profiler.start / stop", function()
  mf.profiler.start()
  local y = mf.exp(mf.ones{4})
  y = mf.exp(y)
  local prof = mf.profiler.stop()
  local rows = prof:rows()
  local ex = find(rows, function(r) return r.op == "Exp" end)
  T.ok(ex, "no Exp row")
  T.eq(ex.calls, 2)
  T.eq(#prof:gemms(), 0)
  T.ok(has(tostring(prof:gemms()), "no GEMMs") or has(tostring(prof:gemms()), "0 GEMMs"))
  T.raises(function() mf.profiler.stop() end, "mf.profiler.stop: the profiler is not running")
  mf.profiler.start()
  T.raises(function() mf.profiler.start() end, "mf.profiler.start: the profiler is already running")
  T.raises(function() mf.profile(function() end) end, "mf.profile: the profiler is already running")
  mf.profiler.stop()
end)

T.test("the profiler is off afterwards; an empty profile", function()
  local prof = mf.profile(function() end)
  T.eq(#prof:rows(), 0)
  T.ok(has(tostring(prof), "no ops ran"), tostring(prof))
  mf.matmul(mf.ones{2, 2}, mf.ones{2, 2})
  T.eq(#prof:rows(), 0)
  mf.profiler.start()   -- would raise if the profiler were still on
  mf.profiler.stop()
end)

T.test("errors in fn propagate after stopping", function()
  T.raises(function()
    mf.profile(function() mf.matmul(mf.ones{2, 3}, mf.ones{2, 3}) end)
  end, "matmul")
  T.raises(function() mf.profile(function() error("boom") end) end, "boom")
  local ok, err = pcall(mf.profile, function() error({code = 7}) end)
  T.ok(not ok and type(err) == "table" and err.code == 7, "error value kept")
  mf.profiler.start()
  mf.profiler.stop()
  T.raises(function() mf.profile(42) end, "bad argument #1")
end)

local function read(path)
  local f = assert(io.open(path, "r"))
  local s = f:read("a")
  f:close()
  return s
end

T.test("save_trace writes Chrome trace JSON", function()
  local prof = mf.profile(function() return mf.matmul(mf.ones{8, 9}, mf.ones{9, 10}) end)
  local path = os.tmpname()
  prof:save_trace(path)
  local s = read(path)
  os.remove(path)
  T.eq(s:sub(1, 14), '{"traceEvents"')
  T.ok(has(s, '"ph": "X"') and has(s, '"cat": "gemm"') and has(s, '"name": "MatMul"'), s)
  T.ok(has(s, '"M": 8, "N": 10, "K": 9'), s)
  T.ok(s:match("%]%s*,%s*\"displayTimeUnit\"") ~= nil, s)
end)

T.test("save_trace errors", function()
  local prof = mf.profile(function() end)
  T.raises(function() prof:save_trace("/nonexistent/dir/t.json") end,
           "save_trace: cannot write '/nonexistent/dir/t.json': No such file or directory")
  T.raises(function() prof:save_trace() end, "bad argument #1")
  T.raises(function() prof.save_trace(42, "x") end, "mf.ProfileReport expected")
end)

T.test("peak is measured once", function()
  local p = mf.profiler.peak()
  T.ok(type(p) == "number" and p > 1, tostring(p))
  T.eq(mf.profiler.peak(), p)
end)

-- doc/design.md "Conv2D lowered to GEMMs": forward [N·Ho·Wo, kh·kw·Cin] x [kh·kw·Cin, Cout];
-- backprop filter [kh·kw·Cin, N·Ho·Wo] x [N·Ho·Wo, Cout]; backprop input
-- [N·Ho·Wo, Cout] x [Cout, kh·kw·Cin] then col2im.
T.test("conv forward + backward: three GEMMs with doc/design.md's M, N, K", function()
  T.ok(mf.nn and mf.nn.conv2d, "mf.nn.conv2d is not bound")
  local x = mf.random.normal({2, 8, 8, 3}, {seed = 1})
  local w = mf.random.normal({3, 3, 3, 4}, {seed = 2})
  local prof = mf.profile(function()
    local tape = mf.GradientTape()
    tape:watch({x, w})
    -- im2col explicitly: with Cin = 3 'auto' picks the direct kernel
    local y = mf.nn.conv2d(x, w, 1, "SAME", {algorithm = "im2col"})
    return tape:gradient(mf.reduce_sum(y), {x, w})
  end)
  local g = prof:gemms()
  local rows_ = 2 * 8 * 8
  local function gemm(op)
    return find(g, function(r) return r.op == op and r.M ~= nil end)
  end
  local fwd, bf, bi = gemm("Conv2D"), gemm("Conv2DBackpropFilter"), gemm("Conv2DBackpropInput")
  T.ok(fwd and bf and bi, tostring(g))
  T.eq({fwd.M, fwd.N, fwd.K}, {rows_, 4, 27})
  T.eq({bf.M, bf.N, bf.K}, {27, 4, rows_})
  T.eq(bf.trans_a, true)
  T.eq({bi.M, bi.N, bi.K}, {rows_, 27, 4})
  T.eq(bi.trans_b, true)
  T.ok(find(g, function(r) return r.op == "Conv2D" and r.step == "im2col" end), tostring(g))
  T.ok(find(g, function(r) return r.op == "Conv2DBackpropInput" and r.step == "col2im"
                                  and r.bytes > 0 end), tostring(g))
  local text = tostring(prof)
  T.ok(has(text, "Conv2DBackpropFilter") and has(text, "Conv2DBackpropInput"), text)
end)

T.done()
