-- kahn_trace.lua — how a Session runs a graph: Kahn's algorithm with
-- in-degrees. Prints each node's in-degree, then the executor's own trace:
-- which node ran at each step and what the ready queue held afterwards.
-- Finally draws the graph with Graphviz when 'dot' is installed, and shows
-- the same run with fusion (help "fusion"): chains of elementwise ops as one
-- node each.
-- Run: build/moonflow scripts/kahn_trace.lua [picture.svg]

-- Every node on its own first: fusion off (it is on by default).
mf.config{fusion = false}

-- 1. A small graph with a diamond: x feeds two branches that meet again.
local g = mf.Graph()
local x, out
g:as_default(function()
  x = mf.placeholder("float32", {-1, 2}, "x")
  local w1 = mf.tensor{{1, -1}, {2, 0.5}}     -- constants become Const nodes
  local w2 = mf.tensor{{0.5}, {-1}}           -- (named where they are first used)
  local h = mf.name_scope("left", function() return mf.relu(mf.matmul(x, w1)) end)
  local k = mf.name_scope("right", function() return mf.tanh(mf.matmul(x, w2)) end)
  out = mf.reduce_sum(h * k + h)
end)
print(g)

-- 2. In-degrees. A node's in-degree is the number of its input edges that
--    come from nodes which must run (a fed placeholder is already known, so
--    its edges do not count). Nodes of in-degree 0 start in the ready queue.
local fed = {[x.name:match("^[^:]+")] = true}
print("\nthe placeholder x is fed: its value is given to sess:run, so it never runs and its")
print("edges do not count in the in-degrees (the schedule below marks it 'fed, not run')")
print(string.format("\n%-18s %-9s %s", "node", "indegree", "inputs"))
for _, node in ipairs(g:nodes()) do
  if not fed[node.name] then
    local d = 0
    for _, input in ipairs(node.inputs) do
      if not fed[input:match("^[^:]+")] then d = d + 1 end
    end
    d = d + #node.control_inputs
    print(string.format("%-18s %-9d %s", node.name, d, table.concat(node.inputs, ", ")))
  end
end

-- 3. Run with {schedule = true}: the executor records, for each step, the node
--    it took from the front of the ready queue, that node's starting in-degree
--    and the queue after the node ran (consumers whose in-degree fell to 0
--    joined it).
local sess = mf.Session(g)
local value, schedule = sess:run(out, {[x] = mf.tensor{{1, 2}, {-1, 0.5}}}, {schedule = true})
print("\nstep by step:")
for _, s in ipairs(schedule) do
  print(string.format("  step %d: run %-14s (%s, in-degree %d)   ready queue: [%s]",
                      s.step, s.name, s.op, s.indegree, table.concat(s.ready, ", ")))
end
print("\nthe same as a table:")
print(schedule)

-- 4. The picture: nodes as boxes, edges as arrows (needs Graphviz).
local picture = arg and arg[1] or "kahn_trace.svg"
if os.execute("command -v dot > /dev/null 2>&1") then
  g:render(picture)
  print("graph drawn to " .. picture)
else
  print("Graphviz is not installed (apt-get install graphviz): skipping the picture")
end
print(string.format("nodes run = %d, out = %.4f", #schedule, value:item()))

-- 5. Fusion on (the default): h * k + h and its sum run as one fused node,
--    one pass over memory instead of three; the values are the same bits.
mf.config{fusion = true}
local fused_value, fused = sess:run(out, {[x] = mf.tensor{{1, 2}, {-1, 0.5}}}, {schedule = true})
print("\nwith fusion:")
print(fused)
print(string.format("with fusion: nodes run = %d, same value: %s", #fused,
                    tostring(fused_value:item() == value:item())))
