-- test_attention.lua — mf.nn.scaled_dot_product_attention (the op
-- ScaledDotProductAttention, flash-tiled, and its gradient op): against the
-- composition matmul, scale, mask, softmax, matmul (torch's explicit masked
-- softmax path) in float32 and float64, for shapes that cross the tiles (64
-- query rows, 256 keys forward, 64 backward) and the causal diagonal; bool
-- and float masks, batch axes broadcast, gradients of q, k, v and a float
-- mask; graph mode with unknown dims and mf.trace; forward mode; errors.
local T = dofile("tests/lua/harness.lua")

local sdpa = mf.nn.scaled_dot_product_attention

-- The composition: softmax(scale q k^T masked) v, the masks as torch applies
-- them (bool: masked_fill(-inf) where false; float: added; causal: tril).
local function composed(q, k, v, o)
  o = o or {}
  local d, tq, tk = q.shape[#q.shape], q.shape[#q.shape - 1], k.shape[#k.shape - 1]
  local s = mf.matmul(q, k, {transpose_b = true}) * (o.scale or 1 / math.sqrt(d))
  local ninf = mf.fill({tq, tk}, -math.huge, {dtype = q.dtype})
  if o.mask and o.mask.dtype == "bool" then
    s = mf.where(o.mask, s, ninf)
  elseif o.mask then
    s = s + o.mask
  end
  if o.causal then
    s = mf.where(mf.cast(mf.tril(mf.ones({tq, tk})), "bool"), s, ninf)
  end
  return mf.matmul(mf.nn.softmax(s), v)
end

local function normal(shape, seed, dtype)
  return mf.random.normal(shape, {seed = seed, dtype = dtype or "float32"})
end

local function max_abs(a, b)
  return mf.reduce_max(mf.abs(a - b)):item()
end

T.test("a hand-computed case and the default scale", function()
  local q = mf.tensor{{1, 0}, {0, 1}}
  local v = mf.tensor{{1}, {3}}
  local e = math.exp(0.5)
  T.eq(sdpa(q, q, v, {causal = true, scale = 0.5}), {{1}, {(1 + 3 * e) / (1 + e)}}, 1e-6)
  local e2 = math.exp(1 / math.sqrt(2))   -- scale 1/sqrt(d), d = 2
  T.eq(sdpa(q, q, v), {{(e2 + 3) / (e2 + 1)}, {(1 + 3 * e2) / (1 + e2)}}, 1e-6)
end)

T.test("equals the composition, float32 and float64, across tiles", function()
  for _, dt in ipairs{"float32", "float64"} do
    local tol = dt == "float32" and 2e-6 or 1e-13
    for i, c in ipairs{
      {q = {2, 3, 100, 16}, k = {2, 3, 100, 16}, v = {2, 3, 100, 8}},
      {q = {70, 4}, k = {300, 4}, v = {300, 5}},          -- two key tiles, two row blocks
      {q = {1, 130, 32}, k = {1, 130, 32}, v = {1, 130, 32}, causal = true},
      {q = {2, 1, 20, 8}, k = {3, 20, 8}, v = {1, 20, 4}, causal = true, scale = 0.3},
      {q = {5, 8}, k = {9, 8}, v = {9, 3}, causal = true},   -- Tq < Tk: top-left aligned
      {q = {9, 8}, k = {5, 8}, v = {5, 3}, causal = true},   -- Tq > Tk
    } do
      local q, k, v = normal(c.q, 10 * i, dt), normal(c.k, 10 * i + 1, dt),
          normal(c.v, 10 * i + 2, dt)
      local o = {causal = c.causal, scale = c.scale}
      local got, want = sdpa(q, k, v, o), composed(q, k, v, o)
      T.eq(got.shape, want.shape)
      T.ok(max_abs(got, want) < tol, dt .. " case " .. i .. ": " .. max_abs(got, want))
    end
  end
end)

T.test("bool and float masks, broadcast, positional or as an option", function()
  local q, k, v = normal({2, 2, 40, 8}, 1), normal({2, 2, 50, 8}, 2), normal({2, 2, 50, 6}, 3)
  local keep = mf.greater(mf.random.uniform({40, 50}, {seed = 4}), 0.3)
  keep = mf.logical_or(keep, mf.cast(mf.eye(40, 50), "bool"))   -- no row fully masked
  local add = mf.random.normal({2, 1, 40, 50}, {seed = 5})
  for _, m in ipairs{keep, add} do
    local want = composed(q, k, v, {mask = m})
    T.ok(max_abs(sdpa(q, k, v, {mask = m}), want) < 2e-6)
    T.ok(max_abs(sdpa(q, k, v, m), want) < 2e-6)
  end
  local both = composed(q, k, v, {mask = keep, causal = true})
  T.ok(max_abs(sdpa(q, k, v, keep, {causal = true}), both) < 2e-6)
  -- a row with every score masked is NaN, as softmax of -inf
  local none = mf.zeros({40, 50}, {dtype = "bool"})
  local y = sdpa(q, k, v, {mask = none})
  T.ok(y[{1, 1, 1, 1}] ~= y[{1, 1, 1, 1}], "NaN row")
end)

T.test("gradients of q, k, v and a float mask equal the composition's", function()
  local q, k, v = normal({2, 3, 70, 8}, 7), normal({2, 3, 70, 8}, 8), normal({2, 3, 70, 5}, 9)
  local w = normal({2, 3, 70, 5}, 10)
  local add = mf.random.normal({70, 70}, {seed = 11})
  for _, o in ipairs{{}, {causal = true}, {mask = add}, {mask = add, causal = true, scale = 0.2}} do
    local f = function(q, k, v, m)
      local oo = {causal = o.causal, scale = o.scale, mask = m}
      return mf.reduce_sum(sdpa(q, k, v, oo) * w)
    end
    local g = function(q, k, v, m)
      return mf.reduce_sum(composed(q, k, v, {causal = o.causal, scale = o.scale, mask = m}) * w)
    end
    local args = o.mask and {1, 2, 3, 4} or {1, 2, 3}
    local got = {mf.grad(f, {argnums = args})(q, k, v, o.mask)}
    local want = {mf.grad(g, {argnums = args})(q, k, v, o.mask)}
    for i = 1, (o.mask and 4 or 3) do
      T.ok(max_abs(got[i], want[i]) < 2e-5, "input " .. i .. ": " .. max_abs(got[i], want[i]))
    end
  end
  -- k and v broadcast along the heads: their gradients sum over them
  local k1, v1 = normal({2, 1, 70, 8}, 12), normal({70, 5}, 13)
  local f = function(k, v) return mf.reduce_sum(sdpa(q, k, v, {causal = true}) * w) end
  local g = function(k, v) return mf.reduce_sum(composed(q, k, v, {causal = true}) * w) end
  local a1, a2 = mf.grad(f, {argnums = {1, 2}})(k1, v1)
  local b1, b2 = mf.grad(g, {argnums = {1, 2}})(k1, v1)
  T.eq(a1.shape, {2, 1, 70, 8}); T.eq(a2.shape, {70, 5})
  T.ok(max_abs(a1, b1) < 2e-5 and max_abs(a2, b2) < 2e-5)
end)

T.test("PyTorch 1.13's explicit masked-softmax path: values and gradients", function()
  -- literals from tests/lua/data/gen_attention_torch.py (float64)
  local cases = dofile("tests/lua/data/attention_torch.lua")
  for _, c in ipairs(cases) do
    local f64 = function(t) return mf.tensor(t, "float64") end
    local q, k, v, w = f64(c.q), f64(c.k), f64(c.v), f64(c.w)
    local mask = c.mask and (c.dmask and f64(c.mask) or mf.tensor(c.mask, "bool"))
    local o = {causal = c.causal, scale = c.scale, mask = mask}
    T.eq(sdpa(q, k, v, o), c.y, 1e-12, c.name)
    local f = function(q, k, v, m)
      return mf.reduce_sum(sdpa(q, k, v, {causal = c.causal, scale = c.scale, mask = m}) * w)
    end
    local args = c.dmask and {1, 2, 3, 4} or {1, 2, 3}
    local g = {mf.grad(f, {argnums = args})(q, k, v, mask)}
    T.eq(g[1], c.dq, 1e-12, c.name .. " dq")
    T.eq(g[2], c.dk, 1e-12, c.name .. " dk")
    T.eq(g[3], c.dv, 1e-12, c.name .. " dv")
    if c.dmask then T.eq(g[4], c.dmask, 1e-12, c.name .. " dmask") end
    -- float32: the same to float32 rounding
    local q32, k32, v32 = mf.cast(q, "float32"), mf.cast(k, "float32"), mf.cast(v, "float32")
    local m32 = mask and mask.dtype == "float64" and mf.cast(mask, "float32") or mask
    T.eq(sdpa(q32, k32, v32, {causal = c.causal, scale = c.scale, mask = m32}), c.y, 2e-6)
  end
end)

T.test("float64 gradcheck, causal and masked", function()
  local q, k, v = normal({2, 6, 3}, 20, "float64"), normal({2, 6, 3}, 21, "float64"),
      normal({2, 6, 2}, 22, "float64")
  local m = mf.random.normal({6, 6}, {seed = 23, dtype = "float64"})
  local ok, msg = mf.test.gradcheck(function(q, k, v, m)
    return sdpa(q, k, v, {mask = m, causal = true})
  end, {q, k, v, m})
  T.ok(ok, msg)
end)

T.test("graph mode with unknown dims, mf.trace, forward mode", function()
  local q, k, v = normal({2, 9, 4}, 30), normal({2, 11, 4}, 31), normal({2, 11, 3}, 32)
  local gr = mf.Graph()
  local pq, y, dq
  gr:as_default(function()
    pq = mf.placeholder("float32", {-1, -1, 4})
    y = sdpa(pq, k, v, {causal = true})
    dq = mf.gradients(mf.reduce_sum(y * y), {pq})[1]
  end)
  local out = mf.Session(gr):run({y, dq}, {[pq] = q})
  T.eq(out[1], sdpa(q, k, v, {causal = true}))
  local f = function(q) return mf.reduce_sum(sdpa(q, k, v, {causal = true}) ^ 2) end
  T.eq(out[2], mf.grad(f)(q), 1e-6)
  local traced = mf.trace(function(q, k, v) return sdpa(q, k, v, {causal = true}) end)
  T.eq(traced(q, k, v), sdpa(q, k, v, {causal = true}))
  local q64, k64, v64 = normal({2, 5, 3}, 33, "float64"), normal({2, 4, 3}, 34, "float64"),
      normal({2, 4, 2}, 35, "float64")
  local fn = function(q, k, v) return sdpa(q, k, v) end
  local _, tan = mf.jvp(fn, {q64, k64, v64}, {q64, k64, v64})
  local e = 1e-6
  local num = (fn(q64 * (1 + e), k64 * (1 + e), v64 * (1 + e)) -
               fn(q64 * (1 - e), k64 * (1 - e), v64 * (1 - e))) / (2 * e)
  T.ok(max_abs(tan, num) < 1e-8)
end)

T.test("errors name the function and what it got", function()
  local q = mf.ones{2, 4, 3}
  T.raises(sdpa, "scaled_dot_product_attention: q and k differ in their last axis (d); "
           .. "expected q (..., Tq, d), k (..., Tk, d), v (..., Tk, dv), got q (2,4,3), k "
           .. "(2,4,2), v (2,4,3)", q, mf.ones{2, 4, 2}, q)
  T.raises(sdpa, "k and v differ in their number of keys", q, q, mf.ones{2, 5, 3})
  T.raises(sdpa, "each needs rank 2 or more", mf.ones{3}, q, q)
  T.raises(sdpa, "their batch axes do not broadcast", q, mf.ones{3, 4, 3}, mf.ones{3, 4, 3})
  T.raises(sdpa, "scaled_dot_product_attention: q, k and v must have one dtype, got float32, "
           .. "float64 and float32", q, mf.ones({2, 4, 3}, {dtype = "float64"}), q)
  T.raises(sdpa, "a float dtype", mf.ones({2, 2}, {dtype = "int32"}), q, q)
  T.raises(sdpa, "scaled_dot_product_attention: mask of shape (3,4) does not broadcast to the "
           .. "scores' shape (2,4,4) (batch..., Tq, Tk)", q, q, q,
           {mask = mf.ones({3, 4}, {dtype = "bool"})})
  T.raises(sdpa, "mask must be bool (true keeps a score) or float32 (added to the scores), got "
           .. "int64", q, q, q, mf.ones({4, 4}, {dtype = "int64"}))
  T.raises(sdpa, "scaled_dot_product_attention: mask given twice", q, q, q, mf.ones{4, 4},
           {mask = mf.ones{4, 4}})
  T.raises(sdpa, "scaled_dot_product_attention: unknown option 'is_causal'", q, q, q,
           {is_causal = true})
  T.raises(sdpa, "scale must be a finite number", q, q, q, {scale = math.huge})
end)

T.done()
