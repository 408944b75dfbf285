-- schedules.lua — learning-rate schedules in mf.train, TensorFlow 1.x's
-- signatures (like mf.train.exponential_decay): each takes the global step
-- (a Variable, tensor or number) and returns a function of no arguments
-- that gives the current rate as a float32 scalar tensor (TensorFlow's
-- dtype for a Python float learning rate; the step is cast to it, as TF
-- does), made of ops, so an optimizer given it reads the rate on every
-- step, eagerly, in a graph or inside mf.trace. Also AdamW (Loshchilov &
-- Hutter's decoupled weight decay, as Keras and PyTorch apply it) around
-- mf.train.AdamOptimizer.
local mf, lib = ...
local fail, check_opts = lib.fail, lib.check_opts
local train = mf.train

local function step_arg(fname, step)
  if type(step) ~= "number" and not lib.is_tensor(step) then
    fail(fname, "global_step must be a Variable, tensor or number, got %s", type(step))
  end
  if type(step) ~= "number" and step.dtype == "bool" then
    fail(fname, "global_step must hold a number, got a bool %s", getmetatable(step).__name)
  end
  return step
end

-- "integer" or "float": the kind of number the step holds.
local function step_kind(step)
  if type(step) == "number" then return math.type(step) end
  return step.dtype:find("int") and "integer" or "float"
end

-- The step as a tensor of its own kind (a Lua integer as int64).
local function step_tensor(step)
  if type(step) ~= "number" then return step end
  return mf.tensor(step, math.type(step) == "integer" and "int64" or "float32")
end

local function as_f32(v)
  if type(v) == "number" then return mf.tensor(v, "float32") end
  return mf.cast(v, "float32")
end

local function check_rate(fname, lr)
  if type(lr) ~= "number" then fail(fname, "learning_rate must be a number, got %s", type(lr)) end
  return lr
end

local function check_positive(fname, what, v)
  if type(v) ~= "number" or not (v > 0) or v == math.huge then
    fail(fname, "%s must be a number > 0, got %s", what,
         type(v) == "number" and tostring(v) or type(v))
  end
  return v
end

local function check_numbers(fname, what, list)
  if type(list) ~= "table" then fail(fname, "%s must be an array of numbers, got %s", what,
                                     type(list)) end
  for i, v in ipairs(list) do
    if type(v) ~= "number" then
      fail(fname, "%s[%d] must be a number, got %s", what, i, type(v))
    end
  end
end

-- TensorFlow compares the step with boundaries of its own dtype and raises
-- ValueError for float boundaries with an integer step (a boundary 10.5
-- would be cut to 10). An integer boundary with a float step is exact, so
-- it is taken (TensorFlow refuses that too).
local function check_boundary_kinds(fname, step, boundaries)
  if step_kind(step) ~= "integer" then return end
  for i, b in ipairs(boundaries) do
    if math.type(b) ~= "integer" then
      fail(fname, "boundaries[%d] is %s, a float, but global_step is an integer (%s): " ..
           "boundaries must be integers for an integer step, as in TensorFlow", i,
           tostring(b), type(step) == "number" and "a Lua integer" or step.dtype)
    end
  end
end

-- ---- exponential_decay ------------------------------------------------------
-- The oldest schedule, with its own rules kept: the learning rate may be a
-- float scalar tensor or Variable (the rate keeps its dtype), the arguments
-- are checked by computing the rate once, a graph's global step gives the
-- rate as a graph tensor (TensorFlow 1.x), and a tensor or Variable closed
-- after the schedule was made is named when the rate is asked for.

-- True for a tensor or Variable that is still open.
local function open_tensor(x)
  return lib.is_tensor(x) and (pcall(function() return x.dtype end))
end

-- What 'x' is, for messages: "a closed mf.Tensor", "mf.train.Optimizer", "string".
local function what_is(x)
  local mt = getmetatable(x)
  local name = type(mt) == "table" and rawget(mt, "__name")
  if type(name) ~= "string" then return type(x) end
  if (name == "mf.Tensor" or name == "mf.Variable") and not open_tensor(x) then
    return "a closed " .. name
  end
  return name
end

-- A number argument as a C binding takes it (a numeric string too).
local function number_arg(fname, n, v)
  local x = tonumber(v)
  if x == nil then
    lib.raise(string.format("bad argument #%d to '%s' (number expected, got %s)", n, fname,
                            type(v)))
  end
  return x
end

-- True when the step is a graph tensor or a graph Variable (its value a node).
local function graph_step(step)
  if type(step) == "number" then return false end
  if getmetatable(step).__name == "mf.Variable" then   -- only a graph Variable has one
    local ok, init = pcall(function() return step.initializer end)
    return ok and init ~= nil
  end
  return step.name ~= nil
end

-- learning_rate * decay_rate ^ (step / decay_steps), the exponent floored
-- with staircase, in the learning rate's dtype.
local function exponential_rate(fname, lr, step, decay_steps, decay_rate, staircase)
  for i, x in ipairs{lr, step} do
    if type(x) == "userdata" and not open_tensor(x) then
      fail(fname, "%s is %s (closed after the schedule was made)",
           i == 1 and "learning_rate" or "global_step", what_is(x))
    end
  end
  if type(lr) == "number" then lr = mf.tensor(lr, "float32") end
  if type(step) == "number" then
    local i = math.tointeger(step)
    if not i then
      fail(fname, "the number %s is not an integer but the other operand is int64 (convert " ..
           "the tensor with mf.cast)", tostring(step))
    end
    step = mf.tensor(i, "int64")
  end
  if not lr.dtype:find("^float") or #lr.shape ~= 0 then
    fail(fname, "learning_rate must be a float scalar, got a %s tensor of rank %d", lr.dtype,
         #lr.shape)
  end
  if #step.shape ~= 0 or step.dtype == "bool" then
    fail(fname, "global_step must be a scalar number, got a %s tensor of rank %d", step.dtype,
         #step.shape)
  end
  if not (decay_steps > 0) then fail(fname, "decay_steps must be > 0, got %g", decay_steps) end
  if not (decay_rate > 0) then fail(fname, "decay_rate must be > 0, got %g", decay_rate) end
  local p = mf.cast(step, lr.dtype) / mf.tensor(decay_steps, lr.dtype)
  if staircase then p = mf.floor(p) end
  return lr * mf.pow(mf.tensor(decay_rate, lr.dtype), p)
end

lib.help("train.exponential_decay", "training",
  "mf.train.exponential_decay(learning_rate, global_step, decay_steps, decay_rate " ..
  "[, {staircase}])",
  "TensorFlow's decayed rate learning_rate * decay_rate ^ (global_step / decay_steps) " ..
  "(the exponent floored when staircase is true). In eager mode it returns a function of " ..
  "no arguments that computes the rate from the step's current value (a float32 scalar " ..
  "for a number learning_rate); give that function to an optimizer, which calls it at " ..
  "every apply. global_step is a Variable, tensor or number; decay_steps and decay_rate " ..
  "are > 0. Both learning_rate and global_step must stay open while the function is used. " ..
  "With a graph's global step (graph mode) it returns the rate as a graph tensor, as " ..
  "TensorFlow 1.x does.",
  [[
step = mf.Variable(mf.tensor(20, "int64"), {trainable = false})
lr = mf.train.exponential_decay(0.1, step, 10, 0.5)
lr()                                 --> 0.025
opt = mf.train.GradientDescentOptimizer(lr)]])
-- exponential_decay(learning_rate, global_step, decay_steps, decay_rate
-- [, staircase | {staircase}]) (tf.compat.v1.train.exponential_decay).
function train.exponential_decay(lr, step, decay_steps, decay_rate, opts)
  local fname = "exponential_decay"
  if type(opts) == "table" then check_opts(fname, opts, {staircase = true}) end
  if type(lr) ~= "number" and not open_tensor(lr) then
    fail(fname, "learning_rate must be a number or a scalar tensor, got %s", what_is(lr))
  end
  if type(step) ~= "number" and not open_tensor(step) then
    fail(fname, "global_step must be a Variable, tensor or number, got %s", what_is(step))
  end
  decay_steps = number_arg(fname, 3, decay_steps)
  decay_rate = number_arg(fname, 4, decay_rate)
  local staircase = opts ~= nil and opts ~= false   -- any value but a table counts as Lua truth
  if type(opts) == "table" then
    staircase = lib.check_bool(fname, "staircase", opts.staircase, false)
  end
  local function rate()
    return exponential_rate(fname, lr, step, decay_steps, decay_rate, staircase)
  end
  local now = rate()   -- checks the arguments now; a graph step's rate is the answer
  if graph_step(step) then return now end
  return rate
end

lib.help("train.piecewise_constant", "training",
  "mf.train.piecewise_constant(global_step, boundaries, values) -> lr function",
  "TensorFlow 1.x's schedule: values[1] while the step is <= boundaries[1], values[2] " ..
  "while <= boundaries[2], ..., the last value after the last boundary, as a float32 " ..
  "scalar. Like every schedule here (exponential_decay, natural_exp_decay, " ..
  "inverse_time_decay, polynomial_decay, cosine_decay, cosine_decay_restarts, " ..
  "linear_cosine_decay) it returns a function of no arguments that an optimizer takes " ..
  "as its learning rate and reads on every step; the step is a Variable " ..
  "(mf.train.global_step()), a tensor or a number. The step is compared in its own " ..
  "dtype: an integer step needs integer boundaries (10.5 is an error, as in TensorFlow); " ..
  "integer boundaries with a float step are taken (TensorFlow refuses them).",
  [[
step = mf.Variable(15, {dtype = "int64", trainable = false})
lr = mf.train.piecewise_constant(step, {10, 20}, {1.0, 0.5, 0.1})
lr():item()                          --> 0.5]])
-- piecewise_constant(global_step, boundaries, values): values[1] while step
-- <= boundaries[1], values[2] while step <= boundaries[2], ..., values[n+1]
-- after the last boundary (tf.train.piecewise_constant).
function train.piecewise_constant(step, boundaries, values)
  local fname = "piecewise_constant"
  step = step_arg(fname, step)
  check_numbers(fname, "boundaries", boundaries)
  check_numbers(fname, "values", values)
  if #values ~= #boundaries + 1 then
    fail(fname, "values must have one more element than boundaries: %d boundaries, %d values",
         #boundaries, #values)
  end
  check_boundary_kinds(fname, step, boundaries)
  for i = 2, #boundaries do
    if boundaries[i] <= boundaries[i - 1] then
      fail(fname, "boundaries must increase, got %s after %s", boundaries[i], boundaries[i - 1])
    end
  end
  return function()
    local s = step_tensor(step)
    local lr = mf.tensor(values[#values], "float32")
    for i = #boundaries, 1, -1 do
      lr = mf.where(mf.less_equal(s, boundaries[i]), mf.tensor(values[i], "float32"), lr)
    end
    return lr
  end
end

lib.help("train.polynomial_decay", "training",
  "mf.train.polynomial_decay(lr, global_step, " ..
  "decay_steps [, {end_learning_rate = 0.0001, power = 1, cycle = false}])",
  "TensorFlow 1.x's polynomial decay: (lr - end) * (1 - min(step, decay_steps) / " ..
  "decay_steps) ^ power + end; with cycle = true decay_steps grows to the next multiple " ..
  "of itself past the step.",
  [[
lr = mf.train.polynomial_decay(0.1, 50, 100, {end_learning_rate = 0})
lr():item()                          --> 0.05]])
-- polynomial_decay(lr, global_step, decay_steps [, {end_learning_rate =
-- 0.0001, power = 1, cycle = false}]) (tf.train.polynomial_decay).
function train.polynomial_decay(lr, step, decay_steps, opts)
  local fname = "polynomial_decay"
  step = step_arg(fname, step)
  check_rate(fname, lr)
  decay_steps = lib.check_count(fname, "decay_steps", decay_steps)
  opts = check_opts(fname, opts, {end_learning_rate = true, power = true, cycle = true})
  local lr_end, power = opts.end_learning_rate or 0.0001, opts.power or 1.0
  local cycle = lib.check_bool(fname, "cycle", opts.cycle, false)
  return function()
    local s = as_f32(step)
    local steps = mf.tensor(decay_steps, "float32")
    if cycle then
      -- decay_steps * ceil(step / decay_steps), at least decay_steps
      steps = steps * mf.maximum(mf.ceil(s / decay_steps), 1)
    else
      s = mf.minimum(s, decay_steps)
    end
    return (lr - lr_end) * mf.pow(1 - s / steps, power) + lr_end
  end
end

lib.help("train.cosine_decay", "training",
  "mf.train.cosine_decay(lr, global_step, decay_steps [, {alpha = 0}])",
  "TensorFlow 1.x's cosine decay: lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, " ..
  "decay_steps) / decay_steps)) + alpha).",
  [[
lr = mf.train.cosine_decay(0.1, 100, 100)
lr():item()                          --> 0]])
-- cosine_decay(lr, global_step, decay_steps [, {alpha = 0}]):
-- lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)
-- (tf.train.cosine_decay).
function train.cosine_decay(lr, step, decay_steps, opts)
  local fname = "cosine_decay"
  step = step_arg(fname, step)
  check_rate(fname, lr)
  decay_steps = lib.check_count(fname, "decay_steps", decay_steps)
  opts = check_opts(fname, opts, {alpha = true})
  local alpha = opts.alpha or 0
  return function()
    local s = mf.minimum(as_f32(step), decay_steps)
    local cosine = 0.5 * (1 + mf.cos(math.pi * s / decay_steps))
    return lr * ((1 - alpha) * cosine + alpha)
  end
end

-- The staircase flag of natural_exp_decay and inverse_time_decay: a
-- boolean or {staircase = bool} (as exponential_decay takes it).
local function staircase_arg(fname, opts)
  if type(opts) == "boolean" or opts == nil then return opts or false end
  opts = check_opts(fname, opts, {staircase = true})
  return lib.check_bool(fname, "staircase", opts.staircase, false)
end

-- step / decay_steps in float32, floored with staircase (TensorFlow's p).
local function decay_progress(step, decay_steps, staircase)
  local p = as_f32(step) / decay_steps
  return staircase and mf.floor(p) or p
end

-- The decays of (lr, global_step, decay_steps, decay_rate [, {staircase}]):
-- the arguments checked once, then rate(p) of the progress at each call.
local function progress_schedule(fname, lr, step, decay_steps, decay_rate, opts, rate)
  step = step_arg(fname, step)
  check_rate(fname, lr)
  check_positive(fname, "decay_steps", decay_steps)
  check_positive(fname, "decay_rate", decay_rate)
  local staircase = staircase_arg(fname, opts)
  return function() return rate(decay_progress(step, decay_steps, staircase)) end
end

lib.help("train.natural_exp_decay", "training",
  "mf.train.natural_exp_decay(lr, global_step, decay_steps, decay_rate [, {staircase}])",
  "TensorFlow 1.x's natural exponential decay: lr * exp(-decay_rate * p), p = " ..
  "global_step / decay_steps (floored with staircase = true), as a float32 scalar.",
  [[
lr = mf.train.natural_exp_decay(1.0, 10, 10, 1.0)
lr():item()                          --> 0.3679]])
-- natural_exp_decay(lr, global_step, decay_steps, decay_rate [, {staircase}])
-- (tf.compat.v1.train.natural_exp_decay): lr * exp(-decay_rate * p).
function train.natural_exp_decay(lr, step, decay_steps, decay_rate, opts)
  return progress_schedule("natural_exp_decay", lr, step, decay_steps, decay_rate, opts,
    function(p) return lr * mf.exp(-decay_rate * p) end)
end

lib.help("train.inverse_time_decay", "training",
  "mf.train.inverse_time_decay(lr, global_step, decay_steps, decay_rate [, {staircase}])",
  "TensorFlow 1.x's inverse time decay: lr / (1 + decay_rate * p), p = global_step / " ..
  "decay_steps (floored with staircase = true), as a float32 scalar.",
  [[
lr = mf.train.inverse_time_decay(0.1, 20, 10, 0.5)
lr():item()                          --> 0.05]])
-- inverse_time_decay(lr, global_step, decay_steps, decay_rate [, {staircase}])
-- (tf.compat.v1.train.inverse_time_decay): lr / (1 + decay_rate * p).
function train.inverse_time_decay(lr, step, decay_steps, decay_rate, opts)
  return progress_schedule("inverse_time_decay", lr, step, decay_steps, decay_rate, opts,
    function(p) return lr / (1 + decay_rate * p) end)
end

lib.help("train.cosine_decay_restarts", "training",
  "mf.train.cosine_decay_restarts(lr, global_step, first_decay_steps " ..
  "[, {t_mul = 2, m_mul = 1, alpha = 0}])",
  "TensorFlow 1.x's cosine decay with warm restarts (SGDR, Loshchilov and Hutter): " ..
  "the rate falls from lr to alpha * lr along half a cosine over first_decay_steps " ..
  "steps, then restarts; each period lasts t_mul times the one before and starts at " ..
  "m_mul times its rate. A float32 scalar.",
  [[
lr = mf.train.cosine_decay_restarts(1.0, 150, 100)
lr():item()                          --> 0.8536]])
-- Restart number i and the fraction of period i done, for the step given
-- in units of first_decay_steps ('done'), as TensorFlow computes them.
local function sgdr_period(done, t_mul)
  if t_mul == 1.0 then
    local i = mf.floor(done)
    return i, done - i
  end
  -- periods 1, t, t^2...: period i starts at (1 - t^i) / (1 - t)
  local i = mf.floor(mf.log(1 - done * (1 - t_mul)) / math.log(t_mul))
  local start = (1 - mf.pow(t_mul, i)) / (1 - t_mul)
  return i, (done - start) / mf.pow(t_mul, i)
end

-- cosine_decay_restarts(lr, global_step, first_decay_steps [, {t_mul = 2,
-- m_mul = 1, alpha = 0}]) (tf.compat.v1.train.cosine_decay_restarts).
function train.cosine_decay_restarts(lr, step, first_decay_steps, opts)
  local fname = "cosine_decay_restarts"
  step = step_arg(fname, step)
  check_rate(fname, lr)
  check_positive(fname, "first_decay_steps", first_decay_steps)
  opts = check_opts(fname, opts, {t_mul = true, m_mul = true, alpha = true})
  local t_mul = check_positive(fname, "t_mul", opts.t_mul or 2.0)
  local m_mul = lib.check_number(fname, "m_mul", opts.m_mul or 1.0, 0, math.huge)
  local alpha = lib.check_number(fname, "alpha", opts.alpha or 0.0, 0, 1)
  return function()
    local i, fraction = sgdr_period(as_f32(step) / first_decay_steps, t_mul)
    local cosine = 0.5 * mf.pow(m_mul, i) * (1 + mf.cos(math.pi * fraction))
    return lr * ((1 - alpha) * cosine + alpha)
  end
end

lib.help("train.linear_cosine_decay", "training",
  "mf.train.linear_cosine_decay(lr, global_step, decay_steps " ..
  "[, {num_periods = 0.5, alpha = 0, beta = 0.001}])",
  "TensorFlow 1.x's linear cosine decay (Bello et al., Neural Optimizer Search): with " ..
  "s = min(step, decay_steps), lr * ((alpha + (decay_steps - s) / decay_steps) * 0.5 * " ..
  "(1 + cos(pi * 2 * num_periods * s / decay_steps)) + beta). A float32 scalar.",
  [[
lr = mf.train.linear_cosine_decay(1.0, 50, 100)
lr():item()                          --> 0.251]])
-- linear_cosine_decay(lr, global_step, decay_steps [, {num_periods = 0.5,
-- alpha = 0, beta = 0.001}]) (tf.compat.v1.train.linear_cosine_decay).
function train.linear_cosine_decay(lr, step, decay_steps, opts)
  local fname = "linear_cosine_decay"
  step = step_arg(fname, step)
  check_rate(fname, lr)
  check_positive(fname, "decay_steps", decay_steps)
  opts = check_opts(fname, opts, {num_periods = true, alpha = true, beta = true})
  local periods = lib.check_number(fname, "num_periods", opts.num_periods or 0.5, 0, math.huge)
  local alpha = lib.check_number(fname, "alpha", opts.alpha or 0.0, 0, math.huge)
  local beta = lib.check_number(fname, "beta", opts.beta or 0.001, 0, math.huge)
  return function()
    local s = mf.minimum(as_f32(step), decay_steps)
    local linear = (decay_steps - s) / decay_steps
    local cosine = 0.5 * (1 + mf.cos(math.pi * 2 * periods * s / decay_steps))
    return lr * ((alpha + linear) * cosine + beta)
  end
end

-- ---- AdamW ------------------------------------------------------------------------------

lib.help("train.AdamW", "training",
  "mf.train.AdamW(lr, {weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8, " ..
  "epsilon_placement = \"tensorflow\", exclude_from_weight_decay})",
  "Adam with decoupled weight decay (Loshchilov and Hutter, as Keras's and PyTorch's " ..
  "AdamW): apply_gradients shrinks each variable by lr * weight_decay times its value " ..
  "before the step and applies TensorFlow's Adam update (AdamOptimizer); a step Adam " ..
  "refuses (a gradient that does not fit, a bad option) changes nothing. lr and " ..
  "weight_decay take a number, " ..
  "a tensor, a Variable or a function; compute_gradients, minimize and get_slot are " ..
  "Adam's. exclude_from_weight_decay (Keras 3's): an array of Variables and name " ..
  "patterns whose variables get no decay (biases, norms: {\"bias\", \"norm\"}); a pattern " ..
  "is a Lua pattern found anywhere in the Variable's name (Keras uses Python regular " ..
  "expressions: plain names mean the same). opt:exclude_from_weight_decay{var_list, " ..
  "var_names} adds more, as Keras's method. epsilon_placement = \"pytorch\" adds epsilon " ..
  "to the bias-corrected square root as torch.optim.AdamW does (lr/(1-b1^t) * m / " ..
  "(sqrt(v)/sqrt(1-b2^t) + eps)); the default, \"tensorflow\", adds it before the bias " ..
  "correction (Keras's AdamW, TensorFlow's epsilon hat). The two agree when epsilon is " ..
  "small beside sqrt(v).",
  [[
w = mf.Variable({1.0})
opt = mf.train.AdamW(0.1, {weight_decay = 0.5})
opt:apply_gradients{{mf.tensor{0.0}, w}}
w                                    --> {0.95}]])
local AdamW = {}
AdamW.__index = AdamW
AdamW.__name = "mf.train.AdamW"

local function is_variable(v)
  local mt = type(v) == "userdata" and getmetatable(v)
  return type(mt) == "table" and mt.__name == "mf.Variable"
end

-- The value of a hyperparameter: a number, a tensor or Variable, or a function.
local function value_of(h)
  if type(h) == "function" then return h() end
  return h
end

-- AdamW(lr, {weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8,
-- epsilon_placement}):
-- before each Adam update, var <- var - lr * weight_decay * var (decoupled
-- from the gradient: Keras's and PyTorch's AdamW). lr and weight_decay take
-- a number, a tensor, a Variable or a function.
function train.AdamW(lr, opts)
  local fname = "AdamW"
  opts = check_opts(fname, opts, {weight_decay = true, beta1 = true, beta2 = true,
                                  epsilon = true, epsilon_placement = true, name = true,
                                  exclude_from_weight_decay = true})
  local wd = opts.weight_decay or 0.01
  local adam = train.AdamOptimizer(lr, {beta1 = opts.beta1, beta2 = opts.beta2,
                                        epsilon = opts.epsilon, name = opts.name,
                                        epsilon_placement = opts.epsilon_placement})
  local self = setmetatable({adam = adam, lr = lr, weight_decay = wd, excluded = {},
                             excluded_names = {}}, AdamW)
  local ex = opts.exclude_from_weight_decay
  if ex ~= nil then
    if type(ex) ~= "table" or lib.is_tensor(ex) then
      fail(fname, "exclude_from_weight_decay must be an array of Variables and name " ..
           "patterns, got %s", lib.is_tensor(ex) and "a tensor" or type(ex))
    end
    local vars, names = {}, {}
    for i, e in ipairs(ex) do
      if type(e) == "string" then names[#names + 1] = e else vars[#vars + 1] = e end
      if type(e) ~= "string" and not is_variable(e) then
        fail(fname, "exclude_from_weight_decay[%d] must be a Variable or a name pattern, " ..
             "got %s", i, type(e))
      end
    end
    self:exclude_from_weight_decay{var_list = vars, var_names = names}
  end
  return self
end

-- opt:exclude_from_weight_decay{var_list = {...}, var_names = {...}} (Keras 3's
-- method): these Variables, and those whose name holds one of the patterns,
-- get no decay.
function AdamW:exclude_from_weight_decay(args)
  local fname = "exclude_from_weight_decay"
  args = check_opts(fname, args, {var_list = true, var_names = true})
  for i, v in ipairs(args.var_list or {}) do
    if not is_variable(v) then
      fail(fname, "var_list[%d] must be a Variable, got %s", i, type(v))
    end
    self.excluded[#self.excluded + 1] = v
  end
  for i, name in ipairs(args.var_names or {}) do
    if type(name) ~= "string" then
      fail(fname, "var_names[%d] must be a string (a name pattern), got %s", i, type(name))
    end
    local ok, err = pcall(string.find, "", name)
    if not ok then fail(fname, "var_names[%d] is not a valid Lua pattern: %s", i, err) end
    self.excluded_names[#self.excluded_names + 1] = name
  end
end

-- Whether Variable 'v' gets the decay.
function AdamW:decays(v)
  for _, x in ipairs(self.excluded) do
    if x == v then return false end   -- the same Variable, through any box (__eq)
  end
  for _, pattern in ipairs(self.excluded_names) do
    if v.name and v.name:find(pattern) then return false end
  end
  return true
end

-- The nonfinite policy for eager gradients, checked before Adam's own check
-- so that its error names AdamW: an error raises, "skip" returns false.
-- Symbolic gradients (graphs, traces) are Adam's to check: the decay is part
-- of each Apply node, which skips or fails as AdamOptimizer's do. Returns
-- true, or false to skip the step.
local function nonfinite_gate(gv, policy)
  for i, p in ipairs(gv) do
    local g = type(p) == "table" and p[1]
    if lib.is_tensor(g) and g.name == nil and policy ~= "apply" then
      -- g * 0 is 0 where g is finite and NaN where it is not: the sum is
      -- finite exactly when every element is (no bool tensor, no float64 copy)
      if not mf.is_finite(mf.reduce_sum(g * 0)):item() then
        if policy == "skip" then return false end
        fail("apply_gradients", "AdamW: the gradient of variable '%s' (pair %d) holds NaN or " ..
             "Inf; nothing was applied (nonfinite = \"error\"; \"skip\" skips such steps, " ..
             "\"apply\" writes them)", p[2] and p[2].name or "?", i)
      end
    end
  end
  return true
end

-- Adam's apply_gradients; its errors are raised at the caller's line.
local function adam_apply(adam, gv, opts)
  local ok, res = pcall(adam.apply_gradients, adam, gv, opts)
  if ok then return res end
  lib.raise(type(res) == "string" and res:gsub("^@?lib/[%w_]+%.lua:%d+: ", "") or res)
end

function AdamW:apply_gradients(gv, opts)
  if type(gv) ~= "table" then
    fail("apply_gradients", "expected an array of {grad, var} pairs, got %s", type(gv))
  end
  local policy = type(opts) == "table" and opts.nonfinite or "error"
  local rate = value_of(self.lr) * value_of(self.weight_decay)
  if not nonfinite_gate(gv, policy) then return nil end
  -- Each decayed pair carries its rate: Adam's Apply op subtracts rate times
  -- the value from before the step after the step, in its one pass (PyTorch's
  -- p - lr*wd*p - step, rounded as the two ops would be), eager, in graphs and
  -- traced alike; Adam checks every pair before it writes, so a step it
  -- refuses changes nothing.
  local pairs = {}
  for i, p in ipairs(gv) do
    local decayed = type(p) == "table" and p[1] ~= nil and is_variable(p[2]) and
                    self:decays(p[2])
    pairs[i] = decayed and {p[1], p[2], rate} or p
  end
  return adam_apply(self.adam, pairs, opts)
end

function AdamW:compute_gradients(...) return self.adam:compute_gradients(...) end

function AdamW:minimize(loss, opts)
  local gv = self.adam:compute_gradients(loss, opts and {var_list = opts.var_list})
  return self:apply_gradients(gv, opts and {global_step = opts.global_step,
                                            nonfinite = opts.nonfinite})
end

function AdamW:get_slot(...) return self.adam:get_slot(...) end
function AdamW:get_slot_names() return self.adam:get_slot_names() end
lib.publish_methods(AdamW, {"apply_gradients", "minimize", "get_slot_names"})
function AdamW:__tostring()
  return string.format("AdamW(weight_decay=%s) over %s", tostring(self.weight_decay),
                       tostring(self.adam))
end
