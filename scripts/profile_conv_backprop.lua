-- profile_conv_backprop.lua — where does a small CNN's backward pass spend
-- its time? Runs the forward pass on a gradient tape, then profiles only
-- tape:gradient and prints the report (one row per op) and every GEMM with
-- its M, N, K and % of this machine's peak, next to the im2col / col2im
-- steps around it.
--
--   moonflow scripts/profile_conv_backprop.lua [batch [trace.json]]
--
-- The network (NHWC, float32): 28x28x1 -> conv 3x3 (1 -> 32, SAME) -> relu
-- -> conv 3x3 (32 -> 64, stride 2, SAME) -> relu -> conv 1x1 (64 -> 64)
-- -> relu -> max_pool 2 -> dense 3136 -> 10 -> softmax cross-entropy.
-- As doc/design.md "Conv2D lowered to GEMMs" predicts, each 3x3 conv's backward
-- is two GEMMs: Conv2DBackpropFilter (patches^T x dy: M = 9*Cin, N = Cout,
-- K = N*Ho*Wo) and Conv2DBackpropInput (dy x filter^T: M = N*Ho*Wo,
-- N = 9*Cin, K = Cout) followed by col2im; the 1x1 conv needs no im2col.
-- The first layer's input needs no gradient, so it has no BackpropInput;
-- with one input channel it runs the direct kernel (no GEMM, see
-- core/ops/conv.h "Algorithms"). The end compares im2col and Winograd on
-- one 3x3 layer side by side.

local batch = math.tointeger(tonumber(arg and arg[1] or 32))
assert(batch and batch >= 1,
       "usage: profile_conv_backprop.lua [batch [trace.json]]: batch must be a positive integer")
local trace_path = arg and arg[2]

mf.random.seed(1)
local x = mf.random.normal({batch, 28, 28, 1})
local label_values = {}
for i = 1, batch do label_values[i] = (i * 7) % 10 + 1 end
local labels = mf.tensor(label_values, "int64")

local he = mf.initializers.he_normal{seed = 2}
local params = {
  w1 = mf.Variable(he{3, 3, 1, 32}),
  w2 = mf.Variable(he{3, 3, 32, 64}),
  w3 = mf.Variable(he{1, 1, 64, 64}),
  wd = mf.Variable(he{7 * 7 * 64, 10}),
}

local function forward()
  local h = mf.nn.relu(mf.nn.conv2d(x, params.w1, 1, "SAME"))          -- (B, 28, 28, 32)
  h = mf.nn.relu(mf.nn.conv2d(h, params.w2, 2, "SAME"))                -- (B, 14, 14, 64)
  h = mf.nn.relu(mf.nn.conv2d(h, params.w3, 1, "SAME"))                -- (B, 14, 14, 64)
  h = mf.nn.max_pool(h, 2, 2, "VALID")                                  -- (B, 7, 7, 64)
  local logits = mf.matmul(mf.reshape(h, {batch, 7 * 7 * 64}), params.wd)
  return mf.reduce_mean(mf.nn.sparse_softmax_cross_entropy_with_logits{
    labels = labels, logits = logits})
end

-- One untimed step first, so allocator caches and BLAS threads are warm.
local function step()
  local tape = mf.GradientTape()
  local loss = forward()
  return tape, loss
end
do
  local tape, loss = step()
  tape:gradient(loss, {params.w1, params.w2, params.w3, params.wd})
end

local tape, loss = step()
local prof = mf.profile(function()
  return tape:gradient(loss, {params.w1, params.w2, params.w3, params.wd})
end)

print(string.format("Backward pass of a small CNN, batch %d (loss %.4f); peak %.1f GFLOP/s\n",
                    batch, loss:item(), mf.profiler.peak()))
print(prof)
print("\nGEMMs and the im2col / col2im steps around them, in time order:\n")
print(prof:gemms())

-- Where the whole backward pass goes: each op's own (self) time, split
-- into its GEMMs and im2col / col2im steps and the rest of its work
-- (zeroing, reshaping, the elementwise gradients of relu and pooling).
local by, inside = {}, {}
for _, g in ipairs(prof:gemms()) do
  local key = g.op .. " " .. (g.step or "GEMM")
  by[key] = (by[key] or 0) + g.ms
  inside[g.op] = (inside[g.op] or 0) + g.ms
end
local total = 0
for _, r in ipairs(prof:rows()) do
  total = total + r.self_ms
  local rest = r.self_ms - (inside[r.type] or 0)   -- type: the op's name, as gemms' op
  if rest > 0.0005 then
    by[r.op .. (inside[r.type] and " (rest)" or "")] = rest
  end
end
local keys = {}
for k in pairs(by) do keys[#keys + 1] = k end
table.sort(keys, function(a, b) return by[a] > by[b] end)
print("\nTime by op and step (self time; the rows add up to the backward pass):")
for _, k in ipairs(keys) do
  print(string.format("  %-36s %8.3f ms  %5.1f%%", k, by[k], 100 * by[k] / total))
end
print(string.format("  %-36s %8.3f ms", "total", total))

-- One layer, both algorithms side by side: the 3x3 conv 32 -> 64 on 28x28
-- (batch as above), forward and backward, once lowered to im2col + one
-- GEMM per pass and once to Winograd F(4x4, 3x3): transforms + 36 GEMMs
-- in the transform domain (labelled "winograd" in prof:gemms()). Same
-- arithmetic (GEMM-equivalent FLOPs), different work.
local lx = mf.random.normal({batch, 28, 28, 32})
local lw = mf.Variable(he{3, 3, 32, 64})
local function layer_profile(algorithm)
  local function pass()
    local tape = mf.GradientTape()
    tape:watch(lx)
    local y = mf.nn.conv2d(lx, lw, 1, "SAME", {algorithm = algorithm})
    return tape:gradient(mf.reduce_sum(y * y), {lx, lw})
  end
  pass()
  local ms, p = {}, nil
  for run = 1, 3 do -- the median of three profiled runs, per op
    p = mf.profile(pass)
    for _, r in ipairs(p:rows()) do
      -- r.type: the op's name (r.op also lists its attributes)
      ms[r.type] = ms[r.type] or {}
      table.insert(ms[r.type], r.self_ms)
    end
  end
  local med = {}
  for op, t in pairs(ms) do table.sort(t); med[op] = t[2] end
  local shapes = {}
  for _, g in ipairs(p:gemms()) do
    if g.M then
      local key = string.format("%s %s M=%d N=%d K=%d", g.op, g.algorithm or "im2col",
                                g.M, g.N, g.K)
      shapes[key] = (shapes[key] or 0) + 1
    end
  end
  return med, shapes
end
local im, im_shapes = layer_profile("im2col")
local wg, wg_shapes = layer_profile("winograd")
print(string.format("\nOne layer, both algorithms: conv 3x3 SAME, (%d, 28, 28, 32) -> 64 " ..
                    "channels, forward and backward (median ms of 3 runs)", batch))
print(string.format("  %-22s %10s %10s %9s", "op", "im2col", "winograd", "speedup"))
local sum_i, sum_w = 0, 0
for _, op in ipairs{"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"} do
  local a, b = im[op] or 0, wg[op] or 0
  sum_i, sum_w = sum_i + a, sum_w + b
  print(string.format("  %-22s %10.3f %10.3f %8.2fx", op, a, b, b > 0 and a / b or 0))
end
print(string.format("  %-22s %10.3f %10.3f %8.2fx", "the three passes", sum_i, sum_w,
                    sum_w > 0 and sum_i / sum_w or 0))
for _, shapes in ipairs{im_shapes, wg_shapes} do
  local keys = {}
  for k in pairs(shapes) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do print(string.format("  %3d GEMM%s %s", shapes[k],
                                                   shapes[k] == 1 and " " or "s", k)) end
end

if trace_path then
  prof:save_trace(trace_path)
  print("\ntrace written to " .. trace_path .. " (open it in https://ui.perfetto.dev)")
end
