-- test_did_you_mean.lua — a missing field is an error that says what exists:
-- typos on tensors, Variables, graphs, sessions, optimizers, tapes and in mf
-- get "did you mean"; t[{1, 2}] and t.T say what to write instead;
-- mf.zeros(2, 3) hints mf.zeros{2, 3}; tensor == compares whole values.
local T = dofile("tests/lua/harness.lua")

T.test("tensor field typos and NumPy habits", function()
  local t = mf.ones{2, 3}
  T.raises(function() return t.shap end, "tensor: no field 'shap' (did you mean 'shape'?)")
  T.raises(function() return t:resahpe{3, 2} end, "no field 'resahpe' (did you mean 'reshape'?)")
  T.raises(function() return t.T end, "t:transpose()")
  T.raises(function() return t.numpy end, "t:totable()")
  T.raises(function() return t.qwertyuiop end, "tensor: no field 'qwertyuiop' (help(x)")
  T.eq(t[{1, 2}]:item(), 1)    -- Torch7's table index (help "indexing")
  T.raises(function() return t[true] end, "index: a tensor is indexed by an integer, a table")
  T.eq(t.shape, {2, 3})
  T.eq(t.name, nil)            -- an eager tensor has no name (graph tensors do)
  T.eq(t:reshape{3, 2}.shape, {3, 2})
end)

T.test("mf.X typos", function()
  T.raises(function() return mf.matmull end, "mf: no field 'matmull' (did you mean 'matmul'?)")
  T.raises(function() return mf.varaible end, "did you mean 'Variable'?")
  T.raises(function() return mf.zzzzzzzz end, "mf: no field 'zzzzzzzz' (help() lists the topics)")
  T.eq(rawget(mf, "zzzzzzzz"), nil)   -- probing without an error
  T.ok(mf.nn.relu)
end)

T.test("objects: Variable, graph, session, optimizer, tape, Saver, traced function", function()
  local v = mf.Variable(1.0, {name = "w"})
  T.raises(function() return v.nmae end, "Variable: no field 'nmae' (did you mean 'name'?)")
  T.raises(function() return v:asign(2) end, "did you mean 'assign'?")
  local g = mf.Graph()
  T.raises(function() return g:as_defualt() end,
           "Graph: no field 'as_defualt' (did you mean 'as_default'?)")
  local sess = mf.Session(g)
  T.raises(function() return sess:rnu() end, "Session: no field 'rnu' (did you mean 'run'?)")
  local opt = mf.train.AdamOptimizer(0.1)
  T.raises(function() return opt:minimze() end,
           "Optimizer: no field 'minimze' (did you mean 'minimize'?)")
  local tape = mf.GradientTape()
  T.raises(function() return tape:gradeint() end,
           "GradientTape: no field 'gradeint' (did you mean 'gradient'?)")
  local f = mf.trace(function(x) return x end)
  T.raises(function() return f:grpah() end, "no field 'grpah' (did you mean 'graph'?)")
  local saver = mf.train.Saver({v})
  T.raises(function() return saver:sav() end, "Saver: no field 'sav' (did you mean 'save'?)")
end)

T.test("mf.zeros(2, 3) hints mf.zeros{2, 3}", function()
  T.raises(function() return mf.zeros(2, 3) end, "zeros: the shape is one table: mf.zeros{2, 3}")
  T.raises(function() return mf.ones(4, 5) end, "mf.ones{4, 5}, not mf.ones(4, 5)")
  T.eq(mf.zeros(3).shape, {3})
end)

T.test("tensor == is whole-value equality (torch.equal); mf.equal is elementwise", function()
  T.ok(mf.tensor{1, 2} == mf.tensor{1, 2})
  T.ok(not (mf.tensor{1, 2} == mf.tensor{1, 3}))
  T.ok(not (mf.tensor{1, 2} == mf.tensor({1, 2}, "float64")), "dtypes differ")
  T.ok(not (mf.tensor{1, 2} == mf.tensor{{1, 2}}), "shapes differ")
  T.ok(not (mf.tensor(0 / 0) == mf.tensor(0 / 0)), "NaN")
  T.eq(mf.equal(mf.tensor{1, 2}, mf.tensor{1, 3}), {true, false})
  local v = mf.Variable({1, 2})
  T.ok(v == v and not (v == mf.Variable({1, 2})), "Variables compare as objects")
  local g = mf.Graph()
  g:as_default(function()
    local a = mf.placeholder("float32", {2})
    T.ok(a == a and not (a == mf.identity(a)), "graph tensors compare as objects")
  end)
end)

T.done()
