-- test_dist.lua — mf.dist: the world of one process (no mpirun), ds:shard,
-- and the multi-process tests in tests/dist/*.lua run under mpirun (Open
-- MPI) with 2 and 3 processes over shared memory (btl self,vader,
-- --oversubscribe on this 2-core machine): training eager and graph, fit,
-- every collective and dtype, mismatches, a failing / interrupted / killed
-- rank, a step failing on one rank, a rank ending early, os.exit, save and
-- restore, and a short run of the mf.dist fuzzer (tests/dist/fuzz.lua). Open MPI refuses root without OMPI_ALLOW_RUN_AS_ROOT*
-- (set here for the child processes only). Under the sanitizers, LeakSanitizer
-- reads tests/dist/lsan_openmpi.supp (Open MPI's own allocations only).
local T = dofile("tests/lua/harness.lua")
local exe = arg[-1] or arg[0]

T.test("a script without mpirun is one process of a world of one", function()
  T.eq(mf.dist.rank(), 0)
  T.eq(mf.dist.size(), 1)
  T.eq(mf.dist.is_chief(), true)
  mf.dist.barrier()
  local t = mf.tensor{{1, 2}, {3, 4}}
  for _, op in ipairs{"sum", "mean", "max", "min"} do
    T.eq(mf.dist.allreduce(t, {op = op}), {{1, 2}, {3, 4}})
  end
  T.eq(mf.dist.broadcast(t), {{1, 2}, {3, 4}})
  T.eq(mf.dist.allgather(t), {{1, 2}, {3, 4}})
  T.eq(mf.dist.allgather(mf.tensor(5)), {5})
  T.eq(mf.dist.allreduce(mf.zeros{0}).shape, {0})
  local v = mf.Variable(mf.tensor{1, 2})
  mf.dist.broadcast_variables({v})
  T.eq(v, {1, 2})
end)

T.test("bad arguments name the function and what it expected", function()
  T.raises(function() mf.dist.allreduce(mf.tensor{1}, {op = "avg"}) end,
           'allreduce: op must be "mean", "sum", "max" or "min", got avg')
  T.raises(function() mf.dist.allreduce(mf.tensor({1}, "int32")) end,
           "allreduce: op 'mean' needs a float32 or float64 tensor, got int32 (use op 'sum')")
  T.raises(function() mf.dist.allreduce(mf.tensor{1}, {opp = "sum"}) end, "unknown option 'opp'")
  T.raises(function() mf.dist.broadcast(mf.tensor{1}, {root = 1}) end,
           "broadcast: root must be a rank in 0..0, got 1")
  T.raises(function() mf.dist.broadcast_variables({1}) end,
           "broadcast_variables: element 1 must be a Variable, got number")
  T.raises(function() mf.dist.DistributedOptimizer(3) end,
           "DistributedOptimizer: expected an optimizer (e.g. mf.train.AdamOptimizer(0.01)), "
           .. "got number")
  local adam = mf.train.AdamOptimizer(0.1)
  T.raises(function() mf.dist.DistributedOptimizer(adam, {fusion_bytes = 0}) end,
           "DistributedOptimizer: fusion_bytes must be >= 1, got 0")
  T.raises(function() mf.dist.DistributedOptimizer(adam, {bucket_bytes = 0}) end,
           "DistributedOptimizer: bucket_bytes must be >= 1, got 0")
  T.raises(function() mf.dist.DistributedOptimizer(adam, {overlap = 1}) end,
           "DistributedOptimizer: option 'overlap' must be a boolean, got number")
end)

T.test("DistributedOptimizer over one process is its optimizer, bit for bit", function()
  local function run(wrap)
    local w = mf.Variable(mf.tensor{{1, 2}, {3, 4}}, {name = "w"})
    local b = mf.Variable(mf.tensor({0.5, -1}, "float64"), {name = "b"})
    local opt = mf.train.AdamOptimizer(0.1)
    if wrap then opt = mf.dist.DistributedOptimizer(opt, {fusion_bytes = 8}) end
    for _ = 1, 3 do
      opt:minimize(function()
        return mf.reduce_sum(mf.square(w)) + mf.cast(mf.reduce_sum(b * b), "float32")
      end)
    end
    return w, b, opt
  end
  local w1, b1 = run(false)
  local w2, b2, opt = run(true)
  T.eq(w2, w1:totable())
  T.eq(b2, b1:totable())
  T.ok(tostring(opt):find("^DistributedOptimizer%(AdamOptimizer%(learning_rate=0.1"), tostring(opt))
  T.ok(tostring(opt):find("averaged over 1 process%)$"), tostring(opt))
  T.eq(opt:get_name(), "Adam")
end)

-- The Chrome trace of a profile, as text.
local function trace_json(prof)
  local trace = os.tmpname()
  prof:save_trace(trace)
  local f = assert(io.open(trace))
  local json = f:read("a")
  f:close()
  os.remove(trace)
  return json
end

T.test("graph mode: the allreduce is a node of the graph and of the profile", function()
  local g = mf.Graph()
  local train_op, x
  g:as_default(function()
    x = mf.placeholder("float32", {-1, 2}, "x")
    local w = mf.Variable(mf.ones{2, 1}, {name = "w"})
    local opt = mf.dist.DistributedOptimizer(mf.train.GradientDescentOptimizer(0.1),
                                             {overlap = false})
    train_op = opt:minimize(mf.reduce_mean(mf.matmul(x, w)))
  end)
  T.ok(tostring(g):find("MPIAllreduce"), "print(g) shows no MPIAllreduce:\n" .. tostring(g))
  local sess = mf.Session(g)
  sess:run(g:as_default(function() return mf.global_variables_initializer() end))
  local prof = mf.profile(function() sess:run(train_op, {[x] = mf.tensor{{1, 2}}}) end)
  local text = tostring(prof)
  local found
  for _, row in ipairs(prof:rows()) do
    if row.type == "MPIAllreduce" then found = row end
  end
  T.ok(found and found.calls == 1 and found.bytes == 8, "no MPIAllreduce row:\n" .. text)
  -- one fused buffer: w (2,1) float32 = 8 bytes, one call per step
  T.ok(text:find("allreduce: 1 call, 8B reduced (8B per call)", 1, true), text)
  local json = trace_json(prof)
  T.ok(json:find('"op": "MPIAllreduce", "flops": 0, "gflops": 0.000, "bytes": 8', 1, true), json)
end)

T.test("graph mode overlapped: start and wait nodes, run as early and as late as they can",
       function()
  local g = mf.Graph()
  local train_op, x, w1
  g:as_default(function()
    x = mf.placeholder("float32", {-1, 4}, "x")
    w1 = mf.Variable(mf.ones{4, 3}, {name = "w1"})
    local w2 = mf.Variable(mf.ones{3, 2}, {name = "w2"})
    local opt = mf.dist.DistributedOptimizer(mf.train.GradientDescentOptimizer(0.1),
                                             {bucket_bytes = 1})
    train_op = opt:minimize(mf.reduce_mean(mf.matmul(mf.nn.relu(mf.matmul(x, w1)), w2)))
  end)
  local text = tostring(g)
  local _, starts = text:gsub("= MPIAllreduceStart%(", "")
  local _, waits = text:gsub("= MPIAllreduceWait%(allreduce_start", "")
  T.eq({starts, waits}, {2, 2}, nil, text)
  T.ok(not text:find("= MPIAllreduce%("), text)
  local sess = mf.Session(g)
  sess:run(g:as_default(function() return mf.global_variables_initializer() end))
  local _, sched = sess:run(train_op, {[x] = mf.ones{2, 4}}, {schedule = true})
  local at = {}   -- step of each op's first and last run
  for _, s in ipairs(sched) do
    at[s.op] = at[s.op] or {first = s.step}
    at[s.op].last = s.step
  end
  -- w2's allreduce starts before w1's gradient (the last MatMul) is computed,
  -- and no wait runs before the last MatMul: the allreduce overlaps it
  T.ok(at.MPIAllreduceStart.first < at.MatMul.last, "no start before the last MatMul")
  T.ok(at.MPIAllreduceWait.first > at.MatMul.last, "a wait ran before the last MatMul")
  local prof = mf.profile(function() sess:run(train_op, {[x] = mf.ones{2, 4}}) end)
  local seen = {}
  for _, row in ipairs(prof:rows()) do seen[row.type] = (seen[row.type] or 0) + row.calls end
  T.eq({seen.MPIAllreduceStart, seen.MPIAllreduceWait}, {2, 2}, nil, tostring(prof))
  -- w2 (3,2) and w1 (4,3) float32: 24 + 48 bytes
  T.ok(tostring(prof):find("allreduce: 2 calls, 72B reduced", 1, true), tostring(prof))
  local json = trace_json(prof)
  T.ok(json:find('"op": "MPIAllreduceStart", "flops": 0, "gflops": 0.000, "bytes": 24', 1, true)
       and json:find('"op": "MPIAllreduceWait"', 1, true), json)
  -- one process: the same step as the optimizer alone
  local g2 = mf.Graph()
  local w, op2, x2
  g2:as_default(function()
    x2 = mf.placeholder("float32", {-1, 4}, "x")
    w = {mf.Variable(mf.ones{4, 3}), mf.Variable(mf.ones{3, 2})}
    op2 = mf.train.GradientDescentOptimizer(0.1):minimize(
      mf.reduce_mean(mf.matmul(mf.nn.relu(mf.matmul(x2, w[1])), w[2])))
  end)
  local s2 = mf.Session(g2)
  s2:run(g2:as_default(function() return mf.global_variables_initializer() end))
  s2:run(op2, {[x2] = mf.ones{2, 4}})
  s2:run(op2, {[x2] = mf.ones{2, 4}})
  T.eq(sess:run(w1), s2:run(w[1]):totable())
end)

T.test("ds:shard: disjoint parts; drop_remainder: equal ones", function()
  local ds = mf.data.Dataset.from_tensor_slices(mf.range(1, 8))   -- 1..7
  local function items(d)
    local out = {}
    for x in d:iter() do out[#out + 1] = x:item() end
    return out
  end
  T.eq(items(ds:shard(3, 1)), {1, 4, 7})   -- TensorFlow's: every element kept
  T.eq(items(ds:shard(3, 1, {drop_remainder = true})), {1, 4})
  T.eq(items(ds:shard(3, 2, {drop_remainder = true})), {2, 5})
  T.eq(items(ds:shard(3, 3, {drop_remainder = true})), {3, 6})
  T.eq(items(ds:shard(1, 1)), {1, 2, 3, 4, 5, 6, 7})
  -- after a seeded shuffle: the same order on every process, so the parts
  -- are disjoint and together hold all but the remainder
  local a = items(ds:shuffle(7, {seed = 3}):shard(2, 1, {drop_remainder = true}))
  local b = items(ds:shuffle(7, {seed = 3}):shard(2, 2, {drop_remainder = true}))
  T.eq(#a, 3)
  T.eq(#b, 3)
  local seen = {}
  for _, v in ipairs(a) do seen[v] = true end
  for _, v in ipairs(b) do T.ok(not seen[v], "shards overlap at " .. v) end
  T.eq(tostring(ds:shard(2, 1):batch(2)),
       "mf.data.Dataset: 7 rows, 1 component, shard(2, 1) -> batch(2)")
  T.raises(function() ds:shard(2, 3) end, "shard: the shard index must be in 1..2, got 3")
  T.raises(function() ds:shard(0, 1) end, "shard: the number of shards must be a positive integer")
end)

-- ---- several processes ------------------------------------------------------------
local have_mpirun = os.execute("command -v mpirun > /dev/null 2>&1")
local supp = os.getenv("PWD") .. "/tests/dist/lsan_openmpi.supp"

-- Runs tests/dist/NAME.lua under mpirun with 'np' processes, ended after
-- 'limit' seconds (300); returns the output (stdout and stderr), the exit
-- status (124: the limit) and the seconds it took.
local function mpirun(np, script, args, limit)
  -- under the sanitizers: full stacks, so the suppressions see Open MPI's frames
  local asan = os.getenv("ASAN_OPTIONS")
  asan = asan and (asan .. ":fast_unwind_on_malloc=0") or ""
  local cmd = string.format(
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 LSAN_OPTIONS=suppressions=%s "
    .. "ASAN_OPTIONS=%s OMPI_MCA_btl=self,vader timeout %d mpirun --oversubscribe "
    .. "--bind-to none -x LSAN_OPTIONS -x ASAN_OPTIONS -np %d %s tests/dist/%s.lua %s 2>&1",
    supp, asan, limit or 300, np, exe, script, args or "")
  local t0 = mf.clock()
  local p = io.popen(cmd)
  local out = p:read("a")
  local _, _, code = p:close()
  return out, code, mf.clock() - t0
end

local function expect_pass(np, script, args, word)
  local out, code = mpirun(np, script, args)
  T.eq(code, 0, nil, script .. " " .. (args or "") .. " -np " .. np .. " failed:\n" .. out)
  for r = 0, np - 1 do
    T.ok(out:find(word:format(r)), "no '" .. word:format(r) .. "' in:\n" .. out)
  end
end

if not have_mpirun then
  io.stderr:write("SKIP the mpirun tests: mpirun is missing (tools/configure.sh installs it)\n")
else
  for _, np in ipairs{2, 3} do
    T.test("-np " .. np .. ": eager training: ranks bit-identical, equal to one process", function()
      expect_pass(np, "train", "eager 4", "PASS train eager rank %d of " .. np)
    end)
    T.test("-np " .. np .. ": graph training: ranks bit-identical, equal to one process", function()
      expect_pass(np, "train", "graph 4", "PASS train graph rank %d of " .. np)
    end)
    T.test("-np " .. np .. ": collectives per dtype, empty, large; mismatches", function()
      expect_pass(np, "collectives", "", "PASS collectives %d")
    end)
    for _, mode in ipairs{"trace", "eager"} do
      T.test("-np " .. np .. ": fit (" .. mode .. ") with DistributedOptimizer: ranks identical, "
             .. "equal to one process", function()
        expect_pass(np, "fit", mode, "PASS fit " .. mode .. " %d")
      end)
    end
    T.test("-np " .. np .. ": a step failing on rank 1 alone fails on every rank", function()
      expect_pass(np, "step_failed", "", "PASS step_failed %d")
    end)
    T.test("-np " .. np .. ": every rank calls os.exit(0): MPI ends properly", function()
      local out, code = mpirun(np, "ends", "all_exit", 120)
      T.eq(code, 0, nil, out)
      T.ok(not out:find("exiting improperly", 1, true), out)
      for r = 0, np - 1 do T.ok(out:find("PASS ends " .. r, 1, true), out) end
    end)
    for _, how in ipairs{"end", "os.exit"} do
      T.test("-np " .. np .. ": the last rank ends (" .. how .. ") while the others make an "
             .. "allreduce: they raise, no hang", function()
        local out, code = mpirun(np, "ends", how, 120)
        T.ok(code ~= 124, "the run hung until the timeout:\n" .. out)
        for r = 0, np - 2 do T.ok(out:find("PASS ends " .. r, 1, true), out) end
        -- the rank that ended says so and fails: the run was inconsistent
        T.ok(out:find(string.format("rank %d: mf.dist: rank %d ended its script while rank 0 "
                                    .. "made collective #2", np - 1, np - 1), 1, true), out)
        T.ok(code ~= 0, out)
      end)
    end
    T.test("-np " .. np .. ": the mf.dist fuzzer (tests/dist/fuzz.lua, 300 calls)", function()
      local seed = tostring(np)   -- another walk per size
      local out, code = mpirun(np, "fuzz", "300 " .. seed, 180)
      T.ok(code ~= 124, "the fuzzer hung until the timeout:\n" .. out)
      T.eq(code, 0, nil, out)
      for r = 0, np - 1 do T.ok(out:find("PASS fuzz " .. r .. ": 300 calls", 1, true), out) end
    end)
    T.test("-np " .. np .. ": save on rank 0, restore and broadcast", function()
      local dir = os.tmpname()
      os.remove(dir)
      os.execute("mkdir -p " .. dir)
      expect_pass(np, "saver", dir, "PASS saver %d")
      os.execute("rm -rf " .. dir)
    end)
  end
  T.test("-np 2: scripts/distributed_mlp.lua: shard sizes, one checksum", function()
    local out, code = mpirun(2, "../../scripts/distributed_mlp", "2")
    T.eq(code, 0, nil, out)
    for r = 0, 1 do
      T.ok(out:find("rank " .. r .. " of 2: shard of 300 rows (15 steps of 20 per epoch)", 1, true),
           out)
    end
    local sums = {}
    for r, sum in out:gmatch("rank (%d): final weights checksum (%S+)") do sums[#sums + 1] = sum end
    T.eq(#sums, 2, nil, out)
    T.eq(sums[1], sums[2], nil, out)
    T.ok(out:find("checksums identical on all 2 ranks: yes", 1, true), out)
  end)
  for _, how in ipairs{"raise", "interrupt", "kill"} do
    T.test("-np 3: rank 1 " .. how .. "s: every process ends, with the message", function()
      local out, code, secs = mpirun(3, "fail", how)
      T.ok(code ~= 0, "the run ended with status 0:\n" .. out)
      T.ok(code ~= 124, "the run hung until the timeout:\n" .. out)
      T.ok(not out:find("UNREACHABLE"), "a process went on:\n" .. out)
      local want = how == "raise" and "boom on rank 1" or how == "interrupt" and "interrupted"
                   or "exited on signal 9"
      T.ok(out:find(want, 1, true), "no '" .. want .. "' in:\n" .. out)
      if how ~= "kill" then
        T.ok(out:find("rank 1 failed; ending all 3 processes", 1, true), out)
      end
      io.stderr:write(string.format("  rank 1 %s: the run ended in %.1f s\n", how, secs))
    end)
  end
end

T.done()
