/* lmf.h — what the Lua bindings share: the tensor userdata, argument
 * conversion, and the one way errors are raised.
 *
 * Ownership: a "mf.Tensor" userdata box owns exactly one reference.
 * 'lmf_push_tensor' steals the caller's reference. Arguments converted from
 * Lua numbers or tables are pushed as userdata into their stack slot, so the
 * collector owns every temporary and a raised error leaks nothing.
 * Only repl/ includes lua.h. */
#ifndef LMF_H
#define LMF_H

#include <lauxlib.h>
#include <lua.h>

#include "core/op.h"
#include "core/variable.h"
#include "lmf_arg.h"

#define LMF_TENSOR_MT "mf.Tensor"

/* 'tag' is LMF_TENSOR_TAG: a userdata given the tensor metatable with
 * debug.setmetatable (a file handle, another box) is not taken for a tensor. */
#define LMF_TENSOR_TAG 0x6d66546eu /* "mfTn" */
typedef struct LmfBox {
    MfTensor *t;
    uint32_t tag;
} LmfBox;

/* Pushes 't' as a userdata, taking over the caller's reference. */
void lmf_push_tensor(lua_State *L, MfTensor *t);

/* The box at 'idx' when it is a tensor userdata (open or closed), else NULL
 * (for the methods of lmf_tensor_methods.c). */
LmfBox *lmf_tensor_box(lua_State *L, int idx);
/* Makes the table on top (left there) the metatable every tensor box gets,
 * and lets the engine's allocator reclaim memory through Lua's collector
 * (lmf_reclaim). Called once, by lmf_open_tensor. */
void lmf_tensor_box_class(lua_State *L);

/* Operand lifetime: the tensor these helpers return is owned by the stack
 * slot 'idx' until the binding returns or raises, whatever Lua code runs
 * meanwhile (an options table's __index, a finalizer, a callback may assign
 * or close the operand). A Variable's value (read now), an open tensor's
 * tensor, a converted number or table: each is retained by a new box that
 * REPLACES the argument at 'idx'. So read what the slot held (a Variable to
 * keep, the original box to return) before, or use lmf_is_tensor to test a
 * type; keep the slot (or a table holding its new value) while the tensor
 * is used; never call them on a key that lua_next still needs. */

/* The tensor at 'idx'; raises "bad argument" when it is not one, or
 * "tensor is closed" after __close. */
MfTensor *lmf_check_tensor(lua_State *L, int idx);

/* The tensor at 'idx', or NULL (nothing replaced) when the value is not a
 * tensor. */
MfTensor *lmf_test_tensor(lua_State *L, int idx);

/* Whether lmf_test_tensor would find a tensor at 'idx'; changes nothing. */
bool lmf_is_tensor(lua_State *L, int idx);

/* Pops the value on top into a table in the first user value of the
 * userdata at 'holder' (made with one user value), so it lives as long as
 * the holder: for tensors read from a list slot that is popped. */
void lmf_keep(lua_State *L, int holder);

/* The tensor at 'idx'; a Lua number, boolean or nested table is converted
 * (numbers take dtype 'like', or float32 when 'like' is negative) and the
 * converted tensor replaces the argument on the stack. Errors name 'fname',
 * the function the user called (never guessed from the Lua stack). */
MfTensor *lmf_arg_tensor(lua_State *L, int idx, int like, const char *fname);
/* The same for positions: Lua data converts to int64. */
MfTensor *lmf_arg_index_tensor(lua_State *L, int idx, const char *fname);
/* The same, with a nested table converted in dtype 'dt' (< 0: bool for
 * boolean data, else float32), as a Variable's value is. */
MfTensor *lmf_arg_data(lua_State *L, int idx, int dt, const char *fname);
/* Pushes a new tensor of dtype 'dt' (< 0: bool for boolean data, else
 * float32) from the number, boolean or nested table at 'idx' (mf.tensor's
 * conversion); errors name 'fname'. */
MfTensor *lmf_push_data(lua_State *L, int idx, int dt, const char *fname);

/* Pushes the property 'key' of 't' (shape, dtype, ndim, name) and returns
 * 1, or pushes nothing and returns 0 for another key. */
int lmf_push_tensor_property(lua_State *L, const MfTensor *t, const char *key);

/* Calls 'op' and pushes its outputs (returns how many were pushed). */
int lmf_call_op(lua_State *L, MfOpId op, int ninputs, MfTensor *const *inputs,
                const MfAttrs *attrs);

/* Nested structures (lmf_nest.c, TensorFlow's nest): a table without a
 * metatable nests, anything else is a leaf. 'lmf_nest_flatten' appends the
 * leaves of the value at 'idx' to the array at 'out' ('*n' so far; errors
 * name 'fname'); 'lmf_nest_rebuild' pushes a copy of that structure whose
 * leaves are taken in the same order from the array at 'leaves' ('*k' taken
 * so far), a rebuilt array also getting 'n' when 'count'. */
bool lmf_nest_is_structure(lua_State *L, int idx);
void lmf_nest_flatten(lua_State *L, int idx, int out, lua_Integer *n, const char *fname);
void lmf_nest_rebuild(lua_State *L, int idx, int leaves, lua_Integer *k, bool count);

/* Field 'key' of the options table at 'opt': a conv algorithm name (nil:
 * "auto"), as an MfConvAlgo (repl/lmf_conv.c); errors name 'fname'. */
int lmf_conv_algorithm_option(lua_State *L, int opt, const char *key, const char *fname);

/* Each binding file registers its functions into the table on top of the
 * stack ('mf'), and tensor methods into the table at 'methods'. */
void lmf_open_tensor(lua_State *L, int methods);
void lmf_open_ops(lua_State *L, int methods);    /* every op with a Lua name (lmf_op.c) */
/* The name a user calls op 'd' by ("max_pool" for "nn.max_pool"). */
const char *lmf_op_fname(const MfOpDesc *d);
/* Pushes '*out', the result of an engine call that returned 'st' (read
 * only after the call ran: lmf_push_result(L, mf_f(x, &out), &out)), or
 * raises its message; returns 1. */
int lmf_push_result(lua_State *L, MfStatus st, MfTensor *const *out);
/* For a hand-written binding 'fname' (signature 'sig', for messages) that
 * takes the attributes of 'op': reads them as the binder does, positional
 * ones from argument 'first' on, then an options table, relative to the
 * tensor 'x' (axes, per-axis lists), into 'a'; raises on extra arguments,
 * unknown keys and bad values, naming 'fname'. */
void lmf_op_attrs(lua_State *L, MfOpId op, const char *fname, const char *sig, int first,
                  const MfTensor *x, MfAttrs *a);
/* The descriptor the binder binds as number 'k': op k (k < MF_NOPS), else
 * composite k - MF_NOPS of mf_composite_table; NULL past the last. */
const MfOpDesc *lmf_op_desc(int k);
/* Pushes the signature help() shows for descriptor 'k' (lmf_op_desc), from
 * its schema: "mf.matmul(a, b [, {transpose_a, transpose_b}]) or
 * a:matmul(...)"; returns 1. */
int lmf_op_help_signature(lua_State *L, int k);
void lmf_open_reduce(lua_State *L, int methods);  /* global_norm, clip_by_global_norm */
void lmf_open_linalg(lua_State *L, int methods);  /* matmul, transpose, reshape, ... */
void lmf_open_shape(lua_State *L, int methods);   /* concat, stack, slice, gather, ... */
void lmf_open_create(lua_State *L, int methods);  /* zeros, ones, eye, range, random */
void lmf_open_variable(lua_State *L, int methods); /* mf.Variable */
void lmf_open_tape(lua_State *L, int methods);     /* GradientTape, grad, gradcheck */
void lmf_open_profile(lua_State *L);              /* mf.profile, mf.profiler */
void lmf_open_nn(lua_State *L);                   /* mf.nn (except conv2d) */
void lmf_open_conv(lua_State *L);  /* conv_output_size, conv_padding into the table on top */
void lmf_open_data(lua_State *L);                 /* mf.data: read_csv, read_idx */
void lmf_push_data_helpers(lua_State *L);         /* lib.data: lib/dataset.lua's C helpers */
void lmf_push_init_helpers(lua_State *L);  /* lib.init: lib/initializers.lua's (lmf_init.c) */
void lmf_open_repl(lua_State *L);                 /* help, config, set_num_threads */
void lmf_open_graph(lua_State *L);                /* Graph, placeholder, Session, ... */
/* The boxes of graph mode (repl/lmf_graph_box.c). */
#define LMF_GRAPH_MT "mf.Graph"
#define LMF_OPERATION_MT "mf.Operation"
#define LMF_SESSION_MT "mf.Session"
/* An "mf.Operation" for graph node 'n'. */
struct MfNode;
void lmf_push_operation(lua_State *L, struct MfNode *n);
/* The open Session at 'idx' (borrowed), NULL when it is not an mf.Session;
 * raises when it is freed. */
struct MfSession;
struct MfSession *lmf_test_session(lua_State *L, int idx);
/* An "mf.Graph" box for 'g' (retained). */
struct MfGraph;
void lmf_push_graph(lua_State *L, struct MfGraph *g);
/* The open mf.Graph at 'idx' (borrowed); raises when it is not one. */
struct MfGraph *lmf_check_graph(lua_State *L, int idx);
/* Lua functions owned by a graph, alive while a Lua object holds the graph
 * (repl/lmf_graph_fns.c): every box holding graph 'g' (NULL: nothing) is
 * anchored; keep_fn pops the function on top and returns its key. */
void lmf_graph_anchor(lua_State *L, int idx, const struct MfGraph *g);
lua_Integer lmf_graph_keep_fn(lua_State *L, const struct MfGraph *g);
bool lmf_graph_push_fn(lua_State *L, const struct MfGraph *g, lua_Integer key);
void lmf_graph_drop_fn(lua_State *L, const struct MfGraph *g, lua_Integer key);
void lmf_open_trace(lua_State *L);                /* mf.trace (after lmf_open_linalg) */
void lmf_open_graph_grad(lua_State *L);           /* gradients, write_dot, render */
void lmf_open_train(lua_State *L);                /* mf.train: optimizers, global_step */
void lmf_open_dist(lua_State *L);                 /* mf.dist: processes over MPI */
int lmf_distributed_optimizer(lua_State *L);      /* mf.dist.DistributedOptimizer */
void lmf_open_ckpt(lua_State *L);                 /* mf.save, mf.load (safetensors) */
void lmf_open_saver(lua_State *L);                /* mf.train.Saver, mf.test.fail_next_save */
void lmf_open_plot(lua_State *L);                 /* mf.plot (repl/lmf_plot.c) */
void lmf_open_progress(lua_State *L);             /* mf.progress (repl/progress.c) */
void lmf_open_lib(lua_State *L);                  /* lib/: mf.layers, fit, losses... (last) */
/* The embedded lines of lib/'s file 'name' ("lib/model.lua"), each with its
 * '\n', NULL-terminated; NULL for another name. */
const char *const *lmf_lib_source(const char *name);
void lmf_open_summary(lua_State *L);              /* mf.summary (repl/lmf_summary.c) */
/* repl/lmf_debug.c: what the debug library may reach (guards on debug.*) */
void lmf_open_debug_guard(lua_State *L);
int lmf_vmap_run(lua_State *L);                /* lib.vmap_run: mf.vmap's engine (lmf_vmap.c) */
void lmf_open_forward(lua_State *L);             /* mf.ForwardAccumulator (lmf_forward.c) */
void lmf_open_numerics(lua_State *L);            /* mf.debugging (repl/lmf_numerics.c) */
void lmf_open_onnx(lua_State *L);                 /* mf.onnx (repl/lmf_onnx.c) */
/* repl/lmf_trace.c: the trace of the mf.Function at 1 for the arguments
 * 2..top (traced now when the signature is new; errors name 'who'); the
 * cache entry holding it is pushed, so it lives while that slot does. */
struct MfTrace;
struct MfTrace *lmf_function_trace(lua_State *L, int top, const char *who);
/* True when the value at 'idx' is an mf.Function. */
bool lmf_is_function(lua_State *L, int idx);

/* repl/lmf_train.c: the process's global step Variable (borrowed, held by
 * the registry), made first when 'create', else NULL when not made yet; the
 * open optimizer at 'idx' (borrowed) or NULL. */
MfVariable *lmf_global_step(lua_State *L, bool create);
struct MfOptimizer *lmf_test_optimizer(lua_State *L, int idx);

/* Variables ("mf.Variable" userdata, repl/lmf_variable_box.c). The box owns one
 * reference; 'lmf_push_variable' steals the caller's. 'lmf_test_variable'
 * returns the open Variable at 'idx' (borrowed) or NULL; 'lmf_check_variable'
 * raises instead. 'lmf_check_variable_value' is lmf_check_tensor's slow path:
 * the current value of the Variable at 'idx' (mf_variable_read, borrowed),
 * raising when it is not a tensor or Variable. lmf_test_tensor and
 * lmf_check_tensor accept Variables, so a Variable works wherever a tensor does. */
#define LMF_VARIABLE_MT "mf.Variable"
/* 'tag' is LMF_VARIABLE_TAG, as LmfBox's is LMF_TENSOR_TAG. */
#define LMF_VARIABLE_TAG 0x6d66566eu /* "mfVn" */
typedef struct LmfVariableBox {
    MfVariable *v;
    uint32_t tag;
} LmfVariableBox;
/* The box at 'idx' when it is a Variable userdata (open or closed), else
 * NULL (repl/lmf_variable_box.c). */
LmfVariableBox *lmf_variable_box(lua_State *L, int idx);
/* Makes the table on top (left there) the metatable of Variable boxes and
 * starts the table of graph VARIABLE nodes' boxes; once, by
 * lmf_open_variable. */
void lmf_variable_box_class(lua_State *L);
MfVariable *lmf_test_variable(lua_State *L, int idx);
/* True when 'idx' holds a Variable box that was closed. */
bool lmf_is_closed_variable(lua_State *L, int idx);
MfVariable *lmf_check_variable(lua_State *L, int idx);
/* The Variable box of graph VARIABLE node 'n' (the one mf.Variable made,
 * while it lives, else a new handle on the node); pushed. */
void lmf_push_graph_variable(lua_State *L, struct MfNode *n);

/* Makes 'L' the state custom gradient functions run on (lmf_tape.c) while
 * a gradient is computed or built; returns the previous one to restore. */
lua_State *lmf_set_grad_state(lua_State *L);
void lmf_push_variable(lua_State *L, MfVariable *v);
MfTensor *lmf_check_variable_value(lua_State *L, int idx);

/* Boxes (repl/lmf_box.c): a userdata of class 'mt' holding one pointer to
 * an engine object, NULL once the object is freed. 'lmf_box_new' pushes an
 * empty box (with 'nuv' user values); 'lmf_box_check' returns the object at
 * 'idx' or raises "bad argument #idx ... (FREED)"; 'lmf_box_get' returns
 * it or NULL (for __tostring); 'lmf_box_take' empties the box and returns
 * what it held (__gc, close). 'lmf_box_class' registers class 'mt': the
 * 'meta' functions and, unless NULL, the 'methods' as its __index.
 * 'lmf_sub_table' pushes field 'name' of the table on top, made first as
 * a new table when absent (mf.train, mf.test). */
void **lmf_box_new(lua_State *L, const char *mt, int nuv);
void *lmf_box_check(lua_State *L, int idx, const char *mt, const char *freed);
void *lmf_box_get(lua_State *L, int idx, const char *mt);
void *lmf_box_take(lua_State *L, int idx, const char *mt);
void lmf_box_class(lua_State *L, const char *mt, const luaL_Reg *meta, const luaL_Reg *methods);

/* Pops the string on top into the array at 'keep' (an absolute index the
 * caller keeps on its stack) and returns it. A string read with lua_geti or
 * lua_getfield may come from a metamethod (a proxy's __index makes a new
 * one per read) that nothing else holds: its pointer stays valid only while
 * something does (issue #35 M3). */
const char *lmf_keep_string(lua_State *L, int keep);
void lmf_sub_table(lua_State *L, const char *name);

/* Opens the whole module: the 'mf' table (require "moonflow", moonflow.so).
 * It sets no global: the shell's additions are lmf_open_shell's. */
int luaopen_moonflow(lua_State *L);
/* The shell's own setup (repl/main.c): the generational collector, mf as
 * package.loaded.mf, the prompt's print, Ctrl-C hooks in coroutines, and
 * require "moonflow" answering with the same mf. */
void lmf_open_shell(lua_State *L);

/* Makes engine memory known to Lua's collector: called after each tensor is
 * pushed; runs a full collection when engine memory has doubled since the
 * last one, so loops stay bounded without collectgarbage(). */
void lmf_gc_pressure(lua_State *L);

/* Called by the op bindings (and sess:run) before an op runs: a young
 * collection when a large result (256 KiB or more) was boxed since the last
 * one here, so that results the script dropped free their blocks before
 * the op allocates its output (lmf_tensor.c says why). The eager bindings
 * call it before they take their operands: an anchor box (lmf_tensor.c)
 * that lives through a young collection dies old (a finalized object that
 * survived one is aged, not freed), and only a major collection frees it.
 * Made after the collection, the boxes of a loop of 131k-float adds are
 * freed young and reused (100k adds: 203k box allocations from malloc and
 * 137k frees to libc -> none), and the Lua heap of such a loop stays
 * level (test_memory.lua). */
void lmf_gc_before_op(lua_State *L);

/* Memory ran short (an allocation failed): returns the tensor cache to the
 * system, runs a full collection (finalizers free the tensors Lua no
 * longer holds) and trims again, before the caller retries once. The
 * inputs of the failed call must be owned by stack slots (lmf.h's helpers
 * make them so). */
void lmf_reclaim(lua_State *L);

#endif
