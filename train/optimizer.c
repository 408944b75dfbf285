/* optimizer.c — optimizers (see train.h): construction and checks, slots
 * made on first apply, apply_gradients, eager compute_gradients under a
 * tape, and exponential_decay. The update rules are in optimizers.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/clocale.h"
#include "eager/eager.h"
#include "optimizer_impl.h"

MfOptimizer *mf_optimizer_new(const MfOptConfig *cfg)
{
    if (mf_opt_check_config(cfg) != MF_OK)
        return NULL;
    const char *name = cfg->name ? cfg->name : mf_opt_class(cfg->kind)->default_name;
    size_t len = strlen(name) + 1;
    MfOptimizer *o = mf_alloc_zeroed(sizeof *o);
    char *copy = mf_alloc(len);
    if (!o || !copy) {
        mf_dealloc(o, sizeof *o);
        mf_dealloc(copy, len);
        mf_err_nomem(mf_opt_kind_class(cfg->kind), sizeof *o + len);
        return NULL;
    }
    memcpy(copy, name, len);
    o->refcount = 1;
    o->cfg = *cfg;
    o->cfg.name = copy;
    mf_tensor_retain(cfg->lr_tensor);
    mf_variable_retain(cfg->lr_var);
    return o;
}

MfStatus mf_optimizer_set_hyper(MfOptimizer *o, const char *name, double v)
{
    MfOptConfig c = o->cfg;
    const MfOptHyper *h = mf_opt_find_hyper(c.kind, name);
    if (!h)
        return mf_err_set(MF_EARG, "%s: no hyperparameter '%s'", mf_optimizer_class(o), name);
    mf_opt_hyper_set(&c, h, v);
    MfStatus st = mf_opt_check_config(&c);
    if (st == MF_OK)
        o->cfg = c;   /* the same name and rate references: only the field differs */
    return st;
}

void mf_optimizer_retain(MfOptimizer *o)
{
    if (o)
        o->refcount++;
}

void mf_optimizer_release(MfOptimizer *o)
{
    if (!o || --o->refcount > 0)
        return;
    for (int i = 0; i < o->nentries; i++) {
        mf_variable_release(o->entries[i].var);
        for (int k = 0; k < MF_OPT_MAX_SLOTS; k++)
            mf_variable_release(o->entries[i].slot[k]);
    }
    if (o->capentries)
        mf_dealloc(o->entries, (size_t)o->capentries * sizeof *o->entries);
    mf_variable_release(o->beta_power[0]);
    mf_variable_release(o->beta_power[1]);
    for (int k = 0; k < o->naside; k++) {
        mf_variable_release(o->aside[k][0]);
        mf_variable_release(o->aside[k][1]);
    }
    mf_tensor_release(o->cfg.lr_tensor);
    mf_variable_release(o->cfg.lr_var);
    mf_dealloc((char *)o->cfg.name, strlen(o->cfg.name) + 1);
    mf_dealloc(o, sizeof *o);
}

const MfOptConfig *mf_optimizer_config(const MfOptimizer *o)
{
    return &o->cfg;
}

const char *mf_optimizer_class(const MfOptimizer *o)
{
    return mf_opt_kind_class(o->cfg.kind);
}

/* The learning rate as print(opt) shows it. */
static void describe_lr(const MfOptConfig *c, bool lr_callable, MfStrBuf *out)
{
    const MfTensor *t = c->lr_var ? c->lr_var->value : c->lr_tensor;
    if (lr_callable)
        mf_strbuf_add(out, "<function>");
    else if (c->lr_var)
        mf_strbuf_addf(out, "<Variable '%s'>", c->lr_var->name);
    else if (t && !t->storage)   /* a symbolic (graph) tensor: no value to show */
        mf_strbuf_add(out, "<graph tensor>");
    else
        mf_strbuf_addf(out, "%g", t ? mf_tensor_get(t, 0) : c->lr);
}

MfStatus mf_optimizer_describe(const MfOptimizer *o, bool lr_callable, MfStrBuf *out)
{
    const MfOptConfig *c = &o->cfg;
    MfCLocale loc = mf_c_locale_begin();
    mf_strbuf_addf(out, "%s(learning_rate=", mf_opt_kind_class(c->kind));
    describe_lr(c, lr_callable, out);
    mf_opt_describe_hypers(c, out);
    const char *names[2];
    int n = mf_optimizer_slot_names(o, names);
    mf_strbuf_addf(out, ") name=\"%s\", slots: %s%s%s", c->name, n ? names[0] : "none",
                   n > 1 ? ", " : "", n > 1 ? names[1] : "");
    if (n)
        mf_strbuf_addf(out, " (for %d variables)", mf_optimizer_nvars(o));
    mf_c_locale_end(loc);
    return mf_strbuf_status(out, "tostring");
}

/* ---- slots ------------------------------------------------------------------------- */

int mf_optimizer_slot_names(const MfOptimizer *o, const char *names[2])
{
    return mf_opt_kind_slots(o->cfg.kind, names);
}

/* The VARIABLE node behind a graph Variable handle, or NULL (eager). */
const void *mf_opt_graph_node(const MfVariable *v)
{
    return v && v->value && v->value->node ? v->value->node : NULL;
}

MfSlotEntry *mf_opt_find_entry(const MfOptimizer *o, const MfVariable *var)
{
    /* graph Variables may have several handles: they match by node */
    const void *node = mf_opt_graph_node(var);
    for (int i = 0; i < o->nentries; i++)
        if (o->entries[i].var == var || (node && mf_opt_graph_node(o->entries[i].var) == node))
            return &o->entries[i];
    return NULL;
}

MfStatus mf_optimizer_get_slot(const MfOptimizer *o, const MfVariable *var, const char *name,
                               MfVariable **slot)
{
    const char *names[2];
    int n = mf_optimizer_slot_names(o, names);
    *slot = NULL;
    for (int k = 0; k < n; k++) {
        if (strcmp(names[k], name) == 0) {
            const MfSlotEntry *e = mf_opt_find_entry(o, var);
            *slot = e ? e->slot[k] : NULL;
            return MF_OK;
        }
    }
    if (n == 0)
        return mf_err_set(MF_EARG, "get_slot: %s has no slots, got \"%s\"",
                          mf_optimizer_class(o), name);
    return mf_err_set(MF_EARG, "get_slot: %s has slots \"%s\"%s%s%s, got \"%s\"",
                      mf_optimizer_class(o), names[0], n > 1 ? " and \"" : "",
                      n > 1 ? names[1] : "", n > 1 ? "\"" : "", name);
}

MfVariable *mf_optimizer_nonslot(const MfOptimizer *o, const char *name)
{
    if (strcmp(name, "beta1_power") == 0)
        return o->beta_power[0];
    if (strcmp(name, "beta2_power") == 0)
        return o->beta_power[1];
    return NULL;
}

int mf_optimizer_nvars(const MfOptimizer *o)
{
    return o->nentries;
}

MfVariable *mf_optimizer_var(const MfOptimizer *o, int k)
{
    return o->entries[k].var;
}

/* Counts 'v' (a slot or power, may be NULL) when it belongs to the current
 * context, storing it while 'out' has room; returns the new count. */
static int add_here(MfVariable *v, MfVariable **out, int cap, int n)
{
    if (!v || !mf_mode_variable_here(v))
        return n;
    if (n < cap)
        out[n] = v;
    return n + 1;
}

int mf_optimizer_variables(const MfOptimizer *o, MfVariable **out, int cap)
{
    int n = 0;
    for (int i = 0; i < o->nentries; i++)
        for (int k = 0; k < MF_OPT_MAX_SLOTS; k++)
            n = add_here(o->entries[i].slot[k], out, cap, n);
    for (int j = 0; j < 2; j++)   /* Adam's powers: the current pair, then those aside */
        n = add_here(o->beta_power[j], out, cap, n);
    for (int c = 0; c < o->naside; c++)
        for (int j = 0; j < 2; j++)
            n = add_here(o->aside[c][j], out, cap, n);
    return n;
}

/* A slot variable of 'var' named as TensorFlow names it: "w/Adam", "w/Adam_1". */
MfTensor *mf_opt_slot_value(const MfOptConfig *cfg, int k, MfDType dt, int rank,
                            const int64_t *shape)
{
    MfTensor *x = mf_tensor_new(dt, rank, shape);
    if (!x)
        return NULL;
    double v = mf_opt_slot_init(cfg, k);
    int64_t n = mf_tensor_numel(x);
    if (x->dtype == MF_FLOAT32)
        for (int64_t i = 0; i < n; i++)
            ((float *)mf_tensor_data(x))[i] = (float)v;
    else
        for (int64_t i = 0; i < n; i++)
            ((double *)mf_tensor_data(x))[i] = v;
    return x;
}

static MfVariable *new_slot(const MfOptimizer *o, MfVariable *var, int k)
{
    MfTensor *x = mf_opt_slot_value(&o->cfg, k, var->value->dtype, var->value->rank,
                                    var->value->shape);
    if (!x)
        return NULL;
    char name[256];
    snprintf(name, sizeof name, k ? "%s/%s_%d" : "%s/%s", var->name, o->cfg.name, k);
    MfVariable *slot = mf_variable_new(x, name, false);
    mf_tensor_release(x);
    return slot;
}

MfStatus mf_opt_add_entry(MfOptimizer *o, MfVariable *var, MfVariable *const *slots,
                          MfSlotEntry **out)
{
    if (o->nentries == o->capentries) {
        int cap = o->capentries ? o->capentries * 2 : 8;
        MfSlotEntry *e = mf_alloc((size_t)cap * sizeof *e);
        if (!e)
            return mf_err_nomem("apply_gradients", (unsigned long long)cap * sizeof *e);
        if (o->nentries)
            memcpy(e, o->entries, (size_t)o->nentries * sizeof *e);
        if (o->capentries)
            mf_dealloc(o->entries, (size_t)o->capentries * sizeof *e);
        o->entries = e;
        o->capentries = cap;
    }
    MfSlotEntry *e = &o->entries[o->nentries];
    memset(e, 0, sizeof *e);
    for (int k = 0; k < MF_OPT_MAX_SLOTS; k++)
        e->slot[k] = slots[k];
    mf_variable_retain(var);
    e->var = var;
    o->nentries++;
    *out = e;
    return MF_OK;
}

static MfStatus add_entry(MfOptimizer *o, MfVariable *var, MfSlotEntry **out)
{
    MfVariable *slots[MF_OPT_MAX_SLOTS] = {NULL, NULL};
    const char *names[2];
    int n = mf_optimizer_slot_names(o, names);
    for (int k = 0; k < n; k++) {
        if (!(slots[k] = new_slot(o, var, k))) {
            for (int j = 0; j < k; j++)
                mf_variable_release(slots[j]);
            return MF_ENOMEM;
        }
    }
    MfStatus st = mf_opt_add_entry(o, var, slots, out);
    if (st != MF_OK)
        for (int k = 0; k < n; k++)
            mf_variable_release(slots[k]);
    return st;
}

MfStatus mf_optimizer_ensure_slots(MfOptimizer *o, MfVariable *var)
{
    if (!var->value || !mf_dtype_is_float(var->value->dtype))
        return mf_err_set(MF_EDTYPE, "%s: slots are made for float32 or float64 Variables with "
                          "a value; '%s' is not one", mf_optimizer_class(o), var->name);
    MfSlotEntry *e;
    MfStatus st = mf_opt_find_entry(o, var) ? MF_OK : add_entry(o, var, &e);
    if (st == MF_OK && o->cfg.kind == MF_OPT_ADAM)
        st = mf_opt_adam_prepare(o, var->value->dtype);
    return st;
}

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

MfStatus mf_opt_lr_as(MfTensor *lr, MfDType dt, MfTensor **out)
{
    if (lr->dtype == dt) {
        mf_tensor_retain(lr);
        *out = lr;
        return MF_OK;
    }
    MfAttrs a = mf_attrs_default();
    a.dtype = dt;
    return mf_op1(MF_OP_CAST, 1, &lr, &a, out);
}

MfStatus mf_train_err_no_gradients(const char *who, int n, const MfGradVar *pairs)
{
    char names[256] = "";
    size_t used = 0;
    for (int i = 0; i < n && used + 8 < sizeof names; i++) {
        int w = snprintf(names + used, sizeof names - used, "%s'%s'", i ? ", " : "",
                         pairs[i].var && pairs[i].var->name ? pairs[i].var->name : "?");
        used = w < 0 ? used : used + (size_t)w >= sizeof names ? sizeof names - 1
                                                                  : used + (size_t)w;
    }
    if (n == 0)
        return mf_err_set(MF_EARG, "%s: No gradients provided for any variable: the loss read "
                          "no trainable Variable (a Variable made with trainable = false, or a "
                          "value taken out with :item() and made into a new tensor, is not "
                          "differentiated)", who);
    return mf_err_set(MF_EARG, "%s: No gradients provided for any variable: [%s] (every "
                      "pair's gradient is nil: no gradient reaches them from the loss; "
                      "tape:explain(loss, v) or mf.explain_gradients(loss, v) says why)",
                      who, names);
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
            st = add_entry(o, pairs[i].var, &e);
        if (st == MF_OK && pairs[i].grad && o->cfg.kind == MF_OPT_ADAM)
            st = mf_opt_adam_prepare(o, pairs[i].var->value->dtype);
    }
    return st;
}

/* One pair's prepared step (see mf_opt_prepare): its learning rate in the
 * variable's dtype (owned) and the Apply op's inputs. */
typedef struct PairStep {
    MfTensor *lr;
    MfPrepared p;
    bool ready;
} PairStep;

/* Everything an eager step writes at the end, computed first: each pair's
 * Apply inputs, Adam's next beta powers, global_step + 1 (all owned). */
typedef struct StepPlan {
    int n;
    PairStep *pairs;
    MfTensor *beta_next[2];
    MfTensor *step_next;
} StepPlan;

static void plan_free(StepPlan *pl)
{
    for (int i = 0; i < pl->n; i++) {
        if (pl->pairs[i].ready)
            mf_opt_prepared_free(&pl->pairs[i].p);
        mf_tensor_release(pl->pairs[i].lr);
    }
    if (pl->pairs)
        mf_dealloc(pl->pairs, (size_t)pl->n * sizeof *pl->pairs);
    mf_tensor_release(pl->beta_next[0]);
    mf_tensor_release(pl->beta_next[1]);
    mf_tensor_release(pl->step_next);
}

/* Everything that can fail, for every pair, before anything is written. */
static MfStatus plan_step(MfOptimizer *o, int n, const MfGradVar *pairs, MfTensor *lr,
                          MfVariable *gs, StepPlan *pl)
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
        st = mf_opt_lr_as(lr, pairs[i].var->value->dtype, &ps->lr);
        if (st == MF_OK) {
            MfSlotEntry *e = mf_opt_find_entry(o, pairs[i].var);
            MfUpdate u = {o, pairs[i].var, pairs[i].grad, ps->lr, e->slot, NULL,
                          MF_APPLY_NONFINITE_APPLY};   /* checked before the plan */
            st = mf_opt_prepare(&u, &ps->p);
            ps->ready = true;
        }
    }
    if (st == MF_OK && any && o->cfg.kind == MF_OPT_ADAM)
        st = mf_opt_adam_next(o, pl->beta_next);
    if (st == MF_OK && gs) {
        MfTensor *one = mf_tensor_scalar(gs->value->dtype, 1);
        st = one ? mf_binary(MF_OP_ADD, gs->value, one, &pl->step_next) : MF_ENOMEM;
        mf_tensor_release(one);
    }
    return st;
}

/* Writes the planned step: the in-place Apply ops (which allocate nothing
 * and whose checks the plan passed), then the beta powers and the step. */
static MfStatus commit_step(MfOptimizer *o, StepPlan *pl, MfVariable *gs)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < pl->n && st == MF_OK; i++)
        if (pl->pairs[i].ready)
            st = mf_opt_commit(&pl->pairs[i].p, NULL);
    for (int i = 0; i < 2 && st == MF_OK; i++)
        if (pl->beta_next[i])
            st = mf_variable_assign(o->beta_power[i], pl->beta_next[i]);
    if (st == MF_OK && pl->step_next)
        st = mf_variable_assign(gs, pl->step_next);
    return st;
}

/* A failed step leaves the optimizer as it found it: the slots and beta
 * powers this step made are dropped again. */
static void forget_new(MfOptimizer *o, int nentries, bool had_powers)
{
    while (o->nentries > nentries) {
        MfSlotEntry *e = &o->entries[--o->nentries];
        mf_variable_release(e->var);
        for (int k = 0; k < MF_OPT_MAX_SLOTS; k++)
            mf_variable_release(e->slot[k]);
        memset(e, 0, sizeof *e);
    }
    for (int i = 0; i < 2 && !had_powers; i++) {
        mf_variable_release(o->beta_power[i]);
        o->beta_power[i] = NULL;
    }
}

void mf_optimizer_next_nonfinite(MfOptimizer *o, MfApplyNonfinite policy)
{
    o->nonfinite = policy;
}

MfStatus mf_apply_nonfinite_named(const char *who, const char *name, const char *shown,
                                  MfApplyNonfinite *out)
{
    static const char *const names[] = {
        [MF_APPLY_NONFINITE_APPLY] = "apply", [MF_APPLY_NONFINITE_ERROR] = "error",
        [MF_APPLY_NONFINITE_SKIP] = "skip",
    };
    _Static_assert(MF_COUNTOF(names) == MF_APPLY_NNONFINITE, "one name per MfApplyNonfinite");
    for (int i = 0; name && i < MF_APPLY_NNONFINITE; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (MfApplyNonfinite)i;
            return MF_OK;
        }
    return mf_err_set(MF_EARG, "%s: nonfinite must be \"error\", \"skip\" or \"apply\", got %s",
                      who, shown);
}

MfApplyNonfinite mf_opt_take_nonfinite(MfOptimizer *o)
{
    MfApplyNonfinite p = o->nonfinite;
    o->nonfinite = MF_APPLY_NONFINITE_APPLY;
    return p;
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
    bool had_powers = o->beta_power[0] != NULL, skip = false;
    MfTensor *rate = NULL;
    StepPlan plan = {0, NULL, {NULL, NULL}, NULL};
    MfStatus st = current_lr(o, lr, &rate);
    for (int i = 0; i < n && st == MF_OK && policy != MF_APPLY_NONFINITE_APPLY; i++)
        st = check_pair(i, &pairs[i]);   /* a variable to name, a gradient to read */
    if (st == MF_OK)
        st = check_finite(o, policy, n, pairs, &skip);
    if (st == MF_OK && !skip)
        st = check_all(o, n, pairs, global_step);
    if (st == MF_OK && !skip) {
        mf_tape_suspend();
        st = plan_step(o, n, pairs, rate, global_step, &plan);
        if (st == MF_OK)
            st = commit_step(o, &plan, global_step);
        mf_tape_resume();
        if (st != MF_OK)
            mf_err_prefix("apply_gradients");
    }
    plan_free(&plan);
    mf_tensor_release(rate);
    if (st != MF_OK)
        forget_new(o, nentries, had_powers);
    return st;
}

/* ---- compute_gradients (eager) ----------------------------------------------------- */

MfGradVar *mf_grad_vars_new(int n)
{
    size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(MfGradVar);
    MfGradVar *p = mf_alloc_zeroed(bytes);
    if (!p)
        mf_err_nomem("apply_gradients", bytes);
    return p;
}

void mf_grad_vars_free(MfGradVar *pairs, int n)
{
    if (!pairs)
        return;
    for (int i = 0; i < n; i++) {
        mf_tensor_release(pairs[i].grad);
        mf_variable_release(pairs[i].var);
    }
    mf_dealloc(pairs, (size_t)(n ? n : 1) * sizeof *pairs);
}

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
    MfGraph *g = mf_exec_running() ? NULL : mf_graph_default();
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

/* ---- learning-rate decay ----------------------------------------------------------- */

static MfStatus check_decay(const MfTensor *lr, const MfTensor *step, double decay_steps,
                            double decay_rate)
{
    if (!mf_dtype_is_float(lr->dtype) || lr->rank != 0)
        return mf_err_set(MF_EARG, "exponential_decay: learning_rate must be a float scalar, "
                          "got a %s tensor of rank %d", mf_dtype_name(lr->dtype), lr->rank);
    if (step->rank != 0 || step->dtype == MF_BOOL)
        return mf_err_set(MF_EARG, "exponential_decay: global_step must be a scalar number, "
                          "got a %s tensor of rank %d", mf_dtype_name(step->dtype), step->rank);
    if (!(decay_steps > 0))
        return mf_err_set(MF_EARG, "exponential_decay: decay_steps must be > 0, got %g",
                          decay_steps);
    if (!(decay_rate > 0))
        return mf_err_set(MF_EARG, "exponential_decay: decay_rate must be > 0, got %g",
                          decay_rate);
    return MF_OK;
}

bool mf_train_decay_is_tensor(const MfTensor *step)
{
    return step && step->node;
}

MfStatus mf_train_exponential_decay(MfTensor *lr, MfTensor *step, double decay_steps,
                                    double decay_rate, bool staircase, MfTensor **out)
{
    *out = NULL;
    MfStatus st = check_decay(lr, step, decay_steps, decay_rate);
    if (st != MF_OK)
        return st;
    /* cast(step), steps, rate, p, floor(p), rate^p */
    MfTensor *t[6] = {NULL, mf_tensor_scalar(lr->dtype, decay_steps),
                      mf_tensor_scalar(lr->dtype, decay_rate)};
    st = t[1] && t[2] ? MF_OK : MF_ENOMEM;
    MfAttrs a = mf_attrs_default();
    a.dtype = lr->dtype;
    if (st == MF_OK)
        st = mf_op1(MF_OP_CAST, 1, &step, &a, &t[0]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_DIV, t[0], t[1], &t[3]);
    if (st == MF_OK && staircase)
        st = mf_unary(MF_OP_FLOOR, t[3], &t[4]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_POW, t[2], staircase ? t[4] : t[3], &t[5]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_MUL, lr, t[5], out);
    for (int i = 0; i < 6; i++)
        mf_tensor_release(t[i]);
    if (st != MF_OK)
        mf_err_prefix("exponential_decay");
    return st;
}
