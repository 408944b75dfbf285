-- test_attention.lua — mf.nn.scaled_dot_product_attention (the op
-- ScaledDotProductAttention, flash-tiled, and its gradient op): against the
-- composition matmul, scale, mask, softmax, matmul (torch's explicit masked
-- softmax path) in float32 and float64, for shapes that cross the tiles (64
-- query rows, 256 keys forward, 64 backward) and the causal diagonal; bool
-- and float masks, batch axes broadcast, gradients of q, k, v and a float
-- mask; graph mode with unknown dims and mf.trace; forward mode; heads cut
-- from one product read in place; errors.
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
  -- one head: its keys split into two groups, dq summed from two partials
  local q1, k2, v2 = normal({200, 8}, 14), normal({260, 8}, 15), normal({260, 5}, 16)
  local w1, m1 = normal({200, 5}, 17), normal({200, 260}, 18)
  for _, causal in ipairs{false, true} do
    local f1 = function(q, k, v, m)
      return mf.reduce_sum(sdpa(q, k, v, {causal = causal, mask = m}) * w1)
    end
    local g1 = function(q, k, v, m)
      return mf.reduce_sum(composed(q, k, v, {causal = causal, mask = m}) * w1)
    end
    local got = {mf.grad(f1, {argnums = {1, 2, 3, 4}})(q1, k2, v2, m1)}
    local want = {mf.grad(g1, {argnums = {1, 2, 3, 4}})(q1, k2, v2, m1)}
    for i = 1, 4 do
      T.ok(max_abs(got[i], want[i]) < 2e-5, "one head, input " .. i .. ": " ..
           max_abs(got[i], want[i]))
    end
  end
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

-- The composition with dropout: softmax, then mf.nn.dropout with the same
-- seed (the op draws the same mask: element (b, i, j) of a (batch, Tq, Tk)
-- tensor), then the product with v.
local function composed_dropout(q, k, v, o)
  local d = q.shape[#q.shape]
  local s = mf.matmul(q, k, {transpose_b = true}) * (o.scale or 1 / math.sqrt(d))
  if o.causal then
    local tq, tk = q.shape[#q.shape - 1], k.shape[#k.shape - 1]
    s = mf.where(mf.cast(mf.tril(mf.ones({tq, tk})), "bool"), s,
                 mf.fill({tq, tk}, -math.huge, {dtype = q.dtype}))
  end
  if o.mask then s = s + o.mask end
  local p = mf.nn.dropout(mf.nn.softmax(s), o.dropout, {seed = o.seed})
  return mf.matmul(p, v)
end

local function same(a, b)
  return a.dtype == b.dtype and mf.reduce_all(mf.equal(a, b)):item()
end

T.test("dropout: softmax, mf.nn.dropout's mask with the same seed, matmul", function()
  for _, dt in ipairs{"float32", "float64"} do
    local tol = dt == "float32" and 2e-6 or 1e-13
    for i, c in ipairs{
      {q = {2, 3, 5, 4}, k = {2, 3, 6, 4}, v = {2, 3, 6, 3}, rate = 0.4},
      {q = {2, 1, 70, 8}, k = {3, 300, 8}, v = {1, 300, 5}, rate = 0.25},   -- tiles, broadcast
      {q = {130, 16}, k = {130, 16}, v = {130, 4}, rate = 0.6, causal = true, scale = 0.3},
      {q = {2, 67, 8}, k = {2, 67, 8}, v = {2, 67, 3}, rate = 0.1, mask = {67, 67}},
    } do
      local q, k, v = normal(c.q, 40 * i, dt), normal(c.k, 40 * i + 1, dt),
          normal(c.v, 40 * i + 2, dt)
      local m = c.mask and normal(c.mask, 40 * i + 4, dt)
      local o = {dropout = c.rate, seed = 7 + i, causal = c.causal, scale = c.scale, mask = m}
      local got, want = sdpa(q, k, v, o), composed_dropout(q, k, v, o)
      T.eq(got.shape, want.shape)
      local err = max_abs(got, want)
      T.ok(err < tol, dt .. " case " .. i .. ": " .. err)
      -- gradients: one call per side, so each uses its seed's mask once
      local args = m and {1, 2, 3, 4} or {1, 2, 3}
      local f = function(q, k, v, mm)
        local oo = {dropout = c.rate, seed = 7 + i, causal = c.causal, scale = c.scale, mask = mm}
        return mf.reduce_sum(sdpa(q, k, v, oo) * got)
      end
      local g = function(q, k, v, mm)
        local oo = {dropout = c.rate, seed = 7 + i, causal = c.causal, scale = c.scale, mask = mm}
        return mf.reduce_sum(composed_dropout(q, k, v, oo) * got)
      end
      local a = {mf.grad(f, {argnums = args})(q, k, v, m)}
      local b = {mf.grad(g, {argnums = args})(q, k, v, m)}
      for n = 1, #args do
        local e = max_abs(a[n], b[n])
        T.ok(e < 50 * tol, dt .. " case " .. i .. " gradient " .. n .. ": " .. e)
      end
    end
  end
end)

T.test("dropout: rate 0 is the op without dropout, rate 1 gives zeros as torch", function()
  local q, k, v = normal({2, 9, 4}, 50), normal({2, 11, 4}, 51), normal({2, 11, 3}, 52)
  T.ok(same(sdpa(q, k, v, {dropout = 0, causal = true}), sdpa(q, k, v, {causal = true})))
  -- torch 1.13's _scaled_dot_product_attention(dropout_p = 1): zeros, zero gradients
  T.eq(sdpa(q, k, v, {dropout = 1}), mf.zeros{2, 9, 3}, 0)
  local f = function(q, k, v) return mf.reduce_sum(sdpa(q, k, v, {dropout = 1}) * 3) end
  for _, g in ipairs{mf.grad(f, {argnums = {1, 2, 3}})(q, k, v)} do
    T.eq(g, mf.zeros(g.shape), 0)
  end
end)

T.test("dropout: the keep fraction and 1 / (1 - rate), fresh masks, seeds", function()
  -- q = k = 0: uniform weights 1 / Tk; v = I: the output is the weights
  -- themselves, 0 or 1 / (Tk (1 - rate))
  local tk, rate = 64, 0.3
  local q, v = mf.zeros{4, 50, 8}, mf.eye(tk)
  local k = mf.zeros{tk, 8}
  local y = sdpa(q, k, v, {dropout = rate, seed = 3})
  local kept = mf.reduce_sum(mf.cast(mf.greater(y, 0), "float64")):item()
  local n = 4 * 50 * tk
  local dropped = y:numel() - kept
  -- binomial(n, rate): within 5 standard deviations
  local sd = math.sqrt(n * rate * (1 - rate))
  T.ok(math.abs(dropped - n * rate) < 5 * sd, "dropped " .. dropped .. " of " .. n)
  local scaled = mf.where(mf.greater(y, 0), y, mf.fill(y.shape, 1 / (tk * (1 - rate))))
  T.eq(scaled, mf.fill(y.shape, 1 / (tk * (1 - rate))), 1e-7)
  -- no seed: each call draws a fresh mask; mf.random.seed repeats the sequence
  T.ok(not same(sdpa(q, k, v, {dropout = rate}), sdpa(q, k, v, {dropout = rate})))
  T.ok(same(y, sdpa(q, k, v, {dropout = rate, seed = 3})))
  mf.random.seed(5)
  local a = {sdpa(q, k, v, {dropout = rate}), sdpa(q, k, v, {dropout = rate})}
  mf.random.seed(5)
  T.ok(same(a[1], sdpa(q, k, v, {dropout = rate})) and same(a[2], sdpa(q, k, v, {dropout = rate})))
  T.ok(not same(a[1], a[2]))
  -- without dropout no seed is drawn: the sequence of other random ops stays
  mf.random.seed(6)
  local r1 = mf.random.uniform{3}
  mf.random.seed(6)
  sdpa(q, k, v)
  T.ok(same(r1, mf.random.uniform{3}))
end)

T.test("dropout in graph mode and mf.trace: fresh masks, one mask per run", function()
  -- v = I (a placeholder): y is the dropped weights P Z, and dv = y^T w
  local tk = 12
  local q, k, w = normal({2, 10, 4}, 60), normal({2, tk, 4}, 61), normal({2, 10, tk}, 62)
  local g = mf.Graph()
  local pv, y, dv, dq
  g:as_default(function()
    pv = mf.placeholder("float32", {-1, tk, tk})
    y = sdpa(q, k, pv, {dropout = 0.5, seed = 4})
    dv, dq = table.unpack(mf.gradients(mf.reduce_sum(y * w), {pv, q}))
  end)
  local s = mf.Session(g)
  local eye = mf.broadcast_to(mf.eye(tk), {2, tk, tk})
  local runs = {}
  for r = 1, 3 do
    local out = s:run({y, dv, dq}, {[pv] = eye})
    runs[r] = out[1]
    T.eq(out[2], mf.matmul(out[1], w, {transpose_a = true}), 1e-6, "run " .. r .. ": dv")
  end
  T.ok(same(runs[1], sdpa(q, k, eye, {dropout = 0.5, seed = 4})), "run 1 differs from eager")
  T.ok(not same(runs[1], runs[2]) and not same(runs[2], runs[3]), "masks repeat")
  local traced = mf.trace(function(q, k, v) return sdpa(q, k, v, {dropout = 0.5, seed = 4}) end)
  local a, b = traced(q, k, eye), traced(q, k, eye)
  T.ok(same(a, runs[1]) and not same(a, b), "trace: first call as eager, then fresh")
  -- a traced step: the gradient of the traced call's own mask
  local step = mf.trace(function(v)
    return mf.grad(function(v) return mf.reduce_sum(sdpa(q, k, v, {dropout = 0.5}) * w) end)(v)
  end)
  for _ = 1, 2 do
    local gv = step(eye)
    T.ok(mf.reduce_max(mf.abs(gv)):item() > 0)
  end
end)

T.test("dropout: float64 gradcheck with the seed fixed", function()
  local q, k, v = normal({2, 6, 3}, 70, "float64"), normal({2, 7, 3}, 71, "float64"),
      normal({2, 7, 2}, 72, "float64")
  local ok, msg = mf.test.gradcheck(function(q, k, v)
    return sdpa(q, k, v, {dropout = 0.3, seed = 11, causal = true})
  end, {q, k, v})
  T.ok(ok, msg)
end)

T.test("heads cut from one product (strided views) give the bits of copies", function()
  -- as scripts/models/gpt.lua: (B, T, 3H, hd) split into q, k, v (B, T, H, hd), each
  -- transposed to (B, H, T, hd); the op reads their rows in place (and the gradient
  -- op its dout, the transpose's gradient), the same arithmetic as on copies
  for _, dt in ipairs{"float32", "float64"} do
    local qkv = normal({2, 70, 9, 8}, 21, dt)
    local w = normal({2, 70, 24}, 22, dt)
    local heads = function(t) return mf.transpose(t, {1, 3, 2, 4}) end
    for _, o in ipairs{{causal = true}, {}, {mask = normal({70, 70}, 23, dt)}} do
      local f = function(x, copy)
        local q, k, v = table.unpack(mf.split(x, 3, 3))
        q, k, v = heads(q), heads(k), heads(v)
        if copy then q, k, v = q * 1, k * 1, v * 1 end
        local y = mf.transpose(sdpa(q, k, v, o), {1, 3, 2, 4})
        return mf.reduce_sum(mf.reshape(y, {2, 70, 24}) * w)
      end
      local a, b = f(qkv), f(qkv, true)
      T.ok(max_abs(a, b) == 0, dt .. " loss")
      local ga = mf.grad(function(x) return f(x) end)(qkv)
      local gb = mf.grad(function(x) return f(x, true) end)(qkv)
      T.ok(max_abs(ga, gb) == 0, dt .. " gradient: " .. max_abs(ga, gb))
      local want = mf.grad(function(x)
        local q, k, v = table.unpack(mf.split(x, 3, 3))
        local y = mf.transpose(composed(heads(q), heads(k), heads(v), o), {1, 3, 2, 4})
        return mf.reduce_sum(mf.reshape(y, {2, 70, 24}) * w)
      end)(qkv)
      T.ok(max_abs(ga, want) < (dt == "float32" and 2e-5 or 1e-12),
           dt .. " against the composition")
    end
  end
  -- rows whose last axis is not contiguous are copied: the same values
  local x = normal({3, 8, 70}, 24)
  local q = mf.transpose(x, {1, 3, 2})
  T.ok(max_abs(sdpa(q, q, q, {causal = true}), sdpa(q * 1, q * 1, q * 1, {causal = true})) == 0)
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
  T.raises(sdpa, "scaled_dot_product_attention: dropout must be a rate in [0, 1] (the fraction "
           .. "of weights dropped), got 1.5", q, q, q, {dropout = 1.5})
  T.raises(sdpa, "dropout must be a rate in [0, 1]", q, q, q, {dropout = -0.1})
  T.raises(sdpa, "dropout must be a rate in [0, 1]", q, q, q, {dropout = 0 / 0})
  T.raises(sdpa, "option 'seed' must be an integer", q, q, q, {dropout = 0.5, seed = 1.5})
  T.raises(mf.vmap(function(x) return sdpa(x, x, x, {dropout = 0.5}) end),
           "vmap: ScaledDotProductAttention with dropout has no batching rule", mf.ones{2, 4, 3})
end)

T.done()
