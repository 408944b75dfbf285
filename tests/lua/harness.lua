-- harness.lua — a tiny test harness for the Lua API tests.
-- local T = dofile("tests/lua/harness.lua")
-- T.test("name", function() ... end); T.eq(got, want [, tol]); T.raises(fn, "pattern"); T.done()
local T = {failures = 0, count = 0}

local function fmt(v)
  if type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = fmt(x) end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  return tostring(v)
end

local function close(a, b, tol)
  if type(a) == "table" and type(b) == "table" then
    if #a ~= #b then return false end
    for i = 1, #a do if not close(a[i], b[i], tol) then return false end end
    return true
  end
  if type(a) == "number" and type(b) == "number" then
    if a ~= a and b ~= b then return true end
    return a == b or math.abs(a - b) <= (tol or 0)
  end
  return a == b
end

-- Compares numbers, booleans, nested tables, or a tensor (via totable) with a value.
function T.eq(got, want, tol, msg)
  if type(got) == "userdata" and got.totable then got = got:totable() end
  if type(want) == "userdata" and want.totable then want = want:totable() end
  if not close(got, want, tol) then
    error(string.format("%sexpected %s, got %s", msg and (msg .. ": ") or "", fmt(want), fmt(got)), 2)
  end
end

function T.ok(cond, msg)
  if not cond then error(msg or "assertion failed", 2) end
end

-- Asserts fn(...) raises an error whose message contains 'pattern' (plain text).
function T.raises(fn, pattern, ...)
  local ok, err = pcall(fn, ...)
  if ok then error("expected an error containing '" .. pattern .. "', got none", 2) end
  if not string.find(tostring(err), pattern, 1, true) then
    error("error '" .. tostring(err) .. "' does not contain '" .. pattern .. "'", 2)
  end
end

-- What help(...) prints, as one string (print is swapped for the call and
-- put back even when help raises; the error is raised again after).
function T.help_text(...)
  local old, out = print, {}
  print = function(...) out[#out + 1] = table.concat({...}, "\t") end
  local ok, err = pcall(help, ...)
  print = old
  assert(ok, err)
  return table.concat(out, "\n")
end

-- The moonflow binary without sanitizers, for a test that runs a child under
-- `ulimit -v` (the sanitizer builds cannot): the running one, or under
-- `make check` build/release/moonflow when it exists, else nil.
function T.unsanitized_binary()
  local exe = arg and (arg[-1] or arg[0]) or ""
  if not exe:find("asan", 1, true) then return exe end
  local f = io.open("build/release/moonflow", "rb")
  if f then f:close(); return "build/release/moonflow" end
  return nil
end

function T.test(name, fn)
  T.count = T.count + 1
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    T.failures = T.failures + 1
    io.stderr:write("FAIL ", name, ": ", tostring(err), "\n")
  end
end

function T.done()
  print(string.format("%d passed, %d failed", T.count - T.failures, T.failures))
  os.exit(T.failures == 0 and 0 or 1)
end

return T
