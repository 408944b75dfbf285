-- test_graph_grad.lua — mf.gradients (symbolic gradients in graph mode)
-- against tape gradients on the same values, the "gradients/" scope,
-- grad_ys, unconnected xs, errors, g:write_dot and g:render.
local T = dofile("tests/lua/harness.lua")

mf.random.seed(7)
local function rnd(shape) return mf.random.normal(shape, {dtype = "float64"}) end

-- Gradients of f(inputs...) w.r.t. every input: on a tape, and in a graph
-- with placeholders of the same shapes run in a Session.
local function both(f, inputs, weight)
  local tape = mf.GradientTape()
  for _, x in ipairs(inputs) do tape:watch(x) end
  local y = f(table.unpack(inputs))
  if weight then y = y * weight end
  tape:stop()
  local eager = tape:gradient(y, inputs)
  local g = mf.Graph()
  local phs, grads = {}, nil
  g:as_default(function()
    for i, x in ipairs(inputs) do phs[i] = mf.placeholder(x.dtype, x.shape, "in" .. i) end
    local gy = f(table.unpack(phs))
    if weight then gy = gy * weight end
    grads = mf.gradients(gy, phs)
  end)
  local feeds = {}
  for i, p in ipairs(phs) do feeds[p] = inputs[i] end
  local got = mf.Session(g):run(grads, feeds)
  return eager, got, g
end

local cases = {
  {"add broadcasting", function(a, b) return a + b end, {rnd{3, 4}, rnd{4}}},
  {"add broadcasting (3,1)+(1,4)", function(a, b) return mf.add(a, b) end, {rnd{3, 1}, rnd{1, 4}}},
  {"subtract", function(a, b) return a - b end, {rnd{2, 3}, rnd{2, 3}}},
  {"multiply", function(a, b) return a * b end, {rnd{2, 3}, rnd{3}}},
  {"divide", function(a, b) return a / (b * b + 1) end, {rnd{2, 3}, rnd{2, 3}}},
  {"matmul", function(a, b) return mf.matmul(a, b) end, {rnd{3, 4}, rnd{4, 2}}},
  {"matmul transpose_b", function(a, b) return mf.matmul(a, b, {transpose_b = true}) end,
   {rnd{3, 4}, rnd{2, 4}}},
  {"reduce_sum axis", function(a) return mf.reduce_sum(a, {axis = 2}) end, {rnd{3, 4}}},
  {"reduce_mean", function(a) return mf.reduce_mean(a * a) end, {rnd{3, 4}}},
  {"relu", function(a) return mf.relu(a) end, {rnd{5, 3}}},
  {"tanh", function(a) return mf.tanh(a) end, {rnd{4}}},
  {"sigmoid exp", function(a) return mf.sigmoid(a) + mf.exp(a) end, {rnd{2, 2}}},
  {"softmax", function(a) return mf.nn.softmax(a) end, {rnd{2, 5}}},
  {"concat", function(a, b) return mf.concat({a, b}, 1) end, {rnd{2, 3}, rnd{1, 3}}},
  {"slice", function(a) return mf.slice(a, {2, 1}, {2, 2}) end, {rnd{3, 4}}},
  {"transpose", function(a) return mf.transpose(a) end, {rnd{2, 3}}},
  {"reused input", function(a) return a * a + mf.tanh(a) * a end, {rnd{3}}},
  {"mlp", function(x, w, b)
    return mf.reduce_mean(mf.nn.softmax(mf.relu(mf.matmul(x, w) + b)))
  end, {rnd{4, 3}, rnd{3, 2}, rnd{2}}},
}

for _, c in ipairs(cases) do
  T.test("symbolic = tape: " .. c[1], function()
    local eager, got = both(c[2], c[3], c[4])
    T.eq(#got, #eager)
    for i = 1, #eager do T.eq(got[i], eager[i]:totable(), 1e-6, c[1] .. " input " .. i) end
  end)
end

T.test("weighted output: distinct gradient per element", function()
  local w = rnd{3, 4}
  local eager, got = both(function(a, b) return a * b end, {rnd{3, 4}, rnd{3, 4}}, w)
  for i = 1, 2 do T.eq(got[i], eager[i]:totable(), 1e-6) end
end)

T.test("backward nodes are under gradients/, forward nodes are not", function()
  local _, _, g = both(function(a, b) return mf.matmul(a, b) end, {rnd{2, 2}, rnd{2, 2}})
  local fwd, bwd = 0, 0
  for _, n in ipairs(g:nodes()) do
    if n.name:find("^gradients/") then bwd = bwd + 1 else fwd = fwd + 1 end
  end
  T.eq(fwd, 3)
  T.ok(bwd >= 3, "backward nodes: " .. bwd)
  T.ok(tostring(g):find("gradients/matmul_grad/", 1, true), tostring(g))
  T.ok(g:to_dot():find("cluster_backward", 1, true))
end)

T.test("grad_ys, several ys, unconnected and integer xs", function()
  local g = mf.Graph()
  local x, z, k, gr, gr2, gr3
  g:as_default(function()
    x = mf.placeholder("float32", {3}, "x")
    z = mf.placeholder("float32", {3}, "z")
    k = mf.placeholder("int32", {3}, "k")
    local y = x * x
    gr = mf.gradients(y, {x, z, k}, {grad_ys = {1, 10, 100}})
    gr2 = mf.gradients({y, x * 3}, x)
    gr3 = mf.gradients(mf.reduce_sum(y), {x}, {mf.tensor(2)})
  end)
  T.eq(gr[2], nil)
  T.eq(gr[3], nil)
  local s = mf.Session(g)
  local feeds = {[x] = {1, 2, 3}}
  T.eq(s:run(gr[1], feeds), {2, 40, 600})
  T.eq(s:run(gr2[1], feeds), {5, 7, 9})
  T.eq(s:run(gr3[1], feeds), {4, 8, 12})
end)

T.test("unknown batch dim: elementwise and matmul work", function()
  local g = mf.Graph()
  local x, w, gr
  g:as_default(function()
    x = mf.placeholder("float32", {-1, 2}, "x")
    w = mf.placeholder("float32", {2, 1}, "w")
    gr = mf.gradients(mf.tanh(mf.matmul(x, w)), {x, w})
  end)
  local got = mf.Session(g):run(gr, {[x] = {{0, 0}, {0, 0}}, [w] = {{1}, {2}}})
  T.eq(got[1], {{1, 2}, {1, 2}})
  T.eq(got[2], {{0}, {0}})
end)

T.test("unknown dims: reductions, broadcasting, reshape take shapes at run time", function()
  local g = mf.Graph()
  local x, b, gr
  g:as_default(function()
    x = mf.placeholder("float32", {-1, -1}, "x")
    b = mf.placeholder("float32", {-1}, "b")
    local h = mf.reshape(x + b, {-1})
    gr = mf.gradients(mf.reduce_mean(h * h), {x, b})
  end)
  local s = mf.Session(g)
  -- x + b = {{1, 2}, {3, 4}}; d mean(h^2) = 2h / 4
  local got = s:run(gr, {[x] = {{1, 1}, {3, 3}}, [b] = {0, 1}})
  T.eq(got[1], {{0.5, 1}, {1.5, 2}})
  T.eq(got[2], {2, 3})
  -- b of size 1 stretches at run time: its gradient sums over every element
  got = s:run(gr, {[x] = {{1, 2, 3}}, [b] = {1}})
  T.eq(got[2], {(4 + 6 + 8) / 3})
end)

T.test("errors", function()
  local g, h = mf.Graph(), mf.Graph()
  local x, y, yc, other
  g:as_default(function()
    x = mf.placeholder("float32", {-1, 2}, "x")
    y = mf.reduce_sum(x)
    yc = mf.reduce_sum(mf.concat({x, x}, 1))
  end)
  h:as_default(function() other = mf.placeholder("float32", {2}, "other") end)
  T.raises(function() mf.gradients(yc, x) end, "node 'concat' (ConcatV2) has an input or output "
           .. "with unknown (?) dims")
  T.raises(function() mf.gradients(y, other) end, "xs[1] ('other') is a tensor of another")
  -- a concrete tensor is a graph constant (TensorFlow's): y does not depend on this one
  T.eq(mf.gradients(y, mf.tensor{1})[1], nil)
  T.raises(function() mf.gradients(mf.tensor{1}, x) end, "ys must be graph tensors")
  T.raises(function() mf.gradients(y, {x, 3}) end, "xs[2] is not a tensor")
  T.raises(function() mf.gradients({y}, x, {grad_ys = {1, 2}}) end,
           "grad_ys has 2 entries but ys has 1")
  local x2, y2
  g:as_default(function()
    x2 = mf.placeholder("float32", {2}, "x2")
    y2 = x2 * 2
  end)
  T.raises(function() mf.gradients(y2, x2, {grad_ys = mf.tensor{1, 2, 3}}) end,
           "grad_ys[1] has shape (3,) (float32) but ys[1] has shape (2,)")
end)

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function small_graph()
  local g = mf.Graph()
  g:as_default(function()
    local x = mf.placeholder("float32", {2}, "x")
    mf.gradients(mf.reduce_sum(x * x), x)
  end)
  return g
end

T.test("write_dot", function()
  local g = small_graph()
  local path = os.tmpname()
  g:write_dot(path)
  local text = read(path)
  T.eq(text, g:to_dot())
  T.ok(text:find("^digraph") and text:find("cluster_forward", 1, true)
       and text:find("cluster_backward", 1, true))
  os.remove(path)
  T.raises(function() g:write_dot("/nonexistent-dir/g.dot") end,
           "write_dot: cannot write '/nonexistent-dir/g.dot'")
end)

T.test("render", function()
  if not os.execute("command -v dot >/dev/null 2>&1") then
    print("  (skipped: Graphviz 'dot' is not installed; apt-get install graphviz)")
    return
  end
  local g = small_graph()
  local base = os.tmpname()
  g:render(base .. ".png")
  local png = read(base .. ".png")
  T.ok(#png > 100 and png:sub(2, 4) == "PNG", "a PNG file")
  g:render(base .. ".svg")
  T.ok(read(base .. ".svg"):find("<svg", 1, true), "an SVG file")
  os.remove(base .. ".png")
  os.remove(base .. ".svg")
  os.remove(base)
  T.raises(function() g:render("/nonexistent-dir/g.png") end, "render: cannot write")
end)

-- With no file descriptor left (EMFILE), render says so; it said "Graphviz
-- 'dot' is not installed" (its shell check could not open /dev/null).
T.test("render with no file descriptor left reports EMFILE", function()
  if not os.execute("command -v dot >/dev/null 2>&1") then
    print("  (skipped: Graphviz 'dot' is not installed; apt-get install graphviz)")
    return
  end
  local base = os.tmpname()
  local f = assert(io.open(base .. ".lua", "w"))
  f:write([[
local g = mf.Graph()
g:as_default(function() local x = mf.placeholder("float32", {2}); local y = x * 2 end)
local held = {}
while true do
  local h = io.open("/dev/null")
  if not h then break end
  held[#held + 1] = h
end
local ok, err = pcall(g.render, g, ...)
print("EMFILE", #held, ok, err)
for _, h in ipairs(held) do h:close() end
g:render(...)
print("RENDERED")
]])
  f:close()
  local exe = arg[-1] or arg[0]
  local p = io.popen("ulimit -n 64 && " .. exe .. " " .. base .. ".lua " .. base .. ".svg 2>&1")
  local out = p:read("a")
  p:close()
  T.ok(out:find("render: cannot write '" .. base .. ".svg': Too many open files", 1, true),
       out)
  T.ok(not out:find("not installed", 1, true), out)
  T.ok(out:find("RENDERED", 1, true), out)
  T.ok(read(base .. ".svg"):find("<svg", 1, true), "an SVG file after the files are closed")
  for _, ext in ipairs({".lua", ".svg", ""}) do os.remove(base .. ext) end
end)

T.test("split gradients: one ConcatV2 when the slices tile the input, else Pads", function()
  -- x (-1, 6): split into 3 column blocks (tiling: ConcatV2, no Pad), and
  -- 2 overlapping row windows of y (not tiling: each Slice's Pad); the
  -- values against the eager tape (whose walk adds in place)
  local g = mf.Graph()
  local x, y, gx, gy
  g:as_default(function()
    x = mf.placeholder("float32", {-1, 6}, "x")
    y = mf.placeholder("float32", {4, 3}, "y")
    local cols = mf.split(x, 3, 2)
    local f = mf.reduce_sum(cols[1] * 1) + mf.reduce_sum(cols[2] * cols[2]) +
              mf.reduce_sum(cols[3] * 3)
    local r1, r2 = mf.slice(y, {1, 1}, {3, 3}), mf.slice(y, {2, 1}, {3, 3})
    f = f + mf.reduce_sum(r1 * r1) + mf.reduce_sum(r2 * 2)
    local gr = mf.gradients(f, {x, y})
    gx, gy = gr[1], gr[2]
  end)
  local text = tostring(g)
  local _, concats = text:gsub("= ConcatV2", "")
  local _, pads = text:gsub("= Pad", "")
  T.ok(concats == 1, "one ConcatV2 for the tiling split:\n" .. text)
  T.ok(pads == 2, "a Pad per overlapping slice:\n" .. text)
  local xv = mf.reshape(mf.cast(mf.range(0, 12), "float32"), {2, 6}) * 0.5
  local yv = mf.reshape(mf.cast(mf.range(0, 12), "float32"), {4, 3}) * 0.25
  local got = mf.Session(g):run({gx, gy}, {[x] = xv, [y] = yv})
  local tape = mf.GradientTape()
  tape:watch(xv)
  tape:watch(yv)
  local cols = mf.split(xv, 3, 2)
  local f = mf.reduce_sum(cols[1] * 1) + mf.reduce_sum(cols[2] * cols[2]) +
            mf.reduce_sum(cols[3] * 3)
  local r1, r2 = mf.slice(yv, {1, 1}, {3, 3}), mf.slice(yv, {2, 1}, {3, 3})
  f = f + mf.reduce_sum(r1 * r1) + mf.reduce_sum(r2 * 2)
  tape:stop()
  local want = tape:gradient(f, {xv, yv})
  T.eq(mf.reduce_max(mf.abs(got[1] - want[1])):item(), 0)
  T.eq(mf.reduce_max(mf.abs(got[2] - want[2])):item(), 0)
  T.eq(got[1], {{1, 1, 2, 3, 3, 3}, {1, 1, 8, 9, 3, 3}})
end)

T.done()
