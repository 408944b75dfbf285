-- test_roll.lua — mf.roll (TensorFlow's tf.roll): values and gradients
-- against PyTorch's torch.roll on the same data, a strided (transposed)
-- input, graph mode, and the bad calls.
local T = dofile("tests/lua/harness.lua")

-- x = torch.arange(1, 25, dtype=torch.float64).reshape(2, 3, 4)
local function x24() return mf.reshape(mf.range(1, 25, "float64"), {2, 3, 4}) end

T.test("values as torch.roll's", function()
  -- torch.roll(x, (1, -2), (0, 2))
  T.eq(mf.roll(x24(), {1, -2}, {1, 3}),
       {{{15, 16, 13, 14}, {19, 20, 17, 18}, {23, 24, 21, 22}},
        {{3, 4, 1, 2}, {7, 8, 5, 6}, {11, 12, 9, 10}}})
  -- torch.roll(x, 4, 1) (a method call)
  T.eq(x24():roll(4, 2),
       {{{9, 10, 11, 12}, {1, 2, 3, 4}, {5, 6, 7, 8}},
        {{21, 22, 23, 24}, {13, 14, 15, 16}, {17, 18, 19, 20}}})
  -- torch.roll(x, -5, 2): a shift past the size wraps
  T.eq(mf.roll(x24(), -5, -1),
       {{{2, 3, 4, 1}, {6, 7, 8, 5}, {10, 11, 12, 9}},
        {{14, 15, 16, 13}, {18, 19, 20, 17}, {22, 23, 24, 21}}})
  -- torch.roll(torch.tensor([[1, 2, 3], [4, 5, 6]]).T, 1, 0): a strided input
  T.eq(mf.roll(mf.transpose(mf.tensor{{1, 2, 3}, {4, 5, 6}}), 1, 1), {{3, 6}, {1, 4}, {2, 5}})
  T.eq(mf.roll(mf.tensor({1, 2, 3}, "int32"), 1, 1), {3, 1, 2})
  T.eq(mf.roll(mf.zeros{0, 3}, 1, 2).shape, {0, 3})
end)

T.test("gradient as torch's, finite differences, graph mode", function()
  -- y = x24 with requires_grad; (torch.roll(y, (1, -2), (0, 2)) * w).sum().backward(),
  -- w = torch.arange(24.).reshape(2, 3, 4)
  local x = x24()
  local w = mf.reshape(mf.range(0, 24, "float64"), {2, 3, 4})
  local g = mf.grad(function(t) return mf.reduce_sum(mf.roll(t, {1, -2}, {1, 3}) * w) end)(x)
  T.eq(g, {{{14, 15, 12, 13}, {18, 19, 16, 17}, {22, 23, 20, 21}},
           {{2, 3, 0, 1}, {6, 7, 4, 5}, {10, 11, 8, 9}}})
  T.ok(mf.test.gradcheck(function(t) return mf.reduce_sum(mf.roll(t, {1, 3}, {1, 2}) * w) end,
                         {x}))
  local f = mf.trace(function(t) return mf.roll(t, {1, -2}, {1, 3}) end)
  T.eq(f(x), mf.roll(x, {1, -2}, {1, 3}))
end)

T.test("bad calls name roll", function()
  T.raises(mf.roll, "roll: shift and axis must have the same length, got 2 shifts and 1 axes",
           mf.tensor{1, 2}, {1, 2}, 1)
  T.raises(mf.roll, "roll: axis 3 out of range for rank 1", mf.tensor{1, 2}, 1, 3)
  T.raises(mf.roll, "roll: axis 2 is listed twice", mf.zeros{2, 2}, {1, 1}, {2, 2})
  T.raises(mf.roll, "bad argument #3 to 'roll'", mf.tensor{1, 2}, 1)
  T.raises(mf.roll, "roll: unknown option 'bogus'", mf.tensor{1, 2}, 1, 1, {bogus = true})
end)
T.done()
