/* train.h — training, the public header of train/: optimizers with
 * TensorFlow 1.x update formulas and slots, compute_gradients /
 * apply_gradients, the global step and learning-rate decay.
 *
 * The update rules are written with ops through the dispatcher (mf_op_call),
 * then assigned to the Variables; graph mode will add the same ops as nodes.
 * Eager mode only for now: 'mf_train_compute_gradients' runs the loss
 * function under a gradient tape.
 *
 * Ownership: an optimizer is refcounted; it retains its learning-rate tensor
 * or Variable, every variable it made slots for, the slots and Adam's
 * beta powers. Functions returning a tensor or a Variable hand over a
 * reference unless they say "borrowed". */
#ifndef MF_TRAIN_H
#define MF_TRAIN_H

#include <stdbool.h>

#include "core/op.h"
#include "core/variable.h"

typedef enum MfOptKind {
    MF_OPT_SGD,
    MF_OPT_MOMENTUM,
    MF_OPT_ADAGRAD,
    MF_OPT_RMSPROP,
    MF_OPT_ADAM,
} MfOptKind;

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
    double beta1, beta2;           /* Adam */
} MfOptConfig;

/* TensorFlow's defaults for 'kind' with learning rate 'lr'. */
MfOptConfig mf_opt_config_default(MfOptKind kind, double lr);

typedef struct MfOptimizer MfOptimizer;

/* A new optimizer. Errors (NULL with a message naming the constructor,
 * e.g. "AdamOptimizer: beta1 must be in [0, 1), got 1"): a learning rate
 * number <= 0 or not finite, a learning-rate tensor that is not a scalar of
 * a real dtype, hyperparameters out of range, MF_ENOMEM. */
MfOptimizer *mf_optimizer_new(const MfOptConfig *cfg);
void mf_optimizer_retain(MfOptimizer *o);
void mf_optimizer_release(MfOptimizer *o);

/* The configuration (borrowed; 'name' is never NULL) and the class name a
 * user typed ("AdamOptimizer"). */
const MfOptConfig *mf_optimizer_config(const MfOptimizer *o);
const char *mf_optimizer_class(const MfOptimizer *o);

/* One (gradient, variable) pair: 'grad' NULL means no gradient (skipped by
 * apply). In arrays made by this module both are owned references. */
typedef struct MfGradVar {
    MfTensor *grad;
    MfVariable *var;
} MfGradVar;

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
 * dtype and shape) before anything changes. Errors name "apply_gradients". */
MfStatus mf_optimizer_apply(MfOptimizer *o, int n, const MfGradVar *pairs, MfTensor *lr,
                            MfVariable *global_step);

/* The optimizer's slot names, in TensorFlow's order ("m", "v" for Adam);
 * returns how many (0..2) and sets 'names' (static strings). */
int mf_optimizer_slot_names(const MfOptimizer *o, const char *names[2]);

/* The slot 'name' of 'var' (borrowed), or NULL when 'var' has no slots yet.
 * MF_EARG (message listing the valid names) for a name this optimizer does
 * not have. */
MfStatus mf_optimizer_get_slot(const MfOptimizer *o, const MfVariable *var, const char *name,
                               MfVariable **slot);

/* Adam's "beta1_power" / "beta2_power" (borrowed; NULL before the first
 * apply or for other optimizers). */
MfVariable *mf_optimizer_nonslot(const MfOptimizer *o, const char *name);

/* Number of variables with slots, and variable 'k' of them (borrowed). */
int mf_optimizer_nvars(const MfOptimizer *o);
MfVariable *mf_optimizer_var(const MfOptimizer *o, int k);

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

/* lr * decay_rate ^ (step / decay_steps) (the exponent floored when
 * 'staircase'), computed with ops in lr's dtype (float32 or float64).
 * 'step' is a scalar tensor of any real dtype. Errors: decay_steps <= 0,
 * decay_rate <= 0, non-scalar or non-float arguments. */
MfStatus mf_train_exponential_decay(MfTensor *lr, MfTensor *step, double decay_steps,
                                    double decay_rate, bool staircase, MfTensor **out);

#endif
