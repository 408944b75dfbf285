-- stock_lua_module.lua — run by tests/lua/test_module.lua with Debian's
-- lua5.4 (not moonflow), LUA_CPATH pointing at build/moonflow.so: the module
-- loads, computes (a matmul, a gradient, a layer, the lib/ part) and leaves
-- the host's globals alone. Prints "OK" or raises.
local before = {}
for k in pairs(_G) do before[k] = true end
local print0, resume0, wrap0, close0 = print, coroutine.resume, coroutine.wrap, coroutine.close
collectgarbage("incremental")

local mf = require "moonflow"
assert(package.loaded.moonflow == mf, "package.loaded.moonflow is not the module")
assert(print == print0, "the module replaced print")
assert(coroutine.resume == resume0 and coroutine.wrap == wrap0 and coroutine.close == close0,
       "the module replaced a coroutine function")
assert(collectgarbage("incremental") == "incremental", "the module changed the collector's mode")
for k in pairs(_G) do assert(before[k], "the module set the global '" .. tostring(k) .. "'") end

local function same(got, want, what)
  local g = got:totable()
  for i, row in ipairs(want) do
    for j, v in ipairs(row) do
      assert(math.abs(g[i][j] - v) < 1e-6, what .. ": " .. tostring(got))
    end
  end
end
local a = mf.tensor{{1, 2}, {3, 4}}
same(mf.matmul(a, a), {{7, 10}, {15, 22}}, "matmul")
local x = mf.Variable(mf.tensor{{1, 2, 3}})
local tape = mf.GradientTape()
local y = mf.reduce_sum(x * x)
same(tape:gradient(y, x), {{2, 4, 6}}, "gradient of sum(x^2)")
local dense = mf.layers.Dense(2, {kernel_initializer = "ones"})
same(dense(mf.tensor{{1, 2, 3}}), {{6, 6}}, "Dense")
-- errors are Lua errors, naming the function
local ok, err = pcall(mf.matmul, a, mf.ones{3, 3})
assert(not ok and tostring(err):find("matmul"), tostring(err))
-- a second require is the same table
assert(require "moonflow" == mf)
print0("OK")
