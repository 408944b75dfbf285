-- test_timeit.lua — mf.timeit (issue #30 point 4): IPython's %timeit with
-- Python's timeit autorange (1, 2, 5, 10... calls until a run takes 0.2 s),
-- the median per call and the spread of the runs (min, quartiles as
-- numpy.percentile's default linear rule, max), and the figures returned.
-- A fake mf.clock makes every time exact.
local T = dofile("tests/lua/harness.lua")

-- Runs fn with mf.clock replaced by a fake whose time only moves when
-- advance(seconds) is called; returns what print printed and fn's result.
local function with_fake_clock(fn)
  local real_clock, real_print = mf.clock, print
  local now, lines = 1000, {}
  mf.clock = function() return now end
  print = function(...) lines[#lines + 1] = table.concat({...}, "\t") end
  local ok, r = pcall(fn, function(s) now = now + s end)
  mf.clock, print = real_clock, real_print
  if not ok then error(r, 0) end
  return lines, r
end

T.test("autorange: 1, 2, 5, 10 calls until a run takes 0.2 s", function()
  local calls = 0
  local lines, r = with_fake_clock(function(advance)
    return mf.timeit(function() calls = calls + 1; advance(0.03) end)
  end)
  -- 1, 2 and 5 calls take 0.03, 0.06, 0.15 s; 10 calls 0.3 s: number 10,
  -- that run is the first of 7
  T.eq(r.number, 10)
  T.eq(r["repeat"], 7)
  T.eq(calls, 1 + 2 + 5 + 7 * 10)
  T.eq(#r.times, 7)
  T.eq(r.median, 0.03, 1e-12)
  T.eq(#lines, 1)
  T.eq(lines[1], "30.0 ms per call (median of 7 runs x 10 calls; spread: min 30.0 ms, " ..
                 "quartiles 30.0 ms .. 30.0 ms, max 30.0 ms)")
  T.eq(tostring(r), "<TimeitResult: 30.0 ms per call, median of 7 x 10 (r.median, r.min, " ..
                    "r.max, r.times...)>")
end)

T.test("number and repeat given: median, quartiles, spread note", function()
  local run_seconds = {1, 2, 3, 4, 100}
  local k = 0
  local lines, r = with_fake_clock(function(advance)
    return mf.timeit(function()
      k = k + 1
      advance(run_seconds[(k - 1) // 2 + 1] / 2)   -- two calls a run
    end, {number = 2, ["repeat"] = 5})
  end)
  -- numpy.percentile([1, 2, 3, 4, 100], [25, 50, 75]) = 2, 3, 4
  T.eq({r.min, r.q1, r.median, r.q3, r.max}, {0.5, 1, 1.5, 2, 50}, 1e-12)
  T.eq(r.mean, 110 / 5 / 2, 1e-12)
  T.eq(r.times, {0.5, 1, 1.5, 2, 50}, 1e-12)
  T.eq(lines[1], "1.50 s per call (median of 5 runs x 2 calls; spread: min 500 ms, " ..
                 "quartiles 1.00 s .. 2.00 s, max 50.0 s)")
  T.eq(lines[2], "-- the slowest run took 100.0 times as long as the fastest: a busy machine " ..
                 "or a cache warming up")
  lines = with_fake_clock(function(advance)
    return mf.timeit(function() advance(2e-6) end, {number = 1, ["repeat"] = 1, print = false})
  end)
  T.eq(#lines, 0, nil, "print = false prints nothing")
end)

T.test("a real function is timed", function()
  local r = mf.timeit(function() return mf.ones{4} end, {number = 3, ["repeat"] = 2,
                                                          print = false})
  T.ok(r.min > 0 and r.min <= r.median and r.median <= r.max, tostring(r))
end)

T.test("bad arguments are clear errors", function()
  T.raises(function() mf.timeit(3) end,
           "timeit: expected a function of no arguments to time, got number")
  T.raises(function() mf.timeit(print, {rep = 1}) end,
           "timeit: unknown option 'rep' (known: number, print, repeat)")
  T.raises(function() mf.timeit(print, {["repeat"] = 0}) end,
           "timeit: repeat must be a positive integer, got 0")
  T.raises(function() mf.timeit(print, {number = 1.5}) end,
           "timeit: number must be a positive integer, got 1.5")
end)

T.done()
