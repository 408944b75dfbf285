-- test_shape.lua — the shape functions of the mf API: concat, stack, split,
-- unstack, slice, gather, reverse, tile, pad, broadcast_to, one_hot,
-- identity, stop_gradient, size, rank, shape; values, methods, 1-based
-- axes and indices, and error messages.
local T = dofile("tests/lua/harness.lua")

local function m23() return mf.tensor{{1, 2, 3}, {4, 5, 6}} end

T.test("concat", function()
  local a = m23()
  T.eq(mf.concat({a, a}, 1), {{1, 2, 3}, {4, 5, 6}, {1, 2, 3}, {4, 5, 6}})
  T.eq(mf.concat({a, {{7}, {8}}}, 2), {{1, 2, 3, 7}, {4, 5, 6, 8}})
  T.eq(mf.concat({a, a}, -1).shape, {2, 6})
  T.eq(mf.concat({a, a}, {axis = 2}).shape, {2, 6})
  T.eq(mf.concat({a}).shape, {2, 3})
  T.raises(mf.concat, "concat: list entry 2 has shape (2,) but entry 1 has (2,3)",
           {a, mf.tensor{1, 2}}, 1)
  T.raises(mf.concat, "concat: list entry 3 has dtype int32 but entry 1 has float32",
           {a, a, mf.tensor({{1}, {2}}, "int32")}, 2)
  T.raises(mf.concat, "concat: axis 3 out of range for rank 2 (axes are 1-based", {a, a}, 3)
  T.raises(mf.concat, "concat: expected a non-empty array of tensors", {}, 1)
  T.raises(mf.concat, "concat: list entry 2 is string", {a, "x"}, 1)
  T.raises(mf.concat, "scalars cannot be concatenated", {mf.tensor(1), mf.tensor(2)})
end)

T.test("stack", function()
  local x, y = mf.tensor{1, 2}, mf.tensor{3, 4}
  T.eq(mf.stack({x, y}), {{1, 2}, {3, 4}})
  T.eq(mf.stack({x, y}, 2), {{1, 3}, {2, 4}})
  T.eq(mf.stack({x, y}, -1), {{1, 3}, {2, 4}})
  T.eq(mf.stack({mf.tensor(1), 2, 3}), {1, 2, 3})
  T.raises(mf.stack, "stack: list entry 2 has shape (3,) but entry 1 has (2,)",
           {x, mf.tensor{1, 2, 3}})
  T.raises(mf.stack, "stack: axis 4 out of range for rank 1 (axes are 1-based: 1..2",
           {x, y}, 4)
end)

T.test("split", function()
  local a = m23()
  local parts = mf.split(a, 3, 2)
  T.eq(#parts, 3)
  T.eq(parts[2], {{2}, {5}})
  local p = a:split({-1, 1}, 2)
  T.eq(p[1], {{1, 2}, {4, 5}})
  T.eq(p[2], {{3}, {6}})
  T.eq(#mf.split(a, 2), 2)
  T.eq(mf.split(a, 2)[2], {{4, 5, 6}})
  T.raises(mf.split, "split: 2 parts do not evenly divide axis 2 of size 3", a, 2, 2)
  T.raises(mf.split, "split: sizes add up to 4 but axis 2 has size 3", a, {2, 2}, 2)
  T.raises(mf.split, "split: sizes must be >= 0 with at most one -1", a, {-1, -1, 5}, 2)
  T.raises(mf.split, "split: expected 1..2147483647 parts, got 0", a, 0)
  T.raises(mf.split, "split: expected 1..2147483647 parts, got 4294967296", a, 2^32)
  T.raises(mf.split, "split: the number of parts must be an integer, got 1.5", a, 1.5)
  T.raises(mf.split, "split: sizes entry 2 must be an integer, got 1.5", a, {2, 1.5}, 2)
  T.raises(mf.split, "split: sizes entry 1 must be an integer, got string", a, {"1", 2}, 2)
  T.raises(mf.split, "bad argument #2 to 'split' (number of parts or array of sizes", a, "2")
  T.raises(mf.split, "split: axis 3 out of range for rank 2", a, 1, 3)
end)

T.test("unstack", function()
  local a = m23()
  local rows = mf.unstack(a)
  T.eq(#rows, 2)
  T.eq(rows[2], {4, 5, 6})
  local cols = a:unstack(2)
  T.eq(#cols, 3)
  T.eq(cols[3], {3, 6})
  T.eq(cols[3].shape, {2})
  T.raises(mf.unstack, "unstack: a scalar (rank 0) cannot be unstacked", mf.tensor(1))
  T.raises(mf.unstack, "unstack: axis -3 out of range for rank 2", a, -3)
end)

T.test("slice", function()
  local a = m23()
  T.eq(mf.slice(a, {1, 2}, {2, 2}), {{2, 3}, {5, 6}})
  T.eq(a:slice({2, 1}, {-1, -1}), {{4, 5, 6}})
  T.eq(a:slice({1, 3}), {{3}, {6}})
  T.eq(mf.slice(mf.tensor{1, 2, 3, 4}, 2, 2), {2, 3})
  T.raises(mf.slice, "slice: begin 4 out of range for axis 2 of size 3 (begin is 1-based: 1..3)",
           a, {1, 4}, {1, 1})
  T.raises(mf.slice, "slice: begin 0 out of range for axis 1 of size 2 (begin is 1-based",
           a, {0, 1}, {1, 1})
  T.raises(mf.slice, "slice: begin 2 with size 3 runs past the end of axis 2 of size 3",
           a, {1, 2}, {1, 3})
  T.raises(mf.slice, "slice: begin and size need 2 entries each (one per axis), got 1 and 2",
           a, {1}, {1, 1})
  T.raises(mf.slice, "slice: begin entry 2 must be an integer, got string", a, {1, "x"})
end)

T.test("gather", function()
  local a = m23()
  T.eq(mf.gather(a, {2, 1}), {{4, 5, 6}, {1, 2, 3}})
  T.eq(a:gather({3, 1}, 2), {{3, 1}, {6, 4}})
  T.eq(a:gather(mf.tensor({{1, 1}, {2, 2}}, "int32"), 1).shape, {2, 2, 3})
  T.eq(a:gather(mf.tensor({3}, "int64"), -1), {{3}, {6}})
  T.eq(a:gather(2), {4, 5, 6})
  T.raises(mf.gather, "gather: index 3 out of range for axis 1 of size 2 (indices are "
           .. "1-based: 1..2)", a, {1, 3})
  T.raises(mf.gather, "gather: index 0 out of range for axis 2 of size 3 (indices are 1-based",
           a, {0}, 2)
  T.raises(mf.gather, "gather: indices must be int32 or int64, got float32", a, mf.tensor{1})
  T.raises(mf.gather, "gather: axis 3 out of range", a, {1}, 3)
  T.raises(mf.gather, "gather: cannot gather from a scalar", mf.tensor(1), {1})
end)

T.test("reverse", function()
  local a = m23()
  T.eq(mf.reverse(a, 1), {{4, 5, 6}, {1, 2, 3}})
  T.eq(a:reverse({1, -1}), {{6, 5, 4}, {3, 2, 1}})
  T.eq(a:reverse({}), {{1, 2, 3}, {4, 5, 6}})
  T.raises(mf.reverse, "reverse: axis 2 is listed twice", a, {2, -1})
  T.raises(mf.reverse, "reverse: axis 3 out of range for rank 2", a, 3)
end)

T.test("tile", function()
  local a = mf.tensor{{1, 2}}
  T.eq(mf.tile(a, {2, 2}), {{1, 2, 1, 2}, {1, 2, 1, 2}})
  T.eq(a:tile({1, 0}).shape, {1, 0})
  T.raises(mf.tile, "tile: expected 2 multiples (one per axis), got 1", a, {2})
  T.raises(mf.tile, "tile: multiples must be >= 0, got -1 for axis 1", a, {-1, 1})
end)

T.test("pad", function()
  local a = mf.tensor{{1, 2}, {3, 4}}
  T.eq(mf.pad(a, {{1, 0}, {0, 1}}), {{0, 0, 0}, {1, 2, 0}, {3, 4, 0}})
  T.eq(a:pad({{0, 0}, {1, 1}}, 9), {{9, 1, 2, 9}, {9, 3, 4, 9}})
  T.eq(a:pad({{0, 0}, {1, 0}}, {constant_values = -1}), {{-1, 1, 2}, {-1, 3, 4}})
  T.eq(mf.pad(mf.tensor({1, 2}, "int32"), {{1, 1}}, 7).dtype, "int32")
  T.raises(mf.pad, "pad: expected 2 {before, after} pairs (one per axis)", a, {{1, 1}})
  T.raises(mf.pad, "pad: paddings must be >= 0, got {-1, 0} for axis 2", a, {{0, 0}, {-1, 0}})
  T.raises(mf.pad, "pad: paddings entry 1 must be a {before, after} pair", a, {1, 2})
  T.raises(mf.pad, "pad: option 'mode' must be \"CONSTANT\", got REFLECT", a, {{0, 0}, {0, 0}},
           {mode = "REFLECT"})
end)

T.test("broadcast_to", function()
  T.eq(mf.broadcast_to(mf.tensor{1, 2, 3}, {2, 3}), {{1, 2, 3}, {1, 2, 3}})
  T.eq(mf.tensor{{1}, {2}}:broadcast_to({2, 2}), {{1, 1}, {2, 2}})
  T.eq(mf.broadcast_to(5, {2}), {5, 5})
  -- one value over contiguous rows (a Sum's gradient), every dtype
  for _, dt in ipairs{"float32", "float64", "int32", "int64", "uint8"} do
    T.eq(mf.broadcast_to(mf.tensor({{7}}, dt), {3, 37}):totable()[3][37], 7, nil, dt)
    T.eq(mf.broadcast_to(mf.tensor({{7}, {9}}, dt), {2, 37}):totable()[2], mf.fill({37}, 9))
  end
  T.eq(mf.broadcast_to(mf.tensor({{true}}, "bool"), {2, 33}):totable()[2][33], true)
  local big = mf.broadcast_to(mf.tensor({-0.0}, "float64"), {1000})
  T.eq(1 / mf.reduce_min(big):item(), -math.huge, nil, "the sign of zero copied")
  T.raises(mf.broadcast_to, "broadcast_to: cannot broadcast shape (3,) to (2,2)",
           mf.tensor{1, 2, 3}, {2, 2})
end)

T.test("one_hot", function()
  local o = mf.one_hot({1, 3, 2}, 3)
  T.eq(o, {{1, 0, 0}, {0, 0, 1}, {0, 1, 0}})
  T.eq(o.dtype, "float32")
  local labels = mf.tensor({2, 1}, "int64")
  local oi = labels:one_hot(2, {on_value = 5, off_value = -1, dtype = "int32"})
  T.eq(oi, {{-1, 5}, {5, -1}})
  T.eq(oi.dtype, "int32")
  T.eq(mf.one_hot(2, 3), {0, 1, 0})
  T.raises(mf.one_hot, "one_hot: label 4 out of range (classes are 1-based: 1..3)", {1, 4}, 3)
  T.raises(mf.one_hot, "one_hot: label 0 out of range (classes are 1-based: 1..3)", {0}, 3)
  T.raises(mf.one_hot, "one_hot: label 1 out of range (depth is 0: there are no classes)", {1}, 0)
  T.raises(mf.gather, "gather: index 1 out of range (axis 1 is empty)", mf.zeros{0}, {1})
  T.raises(mf.one_hot, "one_hot: depth must be >= 0, got -2", {1}, -2)
  T.raises(mf.one_hot, "one_hot: indices must be int32 or int64, got float32", mf.tensor{1}, 2)
  T.raises(mf.one_hot, "one_hot: option 'dtype' must be a dtype name (float32, float64, int32, "
           .. "int64, bool, uint8, float16 or bfloat16), got int8", {1}, 2, {dtype = "int8"})
end)

T.test("identity, stop_gradient, size, rank, shape", function()
  local a = m23()
  T.eq(mf.identity(a), {{1, 2, 3}, {4, 5, 6}})
  T.eq(a:stop_gradient(), {{1, 2, 3}, {4, 5, 6}})
  T.eq(mf.identity(3), 3)
  local s, r, sh = mf.size(a), a:rank(), mf.shape(a)
  T.eq(s, 6)
  T.eq(s.dtype, "int32")
  T.eq(r, 2)
  T.eq(sh, {2, 3})
  T.eq(sh.dtype, "int32")
  T.eq(a.shape, {2, 3}) -- the property stays a Lua array
  T.eq(mf.shape(mf.tensor(1)).shape, {0})
end)

T.test("strided (view) inputs", function()
  local a = mf.tensor{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}
  local v = a:slice({1, 2}, {3, 2}) -- a strided view
  T.eq(mf.concat({v, v}, 1):slice({4, 1}, {1, -1}), {{2, 3}})
  T.eq(v:reverse(2), {{3, 2}, {6, 5}, {9, 8}})
  T.eq(v:gather({2}, 2), {{3}, {6}, {9}})
  T.eq(v:tile({1, 2})[3], {8, 9, 8, 9})
  T.eq(a[2]:pad({{1, 1}}), {0, 4, 5, 6, 0})
  T.eq(mf.unstack(v, 2)[1], {2, 5, 8})
end)

T.test("t[i]: 1-based rows and elements, and its errors", function()
  local t = mf.tensor{{1, 2}, {3, 4}, {5, 6}}
  T.eq(t[-1], {5, 6}); T.eq(t[1][2], 2); T.eq(t[2.0][-2], 3)
  T.raises(function() return t[0] end, "index: index 0 out of range for axis 1 of size 3 " ..
           "(indices are 1-based: 1..3, or -3..-1)")
  T.raises(function() return t[4] end, "index: index 4 out of range")
  T.raises(function() return t[1.5] end, "index: an index must be an integer, got 1.5")
  T.raises(function() return t[1e300] end, "index: an index must be an integer, got 1e+300")
  T.raises(function() return mf.tensor(3)[1] end, "index: a scalar cannot be indexed")
  -- an axis at the end of Lua's integers (n + axis overflowed before the range check)
  T.raises(mf.reduce_sum, "axis 9223372036854775807 out of range", t, math.maxinteger)
  T.raises(mf.expand_dims, "axis -9223372036854775808 out of range", t, math.mininteger)
  local g = mf.Graph()
  g:as_default(function()
    local x = mf.placeholder("float32", {2})
    T.eq(x[1].shape, {})       -- a graph node (StridedSlice), no longer an error
    T.raises(function() return x:totable() end,
             "totable: a symbolic (graph) tensor has no values yet; run it in a Session")
  end)
  T.raises(function() return t:item() end,
           "item: expected a tensor with one element, got shape (3,2)")
  T.eq(mf.tensor{{7}}:item(), 7)
end)

T.done()
