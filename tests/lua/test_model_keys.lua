-- test_model_keys.lua — state_dict / save / load keys are paths within the
-- model (issue #35 L1: a nested Sequential or two layers of one name saved
-- 4 of 6 Variables; issue #27: a model rebuilt in the same process could not
-- load its own file, its layer names being process-wide counters). Keras 3
-- saves by structure (layers numbered by class within their parent) and
-- PyTorch by attribute path; both load a rebuilt model.
local T = dofile("tests/lua/harness.lua")
local L = mf.layers

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end

local function nested()
  return L.Sequential{L.Sequential{L.Dense(3), L.Dense(2)}, L.Dense(1)}
end

local function tmpfile()
  return os.tmpname() .. ".safetensors"
end

T.test("L1: a Sequential in a Sequential saves every Variable under its own key", function()
  local x = mf.random.normal({4, 5}, {seed = 3})
  local a = nested()
  local ya = a(x)
  T.eq(#a.variables, 6)
  local sd = a:state_dict()
  T.eq(sorted_keys(sd), {"dense/bias", "dense/kernel", "sequential/dense/bias",
                         "sequential/dense/kernel", "sequential/dense_1/bias",
                         "sequential/dense_1/kernel"})
  T.eq(sd["sequential/dense_1/kernel"].shape, {3, 2})
  local path = tmpfile()
  a:save(path)
  local b = nested()      -- new random weights, new layer names (dense_3, ...)
  b(x)
  T.ok(mf.reduce_max(mf.abs(b(x) - ya)):item() > 1e-3, "a fresh model should differ first")
  b:load(path)
  T.eq(b(x), ya, 0)
  os.remove(path)
end)

T.test("L1: two layers with the same name keep two keys", function()
  local m = L.Sequential{L.Dense(2, {name = "same"}), L.Dense(2, {name = "same"})}
  local x = mf.ones{1, 2}
  local y = m(x)
  T.eq(sorted_keys(m:state_dict()), {"dense/bias", "dense/kernel", "dense_1/bias",
                                     "dense_1/kernel"})
  local m2 = L.Sequential{L.Dense(2, {name = "same"}), L.Dense(2, {name = "same"})}
  m2(x)
  m2:load_state_dict(m:state_dict())
  T.eq(m2(x), y, 0)
end)

T.test("#27: a model built again in the same process loads the file of the first", function()
  local function build()
    return L.Sequential{L.Conv2D(2, 3, {input_shape = {5, 5, 1}}), L.Flatten(), L.Dense(4),
                        L.Dense(2)}
  end
  local x = mf.random.uniform({2, 5, 5, 1}, {seed = 1})
  local a = build()
  local ya = a(x)
  local path = tmpfile()
  a:save(path)
  local b = build()                  -- conv2d_1, dense_2...: other names, the same paths
  b(x)
  T.ok(b.layers[3].name ~= a.layers[3].name, "the layer names differ")
  b:load(path)
  T.eq(b(x), ya, 0)
  T.eq(sorted_keys(a:state_dict()), {"conv2d/bias", "conv2d/kernel", "dense/bias",
                                     "dense/kernel", "dense_1/bias", "dense_1/kernel"})
  os.remove(path)
end)

T.test("a file keyed by layer names (before paths) still loads", function()
  local m = L.Sequential{L.Dense(2), L.Dense(1)}
  local x = mf.ones{3, 2}
  m(x)
  local old = {}
  for _, layer in ipairs(m.layers) do
    old[layer.name .. "/kernel"] = mf.ones(layer.kernel.shape) * 0.5
    old[layer.name .. "/bias"] = mf.ones(layer.bias.shape)
  end
  T.ok(m.layers[1].name ~= "dense", "this test needs names that are not the paths")
  m:load_state_dict(old)
  T.eq(m.layers[1].kernel, {{0.5, 0.5}, {0.5, 0.5}})
  -- a table that is neither: the path keys are reported
  T.raises(function() m:load_state_dict({["dense/kernel"] = mf.ones{2, 2}}) end,
           "missing 'dense/bias'")
  T.raises(function() m:load_state_dict({}) end,
           "keys are paths within the model, e.g. \"dense_1/kernel\"")
end)

T.done()
