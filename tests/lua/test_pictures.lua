-- test_pictures.lua — pictures of tensors at the prompt (issue #30 point 6):
-- mf.imshow's 24-bit colour half blocks for a known 2x2 image (escape codes
-- checked), the grey ramp where the terminal has no colour (NO_COLOR,
-- COLORTERM), a heatmap's viridis colours and colour bar, SVG files; mf.hist
-- against numpy.histogram (called live); mf.plot's legend without colour.
local T = dofile("tests/lua/harness.lua")
local exe = assert(arg and arg[-1], "run with the moonflow program")

local ESC = "\27["
local function fg(r, g, b) return string.format("%s38;2;%d;%d;%dm", ESC, r, g, b) end
local function bg(r, g, b) return string.format("%s48;2;%d;%d;%dm", ESC, r, g, b) end
local RESET = ESC .. "0m"

local rgb = mf.tensor{{{1, 0, 0}, {0, 1, 0}}, {{0, 0, 1}, {1, 1, 1}}}

T.test("a 2x2 RGB image: one line of two half blocks, exact escape codes", function()
  local s = mf.imshow(rgb, {print = false, color = true})
  -- upper pixel = foreground of "▀", lower pixel = background
  T.eq(s, fg(255, 0, 0) .. bg(0, 0, 255) .. "▀" .. fg(0, 255, 0) .. bg(255, 255, 255) .. "▀" ..
          RESET)
  -- integers are 0..255; an odd height leaves the last lower half empty
  local u8 = mf.tensor({{{255, 128, 0}}}, "int32")
  T.eq(mf.imshow(u8, {print = false, color = true}), fg(255, 128, 0) .. ESC .. "49m▀" .. RESET)
  -- H x W x 1 is grey; floats are clipped to [0, 1]
  T.eq(mf.imshow(mf.tensor{{{0.5}}, {{2}}}, {print = false, color = true}),
       fg(128, 128, 128) .. bg(255, 255, 255) .. "▀" .. RESET)
  -- scale repeats each pixel
  T.eq(mf.imshow(mf.tensor{{{1, 0, 0}}}, {print = false, color = true, scale = 2}),
       (fg(255, 0, 0) .. bg(255, 0, 0) .. "▀"):rep(2) .. RESET)
end)

T.test("a heatmap: viridis from the minimum to the maximum, a colour bar", function()
  local s = mf.imshow(mf.tensor{{1, 2}, {3, 5}}, {print = false, color = true})
  local lines = {}
  for l in (s .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = l end
  T.eq(#lines, 2)
  -- viridis(0) = #440154, viridis(1) = #fde725 (matplotlib); 2 is at 1/4:
  -- its third control point #3b518b; 3 at 1/2: #21908d
  T.eq(lines[1], fg(68, 1, 84) .. bg(33, 144, 141) .. "▀" .. fg(59, 81, 139) ..
                 bg(253, 231, 37) .. "▀" .. RESET)
  T.ok(lines[2]:find("^1 " .. ESC:gsub("%[", "%%[") .. "48;2;68;1;84m "), lines[2])
  T.ok(lines[2]:find(bg(253, 231, 37) .. " " .. RESET .. " 5", 1, true), lines[2])
  -- cmap = "gray", vmin/vmax
  T.eq(mf.imshow(mf.tensor{{0, 10}}, {print = false, color = true, cmap = "gray", vmin = 0,
                                      vmax = 20}):match("^[^\n]*"),
       fg(0, 0, 0) .. ESC .. "49m▀" .. fg(128, 128, 128) .. ESC .. "49m▀" .. RESET)
end)

T.test("no colour: a grey ramp of the two pixels' mean, no escape codes", function()
  -- luminance 0.299 R + 0.587 G + 0.114 B: red 76, blue 29 -> mean 52.5 -> ':';
  -- green 150, white 255 -> 202.5 -> '#' (ramp " .:-=+*#%@", 256 / 10 per step)
  T.eq(mf.imshow(rgb, {print = false, color = false}), ":#")
  -- a heatmap's grey is its place in the range: column 1 has 0 and 128
  -- (mean 64 -> ':'), column 2 64 and 255 (159.5 -> '*')
  T.eq(mf.imshow(mf.tensor{{1, 2}, {3, 5}}, {print = false, color = false}),
       ":*\n1  .:=+#%@ 5")
end)

-- What the program prints for 'code' with the environment 'env'.
local function run(env, code)
  local f = os.tmpname()
  local h = assert(io.open(f, "w"))
  h:write(code)
  h:close()
  local p = assert(io.popen("env -u COLORTERM -u NO_COLOR " .. env .. " '" .. exe .. "' " .. f))
  local out = p:read("a")
  p:close()
  os.remove(f)
  return out
end

T.test("the terminal decides: COLORTERM=truecolor colours, NO_COLOR or none is grey", function()
  local code = "mf.imshow(mf.tensor{{{1, 0, 0}}, {{0, 0, 1}}})"
  T.eq(run("COLORTERM=truecolor", code), fg(255, 0, 0) .. bg(0, 0, 255) .. "▀" .. RESET .. "\n")
  T.eq(run("COLORTERM=24bit", code), fg(255, 0, 0) .. bg(0, 0, 255) .. "▀" .. RESET .. "\n")
  T.eq(run("COLORTERM=truecolor NO_COLOR=1", code), ":\n")
  T.eq(run("", code), ":\n")
  T.eq(run("COLORTERM=truecolor", "mf.imshow(mf.tensor{{{1, 1, 1}}}, {color = false})"), "@\n")
end)

T.test("imshow and hist write SVG files; a failed write keeps the old file", function()
  local path = os.tmpname() .. ".svg"
  T.eq(mf.imshow(rgb, {file = path}), path)
  local f = assert(io.open(path))
  local svg = f:read("a")
  f:close()
  T.ok(svg:find('<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256"', 1, true), svg)
  T.ok(svg:find('fill="#ff0000"', 1, true) and svg:find('fill="#0000ff"', 1, true), svg)
  T.eq(mf.hist(mf.tensor{1, 2, 3}, {file = path}), path)
  f = assert(io.open(path))
  T.ok(f:read("a"):find("<rect", 1, true))
  f:close()
  os.remove(path)
  T.raises(function() mf.imshow(rgb, {file = "/nonexistent-dir/x.svg"}) end,
           "imshow: cannot write '/nonexistent-dir/x.svg'")
end)

T.test("bad input: clear errors", function()
  T.raises(function() mf.imshow({1, 2}) end, "imshow: expected a tensor, got table")
  T.raises(function() mf.imshow(mf.ones{2, 2, 2}) end,
           "imshow: expected a 2-D tensor (a heatmap) or an image H x W x 1 or H x W x 3, " ..
           "got shape {2, 2, 2}")
  T.raises(function() mf.imshow(mf.ones{0, 3}) end, "imshow: the tensor is empty")
  T.raises(function() mf.imshow(mf.ones{2, 2}, {cmap = "jet"}) end,
           "imshow: option 'cmap' must be \"viridis\" or \"gray\", got jet")
  T.raises(function() mf.imshow(mf.ones{2, 2}, {colour = true}) end, "imshow: unknown option 'colour'")
  T.raises(function() mf.hist(3) end, "hist: expected a tensor, got number")
  T.raises(function() mf.hist(mf.ones{3}, {bins = 0}) end, "hist: bins must be a positive integer")
  T.raises(function() mf.hist(mf.ones{3}, {range = {2, 1}}) end,
           "hist: option 'range' must be {min, max} with min < max")
  T.raises(function() mf.hist(mf.tensor{0 / 0}) end, "hist: the tensor has no finite value to count")
end)

-- ---- mf.hist against numpy.histogram ---------------------------------------------
local python = "/usr/bin/python3"
local have_numpy = os.execute(python .. " -c 'import numpy' 2>/dev/null")

local function numpy_histogram(values, bins, range)
  local f = os.tmpname()
  local h = assert(io.open(f, "w"))
  local parts = {}
  for i, v in ipairs(values) do parts[i] = string.format("%.17g", v) end
  h:write(string.format("import numpy as np\nc, e = np.histogram(np.array([%s], dtype=np.float64), " ..
                        "bins=%d%s)\nprint(' '.join(str(int(x)) for x in c))\n" ..
                        "print(' '.join(repr(float(x)) for x in e))\n",
                        table.concat(parts, ", "), bins,
                        range and string.format(", range=(%.17g, %.17g)", range[1], range[2]) or ""))
  h:close()
  local p = assert(io.popen(python .. " " .. f))
  local counts, edges = {}, {}
  for x in p:read("l"):gmatch("%S+") do counts[#counts + 1] = tonumber(x) end
  for x in p:read("l"):gmatch("%S+") do edges[#edges + 1] = tonumber(x) end
  p:close()
  os.remove(f)
  return counts, edges
end

T.test("hist: numpy.histogram's counts and edges", function()
  if not have_numpy then print("skipped: no numpy") return end
  mf.random.seed(3)
  local cases = {
    {mf.random.normal({1000}, {dtype = "float64"}), 10},
    {mf.random.uniform({7, 9}, {dtype = "float64"}), 4},
    {mf.tensor({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "float64"), 5},  -- values on edges
    {mf.tensor({2, 2, 2}, "float64"), 3},                             -- constant
    {mf.tensor({-1, 0.5, 3, 9}, "float64"), 4, {0, 4}},               -- a range
  }
  for i, c in ipairs(cases) do
    local values = c[1]:reshape{c[1]:numel()}:totable()
    local want_counts, want_edges = numpy_histogram(values, c[2], c[3])
    local _, counts, edges = mf.hist(c[1], {bins = c[2], range = c[3], print = false})
    T.eq(counts, want_counts, nil, "case " .. i .. " counts")
    T.eq(edges, want_edges, 1e-12, "case " .. i .. " edges")
  end
end)

T.test("hist: the text of a histogram", function()
  local text = mf.hist(mf.tensor{1, 2, 2, 3, 3, 3, 4}, {bins = 3, width = 8, print = false})
  T.eq(text, "[1, 2) ██       1\n[2, 3) ████     2\n[3, 4] ████████ 4")
  text = mf.hist(mf.tensor{1, 0 / 0, 1 / 0}, {bins = 1, width = 4, print = false})
  T.eq(text, "[0.5, 1.5] ████ 1\n(2 non-finite values left out)")
end)

T.test("plot: without colour each series has a marker on its line and in the legend", function()
  local text = mf.plot({{1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1}},
                       {labels = {"up", "down"}, color = false, width = 30, height = 6,
                        print = false})
  T.ok(text:find("\n  1 up   2 down\n", 1, true), text)
  local _, ones = text:gsub("1", "")
  T.ok(text:find("⠒1\n", 1, true), "series 1's marker ends its line:\n" .. text)
  T.ok(text:find("⠤2\n", 1, true), "series 2's marker ends its line:\n" .. text)
  T.ok(ones >= 3, text)
  -- with colour the legend keeps its coloured dots, no markers
  text = mf.plot({{1, 2}, {2, 1}}, {labels = {"a", "b"}, color = true, print = false})
  T.ok(text:find("\27[34m⣿\27[0m a", 1, true), text)
end)

T.test("plot at a terminal: colours, or markers with NO_COLOR", function()
  if not os.execute("command -v script > /dev/null") then print("skipped: no script(1)") return end
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write("mf.plot({{1, 2, 3}, {3, 2, 1}}, {labels = {'up', 'down'}, width = 20, height = 4})\n")
  f:close()
  local function at_terminal(env)
    -- script(1) gives the program a terminal (a pty) for stdout
    local p = assert(io.popen("env " .. env .. " TERM=xterm script -qec \"'" .. exe .. "' " ..
                              script .. "\" /dev/null"))
    local out = p:read("a")
    p:close()
    return out
  end
  local colour = at_terminal("-u NO_COLOR")
  T.ok(colour:find("\27[34m⣿\27[0m up", 1, true), colour)
  local plain = at_terminal("NO_COLOR=1")
  T.ok(plain:find("1 up   2 down", 1, true) and not plain:find("\27[", 1, true), plain)
  os.remove(script)
end)

T.done()
