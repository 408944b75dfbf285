-- test_copy_block.lua — the block copies of core/ops/shape_ops.c (ConcatV2,
-- Stack, Tile, Pad, ... all go through copy_block) and the contiguous copy
-- of a strided tensor (core/tensor.c mf_tensor_copy_into: Reshape of a
-- view, the attention op's operands) on strided views: rows contiguous on
-- both sides (one memcpy each, the gradient of a split into heads) and rows
-- strided on one side, at ranks 1 to 5 where the row offsets follow an
-- odometer. Expected values are read element by element from the sources'
-- tables (Lua indexing, not these copies).
local T = dofile("tests/lua/harness.lua")

-- t[i1][i2]...[ik] of a nested Lua table, idx 1-based.
local function at(t, idx)
  for _, i in ipairs(idx) do t = t[i] end
  return t
end

-- Every index of 'shape' in row-major order.
local function each_index(shape, fn)
  local idx = {}
  for d = 1, #shape do idx[d] = 1 end
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  for _ = 1, n do
    fn(idx)
    for d = #shape, 1, -1 do
      idx[d] = idx[d] + 1
      if idx[d] <= shape[d] then break end
      idx[d] = 1
    end
  end
end

-- mf.concat(parts, axis) checked element by element against the parts.
local function check_concat(parts, axis)
  local got = mf.concat(parts, axis)
  local tabs, starts, total = {}, {}, 0
  for i, p in ipairs(parts) do
    tabs[i], starts[i] = p:totable(), total
    total = total + p.shape[axis]
  end
  local g, bad = got:totable(), 0
  each_index(got.shape, function(idx)
    local k = #parts
    while starts[k] >= idx[axis] do k = k - 1 end
    local src = {table.unpack(idx)}
    src[axis] = idx[axis] - starts[k]
    if at(g, idx) ~= at(tabs[k], src) then bad = bad + 1 end
  end)
  return bad
end

local function noise(shape, seed) return mf.random.normal(shape, {seed = seed}) end

T.test("concat of head-transposed views: contiguous rows of 32 floats", function()
  local B, H, Tn, hd = 3, 4, 5, 32
  local parts = {}
  for i = 1, 3 do parts[i] = mf.transpose(noise({B, H, Tn, hd}, i), {1, 3, 2, 4}) end
  T.eq(check_concat(parts, 3), 0)
end)

T.test("concat of views strided in their last axis, ranks 1 to 5", function()
  T.eq(check_concat({noise({7}, 1), noise({2, 5}, 2)[{{}, 2}]}, 1), 0)
  for rank = 2, 5 do
    local shape, perm = {}, {}
    for d = 1, rank do shape[d], perm[d] = d + 1, rank - d + 1 end
    local a = mf.transpose(noise(shape, rank), perm)        -- every axis strided
    local b = mf.transpose(noise(shape, rank + 10), perm)
    for axis = 1, rank do T.eq(check_concat({a, b}, axis), 0, nil, "rank " .. rank) end
  end
end)

T.test("stack and tile of strided views", function()
  local a = mf.transpose(noise({3, 4, 6}, 7), {3, 1, 2})
  local s = mf.stack({a, a}, 2)
  local at_, st = a:totable(), s:totable()
  local bad = 0
  each_index(s.shape, function(idx)
    if at(st, idx) ~= at(at_, {idx[1], idx[3], idx[4]}) then bad = bad + 1 end
  end)
  T.eq(bad, 0)
  local t = mf.tile(a, {2, 1, 3})
  local tt = t:totable()
  bad = 0
  each_index(t.shape, function(idx)
    local src = {(idx[1] - 1) % 6 + 1, idx[2], (idx[3] - 1) % 4 + 1}
    if at(tt, idx) ~= at(at_, src) then bad = bad + 1 end
  end)
  T.eq(bad, 0)
end)

T.test("reshape (a contiguous copy) of strided views, ranks 1 to 5", function()
  local views = {noise({2, 9}, 3)[{{}, 4}], mf.transpose(noise({3, 4, 5, 32}, 4), {1, 3, 2, 4})}
  for rank = 2, 5 do
    local shape, perm = {}, {}
    for d = 1, rank do shape[d], perm[d] = d + 1, rank - d + 1 end
    views[#views + 1] = mf.transpose(noise(shape, rank + 20), perm)
  end
  for i, v in ipairs(views) do
    local flat, vt, k, bad = mf.reshape(v, {-1}):totable(), v:totable(), 0, 0
    each_index(v.shape, function(idx)
      k = k + 1
      if flat[k] ~= at(vt, idx) then bad = bad + 1 end
    end)
    T.eq(bad, 0, nil, "view " .. i)
  end
end)

T.done()
