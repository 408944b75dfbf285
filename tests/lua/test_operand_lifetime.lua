-- test_operand_lifetime.lua — a binding keeps every operand alive for the
-- whole call (issue #13, item 1). Lua code that runs inside a call (an
-- options table's __index, a finalizer run by an allocation, a <close>
-- variable) assigns or closes the operand and collects garbage; the call
-- must still use the operand's value as it took it. Under `make check`
-- (ASan, no tensor cache) a freed operand is a heap-use-after-free report;
-- in the release build the results are checked.
local T = dofile("tests/lua/harness.lua")

local N = 300

-- An options table whose every field read runs 'hook' (then reads as nil).
local function evil(hook)
  local fired = 0
  return setmetatable({}, {__index = function() fired = fired + 1; hook() end}),
         function() return fired end
end

local function var_case(name, call)
  T.test(name .. ": an options __index assigns the Variable and collects", function()
    local v = mf.Variable(mf.ones{N, N})
    local opts, fired = evil(function() v:assign(mf.fill({N, N}, 5)); collectgarbage() end)
    local ok, r = pcall(call, v, opts)
    T.ok(fired() > 0, name .. ": the options table was not read")
    T.ok(ok, tostring(r))
  end)
  T.test(name .. ": an options __index closes the Variable and collects", function()
    local v = mf.Variable(mf.ones{N, N})
    local opts, fired = evil(function() getmetatable(v).__close(v); collectgarbage() end)
    local ok, r = pcall(call, v, opts)
    T.ok(fired() > 0, name .. ": the options table was not read")
    T.ok(ok, tostring(r))
  end)
  T.test(name .. ": an options __index closes the tensor and collects", function()
    local x = mf.ones{N, N}
    local opts, fired = evil(function()
      local c <close> = x   -- closes x when this function returns
      collectgarbage()
    end)
    local ok, r = pcall(call, x, opts)
    T.ok(fired() > 0, name .. ": the options table was not read")
    T.ok(ok, tostring(r))
  end)
end

var_case("reduce_sum", function(x, o)
  local r = mf.reduce_sum(x, o); T.ok(r:item() == N * N or r:item() == 5 * N * N); return r end)
var_case("reduce_mean", function(x, o)
  local r = mf.reduce_mean(x, o); T.ok(r:item() == 1 or r:item() == 5); return r end)
var_case("matmul", function(x, o) return mf.matmul(x, x, o) end)
var_case("dropout", function(x, o) return mf.nn.dropout(x, 0.5, o) end)
var_case("clip_by_norm", function(x, o) return mf.clip_by_norm(x, 1, o) end)
var_case("shuffle", function(x, o) return mf.random.shuffle(x, o) end)
var_case("argmax", function(x, o) return mf.argmax(x, o) end)
var_case("transpose", function(x, o) return mf.transpose(x, o) end)
var_case("split", function(x, o) return mf.split(x, 2, o) end)
var_case("gather", function(x, o) return mf.gather(x, {1, 2}, o) end)
var_case("pad", function(x, o) return mf.pad(x, {{1, 1}, {0, 0}}, o) end)

T.test("add: a finalizer run by converting a big table assigns the other operand", function()
  local v = mf.Variable(mf.ones{N, N})
  local big = {}
  for i = 1, N do big[i] = {} for j = 1, N do big[i][j] = 1 end end
  for _ = 1, 20 do
    setmetatable({}, {__gc = function() v:assign(mf.fill({N, N}, 5)) end})
  end
  local r = mf.add(v, big)
  local s = mf.reduce_sum(r):item()
  T.ok(s == 2 * N * N or s == 6 * N * N, "sum " .. s)
end)

T.test("a converted operand and a Variable's snapshot survive a full collection", function()
  local v = mf.Variable(mf.fill({4}, 2))
  local opts = setmetatable({}, {__index = function()
    v:assign(mf.fill({4}, 7)); collectgarbage(); collectgarbage() end})
  T.eq(mf.reduce_sum(v, opts), 8)     -- the value as the call took it
  T.eq(mf.reduce_sum(v), 28)          -- and the assignment happened
end)

T.test("a Variable closed mid-call (by hand, a <close> in a coroutine) stays usable for the call",
       function()
  local v = mf.Variable(mf.tensor(0.1))
  local o = setmetatable({}, {__index = function() getmetatable(v).__close(v); collectgarbage() end})
  local opt = mf.train.GradientDescentOptimizer(v, o)   -- reads the rate Variable after 'name'
  T.ok(tostring(opt):find("GradientDescentOptimizer", 1, true))
  T.ok(tostring(v):find("closed", 1, true), "the Variable is closed after the call")
  local w = mf.Variable(mf.tensor(0.1))
  local o2 = setmetatable({}, {__index = function()
    local co = coroutine.wrap(function() local c <close> = w; collectgarbage() end)
    co(); collectgarbage()
  end})
  T.ok(mf.train.AdamOptimizer(w, o2))
  T.raises(function() return w + 1 end, "closed")
end)

T.test("the helpers leave identity and probes alone where it matters", function()
  local t = mf.tensor{1, 2}
  T.ok(mf.constant(t) == t, "constant passes a tensor through")
  local step = mf.Variable(mf.tensor(0, "int64"), {trainable = false})
  local lr = mf.train.exponential_decay(0.1, step, 10, 0.5)
  step:assign(mf.tensor(10, "int64"))
  T.eq(lr():item(), 0.05, 1e-7)
end)

T.done()
