-- Graph mode with unknown dims, as TensorFlow 1.x tutorials use it (issue 16): random ops,
-- zeros/ones/fill, *_like, reshape and broadcast_to on run-time shapes (mf.shape of a -1
-- placeholder), dropout's rate or keep_prob as a placeholder, placeholders without a shape,
-- and a concrete tensor made inside g:as_default as a gradient source.
local T = dofile("tests/lua/harness.lua")

local function build(fn)
  local g = mf.Graph()
  local r = {g:as_default(fn)}
  return mf.Session(g), table.unpack(r)
end

T.test("creation and random ops take mf.shape of a placeholder with -1 dims", function()
  local sess, x, outs = build(function()
    local x = mf.placeholder("float32", {-1, 3})
    local s = mf.shape(x)
    return x, {mf.zeros(s), mf.ones(s, "int64"), mf.fill(s, 7), mf.zeros_like(x),
               mf.ones_like(x), mf.random.normal(s, {seed = 1}),
               mf.random.uniform(s, {seed = 2}), mf.random.truncated_normal(s, {seed = 3}),
               mf.random.uniform(s, {maxval = 9, dtype = "int32", seed = 4}),
               mf.broadcast_to(mf.tensor{1, 2, 3}, s), mf.reshape(mf.range(0, 6), s)}
  end)
  local reshape = table.remove(outs)
  for _, n in ipairs{1, 4} do
    local r = sess:run(outs, {[x] = mf.zeros{n, 3}})
    for i = 1, #outs do T.eq(r[i].shape, {n, 3}, 0, "output " .. i) end
    T.eq(r[3], mf.fill({n, 3}, 7))
    T.eq(r[2].dtype, "int64")
    T.eq(r[10][1], {1, 2, 3})   -- broadcast_to: every row
  end
  T.eq(sess:run(reshape, {[x] = mf.zeros{2, 3}}), {{0, 1, 2}, {3, 4, 5}})
  T.raises(function() sess:run(reshape, {[x] = mf.zeros{4, 3}}) end, "cannot reshape")
end)

T.test("a shape tensor of unknown length is refused by name", function()
  local g = mf.Graph()
  g:as_default(function()
    local s = mf.placeholder("int32", {-1})
    T.raises(function() mf.zeros(s) end, "zeros: a shape tensor must be a 1-D int32/int64")
  end)
end)

T.test("dropout: rate and keep_prob as placeholders on [-1, n]", function()
  local sess, x, rate, kp, by_rate, by_kp = build(function()
    local x = mf.placeholder("float32", {-1, 1000})
    local rate = mf.placeholder("float32")
    local kp = mf.placeholder("float32")
    return x, rate, kp, mf.nn.dropout(x, rate), mf.nn.dropout(x, {keep_prob = kp})
  end)
  local ones = mf.ones{3, 1000}
  T.eq(sess:run(by_kp, {[x] = ones, [kp] = 1.0}), ones)   -- keep_prob 1: x exactly
  T.eq(sess:run(by_rate, {[x] = ones, [rate] = 0.0}), ones)
  local y = sess:run(by_kp, {[x] = ones, [kp] = 0.25})
  local kept = mf.reduce_sum(mf.cast(mf.greater(y, 0), "float32")):item()
  T.ok(kept > 600 and kept < 900, "about a quarter of 3000 kept, got " .. kept)
  T.eq(mf.reduce_max(y):item(), 4, 1e-6)                  -- scaled by 1 / keep_prob
  T.raises(function() mf.nn.dropout(ones, {keep_prob = 0}) end, "keep_prob must be in (0, 1]")
  T.raises(function() mf.nn.dropout(ones, 0.5, {rate = 0.5}) end, "the rate is given twice")
  T.raises(function() mf.nn.dropout(ones, {}) end, "give exactly one of rate and keep_prob")
end)

T.test("a placeholder without a shape takes any shape; {-1, -1} any matrix", function()
  local sess, a, b, y = build(function()
    local a = mf.placeholder("float32")
    local b = mf.placeholder("float32", {-1, -1})
    return a, b, a * b
  end)
  T.eq(sess:run(y, {[a] = 2, [b] = {{1, 2}, {3, 4}}}), {{2, 4}, {6, 8}})
  T.eq(sess:run(y, {[a] = {1, 10}, [b] = {{1, 2}}}), {{1, 20}})
  T.raises(function() sess:run(y, {[a] = 2, [b] = {1, 2}}) end, "has shape (2,), expected (?,?)")
end)

T.test("a concrete tensor made in g:as_default is a graph constant for mf.gradients", function()
  local sess, grad, none = build(function()
    local c = mf.tensor{1, 2, 3}
    local y = mf.reduce_sum(c * c)
    return mf.gradients(y, c)[1], mf.gradients(y, mf.tensor{5})[1]
  end)
  T.eq(sess:run(grad), {2, 4, 6})
  T.eq(none, nil)
end)

T.done()
