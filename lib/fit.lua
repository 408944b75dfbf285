-- fit.lua — model:fit / evaluate / predict (Keras's), for every model of
-- lib/model.lua. One training step records the model and the loss on a
-- GradientTape and applies the optimizer to model.trainable_variables; with
-- {trace = true} (the default, as Keras's fit uses tf.function) the step is
-- an mf.trace'd function, traced once per batch shape. Per-epoch results
-- go to the history table, the progress line and the callbacks:
--   callbacks = {fn | {on_train_begin, on_epoch_end, on_train_end}}, each
--   called as on_epoch_end(epoch, logs, model) with logs = {loss =, accuracy
--   =, val_loss =, val_accuracy =} (numbers), e.g. to write TensorBoard.
local mf, lib = ...
local fail, check_opts = lib.fail, lib.check_opts
local ModelBase = lib.ModelBase

local fit_keys = {loss = true, optimizer = true, epochs = true, metrics = true,
                  validation_data = true, verbose = true, callbacks = true, trace = true,
                  global_step = true, logdir = true, steps_per_epoch = true,
                  validation_steps = true, batch_size = true, validation_split = true,
                  shuffle = true}
-- the options of data given as tensors x, y (a Dataset is batched already)
local array_keys = {batch_size = true, validation_split = true, shuffle = true}
local INFINITE = -1   -- mf.data.INFINITE_CARDINALITY (lib/dataset.lua runs after this file)

-- fit, evaluate and predict check their argument count with lib.no_more, not
-- lib.publish_methods: its renaming would prefix the user's own errors (a
-- callback's, the loss's) with "fit:".
local no_more = lib.no_more

local function check_bool(fname, opts, key, default)
  local v = opts[key]
  if v == nil then return default end
  if type(v) ~= "boolean" then
    fail(fname, "option '%s' must be a boolean, got %s", key, type(v))
  end
  return v
end

-- Keras's verbose: 0 silent, 1 the progress line, 2 one line per epoch; "auto" is 1.
local function verbose_of(fname, v)
  if v == nil or v == "auto" then return 1 end
  if v == 0 or v == 1 or v == 2 then return math.tointeger(v) end
  fail(fname, "option 'verbose' must be 0, 1, 2 or \"auto\", got %s",
       type(v) == "string" and "'" .. v .. "'" or tostring(v))
end

-- The metrics option: an array of names and metric objects, as objects.
local function metrics_of(fname, ms)
  local out = {}
  if ms == nil then return out end
  if type(ms) ~= "table" or getmetatable(ms) ~= nil then
    fail(fname, "option 'metrics' must be an array such as {\"accuracy\"}, got %s", type(ms))
  end
  for k in pairs(ms) do
    if math.type(k) ~= "integer" or k < 1 or k > #ms then
      fail(fname, "option 'metrics' must be an array such as {\"accuracy\"}, got a table with "
           .. "the key '%s'", tostring(k))
    end
  end
  for i, m in ipairs(ms) do out[i] = lib.metric_obj(fname, m) end
  return out
end

local function optimizer_of(fname, opt)
  if opt == nil or opt == "adam" then return mf.train.AdamOptimizer(0.001) end
  if opt == "sgd" then return mf.train.GradientDescentOptimizer(0.01) end
  if type(opt) == "table" or type(opt) == "userdata" then
    local ok, apply = pcall(function() return opt.apply_gradients end)
    if ok and apply then return opt end
  end
  fail(fname, "option 'optimizer' must be an optimizer (mf.train.AdamOptimizer(0.001)), "
       .. "\"adam\" or \"sgd\", got %s", type(opt))
end

local function is_dataset(d)
  local mt = getmetatable(d)
  return mt ~= nil and mt == mf.data.Dataset
end

-- The callbacks as a list of tables with optional hooks.
local function callbacks_of(fname, cbs)
  local out = {}
  if cbs == nil then return out end
  if type(cbs) == "function" or (type(cbs) == "table" and (cbs.on_epoch_end
      or cbs.on_train_begin or cbs.on_train_end)) then cbs = {cbs} end
  if type(cbs) ~= "table" then
    fail(fname, "option 'callbacks' must be an array of functions or tables, got %s", type(cbs))
  end
  for i, cb in ipairs(cbs) do
    if type(cb) == "function" then cb = {on_epoch_end = cb} end
    if type(cb) ~= "table" then
      fail(fname, "callbacks[%d] must be a function or a table with on_epoch_end, got %s", i,
           type(cb))
    end
    out[i] = cb
  end
  return out
end

local function fire(cbs, hook, ...)
  for _, cb in ipairs(cbs) do
    if cb[hook] then cb[hook](...) end
  end
end

-- The step: forward under a tape, loss, gradients, update; returns the loss
-- and the outputs. 'state' holds the model, the loss function, optimizer.
local function train_step(state, x, y)
  local model = state.model
  -- closed also when the step raises (Ctrl-C in the forward pass): a tape
  -- left recording would record every later op
  local tape <close> = mf.GradientTape()
  local out = model(x, {training = true})
  local loss = state.loss_fn(y, out)
  tape:stop()
  local vars = model.trainable_variables
  local grads = tape:gradient(loss, vars)
  local gv = {}
  for i, v in ipairs(vars) do gv[i] = {grads[i], v} end
  state.optimizer:apply_gradients(gv, state.global_step and {global_step = state.global_step})
  return loss, out
end

-- The loss as a number; a loss function that gives no scalar is named as
-- the user's error (not as item's, at a line of lib/).
local function loss_number(fname, v)
  if type(v) == "number" then return v end
  if not lib.is_tensor(v) then
    fail(fname, "the loss function must return a scalar tensor, got %s", type(v))
  end
  if v:numel() ~= 1 then
    fail(fname, "the loss function must return a scalar, got shape %s (reduce it, e.g. "
         .. "mf.reduce_mean)", lib.shape_text(v.shape))
  end
  return v:item()
end

-- The batches of one epoch: a new pass of the Dataset, or with
-- steps_per_epoch that many batches of one iterator that goes on across
-- epochs (Keras's rule; a new pass each epoch when steps_per_epoch is one
-- pass). Running out before is an error (Keras warns and stops early).
local function epoch_batches(feed, epoch)
  if not feed.steps then return feed.ds:iter() end
  if not feed.it or feed.steps == feed.ds:cardinality() then feed.it = feed.ds:iter() end
  local k, it = 0, feed.it
  return function()
    if k >= feed.steps then return nil end
    local x, y = it()
    if x == nil then
      fail("fit", "the dataset ran out after %d of the %d batches of epoch %d (steps_per_epoch "
           .. "= %d): it must give epochs * steps_per_epoch batches (ds:epochs())", k,
           feed.steps, epoch, feed.steps)
    end
    k = k + 1
    return x, y
  end
end

-- Runs one epoch; returns logs {loss =, <metric> = ...}.
local function train_epoch(state, feed, epoch, progress)
  state.loss_mean:reset_state()
  for _, m in ipairs(state.metrics) do m:reset_state() end
  local step = 0
  for x, y in epoch_batches(feed, epoch) do
    if y == nil then fail("fit", "the dataset must give (inputs, labels) pairs") end
    step = step + 1
    local loss, out = state.step(x, y)
    state.loss_mean:update_state(loss_number("fit", loss))
    local upd = {epoch = epoch, step = step, loss = state.loss_mean:result()}
    for _, m in ipairs(state.metrics) do
      m:update_state(y, out)
      upd[m.name] = m:result()
    end
    if progress then progress:update(upd) end
  end
  if step == 0 then fail("fit", "the dataset gave no batches in epoch %d", epoch) end
  local logs = {loss = state.loss_mean:result()}
  for _, m in ipairs(state.metrics) do logs[m.name] = m:result() end
  return logs, step
end

-- The step function: train_step, as one mf.trace'd function unless trace
-- is false. Made again after the callbacks of each epoch: a callback may
-- swap a layer, and a traced step would go on training the old one.
local function step_fn(state, trace)
  local function step(x, y) return train_step(state, x, y) end
  return trace and mf.trace(step) or step
end

-- A block of 'count' rows of 'x' from row 'first'.
local function rows(x, first, count)
  local begin, size, shape = {first}, {count}, x.shape
  for a = 2, #shape do begin[a], size[a] = 1, shape[a] end
  return mf.slice(x, begin, size)
end

-- fit(x, y, {batch_size = 32, validation_split = 0, shuffle = true}): the
-- training and validation Datasets of tensors. The validation part is the
-- last validation_split of the samples, split before shuffling (Keras's
-- rule and its error when a part would be empty).
local function array_datasets(fname, x, y, opts)
  if not lib.is_tensor(y) then
    fail(fname, "expected the labels y after the inputs x (fit(x, y, {...})), got %s", type(y))
  end
  local n = #x
  if #y ~= n then fail(fname, "x has %d samples but y has %d (rows along axis 1)", n, #y) end
  local bs = lib.check_count(fname, "option 'batch_size'", opts.batch_size or 32)
  local split = opts.validation_split or 0
  if type(split) ~= "number" or not (split >= 0 and split < 1) then
    fail(fname, "option 'validation_split' must be a number in [0, 1), got %s", tostring(split))
  end
  local shuffle = check_bool(fname, opts, "shuffle", fname == "fit")
  local n_train, val = n, nil
  if split > 0 then
    n_train = math.floor(n * (1 - split))
    if n_train == 0 or n_train == n then
      fail(fname, "%d samples cannot be split into training and validation sets with "
           .. "validation_split = %s", n, tostring(split))
    end
    val = mf.data.Dataset.from_tensor_slices{rows(x, n_train + 1, n - n_train),
                                              rows(y, n_train + 1, n - n_train)}:batch(bs)
  end
  local train = mf.data.Dataset.from_tensor_slices{rows(x, 1, n_train), rows(y, 1, n_train)}
  if shuffle then train = train:shuffle(n_train) end
  return train:batch(bs), val
end

-- The data of fit/evaluate: (ds, opts) or (x, y, opts); returns the
-- Dataset, the options and, for tensors, the validation Dataset.
local function data_of(fname, data, a, b, keys)
  if is_dataset(data) then
    if b ~= nil then
      fail(fname, "expected (dataset [, options]), got a third argument (%s)", type(b))
    end
    local opts = check_opts(fname, a, keys)
    for k in pairs(array_keys) do
      if opts[k] ~= nil then
        fail(fname, "option '%s' is for tensors x, y: a Dataset is batched already "
             .. "(ds:batch(n); a validation Dataset: validation_data)", k)
      end
    end
    return data, opts
  elseif lib.is_tensor(data) then
    local opts = check_opts(fname, b, keys)
    local ds, val = array_datasets(fname, data, a, opts)
    return ds, opts, val
  end
  fail(fname, "expected an mf.data.Dataset of (inputs, labels) batches, or tensors x, y, got %s",
       type(data))
end

-- validation_data: a Dataset, or Keras's (x_val, y_val) as {x_val, y_val},
-- batched as the training tensors are (batch_size, 32 by default).
local function validation_of(fname, v, batch_size)
  if v == nil or is_dataset(v) then return v end
  if type(v) == "table" and getmetatable(v) == nil and lib.is_tensor(v[1])
      and lib.is_tensor(v[2]) and v[3] == nil then
    if #v[1] ~= #v[2] then
      fail(fname, "validation_data: x_val has %d samples but y_val has %d", #v[1], #v[2])
    end
    return mf.data.Dataset.from_tensor_slices{v[1], v[2]}:batch(batch_size or 32)
  end
  fail(fname, "option 'validation_data' must be a Dataset or {x_val, y_val} (tensors), got %s",
       type(v))
end

-- How many batches an epoch has: steps_per_epoch, else one pass of 'ds'
-- (nil when unknown); a Dataset that repeats forever needs steps_per_epoch.
local function epoch_steps(fname, ds, steps, what, steps_name)
  local card = ds:cardinality()
  if steps ~= nil then return lib.check_count(fname, "option '" .. steps_name .. "'", steps) end
  if card == INFINITE then
    fail(fname, "%s repeats forever (cardinality -1): pass %s, the batches of an epoch "
         .. "(Keras's rule)", what, steps_name)
  end
  return nil, card >= 0 and card or nil
end

lib.help("layers.fit", "layers",
  "model:fit(dataset | x, y, {loss, optimizer = \"adam\", epochs = 1, " ..
  "metrics, validation_data, verbose = 1, callbacks, trace = true, global_step, logdir, " ..
  "steps_per_epoch, validation_steps, batch_size = 32, validation_split, shuffle = true}) -> " ..
  "history;  model:evaluate(dataset | x, y [, {loss, metrics, steps, batch_size}]) -> " ..
  "{loss =, ...};  model:predict(x [, {batch_size, steps}])",
  "Keras's training loop (lib/fit.lua). Each step records the model and the loss on a " ..
  "GradientTape and applies the optimizer to model.trainable_variables, as one mf.trace'd " ..
  "function (trace = false: eagerly; traced again after each epoch's callbacks, which may " ..
  "swap layers). loss: a name of mf.losses, a function(labels, " ..
  "outputs) returning a scalar, or an mf.losses object; metrics: an array, {\"accuracy\"} " ..
  "or metric objects. verbose: 0, 1 (the progress line) or 2 (a line per epoch). The " ..
  "progress line shows the running loss and metrics; history has one number per epoch " ..
  "for loss, each metric and, with validation_data, val_loss and val_<metric>. " ..
  "Tensors x, y are batched (batch_size) and shuffled every epoch (shuffle); " ..
  "validation_data is a Dataset or {x_val, y_val}; " ..
  "validation_split keeps the last part of the samples, taken before shuffling, for " ..
  "validation (Keras's rule). A Dataset that repeats forever needs steps_per_epoch (and " ..
  "validation_steps, evaluate's and predict's steps); with steps_per_epoch one iterator " ..
  "goes on across " ..
  "epochs, and a dataset that runs out before epochs * steps_per_epoch batches is an error " ..
  "(Keras warns and stops). No data at all (fit, evaluate, validation_data) is an error: " ..
  "the loss of no batches is not 0. " ..
  "callbacks: functions on_epoch_end(epoch, logs, model) or tables with on_train_begin, " ..
  "on_epoch_end, on_train_end. logdir: TensorBoard event files as Keras lays them out, " ..
  "logdir/train and logdir/validation with scalars epoch_loss, epoch_accuracy... per " ..
  "epoch and a histogram of every variable (mf.summary). evaluate uses the loss and " ..
  "metrics of the last fit.",
  [[
x = mf.tensor{{0}, {1}, {2}, {3}}; y = x * 2
ds = mf.data.Dataset.from_tensor_slices{x, y}:batch(4)
m = mf.layers.Sequential{mf.layers.Dense(1)}
h = m:fit(ds, {loss = "mean_squared_error", epochs = 3, verbose = 0})
#h.loss                              --> 3
m:predict(x).shape                   --> {4, 1}]])
-- The state of one fit: the model, loss, optimizer, metrics, step function.
local function fit_state(fname, model, opts)
  if opts.loss == nil then fail(fname, "option 'loss' is required (e.g. mf.losses.sparse_"
                                .. "categorical_crossentropy{from_logits = true})") end
  local state = {model = model, loss_fn = lib.loss_fn(fname, opts.loss),
                 optimizer = optimizer_of(fname, opts.optimizer),
                 loss_mean = mf.metrics.Mean{name = "loss"},
                 metrics = metrics_of(fname, opts.metrics),
                 global_step = opts.global_step, trace = check_bool(fname, opts, "trace", true)}
  state.step = step_fn(state, state.trace)
  return state
end

-- One line per epoch (verbose 2, or 1 with validation data).
local function print_epoch(epoch, epochs, logs)
  local parts = {}
  for k, v in pairs(logs) do parts[#parts + 1] = string.format("%s %.4f", k, v) end
  table.sort(parts)
  print(string.format("epoch %d/%d: %s", epoch, epochs, table.concat(parts, ", ")))
end

-- model:fit(dataset [, opts]) or model:fit(x, y [, opts]) -> history
-- (opts: loss, optimizer = "adam", epochs = 1, metrics = {"accuracy"},
-- validation_data, verbose = 1, callbacks, trace = true, global_step,
-- logdir, steps_per_epoch, validation_steps; for tensors batch_size = 32,
-- validation_split, shuffle = true)
function ModelBase:fit(data, a, b, ...)
  local fname = "fit"
  no_more(fname, 3, ...)
  local ds, opts, val_ds = data_of(fname, data, a, b, fit_keys)
  local epochs = lib.check_count(fname, "option 'epochs'", opts.epochs or 1)
  local verbose = verbose_of(fname, opts.verbose)
  val_ds = validation_of(fname, opts.validation_data, opts.batch_size) or val_ds
  local feed = {ds = ds}
  local total
  feed.steps, total = epoch_steps(fname, ds, opts.steps_per_epoch, "the dataset", "steps_per_epoch")
  local val_steps = val_ds and epoch_steps(fname, val_ds, opts.validation_steps,
                                           "option 'validation_data'", "validation_steps")
  local state = fit_state(fname, self, opts)
  local cbs = callbacks_of(fname, opts.callbacks)
  if opts.logdir ~= nil then
    cbs[#cbs + 1] = mf.summary.TensorBoard(opts.logdir, {validation = val_ds ~= nil})
  end
  self.compiled_ = {loss_fn = state.loss_fn, metrics = opts.metrics}
  total = feed.steps or total
  local progress = verbose == 1 and (total and mf.progress{total = total, epochs = epochs}
                                     or mf.progress{}) or nil
  local history = {epoch = {}, loss = {}}
  fire(cbs, "on_train_begin", self)
  for epoch = 1, epochs do
    local logs = train_epoch(state, feed, epoch, progress)
    if val_ds then
      local val = self:evaluate_(fname, "option 'validation_data'", val_ds, val_steps,
                                 state.loss_fn, metrics_of(fname, opts.metrics))
      for k, v in pairs(val) do logs["val_" .. k] = v end
    end
    history.epoch[epoch] = epoch
    for k, v in pairs(logs) do
      history[k] = history[k] or {}
      history[k][epoch] = v
    end
    if verbose == 2 or (verbose == 1 and val_ds) then print_epoch(epoch, epochs, logs) end
    fire(cbs, "on_epoch_end", epoch, logs, self)
    if #cbs > 0 then state.step = step_fn(state, state.trace) end
  end
  if progress then progress:done() end
  fire(cbs, "on_train_end", history, self)
  return history
end

-- The mean loss (weighted by batch size) and the metrics 'ms' of the model
-- over the batches of 'ds' (at most 'steps'). No batches is an error: the
-- loss of no data is undefined, not 0 (Keras raises too).
function ModelBase:evaluate_(fname, what, ds, steps, loss_fn, ms)
  local mean = mf.metrics.Mean{name = "loss"}
  local k = 0
  for x, y in ds:iter() do
    if y == nil then fail(fname, "%s must give (inputs, labels) pairs", what) end
    local out = self(x)
    mean:update_state(loss_number(fname, loss_fn(y, out)), #x)
    for _, m in ipairs(ms) do m:update_state(y, out) end
    k = k + 1
    if steps and k >= steps then break end
  end
  if k == 0 then fail(fname, "%s gave no batches: the loss of no data is undefined", what) end
  local res = {loss = mean:result()}
  for _, m in ipairs(ms) do res[m.name] = m:result() end
  return res
end

local evaluate_keys = {loss = true, metrics = true, verbose = true, steps = true,
                       batch_size = true}

-- model:evaluate(dataset [, opts]) or model:evaluate(x, y [, opts]) ->
-- {loss =, accuracy = ...} (opts: loss, metrics, verbose, steps,
-- batch_size = 32 for tensors; the loss and metrics of the last fit unless given).
function ModelBase:evaluate(data, a, b, ...)
  local fname = "evaluate"
  no_more(fname, 3, ...)
  local ds, opts = data_of(fname, data, a, b, evaluate_keys)
  local compiled = self.compiled_ or {}
  local loss_fn = opts.loss and lib.loss_fn(fname, opts.loss) or compiled.loss_fn
  if not loss_fn then
    fail(fname, "no loss: pass {loss = ...} or call model:fit first")
  end
  local verbose = verbose_of(fname, opts.verbose or 0)
  local steps = epoch_steps(fname, ds, opts.steps, "the dataset", "steps")
  local res = self:evaluate_(fname, "the dataset", ds, steps, loss_fn,
                             metrics_of(fname, opts.metrics or compiled.metrics))
  if verbose ~= 0 then
    local parts = {}
    for k, v in pairs(res) do parts[#parts + 1] = string.format("%s %.4f", k, v) end
    table.sort(parts)
    print("evaluate: " .. table.concat(parts, ", "))
  end
  return res
end

-- model:predict(x [, {batch_size, steps}]) -> outputs (training = false); 'x'
-- a tensor (whole, or in batches of batch_size) or a Dataset (its first
-- component; at most 'steps' batches, required when it repeats forever).
function ModelBase:predict(x, opts, ...)
  local fname = "predict"
  no_more(fname, 2, ...)
  opts = check_opts(fname, opts, {batch_size = true, steps = true})
  local outs = {}
  if is_dataset(x) then
    local steps = epoch_steps(fname, x, opts.steps, "the dataset", "steps")
    for xb in x:iter() do
      outs[#outs + 1] = self(xb)
      if steps and #outs >= steps then break end
    end
  elseif opts.steps ~= nil then
    fail(fname, "option 'steps' is for a Dataset (a tensor is predicted whole)")
  elseif lib.is_tensor(x) then
    if not opts.batch_size then return self(x) end
    local bs = lib.check_count(fname, "option 'batch_size'", opts.batch_size)
    local n = #x
    local shape = x.shape
    for i = 1, n, bs do
      local size = {math.min(bs, n - i + 1)}
      local begin = {i}
      for a = 2, #shape do size[a], begin[a] = shape[a], 1 end
      outs[#outs + 1] = self(mf.slice(x, begin, size))
    end
  else
    fail(fname, "expected a tensor or a Dataset, got %s", type(x))
  end
  if #outs == 0 then fail(fname, "no inputs to predict") end
  if #outs == 1 then return outs[1] end
  return mf.concat(outs, 1)
end
