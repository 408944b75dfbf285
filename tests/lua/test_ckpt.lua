-- test_ckpt.lua — mf.save / mf.load (safetensors checkpoints): round trips of
-- every dtype, Variables and strided views, metadata, argument and corrupt-file
-- errors, a failing save that leaves the old file, and interoperability with
-- independent Python code (standard library struct + json, NumPy when present)
-- that writes files for moonflow and reads moonflow's files.
local T = dofile("tests/lua/harness.lua")

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p '" .. dir .. "'"))
local function tpath(name) return dir .. "/" .. name end

local function read_bytes(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function write_bytes(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- A safetensors file from a header string and raw data.
local function write_st(path, header, data)
  write_bytes(path, string.pack("<I8", #header) .. header .. (data or ""))
end

local function temp_files()
  local p = io.popen("ls -a '" .. dir .. "'")
  local n = 0
  for line in p:lines() do if line:find(".tmp.", 1, true) then n = n + 1 end end
  p:close()
  return n
end

T.test("round trip of every dtype, rank 0, empty, Variables and views", function()
  local p = tpath("all.safetensors")
  local m = mf.tensor{{1, 2, 3}, {4, 5, 6}}
  local v = mf.Variable(mf.tensor({0.5, -1.25}, "float64"), {name = "v"})
  mf.save(p, {
    w = m, t = m:transpose(), col = m:slice({1, 3}, {2, 1}),
    d = mf.tensor(0.1, "float64"), i = mf.tensor({-2147483648, 0, 2147483647}, "int32"),
    l = mf.tensor({2^40 + 1, -3}, "int64"), b = mf.tensor{true, false, true},
    e = mf.zeros{0, 3}, v = v,
  })
  local t = mf.load(p)
  local names = {}
  for k in pairs(t) do names[#names + 1] = k end
  table.sort(names)
  T.eq(names, {"b", "col", "d", "e", "i", "l", "t", "v", "w"})
  T.eq(t.w, {{1, 2, 3}, {4, 5, 6}})
  T.eq(t.t, {{1, 4}, {2, 5}, {3, 6}})
  T.eq(t.col, {{3}, {6}})
  T.eq(t.d.dtype, "float64")
  T.eq(t.d.shape, {})
  T.eq(t.d:item(), 0.1)
  T.eq(t.i, {-2147483648, 0, 2147483647})
  T.eq(t.i.dtype, "int32")
  T.eq(t.l, {2^40 + 1, -3})
  T.eq(t.l.dtype, "int64")
  T.eq(t.b, {true, false, true})
  T.eq(t.e.shape, {0, 3})
  T.eq(t.v, {0.5, -1.25})
  T.eq(t.v.dtype, "float64")
  T.eq(temp_files(), 0)
  -- the same tensors give the same bytes
  local q = tpath("again.safetensors")
  mf.save(q, t)
  T.ok(read_bytes(p) == read_bytes(q), "saving what was loaded gives the same file")
end)

T.test("metadata", function()
  local p = tpath("meta.safetensors")
  mf.save(p, {x = mf.ones{2}}, {step = 10, note = "hello"})
  T.eq(select("#", mf.load(p)), 1)   -- only the table unless asked
  local t, meta = mf.load(p, {metadata = true})
  T.eq(t.x, {1, 1})
  T.eq(meta.step, "10")
  T.eq(meta.note, "hello")
  mf.save(p, {})
  t, meta = mf.load(p, {metadata = true})
  T.eq(next(t), nil)
  T.eq(next(meta), nil)
end)

T.test("save: argument errors", function()
  local p = tpath("args.safetensors")
  T.raises(function() mf.save(p) end, "bad argument #2 to 'save' (table expected")
  T.raises(function() mf.save(p, {[1] = mf.ones{1}}) end,
           "save: the table's keys must be tensor names (strings), got a number key")
  T.raises(function() mf.save(p, {w = "x"}) end,
           "save: 'w' is a string; expected a tensor or Variable")
  T.raises(function() mf.save(p, {__metadata__ = mf.ones{1}}) end,
           "save: the name '__metadata__' is reserved")
  T.raises(function() mf.save(p, {w = mf.ones{1}}, {k = {}}) end,
           "save: metadata 'k' is a table; expected a string or number")
  T.raises(function() mf.save(dir .. "/no/such/dir.st", {w = mf.ones{1}}) end,
           "cannot create the temporary file")
  T.raises(function() mf.load(tpath("missing.st")) end, "load: cannot open the file")
end)

T.test("a failing save leaves the old file and no temporary file", function()
  local p = tpath("keep.safetensors")
  mf.save(p, {w = mf.tensor{1, 2}})
  local before = read_bytes(p)
  T.raises(function() mf.save(p, {w = mf.tensor{3, 4}, bad = 1}) end, "expected a tensor")
  T.ok(read_bytes(p) == before)
  -- a directory as the target: refused before anything is written
  local d = tpath("adir")
  assert(os.execute("mkdir -p '" .. d .. "'"))
  mf.save(d .. "/inner.st", {w = mf.ones{1}})
  T.raises(function() mf.save(d, {w = mf.ones{1}}) end, "not a regular file")
  T.eq(temp_files(), 0)
  T.eq(mf.load(d .. "/inner.st").w, {1})
  os.remove(d .. "/inner.st")
  os.remove(d)
  T.eq(mf.load(p).w, {1, 2})
end)

T.test("load: corrupt files", function()
  local p = tpath("bad.safetensors")
  local f32 = string.pack("<ff", 1, 2)
  write_bytes(p, "abc")
  T.raises(function() mf.load(p) end, "load: file too short: 3 bytes")
  write_bytes(p, string.pack("<I8", 100) .. "{}")
  T.raises(function() mf.load(p) end, "header length 100 goes beyond the end of the file")
  write_st(p, '{"w": {"dtype": ')
  T.raises(function() mf.load(p) end, "the header is not valid JSON")
  write_st(p, '{"w":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}', "abcd")
  T.raises(function() mf.load(p) end,
           "load: tensor 'w' has dtype I16; moonflow reads F32, F64, F16, BF16, I32, I64, U8, BOOL")
  write_st(p, '{"w":{"dtype":"F8_E4M3","shape":[4],"data_offsets":[0,4]}}', "abcd")
  T.raises(function() mf.load(p) end, "tensor 'w' has dtype F8_E4M3")
  write_st(p, '{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', f32)
  T.raises(function() mf.load(p) end,
           "tensor 'w': shape (3,) of F32 needs 12 bytes but data_offsets [0, 8] span 8")
  write_st(p, '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},' ..
              '"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', f32)
  T.raises(function() mf.load(p) end, "tensors 'a' and 'b' overlap")
  write_st(p, '{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', f32)
  T.raises(function() mf.load(p) end, "a gap of 4 bytes before tensor 'a'")
  write_st(p, '{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', f32:sub(1, 6))
  T.raises(function() mf.load(p) end, "truncated data: tensor 'w' ends at byte 8")
  write_st(p, '{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', f32 .. "xyz")
  T.raises(function() mf.load(p) end, "trailing garbage: 3 bytes")
  -- a saved file cut short anywhere is an error, never a wrong tensor
  mf.save(p, {w = mf.tensor{{1, 2}, {3, 4}}, s = mf.tensor(5, "int64")})
  local full = read_bytes(p)
  for _, n in ipairs{0, 7, 8, 20, #full - 1} do
    write_bytes(p, full:sub(1, n))
    T.raises(function() mf.load(p) end, "load: ")
  end
end)

-- ---- interoperability with independent Python code -----------------------
local python = "/usr/bin/python3"
local have_python = os.execute(python .. " -c 'import json, struct' 2>/dev/null")

local function run_python(script, ...)
  local sp = tpath("script.py")
  write_bytes(sp, script)
  local cmd = python .. " '" .. sp .. "'"
  for _, a in ipairs{...} do cmd = cmd .. " '" .. a .. "'" end
  local pipe = io.popen(cmd .. " 2>&1")
  local out = pipe:read("a")
  local ok = pipe:close()
  assert(ok, "python failed:\n" .. out)
  return out
end

-- Writes a file by hand the way other programs do: json.dumps' default
-- spacing, unsorted names, no padding, metadata, unaligned offsets.
local py_writer = [==[
import json, struct, sys
tensors = [
    ("weights", "F32", [2, 2], struct.pack("<4f", 1.5, -2.0, 3.0, 4.25)),
    ("flags", "BOOL", [3], bytes([1, 0, 1])),
    ("x64", "F64", [], struct.pack("<d", 0.1)),
    ("count", "I32", [3], struct.pack("<3i", -1, 0, 7)),
    ("big", "I64", [2], struct.pack("<2q", 2**40 + 1, -3)),
    ("nothing", "F32", [0, 4], b""),
]
header = {"__metadata__": {"format": "pt", "source": "python"}}
data = b""
for name, dtype, shape, raw in tensors:
    header[name] = {"dtype": dtype, "shape": shape,
                    "data_offsets": [len(data), len(data) + len(raw)]}
    data += raw
if len(sys.argv) > 2:
    header["half"] = {"dtype": "F16", "shape": [1], "data_offsets": [len(data), len(data) + 2]}
    data += b"\x00\x3c"
h = json.dumps(header).encode()
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + data)
]==]

-- Reads a file with struct + json only (and checks it against NumPy when
-- available); prints one line per tensor and the metadata.
local py_reader = [==[
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
assert n % 8 == 0, "header not padded to 8"
header = json.loads(raw[8:8 + n].decode("utf-8"))
meta = header.pop("__metadata__", {})
body = raw[8 + n:]
fmt = {"F32": "f", "F64": "d", "I32": "i", "I64": "q", "BOOL": "?"}
size = {"F32": 4, "F64": 8, "I32": 4, "I64": 8, "BOOL": 1}
pos = 0
for b, e in sorted(tuple(t["data_offsets"]) for t in header.values()):
    assert b == pos, "gap or overlap"
    pos = e
assert pos == len(body), "data size"
try:
    import numpy as np
except ImportError:
    np = None
npdt = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8", "BOOL": "?"}
for name in sorted(header):
    t = header[name]
    b, e = t["data_offsets"]
    count = 1
    for d in t["shape"]:
        count *= d
    assert e - b == count * size[t["dtype"]], name
    assert b % size[t["dtype"]] == 0, "unaligned " + name
    vals = list(struct.unpack("<%d%s" % (count, fmt[t["dtype"]]), body[b:e]))
    if np is not None:
        arr = np.frombuffer(body[b:e], dtype=npdt[t["dtype"]]).reshape(t["shape"])
        assert arr.reshape(-1).tolist() == vals, name
    print(name, t["dtype"], t["shape"], vals)
print("meta", sorted(meta.items()))
]==]

T.test("interop: moonflow loads a file written by Python", function()
  if not have_python then print("skipped: no " .. python) return end
  local p = tpath("py.safetensors")
  run_python(py_writer, p)
  local t, meta = mf.load(p, {metadata = true})
  T.eq(t.weights, {{1.5, -2}, {3, 4.25}})
  T.eq(t.weights.dtype, "float32")
  T.eq(t.flags, {true, false, true})
  T.eq(t.x64:item(), 0.1)
  T.eq(t.x64.dtype, "float64")
  T.eq(t.count, {-1, 0, 7})
  T.eq(t.count.dtype, "int32")
  T.eq(t.big, {2^40 + 1, -3})
  T.eq(t.big.dtype, "int64")
  T.eq(t.nothing.shape, {0, 4})
  T.eq(meta.format, "pt")
  T.eq(meta.source, "python")
  run_python(py_writer, p, "with-f16")   -- bytes 00 3c: float16 1.0
  t = mf.load(p)
  T.eq(t.half.dtype, "float16")
  T.eq(t.half:totable(), {1})
end)

T.test("interop: Python reads a file written by moonflow", function()
  if not have_python then print("skipped: no " .. python) return end
  local p = tpath("mf.safetensors")
  local m = mf.tensor{{1.5, 2}, {3, -4}}
  mf.save(p, {
    w = m:transpose(), d = mf.tensor(0.25, "float64"), i = mf.tensor({-7, 8}, "int32"),
    l = mf.tensor({2^40 + 1}, "int64"), b = mf.tensor{false, true}, e = mf.zeros{2, 0},
  }, {step = 3})
  local out = run_python(py_reader, p)
  T.eq(out, table.concat({
    "b BOOL [2] [False, True]",
    "d F64 [] [0.25]",
    "e F32 [2, 0] []",
    "i I32 [2] [-7, 8]",
    "l I64 [1] [1099511627777]",
    "w F32 [2, 2] [1.5, 3.0, 2.0, -4.0]",
    "meta [('step', '3')]",
    "",
  }, "\n"))
end)

os.execute("rm -rf '" .. dir .. "'")
T.done()
