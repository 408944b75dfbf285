-- pictures.lua — tensors as pictures at the prompt: mf.imshow (a heatmap of a
-- 2-D tensor with a colour bar, or an image H x W x 1 or 3) in 24-bit colour
-- half blocks ("▀": the upper pixel is the foreground, the lower one the
-- background, so a character is two square pixels), with a grey ramp of
-- characters where the terminal has no colour; mf.hist, a histogram with
-- numpy.histogram's bins. Both write an SVG picture instead with 'file'
-- (what the Jupyter kernel shows, kernel/display.lua).
local mf, lib = ...
local fail = lib.fail

-- matplotlib's viridis at 9 points (0, 1/8, ..., 1), linear in between.
local VIRIDIS = {{68, 1, 84}, {71, 44, 122}, {59, 81, 139}, {44, 113, 142}, {33, 144, 141},
                 {39, 173, 129}, {92, 200, 99}, {170, 220, 50}, {253, 231, 37}}
local RAMP = " .:-=+*#%@"   -- grey levels, dark to light, for terminals without colour

local function viridis(v)
  local pos = math.min(math.max(v, 0), 1) * (#VIRIDIS - 1)
  local i = math.min(math.floor(pos), #VIRIDIS - 2)
  local f, a, b = pos - i, VIRIDIS[i + 1], VIRIDIS[i + 2]
  return {a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f, a[3] + (b[3] - a[3]) * f}
end

local function byte(v) return math.floor(math.min(math.max(v, 0), 255) + 0.5) end

-- Whether the terminal shows 24-bit colour: NO_COLOR (no-color.org) says no;
-- COLORTERM=truecolor or 24bit says yes; anything else gets the grey ramp.
local function terminal_color()
  if os.getenv("NO_COLOR") and os.getenv("NO_COLOR") ~= "" then return false end
  local ct = os.getenv("COLORTERM")
  return ct == "truecolor" or ct == "24bit"
end

local function finite(v) return v == v and v ~= math.huge and v ~= -math.huge end

-- The picture of 't': rows of pixels {r, g, b, level} (0..255 each, level the
-- grey of the ramp), and for a heatmap its range. fname names errors.
local function pixels(fname, t, opts)
  if not lib.is_tensor(t) then fail(fname, "expected a tensor, got %s", type(t)) end
  local shape = t.shape
  local heat = #shape == 2
  if not heat and not (#shape == 3 and (shape[3] == 1 or shape[3] == 3)) then
    fail(fname, "expected a 2-D tensor (a heatmap) or an image H x W x 1 or H x W x 3, " ..
         "got shape {%s}", table.concat(shape, ", "))
  end
  if shape[1] == 0 or shape[2] == 0 then fail(fname, "the tensor is empty") end
  local integer = tostring(t.dtype):find("int") ~= nil   -- int32, int64, uint8 images
  local v = t:totable()
  local lo, hi = opts.vmin, opts.vmax
  if heat then
    for _, row in ipairs(v) do
      for _, x in ipairs(row) do
        if finite(x) then
          if opts.vmin == nil and (lo == nil or x < lo) then lo = x end
          if opts.vmax == nil and (hi == nil or x > hi) then hi = x end
        end
      end
    end
    lo, hi = lo or 0, hi or 0
  end
  local rows = {}
  for i = 1, shape[1] do
    local row = {}
    for j = 1, shape[2] do
      local x = v[i][j]
      local rgb
      if heat then
        local u = not finite(x) and 0 or hi > lo and (x - lo) / (hi - lo) or 0.5
        rgb = opts.cmap == "gray" and {u * 255, u * 255, u * 255} or viridis(u)
        rgb[4] = u * 255
      else
        local c = #x == 3 and x or {x[1], x[1], x[1]}
        rgb = {}
        for k = 1, 3 do
          local ck = finite(c[k]) and c[k] or 0
          rgb[k] = integer and ck or ck * 255   -- floats in [0, 1], integers in 0..255
        end
        rgb[4] = 0.299 * rgb[1] + 0.587 * rgb[2] + 0.114 * rgb[3]
      end
      for k = 1, 4 do rgb[k] = byte(rgb[k]) end
      row[j] = rgb
    end
    rows[i] = row
  end
  return rows, heat and {lo, hi} or nil
end

-- Each pixel 'scale' times in both directions.
local function scaled(rows, scale)
  if scale == 1 then return rows end
  local out = {}
  for _, row in ipairs(rows) do
    local wide = {}
    for _, p in ipairs(row) do
      for _ = 1, scale do wide[#wide + 1] = p end
    end
    for _ = 1, scale do out[#out + 1] = wide end
  end
  return out
end

local function fg(p) return string.format("\27[38;2;%d;%d;%dm", p[1], p[2], p[3]) end
local function bg(p) return string.format("\27[48;2;%d;%d;%dm", p[1], p[2], p[3]) end
local function ramp(level)
  local k = math.floor(level / 256 * #RAMP) + 1
  return RAMP:sub(k, k)
end

-- Two pixel rows per line: colour half blocks, or the ramp of their mean grey.
local function text_rows(rows, color)
  local lines = {}
  for i = 1, #rows, 2 do
    local top, bottom = rows[i], rows[i + 1]
    local out = {}
    for j, p in ipairs(top) do
      if color then
        out[j] = fg(p) .. (bottom and bg(bottom[j]) or "\27[49m") .. "▀"
      else
        out[j] = ramp(bottom and (p[4] + bottom[j][4]) / 2 or p[4])
      end
    end
    lines[#lines + 1] = table.concat(out) .. (color and "\27[0m" or "")
  end
  return lines
end

local function number(x) return string.format("%.4g", x) end

-- "lo [bar] hi": the heatmap's colours from its minimum to its maximum.
local function colour_bar(range, color, gray, cells)
  local out = {}
  for k = 1, cells do
    local u = (k - 1) / (cells - 1)
    local rgb = gray and {u * 255, u * 255, u * 255} or viridis(u)
    out[k] = color and bg({byte(rgb[1]), byte(rgb[2]), byte(rgb[3])}) .. " "
             or ramp(byte(u * 255))
  end
  return number(range[1]) .. " " .. table.concat(out) .. (color and "\27[0m" or "") .. " " ..
         number(range[2])
end

local function write_file(fname, path, text)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then fail(fname, "cannot write '%s': %s", path, err) end
  local ok, werr = f:write(text)
  f:close()
  if not ok then
    os.remove(tmp)
    fail(fname, "cannot write '%s': %s", path, werr)
  end
  local renamed, rerr = os.rename(tmp, path)   -- a failed write leaves the old file
  if not renamed then
    os.remove(tmp)
    fail(fname, "cannot write '%s': %s", path, rerr)
  end
  return path
end

-- An SVG of the pixels (one square of 'px' per pixel) and the colour bar.
local function svg_image(rows, range, gray, px)
  local h, w = #rows, #rows[1]
  local bar = range and 40 or 0
  local out = {string.format('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" ' ..
                             'shape-rendering="crispEdges">', w * px, h * px + bar)}
  for i, row in ipairs(rows) do
    for j, p in ipairs(row) do
      out[#out + 1] = string.format('<rect x="%d" y="%d" width="%d" height="%d" ' ..
                                    'fill="#%02x%02x%02x"/>', (j - 1) * px, (i - 1) * px, px, px,
                                    p[1], p[2], p[3])
    end
  end
  if range then
    local cells, y = 32, h * px + 8
    local cw = w * px / cells
    for k = 1, cells do
      local u = (k - 1) / (cells - 1)
      local rgb = gray and {u * 255, u * 255, u * 255} or viridis(u)
      out[#out + 1] = string.format('<rect x="%.2f" y="%d" width="%.2f" height="12" ' ..
                                    'fill="#%02x%02x%02x"/>', (k - 1) * cw, y, cw + 0.5,
                                    byte(rgb[1]), byte(rgb[2]), byte(rgb[3]))
    end
    out[#out + 1] = string.format('<text x="0" y="%d" font-family="sans-serif" ' ..
                                  'font-size="11">%s</text>', y + 26, number(range[1]))
    out[#out + 1] = string.format('<text x="%d" y="%d" font-family="sans-serif" ' ..
                                  'font-size="11" text-anchor="end">%s</text>', w * px, y + 26,
                                  number(range[2]))
  end
  out[#out + 1] = "</svg>\n"
  return table.concat(out, "\n")
end

local imshow_keys = {cmap = true, vmin = true, vmax = true, scale = true, color = true,
                     print = true, file = true}

lib.help("imshow", "training",
  "mf.imshow(t [, {cmap = \"viridis\", vmin, vmax, scale = 1, color, print = true, file}])",
  "Draws a tensor as a picture in the terminal: a 2-D tensor as a heatmap (matplotlib's " ..
  "viridis, or cmap = \"gray\", from vmin to vmax: its minimum and maximum unless given; " ..
  "a colour bar below names them), an H x W x 3 tensor as an RGB image, H x W x 1 as a " ..
  "grey one (floats in [0, 1], integers in 0..255, both clipped). Each character is two " ..
  "pixels, one above the other: the half block \"▀\" in 24-bit colour. A terminal " ..
  "without colour (NO_COLOR set, or COLORTERM not truecolor / 24bit; color = true or " ..
  "false decides instead) gets a grey ramp \" .:-=+*#%@\" of the two pixels' mean. " ..
  "scale repeats each pixel. NaN and infinite values draw as the lowest colour. " ..
  "print = false returns the text; file = \"x.svg\" writes an SVG picture instead and " ..
  "returns its path (the Jupyter kernel shows the picture).",
  [[
img = mf.tensor{{{1, 0, 0}, {0, 1, 0}}, {{0, 0, 1}, {1, 1, 1}}}
s = mf.imshow(img, {print = false, color = false})
s == ":#"                            --> true
#mf.imshow(mf.tensor{{1, 2}, {3, 4}}, {print = false, color = true}) > 0  --> true]])
function mf.imshow(t, opts)
  local fname = "imshow"
  opts = lib.check_opts(fname, opts, imshow_keys)
  if opts.cmap ~= nil and opts.cmap ~= "viridis" and opts.cmap ~= "gray" then
    fail(fname, "option 'cmap' must be \"viridis\" or \"gray\", got %s", tostring(opts.cmap))
  end
  local scale = lib.check_count(fname, "scale", opts.scale or 1)
  local rows, range = pixels(fname, t, opts)
  rows = scaled(rows, scale)
  if opts.file ~= nil then
    if type(opts.file) ~= "string" then
      fail(fname, "option 'file' must be a path, got %s", type(opts.file))
    end
    return write_file(fname, opts.file, svg_image(rows, range, opts.cmap == "gray",
                                                  math.max(1, math.floor(256 / #rows[1]))))
  end
  local color = opts.color
  if color == nil then color = terminal_color() end
  local lines = text_rows(rows, color)
  if range then
    lines[#lines + 1] = colour_bar(range, color, opts.cmap == "gray", math.max(8, #rows[1]))
  end
  local text = table.concat(lines, "\n")
  if opts.print == false then return text end
  print(text)
end

-- ---- mf.hist -------------------------------------------------------------------------

-- numpy.histogram's counts: 'bins' equal bins over [lo, hi], the last one
-- closed; values outside and non-finite ones are not counted.
local function histogram(values, bins, lo, hi)
  local counts, edges = {}, {}
  for k = 1, bins do counts[k] = 0 end
  for k = 0, bins do edges[k + 1] = lo + (hi - lo) * k / bins end
  local skipped = 0
  for _, x in ipairs(values) do
    if not finite(x) then
      skipped = skipped + 1
    elseif x >= lo and x <= hi then
      local k = x == hi and bins or math.floor((x - lo) / (hi - lo) * bins) + 1
      -- the edges decide, as numpy's searchsorted does, not the division's rounding
      while k > 1 and x < edges[k] do k = k - 1 end
      while k < bins and x >= edges[k + 1] do k = k + 1 end
      counts[k] = counts[k] + 1
    end
  end
  return counts, edges, skipped
end

local EIGHTHS = {"▏", "▎", "▍", "▌", "▋", "▊", "▉"}

local function bar(count, most, width)
  local eighths = most > 0 and math.floor(count / most * width * 8 + 0.5) or 0
  return string.rep("█", eighths // 8) .. (EIGHTHS[eighths % 8] or "")
end

local function svg_hist(counts, edges, w, h)
  local most = math.max(1, table.unpack(counts))
  local out = {string.format('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d">',
                             w, h + 20)}
  local bw = w / #counts
  for k, c in ipairs(counts) do
    local bh = c / most * (h - 10)
    out[#out + 1] = string.format('<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" ' ..
                                  'fill="#3b518b" stroke="white"/>', (k - 1) * bw, h - bh,
                                  bw, bh)
  end
  out[#out + 1] = string.format('<text x="0" y="%d" font-family="sans-serif" font-size="11">' ..
                                '%s</text>', h + 15, number(edges[1]))
  out[#out + 1] = string.format('<text x="%d" y="%d" font-family="sans-serif" font-size="11" ' ..
                                'text-anchor="end">%s</text>', w, h + 15, number(edges[#edges]))
  out[#out + 1] = "</svg>\n"
  return table.concat(out, "\n")
end

local hist_keys = {bins = true, range = true, width = true, print = true, file = true}

lib.help("hist", "training",
  "mf.hist(t [, {bins = 10, range = {min, max}, width = 40, print = true, file}])",
  "A histogram of a tensor's values (any shape) in the terminal, with numpy.histogram's " ..
  "bins: 'bins' equal bins from the minimum to the maximum (or 'range'), each half-open " ..
  "[a, b) but the last [a, b]; a constant tensor gets the range value +- 0.5. Each row: " ..
  "the bin, a bar 'width' characters long for the fullest bin (in eighths of a " ..
  "character), the count. Non-finite values are left out and counted in a last line. " ..
  "print = false returns the text, the counts and the edges; file = \"h.svg\" writes an " ..
  "SVG picture instead and returns its path (the Jupyter kernel shows the picture).",
  [[
text, counts, edges = mf.hist(mf.tensor{1, 2, 2, 3, 3, 3, 4}, {bins = 3, print = false})
counts                               --> {1, 2, 4}
edges                                --> {1, 2, 3, 4}]])
function mf.hist(t, opts)
  local fname = "hist"
  opts = lib.check_opts(fname, opts, hist_keys)
  if not lib.is_tensor(t) then fail(fname, "expected a tensor, got %s", type(t)) end
  local bins = lib.check_count(fname, "bins", opts.bins or 10)
  local width = lib.check_count(fname, "width", opts.width or 40)
  local values = t:numel() == 0 and {} or t:reshape{t:numel()}:cast("float64"):totable()
  local lo, hi
  if opts.range ~= nil then
    local r = opts.range
    if type(r) ~= "table" or type(r[1]) ~= "number" or type(r[2]) ~= "number" or
       not (r[1] < r[2]) then
      fail(fname, "option 'range' must be {min, max} with min < max, got %s", tostring(r))
    end
    lo, hi = r[1], r[2]
  else
    for _, x in ipairs(values) do
      if finite(x) then
        lo, hi = math.min(lo or x, x), math.max(hi or x, x)
      end
    end
    if lo == nil then fail(fname, "the tensor has no finite value to count") end
    if lo == hi then lo, hi = lo - 0.5, hi + 0.5 end
  end
  local counts, edges, skipped = histogram(values, bins, lo, hi)
  if opts.file ~= nil then
    if type(opts.file) ~= "string" then
      fail(fname, "option 'file' must be a path, got %s", type(opts.file))
    end
    return write_file(fname, opts.file, svg_hist(counts, edges, 480, 240))
  end
  local labels, lw = {}, 0
  for k = 1, bins do
    labels[k] = string.format("[%s, %s%s", number(edges[k]), number(edges[k + 1]),
                              k == bins and "]" or ")")
    lw = math.max(lw, #labels[k])
  end
  local most = math.max(table.unpack(counts))
  local lines = {}
  for k = 1, bins do
    local b = bar(counts[k], most, width)
    lines[k] = string.format("%-" .. lw .. "s %s%s %d", labels[k], b,
                             string.rep(" ", width - utf8.len(b)), counts[k])
  end
  if skipped > 0 then lines[#lines + 1] = string.format("(%d non-finite values left out)", skipped) end
  local text = table.concat(lines, "\n")
  if opts.print == false then return text, counts, edges end
  print(text)
end
