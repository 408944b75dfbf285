-- Cross-entropies as TensorFlow's (issue 16): labels broadcast against logits, a class axis,
-- TensorFlow 2's positional (labels, logits) order, and the swapped order refused.
local T = dofile("tests/lua/harness.lua")
local nn = mf.nn
local logits = mf.tensor{{1, 2, 3}, {3, 1, 0}}

T.test("dense labels broadcast against the logits", function()
  local one = mf.tensor{{0, 0, 1}}
  T.eq(nn.softmax_cross_entropy_with_logits{labels = one, logits = logits},
       nn.softmax_cross_entropy_with_logits{labels = mf.tile(one, {2, 1}), logits = logits}, 1e-7)
  T.eq(nn.sigmoid_cross_entropy_with_logits{labels = mf.tensor{1.0, 0.0, 1.0}, logits = logits},
       nn.sigmoid_cross_entropy_with_logits{labels = mf.tensor{{1, 0, 1}, {1, 0, 1}},
                                            logits = logits}, 1e-7)
  T.raises(function()
    nn.softmax_cross_entropy_with_logits{labels = mf.ones{3, 2}, logits = logits}
  end, "labels and logits must have the same shape")
end)

T.test("{axis}: the classes along another axis (1-based)", function()
  local labels = mf.tensor{{0, 1, 0}, {1, 0, 1}} / mf.tensor{1, 1, 1}
  local along1 = nn.softmax_cross_entropy_with_logits{labels = mf.transpose(labels),
                                                      logits = mf.transpose(logits), axis = 1}
  T.eq(along1, nn.softmax_cross_entropy_with_logits{labels = labels, logits = logits}, 1e-6)
  local sparse = nn.sparse_softmax_cross_entropy_with_logits{labels = {2, 1},
                                                              logits = mf.transpose(logits),
                                                              axis = 1}
  T.eq(sparse, nn.sparse_softmax_cross_entropy_with_logits{labels = {2, 1}, logits = logits},
       1e-6)
  T.raises(function()
    nn.softmax_cross_entropy_with_logits{labels = labels, logits = logits, axis = 3}
  end, "softmax_cross_entropy_with_logits")
end)

T.test("TensorFlow 2's positional (labels, logits) order; the swapped order is refused", function()
  local labels = mf.tensor{{0, 0, 1}, {1, 0, 0}}
  T.eq(nn.softmax_cross_entropy_with_logits(labels, logits),
       nn.softmax_cross_entropy_with_logits{labels = labels, logits = logits})
  T.eq(nn.softmax_cross_entropy_with_logits(mf.transpose(labels), mf.transpose(logits), 1),
       nn.softmax_cross_entropy_with_logits{labels = labels, logits = logits}, 1e-6)
  T.eq(nn.sparse_softmax_cross_entropy_with_logits({3, 1}, logits),
       nn.softmax_cross_entropy_with_logits(labels, logits), 1e-6)
  T.raises(function() nn.sparse_softmax_cross_entropy_with_logits(logits, {3, 1}) end,
           "the order is (labels, logits)")
  T.raises(function() nn.softmax_cross_entropy_with_logits(labels) end,
           "expected {labels = ..., logits = ...} or (labels, logits)")
  T.raises(function() nn.softmax_cross_entropy_with_logits(labels, logits, {axes = 1}) end,
           "unknown option 'axes'")
end)

T.test("with unknown dims in a graph", function()
  local g = mf.Graph()
  local x, y
  g:as_default(function()
    x = mf.placeholder("float32", {-1, 3})
    y = nn.softmax_cross_entropy_with_logits{labels = mf.tensor{{0, 0, 1}}, logits = x}
  end)
  T.eq(mf.Session(g):run(y, {[x] = logits}),
       nn.softmax_cross_entropy_with_logits{labels = mf.tensor{{0, 0, 1}}, logits = logits})
end)

T.done()
