-- test_op_table.lua — walks the op table (mf.test.ops()): every op with a
-- Lua name is reachable where its descriptor says (mf.X or mf.nn.X, and as
-- a method when it is one), and every one (all bound by the schema binder)
-- refuses one extra positional argument and an unknown option key
-- with an error naming the function (not guessed from the Lua stack: the
-- calls go through pcall, a wrapper and a method, and still name it).
local T = dofile("tests/lua/harness.lua")

local function lookup(path)
  local f = mf
  for part in path:gmatch("[^.]+") do f = f and f[part] end
  return f
end

-- The arguments of a call with 'n' positional values: tensors for the
-- inputs (a list for a variadic op), then nils where attributes go.
local function args_for(op)
  local x = mf.ones{2, 2}
  if op.lua == "concat" or op.lua == "stack" then return {{x, x}} end
  return {x, x, x}
end

local ops = mf.test.ops()

T.test("the walk sees the ops of every family", function()
  local seen = {}
  for _, op in ipairs(ops) do seen[op.lua] = op end
  for _, name in ipairs({"add", "relu", "reduce_sum", "matmul", "transpose", "reshape", "cast",
                         "concat", "nn.max_pool", "nn.conv2d", "nn.softmax", "where", "slice",
                         "one_hot", "clip_by_value", "clip_by_norm", "clip_by_average_norm",
                         "nn.l2_loss", "nn.sigmoid_cross_entropy_with_logits",
                         "nn.conv2d_transpose"}) do
    T.ok(seen[name], "op table has no Lua name " .. name)
  end
  T.ok(#ops >= 60, "expected at least 60 ops with a Lua name, got " .. #ops)
end)

T.test("every op with a Lua name is bound there (and as a method when it is one)", function()
  local t = mf.ones{2}
  for _, op in ipairs(ops) do
    T.ok(type(lookup(op.lua)) == "function", "mf." .. op.lua .. " is not a function")
    if op.method then
      T.ok(type(t[op.fname]) == "function", "t:" .. op.fname .. " is not a method")
    end
    T.ok(op.summary ~= "", op.lua .. " has no summary in its descriptor")
  end
end)

-- help() of an op bound by the schema binder comes from its descriptor:
-- the summary, the example next to the descriptor (test_shell runs it) and
-- the signature and options generated from the schema. mf.trace is the one
-- Lua name that is also another function (tf.function), documented by hand.
T.test("every op the binder registers has its help from its descriptor", function()
  local help_text = T.help_text
  for _, op in ipairs(ops) do
    if op.lua ~= "trace" then
      T.ok(op.example and op.topic, op.lua .. ": no example or topic in its descriptor")
      local text = help_text(lookup(op.lua))
      T.ok(text:find("mf." .. op.lua .. "(", 1, true) and text:find("Example:", 1, true),
           op.lua .. ": help does not show its signature and example:\n" .. text)
      local flat = text:gsub("%s+", " ")
      T.ok(flat:find(op.summary:sub(2), 1, true), op.lua .. ": help does not show its summary")
    end
  end
  local m = help_text(mf.matmul)
  T.ok(m:find("mf.matmul(a, b [, {transpose_a, transpose_b}]) or a:matmul(...)", 1, true), m)
  T.ok(m:find("transpose_a: boolean, default false", 1, true), m)
  local r = help_text(mf.reduce_sum)
  T.ok(r:find("mf.reduce_sum(x [, axis [, keepdims]]) or x:reduce_sum(...)", 1, true), r)
  T.ok(r:find("keepdims: boolean, default false (also keep_dims)", 1, true), r)
  local c = help_text(mf.nn.conv2d):gsub("%s+", " ")
  T.ok(c:find("padding: \"VALID\" or \"SAME\", required", 1, true), c)
  T.ok(c:find("data_format: \"NHWC\" or \"NCHW\", default \"NHWC\"", 1, true), c)
  T.ok(help_text(mf.exp):find("mf.exp(x) or x:exp()\n\n  Elementwise e^x.", 1, true))
  -- A summary that starts with a variable keeps its case ("X" would be another name).
  T.ok(help_text(mf.nn.gelu):find("\n  x Phi(x), the Gaussian", 1, true), help_text(mf.nn.gelu))
  T.ok(help_text(mf.nn.log_softmax):find("\n  x - log(sum(exp(x)))", 1, true))
end)

-- Calls op with its full positional arguments and then 'last'; returns the
-- error (the call must fail) and the position of 'last'.
local function fails_with(op, last)
  local n = op.nargs
  local a = args_for(op)
  a[n + 1] = last
  local ok, err = pcall(lookup(op.lua), table.unpack(a, 1, n + 1))
  T.ok(not ok, op.lua .. " accepted " .. tostring(last) .. " after its arguments")
  err = tostring(err)
  T.ok(err:find("'" .. op.fname .. "'", 1, true) or err:find(op.fname .. ":", 1, true),
       op.lua .. ": the error does not name the function: " .. err)
  return err, n + 1
end

T.test("one extra positional argument is an error naming the function", function()
  for _, op in ipairs(ops) do
    local err, n = fails_with(op, 7)
    T.ok(err:find("bad argument #" .. n .. " to '" .. op.fname .. "' (no value expected",
                  1, true), op.lua .. ": " .. err)
  end
end)

T.test("an unknown option key is an error naming the function", function()
  for _, op in ipairs(ops) do
    local err = fails_with(op, {bogus = true})
    T.ok(err:find(op.fname .. ": unknown option 'bogus'", 1, true), op.lua .. ": " .. err)
  end
end)

T.test("the issue's examples", function()
  local x = mf.zeros{1, 2, 4, 4}
  -- NCHW pooling is honoured (pooled over H and W), and a bogus option is refused
  T.eq(mf.nn.max_pool(x, 2, 2, "VALID", {data_format = "NCHW"}).shape, {1, 2, 2, 2})
  T.eq(mf.nn.max_pool(mf.tensor{{{{1, 2}, {3, 4}}}}, 2, 2, "VALID", {data_format = "NCHW"}),
       {{{{4}}}})
  T.raises(mf.nn.max_pool, "max_pool: unknown option 'bogus' (known: ksize, strides, padding, "
           .. "data_format)", x, 2, 2, "VALID", {bogus = true})
  local t = mf.ones{2}
  T.raises(mf.relu, "bad argument #2 to 'relu' (no value expected", t, 5)
  T.raises(function() return mf.ones{2}:exp(3) end, "bad argument #2 to 'exp'")
  T.raises(function() return t:size(1) end, "bad argument #2 to 'size'")
  -- under pcall, through a wrapper: the binding names itself
  local ok, err = pcall(function() return mf.tensor({1}):reduce_sum({bogus = 1}) end)
  T.ok(not ok and err:find("reduce_sum: unknown option 'bogus'", 1, true), tostring(err))
end)

T.done()
