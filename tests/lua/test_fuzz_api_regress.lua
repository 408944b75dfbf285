-- test_fuzz_api_regress.lua — replays the API calls the fuzzer once found
-- failing (tests/fuzz/regress/api/cases.lua): each must now raise its
-- expected, named error or return normally.
local T = dofile("tests/lua/harness.lua")

for _, case in ipairs(dofile("tests/fuzz/regress/api/cases.lua")) do
  local name, fn, pattern = case[1], case[2], case[3]
  T.test(name, function()
    if pattern then
      T.raises(fn, pattern)
    else
      fn()
    end
  end)
end

T.done()
