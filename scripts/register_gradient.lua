-- register_gradient.lua — TensorFlow's RegisterGradient, as the seed notes
-- teach it: every op type has a gradient function in a registry; we register
-- our own under a name and tell moonflow, with gradient_override_map, to use
-- it for the Square ops created inside a block. Then we look at the tape and
-- at the graph to see it used.
-- Run: build/moonflow scripts/register_gradient.lua

-- 1. The op table: what the registry is keyed by. x ^ 2 and mf.square(x)
--    are both the op type "Square"; help(mf.square) says how its gradient
--    is computed (dx = dy * 2x).
for _, op in ipairs(mf.ops()) do
  if op.name == "Square" then
    print(string.format("op %s (mf.%s): %d input, differentiable: %s", op.name, op.api,
                        op.inputs, tostring(op.differentiable)))
  end
end

-- 2. Register a gradient for Square that is wrong on purpose, so we can see
--    it being used: 3x instead of 2x. It receives the op (type, inputs,
--    outputs) and the gradient flowing in, dy, and returns one gradient per
--    input. It is written with ops, so it works on tapes and in graphs.
mf.RegisterGradient("ThreeXSquare", function(op, dy)
  local x = op.inputs[1]
  return dy * 3 * x
end)

-- 3. Eager mode: the override is chosen when the op is created.
local x = mf.tensor{1.0, 2.0, 3.0}
local tape = mf.GradientTape{persistent = true}
tape:watch(x)
local y_own = mf.reduce_sum(x ^ 2)
local y_ours = mf.gradient_override_map({Square = "ThreeXSquare"}, function()
  return mf.reduce_sum(x ^ 2)
end)
print("\nthe tape (the second Square is marked):")
print(tape)
print("own gradient 2x:        ", table.concat(tape:gradient(y_own, x):totable(), " "))
print("registered gradient 3x: ", table.concat(tape:gradient(y_ours, x):totable(), " "))

-- 4. Graph mode: mf.gradients builds the registered gradient's ops into the
--    graph, under gradients/ (look for the constant 3).
local g = mf.Graph()
local p, dp
g:as_default(function()
  p = mf.placeholder("float32", {3}, "p")
  local loss = mf.gradient_override_map({Square = "ThreeXSquare"}, function()
    return mf.reduce_sum(mf.square(p))
  end)
  dp = mf.gradients(loss, {p})[1]
end)
print("\nthe graph, forward and backward:")
print(g)
local sess = mf.Session(g)
print("graph gradient 3x:      ", table.concat(sess:run(dp, {[p] = x}):totable(), " "))
