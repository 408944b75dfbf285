-- higher_order.lua — eager gradients: the tape, explain, then higher orders
-- (nested tapes, mf.grad(mf.grad(f))) and custom gradients.
-- Run: build/moonflow scripts/higher_order.lua

-- 1. A GradientTape records the ops run while it is active; tape:gradient
--    walks them backwards. Trainable Variables are watched automatically.
local x = mf.Variable(3.0)
local tape = mf.GradientTape()
local y = x * x * x                      -- y = x^3
local dy_dx = tape:gradient(y, x)        -- 3 x^2 = 27
print("y = x^3 at x = 3:  dy/dx =", dy_dx:item())

-- print(tape) lists what the tape recorded, in order, with shapes.
local t2 = mf.GradientTape{persistent = true}
local w = mf.Variable(mf.tensor{{1, 2}, {3, 4}})
local loss = mf.reduce_sum(mf.square(mf.matmul(w, w)))
print(t2)
print("d loss / d w =") print(t2:gradient(loss, w))

-- 2. explain: why is a gradient nil? Plain tensors are not watched.
local t3 = mf.GradientTape{persistent = true}
local c = mf.tensor(2.0)
local z = c * c
print("explain:", t3:explain(z, c))      -- ask before the gradient is taken
print("gradient w.r.t. an unwatched tensor:", t3:gradient(z, c))
local t4 = mf.GradientTape()
t4:watch(c)                              -- now it is
print("after watch:", t4:gradient(c * c, c):item())

-- 3. Second derivatives: gradients are computed with ops, so an outer tape
--    records them. Nested tapes by hand, then with mf.grad.
--    At v = 3, f' = 3 v^2 = 27 and f'' = 6 v = 18 differ, so the output
--    shows which is which (at v = 2 both are 12).
local v = mf.Variable(3.0)
local outer = mf.GradientTape()
local inner = mf.GradientTape()
local f = v * v * v                      -- f = v^3
local df = inner:gradient(f, v)          -- 3 v^2 = 27
local d2f = outer:gradient(df, v)        -- 6 v = 18
print("f = v^3 at v = 3:  f' =", df:item(), " f'' =", d2f:item())
local cube = function(u) return u ^ 3 end
print("mf.grad(mf.grad(cube))(3) =", mf.grad(mf.grad(cube))(3):item())

-- mf.grad works on whole tensors too (the gradient of a sum is elementwise),
-- so tanh and its first three derivatives over a grid are four calls.
local xs = mf.linspace(-3, 3, 121)
local sum_tanh = function(u) return mf.reduce_sum(mf.tanh(u)) end
local d1 = mf.grad(sum_tanh)
local d2 = mf.grad(function(u) return mf.reduce_sum(d1(u)) end)
local d3 = mf.grad(function(u) return mf.reduce_sum(d2(u)) end)
mf.plot({mf.tanh(xs), d1(xs), d2(xs), d3(xs)},
        {title = "tanh and its derivatives on [-3, 3]", height = 10, x = xs,
         labels = {"tanh", "d1", "d2", "d3"}})   -- x = xs: the axis shows x, not steps
-- At 0: tanh' = 1 - tanh^2 = 1 and tanh''' = -2.
print("tanh'(0) =", d1(mf.zeros{1})[1], " tanh'''(0) =", d3(mf.zeros{1})[1])

-- 4. custom_gradient: f returns its value and a function from dy to dx.
--    Here a "clipped identity": the forward is identity, the gradient is
--    clipped to [-1, 1] (a common trick for straight-through estimators).
local clipped_identity = mf.custom_gradient(function(u)
  return mf.identity(u), function(dy) return mf.clip_by_value(dy, -1, 1) end
end)
local p = mf.Variable(mf.tensor{1, 2, 3})
local t5 = mf.GradientTape()
local out = mf.reduce_sum(clipped_identity(p) * 10)
print("custom gradient (10 clipped to 1):") print(t5:gradient(out, p))
print("second derivative f''(3) =", d2f:item())
