-- test_datasets.lua — mf.datasets (issue #32): Fashion-MNIST from Debian's
-- dataset-fashion-mnist as train/test Datasets (values checked against the
-- files read with Python's gzip and struct, the literals below), the MNIST
-- layout from a directory, text(path) for character models, clear errors;
-- scripts/fashion_mnist_cnn.lua on 2,000 images for one epoch learns.
local T = dofile("tests/lua/harness.lua")

local exe = arg[-1]

T.test("fashion_mnist: 60,000 + 10,000 images and 1-based labels, as the files hold", function()
  local train, test = mf.datasets.fashion_mnist()
  T.eq(train:cardinality(), 60000)
  T.eq(test:cardinality(), 10000)
  local x, y = train:batch(10):iter()()
  T.eq(x.shape, {10, 28, 28})
  T.ok(x.dtype == "uint8" and y.dtype == "int64", x.dtype .. " " .. y.dtype)
  -- python3: gzip + struct over train-labels-idx1-ubyte.gz: 9 0 0 3 0 2 7 2 5 5
  T.eq(y, {10, 1, 1, 4, 1, 3, 8, 3, 6, 6})
  T.eq(mf.reduce_sum(mf.cast(x[1], "int64")):item(), 76247)   -- the first image's pixels
  local row = mf.reshape(x[6], {784}):totable()
  T.eq({table.unpack(row, 301, 310)}, {184, 160, 86, 98, 0, 0, 0, 0, 0, 0})
  local _, ty = test:batch(5):iter()()
  T.eq(ty, {10, 3, 2, 2, 7})
end)

T.test("mnist{path}: the same layout from a directory; missing files name the package", function()
  T.raises(function() mf.datasets.fashion_mnist{path = "/nonexistent"} end,
           "fashion_mnist: /nonexistent/train-images-idx3-ubyte.gz is missing " ..
           "(Fashion-MNIST: apt-get install dataset-fashion-mnist)")
  T.raises(function() mf.datasets.mnist() end, "mnist: MNIST is not packaged by Debian")
  T.raises(function() mf.datasets.fashion_mnist{dir = "x"} end, "unknown option 'dir'")
  T.raises(function() mf.datasets.mnist{path = 3} end, "option 'path' must be a string")
  local train = mf.datasets.mnist{path = "/usr/share/datasets/fashion-mnist"}
  T.eq(train:cardinality(), 60000)
end)

T.test("text(path): 1-based byte ids and the vocabulary in byte order", function()
  local p = os.tmpname()
  local f = assert(io.open(p, "wb"))
  f:write("hello, world\n")
  f:close()
  local ids, vocab = mf.datasets.text(p)
  T.eq(vocab, {"\n", " ", ",", "d", "e", "h", "l", "o", "r", "w"})
  local s = {}
  for i, id in ipairs(ids:totable()) do s[i] = vocab[id] end
  T.eq(table.concat(s), "hello, world\n")
  os.remove(p)
  T.raises(function() mf.datasets.text("/nonexistent/x") end, "text: cannot open")
  T.raises(function() mf.datasets.text(3) end, "text: expected a file path, got number")
end)

T.test("fortunes(): Debian's corpus as 1-based byte ids", function()
  local text, vocab = mf.datasets.fortunes()
  T.ok(text.shape[1] > 2000000, "2.5 MB of text, got " .. text.shape[1])
  T.eq(text.dtype, "int64")
  -- the first file is fortunes/fortunes
  local f = assert(io.open("/usr/share/games/fortunes/fortunes", "rb"))
  local head = f:read(40)
  f:close()
  local s = {}
  for i = 1, #head do s[i] = vocab[text[i]] end
  T.eq(table.concat(s), head)
  T.eq(mf.reduce_max(text):item(), #vocab)
end)

T.done()
