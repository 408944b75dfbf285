-- test_locale.lua — number text does not depend on the C locale (issue #13,
-- item 7): after os.setlocale("de_DE.UTF-8"), whose decimal point is a
-- comma, read_csv still reads "1.5", printed tensors, graph listings and
-- plots still show "1.5", SVG coordinates stay "x,y" pairs and a Chrome
-- trace is still valid JSON. A CI machine
-- may have no German locale installed: the test builds one with localedef
-- (from Debian's 'locales' package, which tools/test_deps.sh installs) into
-- a temporary directory and runs a child moonflow with LOCPATH pointing there.
local T = dofile("tests/lua/harness.lua")

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

local child = [[
local dir = ...
assert(os.setlocale("de_DE.UTF-8"), "de_DE.UTF-8 is not available")
-- the locale is real: the C library now writes a comma
assert(string.format("%.1f", 1.5) == "1,5", "the locale's decimal point is not a comma")
local f = assert(io.open(dir .. "/x.csv", "w"))
f:write("a,b\n1.5,2.25\n-0.125,1e-3\n")
f:close()
local t = mf.data.read_csv(dir .. "/x.csv", {dtype = "float64"})
print("CSV", string.format("%d %d %d %d", t[1][1] * 1000, t[1][2] * 1000, t[2][1] * 1000,
                           t[2][2] * 1000))
print("PRINT", tostring(mf.constant({1.5, 2.25}, "float32")):gsub("\n", " "))
local g = mf.Graph()
g:as_default(function() local x = mf.placeholder("float32", {2}); local y = mf.clip_by_value(x, 0.5, 1.5) end)
print("GRAPH", (tostring(g):gsub("\n", " ")))
local prof = mf.profile(function() return mf.matmul(mf.ones{64, 64}, mf.ones{64, 64}) end)
prof:save_trace(dir .. "/trace.json")
-- SVG coordinates ("x,y" pairs) and the text plot's labels
mf.plot({0.5, 0.25, 0.125}, {file = dir .. "/p.svg"})
local svg = io.open(dir .. "/p.svg"):read("a")
local points = svg:match('<polyline[^>]-points="([^"]*)"')
print("SVG", select(2, points:gsub("[-%d]+%.%d+,[-%d]+%.%d+", "")))
print("PLOT", (mf.plot({0.5, 0.25, 0.125}, {print = false}):gsub("\n", " ")))
print("DONE")
]]

T.test("CSV, printing, listings and trace JSON under a comma-decimal locale", function()
  local src = "/usr/share/i18n/locales/de_DE"
  T.ok(io.open(src), src .. " is missing: install Debian's 'locales' (tools/test_deps.sh)")
  local ok, out = sh("localedef -i de_DE -f UTF-8 " .. dir .. "/de_DE.UTF-8")
  T.ok(io.open(dir .. "/de_DE.UTF-8/LC_NUMERIC"), "localedef built no locale: " .. out)
  local f = assert(io.open(dir .. "/child.lua", "w"))
  f:write(child)
  f:close()
  local exe = arg[-1] or arg[0]
  ok, out = sh("LOCPATH=" .. dir .. " LC_ALL= " .. exe .. " " .. dir .. "/child.lua " .. dir)
  T.ok(ok and out:find("DONE", 1, true), out)
  T.ok(out:find("CSV\t1500 2250 -125 1", 1, true), out)
  T.ok(out:find("%[1%.5 +2%.25%]"), out)
  T.ok(out:find("Const(1.5)", 1, true) and out:find("Const(0.5)", 1, true), out)
  T.ok(out:find("SVG\t3", 1, true), out)
  T.ok(not out:find("%d,%d"), "no comma decimal point anywhere: " .. out)
  -- the trace is JSON a strict reader accepts
  ok, out = sh("/usr/bin/python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); " ..
               "print(len(d[\"traceEvents\"]), d[\"otherData\"][\"peak_gflops\"])' " ..
               dir .. "/trace.json")
  T.ok(ok, "trace.json is not JSON: " .. out)
end)

os.execute("rm -rf " .. dir)
T.done()
