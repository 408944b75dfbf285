-- test_train_edge.lua — optimizers on edge cases a user meets: a variable
-- with no elements, and graph variables named inside a name scope.
local T = dofile("tests/lua/harness.lua")

local OPTS = {"GradientDescentOptimizer", "MomentumOptimizer", "AdagradOptimizer",
              "RMSPropOptimizer", "AdamOptimizer"}
local function make(name) return mf.train[name](0.1, name == "MomentumOptimizer" and 0.9 or nil) end

T.test("a variable with no elements trains (nothing to update), eager and graph", function()
  for _, name in ipairs(OPTS) do
    local w, b = mf.Variable(mf.zeros{2, 0}), mf.Variable(mf.ones{2})
    make(name):minimize(function() return mf.reduce_sum(w) + mf.reduce_sum(b * b) end)
    T.eq(w.shape[2], 0, nil, name)
    local eager_b = b:value()[1]
    T.ok(eager_b < 1, name .. ": b moved")
    local g = mf.Graph()
    g:as_default(function()
      local gw = mf.Variable(mf.zeros{2, 0}, {name = "gw"})
      local gb = mf.Variable(mf.ones{2}, {name = "gb"})
      local op = make(name):minimize(mf.reduce_sum(gw) + mf.reduce_sum(gb * gb))
      local s = mf.Session(g)
      s:run(mf.global_variables_initializer())
      s:run(op)
      T.eq(s:run(gb)[1], eager_b, 0, name .. ": graph equals eager")
    end)
  end
end)

T.test("graph minimize of variables made inside a name scope", function()
  for _, name in ipairs(OPTS) do
    local g = mf.Graph()
    g:as_default(function()
      mf.name_scope("layer", function()
        local w = mf.Variable(mf.ones{2}, {name = "w"})
        T.eq(w.name, "layer/w", nil, "the variable's name")
        local op = make(name):minimize(mf.reduce_sum(w * w))
        local s = mf.Session(g)
        s:run(mf.global_variables_initializer())
        s:run(op)
        T.ok(s:run(w)[1] < 1, name .. ": w moved")
      end)
    end)
  end
end)

T.done()
