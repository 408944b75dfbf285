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
                  global_step = true, logdir = true}

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
  local tape = mf.GradientTape()
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

local function number(v)
  if type(v) == "number" then return v end
  return v:item()
end

-- Runs one epoch of 'ds'; returns logs {loss =, <metric> = ...}.
local function train_epoch(state, ds, epoch, progress)
  state.loss_mean:reset_state()
  for _, m in ipairs(state.metrics) do m:reset_state() end
  local step = 0
  for x, y in ds:iter() do
    if y == nil then fail("fit", "the dataset must give (inputs, labels) pairs") end
    step = step + 1
    local loss, out = state.step(x, y)
    state.loss_mean:update_state(number(loss))
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

-- The steps of one pass of 'ds' when known without running it.
local function steps_of(ds)
  return ds.cardinality and ds:cardinality() or nil
end

lib.help("layers.fit", "layers",
  "model:fit(dataset, {loss, optimizer = \"adam\", epochs = 1, " ..
  "metrics, validation_data, verbose = 1, callbacks, trace = true, global_step, logdir}) " ..
  "-> " ..
  "history;  model:evaluate(dataset [, {loss, metrics}]) -> {loss =, ...};  " ..
  "model:predict(x [, {batch_size}])",
  "Keras's training loop (lib/fit.lua). Each step records the model and the loss on a " ..
  "GradientTape and applies the optimizer to model.trainable_variables, as one mf.trace'd " ..
  "function (trace = false: eagerly). loss: a name of mf.losses, a function(labels, " ..
  "outputs) or an mf.losses object; metrics: {\"accuracy\"} or metric objects. The " ..
  "progress line shows the running loss and metrics; history has one number per epoch " ..
  "for loss, each metric and, with validation_data, val_loss and val_<metric>. " ..
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
-- model:fit(dataset, {loss, optimizer = "adam", epochs = 1, metrics = {"accuracy"},
--   validation_data, verbose = 1, callbacks, trace = true, global_step}) -> history
function ModelBase:fit(ds, opts)
  local fname = "fit"
  if not is_dataset(ds) then
    fail(fname, "expected an mf.data.Dataset of (inputs, labels) batches, got %s", type(ds))
  end
  opts = check_opts(fname, opts, fit_keys)
  if opts.loss == nil then fail(fname, "option 'loss' is required (e.g. mf.losses.sparse_"
                                .. "categorical_crossentropy{from_logits = true})") end
  local epochs = lib.check_count(fname, "option 'epochs'", opts.epochs or 1)
  local state = {model = self, loss_fn = lib.loss_fn(fname, opts.loss),
                 optimizer = optimizer_of(fname, opts.optimizer),
                 loss_mean = mf.metrics.Mean{name = "loss"}, metrics = {},
                 global_step = opts.global_step}
  for i, m in ipairs(opts.metrics or {}) do state.metrics[i] = lib.metric_obj(fname, m) end
  if opts.validation_data ~= nil and not is_dataset(opts.validation_data) then
    fail(fname, "option 'validation_data' must be a Dataset, got %s", type(opts.validation_data))
  end
  local cbs = callbacks_of(fname, opts.callbacks)
  if opts.logdir ~= nil then
    cbs[#cbs + 1] = mf.summary.TensorBoard(opts.logdir, {validation = opts.validation_data ~= nil})
  end
  if opts.trace == false then
    state.step = function(x, y) return train_step(state, x, y) end
  else
    state.step = mf.trace(function(x, y) return train_step(state, x, y) end)
  end
  self.compiled_ = {loss_fn = state.loss_fn, metrics = opts.metrics}
  local verbose = opts.verbose == nil and 1 or opts.verbose
  local total = steps_of(ds)
  local progress = verbose ~= 0 and (total and mf.progress{total = total, epochs = epochs}
                                     or mf.progress{}) or nil
  local history = {epoch = {}, loss = {}}
  fire(cbs, "on_train_begin", self)
  for epoch = 1, epochs do
    local logs = train_epoch(state, ds, epoch, progress)
    if opts.validation_data then
      local val = self:evaluate(opts.validation_data, {verbose = 0, loss = state.loss_fn,
                                                       metrics = opts.metrics})
      for k, v in pairs(val) do logs["val_" .. k] = v end
    end
    history.epoch[epoch] = epoch
    for k, v in pairs(logs) do
      history[k] = history[k] or {}
      history[k][epoch] = v
    end
    if verbose ~= 0 and opts.validation_data then
      local parts = {}
      for k, v in pairs(logs) do parts[#parts + 1] = string.format("%s %.4f", k, v) end
      table.sort(parts)
      print(string.format("epoch %d/%d: %s", epoch, epochs, table.concat(parts, ", ")))
    end
    fire(cbs, "on_epoch_end", epoch, logs, self)
  end
  if progress then progress:done() end
  fire(cbs, "on_train_end", history, self)
  return history
end

-- model:evaluate(dataset [, {loss, metrics, verbose}]) -> {loss =, accuracy = ...}
-- (the loss and metrics of the last fit unless given).
function ModelBase:evaluate(ds, opts)
  local fname = "evaluate"
  if not is_dataset(ds) then
    fail(fname, "expected an mf.data.Dataset of (inputs, labels) batches, got %s", type(ds))
  end
  opts = check_opts(fname, opts, {loss = true, metrics = true, verbose = true})
  local compiled = self.compiled_ or {}
  local loss_fn = opts.loss and lib.loss_fn(fname, opts.loss) or compiled.loss_fn
  if not loss_fn then
    fail(fname, "no loss: pass {loss = ...} or call model:fit first")
  end
  local ms = {}
  for i, m in ipairs(opts.metrics or compiled.metrics or {}) do
    ms[i] = lib.metric_obj(fname, m)
  end
  local mean = mf.metrics.Mean{name = "loss"}
  for x, y in ds:iter() do
    if y == nil then fail(fname, "the dataset must give (inputs, labels) pairs") end
    local out = self(x)
    local n = #x
    mean:update_state(number(loss_fn(y, out)), n)
    for _, m in ipairs(ms) do m:update_state(y, out) end
  end
  local res = {loss = mean:result()}
  for _, m in ipairs(ms) do res[m.name] = m:result() end
  if opts.verbose == 1 then
    local parts = {}
    for k, v in pairs(res) do parts[#parts + 1] = string.format("%s %.4f", k, v) end
    table.sort(parts)
    print("evaluate: " .. table.concat(parts, ", "))
  end
  return res
end

-- model:predict(x [, {batch_size}]) -> outputs (training = false); 'x' a
-- tensor (whole, or in batches of batch_size) or a Dataset (its first component).
function ModelBase:predict(x, opts)
  local fname = "predict"
  opts = check_opts(fname, opts, {batch_size = true})
  local outs = {}
  if is_dataset(x) then
    for xb in x:iter() do outs[#outs + 1] = self(xb) end
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
