-- test_adamw_exclude.lua — mf.train.AdamW's exclude_from_weight_decay (Keras 3's:
-- Variables and name patterns that get no decay) against torch.optim.AdamW with
-- those parameters in a weight_decay = 0 group (tests/lua/data/gen_adamw_torch.py
-- printed tests/lua/data/adamw_torch.lua; eps = 0, where PyTorch's and
-- TensorFlow's epsilon placements agree), eagerly, in a graph and inside
-- mf.trace; the option's and the method's checks.
local T = dofile("tests/lua/harness.lua")
local ref = dofile("tests/lua/data/adamw_torch.lua")

local function make_vars()
  local vs = {}
  for i, p in ipairs(ref.params) do
    vs[i] = mf.Variable(mf.tensor(p.init, "float64"), {name = p.name})
  end
  return vs
end

local function loss_of(vs)
  local total
  for i, p in ipairs(ref.params) do
    local v = vs[i]
    local l = mf.reduce_sum(mf.tensor(p.k, "float64") * v * v * 0.5 + mf.tensor(p.a, "float64") * v)
    total = total and total + l or l
  end
  return total
end

-- the bias by Variable, the norm by name pattern: the two spellings Keras 3 takes
local function make_opt(vs)
  return mf.train.AdamW(ref.lr, {weight_decay = ref.weight_decay, beta1 = ref.beta1,
                                 beta2 = ref.beta2, epsilon = 0,
                                 exclude_from_weight_decay = {vs[2], "^norm/"}})
end

local function check(read, s, what)
  for i, p in ipairs(ref.params) do
    T.eq(read(i), p.traj[s], 1e-12, what .. " " .. p.name .. " step " .. s)
  end
end

T.test("eager steps equal torch.optim.AdamW with the excluded in a no-decay group", function()
  local vs = make_vars()
  local opt = make_opt(vs)
  for s = 1, ref.steps do
    opt:minimize(function() return loss_of(vs) end)
    check(function(i) return vs[i] end, s, "eager")
  end
end)

T.test("graph mode: the same trajectory", function()
  local g, sess, train, vs = mf.Graph(), nil, nil, nil
  g:as_default(function()
    vs = make_vars()
    train = make_opt(vs):minimize(loss_of(vs))
    sess = mf.Session(g)
    sess:run(mf.global_variables_initializer())
  end)
  for s = 1, ref.steps do
    sess:run(train)
    check(function(i) return sess:run(vs[i]) end, s, "graph")
  end
end)

T.test("inside mf.trace: the same trajectory", function()
  local vs = make_vars()
  local opt = make_opt(vs)
  local step = mf.trace(function() opt:minimize(function() return loss_of(vs) end) end)
  for s = 1, ref.steps do
    step()
    check(function(i) return vs[i] end, s, "traced")
  end
end)

T.test("a Variable equals itself through the pairs' own boxes (==)", function()
  local vs = make_vars()
  local gv = mf.train.AdamOptimizer(0.1):compute_gradients(function() return loss_of(vs) end)
  T.ok(not rawequal(gv[2][2], vs[2]) and gv[2][2] == vs[2], "the same Variable")
  T.ok(gv[2][2] ~= vs[1] and vs[1] ~= mf.tensor(ref.params[1].init, "float64"))
end)

T.test("the method adds exclusions; bad entries name the function", function()
  local vs = make_vars()
  local opt = mf.train.AdamW(ref.lr, {weight_decay = ref.weight_decay, beta1 = ref.beta1,
                                      beta2 = ref.beta2, epsilon = 0})
  opt:exclude_from_weight_decay{var_list = {vs[2]}, var_names = {"gamma"}}
  for s = 1, 2 do
    opt:minimize(function() return loss_of(vs) end)
    check(function(i) return vs[i] end, s, "method")
  end
  T.raises(function() mf.train.AdamW(0.1, {exclude_from_weight_decay = "bias"}) end,
           "AdamW: exclude_from_weight_decay must be an array of Variables and name patterns, "
           .. "got string")
  T.raises(function() mf.train.AdamW(0.1, {exclude_from_weight_decay = {42}}) end,
           "AdamW: exclude_from_weight_decay[1] must be a Variable or a name pattern, got number")
  T.raises(function() opt:exclude_from_weight_decay{var_names = {"[bias"}} end,
           "exclude_from_weight_decay: var_names[1] is not a valid Lua pattern")
  T.raises(function() opt:exclude_from_weight_decay{var_list = {"w"}} end,
           "exclude_from_weight_decay: var_list[1] must be a Variable, got string")
  T.raises(function() opt:exclude_from_weight_decay{bogus = 1} end,
           "exclude_from_weight_decay: unknown option 'bogus'")
end)

T.done()
