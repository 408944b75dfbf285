-- 01_tensors.lua — tensors: creation, dtypes, broadcasting, views, printing.
-- Run: build/moonflow scripts/01_tensors.lua

-- Creation from Lua tables (float32 by default) and with helpers.
local a = mf.tensor{{1, 2, 3}, {4, 5, 6}}
print("a =") print(a)
print("shape:", table.concat(a.shape, "x"), "dtype:", a.dtype, "ndim:", a.ndim)
print(mf.zeros{2, 2})
print(mf.range(1, 6))                  -- limit is exclusive, as in TensorFlow
print(mf.linspace(0, 1, 5))
print(mf.tensor({1, 2, 3}, "int64"))   -- an explicit dtype
mf.random.seed(42)
print(mf.random.normal({2, 3}, {stddev = 0.1}))   -- seeded: same numbers every run

-- Broadcasting (NumPy rules): trailing dimensions align, 1 stretches.
local row = mf.tensor{10, 20, 30}       -- shape (3)
local col = mf.tensor{{1}, {2}}         -- shape (2,1)
print("a + row =") print(a + row)
print("col * row =") print(col * row)   -- (2,1) * (3) -> (2,3)
print("a / 2 + 1 =") print(a / 2 + 1)   -- Lua numbers take the tensor's dtype

-- Indices and axes are 1-based. t[i] is a view of row i; reshape/transpose/slice
-- are views too (tensors are immutable, so sharing storage is safe).
print("a[2] =") print(a[2])
print("a[2][3] =", a[2][3])             -- a 1-D tensor indexed gives a Lua number
print("transpose:") print(mf.transpose(a))
print("slice rows 1.., columns 2..3:") print(mf.slice(a, {1, 2}, {2, 2}))
print("reduce_sum over axis 2:") print(mf.reduce_sum(a, 2))
print("argmax over axis 2 (1-based):") print(mf.argmax(a, 2))

-- Back to Lua values.
print("totable:", table.concat(a:totable()[1], ", "))
print("mean as a Lua number:", mf.reduce_mean(a):item())

-- Printing options: precision and summarising of large tensors.
mf.set_printoptions{precision = 2, threshold = 10, edgeitems = 2}
print(mf.linspace(0, 1, 100))
mf.set_printoptions{precision = 4, threshold = 1000, edgeitems = 3}
print("tensors: done")
