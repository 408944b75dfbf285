/* optimizer.c — the optimizer object (see train.h): construction, print,
 * slots made on first apply, the descriptor's non-slot state per context,
 * what every step shares (the rate's casts, the nonfinite policy, the
 * pairs). It calls only opt_classes.c; the update
 * of one variable is optimizers.c's, the steps eager_step.c's and
 * graph_train.c's. */
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

MfStatus mf_optimizer_set_hyper_tensor(MfOptimizer *o, const char *name, MfTensor *t)
{
    const MfOptClass *d = mf_opt_desc(o);
    const MfOptHyper *h = mf_opt_find_hyper(o->cfg.kind, name);
    if (!h || h->is_bool || !h->per_apply)
        return mf_err_set(MF_EARG, "%s: %s cannot be a graph tensor (a hyperparameter read at "
                          "every apply can)", mf_optimizer_class(o), name);
    if (t && (t->rank != 0 || t->dtype == MF_BOOL))
        return mf_err_set(MF_EARG, "%s: %s must be a scalar number, got a %s tensor of rank %d",
                          mf_optimizer_class(o), name, mf_dtype_name(t->dtype), t->rank);
    int i = (int)(h - d->hypers);
    mf_tensor_retain(t);
    mf_tensor_release(o->hyper_tensor[i]);
    o->hyper_tensor[i] = t;
    return MF_OK;
}

MfTensor *mf_opt_hyper_tensor(const MfOptimizer *o, int i)
{
    return o->hyper_tensor[i];
}

MfStatus mf_opt_check_hyper_tensors(const MfOptimizer *o, const MfGraph *g, const char *who)
{
    const MfOptClass *d = mf_opt_desc(o);
    for (int i = 0; i < d->nhypers; i++) {
        const MfTensor *t = o->hyper_tensor[i];
        if (t && !g)
            return mf_err_set(MF_EARG, "%s: %s is a graph tensor, which has no value in an "
                              "eager step; give a number, an eager tensor or Variable, or a "
                              "function, or apply inside mf.trace or in a graph", who,
                              d->hypers[i].name);
        if (t && mf_tensor_graph(t) != g)
            return mf_err_set(MF_EARG, "%s: %s is a tensor of another graph than the variables'",
                              who, d->hypers[i].name);
    }
    return MF_OK;
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
    for (int i = 0; i < MF_OPT_MAX_POWERS; i++) {
        mf_variable_release(o->power[i]);
        for (int k = 0; k < o->naside; k++)
            mf_variable_release(o->aside[k][i]);
    }
    for (int i = 0; i < MF_OPT_MAX_HYPERS; i++)
        mf_tensor_release(o->hyper_tensor[i]);
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

const MfOptClass *mf_opt_desc(const MfOptimizer *o)
{
    return mf_opt_class(o->cfg.kind);
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
    const char *names[MF_OPT_MAX_SLOTS];
    int n = mf_optimizer_slot_names(o, names);
    mf_strbuf_addf(out, ") name=\"%s\", slots: %s", c->name, n ? names[0] : "none");
    for (int k = 1; k < n; k++)
        mf_strbuf_addf(out, ", %s", names[k]);
    if (n)
        mf_strbuf_addf(out, " (for %d variables)", mf_optimizer_nvars(o));
    mf_c_locale_end(loc);
    return mf_strbuf_status(out, "tostring");
}

/* ---- slots ------------------------------------------------------------------------- */

int mf_optimizer_slot_names(const MfOptimizer *o, const char *names[MF_OPT_MAX_SLOTS])
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
    const char *names[MF_OPT_MAX_SLOTS];
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
    const MfOptClass *d = mf_opt_desc(o);
    for (int i = 0; i < d->npowers; i++)
        if (strcmp(name, d->powers[i].name) == 0)
            return o->power[i];
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
    for (int j = 0; j < MF_OPT_MAX_POWERS; j++)   /* the current powers, then those aside */
        n = add_here(o->power[j], out, cap, n);
    for (int c = 0; c < o->naside; c++)
        for (int j = 0; j < MF_OPT_MAX_POWERS; j++)
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

MfStatus mf_opt_new_entry(MfOptimizer *o, MfVariable *var, MfSlotEntry **out)
{
    MfVariable *slots[MF_OPT_MAX_SLOTS] = {NULL, NULL};
    const char *names[MF_OPT_MAX_SLOTS];
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
    MfStatus st = mf_opt_find_entry(o, var) ? MF_OK : mf_opt_new_entry(o, var, &e);
    if (st == MF_OK)
        st = mf_opt_powers_prepare(o, var->value->dtype);
    return st;
}

/* ---- the non-slot state, per context --------------------------------------------------- */

/* The graph of a set of powers (NULL: eager). */
static const MfGraph *context_of(MfVariable *const set[MF_OPT_MAX_POWERS])
{
    return mf_opt_graph_node(set[0]) ? mf_tensor_graph(set[0]->value) : NULL;
}

MfStatus mf_opt_powers_context(MfOptimizer *o, const MfGraph *g)
{
    if (!o->power[0] || context_of(o->power) == g)
        return MF_OK;
    int k = 0;
    while (k < o->naside && context_of(o->aside[k]) != g)
        k++;
    if (k == o->naside && o->naside == MF_OPT_MAX_ASIDE)
        return mf_err_set(MF_EARG, "apply_gradients: this %s trains in %d graphs already (at "
                          "most %d); make a new optimizer", mf_optimizer_class(o),
                          MF_OPT_MAX_ASIDE + 1, MF_OPT_MAX_ASIDE + 1);
    if (k == o->naside) {   /* a new context: no powers yet */
        for (int i = 0; i < MF_OPT_MAX_POWERS; i++)
            o->aside[k][i] = NULL;
        o->naside++;
    }
    for (int i = 0; i < MF_OPT_MAX_POWERS; i++) {
        MfVariable *t = o->aside[k][i];
        o->aside[k][i] = o->power[i];
        o->power[i] = t;
    }
    return MF_OK;
}

MfStatus mf_opt_powers_prepare(MfOptimizer *o, MfDType dt)
{
    const MfOptClass *d = mf_opt_desc(o);
    if (d->npowers == 0)
        return MF_OK;
    MfStatus st = mf_opt_powers_context(o, NULL);
    for (int i = 0; i < d->npowers && st == MF_OK; i++) {
        if (o->power[i])
            continue;
        MfTensor *t = mf_tensor_scalar(dt, mf_opt_hyper_get(&o->cfg,
                                                            &d->hypers[d->powers[i].hyper]));
        o->power[i] = t ? mf_variable_new(t, d->powers[i].name, false) : NULL;
        mf_tensor_release(t);
        if (!o->power[i])
            st = MF_ENOMEM;
    }
    return st;
}

/* ---- what every step shares ------------------------------------------------------ */

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

/* One apply's rate: cast to each variable dtype once. */
MfStatus mf_opt_lr_for(MfOptRates *r, MfDType dt, MfTensor **out)
{
    MfStatus st = r->as[dt] ? MF_OK : mf_opt_lr_as(r->lr, dt, &r->as[dt]);
    *out = r->as[dt];
    return st;
}

void mf_opt_rates_free(MfOptRates *r)
{
    mf_tensor_release(r->lr);
    for (int i = 0; i < MF_NDTYPES; i++)
        mf_tensor_release(r->as[i]);
    *r = (MfOptRates){0};
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

/* A failed step leaves the optimizer as it found it: the slots and beta
 * powers this step made are dropped again. */
void mf_opt_forget_new(MfOptimizer *o, int nentries, bool had_powers)
{
    while (o->nentries > nentries) {
        MfSlotEntry *e = &o->entries[--o->nentries];
        mf_variable_release(e->var);
        for (int k = 0; k < MF_OPT_MAX_SLOTS; k++)
            mf_variable_release(e->slot[k]);
        memset(e, 0, sizeof *e);
    }
    for (int i = 0; i < MF_OPT_MAX_POWERS && !had_powers; i++) {
        mf_variable_release(o->power[i]);
        o->power[i] = NULL;
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
        mf_tensor_release(pairs[i].decay);
    }
    mf_dealloc(pairs, (size_t)(n ? n : 1) * sizeof *pairs);
}
