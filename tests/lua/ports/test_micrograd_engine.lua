-- micrograd's test/test_engine.py (Karpathy), line by line: the micrograd halves written with
-- moonflow's float64 tensors and a GradientTape; micrograd compares them with PyTorch, whose
-- numbers come from gen_torch_expected.py (torch_expected.lua).
local T = dofile("tests/lua/harness.lua")
local E = dofile("tests/lua/ports/torch_expected.lua")

local function Value(v) return mf.tensor(v, "float64") end
local function relu(t) return mf.nn.relu(t) end

T.test("test_sanity_check", function()
  local x = Value(-4.0)
  local tape = mf.GradientTape()
  tape:watch(x)
  local z = 2 * x + 2 + x
  local q = relu(z) + z * x
  local h = relu(z * z)
  local y = h + q + q * x
  tape:stop()
  local dx = tape:gradient(y, x)    -- y.backward()
  -- forward pass went well
  T.eq(y:item(), E.sanity.y)
  -- backward pass went well
  T.eq(dx:item(), E.sanity.dx)
end)

T.test("test_more_ops", function()
  local a = Value(-4.0)
  local b = Value(2.0)
  local tape = mf.GradientTape()
  tape:watch{a, b}
  local c = a + b
  local d = a * b + b ^ 3
  c = c + (c + 1)                   -- c += c + 1
  c = c + (1 + c + (-a))            -- c += 1 + c + (-a)
  d = d + (d * 2 + relu(b + a))     -- d += d * 2 + (b + a).relu()
  d = d + (3 * d + relu(b - a))     -- d += 3 * d + (b - a).relu()
  local e = c - d
  local f = e ^ 2
  local g = f / 2.0
  g = g + 10.0 / f                  -- g += 10.0 / f
  tape:stop()
  local da, db = table.unpack(tape:gradient(g, {a, b}))
  local tol = 1e-6
  -- forward pass went well
  T.eq(g:item(), E.more_ops.g, tol)
  -- backward pass went well
  T.eq(da:item(), E.more_ops.da, tol)
  T.eq(db:item(), E.more_ops.db, tol)
end)

T.test("test_more_ops with mf.grad", function()
  local function gfun(a, b)
    local c = a + b
    local d = a * b + b ^ 3
    c = c + (c + 1)
    c = c + (1 + c + (-a))
    d = d + (d * 2 + relu(b + a))
    d = d + (3 * d + relu(b - a))
    local f = (c - d) ^ 2
    return f / 2.0 + 10.0 / f
  end
  local v, da, db = mf.value_and_grad(gfun)(Value(-4.0), Value(2.0))
  T.eq(v:item(), E.more_ops.g, 1e-6)
  T.eq(da:item(), E.more_ops.da, 1e-6)
  T.eq(db:item(), E.more_ops.db, 1e-6)
end)

T.done()
