-- test_memory.lua — engine memory is known to Lua's collector: eager loops
-- stay bounded without collectgarbage().
local T = dofile("tests/lua/harness.lua")

local function rss_kb()
  local f = io.open("/proc/self/statm")
  if not f then return 0 end
  local _, resident = f:read("n", "n")
  f:close()
  return resident * 4
end

T.test("10,000 adds of 1000x1000 stay bounded", function()
  local a = mf.ones{1000, 1000}
  local b = mf.ones{1000, 1000}
  local c
  for i = 1, 200 do c = a + b end
  local before = rss_kb()
  local peak_in_use = 0
  for i = 1, 10000 do
    c = a + b
    local m = mf.memory().in_use
    if m > peak_in_use then peak_in_use = m end
  end
  local after = rss_kb()
  T.eq(c[1][1], 2)
  -- each result is 4 MB; without GC pressure 10,000 of them would be 40 GB
  T.ok(peak_in_use < 1024 * 1024 * 1024,
       string.format("engine memory peaked at %d MB", peak_in_use // (1024 * 1024)))
  T.ok(after - before < 512 * 1024,
       string.format("resident memory grew by %d MB", (after - before) // 1024))
end)

T.test("small tensors are reclaimed by the generational collector", function()
  local a, b = mf.tensor{1}, mf.tensor{2}
  for i = 1, 1000 do local c = a + b end
  local before = mf.memory().tensors
  for i = 1, 200000 do local c = a + b end
  T.ok(mf.memory().tensors - before < 50000, "live tensors grew by " ..
       (mf.memory().tensors - before))
end)

T.test("collected tensors leave no live tensors behind", function()
  collectgarbage()
  collectgarbage()
  local base = mf.memory().tensors
  do
    local x = mf.ones{10, 10}
    local y = x * 2 + 1
    local z = y[1]
  end
  collectgarbage()
  collectgarbage()
  T.eq(mf.memory().tensors, base)
end)

-- A loop of 'y = f(x)' in its steady state (after 5 rounds): the blocks it
-- holds (in use, in units of x's block) and whether any block freed by a
-- collection was left in the cache instead of taken by the next output.
-- Each case has its own size, so blocks that earlier cases left cached are
-- of another size class and are never taken here.
local function steady_loop(n, f)
  local x = mf.random.uniform({n}, {minval = 0.5, maxval = 4, seed = 1})
  collectgarbage()
  collectgarbage()
  local m0 = mf.memory()
  local block, held, left_cached = m0.in_use, 0, 0
  for i = 1, 30 do
    local y = f(x)
    local m = mf.memory()
    if i > 5 then
      held = math.max(held, (m.in_use - m0.in_use) / block)
      left_cached = math.max(left_cached, (m.cached - m0.cached) / block)
    end
  end
  return held, left_cached
end

T.test("a loop of large ops takes its output from the block it just dropped", function()
  -- lmf_gc_before_op: a young collection before the op frees the result the
  -- loop dropped, and the op's output takes that block while it is still in
  -- cache. Before, the outputs rotated through blocks: 3 for sqrt, 4 for
  -- x + x, 5 for the gradient, one or more of them waiting in the cache.
  local cases = {
    {1048576, mf.sqrt, "sqrt"},
    {1310720, function(x) return x + x end, "x + x"},
    {1572864, function(x) return mf.exp(x) * 2 end, "exp(x) * 2"},
    {1835008, mf.grad(function(v) return mf.reduce_sum(mf.exp(v)) end), "grad of sum(exp)"},
    -- 131k floats (512 KiB, a transformer's activation): rotating through
    -- four such blocks put the outputs past a 1 MiB L2 (#29: 131k rows)
    {131072, mf.floor, "floor at 131k"},
    {98304, function(x) return x * x end, "x * x at 96k"},
    {65536, mf.exp, "exp at 64k"},
  }
  for _, c in ipairs(cases) do
    local held, left_cached = steady_loop(c[1], c[2])
    T.ok(left_cached < 0.5, string.format("%s: %.2f blocks of its size waited in the cache",
                                         c[3], left_cached))
    T.ok(held < 4.5, string.format("%s: held %.2f blocks (at most 4)", c[3], held))
  end
end)

T.test("a loop of mid-size ops cycles its outputs within about 256 KiB", function()
  -- results of 16 KiB and more count toward lmf_gc_before_op's young
  -- collection once 256 KiB of them were made. Before, a loop's 16-64 KiB
  -- outputs rotated through 2 MiB of blocks (or the live set's size), fresh
  -- pages until the first collection. Sizes of their own (see steady_loop).
  local cases = {
    {{5000}, function(x) return x * x end, "x * x at 5000 (20 KB)"},
    {{16000}, mf.exp, "exp at 16000 (64 KB)"},
    {{12000, 8}, function(x) return mf.reduce_sum(x, 2) end, "a sum of 12000 rows (48 KB)"},
  }
  for _, c in ipairs(cases) do
    local x = mf.random.uniform(c[1], {minval = 0.5, maxval = 4, seed = 3})
    collectgarbage()
    collectgarbage()
    local m0 = mf.memory()
    local held = 0
    for i = 1, 300 do
      local y = c[2](x)
      if i > 5 then held = math.max(held, mf.memory().in_use - m0.in_use) end
    end
    T.ok(held <= 512 * 1024, string.format("%s: results held %d KiB (at most 512)", c[3],
                                           held // 1024))
  end
end)

T.test("finalizers run by the collection before a large op: ops, assignments, closes", function()
  -- the collection runs before the op takes its operands (lmf.h), so the
  -- call sees what the finalizers left (v assigned in every round); later,
  -- the operands are boxes of the binding, and what a finalizer does to the
  -- script's Variables and tensors does not reach the call under way
  local n = 1048576
  local x = mf.fill({n}, 4)
  local v = mf.Variable(mf.fill({n}, 1))
  local ran = 0
  for i = 1, 6 do
    local y <close> = mf.sqrt(x)   -- a large result: the next op collects first
    setmetatable({}, {__gc = function()
      ran = ran + 1
      local z = x * 3              -- an op inside the finalizer (no nested collection)
      v:assign(z)
      if i == 3 then x:close() end
    end})
    local w = mf.add(v, y)         -- v as assigned by the finalizer, y alive
    local want = 14
    T.eq(w[n], want, 0, "round " .. i)
    if i >= 3 then break end
  end
  T.ok(ran >= 2, "the finalizers ran " .. ran .. " times")
end)

T.test("a loop of large ops keeps the Lua heap level: its boxes die young", function()
  -- lmf_gc_before_op's young collection runs before the binding makes the
  -- anchor boxes of its operands; made before it, they lived through it and
  -- died old, freed only by a major collection: 3000 adds of 64k floats
  -- grew the heap by 281 KiB (0 now)
  local x = mf.random.uniform({65536}, {minval = 0.5, maxval = 4, seed = 3})
  local y = mf.random.uniform({65536}, {minval = 0.5, maxval = 4, seed = 4})
  for _, op in ipairs{"add", "maximum"} do
    collectgarbage()
    collectgarbage()
    local k0, grew = collectgarbage("count"), 0
    for _ = 1, 3000 do
      local z = mf[op](x, y)
      grew = math.max(grew, collectgarbage("count") - k0)
    end
    T.ok(grew < 64, string.format("%s: the Lua heap grew by %.0f KiB (at most 64)", op, grew))
  end
end)

T.test("Session runs and traced calls take their output from the block just dropped", function()
  -- lmf_gc_before_op before sess:run (before: 1 block waited in the cache); a
  -- traced call (which collected in time already) as a guard
  local g = mf.Graph()
  local p, y = g:as_default(function()
    local p = mf.placeholder("float32", {-1})
    return p, mf.sqrt(p)
  end)
  local sess = mf.Session(g)
  local held, left = steady_loop(2097152, function(x) return sess:run(y, {[p] = x}) end)
  T.ok(left < 0.5, string.format("sess:run: %.2f blocks waited in the cache", left))
  T.ok(held < 4.5, string.format("sess:run: held %.2f blocks (at most 4)", held))
  local traced = mf.trace(function(x) return mf.sqrt(x) end)
  held, left = steady_loop(2359296, traced)
  T.ok(left < 0.5, string.format("mf.trace: %.2f blocks waited in the cache", left))
  T.ok(held < 4.5, string.format("mf.trace: held %.2f blocks (at most 4)", held))
end)

T.done()