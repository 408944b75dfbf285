-- test_options.lua — every public function that takes an options table
-- rejects a key it does not know, with one message naming the function, the
-- key and the known keys ("reduce_sum: unknown option 'axes' (known: axis,
-- keepdims, keep_dims)"), so a typo is never silently ignored; the known
-- keys still work; TensorFlow 1.x's keep_dims is an alias of keepdims.
local T = dofile("tests/lua/harness.lua")

local t = mf.tensor({{1, 2}, {3, 4}})

-- f(...) raises "<fname>: unknown option '<key>' (known: <known>)".
local function unknown(fname, key, known, f, ...)
  T.raises(f, string.format("%s: unknown option '%s' (known: %s)", fname, key, known), ...)
end

T.test("reductions and arg-reductions", function()
  local known = "axis, keepdims, keep_dims"
  for _, name in ipairs({"reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
                         "reduce_prod"}) do
    unknown(name, "axes", known, mf[name], t, {axes = 1})
    unknown(name, "keepdim", known, t[name], t, {keepdim = true})
    -- an axis given positionally and as an option
    T.raises(mf[name], name .. ": axis given twice (as argument 2 and as an option)", t, 1,
             {axis = 2})
  end
  T.raises(mf.reduce_sum,
           "reduce_sum: the array given as axis cannot hold options (got 'keepdims'): "
           .. "give {axis = {...}, keepdims = ...}", t, {1, keepdims = true})
  unknown("argmax", "axes", "axis", mf.argmax, t, {axes = 1})
  unknown("argmin", "dim", "axis", mf.argmin, t, {dim = 1})
end)

T.test("keep_dims is TensorFlow 1.x's spelling of keepdims", function()
  T.eq(mf.reduce_sum(t, {axis = 1, keep_dims = true}), {{4, 6}})
  T.eq(mf.reduce_sum(t, {axis = 2, keepdims = true}), {{3}, {7}})
  T.eq(mf.reduce_mean(t, 2, {keep_dims = true}), {{1.5}, {3.5}})
  T.eq(mf.reduce_max(t, {keep_dims = false}).shape, {})
  T.raises(mf.reduce_sum, "reduce_sum: give keepdims or its alias keep_dims (TensorFlow 1.x), "
           .. "not both", t, {keepdims = true, keep_dims = true})
  T.raises(mf.reduce_sum, "reduce_sum: option 'keep_dims' must be a boolean, got number",
           t, {keep_dims = 1})
  T.raises(mf.reduce_sum, "reduce_sum: option 'keepdims' must be a boolean, got string",
           t, 1, {keepdims = "yes"})
end)

T.test("clipping", function()
  unknown("clip_by_norm", "axis", "axes", mf.clip_by_norm, t, 1, {axis = 1})
  unknown("clip_by_global_norm", "usenorm", "use_norm, nonfinite", mf.clip_by_global_norm,
          {t}, 1, {usenorm = 2})
  -- the known options still work
  local c, n = mf.clip_by_global_norm({t}, 1, {use_norm = mf.tensor(30)})
  T.eq(n:item(), 30)
  T.eq(c[1], {{1 / 30, 2 / 30}, {3 / 30, 4 / 30}}, 1e-6)
  T.eq(mf.clip_by_norm(mf.tensor({3, 4}), 1, {axes = {1}}), {0.6, 0.8}, 1e-6)
end)

T.test("shape, linear algebra, creation, random", function()
  unknown("concat", "axes", "axis", mf.concat, {t, t}, {axes = 1})
  unknown("stack", "dim", "axis", mf.stack, {t, t}, {dim = 1})
  unknown("split", "axes", "axis", mf.split, t, 2, {axes = 1})
  unknown("unstack", "num", "axis", mf.unstack, t, {num = 2})
  unknown("gather", "axes", "axis", mf.gather, t, {1}, {axes = 1})
  unknown("pad", "constant_value", "paddings, constant_values, mode", mf.pad, t, {{1, 1}, {0, 0}},
          {constant_value = 1})
  unknown("one_hot", "on", "depth, on_value, off_value, dtype", mf.one_hot, {1, 2}, 3, {on = 2})
  T.raises(mf.one_hot, "bad argument #3 to 'one_hot' (no value expected", {1}, 2, 5)
  unknown("matmul", "transpose_c", "transpose_a, adjoint_a, transpose_b, adjoint_b", mf.matmul,
          t, t, {transpose_c = true})
  unknown("transpose", "axes", "perm", mf.transpose, t, {axes = {2, 1}})
  unknown("constant", "shpe", "dtype, shape, name", mf.constant, 1, {shpe = {2}})
  unknown("random.normal", "std", "mean, stddev, dtype, seed", mf.random.normal, {2},
          {std = 1})
  unknown("glorot_uniform", "sed", "seed", mf.initializers.glorot_uniform, {sed = 1})
  unknown("zeros", "value", "none", mf.initializers.zeros, {value = 1})
  unknown("Variable", "nme", "name, trainable, dtype", mf.Variable, 1, {nme = "v"})
  unknown("set_printoptions", "precison", "precision, threshold, edgeitems, linewidth",
          mf.set_printoptions, {precison = 3})
end)

T.test("mf.nn", function()
  unknown("dropout", "sed", "seed, rate, keep_prob", mf.nn.dropout, t, 0.5, {sed = 1})
  unknown("softmax", "dim", "axis", mf.nn.softmax, t, {dim = 1})
  unknown("log_softmax", "dim", "axis", mf.nn.log_softmax, t, {dim = 1})
  unknown("softmax_cross_entropy_with_logits", "label", "labels, logits, axis, dim",
          mf.nn.softmax_cross_entropy_with_logits, {label = t, logits = t})
  unknown("sparse_softmax_cross_entropy_with_logits", "axes", "labels, logits, axis, dim",
          mf.nn.sparse_softmax_cross_entropy_with_logits, {labels = {1, 2}, logits = t, axes = 1})
  unknown("bias_add", "format", "data_format", mf.nn.bias_add, t, {1, 2}, {format = "NCHW"})
  local x, f = mf.zeros({1, 3, 3, 1}), mf.zeros({2, 2, 1, 1})
  unknown("conv2d", "dilation", "strides, padding, data_format, dilations, algorithm",
          mf.nn.conv2d, x, f,
          1, "SAME",
          {dilation = 2})
  -- a seeded dropout is still reproducible
  T.eq(mf.nn.dropout(mf.ones({8}), 0.5, {seed = 3}), mf.nn.dropout(mf.ones({8}), 0.5, {seed = 3}))
end)

T.test("training: optimizers, minimize, compute/apply, exponential_decay", function()
  unknown("AdamOptimizer", "bta1", "beta1, beta2, epsilon, epsilon_placement, name",
          mf.train.AdamOptimizer, 0.1, {bta1 = 0.8})
  local w = mf.Variable({1.0, 2.0}, {name = "w"})
  local function loss() return mf.reduce_sum(w * w) end
  local opt = mf.train.GradientDescentOptimizer(0.1)
  unknown("minimize", "varlist", "var_list, global_step, nonfinite", opt.minimize, opt, loss,
          {varlist = {w}})
  unknown("minimize", "globalstep", "var_list, global_step, nonfinite", opt.minimize, opt, loss,
          {globalstep = mf.train.global_step()})
  unknown("compute_gradients", "global_step", "var_list", opt.compute_gradients, opt, loss,
          {global_step = mf.train.global_step()})
  local gv = opt:compute_gradients(loss, {var_list = {w}})
  unknown("apply_gradients", "var_list", "global_step, nonfinite", opt.apply_gradients, opt, gv,
          {var_list = {w}})
  T.eq(w:value(), {1, 2})   -- nothing was applied by the refused calls
  opt:minimize(loss, {var_list = {w}})
  T.eq(w:value(), {0.8, 1.6}, 1e-6)
  unknown("exponential_decay", "stair_case", "staircase", mf.train.exponential_decay, 0.1, 1,
          10, 0.5, {stair_case = true})
  T.eq(mf.train.exponential_decay(0.1, 15, 10, 0.5, {staircase = true})():item(), 0.05, 1e-7)
end)

T.test("an error of the learning-rate function names the call that ran it", function()
  local w = mf.Variable({1.0}, {name = "w"})
  local opt = mf.train.GradientDescentOptimizer(function() error("no rate today") end)
  T.raises(opt.minimize, "minimize: learning_rate function: ", opt,
           function() return mf.reduce_sum(w * w) end)
  T.raises(opt.minimize, "no rate today", opt, function() return mf.reduce_sum(w * w) end)
  local bad = mf.train.GradientDescentOptimizer(function() return "fast" end)
  T.raises(bad.apply_gradients, "apply_gradients: the learning_rate function must return a "
           .. "number or a scalar tensor, got string", bad, {{mf.tensor({1}), w}})
  T.eq(w:value(), {1})
end)

T.test("graph mode: gradients, sess:run, Saver", function()
  local g = mf.Graph()
  local x, y
  g:as_default(function()
    x = mf.placeholder("float32", {2}, "x")
    y = mf.reduce_sum(x * x)
  end)
  unknown("gradients", "grad_y", "grad_ys", mf.gradients, y, x, {grad_y = 2})
  local gx = mf.gradients(y, x, {grad_ys = 2})[1]
  local sess = mf.Session(g)
  T.eq(sess:run(gx, {[x] = {1, 2}}), {4, 8})
  unknown("run", "shedule", "schedule", sess.run, sess, y, {[x] = {1, 2}}, {shedule = true})
  local w = mf.Variable({1.0}, {name = "w"})
  unknown("Saver", "optimizer", "var_list, optimizers", mf.train.Saver, {w}, {optimizer = {}})
  local s = mf.train.Saver({w})
  local p = os.tmpname()
  s:save(p)
  unknown("Saver.restore", "strikt", "strict", s.restore, s, p, {strikt = true})
  T.eq(#s:restore(p, {strict = true}), 0)
  os.remove(p)
end)

T.test("data, plot, progress", function()
  local p = os.tmpname()
  local f = assert(io.open(p, "w"))
  f:write("a,b\n1,2\n")
  f:close()
  unknown("read_csv", "headers", "header, columns, dtype", mf.data.read_csv, p,
          {headers = true})
  T.eq(mf.data.read_csv(p, {header = true}), {{1, 2}})
  os.remove(p)
  local ds = mf.data.Dataset.from_tensor_slices(mf.tensor({1, 2, 3}))
  unknown("batch", "drop", "drop_remainder", ds.batch, ds, 2, {drop = true})
  unknown("shuffle", "sed", "reshuffle_each_iteration, seed", ds.shuffle, ds, 2, {sed = 1})
  unknown("plot", "widht", "title, width, height, file, labels, print, color, x", mf.plot, {1, 2},
          {widht = 3})
  unknown("progress", "totl", "total, epochs, interval, tty, draw", mf.progress, {totl = 10})
  T.ok(tostring(mf.progress({total = 10, tty = false})):find("0/10", 1, true))
end)

-- Issue #35: "SAME\0x" was taken as SAME (C stops at the NUL). A string
-- that picks a choice or a dtype is refused when it holds a NUL byte, and
-- the message shows the byte.
T.test("a choice or dtype name with a NUL byte is refused", function()
  local x, w = mf.ones{1, 5, 5, 2}, mf.ones{3, 3, 2, 4}
  T.raises(mf.nn.conv2d, "conv2d' (padding must be \"VALID\" or \"SAME\", got SAME\\0x)",
           x, w, 1, "SAME\0x")
  T.raises(mf.nn.max_pool, "got VALID\\0", x, 2, 2, "VALID\0")
  T.raises(mf.nn.conv2d, "option 'algorithm' must be \"auto\", \"im2col\", \"winograd\" or \"direct\", "
           .. "got direct\\0", x, w, 1, "SAME", {algorithm = "direct\0"})
  T.raises(mf.config, "conv_algorithm must be \"auto\", \"im2col\", \"winograd\" or \"direct\", "
           .. "got direct\\0", {conv_algorithm = "direct\0"})
  T.raises(mf.cast, "got float64\\0x", t, "float64\0x")
  T.raises(mf.zeros, "unknown dtype 'int32\\0'", {2}, "int32\0")
  T.raises(mf.constant, "option 'dtype' must be a dtype name", 1, {dtype = "int64\0"})
  T.raises(mf.clip_by_global_norm, "nonfinite must be \"nan\" or \"error\", got error\\0",
           {t}, 1, {nonfinite = "error\0"})
  local v = mf.Variable(mf.ones{2})
  local opt = mf.train.GradientDescentOptimizer(0.1)
  T.raises(function() opt:apply_gradients({{mf.ones{2}, v}}, {nonfinite = "skip\0"}) end,
           "skip\\0")
  local tape = mf.GradientTape()
  tape:watch(v)
  local y = mf.reduce_sum(v * 2)
  T.raises(function() tape:gradient(y, v, {unconnected = "zero\0"}) end,
           "option 'unconnected' must be \"none\" or \"zero\", got zero\\0")
  -- the names themselves still work
  T.eq(mf.nn.conv2d(x, w, 1, "SAME", {algorithm = "direct"}).shape, {1, 5, 5, 4})
  T.eq(mf.cast(t, "float64").dtype, "float64")
end)

T.test("a non-string key is reported too", function()
  unknown("reduce_sum", "true", "axis, keepdims, keep_dims", mf.reduce_sum, t,
          {axis = 1, [true] = 1})
  unknown("run", "1", "schedule", function()
    local g = mf.Graph()
    local c = g:as_default(function() return mf.constant(1) end)
    return mf.Session(g):run(c, nil, {[1] = true})
  end)
end)

T.test("tapes, mf.grad and gradcheck", function()
  unknown("GradientTape", "persistant", "persistent, watch_accessed_variables",
          mf.GradientTape, {persistant = true})
  local x = mf.tensor{1, 2}
  local tape = mf.GradientTape{persistent = true}
  tape:watch(x)
  local y = mf.reduce_sum(x * x)
  unknown("gradient", "unconected", "output_gradients, unconnected", tape.gradient, tape, y, x,
          {unconected = "zero"})
  local f = function(a) return mf.reduce_sum(a * a) end
  unknown("grad", "argnum", "argnums", mf.grad, f, {argnum = 1})
  unknown("value_and_grad", "argnum", "argnums", mf.value_and_grad, f, {argnum = 1})
  unknown("gradcheck", "epsilon", "eps, atol, rtol", mf.test.gradcheck, f,
          {mf.tensor({1, 2}, "float64")}, {epsilon = 1e-6})
end)

T.done()
