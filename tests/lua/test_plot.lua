-- test_plot.lua — mf.plot (braille text and SVG) and mf.progress (plain
-- lines, in-place redraws, rate limiting), their argument errors, and the
-- examples of their help entries. Output of mf.progress goes to the C
-- stdout, so those checks run a child moonflow (arg[-1]) and read its output.
local T = dofile("tests/lua/harness.lua")

local exe = arg[-1]

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- Runs Lua code in a child moonflow; returns its output and whether it exited 0.
local function child(code)
  local p = assert(io.popen(quote(exe) .. " -e " .. quote(code) .. " 2>&1"))
  local out = p:read("a")
  local ok = p:close()
  return out, ok
end

local function lines_of(text)
  local lines = {}
  for line in text:gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  return lines
end

local history = {}
for i = 1, 50 do history[i] = 1 / i end

T.test("text plot: size, labels, axis", function()
  local text = mf.plot(history, {title = "loss", width = 30, height = 6, print = false})
  local lines = lines_of(text)
  T.eq(#lines, 1 + 6 + 2, 0, "title, 6 rows, axis and step labels")
  T.ok(lines[1]:find("loss", 1, true), "title")
  T.ok(lines[2]:find("^%s*1 \u{2524}"), "max label on the top row: " .. lines[2])
  T.ok(lines[7]:find("^%s*0%.02 \u{2524}"), "min label on the bottom row: " .. lines[7])
  local width = utf8.len(lines[2])
  for r = 2, 8 do T.eq(utf8.len(lines[r]), width, 0, "row " .. r .. " width") end
  T.eq(width, #"0.02" + 2 + 30, 0, "label, space, axis, 30 cells")
  T.ok(lines[9]:find("^%s+1%s+50$"), "first and last step: " .. lines[9])
  -- The curve starts at the top left and ends at the bottom right.
  T.ok(utf8.codepoint(lines[2], utf8.offset(lines[2], #"0.02" + 3)) >= 0x2801, "top-left dot")
  T.ok(utf8.codepoint(lines[7], utf8.offset(lines[7], -1)) >= 0x2801, "bottom-right dot")
end)

T.test("text plot: several series, legend, tensors, defaults", function()
  local text = mf.plot({history, mf.tensor(history) * 2}, {labels = {"train", "test"},
                       print = false, color = false})
  local lines = lines_of(text)
  T.eq(#lines, 12 + 2 + 1, 0, "12 rows by default, axis, legend")
  T.ok(lines[#lines]:find("train", 1, true) and lines[#lines]:find("test", 1, true), "legend")
  T.ok(not text:find("\27", 1, true), "no colour codes with color = false")
  T.ok(mf.plot({history, history}, {print = false, color = true}):find("\27[31m", 1, true),
       "colours on request")
  local v = mf.Variable(mf.tensor{1, 2, 3})
  T.eq(#lines_of(mf.plot(v, {height = 3, print = false})), 5, 0, "a Variable plots")
  T.ok(mf.plot({5, 5, 5}, {print = false}), "a flat series plots")
  T.ok(mf.plot({7}, {print = false}), "one point plots")
end)

T.test("svg: well-formed XML with one point per step", function()
  local path = os.tmpname()
  local values = {}
  for i = 1, 40 do values[i] = math.exp(-i / 10) end
  T.eq(mf.plot(values, {file = path, title = "loss <&> \"quoted\""}), path)
  local svg = io.open(path):read("a")
  local points = svg:match('<polyline[^>]-points="([^"]*)"')
  local count = select(2, points:gsub("[-%d.]+,[-%d.]+", ""))
  T.eq(count, 40, 0, "points in the polyline")
  T.ok(svg:find("loss &lt;&amp;&gt; &quot;quoted&quot;", 1, true), "title escaped")
  -- A NaN splits the line in two polylines; labels make a legend.
  values[20] = 0 / 0
  mf.plot({values, mf.tensor(values) * 0.5}, {file = path, labels = {"a", "b"}})
  svg = io.open(path):read("a")
  T.eq(select(2, svg:gsub("<polyline", "")), 4, 0, "two runs per series")
  T.ok(svg:find(">a</text>", 1, true) and svg:find(">b</text>", 1, true), "legend")
  -- A real XML parser reads it (when python3 is installed).
  local have_python = os.execute("command -v python3 > /dev/null 2>&1")
  local ok = not have_python or os.execute("python3 -c " .. quote("import sys, xml.etree.ElementTree as E; " ..
    "r = E.parse(sys.argv[1]).getroot(); " ..
    "assert r.tag == '{http://www.w3.org/2000/svg}svg', r.tag; " ..
    "assert len(r.findall('.//{http://www.w3.org/2000/svg}polyline')) == 4") ..
    " " .. quote(path) .. " 2>&1")
  T.ok(ok, "python3 xml parses the SVG")
  os.remove(path)
  T.ok(not io.open(path .. ".tmp"), "no temporary file left")
end)

T.test("plot: bad input errors", function()
  T.raises(mf.plot, "bad argument #1 to") -- Lua names it 'plot' or 'moonflow.plot'
  T.raises(mf.plot, "(value expected)")
  T.raises(mf.plot, "plot: series 1 is empty", {})
  T.raises(mf.plot, "plot: series 1, element 2: expected a number, got string", {1, "a"})
  T.raises(mf.plot, "plot: series 2: expected an array of numbers or a 1-D tensor, got string",
           {{1, 2}, "x"})
  T.raises(mf.plot, "plot: series 1 must be a 1-D tensor, got rank 2", mf.zeros{2, 2})
  T.ok(pcall(mf.plot, {3, 1, 2}), "no options: prints")
  T.raises(mf.plot, "plot: nothing to draw: no series has a finite value", {0 / 0, 1 / 0})
  T.raises(mf.plot, "plot: unknown option 'widht'", {1, 2}, {widht = 3})
  T.raises(mf.plot, "plot: 'width' must be between 10 and 400 columns, got 3", {1, 2}, {width = 3})
  T.raises(mf.plot, "plot: 'height' must be between 150 and 10000 pixels, got 10", {1, 2},
           {file = "/tmp/x.svg", height = 10})
  T.raises(mf.plot, "plot: 'labels' must be an array of strings, got string", {1, 2},
           {labels = "a"})
  T.raises(mf.plot, "plot: cannot write '/nonexistent-dir/loss.svg': No such file or directory",
           {1, 2}, {file = "/nonexistent-dir/loss.svg"})
  T.raises(mf.plot, "plot' (table expected, got number)", {1, 2}, 5)
end)

T.test("progress: plain lines when not a terminal", function()
  local out, ok = child([[
    local p = mf.progress{total = 10, epochs = 2}
    for e = 1, 2 do for s = 1, 10 do p:update{loss = 1 / (e * s), acc = 0.5} end end
    print("after")]])
  T.ok(ok, out)
  local lines = lines_of(out)
  -- Rate-limited: the first step, the end of epoch 1, the end of epoch 2.
  T.eq(#lines, 4, 0, out)
  T.ok(lines[1]:find("^epoch 1/2  step  1/10 %[==>%.+%]  10%%  loss 1  acc 0%.5 | " ..
                     "[%d.]+ steps/s ETA"), lines[1])
  T.ok(lines[2]:find("^epoch 1/2  step 10/10 %[=+%] 100%%  loss 0%.1 "), lines[2])
  T.ok(lines[3]:find("^epoch 2/2  step 10/10 .* 100%%  loss 0%.05  acc 0%.5 | " ..
                     "[%d.]+ steps/s, 0:00 total$"), lines[3])
  T.eq(lines[4], "after")
  T.ok(not out:find("\r", 1, true), "no carriage return")
end)

T.test("progress: interval 0 prints every step; no total; done", function()
  local out = child([[
    local p = mf.progress{interval = 0}
    for s = 1, 3 do p:update{loss = s} end
    p:done()]])
  local lines = lines_of(out)
  T.eq(#lines, 4, 0, out)
  T.ok(lines[3]:find("^step 3  loss 3 | [%d.]+ steps/s$"), lines[3])
  T.ok(lines[4]:find("^step 3  loss 3 | [%d.]+ steps/s, 0:00 total$"), lines[4])
end)

T.test("progress: timed from the first update, frozen at the finish", function()
  local out = child([[
    local p = mf.progress{total = 3, interval = 0}
    local t0 = mf.clock()
    while mf.clock() - t0 < 1 do end   -- a second of typing at the prompt
    for s = 1, 3 do p:update{loss = s} end
    local a = tostring(p)
    t0 = mf.clock()
    while mf.clock() - t0 < 0.05 do end
    print(a == tostring(p) and "frozen" or "moving")]])
  local lines = lines_of(out)
  local rate = tonumber(lines[3]:match("| ([%d.e+]+) steps/s, "))
  -- counted from mf.progress{} the rate would be at most 3 steps / 1 s
  T.ok(rate and rate > 3, "rate of the loop alone: " .. lines[3])
  T.eq(lines[4], "frozen", nil, out)
end)

T.test("progress: redrawn in place on a terminal", function()
  local out = child([[
    do
      local p <close> = mf.progress{total = 3, epochs = 2, tty = true}
      for s = 1, 3 do p:update{epoch = 1, step = s, loss = 2} end
      p:update{epoch = 2, step = 1, loss = 1}
    end
    io.write("|")]])
  -- Each draw starts with \r and clears the rest of the line; a new epoch
  -- starts a new line; <close> ends the line.
  T.ok(out:find("^\repoch 1/2  step 1/3"), out)
  T.ok(out:find("\27%[K\n\repoch 2/2  step 1/3"), out)
  T.ok(out:find("total\27%[K\n|$"), out)
end)

T.test("progress: draw = false prints nothing; tostring reads the line", function()
  local out, ok = child([[
    local p <close> = mf.progress{total = 3, interval = 0, draw = false}
    for s = 1, 3 do p:update{loss = s} end
    p:done()
    io.write(tostring(p):match("^step 3/3 %[=+%] 100%%  loss 3 ") and "line" or tostring(p))]])
  T.ok(ok, out)
  T.eq(out, "line")
  T.raises(mf.progress, "progress: option 'draw' must be a boolean, got number", {draw = 1})
end)

T.test("progress: errors", function()
  T.raises(mf.progress, "progress: 'total' must be at least 1, got 0", {total = 0})
  T.raises(mf.progress, "progress: option 'total' must be an integer, got 2.5", {total = 2.5})
  T.raises(mf.progress, "progress: option 'epochs' must be an integer, got string",
           {total = 2, epochs = "2"})
  T.raises(mf.progress, "progress: 'epochs' must be at least 1, got -1", {total = 2, epochs = -1})
  T.raises(mf.progress, "progress: 'epochs' needs 'total'", {epochs = 2})
  T.raises(mf.progress, "progress' (table expected, got number)", 3)
  local p = mf.progress{total = 5, epochs = 2, tty = false, interval = 1e9}
  T.raises(p.update, "update: 'step' = 6 is out of range 1..5 (1-based)", p, {step = 6})
  T.raises(p.update, "update: 'epoch' = 3 is out of range 1..2 (1-based)", p, {epoch = 3})
  T.raises(p.update, "update: 'step' = 0 is out of range 1..5 (1-based)", p, 0)
  T.raises(p.update, "update: option 'step' must be an integer, got 1.5", p, 1.5)
  T.raises(p.update, "update: option 'epoch' must be an integer, got table", p, {epoch = {}})
  T.raises(p.update, "update: 'loss' must be a number or a one-element tensor, got string",
           p, {loss = "x"})
  T.raises(p.update, "update: 'loss' must be a number or a one-element tensor, got a tensor",
           p, {loss = mf.zeros{2}})
  T.raises(p.update, "update: fields must be named", p, {1})
  T.raises(p.update, "(mf.Progress expected, got table)", {})
end)

-- The help examples of the new functions run and show what they say.
T.test("help examples of plot, progress and Progress", function()
  for _, name in ipairs{"plot", "progress", "Progress"} do
    local text = {}
    local old_print = print
    print = function(s) text[#text + 1] = tostring(s) end
    help(name)
    print = old_print
    text = table.concat(text, "\n")
    local example = text:match("\n  Example:\n(.-)\n\n")
    T.ok(example, "help " .. name .. " has an example")
    local env = setmetatable({}, {__index = _G})
    for line in (example .. "\n"):gmatch("    ([^\n]*)\n") do
      local code, want = line:match("^(.-)%s*%-%->%s*(.-)%s*$")
      code = code or line
      local f = load("return " .. code, "=example", "t", env) or load(code, "=example", "t", env)
      T.ok(f, "compiles: " .. code)
      -- Progress lines of the examples go to a null file, not the test log.
      local got = table.pack(pcall(f))
      T.ok(got[1], name .. ": " .. code .. ": " .. tostring(got[2]))
      if want then T.eq(tostring(got[2]), want, nil, name .. ": " .. code) end
    end
  end
end)

T.done()
