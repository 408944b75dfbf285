-- test_binder_features.lua — what the schema binder (repl/lmf_op.c) reads
-- from an op's descriptor beyond plain attributes (core/op.h): 1-based
-- index inputs, dtype groups among the inputs, attributes given among the
-- inputs (a conv backprop's sizes), a shape given as a table or a tensor
-- (also a symbolic one), {before, after} pairs, and per-axis lists of
-- 1-based positions (slice's begin and size). Each with its failures: the
-- message names the function and says what was expected and what came.
local T = dofile("tests/lua/harness.lua")

local function m23() return mf.tensor{{1, 2, 3}, {4, 5, 6}} end

T.test("1-based index inputs: tables, tensors, graph placeholders", function()
  local a = m23()
  T.eq(mf.gather(a, {{2}, {1}}), {{{4, 5, 6}}, {{1, 2, 3}}})
  T.eq(mf.gather(a, mf.tensor({3}, "int32"), 2), {{3}, {6}})
  T.eq(mf.one_hot(mf.tensor({3, 1}, "int32"), 3), {{0, 0, 1}, {1, 0, 0}})
  -- symbolic indices are shifted by an op of the graph, when it runs
  local g = mf.Graph()
  local ix, y = g:as_default(function()
    local ix = mf.placeholder("int64", {-1})
    return ix, mf.gather(mf.tensor{10, 20, 30}, ix)
  end)
  T.eq(mf.Session(g):run(y, {[ix] = mf.tensor({3, 1}, "int64")}), {30, 10})
  -- failures: 0, out of range, not integers, wrong Lua type
  T.raises(mf.gather, "gather: index 0 out of range for axis 1 of size 2 (indices are 1-based",
           a, {0})
  T.raises(mf.gather, "gather: index 3 out of range for axis 1 of size 2", a, {3})
  T.raises(mf.gather, "gather: index -1 out of range", a, {-1})
  T.raises(mf.gather, "gather: indices must be int32 or int64, got float64 (convert with "
           .. "mf.cast)", a, mf.tensor({1}, "float64"))
  T.raises(mf.one_hot, "one_hot: indices must be int32 or int64, got bool",
           mf.tensor{true}, 2)
  T.raises(mf.one_hot, "one_hot: expected a number (got boolean) at data[1]", {true}, 2)
  T.raises(mf.gather, "bad argument #2 to 'gather' (mf.Tensor expected, got nil)", a, nil, 1)
end)

T.test("dtype groups: where's numbers take x's or y's dtype, not the condition's", function()
  local c = mf.tensor{true, false}
  local y = mf.where(c, 1, mf.tensor({5, 6}, "float64"))
  T.eq(y, {1, 6})
  T.eq(y.dtype, "float64")
  T.eq(mf.where(c, mf.tensor({1, 2}, "int32"), 0).dtype, "int32")
  T.eq(mf.where(c, 1, 2).dtype, "float32")      -- not bool: cond gives no dtype
  T.eq(mf.where({true, false}, 1, 2), {1, 2})  -- a Lua condition converts to bool
  T.raises(function() return mf.where({1, 0}, 1, 2) end,
           "where: condition must be bool, got float32")
  T.raises(function() return c:where(mf.tensor({1, 2}, "int32"), mf.tensor{1, 2}) end,
           "where: dtypes differ")
end)

T.test("an attribute among the inputs: a conv backprop's sizes", function()
  local w, dy = mf.ones{2, 2, 1, 1}, mf.ones{1, 2, 2, 1}
  local want = {{{{1}, {2}, {1}}, {{2}, {4}, {2}}, {{1}, {2}, {1}}}}
  T.eq(mf.nn.conv2d_backprop_input({1, 3, 3, 1}, w, dy, 1, "VALID"), want)
  T.eq(mf.nn.conv2d_backprop_input(mf.tensor({1, 3, 3, 1}, "int64"), w, dy, 1, "VALID"), want)
  T.eq(mf.nn.conv2d_backprop_input(nil, w, dy, 1, "VALID", {input_sizes = {1, 3, 3, 1}}), want)
  T.raises(mf.nn.conv2d_backprop_input, "bad argument #1 to 'conv2d_backprop_input' "
           .. "(input_sizes expected: a shape (an array of integers); called as "
           .. "conv2d_backprop_input(input_sizes, filter, out_backprop, strides, padding "
           .. "[, {options}]))", nil, w, dy, 1, "VALID")
  T.raises(mf.nn.conv2d_backprop_input, "conv2d_backprop_input: input_sizes given twice (as "
           .. "argument 1 and as an option)", {1, 3, 3, 1}, w, dy, 1, "VALID",
           {input_sizes = {1, 3, 3, 1}})
  T.raises(mf.nn.conv2d_backprop_input, "conv2d_backprop_input: input_sizes entry 2 must be "
           .. ">= 0, got -3", {1, -3, 3, 1}, w, dy, 1, "VALID")
  T.raises(mf.nn.conv2d_backprop_input, "conv2d_backprop_input: input_sizes must be an array "
           .. "of 4 integers (or a 1-D integer tensor of 4), got 5 entries", {1, 3, 3, 1, 1}, w,
           dy, 1, "VALID")
  T.raises(mf.nn.conv2d_backprop_filter, "bad argument #3 to 'conv2d_backprop_filter' "
           .. "(mf.Tensor expected, got nil)", mf.ones{1, 3, 3, 1}, {2, 2, 1, 1}, nil, 1, "VALID")
  T.raises(mf.nn.depthwise_conv2d_backprop_filter, "depthwise_conv2d_backprop_filter: "
           .. "filter_sizes entry 1 must be an integer, got string", mf.ones{1, 3, 3, 1},
           {"2", 2, 1, 1}, dy, 1, "VALID")
end)

T.test("a shape as a table, a number, a tensor or a symbolic tensor", function()
  local a = m23()
  T.eq(mf.reshape(a, {3, 2}).shape, {3, 2})
  T.eq(mf.reshape(mf.tensor{{7}}, 1).shape, {1})
  T.eq(mf.broadcast_to(mf.tensor{1, 2}, mf.tensor({2, 2}, "int32")), {{1, 2}, {1, 2}})
  local g = mf.Graph()
  local x, r, b = g:as_default(function()
    local x = mf.placeholder("float32", {-1, 2})
    return x, mf.reshape(mf.range(0, 4), mf.shape(x)), mf.broadcast_to(mf.tensor{1, 2},
                                                                         mf.shape(x))
  end)
  local out = mf.Session(g):run({r, b}, {[x] = mf.zeros{2, 2}})
  T.eq(out[1], {{0, 1}, {2, 3}})
  T.eq(out[2], {{1, 2}, {1, 2}})
  T.raises(mf.reshape, "reshape: shape entry 1 must be >= 0 (or -1, inferred), got -2", a,
           {-2, 3})
  T.raises(mf.broadcast_to, "broadcast_to: shape entry 1 must be >= 0, got -1", a, {-1, 3})
  T.raises(mf.reshape, "bad argument #2 to 'reshape' (shape must be an integer or an array of "
           .. "integers, got string)", a, "2x3")
  T.raises(mf.broadcast_to, "broadcast_to: shape as a tensor must be 1-D int32 or int64",
           a, mf.tensor{2, 3})
end)

T.test("pairs: pad's {before, after} per axis", function()
  local a = mf.tensor{{1, 2}, {3, 4}}
  T.eq(mf.pad(a, {{0, 1}, {1, 0}}, {mode = "constant"}), {{0, 1, 2}, {0, 3, 4}, {0, 0, 0}})
  T.eq(mf.pad(a, {paddings = {{1, 0}, {0, 0}}, constant_values = 5}),
       {{5, 5}, {1, 2}, {3, 4}})
  T.raises(mf.pad, "pad: paddings entry 2 must be a pair of integers, got string", a,
           {{0, 0}, {1, "x"}})
  T.raises(mf.pad, "pad: paddings entry 2 must be a pair of integers, got 1.5", a,
           {{0, 0}, {1, 1.5}})
  T.raises(mf.pad, "pad: paddings entry 1 must be a {before, after} pair, got 3 entries", a,
           {{0, 0, 0}, {1, 1}})
  T.raises(mf.pad, "pad: paddings entry 1 must be a {before, after} pair, got number", a, {1, 2})
  T.raises(mf.pad, "bad argument #2 to 'pad' (paddings must be an array of {before, after} "
           .. "pairs, got string)", a, "SAME")
  T.raises(mf.pad, "pad: paddings has 9 pairs, at most 8 are supported", a,
           {{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}})
  T.raises(mf.pad, "bad argument #2 to 'pad' (paddings expected", a)
end)

T.test("per-axis 1-based positions: slice's begin and size", function()
  local a = m23()
  T.eq(mf.slice(a, {2, 2}), {{5, 6}})                  -- size left out: to the end
  T.eq(mf.slice(a, {1, 2}, {size = {1, -1}}), {{2, 3}})
  T.eq(a:slice({begin = {2, 3}, size = {1, 1}}), {{6}})
  T.raises(mf.slice, "slice: begin 0 out of range for axis 2 of size 3 (begin is 1-based: 1..3)",
           a, {1, 0})
  T.raises(mf.slice, "slice: begin -1 out of range for axis 1 of size 2", a, {-1, 1})
  T.raises(mf.slice, "slice: begin 4 out of range for axis 1 of size 2", a, {4, 1})
  T.raises(mf.slice, "slice: begin and size need 2 entries each (one per axis), got 2 and 3",
           a, {1, 1}, {1, 1, 1})
  T.raises(mf.slice, "slice: begin and size need 2 entries each (one per axis), got 3 and 2",
           a, {1, 1, 1})
  T.raises(mf.slice, "bad argument #2 to 'slice' (begin expected", a)
  T.raises(mf.slice, "slice: begin given twice (as argument 2 and as an option)", a, {1, 1},
           {begin = {1, 1}})
  T.raises(mf.slice, "slice: size entry 1 must be an integer, got string", a, {1, 1}, {"a", 1})
end)

T.test("keyword inputs: the cross-entropies' {labels =, logits =}", function()
  local nn = mf.nn
  local lg = mf.tensor({{1, 2, 3}, {1, 1, 1}}, "float64")
  local want = nn.softmax_cross_entropy_with_logits(mf.tensor({{0, 0, 1}, {1, 0, 0}}, "float64"),
                                                    lg)
  -- a Lua table of labels takes the logits' float dtype
  T.eq(nn.softmax_cross_entropy_with_logits{labels = {{0, 0, 1}, {1, 0, 0}}, logits = lg}, want)
  T.eq(nn.softmax_cross_entropy_with_logits{labels = {{0, 1}, {0, 0}, {1, 0}},
                                            logits = mf.transpose(lg), dim = 1}, want, 1e-12)
  T.eq(nn.sparse_softmax_cross_entropy_with_logits({3, 1}, lg, {axis = -1}), want, 1e-12)
  T.raises(nn.softmax_cross_entropy_with_logits, "softmax_cross_entropy_with_logits: missing "
           .. "'logits' (call it as softmax_cross_entropy_with_logits{labels = ..., logits = "
           .. "...})", {labels = {{1, 0}}})
  T.raises(nn.softmax_cross_entropy_with_logits, "softmax_cross_entropy_with_logits: with "
           .. "{labels = ..., logits = ...} the options go in that table, got a 2nd argument "
           .. "(number)", {labels = {{1, 0}}, logits = lg}, 2)
  T.raises(nn.sparse_softmax_cross_entropy_with_logits, "sparse_softmax_cross_entropy_with_"
           .. "logits: unknown option 'label' (known: labels, logits, axis, dim)",
           {label = {1}, logits = lg})
  T.raises(nn.softmax_cross_entropy_with_logits, "softmax_cross_entropy_with_logits: give axis "
           .. "or its alias dim (TensorFlow 1.x), not both", {labels = {{0, 0, 1}, {1, 0, 0}},
           logits = lg, axis = 2, dim = 2})
  T.raises(nn.sparse_softmax_cross_entropy_with_logits, "sparse_softmax_cross_entropy_with_"
           .. "logits: expected {labels = ..., logits = ...} or (labels, logits), got no value "
           .. "as argument #2", {3, 1})
  T.raises(nn.sparse_softmax_cross_entropy_with_logits, "axis 3 out of range for rank 2",
           {3, 1}, lg, 3)
end)

T.test("help shows the generated signatures of the moved ops", function()
  local help_text = T.help_text
  local function has(f, s)
    local text = help_text(f)
    T.ok(text:gsub("%s+", " "):find(s, 1, true), s .. " not in:\n" .. text)
  end
  has(mf.slice, "mf.slice(x, begin [, size]) or x:slice(...)")
  has(mf.slice, "begin: array of 1-based positions, one per axis, required")
  has(mf.slice, "size: array of integers, one per axis, default -1 per axis")
  has(mf.pad, "mf.pad(x, paddings [, constant_values] [, {mode}])")
  has(mf.pad, "paddings: array of {before, after} pairs, one per axis, required")
  has(mf.reshape, "shape (array of integers, one -1 inferred) or a 1-D integer tensor")
  has(mf.where, "mf.where(cond, x, y) or cond:where(...)")
  has(mf.nn.conv2d_backprop_input, "mf.nn.conv2d_backprop_input(input_sizes, filter, "
      .. "out_backprop, strides, padding [, {data_format, dilations, algorithm}])")
  has(mf.one_hot, "mf.one_hot(indices, depth [, {on_value, off_value, dtype}]) or "
      .. "indices:one_hot(...)")
  has(mf.nn.softmax_cross_entropy_with_logits,
      "mf.nn.softmax_cross_entropy_with_logits(labels, logits [, axis])")
end)

T.done()
