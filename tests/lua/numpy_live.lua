-- numpy_live.lua — runs a numpy script on tensors from a Lua test (numpy is
-- called live, torch never: tests/README conventions in harness.lua's
-- neighbours). local np = dofile("tests/lua/numpy_live.lua"); np.available
-- says whether /usr/bin/python3 has numpy; np.run(body, tensors, arg) saves
-- 'tensors' (a table of name = tensor) as safetensors, runs 'body' (Python,
-- after a prelude defining load(path), save(path, dict) and np, with src =
-- the tensors read back as float64 arrays, res = {} to fill and ARG = 'arg')
-- and returns the tensors it put in res; np.cleanup() removes its files.
local python = "/usr/bin/python3"
local M = {available = os.execute(python .. " -c 'import numpy' 2>/dev/null") and true or false}

local prelude = [==[
import json, struct, sys
import numpy as np

def load(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    out = {}
    for k, v in head.items():
        if k == "__metadata__":
            continue
        s, e = v["data_offsets"]
        out[k] = np.frombuffer(raw[8 + n + s:8 + n + e], "<f8").reshape(v["shape"])
    return out

def save(path, tensors):
    head, blobs, off = {}, [], 0
    for k, t in tensors.items():
        b = np.ascontiguousarray(t, "<f8").tobytes()
        head[k] = {"dtype": "F64", "shape": list(np.shape(t)), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(head).encode()
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

src = load(sys.argv[1])
ARG = sys.argv[3]
res = {}
]==]

local dir
function M.run(body, tensors, arg)
  if not dir then
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p '" .. dir .. "'"))
  end
  local pin, pout, ps = dir .. "/in.safetensors", dir .. "/out.safetensors", dir .. "/np.py"
  mf.save(pin, tensors)
  local f = assert(io.open(ps, "w"))
  f:write(prelude, body, "\nsave(sys.argv[2], res)\n")
  f:close()
  local pipe = io.popen(string.format("%s '%s' '%s' '%s' '%s' 2>&1", python, ps, pin, pout, arg))
  local out = pipe:read("a")
  assert(pipe:close(), "numpy failed:\n" .. out)
  return mf.load(pout)
end

-- Removes the files run wrote (call it before T.done()).
function M.cleanup()
  if dir then os.execute("rm -rf '" .. dir .. "'") end
  dir = nil
end

return M
