/* mode.h — the bridge between eager and graph mode, in one folder above
 * train/: where an operation on a Variable or a constant goes
 * (variables.c), where apply_gradients goes and which global step counts
 * (train.c), a GradientTape inside a graph being built (tape_window.c) and
 * mf.custom_gradient in both modes (custom_gradient.c), forward mode's
 * transposed rules in a graph (forward_graph.c). "Is a graph being
 * built" itself is graph/'s one answer (graph/building.c, mf_mode_graph),
 * which train/ asks too. Only repl/ calls these. */
#ifndef MF_MODE_MODE_H
#define MF_MODE_MODE_H

#include "eager/eager.h"
#include "graph/graph.h"
#include "train/train.h"

/* ---- eager or graph for Variables and constants (mode/variables.c) ----------
 * The one decision of where an operation on a Variable or a constant goes:
 * into the graph being built (or the graph of a symbolic operand), else run
 * now. */

/* The graph an operation on 't' goes into: mf_mode_graph(), else the graph
 * of symbolic 't' (may be NULL), else NULL (eager). Borrowed. */
MfGraph *mf_mode_graph_of(const MfTensor *t);

/* mf.Variable(initial, {name, trainable, dtype}): in a graph
 * (mf_mode_graph_of 'initial') a VARIABLE node, '*node' (borrowed; 'name'
 * checked with mf_graph_check_name); else a new eager Variable, '*eager'
 * (owned). 'dtype' >= 0: the initial value is cast to it first (a Cast op,
 * so a graph's initial value is cast when the graph runs). */
MfStatus mf_mode_variable(MfTensor *initial, int dtype, const char *name, bool trainable,
                          struct MfVariable **eager, MfNode **node);

/* v:assign / assign_add / assign_sub ('kind') of 'value' (the variable's
 * dtype): a graph Variable gets an ASSIGN node; an eager one used while a
 * graph is built, or given a symbolic value, a captured assign in that
 * graph (it writes 'v' when the graph runs); both give the new value in
 * '*out' (owned). Otherwise 'v' is assigned now and '*out' is NULL.
 * Fails when 'v' has no value yet. */
MfStatus mf_mode_assign(struct MfVariable *v, MfAssignKind kind, MfTensor *value,
                        MfTensor **out);

/* v:read_value(): a READ node for a graph Variable (it reads when it runs);
 * an eager one's current value (its capture while a graph is built, as a
 * tensor that keeps that graph alive). '*out' owned. */
MfStatus mf_mode_read(struct MfVariable *v, MfTensor **out);

/* mf.constant: while a graph is built, concrete 'value' becomes a Const node
 * named 'name' (NULL: "Const") and '*out' is its output; otherwise '*out' is
 * 'value' itself, retained. */
MfStatus mf_mode_constant(MfTensor *value, const char *name, MfTensor **out);

/* ---- eager or graph (mode/train.c) ---------------------------------------------- */

/* apply_gradients where it belongs: pairs of graph Variables ->
 * mf_optimizer_apply_graph; eager Variables while a graph is built or with
 * a symbolic gradient (mf.trace) -> mf_optimizer_apply_traced; otherwise
 * mf_optimizer_apply (done now). '*train_op' (borrowed) is the train op
 * in the first two cases, NULL when the update is done. */
MfStatus mf_train_apply_gradients(MfOptimizer *o, int n, const MfGradVar *pairs, MfTensor *lr,
                                  MfVariable *global_step, MfNode **train_op);

/* mf.train.global_step(): while a graph is built, its "global_step"
 * variable (a handle, mf_train_graph_global_step); otherwise the process's
 * eager one (int64, 0, not trainable), made on first use and kept until
 * mf_train_global_step_forget. '*step' is a reference the caller owns. */
MfStatus mf_train_global_step(MfVariable **step);

/* The process's eager global step (borrowed), NULL before the first use. */
MfVariable *mf_train_eager_global_step(void);

/* Drops the eager global step (its owner closed it, or the program ends):
 * the next mf_train_global_step makes a fresh one at 0, as TensorFlow's
 * get_or_create_global_step once the old one is gone. */
void mf_train_global_step_forget(void);

/* Whether a traced function (mf.trace) called now runs its own body
 * instead of its trace: inside another trace or graph its ops join that
 * graph (nested traced functions are inlined, as tf.function's), and under
 * a recording GradientTape they run eagerly so that the tape sees them. */
bool mf_train_trace_runs_inline(void);

/* ---- a GradientTape inside a graph being built (mode/tape_window.c) --------------
 * While a graph is built (mf.trace) the builder takes the ops, so a tape
 * records none: its gradient of a symbolic target is the symbolic gradient
 * over the nodes built while it recorded, the window [lo, hi) of graph 'g'
 * ('g' only compared, not kept; 'hi' -1 while it records). 'asked': a
 * non-persistent tape already answered. Keep one window beside each tape. */
typedef struct MfTapeWindow {
    const MfGraph *g;
    int lo, hi;
    bool asked;
} MfTapeWindow;

/* At the tape's creation: opens the window at the next node of the graph
 * being built (none: eager). */
void mf_tape_window_open(MfTapeWindow *w);

/* Stops tape 't' (mf_tape_stop), closing its window on the graph being built. */
void mf_tape_window_stop(MfTapeWindow *w, MfTape *t);

/* tape:reset(): mf_tape_reset, and a recording tape's window starts anew. */
void mf_tape_window_reset(MfTapeWindow *w, MfTape *t);

/* tape:gradient(targets, sources): with a symbolic target, the window's
 * symbolic gradients of each of the 'nt' targets, summed ('og', the output
 * gradient, goes with one target, else MF_EARG; 'zero': zeros for
 * unconnected sources, built in the target's graph; a Variable the tape did
 * not watch stays unconnected); with concrete targets, mf_tape_gradients.
 * 'grads[0..n)' owned, NULL where unconnected; all NULL on error. A
 * non-persistent tape answers once. Custom gradients may call back into
 * the caller's face. */
MfStatus mf_tape_window_gradients(MfTapeWindow *w, MfTape *t, int nt, MfTensor *const *targets,
                                  int n, const MfTapeSource *src, MfTensor *og, bool zero,
                                  MfTensor **grads);

/* tape:jacobian(target, sources) and tape:batch_jacobian (one source): with
 * a symbolic target, each row the window's symbolic gradient for a unit
 * seed (one walk per target element: the shapes must be known, else
 * MF_ESHAPE), stacked in the graph; else mf_tape_jacobians_by on the
 * tape's records. 'outs[0..n)' owned, NULL where unconnected without
 * 'zero'. A non-persistent tape answers once. */
MfStatus mf_tape_window_jacobians(MfTapeWindow *w, MfTape *t, MfTensor *target, int n,
                                  const MfTapeSource *src, bool zero, bool batch,
                                  MfTensor **outs);

/* ---- mf.vmap (mode/vmap.c) ------------------------------------------------------------
 * Runs graph 'g', built from one example (f called on placeholders shaped
 * as one example), over a batch of 'size' examples: node by node in
 * creation order, each op through its batching rule (eager/batching.h).
 * Each placeholder of f's arguments is fed its value: the whole batch,
 * batch first ('batched'), or one value shared by every example. Constants
 * and reads of eager Variables run as they are; any other node that is not
 * an op (a Variable or an assign of g's own) is refused. 'results[k]'
 * (owned) is the value of 'fetches[k]', batch first when 'batched[k]'.
 * Errors: the batching rule's ("vmap: X (x) has no batching rule ...",
 * naming the node), MF_ENOMEM. */
typedef struct MfVmapFeeds {
    int n;
    MfTensor *const *placeholders;
    MfTensor *const *values;
    const bool *batched;
    int64_t size;
} MfVmapFeeds;

MfStatus mf_vmap_run(MfGraph *g, const MfVmapFeeds *feeds, int nfetch, MfTensor *const *fetches,
                     MfTensor **results, bool *batched);

/* ---- forward mode in a graph being built (mode/forward_graph.c) --------------------
 * Gives eager/jvp.c's transposed rules (softmax, pools, linalg, ...) their
 * graph form: the symbolic gradient over the nodes the rule built. Call it
 * before forward mode runs (idempotent; the Lua face does at each
 * mf.ForwardAccumulator). */
void mf_forward_graph_register(void);

/* ---- mf.custom_gradient (mode/custom_gradient.c) -----------------------------------
 * Where the user's f started: the graph being built (NULL: eager) and its
 * node count, and the mark of the trainable Variables read since
 * (mf_tape_custom_begin: end it with mf_tape_custom_end_all, or
 * mf_tape_custom_end when f fails). */
typedef struct MfCustomScope {
    MfGraph *g;
    int first;
    int reads;
} MfCustomScope;

MfCustomScope mf_custom_gradient_begin(void);

/* f returned 'y' from the 'nin' tensors 'in' and read the 'nvars'
 * trainable Variables 'vars' that are not among its inputs: gives y the
 * gradient function 'fn' (takes the caller's reference, released on every
 * path). y symbolic: an Identity node of y's graph carries it
 * (mf_graph_custom_gradient), and f may read no such Variable (MF_EARG,
 * naming the first); eager with a tape recording: 'fn' is recorded from
 * the inputs and the Variables' values to an unrecorded Identity of y; else
 * nothing happens. '*out' is the owned Identity to use in place of y, or
 * NULL when y stays as it is. Errors: those, MF_ENOMEM. */
MfStatus mf_custom_gradient_attach(const MfCustomScope *s, MfTapeFunction *fn, int nin,
                                   MfTensor *const *in, int nvars, MfVariable *const *vars,
                                   MfTensor *y, MfTensor **out);

#endif
