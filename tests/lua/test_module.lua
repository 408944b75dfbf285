-- test_module.lua — moonflow as a Lua module (issue #32): require "moonflow"
-- inside moonflow gives mf; build/moonflow.so (make module, built by make
-- test) loads in Debian's stock lua5.4, computes, and leaves print, the
-- coroutine library, the collector's mode and the globals alone
-- (tests/lua/data/stock_lua_module.lua).
local T = dofile("tests/lua/harness.lua")

T.test("require 'moonflow' inside moonflow is mf", function()
  local m = require "moonflow"
  T.ok(m == mf, "require gave another table")
  T.eq(m.ones{2}, {1, 1})
end)

T.test("a stock lua5.4 loads build/moonflow.so", function()
  T.ok(os.execute("command -v lua5.4 > /dev/null 2>&1"),
       "lua5.4 is missing (tools/test_deps.sh installs Debian's lua5.4)")
  local f = io.open("build/moonflow.so", "rb")
  T.ok(f, "build/moonflow.so is missing: make module builds it (make test does)")
  f:close()
  -- the release module in a plain interpreter: the sanitizer runtime is not in it
  local p = io.popen("env -u ASAN_OPTIONS -u LD_PRELOAD LUA_CPATH='build/?.so' OPENBLAS_NUM_THREADS=1 " ..
                     "lua5.4 tests/lua/data/stock_lua_module.lua 2>&1")
  local out = p:read("a")
  local ok = p:close()
  T.ok(ok and out == "OK\n", out)
end)

T.test("luarocks make builds the rockspec offline; lua5.4 loads it from the tree", function()
  T.ok(os.execute("command -v luarocks > /dev/null 2>&1"),
       "luarocks is missing (tools/test_deps.sh installs Debian's luarocks)")
  local tree = os.tmpname()
  os.remove(tree)
  -- no server is asked: the one dependency, lua 5.4, is the interpreter itself
  local p = io.popen(string.format(
    "luarocks --lua-version=5.4 --only-server=file:///nonexistent make --tree='%s' " ..
    "moonflow-0.1.0-1.rockspec 2>&1 && eval \"$(luarocks --lua-version=5.4 --tree='%s' " ..
    "path)\" && env -u ASAN_OPTIONS -u LD_PRELOAD OPENBLAS_NUM_THREADS=1 lua5.4 -e " ..
    "'local mf = require \"moonflow\"; print(mf.reduce_sum(mf.ones{2, 3}):item(), " ..
    "package.searchpath(\"moonflow\", package.cpath))' 2>&1", tree, tree))
  local out = p:read("a")
  local ok = p:close()
  os.execute("rm -rf '" .. tree .. "'")
  T.ok(ok and out:find("is now installed in", 1, true), out)
  T.ok(out:find("\n6%.0\t" .. tree:gsub("%p", "%%%0") .. "/lib/lua/5%.4/moonflow%.so\n"), out)
end)

T.done()
