-- test_tape.lua — mf.GradientTape, mf.grad, mf.value_and_grad,
-- mf.custom_gradient, tape:explain, print(tape) and mf.test.gradcheck.
local T = dofile("tests/lua/harness.lua")

T.test("x*x*x with a Variable gives 27 at 3", function()
  local x = mf.Variable(3.0)
  local tape = mf.GradientTape()
  local y = x * x * x
  T.eq(tape:gradient(y, x):item(), 27, 1e-5)
end)

T.test("watching a plain tensor", function()
  local x = mf.tensor(3.0)
  local tape = mf.GradientTape()
  tape:watch(x)
  local y = x * x
  T.eq(tape:gradient(y, x):item(), 6, 1e-6)
end)

T.test("unwatched tensor gives nil", function()
  local x = mf.tensor(3.0)
  local tape = mf.GradientTape()
  local y = x * x
  T.eq(tape:gradient(y, x), nil)
end)

T.test("second derivative with mf.grad(mf.grad(f))", function()
  local f = function(x) return x * x * x end
  T.eq(mf.grad(mf.grad(f))(2):item(), 12, 1e-5)
  T.eq(mf.grad(f)(2):item(), 12, 1e-5)
  local p = function(x) return x ^ 3 end
  T.eq(mf.grad(mf.grad(p))(2):item(), 12, 1e-4)
end)

T.test("nested tapes give the second derivative", function()
  local x = mf.tensor(2.0)
  local outer = mf.GradientTape()
  outer:watch(x)
  local inner = mf.GradientTape()
  inner:watch(x)
  local y = x * x * x
  local dy = inner:gradient(y, x)
  T.eq(dy:item(), 12, 1e-5)
  T.eq(outer:gradient(dy, x):item(), 12, 1e-5)
end)

T.test("persistent tape can be asked twice", function()
  local x = mf.tensor(3.0)
  local tape = mf.GradientTape{persistent = true}
  tape:watch(x)
  local y = x * x
  local z = y * y
  T.eq(tape:gradient(y, x):item(), 6, 1e-6)
  T.eq(tape:gradient(z, x):item(), 108, 1e-4)
end)

T.test("non-persistent tape asked twice is an error", function()
  local x = mf.tensor(3.0)
  local tape = mf.GradientTape()
  tape:watch(x)
  local y = x * x
  tape:gradient(y, x)
  T.raises(function() tape:gradient(y, x) end, "a non-persistent GradientTape can only be "
           .. "used once; create it with {persistent = true}")
end)

T.test("array of sources, unconnected none and zero", function()
  local a, b, c = mf.tensor(2.0), mf.tensor(5.0), mf.tensor{1.0, 2.0}
  local tape = mf.GradientTape{persistent = true}
  tape:watch{a, b, c}
  local y = a * b
  local g = tape:gradient(y, {a, b, c})
  T.eq(g.n, 3)
  T.eq(g[1]:item(), 5, 1e-6)
  T.eq(g[2]:item(), 2, 1e-6)
  T.eq(g[3], nil)
  local z = tape:gradient(y, {a, c}, {unconnected = "zero"})
  T.eq(z[2], {0, 0})
  T.raises(function() tape:gradient(y, a, {unconnected = "maybe"}) end, "invalid option 'maybe'")
end)

T.test("non-scalar target sums; output_gradients weights", function()
  local x = mf.tensor{1.0, 2.0, 3.0}
  local tape = mf.GradientTape{persistent = true}
  tape:watch(x)
  local y = x * x
  T.eq(tape:gradient(y, x), {2, 4, 6}, 1e-6)
  local w = mf.tensor{1.0, 0.0, 2.0}
  T.eq(tape:gradient(y, x, {output_gradients = w}), {2, 0, 12}, 1e-6)
  T.eq(tape:gradient(y, x, {output_gradients = {w}}), {2, 0, 12}, 1e-6)
  T.raises(function() tape:gradient(y, x, {output_gradients = mf.tensor{1.0, 2.0}}) end,
           "output_gradients has shape (2,) (float32) but the target has shape (3,)")
end)

T.test("stop() stops recording", function()
  local x = mf.tensor(3.0)
  local tape = mf.GradientTape{persistent = true}
  tape:watch(x)
  local y = x * x
  tape:stop()
  local z = y * x
  T.eq(tape:gradient(y, x):item(), 6, 1e-6)
  T.eq(tape:gradient(z, x), nil)
  T.ok(tape:explain(z, x):find("the tape was stopped", 1, true), tape:explain(z, x))
end)

T.test("explain says why", function()
  local x = mf.tensor{1.0, 2.0}
  local u = mf.tensor{1.0, 2.0}
  local tape = mf.GradientTape{persistent = true}
  tape:watch(x)
  local y = x * x
  local s = mf.stop_gradient(y) * x
  local other = mf.tensor{3.0, 4.0}
  tape:watch(other)
  local o = other * other
  T.ok(tape:explain(y, x):find("connected", 1, true))
  T.ok(tape:explain(y, u):find("not watched", 1, true))
  T.ok(tape:explain(mf.stop_gradient(y), x):find("stop_gradient", 1, true))
  T.ok(tape:explain(o, x):find("never used", 1, true))
  T.eq(tape:gradient(s, x), {1, 4}, 1e-6)
  local idx = mf.argmax(y)
  local k = mf.cast(idx, "float32") * mf.reduce_sum(x)
  local e = tape:explain(mf.cast(idx, "float32"), x)
  T.ok(e:find("argmax", 1, true), e)
  T.eq(tape:gradient(mf.cast(idx, "float32"), x), nil)
  T.ok(k)
end)

T.test("explain: integer tensors carry no gradient", function()
  local v = mf.Variable(mf.tensor({1, 2}, "int32"), {name = "counts"})
  local tape = mf.GradientTape{persistent = true}
  local y = mf.reduce_sum(v * 2)
  T.ok(tape:explain(y, v):find("the source is an int32 tensor", 1, true), tape:explain(y, v))
  local x = mf.tensor{1.5, 2.0}
  tape:watch(x)
  local z = mf.reduce_sum(mf.cast(mf.cast(x, "int32"), "float32"))
  local e = tape:explain(z, x)
  T.ok(e:find("'cast' (Cast, record", 1, true) and e:find("gives an int32 tensor", 1, true), e)
  T.eq(tape:gradient(z, x), nil)
  T.ok(tape:explain(mf.reduce_sum(x * x), x):find("connected", 1, true))
end)

T.test("mf.grad gives nil for integer arguments (labels), as tape:gradient does", function()
  local w = mf.tensor{1.0, 2.0}
  local labels = mf.tensor({3, 4}, "int64")
  local f = function(a, l) return mf.reduce_sum(a * mf.cast(l, "float32")) end
  local dw, dl = mf.grad(f)(w, labels)
  T.eq(dw, {3, 4})
  T.eq(dl, nil)
  local v, dw2, dl2 = mf.value_and_grad(f)(w, labels)
  T.eq(v:item(), 11)
  T.eq(dw2, {3, 4})
  T.eq(dl2, nil)
end)

T.test("explain for Variables", function()
  local v = mf.Variable(2.0, {trainable = false, name = "frozen"})
  local tape = mf.GradientTape()
  local y = v * v
  T.ok(tape:explain(y, v):find("'frozen' is not trainable", 1, true), tape:explain(y, v))
  T.eq(tape:gradient(y, v), nil)
  local w = mf.Variable(2.0, {name = "w"})
  local t2 = mf.GradientTape{watch_accessed_variables = false}
  local y2 = w * w
  T.ok(t2:explain(y2, w):find("watch_accessed_variables = false", 1, true))
  local t3 = mf.GradientTape{watch_accessed_variables = false}
  t3:watch(w)
  local y3 = w * w
  T.eq(t3:gradient(y3, w):item(), 4, 1e-6)
end)

T.test("print(tape) lists the records", function()
  local x = mf.tensor{1.0, 2.0, 3.0}
  local tape = mf.GradientTape{persistent = true}
  tape:watch(x)
  local y = mf.reduce_sum(x * x)
  local s = tostring(tape)
  T.ok(s:find("<GradientTape persistent, recording, 2 records>", 1, true), s)
  T.ok(s:find("1  t1 = Mul%(watched, watched%)%s+%(3,%), %(3,%) %-> %(3,%)"), s)
  T.ok(s:find("2  t2 = Sum%(t1%)%s+%(3,%) %-> %(%)"), s)
  T.ok(y)
end)

T.test("mf.grad argnums and value_and_grad", function()
  local f = function(a, b) return a * a * b end
  local ga, gb = mf.grad(f)(3, 2)
  T.eq(ga:item(), 12, 1e-5)
  T.eq(gb:item(), 9, 1e-5)
  T.eq(mf.grad(f, {argnums = 2})(3, 2):item(), 9, 1e-5)
  local v, g = mf.value_and_grad(f, {argnums = {1}})(3, 2)
  T.eq(v:item(), 18, 1e-5)
  T.eq(g:item(), 12, 1e-5)
  T.raises(function() mf.grad(function(x) return x * mf.tensor{1, 2} end)(1.0) end,
           "grad: f must return a scalar, got shape (2,)")
  T.raises(function() mf.grad(f, {argnums = 3})(1, 2) end, "argnums entry 3 is out of range")
  T.raises(function() mf.grad(function() error("boom") end)(1) end, "boom")
  T.eq(mf.grad(function(x) return mf.tensor(1.0) end)(2):item(), 0)
end)

T.test("custom_gradient", function()
  local clip = mf.custom_gradient(function(x)
    local y = x * x
    return y, function(dy) return dy * 10 end
  end)
  local x = mf.tensor(3.0)
  local tape = mf.GradientTape()
  tape:watch(x)
  local y = clip(x)
  T.eq(y:item(), 9)
  T.eq(tape:gradient(y, x):item(), 10, 1e-6)
  local bad = mf.custom_gradient(function(x) return x * 2, function(dy) error("no grad") end end)
  local t2 = mf.GradientTape()
  t2:watch(x)
  local z = bad(x)
  T.raises(function() t2:gradient(z, x) end, "custom_gradient: the gradient function failed")
  T.raises(function() mf.custom_gradient(function(x) return x end)(x) end,
           "custom_gradient: f must return y (a tensor) and a gradient function")
end)

T.test("gradcheck passes and fails", function()
  local ok, msg = mf.test.gradcheck(function(a, b) return mf.reduce_sum(a * b * a) end,
                                    {mf.tensor{1.0, 2.0}, mf.tensor{3.0, -1.0}})
  T.ok(ok, msg)
  local wrong = mf.custom_gradient(function(x)
    return x * x, function(dy) return dy * x * 3 end
  end)
  local ok2, msg2 = mf.test.gradcheck(function(x) return mf.reduce_sum(wrong(x)) end,
                                      {mf.tensor{{1.0, 2.0}}})
  T.eq(ok2, false)
  T.ok(msg2:find("gradcheck: input 1, index {1,1}: analytic 3, numeric 2",
                 1, true), msg2)
  -- f's own error object comes through, whether under the tape or in the
  -- differences; what f returns is checked
  local x = mf.tensor({1, 2}, "float64")
  local okf, err = pcall(mf.test.gradcheck, function() error({code = 7}) end, {x})
  T.eq(okf, false)
  T.eq(err.code, 7)
  local calls = 0
  T.raises(function()
    mf.test.gradcheck(function(a)
      calls = calls + 1
      if calls > 2 then error("late failure") end
      return mf.reduce_sum(a * a)
    end, {x})
  end, "late failure")
  T.raises(function() mf.test.gradcheck(function() return "s" end, {x}) end,
           "gradcheck: f must return a tensor, got string")
  T.eq(x:totable()[2], 2, "the caller's input is not perturbed (a float64 copy is)")
end)

T.test("tape userdata errors and closing", function()
  local tape = mf.GradientTape()
  T.raises(function() tape:watch("x") end, "mf.Tensor expected")
  T.raises(function() mf.GradientTape(3) end, "table expected")
  do
    local t <close> = mf.GradientTape()
  end
  tape:stop()
  T.ok(tostring(tape):find("stopped", 1, true))
end)

T.test("10,000 taped steps keep memory flat", function()
  local w = mf.Variable(mf.tensor{0.5})
  local xin, b = mf.tensor{2.0}, mf.tensor{0.1}
  local function step()
    local tape = mf.GradientTape()
    local y = mf.reduce_sum((w * xin + b) ^ 2)
    local g = tape:gradient(y, w)
    w:assign_sub(g * 0.001)
  end
  for _ = 1, 100 do step() end
  collectgarbage()
  local before = mf.memory().tensors
  for _ = 1, 10000 do step() end
  collectgarbage()
  collectgarbage()
  local after = mf.memory().tensors
  T.ok(after <= before + 2, string.format("tensors %d -> %d", before, after))
end)

T.test("split gradients accumulate in place, equal to the Pad + AddV2 path", function()
  -- x (4, 6) cut into 4 rows and 3 column blocks, overlapping reads, a
  -- strided dy (transpose) and a view accumulator: the walk adds each slice's
  -- gradient into its window; under an outer recording tape it takes the
  -- op's gradient (Pad, AddV2). Both must give the same values.
  for _, dt in ipairs{"float32", "float64"} do
    local x = mf.reshape(mf.cast(mf.range(0, 24), dt), {4, 6}) * 0.25 - 1
    local function grads(outer)
      local o = outer and mf.GradientTape() or nil
      if o then o:watch(x) end
      local tape = mf.GradientTape()
      tape:watch(x)
      local rows, cols = mf.split(x, 4, 1), mf.split(x, 3, 2)
      local y = mf.reduce_sum(mf.transpose(rows[2], {2, 1}) * 3) + mf.reduce_sum(rows[4] * rows[4])
      for i, c in ipairs(cols) do y = y + mf.reduce_sum(c * c * i) end
      y = y + mf.reduce_sum(mf.reshape(x, {24}) * 0.5)
      tape:stop()
      local g = tape:gradient(y, x)
      if o then o:stop() end
      return g
    end
    local fast, slow = grads(false), grads(true)
    local ft = fast:totable()
    T.eq(mf.reduce_max(mf.abs(fast - slow)):item(), 0)
    -- d/dx: 0.5 everywhere, +3 on row 2, +2x on row 4, +2*i*x in column block i
    for r = 1, 4 do
      for c = 1, 6 do
        local v = ((r - 1) * 6 + c - 1) * 0.25 - 1
        local want = 0.5 + (r == 2 and 3 or 0) + (r == 4 and 2 * v or 0) + 2 * ((c + 1) // 2) * v
        T.eq(ft[r][c], want, 1e-5)
      end
    end
  end
end)

T.test("a weight read by several MatMuls: its gradient accumulated in place by GEMM", function()
  -- w read by 5 MatMuls in every transpose combination (and once as the
  -- first operand): the walk adds each db into the held gradient with one
  -- GEMM (beta = 1); under an outer recording tape it takes MatMul + AddV2.
  -- Same values (float64 exactly here: small K), and the analytic gradient.
  for _, dt in ipairs{"float32", "float64"} do
    local w = mf.reshape(mf.cast(mf.range(0, 12), dt), {3, 4}) * 0.125 - 0.5
    local xs = {}
    for i = 1, 5 do
      xs[i] = mf.reshape(mf.cast(mf.range(0, 6), dt), {2, 3}) * (0.1 * i) + 0.05 * i
    end
    local function grads(outer)
      local o = outer and mf.GradientTape() or nil
      if o then o:watch(w) end
      local tape = mf.GradientTape()
      tape:watch(w)
      local y = mf.reduce_sum(mf.matmul(xs[1], w))                                  -- (2,3)(3,4)
      y = y + mf.reduce_sum(mf.square(mf.matmul(xs[2], w)))
      y = y + mf.reduce_sum(mf.matmul(mf.transpose(xs[3]), w, {transpose_a = true}) * 2)
      y = y + mf.reduce_sum(mf.matmul(mf.ones({2, 4}, dt), w, {transpose_b = true}) * xs[4])
      y = y + mf.reduce_sum(mf.matmul(mf.ones({4, 2}, dt), w,
                                      {transpose_a = true, transpose_b = true}) * xs[5])
      y = y + mf.reduce_sum(mf.matmul(w, mf.ones({4, 1}, dt)))                      -- w as a
      tape:stop()
      local g = tape:gradient(y, w)
      if o then o:stop() end
      return g
    end
    local fast, slow = grads(false), grads(true)
    T.ok(mf.reduce_max(mf.abs(fast - slow)):item() <= (dt == "float32" and 1e-5 or 0),
         dt .. ": in place equals MatMul + AddV2")
    -- analytic: sum over the products of x^T dy
    local ones = function(r, c) return mf.ones({r, c}, dt) end
    local want = mf.matmul(xs[1], ones(2, 4), {transpose_a = true})
               + mf.matmul(xs[2], mf.matmul(xs[2], w) * 2, {transpose_a = true})
               + mf.matmul(xs[3], ones(2, 4), {transpose_a = true}) * 2
               + mf.matmul(xs[4], ones(2, 4), {transpose_a = true})
               + mf.matmul(xs[5], ones(2, 4), {transpose_a = true})
               + ones(3, 4)
    T.ok(mf.reduce_max(mf.abs(fast - want)):item() <= 1e-5, dt .. ": the analytic gradient")
  end
  local prof = mf.profile(function()
    local w = mf.Variable(mf.ones{3, 4})
    local tape = mf.GradientTape()
    local y = mf.reduce_sum(mf.matmul(mf.ones{2, 3}, w) + mf.matmul(mf.ones{2, 3}, w))
    tape:gradient(y, {w})
  end)
  local rows = {}
  for _, r in ipairs(prof:rows()) do rows[r.op] = r.calls end
  T.eq(rows["MatMul[gradient accumulated]"], 1)
end)

T.test("nested sources: mixed tables keep their shape, a cycle is an error", function()
  local a, b = mf.tensor(2.0), mf.tensor(3.0)
  local tape = mf.GradientTape{persistent = true}
  tape:watch{a, b}
  local y = a * b
  local g = tape:gradient(y, {a, named = {b}})
  T.eq(g[1]:item(), 3, 1e-6)
  T.eq(g.named[1]:item(), 2, 1e-6)
  local c = {a}
  c[2] = c
  T.raises(function() tape:gradient(y, c) end, "gradient: structures nested deeper than 32")
end)

T.done()
