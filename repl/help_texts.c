/* help_texts.c — the hand-written help entries: one per user-facing function
 * of mf that is not an op of the table (an op's help is in its descriptor,
 * core/ops/; see help.h for the fields) nor written in Lua (the files of
 * lib/ declare theirs beside the functions, with lib.help). Examples are
 * prompt input; "--> v" shows the value the line prints, with tensors
 * written as nested tables of their values (what t:totable() gives). tests/lua/test_shell.lua runs every
 * example and checks each "-->" value, so keep them true. */
#include <stddef.h>

#include "help.h"
#include "version.h"

#define E(name, topic, sig, text, example) {name, topic, sig, text, example, -1}

const LmfHelpEntry lmf_help_entries[] = {
    /* ---- creation --------------------------------------------------------------- */
    E("Tensor", "creation", "mf.Tensor: properties t.shape t.dtype t.ndim #t t[i] t.name",
      "A tensor is an immutable n-dimensional array of one dtype (float32, float64, int32, "
      "int64, bool). t.shape is a fresh Lua array of its dimensions, t.dtype its dtype name, "
      "t.ndim its rank and #t the length of axis 1. t[i] (1-based) is a Lua number for a 1-D "
      "tensor and the sub-tensor along axis 1 otherwise. The operators + - * / % ^ and unary - "
      "work between tensors and with Lua numbers on either side; most functions are also "
      "methods (t:reduce_sum(2), a:matmul(b)). Graph tensors also have t.name.",
      "x = mf.tensor{{1, 2, 3}, {4, 5, 6}}\n"
      "x.shape          --> {2, 3}\n"
      "x.dtype          --> float32\n"
      "#x               --> 2\n"
      "x[2]             --> {4, 5, 6}\n"
      "x * 2 + 1        --> {{3, 5, 7}, {9, 11, 13}}"),
    E("tensor", "creation", "mf.tensor(data [, dtype])",
      "Makes a tensor from a Lua number, boolean or nested table of them (the nesting must be "
      "rectangular). Numbers give float32 unless 'dtype' names another dtype (\"float64\", "
      "\"int32\", \"int64\", \"bool\"); booleans give bool. A tensor argument is returned as it "
      "is. Use mf.cast to change the dtype of an existing tensor.",
      "x = mf.tensor{{1, 2}, {3, 4}}\n"
      "x.shape                              --> {2, 2}\n"
      "mf.tensor({1, 2, 3}, \"int64\").dtype  --> int64\n"
      "mf.tensor(true).dtype                --> bool"),
    E("constant", "creation", "mf.constant(data [, {dtype, shape, name}])",
      "TensorFlow's constant: like mf.tensor, with options. 'dtype' picks the dtype; 'shape' "
      "either repeats a scalar to fill the shape or gives the data (with as many elements) that "
      "shape; 'name' names the node in graph mode. mf.constant(data, dtype) also works.",
      "mf.constant(7, {shape = {2, 2}})                   --> {{7, 7}, {7, 7}}\n"
      "mf.constant({1, 2, 3, 4}, {shape = {2, 2}})        --> {{1, 2}, {3, 4}}\n"
      "mf.constant({1, 2}, {dtype = \"float64\"}).dtype   --> float64"),
    E("zeros", "creation", "mf.zeros(shape [, dtype])",
      "A tensor of the given shape (a Lua array such as {2, 3}, or one number for 1-D) filled "
      "with zeros; float32 unless 'dtype' says otherwise.",
      "mf.zeros{2, 3}.shape          --> {2, 3}\n"
      "mf.zeros({2}, \"int32\")        --> {0, 0}"),
    E("ones", "creation", "mf.ones(shape [, dtype])",
      "A tensor of the given shape filled with ones; float32 unless 'dtype' says otherwise.",
      "mf.ones{2, 2}                --> {{1, 1}, {1, 1}}\n"
      "mf.ones({3}, \"int64\").dtype  --> int64"),
    E("fill", "creation", "mf.fill(shape, value [, dtype])",
      "A tensor of the given shape with every element equal to 'value'. The dtype follows the "
      "value (a number gives float32, a boolean bool) unless 'dtype' is given.",
      "mf.fill({2, 2}, 7)          --> {{7, 7}, {7, 7}}\n"
      "mf.fill({2}, true)          --> {true, true}"),
    E("zeros_like", "creation", "mf.zeros_like(t [, dtype])",
      "Zeros with the shape and dtype of 't' (or the given dtype).",
      "mf.zeros_like(mf.tensor{{1, 2}})   --> {{0, 0}}"),
    E("ones_like", "creation", "mf.ones_like(t [, dtype])",
      "Ones with the shape and dtype of 't' (or the given dtype).",
      "mf.ones_like(mf.tensor{{5, 6}})    --> {{1, 1}}"),
    E("eye", "creation", "mf.eye(n [, {num_columns, dtype}])",
      "The n x n identity matrix, or n x num_columns with ones on the main diagonal. "
      "mf.eye(n, m) is short for {num_columns = m}.",
      "mf.eye(2)                          --> {{1, 0}, {0, 1}}\n"
      "mf.eye(2, {num_columns = 3})       --> {{1, 0, 0}, {0, 1, 0}}"),
    E("range", "creation", "mf.range(start, limit [, delta [, {dtype}]])",
      "Numbers from 'start' up to but not including 'limit' (as TensorFlow), in steps of "
      "'delta' (default 1, may be negative). mf.range(limit) starts at 0. Integer arguments "
      "give int32, others float32, unless {dtype = ...} is given.",
      "mf.range(5)              --> {0, 1, 2, 3, 4}\n"
      "mf.range(1, 2, 0.25)     --> {1, 1.25, 1.5, 1.75}\n"
      "mf.range(3, 0, -1)       --> {3, 2, 1}\n"
      "mf.range(4).dtype        --> int32"),
    E("linspace", "creation", "mf.linspace(a, b, n [, {dtype}])",
      "'n' evenly spaced numbers from 'a' to 'b', both ends included; float32 by default.",
      "mf.linspace(0, 1, 5)     --> {0, 0.25, 0.5, 0.75, 1}"),
    E("item", "creation", "t:item()",
      "The value of a tensor with exactly one element (any rank), as a Lua number or boolean. "
      "Useful to read a loss or a reduction; an error names the shape when there are more "
      "elements.",
      "mf.tensor{{42}}:item()                    --> 42\n"
      "mf.reduce_sum(mf.tensor{1, 2, 3}):item()  --> 6"),
    E("totable", "creation", "t:totable()",
      "The values of 't' as nested Lua tables (numbers or booleans), one level per axis. For a "
      "scalar (rank 0) tensor it is a Lua number or boolean.",
      "mf.tensor{{1, 2}, {3, 4}}:totable()     --> {{1, 2}, {3, 4}}\n"
      "mf.tensor(5):totable()                  --> 5"),
    E("numel", "creation", "t:numel()",
      "The number of elements of 't' (the product of its shape), as a Lua integer.",
      "mf.zeros{2, 3}:numel()     --> 6"),

    /* ---- random ----------------------------------------------------------------- */
    E("random.seed", "random", "mf.random.seed(n)",
      "Sets the global random seed and restarts the sequence of op seeds, so the random "
      "tensors made after it are the same on every run (and in eager and graph mode). An op "
      "given {seed = s} is reproducible on its own, as in TensorFlow. In a graph (and in "
      "mf.trace), a random op keeps the seed it was built with but each sess:run (or call) "
      "draws fresh values, as TensorFlow 1's stateful random ops: the first run equals eager "
      "mode, and a new Session (or process) with the same seeds repeats the same sequence.",
      "mf.random.seed(42)\n"
      "a = mf.random.normal{3}\n"
      "mf.random.seed(42)\n"
      "mf.equal(a, mf.random.normal{3})     --> {true, true, true}\n"
      "g = mf.Graph()\n"
      "g:as_default(function() r = mf.random.normal({2}, {seed = 1}) end)\n"
      "s = mf.Session(g)\n"
      "mf.equal(s:run(r), s:run(r))         --> {false, false}"),
    E("random.normal", "random", "mf.random.normal(shape [, {mean, stddev, dtype, seed}])",
      "A tensor of samples from a normal distribution with the given mean (default 0) and "
      "standard deviation (default 1); float32 unless dtype is float64. In a graph, each "
      "run draws fresh samples (see mf.random.seed).",
      "x = mf.random.normal({1000}, {mean = 5, stddev = 2, seed = 1})\n"
      "x.shape                                        --> {1000}\n"
      "math.abs(mf.reduce_mean(x):item() - 5) < 0.5   --> true"),
    E("random.uniform", "random", "mf.random.uniform(shape [, {minval, maxval, dtype, seed}])",
      "Samples uniform in [minval, maxval) (defaults 0 and 1). Integer dtypes need 'maxval' and "
      "give integers in [minval, maxval). In a graph, each run draws fresh samples (see "
      "mf.random.seed).",
      "x = mf.random.uniform({2, 3}, {minval = -1, maxval = 1})\n"
      "x.shape                                                    --> {2, 3}\n"
      "mf.random.uniform({4}, {maxval = 10, dtype = \"int32\"}).dtype --> int32"),
    E("random.truncated_normal", "random",
      "mf.random.truncated_normal(shape [, {mean, stddev, dtype, seed}])",
      "Like mf.random.normal, but samples further than two standard deviations from the mean "
      "are drawn again, as TensorFlow's truncated_normal (a common weight initialiser). In a "
      "graph, each run draws fresh samples (see mf.random.seed).",
      "x = mf.random.truncated_normal({1000}, {seed = 3})\n"
      "mf.reduce_max(mf.abs(x)):item() <= 2     --> true"),
    E("random.shuffle", "random", "mf.random.shuffle(t [, {seed}])",
      "A copy of 't' with its slices along axis 1 in a random order (rows of a matrix stay "
      "whole). In a graph, each run draws a fresh order (see mf.random.seed).",
      "x = mf.random.shuffle(mf.range(5), {seed = 7})\n"
      "x.shape                   --> {5}\n"
      "mf.reduce_sum(x)          --> 10"),

    /* ---- linalg (mf.trace: tf.function, and the matrix trace of a tensor) ------- */
    E("trace", "graph", "mf.trace(f) -> fn;  fn(...);  fn:graph(...);  mf.trace(t)",
      "TensorFlow's tf.function (function is a Lua keyword). mf.trace(f) returns a callable: "
      "on the first call for an input signature (dtype and shape of each tensor argument; "
      "numbers, strings and booleans by value; arrays element by element) it calls f once with "
      "placeholders to build a graph, then runs that graph with the in-degree executor on that "
      "and every later call (f's Lua code does not run again). Eager Variables used inside are "
      "captured by reference: each call reads their current values, and v:assign inside "
      "updates them. Results may be tensors, Variables, arrays of them or Lua values. "
      "fn:graph(...) gives the graph for those arguments; fn:trace_count() the signatures "
      "traced (a warning on stderr at the 10th: pass values that change, such as a learning "
      "rate, as tensors). While a GradientTape records, fn runs f eagerly so the tape sees the ops. "
      "A GradientTape made inside f gives symbolic gradients (of the ops built while it "
      "recorded), and opt:apply_gradients / opt:minimize on captured Variables add Apply ops "
      "that update them (and the optimizer's slots) on every call, as in eager mode. "
      "Name clash: mf.trace with a tensor (not a function) is the matrix trace, the sum of the "
      "diagonal, as t:trace().",
      "sq = mf.trace(function(x) return x * x + 1 end)\n"
      "sq(mf.tensor{1, 2})                  --> {2, 5}\n"
      "sq(mf.tensor{3, 4})                  --> {10, 17}\n"
      "sq:trace_count()                     --> 1\n"
      "mf.trace(mf.tensor{{1, 2}, {3, 4}})       --> 5"),
    E("tensordot", "linalg", "mf.tensordot(a, b, axes)",
      "Sums products over the given axes of a and b. 'axes' = N contracts the last N axes of "
      "a with the first N of b; 'axes' = {{axes of a}, {axes of b}} names them (1-based). The "
      "result has the remaining axes of a, then those of b.",
      "a = mf.ones{2, 3}\n"
      "b = mf.ones{3, 4}\n"
      "mf.tensordot(a, b, 1).shape               --> {2, 4}\n"
      "mf.tensordot(a, b, {{2}, {1}})            --> {{3, 3, 3, 3}, {3, 3, 3, 3}}"),

    /* ---- shape ------------------------------------------------------------------ */
    E("split", "shape", "mf.split(t, n_or_sizes, axis)",
      "Cuts 't' along 'axis' into n equal parts, or into parts of the given sizes (an array); "
      "returns a Lua array of tensors.",
      "parts = mf.split(mf.range(6), 3, 1)\n"
      "#parts                                      --> 3\n"
      "parts[2]                                    --> {2, 3}\n"
      "mf.split(mf.range(6), {2, 4}, 1)[2]         --> {2, 3, 4, 5}"),
    E("unstack", "shape", "mf.unstack(t [, axis])",
      "Cuts 't' along 'axis' (default 1) into its slices, each with that axis removed; "
      "returns a Lua array of tensors (the inverse of mf.stack).",
      "rows = mf.unstack(mf.tensor{{1, 2}, {3, 4}})\n"
      "rows[2]                                     --> {3, 4}"),

    /* ---- clipping --------------------------------------------------------------- */
    E("clip_by_value", "clipping", "mf.clip_by_value(t, lo, hi)",
      "Each element limited to [lo, hi] (numbers or tensors that broadcast).",
      "mf.clip_by_value(mf.tensor{-2, 0.5, 3}, 0, 1)    --> {0, 0.5, 1}"),
    E("clip_by_norm", "clipping", "mf.clip_by_norm(t, clip_norm [, {axes}])",
      "Scales 't' so that its L2 norm (over 'axes', or all elements) is at most clip_norm: "
      "t * clip_norm / max(norm, clip_norm), TensorFlow's formula. Often applied to each "
      "gradient between compute_gradients and apply_gradients. A zero norm leaves 't' "
      "unchanged (no NaN) and clip_norm = math.huge clips nothing (the formula would give NaN).",
      "mf.clip_by_norm(mf.tensor{3, 4}, 1)              --> {0.6, 0.8}\n"
      "mf.clip_by_norm(mf.tensor{3, 4}, 10)             --> {3, 4}"),
    E("clip_by_average_norm", "clipping", "mf.clip_by_average_norm(t, clip_norm)",
      "TensorFlow's clip_by_average_norm: scales 't' so that its L2 norm divided by its number "
      "of elements is at most clip_norm, i.e. clip_by_norm(t, clip_norm * size(t)) (the size "
      "is taken when the op runs, so unknown graph dims are fine).",
      "mf.clip_by_average_norm(mf.tensor{3, 4}, 1)      --> {3, 4}\n"
      "mf.clip_by_average_norm(mf.tensor{3, 4}, 0.5)    --> {0.6, 0.8}"),
    E("clip_by_global_norm", "clipping",
      "mf.clip_by_global_norm(list, clip_norm [, {use_norm, nonfinite = \"nan\"}])",
      "Scales every tensor of the array by clip_norm / max(global_norm, clip_norm), where "
      "global_norm is the L2 norm of all of them together (or 'use_norm'). Returns the clipped "
      "array and the global norm (a scalar tensor); nil entries pass through. Edge cases: a "
      "zero norm leaves the tensors unchanged; clip_norm = math.huge clips nothing (TensorFlow's "
      "formula would give NaN); a non-finite global norm (inf or NaN: a diverged gradient) makes "
      "every output NaN as in TensorFlow, or, with nonfinite = \"error\", raises instead.",
      "c, n = mf.clip_by_global_norm({mf.tensor{3, 4}, mf.tensor{12}}, 6.5)\n"
      "n                                                --> 13\n"
      "c[1]                                             --> {1.5, 2}\n"
      "c[2]                                             --> {6}"),
    E("global_norm", "clipping", "mf.global_norm(list)",
      "sqrt of the sum of squares of all elements of all tensors in the array (nil entries "
      "are skipped); a scalar tensor.",
      "mf.global_norm{mf.tensor{3, 4}, mf.tensor{12}}   --> 13"),

    /* ---- printing --------------------------------------------------------------- */
    E("set_printoptions", "printing",
      "mf.set_printoptions{precision, threshold, edgeitems, linewidth}",
      "Changes how tensors print: 'precision' decimals (default 4), more than 'threshold' "
      "elements (default 1000) are summarised with '...' keeping 'edgeitems' (default 3) at "
      "each end of each axis, and lines wrap at 'linewidth' columns (default 75). Only the "
      "given options change.",
      "mf.set_printoptions{precision = 2}\n"
      "print(mf.tensor{math.pi, 1e-3})\n"
      "mf.set_printoptions{precision = 4}"),
    E("get_printoptions", "printing", "mf.get_printoptions()",
      "The current print options as a fresh table {precision, threshold, edgeitems, "
      "linewidth}.",
      "mf.get_printoptions().precision        --> 4"),

    /* ---- shell ------------------------------------------------------------------ */
    E("help", "shell", "help([topic | name | function])",
      "help() lists the topics; help \"topic\" lists a topic's functions; help \"matmul\", "
      "help \"mf.random.normal\" or help(mf.matmul) shows a function's signature, what it does "
      "and an example. help(sess.run) or help(opt.minimize) shows the entry of a method's "
      "class, help(mf.nn) a table's functions. A name that is not known gets the closest "
      "names suggested. Also mf.help.",
      "help()\n"
      "help \"math\"\n"
      "help(mf.matmul)"),
    E("config", "shell", "mf.config([{conv_algorithm}])",
      "The build and machine configuration as a table {version, lua, blas, corename, threads, "
      "coretype_env, conv_algorithm}: moonflow's version, the Lua release, OpenBLAS's "
      "configuration string, the CPU kernel it chose (set OPENBLAS_CORETYPE to force one; "
      "coretype_env shows it), the BLAS thread count and the convolution kernel setting. "
      "Printed at the prompt it reads as a short report. mf.config{conv_algorithm = "
      "\"auto\" | \"im2col\" | \"winograd\" | \"direct\"} sets the kernel of every float32 "
      "convolution that does not ask for one (see help(mf.nn.conv2d)).",
      "mf.config().version               --> " MF_VERSION "\n"
      "mf.config().conv_algorithm        --> auto\n"
      "mf.config().threads >= 1          --> true"),
    E("set_num_threads", "shell", "mf.set_num_threads(n)",
      "Sets the number of threads moonflow's kernels (matmul, convolutions, elementwise loops) "
      "share their work among (n >= 1). At start-up it is MOONFLOW_NUM_THREADS, else "
      "OPENBLAS_NUM_THREADS; OpenBLAS itself runs single-threaded inside them.",
      "mf.set_num_threads(1)\n"
      "mf.config().threads               --> 1"),
    E("memory", "shell", "mf.memory()",
      "Engine memory as a table {in_use, cached, tensors}: bytes held by live tensors, bytes "
      "kept by the caching allocator for reuse, and the number of live tensors. Lua's "
      "collector frees unreachable tensors on its own; collectgarbage() forces it.",
      "m = mf.memory()\n"
      "m.in_use >= 0 and m.tensors >= 0  --> true"),
    E("clock", "shell", "mf.clock()",
      "Seconds on a monotonic wall clock, for timing code: unlike os.clock(), which adds up "
      "the CPU time of every thread, it measures elapsed time when BLAS runs multi-threaded.",
      "t0 = mf.clock()\n"
      "mf.clock() - t0 >= 0              --> true"),

    /* ---- autodiff and variables (API.md "Eager autodiff", "Variables") ----------- */
    E("GradientTape", "autodiff",
      "mf.GradientTape{persistent = false, watch_accessed_variables = true}",
      "Records the ops run while it is active (from creation until tape:stop()) on the "
      "tensors it watches: trainable Variables when used, and tensors given to tape:watch(t). "
      "tape:gradient(target, sources [, {output_gradients, unconnected = \"none\"|\"zero\"}]) "
      "returns d target / d sources: one gradient for one source, an array for an array (nil "
      "where unconnected). A non-persistent tape can be asked once. Tapes nest, so second "
      "derivatives work. print(tape) lists what it recorded (op, input and output shapes); "
      "tape:explain(target, source) says whether a gradient can flow from target back to "
      "source, and why not (never watched, recording stopped, an integer tensor on the path...). "
      "As TensorFlow 2: targets and sources may be arrays or string-keyed (nested) tables, the "
      "gradients of several targets add up, an unwatched tensor's gradient is nil; "
      "tape:jacobian(y, x), tape:batch_jacobian(y, x), tape:stop_recording(fn), tape:reset() "
      "and tape:watched_variables().",
      "x = mf.tensor{1, 2, 3}\n"
      "tape = mf.GradientTape()\n"
      "tape:watch(x)\n"
      "y = mf.reduce_sum(x * x)\n"
      "tape:stop()\n"
      "tape:gradient(y, x)               --> {2, 4, 6}"),
    E("grad", "autodiff", "mf.grad(f [, {argnums}])",
      "A function that computes the gradient of the scalar function 'f' at its arguments (by "
      "running 'f' under a tape); 'argnums' picks the arguments (1-based: a number or an array; "
      "by default every argument, so each must be a tensor or a number). One gradient comes "
      "back per picked argument, as separate values (dx, dy = mf.grad(f)(x, y)); nil for an "
      "integer or bool argument (labels, indices), as tape:gradient gives. "
      "mf.grad(mf.grad(f)) is the second derivative.",
      "df = mf.grad(function(x) return mf.reduce_sum(x * x * x) end)\n"
      "df(mf.tensor{1, 2})               --> {3, 12}"),
    E("value_and_grad", "autodiff", "mf.value_and_grad(f [, {argnums}])",
      "Like mf.grad, but the function it returns gives the value of 'f' and then the "
      "gradients, from one evaluation.",
      "vg = mf.value_and_grad(function(x) return mf.reduce_sum(x * x) end)\n"
      "v, g = vg(mf.tensor{1, 2})\n"
      "v                                 --> 5"),
    E("custom_gradient", "autodiff", "mf.custom_gradient(f)",
      "Wraps 'f', which returns its result y and a function(dy) giving the gradients of its "
      "inputs, so gradients use that function instead of differentiating the ops inside 'f' "
      "(for numerically stable or clipped gradients). Eager tapes call it with dy; in graph "
      "mode (mf.gradients, a tape inside mf.trace) it is called while the gradient graph is "
      "built, with a symbolic dy, and the nodes it adds are the gradient. Errors in it name "
      "custom_gradient.",
      "clipped = mf.custom_gradient(function(x) return mf.identity(x), "
      "function(dy) return mf.clip_by_value(dy, -1, 1) end end)\n"
      "f = function(x) return clipped(x) * 5 end\n"
      "mf.grad(f)(2)                                        --> 1\n"
      "mf.trace(function(x) return mf.grad(f)(x) end)(2)    --> 1"),
    E("test.gradcheck", "autodiff", "mf.test.gradcheck(f, inputs [, {eps, atol, rtol}])",
      "Compares the tape's gradients of the scalar function 'f' at the array 'inputs' with "
      "central differences, in float64: the inputs are converted to float64 first, so "
      "tensors 'f' makes itself (constants) should be float64 too. Returns true, or false and "
      "a message naming the input, the index, both values and their difference.",
      "f = function(x) return mf.reduce_sum(mf.tanh(x)) end\n"
      "mf.test.gradcheck(f, {mf.tensor({0.5, -1}, \"float64\")})     --> true"),
    E("Variable", "variables", "mf.Variable(initial_value [, {name, trainable = true, dtype}])",
      "A tensor whose value can change: v:assign(x), v:assign_add(x), v:assign_sub(x); "
      "v:read_value() gives the current value. Usable wherever a tensor is. Trainable "
      "Variables are watched by gradient tapes and updated by optimizers. 'initial_value' is "
      "a tensor, Lua data, or an initializer call such as mf.initializers.glorot_uniform(){2, 3}. "
      "Inside g:as_default it is a graph variable (TensorFlow 1.x): a VariableV2 node whose "
      "value lives in each Session, initialised by mf.global_variables_initializer(); there "
      "v:assign(x), assign_add, assign_sub return assign ops (tensors: the new value) to run, "
      "and v:read_value() a read that control dependencies can order (gradients pass "
      "through it to v); v.initializer is its Assign op. Reading one before initialising it "
      "is an error naming the variable; an initial value that reads another variable uses "
      "v:initialized_value().",
      "v = mf.Variable(mf.zeros{2})\n"
      "v:assign_add(mf.ones{2})\n"
      "v:read_value()                    --> {1, 1}"),
    E("initialized_value", "variables", "v:initialized_value()",
      "TensorFlow 1.x's v.initialized_value(): for a graph Variable, its value once "
      "initialised and its initial value before, so another variable's initial value can read "
      "it: mf.global_variables_initializer() then works whatever order the initializers run "
      "in. For an eager Variable, its value.",
      "g = mf.Graph()\n"
      "w2 = g:as_default(function()\n"
      "  w = mf.Variable(mf.tensor{1, 2}, {name = \"w\"})\n"
      "  local w2 = mf.Variable(w:initialized_value() * 2, {name = \"w2\"})\n"
      "  init = mf.global_variables_initializer()\n"
      "  return w2 end)\n"
      "s = mf.Session(g); s:run(init)\n"
      "s:run(w2)                         --> {2, 4}"),
    E("initializers", "variables", "mf.initializers.NAME([options])",
      "Initializers for Variables, each a callable init(shape [, dtype]): zeros(), ones(), "
      "constant(v), random_normal{mean, stddev, seed}, truncated_normal{...}, "
      "random_uniform{minval, maxval, seed}, glorot_uniform{seed}, glorot_normal{seed}, "
      "he_normal{seed}, orthogonal{gain, seed}.",
      "init = mf.initializers.glorot_uniform{seed = 1}\n"
      "init({3, 4}).shape                --> {3, 4}"),

    /* ---- profiling (API.md "Profiling") ---------------------------------------- */
    E("profile", "profiling", "mf.profile(fn, ...)",
      "Runs fn(...) under the profiler and returns a report, then fn's results. print(prof) "
      "shows one row per op (or graph node): calls, total and self ms (self excludes ops "
      "nested inside), average, FLOPs, GFLOP/s and % of mf.profiler.peak(), longest first. "
      "prof:rows() gives the rows as records {op, type, label, calls, total_ms, self_ms, "
      "avg_ms, flops, gflops, peak_pct} (op: the op with its non-default attributes as "
      "listings show them, \"Conv2D[strides=2, SAME]\", or the graph node's name; type: "
      "the op's name; label: the op with its attributes); prof:gemms() every GEMM {op, M, N, K, trans_a, trans_b, ms, "
      "gflops, peak_pct} and every im2col/col2im step {op, step, ms, bytes}, in time order "
      "(it prints as a table); prof:save_trace(path) writes Chrome trace-event JSON for "
      "Perfetto or chrome://tracing. An error in fn stops the profiler and propagates.",
      "prof = mf.profile(function() return mf.matmul(mf.ones{64, 32}, mf.ones{32, 16}) end)\n"
      "print(prof)\n"
      "prof:rows()[1].op                 --> MatMul\n"
      "prof:gemms()[1].K                 --> 32"),
    E("profiler.start", "profiling", "mf.profiler.start()",
      "Starts collecting op, GEMM and step events (clearing earlier ones); "
      "mf.profiler.stop() ends and returns the report. Raises when the profiler is already "
      "running: profiles do not nest.",
      "mf.profiler.start()\n"
      "y = mf.matmul(mf.ones{8, 8}, mf.ones{8, 8})\n"
      "prof = mf.profiler.stop()\n"
      "#prof:gemms()                     --> 1"),
    E("profiler.stop", "profiling", "mf.profiler.stop()",
      "Stops the profiler started by mf.profiler.start() and returns the report (see "
      "help \"profile\" for what it holds). Raises when the profiler is not running.",
      "mf.profiler.start()\n"
      "y = mf.exp(mf.ones{4})\n"
      "mf.profiler.stop():rows()[1].calls   --> 1"),
    E("profiler.peak", "profiling", "mf.profiler.peak()",
      "This machine's single-precision GEMM peak in GFLOP/s at the current thread count, the "
      "best of a few 1024x1024x1024 OpenBLAS SGEMMs; measured once per thread count and "
      "cached. Reports give each op's and GEMM's GFLOP/s as a percentage of it.",
      "mf.profiler.peak() > 0            --> true"),

    /* ---- nn: convolution (repl/lmf_conv.c) ----------------------------------------- */
    E("nn.conv2d_transpose", "nn",
      "mf.nn.conv2d_transpose(input, filter, output_shape, strides, padding [, {data_format, "
      "dilations}])",
      "The transposed convolution (\"deconvolution\") as TensorFlow's: it is "
      "mf.nn.conv2d_backprop_input(output_shape, filter, input, ...), so it maps an input "
      "of conv2d's output shape back to 'output_shape' (4 sizes in the data format's order; "
      "a batch of -1 means the input's, for graphs with an unknown batch). The filter is "
      "[kh, kw, out_channels, in_channels], the HWIO filter of the conv2d it transposes. "
      "Several output shapes can give the same input shape under strides, hence the "
      "argument. Gradients: conv2d (input) and conv2d_backprop_filter (filter).",
      "x = mf.ones{1, 2, 2, 1}\n"
      "w = mf.ones{2, 2, 1, 1}\n"
      "mf.nn.conv2d_transpose(x, w, {1, 4, 4, 1}, 2, \"VALID\"):reduce_sum():item()  --> 16\n"
      "mf.nn.conv2d_transpose(x, w, {1, 3, 3, 1}, 1, \"VALID\")   "
      "--> {{{{1}, {2}, {1}}, {{2}, {4}, {2}}, {{1}, {2}, {1}}}}"),

    /* ---- nn: activations, softmax, losses, pooling (repl/lmf_nn.c) ------------------ */
    E("nn.relu", "nn", "mf.nn.relu(x)",
      "The same function as mf.relu: max(x, 0) elementwise. mf.nn.sigmoid, mf.nn.tanh and "
      "mf.nn.softplus are likewise mf.sigmoid, mf.tanh and mf.softplus.",
      "mf.nn.relu(mf.tensor{-1, 2})      --> {0, 2}"),
    E("nn.sigmoid", "nn", "mf.nn.sigmoid(x)",
      "The same function as mf.sigmoid: 1 / (1 + exp(-x)), computed stably.",
      "mf.nn.sigmoid(mf.tensor{0})       --> {0.5}"),
    E("nn.tanh", "nn", "mf.nn.tanh(x)",
      "The same function as mf.tanh.",
      "mf.nn.tanh(mf.tensor{0})          --> {0}"),
    E("nn.softplus", "nn", "mf.nn.softplus(x)",
      "The same function as mf.softplus: log(1 + exp(x)), computed stably.",
      "mf.nn.softplus(mf.tensor{0})      --> {0.6931}"),
    E("nn.softmax_cross_entropy_with_logits", "nn",
      "mf.nn.softmax_cross_entropy_with_logits{labels = , logits = }",
      "-sum(labels * log_softmax(logits)) over the last axis: one loss per row (the shape of "
      "logits without its last axis). Each row of 'labels' is a probability distribution of "
      "logits' shape and dtype (Lua arrays take logits' dtype). Differentiable with respect "
      "to both, as TensorFlow's v2.",
      "mf.nn.softmax_cross_entropy_with_logits{labels = {{0, 1}}, logits = mf.tensor{{0, 0}}}"
      "   --> {0.6931}"),
    E("nn.sparse_softmax_cross_entropy_with_logits", "nn",
      "mf.nn.sparse_softmax_cross_entropy_with_logits{labels = , logits = }",
      "Softmax cross-entropy with 'labels' given as class numbers 1..C (1-based; an int32 / "
      "int64 tensor or a Lua array) shaped like logits without its last axis (of size C). A "
      "label outside 1..C is an error. The gradient flows to the logits only.",
      "mf.nn.sparse_softmax_cross_entropy_with_logits{labels = {2}, logits = mf.tensor{{0, 0}}}"
      "   --> {0.6931}"),
    E("nn.sigmoid_cross_entropy_with_logits", "nn",
      "mf.nn.sigmoid_cross_entropy_with_logits{labels = , logits = }",
      "Elementwise logistic loss of independent binary labels z for logits x, TensorFlow's "
      "stable form max(x, 0) - x * z + log(1 + exp(-|x|)); labels and logits have one shape.",
      "mf.nn.sigmoid_cross_entropy_with_logits{labels = mf.tensor{1}, logits = mf.tensor{0}}"
      "   --> {0.6931}"),
    E("nn.l2_loss", "nn", "mf.nn.l2_loss(t)",
      "sum(t ^ 2) / 2 as a scalar (no square root), e.g. for weight decay. Float dtypes.",
      "mf.nn.l2_loss(mf.tensor{1, 2, 3})                --> 7"),
    E("nn.dropout", "nn", "mf.nn.dropout(x, rate [, {seed}]) or mf.nn.dropout(x, {rate | "
      "keep_prob [, seed]})",
      "Sets each element to 0 with probability 'rate' (in [0, 1)) and scales the kept ones "
      "by 1 / (1 - rate), so the expected value is unchanged; rate 0 returns x. The mask "
      "comes from mf.random.uniform with the usual seed rules ({seed = n} makes it "
      "reproducible); the gradient passes through the same mask. In a graph or mf.trace, "
      "each run (or call) draws a fresh mask, and that run's gradient uses the same mask. "
      "The rate, or TensorFlow 1.x's keep_prob (= 1 - rate, named in the options), may be a "
      "scalar tensor such as a placeholder fed per run; x may have unknown (-1) dims.",
      "mf.nn.dropout(mf.ones{2}, 0)                     --> {1, 1}\n"
      "mf.nn.dropout(mf.ones{2}, {keep_prob = 1})       --> {1, 1}\n"
      "y = mf.nn.dropout(mf.ones{4}, 0.5, {seed = 1})\n"
      "mf.reduce_max(y):item()                          --> 2"),

    /* ---- checkpoints (API.md "Training": mf.save, mf.load) -------------------- */
    E("save", "training", "mf.save(path, {name = tensor_or_Variable, ...} [, metadata])",
      "Writes the tensors (a Variable saves its current value) to 'path' in the safetensors "
      "format: an 8-byte little-endian header length, a JSON header giving each name's dtype "
      "(F32, F64, I32, I64, BOOL), shape and data_offsets, then the raw little-endian data "
      "(names sorted, each tensor aligned to its element size), so other safetensors readers "
      "load it. 'metadata' is an optional table of strings (numbers are converted), stored as "
      "the header's __metadata__. The write is atomic: a temporary file in the same directory is "
      "written, synced and renamed over 'path', so a failure leaves an existing file intact.",
      "p = os.tmpname()\n"
      "mf.save(p, {w = mf.tensor{1, 2}, step = mf.tensor(3, \"int64\")}, {note = \"demo\"})\n"
      "t, meta = mf.load(p, {metadata = true})\n"
      "t.w                               --> {1, 2}\n"
      "meta.note                         --> demo\n"
      "os.remove(p)"),
    E("load", "training", "mf.load(path [, {metadata = true}])",
      "Reads a safetensors file (written by mf.save or by any other program) and returns a "
      "table {name = tensor}; with {metadata = true} also a second table with the header's "
      "__metadata__ strings. "
      "dtypes F32, F64, I32, I64 and BOOL are read; others (F16, BF16, U8, ...) are an error "
      "naming the tensor. The whole file is checked first: a file that is too short, a "
      "header length past the end, invalid JSON, a shape that does not match its "
      "data_offsets, overlapping offsets or gaps, truncated data and trailing bytes are each "
      "a clear error.",
      "p = os.tmpname()\n"
      "mf.save(p, {b = mf.tensor{true, false}, x = mf.tensor(2.5, \"float64\")})\n"
      "t = mf.load(p)\n"
      "t.x:item()                        --> 2.5\n"
      "t.b.dtype                         --> bool\n"
      "os.remove(p)"),

    /* ---- interchange (API.md "Interchange": repl/lmf_onnx.c, lmf_summary.c) ------- */
    E("onnx.export", "interchange",
      "mf.onnx.export(f_or_graph, path [, {inputs, outputs, opset = 13, session, input_names, "
      "output_names}])",
      "Writes an ONNX model (opset 13..17; IR version 7 for opset 13, else 8), which ONNX "
      "1.8 / 1.10 and later and onnxruntime read. For "
      "a function made by mf.trace, 'inputs' are example arguments that pick the traced "
      "signature and 'outputs' optionally names the results; fn:export_onnx(path, args...) is "
      "the same. For a graph, 'inputs' are its placeholders and 'outputs' the tensors to "
      "compute (or their names \"node:0\"); graph Variables take their values from "
      "'session'. Variables and constants become initializers. Layouts are TensorFlow's: "
      "conv2d and pooling get transposes NHWC <-> NCHW around ONNX's Conv/MaxPool/AveragePool, "
      "HWIO filters are stored pre-transposed as OIHW, SAME padding becomes explicit pads, and "
      "an unknown (-1) batch stays symbolic. Only the nodes the outputs need are written; an "
      "op that has no ONNX mapping (a loss, an optimizer step, FloorMod...) is an error naming "
      "the op and the node, and no file is written.",
      "f = mf.trace(function(x) return mf.nn.softmax(mf.nn.relu(x * 2)) end)\n"
      "p = os.tmpname()\n"
      "mf.onnx.export(f, p, {inputs = {mf.ones{2, 3}}, outputs = {\"probs\"}})\n"
      "#io.open(p, \"rb\"):read(\"a\") > 100          --> true\n"
      "os.remove(p)"),
    E("summary.create_file_writer", "interchange",
      "mf.summary.create_file_writer(logdir) -> w: w:scalar(tag, value, step), "
      "w:histogram(tag, tensor, step), w:graph(g), w:flush(), w:close(), w.path",
      "TensorBoard event files: makes 'logdir' (and its parents) and writes "
      "events.out.tfevents.<time>.<host> in it, TFRecord-framed with masked CRC-32C, starting "
      "with the version record brain.Event:2. w:scalar takes a number or a one-element tensor, "
      "w:histogram any tensor (TensorFlow's default buckets; NaN or Inf is an error), "
      "w:graph an mf.Graph (or a traced function with example arguments) as a GraphDef, so "
      "TensorBoard's graph view draws it with the gradients/ scope apart. A step is an "
      "integer or an integer tensor (mf.train.global_step()). Every record is flushed as it "
      "is written, so a crash loses at most the last one. View with: tensorboard --logdir "
      "<logdir>. scripts/tensorboard_demo.lua writes a whole run.",
      "d = os.tmpname()\n"
      "os.remove(d)\n"
      "w = mf.summary.create_file_writer(d)\n"
      "w:scalar(\"loss\", 0.5, 1)\n"
      "w.path:find(\"events.out.tfevents\", 1, true) ~= nil   --> true\n"
      "w:close()\n"
      "os.execute(\"rm -rf \" .. d)"),


    /* ---- data (API.md "Data": repl/lmf_data.c, core/io/) ---------------------- */
    E("data.read_csv", "data", "mf.data.read_csv(path [, {header, columns, dtype}])",
      "Reads a comma-separated file (parsed in C) into one 2-D tensor, rows x columns. "
      "'header' true skips the first line and names the columns; false reads it as data; "
      "absent (the default): the first line is a header when one of its selected fields is "
      "text that is not a number (an empty field does not count). 'columns' selects and "
      "orders columns by 1-based index or header name; "
      "'dtype' is float32 (default), float64, int32 or int64. Blank lines are skipped, fields "
      "may be double-quoted (holding commas, \"\" and newlines, as Python's csv module reads "
      "them) and \"nan\" parses as a float; hex like 0x10 is not a number. A malformed or "
      "out-of-range number, an empty field or a row with another number of fields is an error "
      "naming the file, line and column.",
      "p = os.tmpname(); f = io.open(p, \"w\")\n"
      "f:write(\"x,y,name\\n1,2,a\\n3,4,b\\n\"); f:close()\n"
      "mf.data.read_csv(p, {columns = {1, 2}})              --> {{1, 2}, {3, 4}}\n"
      "mf.data.read_csv(p, {columns = {\"y\"}, dtype = \"int64\"})\n"
      "                                     --> {{2}, {4}}\n"
      "os.remove(p)"),
    E("data.read_idx", "data", "mf.data.read_idx(path)",
      "Reads a file in the IDX format of the MNIST data set (train-images-idx3-ubyte and "
      "friends), plain or gzip-compressed (detected from its first bytes). The magic number, "
      "type code and dims are checked and the data must fill the dims exactly: a truncated "
      "file or trailing bytes are errors. Unsigned bytes (MNIST's images and labels) give a "
      "uint8 tensor (cast and scale: mf.cast(t, \"float32\") / 255; labels "
      "mf.cast(t, \"int64\") + 1 for 1-based classes); signed bytes, 16- and 32-bit integers "
      "give int32, float and double float32 and float64.",
      "p = os.tmpname(); f = io.open(p, \"wb\")\n"
      "f:write(string.char(0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 128, 255, 7)); f:close()\n"
      "mf.data.read_idx(p)                  --> {{0, 128}, {255, 7}}\n"
      "mf.data.read_idx(p).dtype            --> \"uint8\"\n"
      "os.remove(p)"),

    /* ---- progress and plots (repl/progress.c, repl/plot.c, repl/lmf_plot.c) ---- */
    E("progress", "training", "mf.progress([{total, epochs, interval, tty}])",
      "A progress line for a training loop, like Keras' Progbar: step (of 'total', the steps "
      "of one epoch), epoch (of 'epochs'), a bar, the percentage, the metrics given to "
      "p:update (loss first), steps per second and the time left (ETA). On a terminal the "
      "line is redrawn in place at most 10 times a second and each epoch keeps its last line; "
      "when stdout is not a terminal (a pipe, a log) it prints plain lines: the first step, "
      "then at most one line per 'interval' seconds (default 1), the end of each epoch and "
      "the end, which shows the total time. 'tty' = true or false forces either style. "
      "Use local p <close> = mf.progress{...} to end the line even when the loop breaks. "
      "See help \"Progress\" for p:update and p:done.",
      "p = mf.progress{total = 4, tty = false}\n"
      "for step = 1, 4 do p:update{step = step, loss = 1 / step} end\n"
      "tostring(p):match(\"step 4/4\")         --> step 4/4"),
    E("Progress", "training", "p:update([{step, epoch, loss, <metric> = value, ...} | step]) "
      "p:done()",
      "The methods of mf.progress. update records one step: 'step' and 'epoch' are 1-based "
      "and default to the next step (after 'total' steps the epoch goes up by one, so "
      "p:update{loss = l} in a loop counts everything); every other field is a metric shown "
      "by name, a Lua number or a one-element tensor (a loss as minimize returns it). A step "
      "or epoch out of range is an error. done ends the line (printing the final state and "
      "the total time); it runs by itself when the last step of the last epoch is reached "
      "and when a <close> variable goes out of scope. tostring(p) is the current line.",
      "p = mf.progress{total = 2, epochs = 2, tty = false}\n"
      "for e = 1, 2 do for s = 1, 2 do p:update{loss = 0.5 / e, acc = 0.9} end end\n"
      "tostring(p):match(\"epoch 2/2  step 2/2\")   --> epoch 2/2  step 2/2\n"
      "tostring(p):match(\"loss [%d.]+  acc [%d.]+\")  --> loss 0.25  acc 0.9"),
    E("plot", "training",
      "mf.plot(values [, {title, width, height, labels, file, print, color, x}])",
      "Draws a line plot of a loss history: 'values' is a Lua array of numbers or a 1-D "
      "tensor, or an array of them for several series (with 'labels' for a legend); step i "
      "of a series is at x = i. Without 'file' it prints the plot in the terminal with "
      "Unicode braille dots (2x4 per character): 'width' columns (default 60) by 'height' "
      "rows (default 12), the y axis labelled with the maximum, middle and minimum, the x "
      "axis with the first and last step; several series get colours on a terminal (or "
      "with color = true). print = false returns the text instead of printing it. With "
      "file = \"loss.svg\" it writes an SVG document (width x height pixels, default "
      "640 x 400; axes, ticks at round numbers, one polyline per series, title, legend) and "
      "returns the path; a series longer than twice the width keeps per pixel column its "
      "first, lowest, highest and last point. NaN and infinite values are left out as gaps "
      "(a lone finite point between them is a dot). x = xs (evenly spaced values, as "
      "mf.linspace gives, one per step) labels the x axis with x instead of steps.",
      "text = mf.plot({3, 2, 1.5, 1.2, 1.1}, {title = \"loss\", width = 20, height = 4, "
      "print = false})\n"
      "select(2, text:gsub(\"\\n\", \"\"))       --> 7\n"
      "path = os.tmpname()\n"
      "mf.plot(mf.tensor{3, 2, 1.5}, {file = path, title = \"loss\"}) == path   --> true\n"
      "io.open(path):read(\"a\"):match(\"<svg\")   --> <svg\n"
      "os.remove(path)"),

    /* ---- training (API.md "Training": train/, repl/lmf_train.c) ----------------- */
    E("train.GradientDescentOptimizer", "training",
      "mf.train.GradientDescentOptimizer(learning_rate [, {name}])",
      "Plain gradient descent, TensorFlow 1.x's formula: var -= lr * g. learning_rate is a "
      "number (> 0), a scalar tensor or Variable (read at every apply, so assigning it decays "
      "the rate), or a function of no arguments returning one (called at every apply, e.g. "
      "mf.train.exponential_decay). Every optimizer has compute_gradients, apply_gradients, "
      "minimize, get_slot_names and get_slot (help \"train.Optimizer\"). Eager mode: the loss "
      "is a function of no arguments.",
      "w = mf.Variable({1, 2}, {name = \"w\"})\n"
      "opt = mf.train.GradientDescentOptimizer(0.1)\n"
      "opt:minimize(function() return mf.reduce_sum(w * w) end)  --> 5\n"
      "w                                    --> {0.8, 1.6}"),
    E("train.MomentumOptimizer", "training",
      "mf.train.MomentumOptimizer(learning_rate, momentum [, {use_nesterov, name}])",
      "Momentum, TensorFlow 1.x's formula: accum = accum * momentum + g; var -= lr * accum; "
      "with use_nesterov = true: var -= lr * g + lr * momentum * accum. One slot per "
      "variable, \"momentum\" (zeros at first, named \"<var>/Momentum\").",
      "w = mf.Variable({1.0}, {name = \"w\"})\n"
      "opt = mf.train.MomentumOptimizer(0.1, 0.9)\n"
      "for i = 1, 2 do opt:minimize(function() return mf.reduce_sum(w) end) end\n"
      "w                                    --> {0.71}\n"
      "opt:get_slot(w, \"momentum\")          --> {1.9}"),
    E("train.AdagradOptimizer", "training",
      "mf.train.AdagradOptimizer(learning_rate [, {initial_accumulator_value = 0.1, name}])",
      "Adagrad, TensorFlow 1.x's formula: accum += g^2; var -= lr * g / sqrt(accum). One slot, "
      "\"accumulator\", starting at initial_accumulator_value (> 0).",
      "w = mf.Variable({1.0}, {name = \"w\"})\n"
      "opt = mf.train.AdagradOptimizer(0.1, {initial_accumulator_value = 3})\n"
      "opt:minimize(function() return mf.reduce_sum(w) end)  --> 1\n"
      "w                                    --> {0.95}\n"
      "opt:get_slot(w, \"accumulator\")       --> {4}"),
    E("train.RMSPropOptimizer", "training",
      "mf.train.RMSPropOptimizer(learning_rate [, {decay = 0.9, momentum = 0, epsilon = 1e-10, "
      "name}])",
      "RMSProp, TensorFlow 1.x's formula: ms = decay * ms + (1 - decay) * g^2; mom = momentum * "
      "mom + lr * g / sqrt(ms + epsilon); var -= mom. Slots \"rms\" (ones at first, as in "
      "TensorFlow 1.x) and \"momentum\" (zeros).",
      "w = mf.Variable({1.0}, {name = \"w\"})\n"
      "opt = mf.train.RMSPropOptimizer(0.1)\n"
      "opt:minimize(function() return mf.reduce_sum(w * 2) end)  --> 2\n"
      "opt:get_slot(w, \"rms\")               --> {1.3}\n"
      "w                                    --> {0.8246}"),
    E("train.AdamOptimizer", "training",
      "mf.train.AdamOptimizer(learning_rate [, {beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8, "
      "name}])",
      "Adam, TensorFlow 1.x's formula: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t); m = beta1 "
      "* m + (1 - beta1) * g; v = beta2 * v + (1 - beta2) * g^2; var -= lr_t * m / (sqrt(v) + "
      "epsilon). t counts this optimizer's apply_gradients calls (TensorFlow's beta1_power and "
      "beta2_power). Slots \"m\" and \"v\" (named \"<var>/Adam\", \"<var>/Adam_1\").",
      "w = mf.Variable({1.0, -1.0}, {name = \"w\"})\n"
      "opt = mf.train.AdamOptimizer(0.1)\n"
      "opt:minimize(function() return mf.reduce_sum(w * w) end)  --> 2\n"
      "w                                    --> {0.9, -0.9}\n"
      "opt:get_slot(w, \"m\")                 --> {0.2, -0.2}\n"
      "opt:get_slot_names()                 --> {m, v}"),
    E("train.Optimizer", "training",
      "opt:compute_gradients(loss_fn [, {var_list}]) "
      "opt:apply_gradients(pairs [, {global_step, nonfinite = \"error\"}]) "
      "opt:minimize(loss_fn [, {var_list, global_step, nonfinite}]) opt:get_slot_names() "
      "opt:get_slot(var, name) opt:get_name()",
      "The methods of every optimizer. compute_gradients runs loss_fn (no arguments) under a "
      "GradientTape and returns an array of {grad, var} pairs (and the loss): for var_list, or "
      "by default every trainable Variable the loss read, in creation order; a pair keeps a "
      "nil gradient (pair.n = 2) when the loss does not depend on its variable. apply_gradients "
      "skips nil gradients, checks every pair before changing anything, makes the slots on "
      "first use and increments global_step (an integer Variable) when given. minimize is "
      "exactly the two in sequence and returns the loss. Between them, clip or mask: "
      "for i, p in ipairs(gv) do gv[i] = {mf.clip_by_norm(p[1], 5), p[2]} end. "
      "trainable = false Variables never change. get_slot returns nil before the first apply. "
      "A gradient holding NaN or Inf: nonfinite = \"error\" (the default) raises naming the "
      "optimizer and the variable, \"skip\" skips the whole step (no variable, slot or step "
      "changes), \"apply\" writes it as TensorFlow does; in graph mode the check runs with "
      "every sess:run of the train op (an error names the node \"<opt>/update_<var>/...\"). "
      "Graph mode (help \"train.graph\"): the loss is a graph tensor, and apply_gradients and "
      "minimize return the train op to run with sess:run.",
      "w = mf.Variable({3, 4}, {name = \"w\"})\n"
      "opt = mf.train.GradientDescentOptimizer(1)\n"
      "gv = opt:compute_gradients(function() return mf.reduce_sum(w * w) end)\n"
      "gv[1][1]                             --> {6, 8}\n"
      "for i, p in ipairs(gv) do gv[i] = {mf.clip_by_norm(p[1], 5), p[2]} end\n"
      "opt:apply_gradients(gv)\n"
      "w                                    --> {0, 0}"),
    E("train.graph", "training",
      "train_op = opt:minimize(loss [, {var_list, global_step}]); sess:run(train_op)",
      "Training in graph mode, as TensorFlow 1.x: loss is a graph tensor; compute_gradients "
      "adds the backward nodes (mf.gradients) for the graph's trainable variables (or "
      "var_list), and apply_gradients adds the slots as graph variables named \"w/Adam\", "
      "\"w/Adam_1\" (Adam also \"beta1_power\", \"beta2_power\"), one fused update node per "
      "variable (ApplyGradientDescent, ApplyMomentum, ApplyAdagrad, ApplyRMSProp, ApplyAdam: "
      "one pass, in place on the session's buffers, the same kernels as eager mode), a group "
      "named after the optimizer and, with global_step, its increment: the train op it "
      "returns. Build mf.global_variables_initializer() after minimize so the slots are "
      "initialised too. Clip or mask between compute_gradients and apply_gradients as in "
      "eager mode. get_slot returns the slot variable: read it with sess:run.",
      "g = mf.Graph()\n"
      "g:as_default(function() w = mf.Variable({1.0, 2.0}, {name = \"w\"}); "
      "train = mf.train.GradientDescentOptimizer(0.25):minimize(mf.reduce_sum(w * w)); "
      "init = mf.global_variables_initializer() end)\n"
      "sess = mf.Session(g)\n"
      "sess:run(init)\n"
      "sess:run(train)\n"
      "sess:run(w)                          --> {0.5, 1}"),
    E("train.global_step", "training", "mf.train.global_step()",
      "The process's step counter: a non-trainable int64 scalar Variable named \"global_step\", "
      "0 when first made (on the first call; later calls return the same Variable until it is "
      "closed, e.g. as a <close> variable; the next call then makes a fresh one at 0). Pass it "
      "as {global_step = ...} to apply_gradients or minimize, which add 1 per call. While a graph "
      "is built it is that graph's \"global_step\" variable (made on first use), incremented "
      "by the train op after the updates.",
      "gs = mf.train.global_step()\n"
      "gs.dtype                             --> int64\n"
      "gs.trainable                         --> false"),
    /* ---- distributed (mf.dist, repl/lmf_dist.c) ------------------------------------- */
    E("dist.rank", "training", "mf.dist.rank()",
      "This process's rank (0-based, as MPI numbers them), the number of processes and whether "
      "this is rank 0. A script started by mpirun (Open MPI) is one of several processes; "
      "otherwise it is rank 0 of a world of size 1 and MPI is not started at all.",
      "mf.dist.rank(), mf.dist.size()       --> 0, 1\n"
      "mf.dist.is_chief()                   --> true"),
    E("dist.size", "training", "mf.dist.size()",
      "The number of processes of the run: N under mpirun -np N, else 1 (see dist.rank).",
      "mf.dist.size()                       --> 1"),
    E("dist.is_chief", "training", "mf.dist.is_chief()",
      "True on rank 0, the process that prints, writes checkpoints and summaries.",
      "mf.dist.is_chief()                   --> true"),
    E("dist.barrier", "training", "mf.dist.barrier([{check = true}])",
      "Waits until every process has reached it (after the signature exchange, so a process "
      "in another collective raises an error naming both instead of hanging).",
      "mf.dist.barrier()"),
    E("dist.allreduce", "training", "mf.dist.allreduce(t [, {op = \"mean\", check = true}])",
      "The elementwise mean (floats), sum, max or min of t over every process, the same on "
      "each. An op (MPIAllreduce): eager, or a node while a graph is built. Before it the "
      "processes compare a signature (op, dtype, shape): a mismatch raises an error naming "
      "both sides on every process; check = false skips that (then on every process). "
      "mf.dist.barrier([{check}]) waits for every process.",
      "mf.dist.allreduce(mf.tensor{1, 2}, {op = \"sum\"})   --> {1, 2}"),
    E("dist.broadcast", "training", "mf.dist.broadcast(t [, {root = 0, check}])",
      "Root's tensor on every process (each passes a tensor of the same dtype and "
      "shape). Eager tensors; see dist.allgather.",
      "mf.dist.broadcast(mf.tensor{3, 4})   --> {3, 4}"),
    E("dist.allgather", "training", "mf.dist.allgather(t [, {check}])",
      "Every process's tensor concatenated along axis 1 in rank order (the first dimension "
      "may differ between processes; scalars are stacked). Eager tensors.",
      "mf.dist.allgather(mf.tensor{{1, 2}})  --> {{1, 2}}"),
    E("dist.broadcast_variables", "training",
      "mf.dist.broadcast_variables(vars [, {root = 0, session, check}])",
      "Assigns root's values to the Variables on every process: at the start of training "
      "(so every process starts from the same point) and after a restore. Graph Variables: "
      "give the Session that holds their values.",
      "w = mf.Variable(mf.tensor{1, 2})\n"
      "mf.dist.broadcast_variables({w})\n"
      "w:read_value()                       --> {1, 2}"),
    E("dist.DistributedOptimizer", "training",
      "mf.dist.DistributedOptimizer(opt [, {check = true, overlap = true, bucket_bytes = "
      "4 KiB, fusion_bytes = 64 MiB}])",
      "An optimizer with opt's methods, slots and name whose compute_gradients (and so "
      "minimize) averages the gradients over every process, as Horovod's does. With "
      "overlap: during the backward pass, as PyTorch DDP: each gradient as soon as it is final "
      "(last layer first), in buckets of at least bucket_bytes (a larger gradient alone), by a "
      "nonblocking MPI_Iallreduce waited for before apply; in graph mode each bucket is an "
      "MPIAllreduceStart and an MPIAllreduceWait node, run as early and as late as the graph "
      "allows. overlap = false: after the backward pass, the gradients of one dtype packed "
      "into one buffer (another past fusion_bytes) and reduced by one MPI_Allreduce (in graph "
      "mode an MPIAllreduce node). Every process gets the same bits either way. Clip between "
      "compute_gradients and apply_gradients as usual: the clip sees averaged gradients. A "
      "Saver writes on rank 0 only; run with mpirun -np N build/moonflow script.lua.",
      "opt = mf.dist.DistributedOptimizer(mf.train.GradientDescentOptimizer(0.5))\n"
      "w = mf.Variable(mf.tensor{2.0})\n"
      "opt:minimize(function() return w * w end)\n"
      "w:read_value()                       --> {0}"),
    E("train.exponential_decay", "training",
      "mf.train.exponential_decay(learning_rate, global_step, decay_steps, decay_rate "
      "[, {staircase}])",
      "TensorFlow's decayed rate learning_rate * decay_rate ^ (global_step / decay_steps) (the "
      "exponent floored when staircase is true). In eager mode it returns a function of no "
      "arguments that computes the rate from the step's current value (a float32 scalar for a "
      "number learning_rate); give that function to an optimizer, which calls it at every "
      "apply. global_step is a Variable, tensor or number; decay_steps and decay_rate are > 0. "
      "Both learning_rate and global_step must stay open while the function is used. "
      "With a graph's global step (graph mode) it returns the rate as a graph tensor, as "
      "TensorFlow 1.x does.",
      "step = mf.Variable(mf.tensor(20, \"int64\"), {trainable = false})\n"
      "lr = mf.train.exponential_decay(0.1, step, 10, 0.5)\n"
      "lr()                                 --> 0.025\n"
      "opt = mf.train.GradientDescentOptimizer(lr)"),

    /* ---- graph mode ------------------------------------------------------------- */
    E("Graph", "graph", "mf.Graph(); g:as_default(fn); g:nodes(); g:get_tensor(name); "
      "g:to_dot(); print(g)",
      "A dataflow graph (TensorFlow 1.x). Inside g:as_default(function() ... end) ops add nodes "
      "and return symbolic tensors (shape known where it can be, -1 where not; t.name is "
      "\"node:index\"); a tensor with values used there becomes a Const node. Node names are "
      "unique (add, add_1, layer1/matmul). g:nodes() lists {name, op, inputs, control_inputs, "
      "outputs} in creation order, g:get_tensor(\"add:0\") finds a tensor, print(g) lists the "
      "nodes with inputs and shapes, g:to_dot() gives Graphviz text (control edges dashed). "
      "Run it with mf.Session.",
      "g = mf.Graph()\n"
      "y = g:as_default(function() return mf.placeholder(\"float32\", {-1, 3}, \"x\") * 2 end)\n"
      "y.name                               --> multiply:0\n"
      "y.shape                              --> {-1, 3}\n"
      "#g:nodes()                           --> 3"),
    E("placeholder", "graph", "mf.placeholder(dtype [, shape [, name]])",
      "A graph input, fed when the graph runs: sess:run(fetches, {[x] = value}). -1 in 'shape' "
      "is a dimension of any size; a fed value must have the dtype and the known dimensions (a "
      "Lua table is converted to the dtype). Without a shape (nil) it takes a value of any "
      "shape (TensorFlow 1.x's keep_prob); while the graph is built it stands for a scalar. "
      "Only inside g:as_default.",
      "g = mf.Graph()\n"
      "x = g:as_default(function() return mf.placeholder(\"float32\", {-1, 2}, \"x\") end)\n"
      "x.name                               --> x:0\n"
      "mf.Session(g):run(x, {[x] = {{1, 2}}})    --> {{1, 2}}"),
    E("name_scope", "graph", "mf.name_scope(name, fn)",
      "Runs fn with node names prefixed by \"name/\" (scopes nest: \"outer/inner/add\"), which "
      "groups nodes in listings and pictures. Returns fn's results. Only inside g:as_default.",
      "g = mf.Graph()\n"
      "t = g:as_default(function() return mf.name_scope(\"layer1\", function() return "
      "mf.relu(mf.tensor{1}) end) end)\n"
      "t.name                               --> layer1/relu:0"),
    E("control_dependencies", "graph", "mf.control_dependencies(list, fn)",
      "Runs fn so that every node it builds gets the tensors' (or operations') nodes in 'list' "
      "as control inputs: when such a node runs, they have run before it, even without a data "
      "edge. Control edges print as ^name and are dashed in g:to_dot(). Returns fn's results.",
      "g = mf.Graph()\n"
      "y = g:as_default(function() local a = mf.relu(mf.tensor{1}); return "
      "mf.control_dependencies({a}, function() return mf.tensor{2} + 1 end) end)\n"
      "mf.Session(g):run(y)                 --> {3}"),
    E("group", "graph", "mf.group(list [, name])",
      "An operation (a NoOp node) that runs everything in 'list' through control edges and has "
      "no value: sess:run(op) returns nil. Use it to run several updates in one fetch.",
      "g = mf.Graph()\n"
      "op = g:as_default(function() return mf.group({mf.relu(mf.tensor{1})}, \"step\") end)\n"
      "op.name                              --> step\n"
      "mf.Session(g):run(op)                --> nil"),
    E("global_variables_initializer", "graph", "mf.global_variables_initializer([g])",
      "An operation (the NoOp \"init\") running the initializer of every Variable made so far "
      "in the graph being built (or in g). In graph mode a Variable's value lives in each "
      "Session: run this once per session before reading the variables.",
      "g = mf.Graph()\n"
      "v, init = g:as_default(function() local v = mf.Variable({1, 2}, {name = \"v\"}); "
      "return v, mf.global_variables_initializer() end)\n"
      "sess = mf.Session(g)\n"
      "sess:run(init)                       --> nil\n"
      "sess:run(v)                          --> {1, 2}"),
    E("variables_initializer", "graph", "mf.variables_initializer(var_list [, name])",
      "An operation running the initializers of the graph Variables in var_list only.",
      "g = mf.Graph()\n"
      "v, init = g:as_default(function() local v = mf.Variable(3); "
      "return v, mf.variables_initializer({v}) end)\n"
      "sess = mf.Session(g)\n"
      "sess:run(init)                       --> nil\n"
      "sess:run(v)                          --> 3"),
    E("global_variables", "graph", "mf.global_variables([g])",
      "The Variables of the graph being built (or of g), in creation order: the same objects "
      "mf.Variable returned.",
      "g = mf.Graph()\n"
      "vs = g:as_default(function() mf.Variable(1, {name = \"a\"}); "
      "mf.Variable(2, {name = \"b\", trainable = false}); return mf.global_variables() end)\n"
      "#vs                                  --> 2\n"
      "vs[2].name                           --> b"),
    E("trainable_variables", "graph", "mf.trainable_variables([g])",
      "The trainable Variables of the graph being built (or of g), in creation order; "
      "Variables made with {trainable = false} are left out. Optimizers update these.",
      "g = mf.Graph()\n"
      "vs = g:as_default(function() mf.Variable(1, {name = \"w\"}); "
      "mf.Variable(0, {name = \"step\", trainable = false}); "
      "return mf.trainable_variables() end)\n"
      "#vs                                  --> 1\n"
      "vs[1].name                           --> w"),
    E("Session", "graph",
      "mf.Session(g); sess:run(fetches [, feeds [, {schedule = true}]]); sess:close()",
      "Runs the part of graph g that the fetches need with the in-degree executor: a table of "
      "in-degrees (data and control edges), a FIFO ready queue in creation order, each value "
      "freed after its last consumer. 'fetches' is a tensor, an operation, a name (\"add:0\"; "
      "a node name alone: an operation without outputs, as \"init\", runs and gives nil, "
      "another node gives its first output) or an array of them (an array of values comes "
      "back; nil for operations). 'feeds' maps placeholders, or any tensor, to values: "
      "{[x] = {{1, 2, 3}}}. With {schedule = true} a second result lists the steps {step, "
      "name, op, indegree, ready} and prints as a table. "
      "Errors name the node: a missing feed, a wrong shape or dtype, a cycle, a foreign tensor.",
      "g = mf.Graph()\n"
      "x = g:as_default(function() return mf.placeholder(\"float32\", {2}, \"x\") end)\n"
      "y = g:as_default(function() return mf.reduce_sum(x * x) end)\n"
      "sess = mf.Session(g)\n"
      "sess:run(y, {[x] = {3, 4}})          --> 25\n"
      "v, sched = sess:run(y, {[x] = {3, 4}}, {schedule = true})\n"
      "sched[1].name                        --> multiply"),
    E("gradients", "graph", "mf.gradients(ys, xs [, {grad_ys = ...}])",
      "Adds to the graph of 'ys' the backward nodes computing d(sum of ys)/d(xs), built from "
      "the same gradient definitions as GradientTape, under the scope \"gradients/\" (so "
      "print(g) and g:to_dot() show forward and backward separately). 'ys' and 'xs' are graph "
      "tensors or arrays of them; the result is always an array, nil where an x is not "
      "connected to any y. 'grad_ys' weights each y (default ones): one value when 'ys' is one "
      "tensor, else an array. Unknown (-1) dims work for the common ops (elementwise with "
      "broadcasting, reductions, reshape, transpose, matmul, stack, softmax and the losses, "
      "pools, conv2d with an unknown batch): shapes are taken when the graph runs. Concat, "
      "slice and pad need known sizes where they cut; gather, tile, trace and squeeze without "
      "axes need fully known shapes; each says so, naming the node.",
      "g = mf.Graph()\n"
      "x = g:as_default(function() return mf.placeholder(\"float32\", {3}, \"x\") end)\n"
      "y = g:as_default(function() return mf.reduce_sum(x * x) end)\n"
      "dx = mf.gradients(y, x)[1]\n"
      "mf.Session(g):run(dx, {[x] = {1, 2, 3}})   --> {2, 4, 6}"),
    E("render", "graph", "g:render(path); g:write_dot(path)",
      "g:write_dot(path) writes g:to_dot() to a file (through a temporary file, so a failed "
      "write leaves no half-written file). g:render(path) draws the graph with Graphviz 'dot' "
      "in the format of the extension (.png, .svg, .pdf; png otherwise): forward and backward "
      "(gradients/) nodes in separate clusters, control edges dashed. Without Graphviz it "
      "fails saying so (apt-get install graphviz).",
      "g = mf.Graph()\n"
      "x = g:as_default(function() return mf.placeholder(\"float32\", {2}, \"x\") end)\n"
      "dx = mf.gradients(mf.reduce_sum(x * x), x)\n"
      "path = os.tmpname()\n"
      "g:write_dot(path)\n"
      "io.open(path):read(\"a\"):find(\"cluster_backward\") ~= nil   --> true\n"
      "os.remove(path)"),

    /* ---- Saver (eager) ------------------------------------------------------------ */
    E("train.Saver", "training",
      "mf.train.Saver(var_list_or_map [, {optimizers}]) or mf.train.Saver{var_list, "
      "optimizers}; saver:save(path); saver:restore(path [, {strict}])",
      "Saves and restores training state in one safetensors file (eager mode): each Variable "
      "under its name (an array uses the Variables' names, a map {name = Variable} chooses "
      "them; two with one name are an error naming both), the slots of the given optimizers "
      "for those Variables under TensorFlow's names (\"w/Adam\", \"w/Adam_1\"), Adam's "
      "\"beta1_power\" and \"beta2_power\", and mf.train.global_step() as \"global_step\" "
      "when it exists. save writes atomically (a failure leaves the old file) and returns the "
      "path. restore checks the whole file first and assigns nothing unless everything fits: "
      "one error lists every missing entry and every dtype or shape mismatch (and, with "
      "{strict = true}, every entry nothing asked for). Slots not made yet (a new optimizer, as "
      "in a new process) are made from the file, so training continues exactly. It returns the "
      "names of the file's entries it did not use. Graph mode: saver:save(sess, path) and "
      "saver:restore(sess, path [, {strict}]) read and write the session's values, in the same "
      "file format; mf.train.Saver() while a graph is built saves every global variable of it "
      "(slots, beta powers and the global step included). Build the train op before restoring. "
      "As TensorFlow 1.x's Saver(var_list), an eager Saver saves only what it is given: without "
      "{optimizers} no slots (a restored optimizer starts with fresh slots); eager Variables "
      "are not tracked, so mf.train.Saver() needs a graph being built. A Saver of eager "
      "Variables refuses a Session, and one of graph variables needs it.",
      "w = mf.Variable({1.0, 2.0}, {name = \"w\"})\n"
      "opt = mf.train.AdamOptimizer(0.1)\n"
      "opt:minimize(function() return mf.reduce_sum(w * w) end)  --> 5\n"
      "saver = mf.train.Saver{var_list = {w}, optimizers = {opt}}\n"
      "p = os.tmpname()\n"
      "saver:save(p) == p                   --> true\n"
      "w:assign(mf.tensor{0, 0})\n"
      "saver:restore(p)                     --> {}\n"
      "w                                    --> {0.9, 1.9}\n"
      "os.remove(p)"),
    E("test.fail_next_save", "training", "mf.test.fail_next_save()",
      "Test hook: the next saver:save fails after writing and syncing its temporary file, as a "
      "crash or a full disk would, so a test can check that the old checkpoint is intact and no "
      "temporary file is left.",
      "s = mf.train.Saver({mf.Variable({1.0}, {name = \"v\"})})\n"
      "p = os.tmpname()\n"
      "mf.test.fail_next_save()\n"
      "(pcall(s.save, s, p))                --> false\n"
      "s:save(p) == p                       --> true\n"
      "os.remove(p)"),

#include "help_prompt.inc"

    /* ---- einsum (lib/einsum.lua): a composition of ops ---- */

    /* ---- activations (lib/activations.lua): compositions of ops ---- */

    /* ---- compositions of ops (lib/composed_ops.lua) ---- */

    /* ---- the Lua library (lib/): layers, models, fit, losses, metrics ---- */
    E("init_scope", "graph", "mf.init_scope(fn, ...) -> fn(...)",
      "TensorFlow's tf.init_scope: inside a function that mf.trace is tracing, runs fn "
      "eagerly, outside the traced graph, so a layer's first call makes its Variables (and "
      "their random initial values) once, as eager Variables the graph then captures. "
      "Elsewhere (eager, or g:as_default) it simply calls fn.",
      "f = mf.trace(function(x) local v = mf.init_scope(function() return mf.ones{2} end)\n"
      "  return x * v end)\n"
      "f(mf.tensor{1, 2})                   --> {1, 2}"),

    /* ---- compat: TensorFlow 1.x calls side by side (README: Coming from ...) ---- */
    E("compat.rules", "compat", "the three rules first: 1-based axes, * is elementwise, ==",
      "Axes and indices are 1-based: TensorFlow's axis 1 of a batch-major (batch, classes) "
      "tensor is moonflow's axis 2, so tf.argmax(y, 1) is mf.argmax(y, 2). mf.argmax(y, 1) is "
      "legal and means 'over the batch' (TensorFlow's axis 0): a silent transliteration trap. "
      "Negative axes count from the end in both (-1 = last). Second, a * b is elementwise (as tf's "
      "and numpy's *); the matrix product is mf.matmul(a, b) (Python's a @ b, Torch7's "
      "torch.mm). Third, a == b compares whole values and returns one Lua boolean (Lua cannot "
      "return a tensor from ==); elementwise equality is mf.equal(a, b) (tf.equal).",
      "y = mf.tensor{{0.1, 0.9}, {0.8, 0.2}}\n"
      "mf.argmax(y, 2)                      --> {2, 1}\n"
      "mf.argmax(y, -1)                     --> {2, 1}\n"
      "(y * y).shape                        --> {2, 2}\n"
      "mf.equal(mf.tensor{1, 2}, mf.tensor{1, 3})   --> {true, false}"),
    E("compat.placeholder", "compat", "tf.placeholder(tf.float32, [None, 784])",
      "mf.placeholder(\"float32\", {-1, 784}) inside g:as_default: None is -1. "
      "tf.placeholder(tf.float32) (no shape: keep_prob, a learning rate) is "
      "mf.placeholder(\"float32\"), which takes a value of any shape.",
      "g = mf.Graph()\n"
      "g:as_default(function() x = mf.placeholder(\"float32\", {-1, 784}) end)\n"
      "x.shape                              --> {-1, 784}"),
    E("compat.Variable", "compat", "tf.Variable(tf.zeros([784, 10]))",
      "mf.Variable(mf.zeros{784, 10}); tf.truncated_normal(shape, stddev=0.1) is "
      "mf.random.truncated_normal(shape, {stddev = 0.1}); tf.constant(0.1, shape=shape) is "
      "mf.constant(0.1, {shape = shape}). Keyword arguments become an options table.",
      "W = mf.Variable(mf.zeros{784, 10})\n"
      "W.shape                              --> {784, 10}"),
    E("compat.matmul", "compat", "tf.matmul(x, W) + b",
      "mf.matmul(x, W) + b (b broadcasts as in TensorFlow). x * W is elementwise, never a "
      "matrix product.",
      "mf.matmul(mf.tensor{{1, 2}}, mf.tensor{{3}, {4}})   --> {{11}}"),
    E("compat.reduce_mean", "compat", "tf.reduce_mean(x, axis=1, keepdims=True)",
      "mf.reduce_mean(x, {axis = 2, keepdims = true}), or mf.reduce_mean(x, 2): the axis is "
      "1-based. keep_dims (TF1's spelling) is accepted.",
      "mf.reduce_mean(mf.tensor{{1, 3}, {5, 7}}, 2)   --> {2, 6}"),
    E("compat.argmax", "compat", "tf.argmax(y, 1)",
      "mf.argmax(y, 2): the axis is 1-based, and so are the positions it returns (class c is "
      "c + 1 of TensorFlow's). Compare two argmaxes with mf.equal, as the tutorials do.",
      "mf.argmax(mf.tensor{{0, 5, 1}}, 2)   --> {2}"),
    E("compat.softmax_cross_entropy_with_logits", "compat",
      "tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y)",
      "mf.nn.softmax_cross_entropy_with_logits{labels = y_, logits = y} (keywords become a "
      "table: the preferred form); TensorFlow 2's positional (labels, logits) order is also "
      "accepted. Labels broadcast against logits; dim / axis is {axis = ...}, 1-based. The "
      "sparse one takes classes 1..C (TensorFlow's 0..C-1 plus 1).",
      "mf.nn.sparse_softmax_cross_entropy_with_logits{labels = {1}, logits = mf.tensor{{0, "
      "0}}}:totable()[1]   --> 0.6931"),
    E("compat.dropout", "compat", "tf.nn.dropout(h, keep_prob)",
      "mf.nn.dropout(h, {keep_prob = keep_prob}): TF1's second argument is the keep "
      "probability, TensorFlow 2's and moonflow's positional one the rate (1 - keep_prob), so "
      "TF1 code names it. Both may be numbers or placeholders fed per run.",
      "mf.nn.dropout(mf.ones{2}, {keep_prob = 1.0})   --> {1, 1}"),
    E("compat.GradientDescentOptimizer", "compat",
      "tf.train.GradientDescentOptimizer(0.5).minimize(cross_entropy)",
      "mf.train.GradientDescentOptimizer(0.5):minimize(cross_entropy): a method call is ':'. "
      "Keyword constructors work as tables: mf.train.MomentumOptimizer{learning_rate = 0.1, "
      "momentum = 0.9}; AdamOptimizer() is TF1's 0.001. compute_gradients(loss, var_list) and "
      "minimize(loss, global_step, var_list) take TF1's positional arguments.",
      "opt = mf.train.AdamOptimizer()\n"
      "opt:get_name()                       --> Adam"),
    E("compat.Session", "compat", "sess.run([train_step, loss], feed_dict={x: bx, y_: by})",
      "sess:run({train_step, loss}, {[x] = bx, [y_] = by}): fetches are a Lua array (a train "
      "op gives nil in its place), feed_dict is a table keyed by the placeholders. "
      "tf.InteractiveSession() and t.eval() have no counterpart: run through the session.",
      "g = mf.Graph()\n"
      "g:as_default(function() a = mf.placeholder(\"float32\", {}); b = a * 2 end)\n"
      "mf.Session(g):run(b, {[a] = 3})      --> 6"),
    E("compat.global_variables_initializer", "compat",
      "tf.global_variables_initializer().run()",
      "sess:run(mf.global_variables_initializer()), with the initializer made inside "
      "g:as_default.",
      "g = mf.Graph()\n"
      "g:as_default(function() v = mf.Variable(2.0); init = mf.global_variables_initializer() "
      "end)\n"
      "s = mf.Session(g); s:run(init)\n"
      "s:run(v)                             --> 2"),
    E("compat.cast", "compat", "tf.cast(correct_prediction, tf.float32)",
      "mf.cast(correct_prediction, \"float32\"): dtypes are strings. Lua numbers make float32 "
      "tensors, so tf.constant(10) (int32 there) is mf.constant(10, {dtype = \"int32\"}).",
      "mf.cast(mf.tensor{true, false}, \"float32\")   --> {1, 0}"),
    E("compat.GradientTape", "compat", "with tf.GradientTape() as tape: ...; tape.gradient(y, x)",
      "local tape = mf.GradientTape(); ... ; tape:stop(); tape:gradient(y, x). Lists and "
      "dicts of sources or targets are Lua arrays and string-keyed tables; "
      "with tape.stop_recording(): is tape:stop_recording(function() ... end). An unwatched "
      "tensor's gradient is nil, as TensorFlow's None.",
      "x = mf.constant(3.0)\n"
      "tape = mf.GradientTape(); tape:watch(x); y = x * x; tape:stop()\n"
      "tape:gradient(y, {x = x}).x          --> 6"),

    E(NULL, NULL, NULL, NULL, NULL),
};
