-- test_honest_pictures.lua — what moonflow shows is true and readable: the
-- schedule marks fed placeholders and stays aligned with long names; % of
-- peak never exceeds 100; print of several values, of tables holding
-- Variables and t:totable() read well; mf.load returns only the table.
-- (The tape listing is in test_register_gradient.lua.)
local T = dofile("tests/lua/harness.lua")
local exe = assert(arg and arg[-1], "run with the moonflow program")

local function run(code)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(code)
  f:close()
  local p = assert(io.popen(exe .. " " .. path .. " 2>&1"))
  local out = p:read("a")
  p:close()
  os.remove(path)
  return out
end

T.test("the schedule marks fed placeholders and stays aligned", function()
  local g = mf.Graph()
  local a, out
  g:as_default(function()
    a = mf.placeholder("float32", {-1, 2}, "a")
    mf.name_scope("a_rather_long_scope_name", function()
      out = mf.reduce_sum(mf.relu(a) * 2)
    end)
  end)
  mf.config{fusion = false}   -- each node on its own (test_fusion.lua: the fused one)
  local _, sched = mf.Session(g):run(out, {[a] = mf.tensor{{1, -2}}}, {schedule = true})
  mf.config{fusion = true}
  T.eq(sched.fed[1].name, "a"); T.eq(sched.fed[1].op, "Placeholder")
  T.eq(sched[1].name, "a_rather_long_scope_name/relu")   -- indexes are the executed steps
  local text = tostring(sched)
  T.ok(text:find("%-  a%s+Placeholder%s+fed, not run"), text)
  local col
  for line in text:gmatch("[^\n]+") do
    local op_at = line:find(" Relu ") or line:find(" Const ") or line:find(" Mul ")
                  or line:find(" Sum ") or line:find(" op ") or line:find(" Placeholder ")
    T.ok(op_at, line)
    col = col or op_at
    T.eq(op_at, col, 0, "op column moved in:\n" .. text)
  end
end)

T.test("% of peak never exceeds 100 (GEMMs and op rows)", function()
  local prof = mf.profile(function()
    local a = mf.random.normal{128, 128}
    for _ = 1, 20 do a = mf.matmul(a, a) * 0.01 end   -- small GEMMs fit the cache
  end)
  for _, g in ipairs(prof:gemms()) do
    if g.peak_pct then T.ok(g.peak_pct <= 100, "GEMM at " .. g.peak_pct .. "% of peak") end
  end
  for _, r in ipairs(prof:rows()) do
    if r.peak_pct then T.ok(r.peak_pct <= 100, r.op .. " at " .. r.peak_pct .. "%") end
  end
  T.ok(tostring(prof):find("threads?: best of %d+ 1024x1024x1024 SGEMMs"), tostring(prof))
end)

T.test("print of several values, tables of Variables, totable", function()
  local out = run([[
a = mf.tensor{1, 2}
w = mf.Variable({0.5, 2}, {name = "w"})
print(a, w, 3)
print({w, b = a})
print(a)
print(mf.tensor{{1, 2}, {3, 4}}:totable())
]])
  T.ok(out:find("mf.Tensor([1. 2.], shape=(2,), dtype=float32)\tmf.Variable('w', [0.5 2.], "
                .. "shape=(2,), dtype=float32)\t3\n", 1, true), out)
  T.ok(out:find("{mf.Variable('w', [0.5 2.], shape=(2,), dtype=float32), b = mf.Tensor([1. 2.]",
                1, true), out)
  T.ok(out:find("\n[1. 2.]\nshape=(2,), dtype=float32\n", 1, true), out)   -- one value: full
  T.ok(out:find("{{1.0, 2.0}, {3.0, 4.0}}", 1, true), out)   -- print shows a table's contents
  T.eq(mf.tensor({0.1}, "float64"):totable()[1], 0.1)
end)

T.test("mf.load returns only the table", function()
  local p = os.tmpname()
  mf.save(p, {x = mf.ones{2}}, {note = "n"})
  T.eq(select("#", mf.load(p)), 1)
  local t, meta = mf.load(p, {metadata = true})
  T.eq(t.x, {1, 1}); T.eq(meta.note, "n")
  T.raises(function() mf.load(p, {meta = true}) end, "load: unknown option 'meta'")
  os.remove(p)
end)

T.done()
