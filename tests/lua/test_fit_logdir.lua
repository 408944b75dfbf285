-- test_fit_logdir.lua — model:fit{logdir}: TensorBoard event files in
-- logdir/train and logdir/validation (Keras's layout), read back by the
-- independent reader tests/interop/read_events.py.
local T = dofile("tests/lua/harness.lua")

local function events_of(dir)
  local name = io.popen("ls " .. dir):read("a"):match("(events%.out%.tfevents%.%S+)")
  T.ok(name, "an event file in " .. dir)
  local p = assert(io.popen("/usr/bin/python3 tests/interop/read_events.py " .. dir .. "/" ..
                            name .. " 2>&1"))
  local out = p:read("a")
  T.ok(p:close(), out)
  return out
end

local function has(s, t) return s:find(t, 1, true) ~= nil end

T.test("fit writes per-epoch scalars and histograms", function()
  mf.random.seed(5)
  local x = mf.random.normal({64, 3})
  local y = mf.cast(mf.greater(mf.reduce_sum(x, {axis = 2}), 0), "int64") + 1
  local ds = mf.data.Dataset.from_tensor_slices({x, y}):batch(16)
  local model = mf.layers.Sequential{mf.layers.Dense(4, {activation = "relu"}),
                                     mf.layers.Dense(2)}
  local dir = os.tmpname()
  os.remove(dir)
  local hist = model:fit(ds, {loss = mf.losses.sparse_categorical_crossentropy{from_logits = true},
                              optimizer = "sgd", epochs = 3, metrics = {"accuracy"},
                              validation_data = ds, verbose = 0, logdir = dir})
  local train = events_of(dir .. "/train")
  local val = events_of(dir .. "/validation")
  for epoch = 1, 3 do
    local want = ("scalar epoch_loss %d %.6g"):format(epoch, hist.loss[epoch])
    T.ok(train:find(("scalar epoch_loss %d "):format(epoch), 1, true), train)
    T.ok(train:find(("scalar epoch_accuracy %d "):format(epoch), 1, true), train)
    T.ok(val:find(("scalar epoch_loss %d "):format(epoch), 1, true), val)
    local got = tonumber(train:match(("scalar epoch_loss %d (%%S+)"):format(epoch)))
    T.eq(got, hist.loss[epoch], 1e-6 * math.max(1, math.abs(hist.loss[epoch])), want)
  end
  T.ok(has(train, "histogram "), train)
  T.ok(not has(val, "histogram "), "histograms go to train only")
  os.execute("rm -rf " .. dir)
end)

T.test("a bad logdir is an error naming fit", function()
  local model = mf.layers.Sequential{mf.layers.Dense(1)}
  local ds = mf.data.Dataset.from_tensor_slices({mf.ones({4, 2}), mf.ones({4, 1})}):batch(2)
  T.raises(function() model:fit(ds, {loss = mf.losses.mean_squared_error, logdir = 3,
                                     verbose = 0}) end, "TensorBoard: logdir must be a directory name (a string), got number")
end)

T.test("mf.summary.TensorBoard as a callback of its own", function()
  local dir = os.tmpname()
  os.remove(dir)
  local cb = mf.summary.TensorBoard(dir)
  local model = {variables = {mf.Variable(mf.tensor({1, 2, 3}), {name = "k"})}}
  cb.on_epoch_end(1, {loss = 0.5, val_loss = 0.7, accuracy = 0.25}, model)
  cb.on_train_end()
  local out = events_of(dir .. "/train")
  T.ok(has(out, "scalar epoch_accuracy 1 0.25\nscalar epoch_loss 1 0.5\nhistogram k 1 num=3"),
       out)
  T.ok(not has(out, "val"), "no validation run asked for: val_ keys are dropped")
  T.raises(function() cb.on_epoch_end(2, {loss = 1}, model) end, "writer is closed")
  T.raises(function() mf.summary.TensorBoard(dir, {valid = true}) end, "unknown option 'valid'")
  T.raises(function() mf.summary.create_file_writer(42) end, "logdir must be a directory name")
  os.execute("rm -rf " .. dir)
end)

T.done()
