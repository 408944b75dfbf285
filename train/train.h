/* train.h — training, the public header of train/: optimizers with
 * TensorFlow 1.x update formulas and slots, compute_gradients /
 * apply_gradients, the global step and learning-rate decay.
 *
 * Each update is one fused Apply op of the table run through the dispatcher
 * (optimizers.c): eagerly it writes the Variable and its slots at once; in
 * a graph it is a node of the train op (graph_train.c), with the same
 * kernel. Eager compute_gradients runs the loss function under a gradient
 * tape; graph compute_gradients adds the backward graph.
 *
 * Ownership: an optimizer is refcounted; it retains its learning-rate tensor
 * or Variable, every variable it made slots for, the slots and Adam's
 * beta powers. Functions returning a tensor or a Variable hand over a
 * reference unless they say "borrowed". */
#ifndef MF_TRAIN_H
#define MF_TRAIN_H

#include <stdbool.h>

#include "core/strbuf.h"
#include "core/op.h"
#include "core/variable.h"
#include "eager/eager.h"
#include "graph/graph.h"

typedef enum MfOptKind {
    MF_OPT_SGD,
    MF_OPT_MOMENTUM,
    MF_OPT_ADAGRAD,
    MF_OPT_RMSPROP,
    MF_OPT_ADAM,
    MF_OPT_LION,
} MfOptKind;

#define MF_OPT_NKINDS (MF_OPT_LION + 1)   /* keep after the last */

/* What an optimizer is made of. 'lr' is the learning rate when neither
 * 'lr_tensor' nor 'lr_var' is set (those are read at every apply, so a
 * decaying rate works). Fields an optimizer does not use are ignored. */
typedef struct MfOptConfig {
    MfOptKind kind;
    const char *name;              /* NULL: TensorFlow's ("Adam", "Momentum", ...) */
    double lr;
    MfTensor *lr_tensor;           /* borrowed here; the optimizer retains it */
    MfVariable *lr_var;            /* idem */
    double momentum;               /* Momentum, RMSProp */
    bool use_nesterov;             /* Momentum */
    double initial_accumulator_value; /* Adagrad */
    double decay, epsilon;         /* RMSProp (epsilon also Adam) */
    double beta1, beta2;           /* Adam, Lion */
    double weight_decay;           /* Lion */
    bool epsilon_pytorch;          /* Adam: epsilon_placement = "pytorch" */
} MfOptConfig;

/* TensorFlow's defaults for 'kind' with learning rate 'lr' (those of the
 * class table; a positional hyperparameter, which has none, is 0). */
MfOptConfig mf_opt_config_default(MfOptKind kind, double lr);

/* One hyperparameter of an optimizer class, as its constructor takes it
 * (train/opt_classes.c holds the table). Accepted values: [lo, hi], or
 * (lo, hi] with 'lo_open', [lo, hi) with 'hi_open'; a bool takes any. */
typedef struct MfOptHyper {
    const char *name;     /* "beta1": the option key and print(opt)'s label */
    size_t offset;        /* of its field in MfOptConfig: a double, or a bool */
    bool is_bool;         /* use_nesterov */
    /* a bool given by name: choices[0] is false, choices[1] true (Adam's
     * epsilon_placement, "tensorflow" or "pytorch"); NULL: a plain bool */
    const char *const *choices;
    bool positional;      /* the argument after learning_rate, required (momentum) */
    bool per_apply;       /* a tensor, Variable or function given is read at every apply */
    double dflt;          /* when not given (a positional one has none) */
    double lo, hi;
    bool lo_open, hi_open;
} MfOptHyper;

#define MF_OPT_MAX_SLOTS 2
#define MF_OPT_MAX_POWERS 2
#define MF_OPT_MAX_HYPERS 4
#define MF_OPT_MAX_INPUTS 8

/* A slot: its name ("m") and initial value, a constant or, when 'hyper' is
 * a hyperparameter's index (>= 0), that hyperparameter's value (Adagrad's
 * initial_accumulator_value). */
typedef struct MfOptSlot {
    const char *name;
    double init;
    int hyper;
} MfOptSlot;

/* Non-slot state: a scalar per optimizer and context (graph, eager mode),
 * made in the first variable's dtype, starting at hyperparameter 'hyper'
 * and multiplied by it after every step (Adam's "beta1_power"). */
typedef struct MfOptPower {
    const char *name;
    int hyper;
} MfOptPower;

/* What the Apply op reads after the variable and its slots, in order: the
 * learning rate, the gradient, a hyperparameter or a power (by index), each
 * as a scalar of the variable's dtype. */
typedef enum MfOptInputKind {
    MF_OPT_IN_LR, MF_OPT_IN_GRAD, MF_OPT_IN_HYPER, MF_OPT_IN_POWER,
    /* Adam's epsilon, hyperparameter 'index', times sqrt(1 - beta2_power)
     * (power 1) when the class's 'placement' hyperparameter is true:
     * PyTorch's m^ / (sqrt(v^) + eps) written as TensorFlow's update */
    MF_OPT_IN_EPSILON
} MfOptInputKind;

typedef struct MfOptInput {
    MfOptInputKind kind;
    int index;
} MfOptInput;

/* An optimizer class, described as an op is (train/opt_classes.c holds the
 * table, one entry per MfOptKind): what a user types ("AdamOptimizer"), the
 * default name of its scope ("Adam"), the learning rate's default (NaN:
 * required, as TensorFlow 1.x gives none but Adam's), its hyperparameters
 * in the constructor's order, the fused Apply op of its update, its slots,
 * its non-slot state, the Apply op's inputs after var and slots, and the
 * bool hyperparameter that sets the op's attrs.n (Nesterov; -1: none) and
 * the one that moves epsilon after the bias correction (Adam's
 * epsilon_placement, read by MF_OPT_IN_EPSILON; -1: none).
 * Eager and graph training, slots, checkpoints and print(opt) all read the
 * entry: a new optimizer is one entry and its kernel. */
typedef struct MfOptClass {
    const char *class_name;
    const char *default_name;
    double default_lr;
    int nhypers;
    const MfOptHyper *hypers;
    MfOpId apply;
    int nslots;
    MfOptSlot slots[MF_OPT_MAX_SLOTS];
    int npowers;
    MfOptPower powers[MF_OPT_MAX_POWERS];
    int ninputs;
    MfOptInput inputs[MF_OPT_MAX_INPUTS];
    int nesterov;
    int placement;
} MfOptClass;

/* The class of 'kind' (static), NULL when 'kind' is not one. */
const MfOptClass *mf_opt_class(MfOptKind kind);

/* The hyperparameter 'name' of 'kind' (static), NULL when it has none. */
const MfOptHyper *mf_opt_find_hyper(MfOptKind kind, const char *name);

/* The options a constructor of 'kind' takes, in 'names' (NULL-terminated):
 * its hyperparameters that are not positional, then "name". Returns how
 * many hyperparameters come positionally after the learning rate. */
#define MF_OPT_MAX_OPTIONS 7
int mf_opt_option_names(MfOptKind kind, const char *names[MF_OPT_MAX_OPTIONS + 1]);

/* MF_EARG for a required argument 'name' ("learning_rate", or a positional
 * hyperparameter) given no value: "GradientDescentOptimizer: learning_rate
 * is required (...)", "MomentumOptimizer(learning_rate, momentum [,
 * {use_nesterov}]): momentum is required (...)". */
MfStatus mf_opt_missing(MfOptKind kind, const char *name);

/* The number a hyperparameter given as tensor 't' (or a Variable's value)
 * stands for now, in '*out'. MF_EARG, naming 'who' and 'key', for a graph
 * tensor (it has no value before the graph runs: give it with
 * mf_optimizer_set_hyper_tensor) and for anything but one element of a
 * number dtype. */
MfStatus mf_opt_hyper_from_tensor(const char *who, const char *key, const MfTensor *t,
                                  double *out);

/* The value of 'h' in 'c' (a bool as 0 or 1), and setting it. */
double mf_opt_hyper_get(const MfOptConfig *c, const MfOptHyper *h);
void mf_opt_hyper_set(MfOptConfig *c, const MfOptHyper *h, double v);

typedef struct MfOptimizer MfOptimizer;

/* Sets hyperparameter 'name' (per_apply, not a bool) of 'o' to the graph
 * tensor 't' (a scalar of a number dtype; retained) for the applies that
 * follow, or back to its number when 't' is NULL. As TensorFlow 1.x does,
 * the tensor is an input of the Apply nodes a graph or trace builds (cast
 * to each variable's dtype), so its value is read when the graph runs; its
 * range is not checked (TensorFlow does not either). An eager apply while
 * one is set is an MF_EARG error. Errors: an unknown or bool
 * hyperparameter, a tensor that is not a scalar number. */
MfStatus mf_optimizer_set_hyper_tensor(MfOptimizer *o, const char *name, MfTensor *t);

/* Sets the hyperparameter 'name' (one of its class's: "momentum",
 * "beta1", ...) of 'o' for the applies that follow, checked as the constructor
 * checks it. TensorFlow 1.x reads a hyperparameter given as a tensor,
 * Variable or callable when it applies: the bindings read such values and
 * set them here before each apply. MF_EARG for an unknown name or a value
 * out of range (the message names the class and the hyperparameter). */
MfStatus mf_optimizer_set_hyper(MfOptimizer *o, const char *name, double v);

/* A new optimizer. Errors (NULL with a message naming the constructor,
 * e.g. "AdamOptimizer: beta1 must be in [0, 1), got 1"): a name that is
 * empty or holds ':' or '/' (in graph mode it is the scope of the update
 * ops), a learning rate number <= 0 or not finite, a learning-rate tensor
 * that is not a scalar of a real dtype, hyperparameters out of range,
 * MF_ENOMEM. */
MfOptimizer *mf_optimizer_new(const MfOptConfig *cfg);
void mf_optimizer_retain(MfOptimizer *o);
void mf_optimizer_release(MfOptimizer *o);

/* The configuration (borrowed; 'name' is never NULL) and the class name a
 * user typed ("AdamOptimizer"). */
const MfOptConfig *mf_optimizer_config(const MfOptimizer *o);
const char *mf_optimizer_class(const MfOptimizer *o);
/* The class name of 'kind' ("MomentumOptimizer"), "Optimizer" when unknown. */
const char *mf_opt_kind_class(MfOptKind kind);

/* What print(opt) shows, appended to 'out': "AdamOptimizer(learning_rate=
 * 0.001, beta1=0.9, beta2=0.999, epsilon=1e-08) name=\"Adam\", slots: m, v
 * (for 2 variables)"; the learning rate as its number, "<Variable 'lr'>",
 * "<graph tensor>", or "<function>" when 'lr_callable' (the face calls a
 * function for it). MF_ENOMEM when 'out' could not grow. */
MfStatus mf_optimizer_describe(const MfOptimizer *o, bool lr_callable, MfStrBuf *out);

/* One (gradient, variable) pair: 'grad' NULL means no gradient (skipped by
 * apply). 'decay' (NULL: none; Adam only, AdamW's decoupled weight decay) is
 * a scalar rate: the step also subtracts decay times the variable's value
 * from before it, in the same Apply op (ApplyAdam's weight_decay input). In
 * arrays made by this module all three are owned references. */
typedef struct MfGradVar {
    MfTensor *grad;
    MfVariable *var;
    MfTensor *decay;
} MfGradVar;

/* Sets and returns TensorFlow's "No gradients provided for any variable"
 * error of 'who', listing the variables of the 'n' pairs (n == 0: the loss
 * read no trainable variable). */
MfStatus mf_train_err_no_gradients(const char *who, int n, const MfGradVar *pairs);

/* A zeroed array of 'n' pairs for mf_optimizer_apply (free it with
 * mf_grad_vars_free, which releases what the caller put in); NULL with
 * MF_ENOMEM's message. */
MfGradVar *mf_grad_vars_new(int n);

/* Releases the references in 'pairs[0..n)' and frees the array (made by
 * mf_train_compute_gradients). NULL is fine. */
void mf_grad_vars_free(MfGradVar *pairs, int n);

/* Applies one step: for each pair with a gradient, creates the variable's
 * slots on first use, then updates the variable (and slots) with the
 * optimizer's formula; Adam then advances its beta powers; 'global_step'
 * (an int32/int64 Variable, may be NULL) is incremented by one. 'lr' (may be
 * NULL) overrides the configured learning rate for this step (a scalar,
 * finite and >= 0). Every pair is checked (float variable, gradient of its
 * dtype and shape) before anything changes. All or nothing: every
 * allocation of the step happens before the first variable is written, so
 * a failed step (out of memory included) leaves the variables, slots, beta
 * powers and global_step as they were, and drops the slots it made.
 * Errors name "apply_gradients". */
MfStatus mf_optimizer_apply(MfOptimizer *o, int n, const MfGradVar *pairs, MfTensor *lr,
                            MfVariable *global_step);

/* What the next apply (mf_optimizer_apply, _graph or _traced, whichever
 * comes first; it resets the choice to MF_APPLY_NONFINITE_APPLY) does with
 * a gradient holding NaN or Inf (core/op.h):
 *   APPLY  writes it, as TensorFlow does (variables and slots become NaN);
 *   ERROR  MF_EARG naming the optimizer and the variable, nothing written;
 *   SKIP   the whole step is skipped: no variable, slot, beta power or
 *          global_step changes, and the call succeeds.
 * Eager steps check before anything changes. In a graph the check runs
 * with every run of the train op: ERROR fails the run (the session's
 * writes are staged, so nothing changes; the message names the Apply node
 * "<opt>/update_<var>/Apply..."), SKIP makes every update of that run a
 * no-op (one non-finite gradient skips them all). */
void mf_optimizer_next_nonfinite(MfOptimizer *o, MfApplyNonfinite policy);

/* The policy named 'name' (apply_gradients' nonfinite option: "error",
 * "skip" or "apply") into '*out'. MF_EARG "WHO: nonfinite must be ...,
 * got SHOWN" for another name or NULL (a value that is no string, shown by
 * the face as 'shown'). */
MfStatus mf_apply_nonfinite_named(const char *who, const char *name, const char *shown,
                                  MfApplyNonfinite *out);

/* The optimizer's slot names, in TensorFlow's order ("m", "v" for Adam);
 * returns how many (0..MF_OPT_MAX_SLOTS) and sets 'names' (static strings). */
int mf_optimizer_slot_names(const MfOptimizer *o, const char *names[MF_OPT_MAX_SLOTS]);

/* The slot 'name' of 'var' (borrowed), or NULL when 'var' has no slots yet.
 * MF_EARG (message listing the valid names) for a name this optimizer does
 * not have. */
MfStatus mf_optimizer_get_slot(const MfOptimizer *o, const MfVariable *var, const char *name,
                               MfVariable **slot);

/* The non-slot state 'name' of the current context, Adam's "beta1_power" /
 * "beta2_power" (borrowed; NULL before the first apply or for an optimizer
 * without it). */
MfVariable *mf_optimizer_nonslot(const MfOptimizer *o, const char *name);

/* The optimizer's own Variables of the current context (the graph being
 * built, else eager mode), TensorFlow 1.x's Optimizer.variables(): each
 * trained variable's slots, in the order the variables were first applied,
 * then Adam's beta powers (kept per context: eager mode, each graph).
 * Returns how many; stores the first 'cap' of them (borrowed) in 'out'. */
int mf_optimizer_variables(const MfOptimizer *o, MfVariable **out, int cap);

/* Number of variables with slots, and variable 'k' of them (borrowed). */
int mf_optimizer_nvars(const MfOptimizer *o);
MfVariable *mf_optimizer_var(const MfOptimizer *o, int k);

/* Makes the slots of 'var' (and Adam's beta powers, in var's dtype) now, as
 * the first apply would; nothing when they exist. Used to restore a
 * checkpoint before any training step. Errors: a Variable without a value or
 * not float32/float64 (MF_EDTYPE), MF_ENOMEM. */
MfStatus mf_optimizer_ensure_slots(MfOptimizer *o, MfVariable *var);

/* A loss function for eager compute_gradients: writes an owned loss tensor. */
typedef MfStatus (*MfLossFn)(void *ctx, MfTensor **loss);

/* Runs 'fn' under a new gradient tape and differentiates the loss (summed
 * when not a scalar) with respect to 'var_list' ('nvars' variables), or,
 * when 'var_list' is NULL, every trainable variable the loss read, in
 * creation order. '*pairs' (free with mf_grad_vars_free) receives one pair
 * per variable, with a NULL gradient where the loss does not depend on it;
 * '*loss' (may be NULL when not wanted) the loss. Errors: the loss
 * function's, a loss that is not a float tensor, a gradient's. */
MfStatus mf_train_compute_gradients(MfLossFn fn, void *ctx, int nvars, MfVariable *const *var_list,
                                    MfTensor **loss, MfGradVar **pairs, int *npairs);

/* DistributedOptimizer (train/distributed.c): replaces each gradient of
 * 'pairs' by its mean over every process of the run (distributed/), fused into one
 * MPIAllreduce per dtype (more when a dtype's gradients exceed
 * 'fusion_bytes' bytes; <= 0: no limit). Eager gradients are reduced now;
 * symbolic ones get the nodes (graph mode). 'check': the signature exchange
 * before each buffer (dist.h). Pairs without a gradient are left alone. On
 * error the pairs hold a mix of old and new gradients, all owned. */
MfStatus mf_train_allreduce_gradients(MfGradVar *pairs, int n, bool check,
                                      int64_t fusion_bytes);

/* The same for symbolic gradients, overlapped with the backward pass in
 * graph mode: the buckets of the eager overlap below, in the order the
 * gradients' nodes were made (the backward pass's), each an
 * MPIAllreduceStart and an MPIAllreduceWait node (mean), which the
 * executor runs as early and as late as it can. Non-symbolic or non-float
 * gradients are left alone. */
MfStatus mf_train_allreduce_gradients_overlapped(MfGradVar *pairs, int n, bool check,
                                                 int64_t bucket_bytes);

/* DistributedOptimizer's eager allreduce overlapped with the backward pass
 * (train/overlap.c): buckets of gradients in the order the walk finishes
 * them, each allreduced (mean, nonblocking) as soon as it holds
 * 'bucket_bytes' (a gradient that large goes alone, without a copy).
 * 'mf_train_overlap_hooks' gives the tape hooks for a walk whose results go
 * to 'pairs' (mf_train_compute_gradients_overlapped does this);
 * 'mf_train_overlap_finish' starts what is left, waits, and replaces the
 * pairs' gradients by the averages (when no walk ran, as for a traced loss,
 * it reduces them the blocking way, mf_train_allreduce_gradients);
 * 'mf_train_overlap_free' (also after an error) completes what was started
 * and frees. Errors name
 * "DistributedOptimizer". */
typedef struct MfOverlap MfOverlap;
MfOverlap *mf_train_overlap_new(bool check, int64_t bucket_bytes, int64_t fusion_bytes);
MfStatus mf_train_overlap_hooks(MfOverlap *ov, MfGradVar *pairs, int n, MfTapeHooks *hooks);
MfStatus mf_train_overlap_finish(MfOverlap *ov, MfGradVar *pairs, int n);
void mf_train_overlap_free(MfOverlap *ov);

/* mf_train_compute_gradients with the allreduce of 'ov' overlapped with the
 * backward walk (NULL: none). A loss traced into a graph (mf.trace) has no
 * walk: its gradients are left to the blocking path. */
MfStatus mf_train_compute_gradients_overlapped(MfLossFn fn, void *ctx, int nvars,
                                               MfVariable *const *var_list, MfOverlap *ov,
                                               MfTensor **loss, MfGradVar **pairs, int *npairs);

/* DistributedOptimizer's options (train/dist_optimizer.c): 'check', the
 * signature exchange before each buffer; 'fusion_bytes', the fused
 * buffers' limit; 'overlap', the allreduce during the backward pass in
 * buckets of 'bucket_bytes'. Defaults: true, 64 MiB, true, 4 KiB.
 * mf_dist_options_check: MF_EARG for a size < 1, naming
 * DistributedOptimizer. */
typedef struct MfDistOptions {
    bool check, overlap;
    int64_t fusion_bytes, bucket_bytes;
} MfDistOptions;
MfDistOptions mf_dist_options_default(void);
MfStatus mf_dist_options_check(const MfDistOptions *d);

/* print(opt) of a DistributedOptimizer with options 'dist' (NULL: a plain
 * optimizer, mf_optimizer_describe): "DistributedOptimizer(<the
 * optimizer>, averaged over N processes)". */
MfStatus mf_optimizer_describe_dist(const MfOptimizer *o, bool lr_callable,
                                    const MfDistOptions *dist, MfStrBuf *out);

/* compute_gradients of a DistributedOptimizer with options 'dist' (NULL:
 * a plain optimizer): mf_train_compute_gradients, then the gradients
 * averaged over the processes, overlapped with the backward walk or by the
 * fused blocking allreduce; nothing to average with one process. On error
 * '*pairs' and '*loss' are NULL. */
MfStatus mf_train_compute_gradients_dist(MfLossFn fn, void *ctx, int nvars,
                                         MfVariable *const *var_list, const MfDistOptions *dist,
                                         MfTensor **loss, MfGradVar **pairs, int *npairs);

/* apply_gradients of a DistributedOptimizer with options 'dist' given
 * gradients that its compute_gradients did not average (a custom loop's
 * tape, model:fit): they are averaged first, by the fused blocking
 * allreduce (nodes in graph mode or a trace), as Horovod's Keras
 * DistributedOptimizer does in apply_gradients; so every process applies
 * the same update. Nothing with one process. */
MfStatus mf_train_average_for_apply(MfGradVar *pairs, int n, const MfDistOptions *dist);

/* The same in graph mode: mf_train_compute_gradients_graph, then the
 * allreduce nodes (start and wait nodes with 'overlap', else the fused
 * MPIAllreduce ones). */
MfStatus mf_train_compute_gradients_graph_dist(MfTensor *loss, int nvars,
                                               MfVariable *const *var_list,
                                               const MfDistOptions *dist, MfGradVar **pairs,
                                               int *npairs);

/* broadcast_variables for graph Variable handles: root's values in 'sess'
 * assigned in every process's 'sess'. Errors name "broadcast_variables". */
MfStatus mf_train_broadcast_session(MfSession *sess, int n, MfVariable *const *vars, int root,
                                    bool check);

/* ---- graph mode (train/graph_train.c) ---------------------------------------------
 * A graph Variable is passed as a handle: an MfVariable whose value is the
 * symbolic output of its VARIABLE node (repl/ makes them so); its values
 * live in Sessions. */

/* A new handle (owned) for VARIABLE node 'node'; NULL with MF_ENOMEM. */
MfVariable *mf_train_graph_handle(MfNode *node);

/* Graph compute_gradients: adds the gradient nodes of the symbolic 'loss'
 * (summed when not a scalar) for 'var_list' (graph Variable handles of the
 * loss's graph) or, when NULL, every trainable variable of that graph, in
 * creation order. '*pairs' (mf_grad_vars_free) has one pair per variable,
 * the gradient NULL where the loss does not depend on it. Errors: a
 * concrete or non-float loss, a variable of another graph or an eager one,
 * the gradient builder's. */
MfStatus mf_train_compute_gradients_graph(MfTensor *loss, int nvars,
                                          MfVariable *const *var_list, MfGradVar **pairs,
                                          int *npairs);

/* Graph apply_gradients: makes the slot variables (and Adam's beta powers)
 * on first use, adds one fused Apply node per pair with a gradient, Adam's
 * beta-power updates after them, a NoOp named after the optimizer that
 * groups them and, with 'global_step' (a scalar int graph Variable), an
 * AssignAdd after that group. '*train_op' (borrowed, a node of the graph)
 * is the last of these: run it with a Session. 'lr' (may be NULL) overrides
 * the learning rate (a float scalar, concrete or symbolic). Slot variables
 * join the graph's global variables: build the initializer afterwards.
 * Errors name "apply_gradients". */
MfStatus mf_optimizer_apply_graph(MfOptimizer *o, int n, const MfGradVar *pairs, MfTensor *lr,
                                  MfVariable *global_step, MfNode **train_op);

/* apply_gradients on eager Variables while 'g' is built (mf.trace; the
 * gradients symbolic, e.g. from a GradientTape inside the traced function):
 * eager semantics when the graph runs. The slots (and Adam's powers) are
 * the optimizer's eager Variables, made now as in eager mode; one fused
 * Apply node per pair writes the captured variable and its slots in place
 * (the same kernels as eager mode), on every call of the traced function;
 * Adam's powers and the eager 'global_step' are assigned after them.
 * '*train_op' (borrowed) is the group, or the step's increment. */
MfStatus mf_optimizer_apply_traced(MfOptimizer *o, MfGraph *g, int n, const MfGradVar *pairs,
                                   MfTensor *lr, MfVariable *global_step, MfNode **train_op);

/* compute_gradients inside mf.trace (train/graph_train.c): fills each
 * pair's gradient with the symbolic gradient of 'loss' over the nodes of
 * 'g' built from index 'lo' on (the loss function's), w.r.t. the pair's
 * variable (a captured eager Variable: the sum over its values). */
MfStatus mf_train_traced_gradients(MfGraph *g, MfTensor *loss, int lo, MfGradVar *pairs, int n);

/* The graph's "global_step" variable (int64, 0, not trainable), made on
 * first use; '*step' is a new handle (owned). Fails when 'g' has a node of
 * that name that is not a variable. */
MfStatus mf_train_graph_global_step(MfGraph *g, MfVariable **step);

/* ---- Saver (train/saver.c) ---------------------------------------------------------
 * Saves and restores named Variables, the slots and non-slot variables of
 * optimizers and the global step in one safetensors file. Entry names: the
 * given name of each Variable; "<name>/<opt>" and "<name>/<opt>_1" for the
 * slots of a saved Variable (TensorFlow's names, <opt> the optimizer's name);
 * "beta1_power", "beta2_power" (Adam); "global_step". A saver retains its
 * Variables and optimizers. */
typedef struct MfSaver MfSaver;

/* A new empty saver (NULL with MF_ENOMEM's message). Free with mf_saver_free. */
MfSaver *mf_saver_new(void);
void mf_saver_free(MfSaver *s);

/* Adds 'v' under 'name' (copied). MF_EARG for an empty name or one already
 * used (the message names both Variables). */
MfStatus mf_saver_add_variable(MfSaver *s, const char *name, MfVariable *v);

/* MF_EARG "Saver: no Variables to save (var_list is empty)" when no
 * Variable was added (a saver of optimizers alone saves nothing they own). */
MfStatus mf_saver_check_not_empty(const MfSaver *s);

/* Adds an optimizer whose slots (of the saver's Variables) are saved too. */
MfStatus mf_saver_add_optimizer(MfSaver *s, MfOptimizer *o);

/* Adds every global variable of graph 'g' (NULL: the graph being built)
 * under its node name (slots, beta powers and the global step are global
 * variables there): TensorFlow 1.x's Saver() while a graph is built.
 * MF_EARG "Saver: the graph has no variables to save" when it has none,
 * "Saver: give the Variables to save: ..." when no graph is being built. */
MfStatus mf_saver_add_graph_variables(MfSaver *s, MfGraph *g);

/* A saver of graph variables reads and writes their values in a Session, so
 * save and restore need one; a saver of eager Variables only must not be
 * given one (it would act on the eager values). MF_EARG naming 'who'
 * ("Saver.save" or "Saver.restore") when 'sess' does not fit. */
MfStatus mf_saver_check_session(const MfSaver *s, const MfSession *sess, const char *who);

/* The "global_step" variable of the session's graph as a new handle in
 * '*out', or NULL when that graph has none. MF_ENOMEM. */
MfStatus mf_saver_session_global_step(MfSession *sess, MfVariable **out);

/* Writes every entry that exists now (slots made so far) to 'path',
 * atomically. 'global_step' (may be NULL) is saved as "global_step". Errors
 * name "Saver.save": two entries with one name (both named), a Variable
 * without a value, the writer's. */
MfStatus mf_saver_save(MfSaver *s, const char *path, MfVariable *global_step);

/* Restore (mf_saver_restore_session, 'sess' NULL for eager Variables):
 * reads 'path', checks it against the entries and, only when everything
 * fits, assigns them all (making slots not made yet when the file has
 * them). The one error message (MF_EARG, "Saver.restore: ...") lists every
 * missing entry, every dtype or shape mismatch and, when 'strict', every
 * unexpected file entry. 'global_step' (may be NULL) is restored from
 * "global_step"; when 'gs_optional', a file without it is fine. File entries
 * nothing asked for are remembered (see mf_saver_extras).
 * With a session, in graph mode: the values of graph Variable handles are read
 * from (saved) or written into (restored) 'sess'; eager Variables among
 * them are handled as above. 'global_step' NULL: the "global_step"
 * variable of the session's graph, when it has one. Errors: a graph variable not initialised in
 * 'sess', slots in the file that the graph has not made yet (build the
 * train op first), and those of the eager versions. */
MfStatus mf_saver_save_session(MfSaver *s, MfSession *sess, const char *path,
                               MfVariable *global_step);
MfStatus mf_saver_restore_session(MfSaver *s, MfSession *sess, const char *path, bool strict,
                                  MfVariable *global_step, bool gs_optional);

/* The unexpected entries of the last restore: returns how many and sets
 * '*names' (borrowed, valid until the next restore or free). */
int mf_saver_extras(const MfSaver *s, char *const **names);

/* Numbers of Variables and optimizers the saver holds. */
int mf_saver_nvars(const MfSaver *s);
int mf_saver_nopts(const MfSaver *s);

#endif
