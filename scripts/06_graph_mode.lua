-- 06_graph_mode.lua — graph mode: build a graph once with placeholders, then
-- run it in a Session, and watch the in-degree executor's schedule.
-- Run: build/moonflow scripts/06_graph_mode.lua

-- 1. Build. Inside g:as_default, ops do not compute: they add nodes and
--    return symbolic tensors with names ("node:index") and shapes (-1 = unknown).
local g = mf.Graph()
local x, w, y, loss
g:as_default(function()
  x = mf.placeholder("float32", {-1, 3}, "x")         -- a batch of any size
  w = mf.tensor{{1}, {2}, {3}}                        -- a constant, captured when used
  mf.name_scope("model", function()
    y = mf.relu(mf.matmul(x, w) - 4)
  end)
  loss = mf.reduce_mean(mf.square(y))
end)
print("symbolic tensors:", x.name, y.name, loss.name)
print("shape of y:", table.concat(y.shape, ","))
print(g)                                              -- a readable listing of the nodes

-- 2. Run. Feeds map placeholders to values; only what the fetches need runs.
local sess = mf.Session(g)
local batch = mf.tensor{{1, 1, 1}, {2, 0, 1}, {0, 0, 1}}
local y_val, loss_val = table.unpack(sess:run({y, loss}, {[x] = batch}))
print("y =") print(y_val)
print("loss =", loss_val:item())

-- 3. The schedule: Kahn's algorithm. A node is ready when all its inputs are
--    computed (in-degree 0); the executor runs ready nodes in order and each
--    run lowers its consumers' in-degrees.
local _, schedule = sess:run(loss, {[x] = batch}, {schedule = true})
print("schedule:")
print(schedule)

-- 4. The same graph as Graphviz text (g:render(path) draws it when dot is installed).
local dot = g:to_dot()
print(string.format("to_dot: %d lines of Graphviz", select(2, dot:gsub("\n", ""))))
sess:close()
print(string.format("graph loss = %.4f", loss_val:item()))
