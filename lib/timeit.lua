-- timeit.lua — mf.timeit, IPython's %timeit for a Lua function: calls it
-- 'number' times per run, 'repeat' runs, and prints the median time per
-- call with the spread of the runs. Without 'number' it chooses one as
-- Python's timeit.Timer.autorange does: 1, 2, 5, 10, 20, 50... calls until
-- one run takes at least 0.2 s. Times are wall-clock (mf.clock).
local mf, lib = ...

local fname = "timeit"
local AUTORANGE_SECONDS = 0.2

-- "12.3 ms": 3 significant digits in the unit that fits.
local function human(seconds)
  local units = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}}
  for _, u in ipairs(units) do
    if seconds >= u[1] or u[2] == "ns" then
      local v = seconds / u[1]
      return string.format(v >= 100 and "%.0f %s" or v >= 10 and "%.1f %s" or "%.2f %s", v, u[2])
    end
  end
end

-- Seconds for 'number' calls of f.
local function run(f, number)
  local start = mf.clock()
  for _ = 1, number do f() end
  return mf.clock() - start
end

-- Python's autorange: the first of 1, 2, 5, 10, 20, ... calls that take
-- at least AUTORANGE_SECONDS; that run counts as one of the runs.
local function autorange(f)
  local base = 1
  while true do
    for _, k in ipairs{1, 2, 5} do
      local number = base * k
      local t = run(f, number)
      if t >= AUTORANGE_SECONDS or number >= 1e9 then return number, t end
    end
    base = base * 10
  end
end

local function quantile(sorted, q)
  local pos = 1 + (#sorted - 1) * q
  local lo = math.floor(pos)
  local hi = math.min(lo + 1, #sorted)
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo)
end

-- The figures of the runs (seconds per call, each run's total / number).
local function figures(per_call, number)
  local sorted = {table.unpack(per_call)}
  table.sort(sorted)
  local sum = 0
  for _, v in ipairs(sorted) do sum = sum + v end
  return {median = quantile(sorted, 0.5), min = sorted[1], max = sorted[#sorted],
          q1 = quantile(sorted, 0.25), q3 = quantile(sorted, 0.75), mean = sum / #sorted,
          number = number, ["repeat"] = #sorted, times = per_call}
end

local function summary(r)
  return string.format("%s per call (median of %d run%s x %d call%s; spread: min %s, " ..
                             "quartiles %s .. %s, max %s)", human(r.median), r["repeat"],
                             r["repeat"] == 1 and "" or "s", r.number, r.number == 1 and "" or "s",
                             human(r.min), human(r.q1), human(r.q3), human(r.max))
end

-- The figures show as IPython's TimeitResult does; their fields are numbers.
local Result = {__name = "mf.TimeitResult", __tostring = function(r)
  return string.format("<TimeitResult: %s per call, median of %d x %d (r.median, r.min, r.max, " ..
                       "r.times...)>", human(r.median), r["repeat"], r.number)
end}

local function report(r)
  print(summary(r))
  if r["repeat"] > 1 and r.max > 4 * r.min then
    print(string.format("-- the slowest run took %.1f times as long as the fastest: a busy " ..
                        "machine or a cache warming up", r.max / r.min))
  end
end

lib.help("timeit", "shell",
  "mf.timeit(f [, {number, repeat = 7, print = true}]) -> {median, min, max, q1, q3, mean, " ..
  "number, repeat, times}",
  "IPython's %timeit for a function of no arguments: 'repeat' runs of 'number' calls each, " ..
  "wall-clock time (mf.clock). Without 'number' it is chosen as Python's " ..
  "timeit.Timer.autorange does: 1, 2, 5, 10, 20, 50... calls until one run takes at least " ..
  "0.2 s (that run is the first of the runs). Prints the median time per call and the " ..
  "spread of the runs (min, quartiles, max; a note when the slowest run took over 4 times " ..
  "the fastest) and returns the figures in seconds per call ('times': each run's), as " ..
  "IPython's %timeit -o does. print = false only returns them.",
  [[
r = mf.timeit(function() return mf.ones{8, 8} end, {number = 10, ["repeat"] = 3, print = false})
r.number                             --> 10
#r.times                             --> 3
r.min <= r.median and r.median <= r.max  --> true]])
function mf.timeit(f, opts)
  if type(f) ~= "function" and not (getmetatable(f) or {}).__call then
    lib.fail(fname, "expected a function of no arguments to time, got %s", type(f))
  end
  opts = lib.check_opts(fname, opts, {number = true, ["repeat"] = true, print = true})
  local repeats = lib.check_count(fname, "repeat", opts["repeat"] or 7)
  local number = opts.number and lib.check_count(fname, "number", opts.number)
  local totals = {}
  if not number then
    number, totals[1] = autorange(f)
  end
  while #totals < repeats do totals[#totals + 1] = run(f, number) end
  local per_call = {}
  for i, t in ipairs(totals) do per_call[i] = t / number end
  local r = setmetatable(figures(per_call, number), Result)
  if opts.print ~= false then report(r) end
  return r
end
