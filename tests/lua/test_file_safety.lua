-- test_file_safety.lua — checkpoint files are written safely (issue #13,
-- item 7): a unique temporary name (mkstemp) in the target's directory, so
-- a stale file of a killed save (even one named as this process would
-- have named it before) never blocks a save, and stale ones of our own
-- pattern are removed; the replaced file keeps its permission bits;
-- anything but a regular file is refused, not replaced; a path or tensor
-- name with a NUL byte is an error, as is a header with a \u0000 escape.
local T = dofile("tests/lua/harness.lua")

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local path = dir .. "/model.safetensors"
local function sh(cmd)
  local p = io.popen(cmd)
  local out = p:read("a")
  p:close()
  return (out:gsub("%s+$", ""))
end

-- (mf.save("/dev/null", ...) is refused the same way; the test does not try
-- it: before this fix, as root, it replaced /dev/null with a regular file.)
T.test("a non-regular target is refused and left alone", function()
  assert(os.execute("mkfifo " .. dir .. "/fifo"))
  T.raises(mf.save, "refusing to replace it", dir .. "/fifo", {a = mf.ones{2}})
  T.eq(sh("stat -c %F " .. dir .. "/fifo"), "fifo")
  T.raises(mf.save, "not a regular file", dir, {a = mf.ones{2}})
end)

T.test("the replaced file keeps its permission bits; a new one follows the umask", function()
  mf.save(path, {a = mf.ones{2}})
  assert(os.execute("chmod 600 " .. path))
  mf.save(path, {a = mf.fill({2}, 3)})
  T.eq(sh("stat -c %a " .. path), "600")
  T.eq(mf.load(path).a, {3, 3})
  local fresh = dir .. "/fresh.safetensors"
  mf.save(fresh, {a = mf.ones{1}})
  local umask = tonumber(sh("umask"), 8)
  T.eq(sh("stat -c %a " .. fresh), string.format("%o", 438 & ~umask))   -- 0666 & ~umask
end)

T.test("stale temporary files do not block a save and are removed", function()
  -- a name of the old "<path>.tmp.<pid>" scheme (a reused pid made saves
  -- fail with "File exists"): it is not ours to remove, and blocks nothing
  local stale_old = path .. ".tmp.12345"
  local f = assert(io.open(stale_old, "wb")); f:write("partial"); f:close()
  -- a stale file of the current pattern, an hour old, and a fresh one (a
  -- save in progress elsewhere): only the stale one goes
  local stale = path .. ".tmp.AbC123"
  local busy = path .. ".tmp.XyZ789"
  for _, p in ipairs{stale, busy} do
    f = assert(io.open(p, "wb")); f:write("partial"); f:close()
  end
  assert(os.execute("touch -d '2 hours ago' " .. stale))
  mf.save(path, {a = mf.fill({2}, 4)})
  T.eq(mf.load(path).a, {4, 4})
  T.ok(not io.open(stale, "rb"), "the stale temporary file was not removed")
  local b = io.open(busy, "rb")
  T.ok(b, "a recent temporary file (a save in progress) was removed")
  if b then b:close() end
  os.remove(busy); os.remove(stale_old)
  T.eq(sh("ls " .. dir .. " | grep -c tmp || true"), "0")
end)

T.test("NUL bytes in paths and names are errors, not silent truncations", function()
  T.raises(mf.save, "save: the path holds a NUL byte", dir .. "/a\0b", {a = mf.ones{2}})
  T.raises(mf.load, "load: the path holds a NUL byte", path .. "\0.x")
  T.raises(mf.data.read_csv, "read_csv: the path holds a NUL byte", "x\0.csv")
  T.raises(mf.data.read_idx, "read_idx: the path holds a NUL byte", "x\0.idx")
  T.raises(mf.save, "holds a NUL byte", path, {["a\0b"] = mf.ones{2}})
  local h = '{"a\\u0000b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
  h = h .. string.rep(" ", (8 - #h % 8) % 8)
  local f = assert(io.open(dir .. "/nul.safetensors", "wb"))
  f:write(string.pack("<I8", #h), h, string.pack("<f", 1)); f:close()
  T.raises(mf.load, "\\u0000", dir .. "/nul.safetensors")
  -- an escaped backslash before u0000 is an ordinary name
  h = '{"a\\\\u0000b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
  h = h .. string.rep(" ", (8 - #h % 8) % 8)
  f = assert(io.open(dir .. "/ok.safetensors", "wb"))
  f:write(string.pack("<I8", #h), h, string.pack("<f", 1)); f:close()
  T.ok(mf.load(dir .. "/ok.safetensors")["a\\u0000b"])
end)

T.test("a CSV field with a NUL byte is an error naming the file, line and column", function()
  local csv = dir .. "/nul.csv"
  local f = assert(io.open(csv, "wb"))
  f:write("a,b\n1,2\n3,4\0" .. "5\n")   -- "4\0005" was read as 4
  f:close()
  T.raises(mf.data.read_csv, "read_csv: " .. csv ..
           ":3: column 2: the field holds a NUL byte", csv)
  f = assert(io.open(csv, "wb"))
  f:write("a,\"b\0c\"\n1,2\n")          -- in a quoted header name
  f:close()
  T.raises(mf.data.read_csv, ":1: column 2: the field holds a NUL byte", csv)
end)

os.execute("rm -rf " .. dir)
T.done()
