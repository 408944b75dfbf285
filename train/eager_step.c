/* eager_step.c — apply_gradients and compute_gradients in eager mode (see
 * train.h): a step over several variables is all or nothing (every
 * allocation and check first, then the in-place Apply ops of optimizers.c),
 * and compute_gradients runs the loss under a gradient tape (or, inside
 * mf.trace, differentiates the traced loss through graph_train.c). The
 * learning rate is cast once per dtype per step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "eager/eager.h"
#include "optimizer_impl.h"

/* ---- apply_gradients --------------------------------------------------------------- */

static MfStatus check_pair(int i, const MfGradVar *p)
{
    MfVariable *v = p->var;
    if (!v)
        return mf_err_set(MF_EARG, "apply_gradients: pair %d has no variable", i + 1);
    if (!v->value || !v->value->storage)
        return mf_err_set(MF_EARG, "apply_gradients: variable '%s' (pair %d) has no value",
                          v->name, i + 1);
    if (!mf_dtype_is_float(v->value->dtype))
        return mf_err_set(MF_EDTYPE, "apply_gradients: variable '%s' (pair %d) has dtype %s; "
                          "optimizers update float32 or float64 variables", v->name, i + 1,
                          mf_dtype_name(v->value->dtype));
    const MfTensor *g = p->grad, *x = v->value;
    if (g && (g->dtype != x->dtype || g->rank != x->rank ||
              memcmp(g->shape, x->shape, (size_t)x->rank * sizeof *x->shape) != 0)) {
        char gs[96], vs[96];
        return mf_err_set(MF_ESHAPE, "apply_gradients: pair %d: gradient %s %s does not fit "
                          "variable '%s' %s %s", i + 1, mf_shape_str(g->rank, g->shape, gs, 96),
                          mf_dtype_name(g->dtype), v->name,
                          mf_shape_str(x->rank, x->shape, vs, 96), mf_dtype_name(x->dtype));
    }
    return MF_OK;
}

static MfStatus check_step(MfVariable *gs)
{
    if (!gs)
        return MF_OK;
    if (!gs->value || gs->value->rank != 0 ||
        (gs->value->dtype != MF_INT64 && gs->value->dtype != MF_INT32))
        return mf_err_set(MF_EARG, "apply_gradients: global_step must be a scalar int64 or "
                          "int32 Variable (see mf.train.global_step())");
    return MF_OK;
}

/* The learning rate now: a scalar tensor (owned), checked finite and >= 0. */
static MfStatus current_lr(const MfOptimizer *o, MfTensor *override, MfTensor **out)
{
    MfTensor *t = override ? override : o->cfg.lr_var ? o->cfg.lr_var->value : o->cfg.lr_tensor;
    if (!t) {
        *out = mf_tensor_scalar(MF_FLOAT64, o->cfg.lr);
        return *out ? MF_OK : MF_ENOMEM;
    }
    if (t->node)   /* symbolic: it has a value only while a Session runs its graph */
        return mf_err_set(MF_EARG, "apply_gradients: learning_rate is a graph tensor, which has "
                          "no value in an eager step; give a number, an eager scalar tensor or "
                          "a Variable, or minimize a graph loss and run the train op with a "
                          "Session");
    if (t->rank != 0 || t->dtype == MF_BOOL || !t->storage)
        return mf_err_set(MF_EARG, "apply_gradients: learning_rate must be a scalar number, got "
                          "a %s tensor of rank %d", mf_dtype_name(t->dtype), t->rank);
    double v = mf_tensor_get(t, 0);
    if (!(v >= 0) || !isfinite(v))
        return mf_err_set(MF_EARG, "apply_gradients: learning_rate must be finite and >= 0, "
                          "got %g", v);
    mf_tensor_retain(t);
    *out = t;
    return MF_OK;
}

static MfStatus check_all(MfOptimizer *o, int n, const MfGradVar *pairs, MfVariable *gs)
{
    bool any = false;
    for (int i = 0; i < n; i++)
        any = any || pairs[i].grad;
    if (!any)   /* TensorFlow's ValueError */
        return mf_train_err_no_gradients("apply_gradients", n, pairs);
    MfStatus st = check_step(gs);
    for (int i = 0; i < n && st == MF_OK; i++)
        st = check_pair(i, &pairs[i]);
    for (int i = 0; i < n && st == MF_OK; i++) {
        MfSlotEntry *e;
        if (pairs[i].grad && !mf_opt_find_entry(o, pairs[i].var))
            st = mf_opt_new_entry(o, pairs[i].var, &e);
        if (st == MF_OK && pairs[i].grad)
            st = mf_opt_powers_prepare(o, pairs[i].var->value->dtype);
    }
    return st;
}

/* One pair's prepared step (see mf_opt_prepare): the Apply op's inputs. */
typedef struct PairStep {
    MfPrepared p;
    bool ready;
} PairStep;

/* Everything an eager step writes at the end, computed first: the rate in
 * each dtype (cast once), each pair's Apply inputs, the next powers (Adam's
 * beta powers), global_step + 1 (all owned). */
typedef struct StepPlan {
    int n;
    PairStep *pairs;
    MfOptRates rates;
    MfTensor *power_next[MF_OPT_MAX_POWERS];
    MfTensor *step_next;
} StepPlan;

static void plan_free(StepPlan *pl)
{
    for (int i = 0; i < pl->n; i++)
        if (pl->pairs[i].ready)
            mf_opt_prepared_free(&pl->pairs[i].p);
    if (pl->pairs)
        mf_dealloc(pl->pairs, (size_t)pl->n * sizeof *pl->pairs);
    mf_opt_rates_free(&pl->rates);
    for (int i = 0; i < MF_OPT_MAX_POWERS; i++)
        mf_tensor_release(pl->power_next[i]);
    mf_tensor_release(pl->step_next);
}

/* Everything that can fail, for every pair, before anything is written. */
static MfStatus plan_step(MfOptimizer *o, int n, const MfGradVar *pairs, MfVariable *gs,
                          StepPlan *pl)
{
    pl->pairs = n ? mf_alloc_zeroed((size_t)n * sizeof *pl->pairs) : NULL;
    if (n && !pl->pairs)
        return mf_err_nomem("apply_gradients", (unsigned long long)n * sizeof *pl->pairs);
    pl->n = n;
    MfStatus st = MF_OK;
    bool any = false;
    for (int i = 0; i < n && st == MF_OK; i++) {
        if (!pairs[i].grad)
            continue;
        any = true;
        PairStep *ps = &pl->pairs[i];
        MfTensor *lr = NULL;
        st = mf_opt_lr_for(&pl->rates, pairs[i].var->value->dtype, &lr);
        if (st == MF_OK) {
            MfSlotEntry *e = mf_opt_find_entry(o, pairs[i].var);
            MfUpdate u = {o, pairs[i].var, pairs[i].grad, lr, e->slot, NULL,
                          MF_APPLY_NONFINITE_APPLY,    /* checked before the plan */
                          pairs[i].decay, NULL, false};
            st = mf_opt_prepare(&u, &ps->p);
            ps->ready = true;
        }
    }
    if (st == MF_OK && any)
        st = mf_opt_powers_next(o, pl->power_next);
    if (st == MF_OK && gs) {
        MfTensor *one = mf_tensor_scalar(gs->value->dtype, 1);
        st = one ? mf_binary(MF_OP_ADD, gs->value, one, &pl->step_next) : MF_ENOMEM;
        mf_tensor_release(one);
    }
    return st;
}

/* Writes the planned step: the in-place Apply ops (which allocate nothing
 * and whose checks the plan passed), then the powers and the step. */
static MfStatus commit_step(MfOptimizer *o, StepPlan *pl, MfVariable *gs)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < pl->n && st == MF_OK; i++)
        if (pl->pairs[i].ready)
            st = mf_opt_commit(&pl->pairs[i].p, NULL);
    for (int i = 0; i < MF_OPT_MAX_POWERS && st == MF_OK; i++)
        if (pl->power_next[i])
            st = mf_variable_assign(o->power[i], pl->power_next[i]);
    if (st == MF_OK && pl->step_next)
        st = mf_variable_assign(gs, pl->step_next);
    return st;
}

/* A gradient holding NaN or Inf: MF_EARG naming the variable (ERROR), or
 * '*skip' (SKIP); checked before the step makes slots or writes anything. */
static MfStatus check_finite(const MfOptimizer *o, MfApplyNonfinite policy, int n,
                             const MfGradVar *pairs, bool *skip)
{
    *skip = false;
    for (int i = 0; i < n && policy != MF_APPLY_NONFINITE_APPLY; i++) {
        if (!pairs[i].grad || mf_tensor_all_finite(pairs[i].grad))
            continue;
        if (policy == MF_APPLY_NONFINITE_SKIP) {
            *skip = true;
            return MF_OK;
        }
        return mf_err_set(MF_EARG, "apply_gradients: %s: the gradient of variable '%s' (pair "
                          "%d) holds NaN or Inf; nothing was applied (nonfinite = \"error\"; "
                          "\"skip\" skips such steps, \"apply\" writes them)",
                          mf_optimizer_class(o), pairs[i].var->name, i + 1);
    }
    return MF_OK;
}

/* All or nothing: every allocation and check of the step happens in
 * check_all and plan_step, before the first variable changes, so a step
 * that fails (out of memory halfway through Adam over many variables)
 * leaves every variable, slot, beta power and global_step bit-identical. */
MfStatus mf_optimizer_apply(MfOptimizer *o, int n, const MfGradVar *pairs, MfTensor *lr,
                            MfVariable *global_step)
{
    MfApplyNonfinite policy = mf_opt_take_nonfinite(o);
    int nentries = o->nentries;
    bool had_powers = o->power[0] != NULL, skip = false;
    StepPlan plan = {0};
    MfStatus st = mf_opt_check_hyper_tensors(o, NULL, "apply_gradients");
    if (st == MF_OK)
        st = current_lr(o, lr, &plan.rates.lr);
    for (int i = 0; i < n && st == MF_OK && policy != MF_APPLY_NONFINITE_APPLY; i++)
        st = check_pair(i, &pairs[i]);   /* a variable to name, a gradient to read */
    if (st == MF_OK)
        st = check_finite(o, policy, n, pairs, &skip);
    if (st == MF_OK && !skip)
        st = check_all(o, n, pairs, global_step);
    if (st == MF_OK && !skip) {
        mf_tape_suspend();
        st = plan_step(o, n, pairs, global_step, &plan);
        if (st == MF_OK)
            st = commit_step(o, &plan, global_step);
        mf_tape_resume();
        if (st != MF_OK)
            mf_err_prefix("apply_gradients");
    }
    plan_free(&plan);
    if (st != MF_OK)
        mf_opt_forget_new(o, nentries, had_powers);
    return st;
}

/* ---- compute_gradients (eager) ----------------------------------------------------- */

static int by_id(const void *a, const void *b)
{
    const MfGradVar *x = a, *y = b;
    return (x->var->id > y->var->id) - (x->var->id < y->var->id);
}

/* The pairs (no gradients yet) for 'var_list', or for the tape's variables. */
static MfStatus make_pairs(MfTape *tape, int nvars, MfVariable *const *var_list,
                           MfGradVar **pairs, int *npairs)
{
    int64_t n = var_list ? nvars : mf_tape_variables(tape, NULL, 0);
    MfVariable **vs = mf_alloc((size_t)(n ? n : 1) * sizeof *vs);
    MfGradVar *p = mf_grad_vars_new((int)n);
    if (!vs || !p) {
        mf_dealloc(vs, (size_t)(n ? n : 1) * sizeof *vs);
        mf_grad_vars_free(p, (int)n);
        return mf_err_nomem("compute_gradients", (unsigned long long)n * sizeof *p);
    }
    if (var_list)
        memcpy(vs, var_list, (size_t)n * sizeof *vs);
    else
        mf_tape_variables(tape, vs, n);
    for (int64_t i = 0; i < n; i++) {
        mf_variable_retain(vs[i]);
        p[i].var = vs[i];
    }
    mf_dealloc(vs, (size_t)(n ? n : 1) * sizeof *vs);
    if (!var_list)
        qsort(p, (size_t)n, sizeof *p, by_id);
    *pairs = p;
    *npairs = (int)n;
    return MF_OK;
}

static MfStatus differentiate(MfTape *tape, MfTensor *loss, MfGradVar *pairs, int n,
                              MfOverlap *ov)
{
    if (!mf_dtype_is_float(loss->dtype))
        return mf_err_set(MF_EDTYPE, "compute_gradients: the loss must be a float tensor, got "
                          "%s", mf_dtype_name(loss->dtype));
    if (n == 0)
        return MF_OK;
    MfTapeSource *src = mf_alloc((size_t)n * sizeof *src);
    MfTensor **grads = mf_alloc_zeroed((size_t)n * sizeof *grads);
    MfStatus st = src && grads ? MF_OK : mf_err_nomem("compute_gradients", n * sizeof *src);
    for (int i = 0; i < n && st == MF_OK; i++)
        src[i] = (MfTapeSource){NULL, pairs[i].var};
    MfTapeHooks hooks;
    if (st == MF_OK && ov)
        st = mf_train_overlap_hooks(ov, pairs, n, &hooks);
    if (st == MF_OK)
        st = ov ? mf_tape_gradient_hooked(tape, loss, n, src, &hooks, grads)
                : mf_tape_gradient(tape, loss, n, src, NULL, false, grads);
    for (int i = 0; i < n && st == MF_OK; i++)
        pairs[i].grad = grads[i];
    if (st != MF_OK)
        mf_err_prefix("compute_gradients");
    mf_dealloc(src, (size_t)n * sizeof *src);
    mf_dealloc(grads, (size_t)n * sizeof *grads);
    return st;
}

MfStatus mf_train_compute_gradients(MfLossFn fn, void *ctx, int nvars, MfVariable *const *var_list,
                                    MfTensor **loss, MfGradVar **pairs, int *npairs)
{
    return mf_train_compute_gradients_overlapped(fn, ctx, nvars, var_list, NULL, loss, pairs,
                                                 npairs);
}

MfStatus mf_train_compute_gradients_overlapped(MfLossFn fn, void *ctx, int nvars,
                                               MfVariable *const *var_list, MfOverlap *ov,
                                               MfTensor **loss, MfGradVar **pairs, int *npairs)
{
    *pairs = NULL;
    *npairs = 0;
    if (loss)
        *loss = NULL;
    MfTape *tape = mf_tape_new(false, true);
    if (!tape)
        return MF_ENOMEM;
    /* inside mf.trace the loss's ops are graph nodes: differentiate those
     * built while 'fn' ran, symbolically */
    MfGraph *g = mf_mode_graph();
    int lo = g ? mf_graph_nnodes(g) : 0;
    MfTensor *value = NULL;
    MfStatus st = fn(ctx, &value);
    mf_tape_stop(tape);
    if (st == MF_OK)
        st = make_pairs(tape, nvars, var_list, pairs, npairs);
    if (st == MF_OK && *npairs == 0)   /* TensorFlow 1.x: "No variables to optimize" */
        st = mf_train_err_no_gradients("compute_gradients", 0, NULL);
    if (st == MF_OK && g && value->node)
        st = mf_train_traced_gradients(g, value, lo, *pairs, *npairs);
    else if (st == MF_OK)
        st = differentiate(tape, value, *pairs, *npairs, ov);
    mf_tape_release(tape);
    if (st != MF_OK) {
        mf_grad_vars_free(*pairs, *npairs);
        *pairs = NULL;
        *npairs = 0;
        mf_tensor_release(value);
        return st;
    }
    if (loss)
        *loss = value;
    else
        mf_tensor_release(value);
    return MF_OK;
}
