-- test_saver.lua — mf.train.Saver in eager mode: a save / restore round trip
-- of an Adam training (slots, beta powers, global step) that continues
-- exactly, also into a fresh optimizer with no slots yet; non-trainable
-- Variables; the list, map and options forms; name clashes; restore errors
-- that list every problem and change nothing; corrupt files; a failing save
-- that leaves the old file.
local T = dofile("tests/lua/harness.lua")

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p '" .. dir .. "'"))
local function tpath(name) return dir .. "/" .. name end

local function read_bytes(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local X = mf.tensor({{1, 2}, {3, -1}, {0.5, 4}}, "float64")
local Y = mf.tensor({{1}, {-2}, {3}}, "float64")

-- A small regression problem: returns w, b, frozen, loss function.
local function problem()
  local w = mf.Variable(mf.tensor({{0.3}, {-0.2}}, "float64"), {name = "w"})
  local b = mf.Variable(mf.tensor({0.1}, "float64"), {name = "b"})
  local frozen = mf.Variable(mf.tensor({7, 8}, "float64"), {name = "frozen", trainable = false})
  local function loss()
    local r = mf.matmul(X, w) + b - Y + mf.reduce_sum(frozen) * 0
    return mf.reduce_mean(r * r)
  end
  return w, b, frozen, loss
end

local function steps(opt, loss, n, gs)
  for _ = 1, n do opt:minimize(loss, {global_step = gs}) end
end

T.test("Adam: save, train, restore, train again gives the same values", function()
  local gs = mf.train.global_step()
  gs:assign(mf.tensor(0, "int64"))
  local w, b, frozen, loss = problem()
  local opt = mf.train.AdamOptimizer(0.05)
  steps(opt, loss, 3, gs)
  local saver = mf.train.Saver{var_list = {w, b, frozen}, optimizers = {opt}}
  T.eq(tostring(saver), "Saver(3 variables, 1 optimizer)")
  T.eq(saver:save(tpath("a.st")), tpath("a.st"))
  local names = {}
  for k in pairs(mf.load(tpath("a.st"))) do names[#names + 1] = k end
  table.sort(names)
  T.eq(table.concat(names, " "), "b b/Adam b/Adam_1 beta1_power beta2_power frozen "
       .. "global_step w w/Adam w/Adam_1")
  steps(opt, loss, 2, gs)
  local w5, b5, m5 = w:value(), b:value(), opt:get_slot(w, "m"):value()
  T.eq(gs:value():item(), 5)
  T.eq(#saver:restore(tpath("a.st")), 0)
  T.eq(gs:value():item(), 3)
  steps(opt, loss, 2, gs)
  T.eq(w:value(), w5, 0)
  T.eq(b:value(), b5, 0)
  T.eq(opt:get_slot(w, "m"):value(), m5, 0)
  T.eq(frozen:value(), {7, 8})

  -- A fresh optimizer (no slots yet) and fresh Variables, as in a new process.
  local w2, b2, frozen2, loss2 = problem()
  local opt2 = mf.train.AdamOptimizer(0.05)
  T.ok(opt2:get_slot(w2, "m") == nil)
  local saver2 = mf.train.Saver({w = w2, b = b2, frozen = frozen2}, {optimizers = {opt2}})
  saver2:restore(tpath("a.st"))
  T.ok(opt2:get_slot(w2, "v") ~= nil)
  T.eq(opt2:get_slot(w2, "m"):value(), opt:get_slot(w, "m"):value() * 0
       + mf.load(tpath("a.st"))["w/Adam"], 0)
  steps(opt2, loss2, 2, gs)
  T.eq(w2:value(), w5, 0)
  T.eq(b2:value(), b5, 0)
end)

T.test("trainable=false Variables are saved and restored; slots only where made", function()
  local w, _, frozen, loss = problem()
  local opt = mf.train.MomentumOptimizer(0.1, 0.9)
  steps(opt, loss, 1)
  local saver = mf.train.Saver({w, frozen}, {optimizers = {opt}})
  saver:save(tpath("f.st"))
  local t = mf.load(tpath("f.st"))
  T.ok(t["w/Momentum"] ~= nil and t["frozen/Momentum"] == nil)
  frozen:assign(mf.tensor({0, 0}, "float64"))
  saver:restore(tpath("f.st"))
  T.eq(frozen:value(), {7, 8})
  T.ok(opt:get_slot(frozen, "momentum") == nil)
end)

T.test("names: map keys, clashes name both entries", function()
  local a = mf.Variable({1, 2}, {name = "x"})
  local c = mf.Variable({3}, {name = "x"})
  T.raises(function() mf.train.Saver({a, c}) end, "two Variables are saved as 'x'")
  local s = mf.train.Saver({first = a, second = c})
  s:save(tpath("m.st"))
  T.eq(mf.load(tpath("m.st")).second, {3})
  local g = mf.Variable({1}, {name = "v"})
  local clash = mf.train.Saver({global_step = g})
  mf.train.global_step()
  T.raises(function() clash:save(tpath("c.st")) end,
           "two entries are named 'global_step': Variable 'v' and the global step")
  T.raises(function() mf.train.Saver({}) end, "no Variables to save")
  T.raises(function() mf.train.Saver({a, 3}) end, "var_list[2] must be a Variable")
  T.raises(function() mf.train.Saver({optimizers = {}}) end, "give the Variables to save")
  T.raises(function() mf.train.Saver({a}, {optimizer = {}}) end, "unknown option 'optimizer'")
  T.raises(function() mf.train.Saver({var_list = {a}, optimizers = {1}}) end,
           "optimizers[1] must be an optimizer")
  T.raises(function() s:save() end, "expected a path string")
end)

T.test("restore errors list every problem and assign nothing", function()
  local w = mf.Variable(mf.tensor({{1, 2}}, "float64"), {name = "w"})
  local b = mf.Variable({5}, {name = "b"})
  local z = mf.Variable({0}, {name = "z"})
  mf.save(tpath("bad.st"), {w = mf.tensor({1, 2, 3}, "float64"), b = mf.tensor({9}),
                            extra = mf.tensor(1)})
  local s = mf.train.Saver({w, b, z})
  local ok, err = pcall(s.restore, s, tpath("bad.st"))
  T.ok(not ok)
  err = tostring(err)
  T.ok(err:find("does not fit the saver (2 problems)", 1, true), err)
  T.ok(err:find("missing 'z' (Variable 'z')", 1, true), err)
  T.ok(err:find("'w': the file has float64 (3,), Variable 'w' is float64 (1,2)", 1, true), err)
  T.eq(b:value(), {5})
  T.raises(function() s:restore(tpath("bad.st"), {strict = true}) end,
           "unexpected 'extra' in the file (strict)")
  local s2 = mf.train.Saver({b = b})
  local extras = s2:restore(tpath("bad.st"))
  T.eq(b:value(), {9})
  T.eq(table.concat(extras, " "), "extra w")
  T.raises(function() s2:restore(tpath("bad.st"), {strict = true}) end, "(2 problems)")
  T.raises(function() s2:restore(tpath("nope.st")) end, "Saver.restore: load:")
end)

T.test("corrupt and truncated files are clear errors", function()
  local v = mf.Variable({1, 2, 3}, {name = "v"})
  local s = mf.train.Saver({v})
  s:save(tpath("ok.st"))
  local bytes = read_bytes(tpath("ok.st"))
  local f = assert(io.open(tpath("trunc.st"), "wb"))
  f:write(bytes:sub(1, #bytes - 4))
  f:close()
  T.raises(function() s:restore(tpath("trunc.st")) end, "Saver.restore: load:")
  f = assert(io.open(tpath("junk.st"), "wb"))
  f:write(string.pack("<I8", 5) .. "{{{{{")
  f:close()
  T.raises(function() s:restore(tpath("junk.st")) end, "Saver.restore: load:")
  T.eq(v:value(), {1, 2, 3})
end)

T.test("an interrupted save leaves the old file", function()
  local v = mf.Variable({1, 2}, {name = "v"})
  local s = mf.train.Saver({v})
  s:save(tpath("keep.st"))
  local before = read_bytes(tpath("keep.st"))
  v:assign(mf.tensor({3, 4}))
  mf.test.fail_next_save()
  T.raises(function() s:save(tpath("keep.st")) end, "simulated failure")
  T.eq(read_bytes(tpath("keep.st")), before)
  local p = io.popen("ls '" .. dir .. "'")
  local listing = p:read("a")
  p:close()
  T.ok(not listing:find("tmp"), listing)
  s:save(tpath("keep.st"))
  T.eq(mf.load(tpath("keep.st")).v, {3, 4})
end)

-- A script run by a fresh moonflow process: 'mode' "save" trains 3 steps and
-- saves; "restore" restores into new objects; both then train 2 steps and
-- print w, b and the global step.
local script = [[
local mode, path = ...
local X = mf.tensor({{1, 2}, {3, -1}, {0.5, 4}})
local Y = mf.tensor({{1}, {-2}, {3}})
local w = mf.Variable({{0.3}, {-0.2}}, {name = "w"})
local b = mf.Variable({0.1}, {name = "b"})
local gs = mf.train.global_step()
local opt = mf.train.AdamOptimizer(0.05)
local function loss() local r = mf.matmul(X, w) + b - Y; return mf.reduce_mean(r * r) end
local saver = mf.train.Saver{var_list = {w, b}, optimizers = {opt}}
if mode == "save" then
  for _ = 1, 3 do opt:minimize(loss, {global_step = gs}) end
  saver:save(path)
else
  saver:restore(path)
end
for _ = 1, 2 do opt:minimize(loss, {global_step = gs}) end
local function s(t) return string.format("%.9g", t:value():item()) end
print(string.format("%.9g %.9g %s %s", w:value()[1][1], w:value()[2][1], s(b), s(gs)))
]]

T.test("a fresh process restores the training exactly", function()
  local exe = arg and arg[-1]
  if not exe then return end
  local sp = tpath("run.lua")
  local f = assert(io.open(sp, "w"))
  f:write(script)
  f:close()
  local function run(mode)
    local p = io.popen(string.format("'%s' '%s' %s '%s' 2>&1", exe, sp, mode, tpath("p.st")))
    local out = p:read("a")
    p:close()
    return out
  end
  local a = run("save")
  local b = run("restore")
  T.ok(a:find("^%-?%d") and a:find(" 5\n$"), a)
  T.eq(b, a)
end)

T.test("a Saver of eager Variables refuses a Session; a graph Saver asks for one", function()
  local w = mf.Variable({1.0, 2.0}, {name = "w"})
  local eager = mf.train.Saver{w}
  local g = mf.Graph()
  local init, gsaver
  g:as_default(function()
    mf.Variable({3.0}, {name = "v"})
    mf.train.global_step()
    init = mf.global_variables_initializer()
    gsaver = mf.train.Saver()
  end)
  local sess = mf.Session(g)
  sess:run(init)
  mf.train.global_step()   -- an eager step as well: it used to clash with the graph's
  local p = tpath("mode.st")
  T.raises(function() eager:save(sess, p) end, "Saver.save: this Saver holds eager Variables, "
           .. "which keep their own values: call saver:save(path) without the Session")
  T.raises(function() eager:restore(sess, p) end, "Saver.restore: this Saver holds eager "
           .. "Variables")
  T.ok(io.open(p) == nil, "nothing written")
  T.raises(function() gsaver:save(p) end, "Saver.save: this Saver holds graph variables, "
           .. "whose values live in a Session: call saver:save(sess, path)")
  T.raises(function() gsaver:restore(p) end, "call saver:restore(sess, path)")
  eager:save(p)
  w:assign(mf.tensor({0, 0}))
  eager:restore(p)
  T.eq(w:value(), {1, 2})
  gsaver:save(sess, p)
  T.eq(mf.load(p).v, {3})
end)

T.test("mf.train.Saver() in eager mode says what to give; no optimizers, no slots", function()
  T.raises(function() mf.train.Saver() end, "Saver: give the Variables to save: "
           .. "mf.train.Saver{w, b} or mf.train.Saver{var_list = {w, b}, optimizers = {opt}} "
           .. "(eager Variables are not tracked")
  local w = mf.Variable({1.0}, {name = "w"})
  local opt = mf.train.AdamOptimizer(0.1)
  opt:minimize(function() return mf.reduce_sum(w * w) end)
  local p = tpath("noslots.st")
  mf.train.Saver{w}:save(p)
  T.ok(mf.load(p)["w/Adam"] == nil and mf.load(p).w ~= nil, "only w (and the global step)")
  mf.train.Saver({w}, {optimizers = {opt}}):save(p)
  T.ok(mf.load(p)["w/Adam"] ~= nil, "slots with optimizers")
end)

os.execute("rm -rf '" .. dir .. "'")
T.done()
