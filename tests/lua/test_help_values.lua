-- test_help_values.lua — help(value) for what a newcomer passes to it
-- besides mf's functions: methods of the objects met at the prompt
-- (sess.run, opt.minimize, ds.batch), the tables of mf (mf.nn, mf.train),
-- Lua's own functions (print), and the width of help()'s topic list.
-- test_shell.lua checks the entries themselves and runs their examples.
local T = dofile("tests/lua/harness.lua")

-- Runs help(...) and returns what it printed.
local function help_text(...)
  local out = {}
  local saved = print
  print = function(...)
    local parts = table.pack(...)
    for i = 1, parts.n do parts[i] = tostring(parts[i]) end
    out[#out + 1] = table.concat(parts, "\t")
  end
  local ok, err = pcall(help, ...)
  print = saved
  assert(ok, err)
  return table.concat(out, "\n")
end

local function has(text, s)
  return text:find(s, 1, true) ~= nil
end

T.test("a method gets its class's entry, or its own", function()
  local g = mf.Graph()
  local sess = mf.Session(g)
  local text = help_text(sess.run)
  T.ok(has(text, "run is a method of mf.Session; help for Session:"), text)
  T.ok(has(text, "sess:run(fetches"), text)
  text = help_text(g.render)
  T.ok(has(text, "render is a method of mf.Graph; help for render:"), text)
  T.ok(has(text, "g:render(path)"), text)
  local opt = mf.train.AdamOptimizer(0.1)
  text = help_text(opt.minimize)
  T.ok(has(text, "minimize is a method of mf.train.Optimizer; help for train.Optimizer:"), text)
  local tape = mf.GradientTape()
  text = help_text(tape.gradient)
  T.ok(has(text, "help for GradientTape:") and has(text, "mf.GradientTape{"), text)
  local v = mf.Variable(1.0)
  text = help_text(v.assign)
  T.ok(has(text, "assign is a method of mf.Variable; help for Variable:"), text)
  local p = mf.progress{total = 1, tty = false}
  T.ok(has(help_text(p.update), "help for Progress:"), help_text(p.update))
  local ds = mf.data.Dataset.from_tensor_slices(mf.ones{4, 2})
  text = help_text(ds.batch)
  T.ok(has(text, "ds:batch(n"), text)
  T.ok(has(help_text("data.Dataset.batch"), "ds:batch(n"), help_text("data.Dataset.batch"))
end)

T.test("mf's tables: their topic or entry", function()
  T.ok(has(help_text(mf.nn), "nn: neural-network ops"), help_text(mf.nn))
  T.ok(has(help_text(mf.nn), "mf.nn.conv2d("), help_text(mf.nn))
  T.ok(has(help_text(mf.train), "training: optimizers"), help_text(mf.train))
  T.ok(has(help_text(mf.data), "data: loading data"), help_text(mf.data))
  T.ok(has(help_text(mf.random), "random: seeded random"), help_text(mf.random))
  T.ok(has(help_text(mf.initializers), "mf.initializers."), help_text(mf.initializers))
  T.ok(has(help_text(mf.data.Dataset), "ds:batch(n"), help_text(mf.data.Dataset))
end)

T.test("Lua's own functions point to the Lua manual", function()
  -- (help_text replaces print while help runs, so ask about ipairs)
  local text = help_text(ipairs)
  T.ok(has(text, "ipairs is part of Lua, not of mf"), text)
  T.ok(has(text, "manual.html#pdf-ipairs"), text)
  text = help_text(string.format)
  T.ok(has(text, "string.format is part of Lua"), text)
  -- a user's own function (even one stored in a global) is not Lua's:
  -- help shows where it is defined and its leading comment (issue #30)
  function users_own() end
  text = help_text(users_own)
  T.ok(has(text, "a Lua function defined at tests/lua/test_help_values.lua:"), text)
  T.ok(has(text, "\n  -- a user's own function (even one stored in a global) is not Lua's:\n"), text)
  T.ok(has(text, "\n  function users_own() end"), text)
  T.ok(has(help_text({}), "no entry for this table"), help_text({}))
end)

T.test("help() and topic headers fit 80 columns", function()
  for _, text in ipairs{help_text(), help_text("graph"), help_text("nn")} do
    local line_no = 0
    for line in (text .. "\n"):gmatch("([^\n]*)\n") do
      line_no = line_no + 1
      -- the topic header and list are wrapped; entry signatures are not
      if line_no <= 40 and not line:find("^  mf%.") then
        T.ok(#line <= 80, "line longer than 80 columns: " .. line)
      end
    end
  end
end)

T.done()
