-- tensorboard.lua — mf.summary.TensorBoard, Keras's TensorBoard callback for
-- model:fit, composed of the mf.summary writers (repl/lmf_summary.c,
-- core/io/events.c): per epoch, each number of the logs as a scalar and a
-- histogram of every variable of the model, in Keras's layout of runs
-- (logdir/train, logdir/validation).
local mf, lib = ...
local fail = lib.fail

lib.help("summary.TensorBoard", "interchange",
  "mf.summary.TensorBoard(logdir [, {validation = false}]) -> {on_epoch_end, on_train_end}",
  "Keras's TensorBoard callback for model:fit{callbacks = {...}} (model:fit{logdir = d} " ..
  "adds one itself): per epoch, each number of the logs as the scalar epoch_<name> in " ..
  "logdir/train, val_<name> as epoch_<name> in logdir/validation (so TensorBoard draws " ..
  "the two runs in one chart), and a histogram of every variable of model.variables in " ..
  "logdir/train; on_train_end closes the files.",
  [[
d = os.tmpname()
os.remove(d)
cb = mf.summary.TensorBoard(d)
cb.on_epoch_end(1, {loss = 0.5}, {variables = {}})
cb.on_train_end()
os.execute("rm -rf " .. d)]])

-- A writer for logdir/<run>; its error names TensorBoard, the function called.
local function run_writer(logdir, run)
  local ok, w = pcall(mf.summary.create_file_writer, logdir .. "/" .. run)
  if not ok then fail("TensorBoard", "%s", tostring(w)) end
  return w
end


function mf.summary.TensorBoard(logdir, opts)
  if type(logdir) ~= "string" then
    fail("TensorBoard", "logdir must be a directory name (a string), got %s", type(logdir))
  end
  if logdir:find("\0", 1, true) then
    fail("TensorBoard", "logdir holds a NUL byte (\\0) at byte %d; a directory name cannot",
         logdir:find("\0", 1, true))
  end
  opts = lib.check_opts("TensorBoard", opts, {validation = true})
  if opts.validation ~= nil and type(opts.validation) ~= "boolean" then
    fail("TensorBoard", "option 'validation' must be a boolean, got %s", type(opts.validation))
  end
  local train = run_writer(logdir, "train")
  local val = opts.validation and run_writer(logdir, "validation") or nil
  local ended = false
  local cb = {}

  -- on_epoch_end(epoch, logs, model): the numbers of 'logs' in key order,
  -- val_<key> to the validation run as epoch_<key> (dropped without one).
  function cb.on_epoch_end(epoch, logs, model)
    if ended then fail("TensorBoard", "the callback's writer is closed (train ended)") end
    epoch = math.tointeger(epoch) or
            fail("on_epoch_end", "epoch must be an integer, got %s", tostring(epoch))
    if type(logs) ~= "table" then
      fail("on_epoch_end", "logs must be a table, got %s", type(logs))
    end
    local keys = {}
    for k, v in pairs(logs) do
      if type(k) == "string" and type(v) == "number" then keys[#keys + 1] = k end
    end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local is_val = k:sub(1, 4) == "val_"
      local w = is_val and val or (not is_val and train) or nil
      if w then w:scalar("epoch_" .. (is_val and k:sub(5) or k), rawget(logs, k), epoch) end
    end
    local vars = type(model) == "table" and model.variables
    if type(vars) ~= "table" then return end
    for i, v in ipairs(vars) do
      if lib.numeric_values(v) then   -- graph variables and bool flags have no histogram
        local name = getmetatable(v).__name == "mf.Variable" and v.name
        train:histogram((name and name ~= "") and name or ("variable_" .. i), v, epoch)
      end
    end
  end

  -- on_train_end(): closes the runs' files.
  function cb.on_train_end()
    ended = true
    train:close()
    if val then val:close() end
  end
  return cb
end
