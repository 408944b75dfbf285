/* optimizer_impl.h — the insides of an optimizer, shared by the files of
 * train/ in layers, each calling only those below it (no circle):
 *   opt_classes.c  the descriptors (MfOptClass) and the configuration checks;
 *   optimizer.c    the optimizer object: slots, non-slot state, print;
 *   optimizers.c   one variable's update: the descriptor's Apply op;
 *   eager_step.c   apply_gradients and compute_gradients in eager mode;
 *   graph_train.c  the same in a graph and inside mf.trace.
 * Private to train/. */
#ifndef MF_TRAIN_OPTIMIZER_IMPL_H
#define MF_TRAIN_OPTIMIZER_IMPL_H

#include "train.h"

#define MF_OPT_MAX_ASIDE 16

/* The slots of one variable (all owned references). */
typedef struct MfSlotEntry {
    MfVariable *var;
    MfVariable *slot[MF_OPT_MAX_SLOTS];
} MfSlotEntry;

struct MfOptimizer {
    int64_t refcount;
    MfOptConfig cfg;          /* 'name' owned; 'lr_tensor' / 'lr_var' retained */
    MfSlotEntry *entries;
    int nentries, capentries;
    /* the descriptor's non-slot state of the current context (Adam's
     * beta1_power, beta2_power; owned) */
    MfVariable *power[MF_OPT_MAX_POWERS];
    /* the powers of the other contexts (graphs, eager mode) the optimizer
     * trained in, kept aside (owned): TensorFlow keys them by graph, so one
     * optimizer serves eager mode and several graphs. */
    MfVariable *aside[MF_OPT_MAX_ASIDE][MF_OPT_MAX_POWERS];
    int naside;
    MfApplyNonfinite nonfinite; /* the next apply's (mf_optimizer_next_nonfinite) */
    /* hyperparameters given as graph tensors (owned; NULL: the number in
     * cfg), by the descriptor's hyperparameter index */
    MfTensor *hyper_tensor[MF_OPT_MAX_HYPERS];
};

/* The graph tensor of hyperparameter 'i' (borrowed), or NULL. */
MfTensor *mf_opt_hyper_tensor(const MfOptimizer *o, int i);

/* MF_EARG when a hyperparameter is a graph tensor that 'g' cannot read
 * (NULL 'g': an eager step, which reads none), naming 'who'. */
MfStatus mf_opt_check_hyper_tensors(const MfOptimizer *o, const MfGraph *g, const char *who);

/* The checks of mf_optimizer_new (the name, the learning rate, each
 * hyperparameter's range; opt_classes.c). */
MfStatus mf_opt_check_config(const MfOptConfig *c);

/* print(opt)'s ", beta1=0.9, beta2=0.999, epsilon=1e-08" after the rate. */
void mf_opt_describe_hypers(const MfOptConfig *c, MfStrBuf *out);

/* The policy of this apply, taken from 'o' (reset for the next). */
MfApplyNonfinite mf_opt_take_nonfinite(MfOptimizer *o);

/* The descriptor of 'o' (static). */
const MfOptClass *mf_opt_desc(const MfOptimizer *o);

/* Makes the powers of context 'g' (a graph; NULL: eager mode) the
 * current ones (o->power, NULL when that context has none yet), the
 * current ones kept aside. MF_EARG past MF_OPT_MAX_ASIDE contexts. */
MfStatus mf_opt_powers_context(MfOptimizer *o, const MfGraph *g);

/* One variable's step: 'lr' is the learning rate as a scalar of the
 * variable's dtype; 'slot' the variable's slots. Eager Variables are
 * updated now; graph Variable handles (symbolic values) get an Apply node,
 * whose output goes to '*out' (owned) when 'out' is not NULL. */
typedef struct MfUpdate {
    const MfOptimizer *o;
    MfVariable *var;
    MfTensor *grad;
    MfTensor *lr;
    MfVariable *const *slot;
    MfTensor **out;
    MfApplyNonfinite nonfinite; /* the Apply op's attrs.nonfinite */
    MfTensor *decay;            /* the pair's decoupled weight decay (MfGradVar), or NULL */
    MfTensor *grad_scale;       /* ApplyAdam: a scalar the gradient is multiplied by, or NULL */
    bool gated;                 /* the step's finite gate covers the gradient (attrs.gated) */
} MfUpdate;

/* The VARIABLE node (an MfNode) behind a graph Variable handle (one whose
 * value is that node's symbolic output), or NULL for an eager Variable. */
const void *mf_opt_graph_node(const MfVariable *v);

/* The slots of 'var' (matched by node for graph handles), or NULL. */
MfSlotEntry *mf_opt_find_entry(const MfOptimizer *o, const MfVariable *var);

/* Records 'var' (retained) with its 'slots' (MF_OPT_MAX_SLOTS entries,
 * NULL past the optimizer's count; ownership passes on success). */
MfStatus mf_opt_add_entry(MfOptimizer *o, MfVariable *var, MfVariable *const *slots,
                          MfSlotEntry **out);

/* Makes the slots of 'var' (not yet recorded) and records them. */
MfStatus mf_opt_new_entry(MfOptimizer *o, MfVariable *var, MfSlotEntry **out);

/* A slot's initial value: a new contiguous tensor shaped like 'like'
 * (dtype, concrete shape) filled with mf_opt_slot_init (owned; NULL with
 * MF_ENOMEM's message). */
MfTensor *mf_opt_slot_value(const MfOptConfig *cfg, int k, MfDType dt, int rank,
                            const int64_t *shape);

/* The slot names of 'kind' (static strings) and how many (opt_classes.c). */
int mf_opt_kind_slots(MfOptKind kind, const char *names[MF_OPT_MAX_SLOTS]);

/* The initial value of slot 'k' of an optimizer, from its descriptor
 * (TensorFlow's: zeros, but Adagrad's accumulator and RMSProp's "rms" start
 * elsewhere). */
double mf_opt_slot_init(const MfOptConfig *cfg, int k);

/* The learning rate 'lr' as a scalar of 'dt' (owned): 'lr' itself when it
 * has that dtype, else a Cast (a node when 'lr' is symbolic). */
MfStatus mf_opt_lr_as(MfTensor *lr, MfDType dt, MfTensor **out);

/* The learning rate of one apply, cast once per dtype (not per variable):
 * 'lr' (owned) and its casts, made on first use by mf_opt_lr_for. */
typedef struct MfOptRates {
    MfTensor *lr;
    MfTensor *as[MF_NDTYPES];
} MfOptRates;

/* The rate as a scalar of 'dt' (borrowed from 'r'). */
MfStatus mf_opt_lr_for(MfOptRates *r, MfDType dt, MfTensor **out);
void mf_opt_rates_free(MfOptRates *r);

/* Runs (eager) or adds (graph) the optimizer's Apply op for one variable. */
MfStatus mf_opt_update(const MfUpdate *u);

/* One eager step split in two, so that a step over several variables is
 * all-or-nothing: mf_opt_prepare does everything that can fail (hyper-
 * parameter scalars, casts, copy-on-write of shared buffers, a contiguous
 * gradient) without changing any value a user can see; mf_opt_commit then
 * runs the in-place Apply op, which allocates nothing and whose checks the
 * preparation already passed. mf_opt_prepared_free releases the
 * temporaries (always, after either). */
#define MF_OPT_SCRATCH_MAX 24

typedef struct MfOptScratch {
    MfTensor *t[MF_OPT_SCRATCH_MAX];
    int n;
    MfStatus st;
} MfOptScratch;

typedef struct MfPrepared {
    MfOptScratch s;
    MfOpId op;
    MfAttrs attrs;
    int nin;
    MfTensor *in[12];   /* ApplyAdam's 10, AdamW's weight_decay, grad_scale */
} MfPrepared;

MfStatus mf_opt_prepare(const MfUpdate *u, MfPrepared *p);
MfStatus mf_opt_commit(MfPrepared *p, MfTensor **out);
void mf_opt_prepared_free(MfPrepared *p);

/* Creates the descriptor's powers of eager mode (dtype 'dt') on first use. */
MfStatus mf_opt_powers_prepare(MfOptimizer *o, MfDType dt);

/* The next powers (each times its hyperparameter) computed into 'next'
 * (owned) without changing the variables, for an all-or-nothing step that
 * assigns them last. */
MfStatus mf_opt_powers_next(const MfOptimizer *o, MfTensor *next[MF_OPT_MAX_POWERS]);

/* Drops the slots made since the optimizer had 'nentries' entries and,
 * unless 'had_powers', the powers: a failed step leaves the optimizer as
 * it found it. */
void mf_opt_forget_new(MfOptimizer *o, int nentries, bool had_powers);

#endif
