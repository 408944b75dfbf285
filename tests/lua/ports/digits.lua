-- digits.lua — the 8x8 digits standing in for MNIST in the TF1 tutorial ports.
-- data/digits500.csv: the first 500 rows of scikit-learn's digits (Debian python3-sklearn,
-- sklearn/datasets/data/digits.csv.gz), committed so that make test needs no heavy install:
-- 64 pixels 0..16 then the label 0..9. Rows 1..400 are the training set, 401..500 the test
-- set. mnist.train.next_batch(n) is replaced by a deterministic walk (batch i starts at row
-- (i*n) mod 400), the order gen_mnist_expected.py uses with PyTorch.
local data = mf.data.read_csv("tests/lua/ports/data/digits500.csv")
local images = mf.slice(data, {1, 1}, {500, 64}) / 16
local digit = mf.cast(mf.reshape(mf.slice(data, {1, 65}, {500, 1}), {500}), "int64")
local labels = mf.one_hot(digit + 1, 10)   -- classes are 1-based: digit d is class d + 1
local D = {
  test_images = mf.slice(images, {401, 1}, {100, 64}),
  test_labels = mf.slice(labels, {401, 1}, {100, 10}),
}
function D.next_batch(i, n)   -- i counts from 0, as the tutorial's loop variable
  local s = (i * n) % 400
  return mf.slice(images, {s + 1, 1}, {n, 64}), mf.slice(labels, {s + 1, 1}, {n, 10})
end
return D
