-- datasets.lua — mf.datasets: real data sets as Datasets (issue #32), part of
-- the Lua library above the face (doc/design.md), embedded by repl/lmf_lib.c.
-- fashion_mnist and mnist read the four gzip IDX files of the MNIST layout
-- with mf.data.read_idx; text reads a file for character models.
local mf, lib = ...
local fail, check_opts = lib.fail, lib.check_opts

local datasets = {}
mf.datasets = datasets

local FASHION_DIR = "/usr/share/datasets/fashion-mnist"
local FILES = {train = {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"},
               test = {"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"}}

local function readable(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- One split: images (n, 28, 28) uint8 and labels (n,) int64 1..10.
local function read_split(fname, dir, names)
  local images = mf.data.read_idx(dir .. "/" .. names[1])
  local labels = mf.data.read_idx(dir .. "/" .. names[2])
  if images.ndim ~= 3 or labels.ndim ~= 1 or images.shape[1] ~= labels.shape[1] then
    fail(fname, "%s and %s do not hold n images and n labels (shapes %s and %s)", names[1],
         names[2], lib.shape_text(images.shape), lib.shape_text(labels.shape))
  end
  return images, mf.cast(labels, "int64") + 1
end

-- The (train, test) Datasets of the MNIST-layout files in 'dir'; 'hint' says
-- where the files come from when one is missing.
local function mnist_layout(fname, opts, default_dir, hint)
  opts = check_opts(fname, opts, {path = true})
  local dir = opts.path or default_dir
  if type(dir) ~= "string" then fail(fname, "option 'path' must be a string, got %s", type(dir)) end
  for _, split in ipairs{"train", "test"} do
    for _, name in ipairs(FILES[split]) do
      if not readable(dir .. "/" .. name) then
        fail(fname, "%s/%s is missing (%s)", dir, name, hint)
      end
    end
  end
  local out = {}
  for i, split in ipairs{"train", "test"} do
    out[i] = mf.data.Dataset.from_tensor_slices{read_split(fname, dir, FILES[split])}
  end
  return out[1], out[2]
end

lib.help("datasets.fashion_mnist", "data",
  "train, test = mf.datasets.fashion_mnist([{path = dir}]);  mf.datasets.mnist{path = dir}",
  "Fashion-MNIST (Zalando's 70,000 28x28 grey images of clothes in 10 classes) as two " ..
  "Datasets: train (60,000) and test (10,000), each element an image (28, 28) uint8 " ..
  "0..255 and its label, int64 1..10 (moonflow's classes are 1-based; Keras's load_data " ..
  "gives 0..9 and NumPy arrays). The files are Debian's dataset-fashion-mnist package " ..
  "(/usr/share/datasets/fashion-mnist; tools/configure.sh installs it), or {path = dir} " ..
  "with the same four gzip IDX files. mnist{path = dir} reads MNIST's files of the same " ..
  "names and layout (Debian does not package them). Scale and batch with the Dataset " ..
  "methods: train:map(function(x, y) return mf.cast(x, \"float32\") / 255, y end).",
  [[
train, test = mf.datasets.fashion_mnist()
train:cardinality()                  --> 60000
x, y = test:iter()()
x.shape                              --> {28, 28}
y:item()                             --> 10]])
function datasets.fashion_mnist(opts)
  return mnist_layout("fashion_mnist", opts, FASHION_DIR,
                      "Fashion-MNIST: apt-get install dataset-fashion-mnist")
end

function datasets.mnist(opts)
  if opts == nil then
    fail("mnist", "MNIST is not packaged by Debian: give the directory of its four files, " ..
         "mf.datasets.mnist{path = dir} (train-images-idx3-ubyte.gz, ...)")
  end
  return mnist_layout("mnist", opts, nil, "MNIST's files from its publisher or a mirror")
end

-- A string's bytes as 1-based ids in byte order, and the vocabulary. Reads
-- the bytes 4,096 at a time (string.byte returns them all at once).
local function text_ids(s)
  local bytes = {}
  for i = 1, #s, 4096 do
    local chunk = {s:byte(i, math.min(i + 4095, #s))}
    for j = 1, #chunk do bytes[i + j - 1] = chunk[j] end
  end
  local seen, vocab, id = {}, {}, {}
  for i = 1, #bytes do seen[bytes[i]] = true end
  for b = 0, 255 do
    if seen[b] then
      vocab[#vocab + 1] = string.char(b)
      id[b] = #vocab
    end
  end
  for i = 1, #bytes do bytes[i] = id[bytes[i]] end
  return mf.tensor(bytes, "int64"), vocab
end

lib.help("datasets.text", "data",
  "text, vocab = mf.datasets.text(path)",
  "A text file for character models: 'text' is an int64 tensor of the file's characters " ..
  "as 1-based ids (bytes; a UTF-8 letter is several), 'vocab' the array of the distinct " ..
  "characters in byte order, so vocab[id] is the character of id. mf.datasets.fortunes() " ..
  "is a ready corpus.",
  [[
p = os.tmpname(); f = io.open(p, "w"); f:write("abba"); f:close()
text, vocab = mf.datasets.text(p)
text                                 --> {1, 2, 2, 1}
vocab[2]                             --> b
os.remove(p)]])
function datasets.text(path)
  local fname = "text"
  if type(path) ~= "string" then fail(fname, "expected a file path, got %s", type(path)) end
  local f, err = io.open(path, "rb")
  if not f then fail(fname, "cannot open %s", err) end
  local s = f:read("a")
  f:close()
  if #s == 0 then fail(fname, "%s is empty", path) end
  return text_ids(s)
end

-- Debian's fortunes package: its English files but the ASCII art, in this
-- order (the .dat indexes and .u8 links are not text).
local FORTUNES_DIR = "/usr/share/games/fortunes"
local FORTUNE_FILES = {"fortunes", "computers", "cookie", "debian", "definitions",
  "disclaimer", "drugs", "education", "ethnic", "food", "goedel", "humorists",
  "kids", "knghtbrd", "law", "linux", "linuxcookie", "literature", "love", "magic",
  "medicine", "men-women", "miscellaneous", "news", "paradoxum", "people", "perl", "pets",
  "platitudes", "politics", "pratchett", "riddles", "science", "songs-poems", "sports",
  "startrek", "tao", "translate-me", "wisdom", "work", "zippy"}

lib.help("datasets.fortunes", "data",
  "text, vocab = mf.datasets.fortunes()",
  "A 2.5 MB English corpus for character models, as mf.datasets.text gives it: the " ..
  "fortune cookies of Debian's fortunes package (" .. FORTUNES_DIR .. "; tools/test_deps.sh " ..
  "installs it), its files joined in a fixed order, each fortune ending in a line '%'. " ..
  "scripts/char_rnn.lua and char_gpt.lua train on it when given no file.",
  [[
text, vocab = mf.datasets.fortunes()
text.shape[1] > 2000000              --> true]])
function datasets.fortunes()
  local parts = {}
  for _, name in ipairs(FORTUNE_FILES) do
    local f = io.open(FORTUNES_DIR .. "/" .. name, "rb")
    if f then
      parts[#parts + 1] = f:read("a")
      f:close()
    end
  end
  if #parts == 0 then
    fail("fortunes", "%s/ has no fortune files (apt-get install fortunes)", FORTUNES_DIR)
  end
  return text_ids(table.concat(parts))
end
