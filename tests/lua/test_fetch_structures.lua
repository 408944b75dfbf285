-- test_fetch_structures.lua — sess:run fetches as TensorFlow 1.x's: a table
-- with string keys comes back with the same keys, arrays and nested tables
-- keep their structure, an operation's place holds nil.
local T = dofile("tests/lua/harness.lua")

local g = mf.Graph()
local x, w, l, dw, init
g:as_default(function()
  x = mf.placeholder("float32", {2}, "x")
  w = mf.Variable(mf.tensor{1, 3}, {name = "w"})
  l = mf.reduce_sum(x * w)
  dw = mf.gradients(l, {w})[1]
  init = mf.global_variables_initializer()
end)
local sess = mf.Session(g)
sess:run(init)
local feeds = {[x] = {1, 2}}

T.test("named fetches come back under their names", function()
  local r = sess:run({loss = l, grad = dw}, feeds)
  T.eq(r.loss, 7)
  T.eq(r.grad, {1, 2})
  local n = 0
  for _ in pairs(r) do n = n + 1 end
  T.eq(n, 2)
end)

T.test("arrays and nested tables keep their structure", function()
  local r = sess:run({l, {dw, {inner = l}}, named = {l, "w:0"}}, feeds)
  T.eq(r[1], 7)
  T.eq(r[2][1], {1, 2})
  T.eq(r[2][2].inner, 7)
  T.eq(r.named[1], 7)
  T.eq(r.named[2], {1, 3})
end)

T.test("an operation's place is nil, the rest stay in place", function()
  local r = sess:run({l, init, dw}, feeds)
  T.eq(r[1], 7)
  T.eq(r[2], nil)
  T.eq(r[3], {1, 2})
  local k = sess:run({step = init, value = l}, feeds)
  T.eq(k.step, nil)
  T.eq(k.value, 7)
end)

T.test("a single fetch and a flat array behave as before", function()
  T.eq(sess:run(l, feeds), 7)
  local r = sess:run({l, dw}, feeds)
  T.eq(#r, 2)
  T.eq(r[2], {1, 2})
end)

T.test("the schedule still follows the results", function()
  local r, sched = sess:run({a = l}, feeds, {schedule = true})
  T.eq(r.a, 7)
  T.ok(#sched > 0)
end)

T.test("bad leaves and cycles are errors", function()
  T.raises(function() sess:run({loss = l, bad = 3}, feeds) end, "must be a graph tensor")
  local c = {l}
  c[2] = c
  T.raises(function() sess:run(c, feeds) end, "nested deeper than")
end)

T.done()
