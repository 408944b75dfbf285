-- test_scripts.lua — runs every scripts/*.lua with this moonflow binary
-- (arg[-1]) and checks that it exits 0 and prints its key line; script 05 also
-- runs on gzip-compressed IDX files given as arguments.
local T = dofile("tests/lua/harness.lua")

local moonflow = arg[-1]
local tmpfiles = {}

-- Runs the binary on a script with arguments; returns ok, output (stdout and stderr).
local function run(script, ...)
  local cmd = {"OPENBLAS_NUM_THREADS=1", moonflow, script, ...}
  local p = assert(io.popen(table.concat(cmd, " ") .. " 2>&1"))
  local out = p:read("a")
  local ok, how, code = p:close()
  return ok and how == "exit" and code == 0, out
end

local function number_after(out, label)
  return tonumber(out:match(label .. "%s*=%s*(%-?[%d%.]+)"))
end

-- Per script: a check of its output (scripts without one must just exit 0).
local checks = {
  ["01_tensors.lua"] = function(out) T.ok(out:find("tensors: done", 1, true), "closing line") end,
  ["02_autodiff.lua"] = function(out)
    T.eq(number_after(out, "dy/dx"), 27)
    T.eq(number_after(out, "f''"), 12)
    T.eq(number_after(out, "mf.grad%(mf.grad%(cube%)%)%(2%)"), 12)
    T.ok(out:find("not watched", 1, true), "explain says not watched")
  end,
  ["03_linear_regression.lua"] = function(out)
    T.eq(number_after(out, "\nw"), 3, 0.05, "learned w")
    T.eq(number_after(out, "\nb"), 2, 0.05, "learned b")
  end,
  ["04_clip_and_mask.lua"] = function(out)
    T.ok(out:find("after 1.0000", 1, true), "clipped global norm is 1")
    T.ok(out:find("masked rows unchanged:\ttrue", 1, true), "mask kept rows")
  end,
  ["05_mnist_softmax.lua"] = function(out)
    T.ok(number_after(out, "test accuracy") >= 0.9, "test accuracy")
  end,
  ["06_graph_mode.lua"] = function(out)
    T.eq(number_after(out, "graph loss"), 5 / 3, 1e-3)
    T.ok(out:find("reduce_mean%s+Mean"), "schedule lists the Mean node")
  end,
  ["07_cnn.lua"] = function(out)
    T.ok(out:find("loss decreased: true", 1, true), "loss decreased")
  end,
  ["profile_conv_backprop.lua"] = function(out)
    T.ok(out:find("Backward pass of a small CNN", 1, true), "report title")
  end,
}

local scripts = {}
local ls = assert(io.popen("ls scripts/*.lua"))
for path in ls:lines() do scripts[#scripts + 1] = path end
ls:close()
T.ok(#scripts >= 8, "found the scripts")

for _, path in ipairs(scripts) do
  T.test(path, function()
    local ok, out = run(path)
    T.ok(ok, path .. " exited with an error:\n" .. out)
    local check = checks[path:match("[^/]+$")]
    if ok and check then check(out) end
  end)
end

-- 05 with IDX files given as arguments, gzip-compressed.
local function gz_idx(dims, bytes)
  local name = os.tmpname()
  tmpfiles[#tmpfiles + 1] = name
  local p = assert(io.popen("gzip -c > '" .. name .. "'", "w"))
  p:write(string.char(0, 0, 0x08, #dims))
  for _, d in ipairs(dims) do p:write(string.pack(">I4", d)) end
  p:write(bytes)
  p:close()
  return name
end

T.test("05 on IDX files given as arguments", function()
  local img, lab = {}, {}
  for i = 1, 100 do
    local k = (i - 1) % 2                 -- class 0: bright top half, class 1: bright bottom
    local px = {}
    for p = 0, 783 do px[p + 1] = ((p < 392) == (k == 0)) and 200 or 20 end
    img[i], lab[i] = string.char(table.unpack(px)), string.char(k)
  end
  local images = gz_idx({100, 28, 28}, table.concat(img))
  local labels = gz_idx({100}, table.concat(lab))
  local ok, out = run("scripts/05_mnist_softmax.lua", images, labels, 2)
  T.ok(ok, out)
  T.ok(out:find("loaded 100 images of 28x28", 1, true), out)
  T.ok(not out:find("synthetic", 1, true), "used the files")
  T.eq(number_after(out, "test accuracy"), 1)
end)

for _, name in ipairs(tmpfiles) do os.remove(name) end
T.done()
