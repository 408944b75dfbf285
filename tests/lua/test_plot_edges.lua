-- test_plot_edges.lua — mf.plot on the inputs a practitioner meets that the
-- basic tests do not: value ranges wider than DBL_MAX, flat series near
-- DBL_MAX, control characters in a title, isolated finite points between
-- NaNs, a 100k-step history (decimated SVG), round tick labels, and a
-- table of named series passed the wrong way.
local T = dofile("tests/lua/harness.lua")

local function svg_of(values, opts)
  local path = os.tmpname()
  opts = opts or {}
  opts.file = path
  mf.plot(values, opts)
  local f = assert(io.open(path))
  local svg = f:read("a")
  f:close()
  os.remove(path)
  -- The temporary "<path>.tmp.<pid>" is renamed over the path, never left.
  T.ok(not os.execute("ls " .. path .. ".tmp* > /dev/null 2>&1"), "no temporary file left")
  return svg
end

local function count(s, pattern) return select(2, s:gsub(pattern, "")) end

-- Every coordinate in the document is a finite number.
local function no_nan(svg)
  return not svg:find("nan", 1, true) and not svg:find("inf", 1, true)
end

-- The tick label texts (numbers only), in document order.
local function labels(svg)
  local t = {}
  for v in svg:gmatch(">([-%d.e+]+)</text>") do t[#t + 1] = v end
  return table.concat(t, " ")
end

T.test("svg: a range wider than DBL_MAX draws (no NaN coordinates)", function()
  local svg = svg_of({-1e308, 1e308, 0})
  T.ok(no_nan(svg), "no nan/inf in the SVG")
  local pts = svg:match('points="([^"]*)"')
  T.eq(pts, "70.00,350.00 345.00,40.00 620.00,195.00", 0, "bottom, top, middle")
  T.eq(labels(svg), "-1e+308 -5e+307 0 5e+307 1e+308 1 2 3", 0, "tick labels")
  T.ok(no_nan(svg_of({1.7e308, 1.7e308})), "flat series near DBL_MAX")
  T.ok(no_nan(svg_of({-1.7e308})), "one point near -DBL_MAX")
  T.ok(no_nan(svg_of({5e-324, 5e-324})), "flat subnormal series")
  local text = mf.plot({-1e308, 1e308, 0}, {width = 20, height = 4, print = false})
  T.ok(text:find("1e+308", 1, true) and not text:find("nan", 1, true), text)
end)

T.test("svg: control characters in a title keep the XML well-formed", function()
  local svg = svg_of({1, 2}, {title = "a\1b\27c", labels = {"x\2"}})
  T.ok(svg:find("a\u{FFFD}b\u{FFFD}c", 1, true), "replaced by U+FFFD")
  T.ok(svg:find("x\u{FFFD}</text>", 1, true), "legend too")
  T.ok(not svg:find("[\1-\8\11\12\14-\31]"), "no control bytes left")
end)

T.test("svg: isolated finite points are dots, not invisible polylines", function()
  local svg = svg_of({1, 0 / 0, 3, 1 / 0, -1 / 0, 2})
  T.eq(count(svg, "<circle"), 3, 0, "three dots")
  T.eq(count(svg, "<polyline"), 0, 0, "no one-point polylines")
  svg = svg_of({7})
  T.eq(count(svg, "<circle"), 1, 0, "a one-step series is a dot")
  svg = svg_of({1, 2, 0 / 0, 5})
  T.eq(count(svg, "<circle"), 1, 0, "the lone point after the NaN")
  T.eq(count(svg, "<polyline"), 1, 0, "the run of two")
end)

T.test("svg: 100k steps are decimated per pixel column, extremes kept", function()
  local v = {}
  for i = 1, 100000 do v[i] = math.sin(i / 1000) end
  v[33333] = 5    -- a spike must survive the decimation
  v[66666] = -5
  local svg = svg_of(v)
  T.ok(#svg < 100000, "file size " .. #svg .. " bytes (was 1.4 MB)")
  local pts = svg:match('points="([^"]*)"')
  local n, ymin, ymax = 0, math.huge, -math.huge
  for y in pts:gmatch("[%d.]+,([%d.]+)") do
    n = n + 1
    ymin = math.min(ymin, tonumber(y))
    ymax = math.max(ymax, tonumber(y))
  end
  T.ok(n <= 4 * 551 and n > 550, n .. " points")
  T.eq(ymin, 40, 0, "the spike reaches the top")
  T.eq(ymax, 350, 0, "the dip reaches the bottom")
  T.ok(pts:find("^70%.00,") and pts:find("620%.00,[%d.]+$"), "first and last step kept")
  T.eq(labels(svg), "-4 -2 0 2 4 1 25000 50000 75000 100000", 0, "round ticks")
  T.ok(svg:find('text-anchor="end">100000<', 1, true), "the last label stays inside")
  -- Short series are not decimated: one point per step.
  local short = {}
  for i = 1, 1000 do short[i] = i % 3 end
  T.eq(count(svg_of(short):match('points="([^"]*)"'), ","), 1000, 0, "1000 points")
end)

T.test("svg: tick labels are round numbers", function()
  T.eq(labels(svg_of({1, 3, 2, 5, 4})), "1 2 3 4 5 1 2 3 4 5", 0, "1..5")
  T.eq(labels(svg_of({1, 0 / 0, 3, 1 / 0, -1 / 0, 2})), "1 1.5 2 2.5 3 1 2 4 6", 0, "6 steps")
  -- Values near 1e6 that differ by 0.01 keep enough digits to differ.
  local s = labels(svg_of({1e6, 1e6 + 0.01}))
  T.eq(s, "1000000 1000000.002 1000000.004 1000000.006 1000000.008 1000000.01 1 2", 0, s)
end)

T.test("plot: named series in a table get a message that says how", function()
  T.raises(mf.plot, "plot: series 1 is a table with key '", {loss = {1, 2}, val = {2, 3}})
  T.raises(mf.plot, "name them with {labels = {...}}", {loss = {1, 2}})
  T.raises(mf.plot, "plot: series 1 is empty", {})
end)

T.done()
