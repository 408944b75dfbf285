-- test_help_objects.lua — help(obj) works for every object (optimizer,
-- graph, session, tape, Variable, Dataset, Saver, traced function, profile
-- report, a layer-like Lua object) and lists its methods; help "Saver" and
-- help "conv2d_backprop_input" find entries without the prefix; the concept
-- topics explain the idea with an example.
local T = dofile("tests/lua/harness.lua")

local function help_text(x)
  local lines = {}
  local old = print
  print = function(...) lines[#lines + 1] = table.concat({...}, "\t") end
  local ok, err = pcall(help, x)
  print = old
  assert(ok, err)
  return table.concat(lines, "\n")
end

local function lists(text, ...)
  for _, m in ipairs({...}) do
    T.ok(text:find(m, 1, true), "'" .. m .. "' missing in:\n" .. text)
  end
end

T.test("help(model): public methods and properties apart, no private helper", function()
  local m = mf.layers.Sequential{mf.layers.Dense(2, {input_shape = {3}})}
  local text = help_text(m)
  lists(text, "mf.layers.Sequential methods (x:name(...); help(x.name) shows one):\n" ..
              "  add, add_weight, build, count_params, evaluate, fit, load, load_state_dict, " ..
              "predict, save, state_dict, summary\n" ..
              "properties (x.name):\n" ..
              "  built, layers, name, non_trainable_variables, trainable, trainable_variables, " ..
              "variables")
  for _, private in ipairs{"apply_", "describe_", "layers_list_", "weights_", "check_rank",
                           "known_dim", "label"} do
    T.ok(not text:find(private, 1, true), private .. " shown:\n" .. text)
  end
  lists(help_text(mf.layers.Dense(3)), "mf.layers.Dense methods", "count_params",
        "properties (x.name):\n  bias_init, built, kernel_init, name, non_trainable_variables, " ..
        "trainable, trainable_variables, units, use_bias, variables")
end)

T.test("every layer has its own help page: options and an example", function()
  local dense, embedding = help_text(mf.layers.Dense), help_text(mf.layers.Embedding)
  T.ok(dense ~= embedding, dense)
  lists(dense, "mf.layers.Dense(units [, {activation, use_bias = true, kernel_initializer",
        "Example:", "d.kernel.shape")
  lists(embedding, "mf.layers.Embedding(input_dim, output_dim [, {embeddings_initializer",
        "mask_zero = false", "e.embeddings.shape")
  -- every layer class of mf.layers (a capitalised function), found by its
  -- name too (help "LSTM"); test_shell.lua runs their examples
  local n = 0
  for name, f in pairs(mf.layers) do
    if type(f) == "function" and name:match("^%u") then
      n = n + 1
      local text = help_text(f)
      T.ok(text:find("^mf%.layers%." .. name .. "[%({]"), name .. ":\n" .. text)
      T.ok(text:find("\n  Example:\n", 1, true), name .. ":\n" .. text)
      T.eq(help_text(name), text, nil, "help \"" .. name .. "\"")
    end
  end
  T.ok(n >= 18, "layers found: " .. n)
  -- the layer's page heads help(layer) for an instance too
  lists(help_text(mf.layers.Embedding(4, 2)), "mf.layers.Embedding(input_dim",
        "mf.layers.Embedding methods")
end)

T.test("help(obj) for every object class lists its methods", function()
  local g = mf.Graph()
  local v = mf.Variable(1.0, {name = "v"})
  local opt = mf.train.AdamOptimizer(0.1)
  lists(help_text(opt), "mf.train.Optimizer methods", "minimize", "compute_gradients",
        "apply_gradients", "get_slot")
  lists(help_text(g), "mf.Graph methods", "as_default", "nodes", "to_dot")
  lists(help_text(mf.Session(g)), "mf.Session methods", "run", "close")
  lists(help_text(mf.GradientTape()), "mf.GradientTape methods", "gradient", "explain",
        "watch")
  lists(help_text(v), "mf.Variable methods", "assign", "assign_add", "read_value")
  lists(help_text(mf.data.Dataset.from_tensor_slices(mf.ones{2})), "mf.data.Dataset methods",
        "batch", "shuffle", "iter")
  lists(help_text(mf.train.Saver({v})), "mf.train.Saver methods", "save", "restore")
  lists(help_text(mf.trace(function(x) return x end)), "methods", "graph")
  lists(help_text(mf.profile(function() return mf.ones{2} + 1 end)), "methods", "gemms",
        "save_trace")
  -- any Lua object with a class (a layer of a library) gets its methods listed
  local Dense = {}
  Dense.__index = Dense
  Dense.__name = "mylib.Dense"
  function Dense.call(self, x) return x end
  function Dense.get_weights(self) return {} end
  lists(help_text(setmetatable({}, Dense)), "mylib.Dense methods", "call, get_weights")
end)

T.test("help finds entries without their prefix", function()
  lists(help_text("Saver"), "mf.train.Saver(")
  lists(help_text("conv2d_backprop_input"), "mf.nn.conv2d_backprop_input(")
  lists(help_text("mf.nn.conv2d_backprop_input"), "mf.nn.conv2d_backprop_input(")
  lists(help_text("GradientDescentOptimizer"), "GradientDescentOptimizer")
end)

T.test("concept topics explain the idea with a runnable example", function()
  for _, topic in ipairs({"broadcasting", "padding", "layouts", "executor", "slots",
                          "gradients", "equality"}) do
    local text = help_text(topic)
    T.ok(text:find("Example:", 1, true) and text:find("-->", 1, true), topic .. ":\n" .. text)
    T.ok(text:find('help "' .. topic .. '"', 1, true), text)
  end
  lists(help_text("concepts"), "broadcasting", "padding", "layouts", "executor", "slots")
  lists(help_text(mf.gradients), "mf.gradients(ys, xs")   -- the function, not the concept
  lists(help_text("gradients"), "Reverse-mode autodiff")
end)

T.done()
