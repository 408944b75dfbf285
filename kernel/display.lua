-- kernel/display.lua — what a notebook shows, run once when the kernel starts
-- (moonflow --kernel). Called with the mf table, the Graph methods and the
-- kernel's C api: publish(msg_type, bundle [, display_id]) sends a MIME
-- bundle ({["text/plain"] = ..., ...}) on IOPub, show(...) is the prompt's
-- text of values, now() a monotonic clock in seconds, pid() the process id.
-- Defines the global display(...), shows mf.plot and g:render() as SVG
-- pictures and mf.progress as one updating area, and returns the table the
-- kernel uses: bundle(...) for a cell's values.
local mf, graph_methods, api = ...
local K = {}

local function name_of(v)
  local mt = getmetatable(v)
  return type(mt) == "table" and rawget(mt, "__name") or nil
end

local function escape(s)
  return (tostring(s):gsub('[&<>"]', {["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
                                      ['"'] = "&quot;"}))
end

-- The rows (or columns) shown of n: all up to 'max', else the first and the
-- last max/2 with a gap (0) between, as the printer summarises.
local HTML_MAX = 10
local function shown(n)
  local idx = {}
  if n <= HTML_MAX then
    for i = 1, n do idx[#idx + 1] = i end
  else
    for i = 1, HTML_MAX // 2 do idx[#idx + 1] = i end
    idx[#idx + 1] = 0
    for i = n - HTML_MAX // 2 + 1, n do idx[#idx + 1] = i end
  end
  return idx
end

local function cell(v)
  if math.type(v) == "float" then return string.format("%.6g", v) end
  return tostring(v)
end

-- A concrete tensor of rank 0 to 2 as a compact HTML table; nil otherwise
-- (a graph tensor has no values, a larger rank reads better as text).
local HTML_MAX_NUMEL = 100000
local function tensor_html(t)
  local ok, name = pcall(function() return t.name end)
  if not ok or (name and name ~= "") then return nil end
  local shape, dtype = t.shape, tostring(t.dtype)
  if #shape > 2 or t:numel() > HTML_MAX_NUMEL then return nil end
  local values = t:totable()
  if #shape == 0 then values = {{values}} elseif #shape == 1 then values = {values} end
  local rows, cols = #values, #shape == 0 and 1 or shape[#shape]
  local out = {'<table class="moonflow-tensor">'}
  for _, i in ipairs(shown(rows)) do
    out[#out + 1] = "<tr>"
    for _, j in ipairs(shown(cols)) do
      local v = (i == 0 or j == 0) and "&hellip;" or escape(cell(values[i][j]))
      out[#out + 1] = "<td>" .. v .. "</td>"
    end
    out[#out + 1] = "</tr>"
  end
  local dims = {}
  for k, d in ipairs(shape) do dims[k] = tostring(d) end
  out[#out + 1] = string.format("<caption>shape=(%s%s), dtype=%s</caption></table>",
                                table.concat(dims, ", "), #shape == 1 and "," or "", escape(dtype))
  return table.concat(out)
end

-- A profiler report (print(prof)'s text: a header, a row per op, then the
-- totals) as an HTML table: columns are split at runs of two or more spaces;
-- nil when a row does not split into the header's columns.
local function split_columns(line)
  local cells = {}
  for cell in (line:gsub("^%s+", "") .. "  "):gmatch("(.-)%s%s+") do cells[#cells + 1] = cell end
  return cells
end

local function profile_html(report)
  local text = tostring(report)
  local lines = {}
  for line in (text .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
  local header = split_columns(lines[1] or "")
  if #header < 2 then return nil end
  local out = {'<table class="moonflow-profile"><tr>'}
  for _, h in ipairs(header) do out[#out + 1] = "<th>" .. escape(h) .. "</th>" end
  out[#out + 1] = "</tr>"
  local i = 2
  while lines[i] and #split_columns(lines[i]) == #header do
    out[#out + 1] = "<tr>"
    for k, c in ipairs(split_columns(lines[i])) do
      out[#out + 1] = (k == 1 and "<td>" or '<td style="text-align:right">') .. escape(c) .. "</td>"
    end
    out[#out + 1] = "</tr>"
    i = i + 1
  end
  out[#out + 1] = "</table>"
  for j = i, #lines do
    if lines[j] ~= "" then out[#out + 1] = "<p>" .. escape(lines[j]) .. "</p>" end
  end
  return table.concat(out)
end

local html_of = {["mf.Tensor"] = tensor_html, ["mf.ProfileReport"] = profile_html}

-- The MIME bundle of values, as a cell's result or display(v) shows them.
function K.bundle(...)
  local data = {["text/plain"] = api.show(...)}
  local to_html = select("#", ...) == 1 and html_of[name_of((...))]
  if to_html then
    local ok, html = pcall(to_html, (...))
    if ok and html then data["text/html"] = html end
  end
  return data
end

-- display(v, ...): each value in its own output, as it would show as a
-- cell's result.
function display(...)
  for i = 1, select("#", ...) do
    api.publish("display_data", K.bundle((select(i, ...))))
  end
end

-- Calls a binding for the user's call one level up: an error names the
-- user's line, not this file's (as the binding called directly would).
local function as_caller(fn, ...)
  local result = table.pack(pcall(fn, ...))
  if not result[1] then
    local msg = result[2]
    if type(msg) == "string" then msg = msg:gsub("^kernel/display%.lua:%d+: ", "") end
    error(msg, 3)
  end
  return table.unpack(result, 2, result.n)
end

-- The text of a file, removed after.
local function take_file(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  os.remove(path)
  return text
end

local function svg_path()
  local base = os.tmpname()
  os.remove(base)
  return base .. ".svg"
end

-- mf.plot without 'file' shows an SVG picture (the terminal's text drawing
-- as its text/plain); with 'file' or 'print' (true: the text drawing
-- printed, false: returned) it is the prompt's.
local plot = mf.plot
mf.plot = function(values, opts, ...)
  if select("#", ...) > 0 or (opts ~= nil and type(opts) ~= "table")
     or (opts and (opts.file ~= nil or opts.print ~= nil)) then
    return plot(values, opts, ...)
  end
  local o, text_opts = {}, {}
  for k, v in pairs(opts or {}) do o[k], text_opts[k] = v, v end
  -- the text drawing's size is in characters, the picture's in pixels
  text_opts.print, text_opts.width, text_opts.height = false, nil, nil
  local text = as_caller(plot, values, text_opts)
  o.file = svg_path()
  as_caller(plot, values, o)
  api.publish("display_data", {["image/svg+xml"] = take_file(o.file), ["text/plain"] = text})
end

-- g:render() without a path shows the graph as an SVG picture (Graphviz).
local render = graph_methods and graph_methods.render
if render then
  graph_methods.render = function(g, path, ...)
    if path ~= nil or select("#", ...) > 0 then return render(g, path, ...) end
    local file = svg_path()
    as_caller(render, g, file)
    api.publish("display_data", {["image/svg+xml"] = take_file(file),
                                 ["text/plain"] = tostring(g)})
  end
end

-- mf.progress (and so fit's progress line) in a notebook: one output area
-- updated in place, at most 10 times a second (a notebook slows down under
-- a flood of messages), its last state always shown, and after the last
-- step the loss curve. draw = false or tty = ... keep the prompt's line.
local MAX_UPDATES_PER_SECOND = 10
local MAX_CURVE_POINTS = 2000
local progress = mf.progress
local displays = 0

local function loss_of(update)
  if type(update) ~= "table" then return nil end
  local loss = update.loss
  if type(loss) == "number" then return loss end
  if name_of(loss) == "mf.Tensor" then
    local ok, v = pcall(function() return loss:item() end)
    return ok and type(v) == "number" and v or nil
  end
end

local NotebookProgress = {}
NotebookProgress.__index = NotebookProgress
NotebookProgress.__name = "mf.Progress"

function NotebookProgress:show(final)
  local now = api.now()
  if not final and self.shown and now - self.shown < 1 / MAX_UPDATES_PER_SECOND then return end
  local kind = self.shown and "update_display_data" or "display_data"
  self.shown = now
  api.publish(kind, {["text/plain"] = tostring(self.line)}, self.id)
end

function NotebookProgress:update(...)
  self.line:update(...)
  local loss = loss_of((...))
  if loss and #self.losses < MAX_CURVE_POINTS then self.losses[#self.losses + 1] = loss end
  self:show(false)
end

function NotebookProgress:done(...)
  if self.finished then return end
  self.finished = true
  self.line:done(...)
  self:show(true)
  if #self.losses >= 2 then
    mf.plot(self.losses, {title = "loss", width = 480, height = 240})
  end
end

NotebookProgress.__close = NotebookProgress.done
function NotebookProgress:__tostring() return tostring(self.line) end

mf.progress = function(opts, ...)
  if select("#", ...) > 0 or type(opts) ~= "table"
     or opts.draw ~= nil or opts.tty ~= nil then
    return progress(opts, ...)
  end
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  o.draw = false
  displays = displays + 1
  return setmetatable({line = progress(o), losses = {},
                       id = string.format("mf-progress-%d-%d", api.pid(), displays)},
                      NotebookProgress)
end

-- mf.imshow and mf.hist without 'file' or print = false show an SVG picture
-- (the grey text drawing as its text/plain), as mf.plot does.
local function picture(draw, has_color)
  return function(t, opts, ...)
    if select("#", ...) > 0 or (opts ~= nil and type(opts) ~= "table")
       or (opts and (opts.file ~= nil or opts.print ~= nil)) then
      return draw(t, opts, ...)
    end
    local o, text_opts = {}, {}
    for k, v in pairs(opts or {}) do o[k], text_opts[k] = v, v end
    text_opts.print = false
    if has_color then text_opts.color = false end   -- text/plain: no escape codes
    local text = as_caller(draw, t, text_opts)
    o.file = svg_path()
    as_caller(draw, t, o)
    api.publish("display_data", {["image/svg+xml"] = take_file(o.file), ["text/plain"] = text})
  end
end
mf.imshow = picture(mf.imshow, true)
mf.hist = picture(mf.hist, false)

-- model:summary() shows Keras's table as an HTML table too: its rows split at
-- runs of two or more spaces, rules ("=====", "-----") left out, the totals
-- after the table as lines.
local function summary_html(text)
  local title, rows, notes, width = {}, {}, {}, nil
  for line in (text .. "\n"):gmatch("(.-)\n") do
    local cells = split_columns(line)
    if line:match("^%s*[=_%-]+%s*$") or line == "" then
      -- a rule
    elseif #rows == 0 and #cells >= 2 then
      rows[1], width = cells, #cells
    elseif #rows == 0 then
      title[#title + 1] = line     -- Model: "sequential"
    elseif #cells == width and #notes == 0 then
      rows[#rows + 1] = cells
    else
      notes[#notes + 1] = line     -- the parameter counts
    end
  end
  if #rows < 2 then return nil end
  local out = {'<table class="moonflow-summary">'}
  if #title > 0 then out[#out + 1] = "<caption>" .. escape(table.concat(title, " ")) .. "</caption>" end
  out[#out + 1] = "<tr>"
  for _, h in ipairs(rows[1]) do out[#out + 1] = "<th>" .. escape(h) .. "</th>" end
  out[#out + 1] = "</tr>"
  for i = 2, #rows do
    out[#out + 1] = "<tr>"
    for k, c in ipairs(rows[i]) do
      out[#out + 1] = (k == 1 and "<td>" or '<td style="text-align:right">') .. escape(c) .. "</td>"
    end
    out[#out + 1] = "</tr>"
  end
  out[#out + 1] = "</table>"
  for _, n in ipairs(notes) do out[#out + 1] = "<p>" .. escape(n) .. "</p>" end
  return table.concat(out)
end

-- The class a Sequential's methods come from (a throwaway model with a name
-- of its own, so the user's first model still gets "sequential").
local model_base = getmetatable(getmetatable(mf.layers.Sequential({}, {name = "kernel_probe"})))
model_base = model_base and model_base.__index
if type(model_base) == "table" and model_base.summary then
  local summary = model_base.summary
  model_base.summary = function(self, opts, ...)
    if opts ~= nil or select("#", ...) > 0 then return summary(self, opts, ...) end
    local text = as_caller(summary, self, {print_fn = function() end})
    local ok, html = pcall(summary_html, text)
    local data = {["text/plain"] = text}
    if ok and html then data["text/html"] = html end
    api.publish("display_data", data)
  end
end

-- A session's schedule (sess:run(..., {schedule = true})) as a table: Kahn's
-- steps in order, each node's in-degree and what its run made ready; the fed
-- nodes after it.
local function schedule_html(s)
  local out = {'<table class="moonflow-schedule"><tr><th>step</th><th>node</th><th>op</th>' ..
               '<th>in-degree</th><th>ready after it</th></tr>'}
  for _, row in ipairs(s) do
    local ready = {}
    for i, r in ipairs(rawget(row, "ready") or {}) do ready[i] = escape(r) end
    out[#out + 1] = string.format('<tr><td style="text-align:right">%s</td><td>%s</td>' ..
                                  '<td>%s</td><td style="text-align:right">%s</td><td>%s</td>' ..
                                  '</tr>', escape(row.step), escape(row.name), escape(row.op),
                                  escape(row.indegree), table.concat(ready, ", "))
  end
  out[#out + 1] = "</table>"
  local fed = {}
  for i, row in ipairs(rawget(s, "fed") or {}) do fed[i] = escape(row.name) end
  if #fed > 0 then out[#out + 1] = "<p>fed: " .. table.concat(fed, ", ") .. "</p>" end
  return table.concat(out)
end
html_of["mf.Schedule"] = schedule_html

return K
