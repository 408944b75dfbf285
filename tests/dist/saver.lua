-- saver.lua DIR — run by tests/lua/test_dist.lua under mpirun -np 2 / 3:
-- a Saver in a data-parallel run writes on rank 0 only and the others wait
-- for it (the file is complete on every process when save returns; a failed
-- write fails on every process with rank 0's message); restore, then
-- broadcast_variables, gives every process the saved values and slots.
local dir = arg[1]
local rank, size = mf.dist.rank(), mf.dist.size()
local w = mf.Variable(mf.random.normal({3, 2}, {seed = 1}), {name = "w"})
local opt = mf.dist.DistributedOptimizer(mf.train.AdamOptimizer(0.1))
local x = mf.fill({4, 3}, rank + 1)
for _ = 1, 2 do opt:minimize(function() return mf.reduce_sum(mf.square(mf.matmul(x, w))) end) end
local saved = mf.identity(w) + 0
local saved_m = mf.identity(opt:get_slot(w, "m")) + 0
local saver = mf.train.Saver({w = w}, {optimizers = {opt}})
local path = dir .. "/model.safetensors"
saver:save(path)
local f = assert(io.open(path, "rb"), "rank " .. rank .. ": no file after save returned")
f:close()
local back = mf.load(path)
assert(mf.reduce_max(mf.abs(back.w - saved)):item() == 0, "file differs from rank's values")

-- A write that fails on rank 0 fails on every process, with its message.
local ok, err = pcall(saver.save, saver, dir .. "/no/such/dir/model.safetensors")
assert(not ok and err:find("Saver.save", 1, true), tostring(err))
if rank > 0 then assert(err:find("(on rank 0)", 1, true), err) end

-- Perturb (differently per rank), restore, broadcast: all back to the saved values.
w:assign(mf.fill({3, 2}, 100 + rank))
opt:get_slot(w, "m"):assign(mf.fill({3, 2}, rank))
if rank == 0 then saver:restore(path) end
mf.dist.broadcast_variables({w, opt:get_slot(w, "m"), opt:get_slot(w, "v")})
assert(mf.reduce_max(mf.abs(w - saved)):item() == 0, "w not restored on rank " .. rank)
assert(mf.reduce_max(mf.abs(opt:get_slot(w, "m") - saved_m)):item() == 0, "m not restored")
mf.dist.barrier()
print("PASS saver " .. rank)
