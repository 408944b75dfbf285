/* opt_classes.c — the optimizers as one table of descriptors (see
 * train.h, MfOptClass): each class's names, its learning rate's default,
 * its hyperparameters (names, defaults, accepted ranges, whether a tensor,
 * Variable or function given for them is read again at every apply), its
 * Apply op with the inputs it reads, its slots and their initial values,
 * and its non-slot state. The configuration's defaults, its checks,
 * print(opt)'s list, the Lua constructors (repl/lmf_train.c, one generic
 * binding), eager and graph training and the Saver all read it, so an
 * optimizer is declared once. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "optimizer_impl.h"

#define FIELD(f) .offset = offsetof(MfOptConfig, f)

static const MfOptHyper momentum_hypers[] = {
    {"momentum", FIELD(momentum), .positional = true, .per_apply = true, .hi = HUGE_VAL},
    {"use_nesterov", FIELD(use_nesterov), .is_bool = true},
};

static const MfOptHyper adagrad_hypers[] = {
    /* read once: the accumulators start from it */
    {"initial_accumulator_value", FIELD(initial_accumulator_value), .dflt = 0.1,
     .hi = HUGE_VAL, .lo_open = true},
};

static const MfOptHyper rmsprop_hypers[] = {
    {"decay", FIELD(decay), .per_apply = true, .dflt = 0.9, .hi = 1},
    {"momentum", FIELD(momentum), .per_apply = true, .hi = HUGE_VAL},
    {"epsilon", FIELD(epsilon), .per_apply = true, .dflt = 1e-10, .hi = HUGE_VAL},
};

static const char *const placements[] = {"tensorflow", "pytorch", NULL};

static const MfOptHyper adam_hypers[] = {
    {"beta1", FIELD(beta1), .per_apply = true, .dflt = 0.9, .hi = 1, .hi_open = true},
    {"beta2", FIELD(beta2), .per_apply = true, .dflt = 0.999, .hi = 1, .hi_open = true},
    {"epsilon", FIELD(epsilon), .per_apply = true, .dflt = 1e-8, .hi = HUGE_VAL},
    /* "pytorch": epsilon added to the bias-corrected square root (torch.optim.Adam,
     * AdamW; the paper's Algorithm 1) rather than TensorFlow's epsilon hat */
    {"epsilon_placement", FIELD(epsilon_pytorch), .is_bool = true, .choices = placements},
};

/* Keras 3's names and defaults (beta_1, beta_2 spelled as Adam's here) */
static const MfOptHyper lion_hypers[] = {
    {"beta1", FIELD(beta1), .per_apply = true, .dflt = 0.9, .hi = 1, .hi_open = true},
    {"beta2", FIELD(beta2), .per_apply = true, .dflt = 0.99, .hi = 1, .hi_open = true},
    {"weight_decay", FIELD(weight_decay), .per_apply = true, .hi = HUGE_VAL},
};

#define HYPERS(a) (int)(sizeof a / sizeof a[0]), a

/* NaN marks "no default" (a double, so -Wdouble-promotion holds under clang). */
#define NO_DEFAULT ((double)NAN)

#define LR {MF_OPT_IN_LR, 0}
#define GRAD {MF_OPT_IN_GRAD, 0}
#define HYPER(i) {MF_OPT_IN_HYPER, i}
#define POWER(i) {MF_OPT_IN_POWER, i}
#define EPSILON(i) {MF_OPT_IN_EPSILON, i}
#define ZEROS(name) {name, 0, -1}

/* TensorFlow 1.x's: only Adam's learning rate has a default (0.001); Lion's
 * is Keras 3's. The Apply ops' inputs are in TensorFlow's order
 * (core/ops/apply.c). */
static const MfOptClass classes[] = {
    [MF_OPT_SGD] = {"GradientDescentOptimizer", "GradientDescent", NO_DEFAULT, 0, NULL,
                    MF_OP_APPLY_GRADIENT_DESCENT, 0, {{0}}, 0, {{0}}, 2, {LR, GRAD}, -1, -1},
    [MF_OPT_MOMENTUM] = {"MomentumOptimizer", "Momentum", NO_DEFAULT, HYPERS(momentum_hypers),
                         MF_OP_APPLY_MOMENTUM, 1, {ZEROS("momentum")}, 0, {{0}},
                         3, {LR, GRAD, HYPER(0)}, 1, -1},
    [MF_OPT_ADAGRAD] = {"AdagradOptimizer", "Adagrad", NO_DEFAULT, HYPERS(adagrad_hypers),
                        MF_OP_APPLY_ADAGRAD, 1, {{"accumulator", 0, 0}}, 0, {{0}},
                        2, {LR, GRAD}, -1, -1},
    [MF_OPT_RMSPROP] = {"RMSPropOptimizer", "RMSProp", NO_DEFAULT, HYPERS(rmsprop_hypers),
                        MF_OP_APPLY_RMSPROP, 2, {{"rms", 1, -1}, ZEROS("momentum")}, 0, {{0}},
                        5, {LR, HYPER(0), HYPER(1), HYPER(2), GRAD}, -1, -1},
    [MF_OPT_ADAM] = {"AdamOptimizer", "Adam", 0.001, HYPERS(adam_hypers), MF_OP_APPLY_ADAM,
                     2, {ZEROS("m"), ZEROS("v")},
                     2, {{"beta1_power", 0}, {"beta2_power", 1}},
                     7, {POWER(0), POWER(1), LR, HYPER(0), HYPER(1), EPSILON(2), GRAD}, -1, 3},
    [MF_OPT_LION] = {"LionOptimizer", "Lion", 0.001, HYPERS(lion_hypers), MF_OP_APPLY_LION,
                     1, {ZEROS("m")}, 0, {{0}}, 5, {LR, HYPER(0), HYPER(1), HYPER(2), GRAD},
                     -1, -1},
};
_Static_assert(MF_COUNTOF(classes) == MF_OPT_NKINDS, "one class per MfOptKind");
_Static_assert(MF_COUNTOF(momentum_hypers) <= MF_OPT_MAX_HYPERS &&
               MF_COUNTOF(rmsprop_hypers) <= MF_OPT_MAX_HYPERS &&
               MF_COUNTOF(adam_hypers) <= MF_OPT_MAX_HYPERS &&
               MF_COUNTOF(lion_hypers) <= MF_OPT_MAX_HYPERS, "MF_OPT_MAX_HYPERS holds them");

const MfOptClass *mf_opt_class(MfOptKind kind)
{
    return (unsigned)kind < MF_OPT_NKINDS ? &classes[kind] : NULL;
}

int mf_opt_kind_slots(MfOptKind kind, const char *names[MF_OPT_MAX_SLOTS])
{
    const MfOptClass *k = mf_opt_class(kind);
    int n = k ? k->nslots : 0;
    for (int i = 0; i < MF_OPT_MAX_SLOTS; i++)
        names[i] = i < n ? k->slots[i].name : NULL;
    return n;
}

double mf_opt_slot_init(const MfOptConfig *cfg, int k)
{
    const MfOptSlot *s = &mf_opt_class(cfg->kind)->slots[k];
    return s->hyper >= 0 ? mf_opt_hyper_get(cfg, &mf_opt_class(cfg->kind)->hypers[s->hyper])
                         : s->init;
}

const char *mf_opt_kind_class(MfOptKind kind)
{
    return (unsigned)kind < MF_OPT_NKINDS ? classes[kind].class_name : "Optimizer";
}

double mf_opt_hyper_get(const MfOptConfig *c, const MfOptHyper *h)
{
    const char *field = (const char *)c + h->offset;
    return h->is_bool ? (double)*(const bool *)(const void *)field
                      : *(const double *)(const void *)field;
}

void mf_opt_hyper_set(MfOptConfig *c, const MfOptHyper *h, double v)
{
    char *field = (char *)c + h->offset;
    if (h->is_bool)
        *(bool *)(void *)field = v != 0;
    else
        *(double *)(void *)field = v;
}

MfOptConfig mf_opt_config_default(MfOptKind kind, double lr)
{
    MfOptConfig c = {.kind = kind, .lr = lr};
    const MfOptClass *k = mf_opt_class(kind);
    for (int i = 0; k && i < k->nhypers; i++)
        mf_opt_hyper_set(&c, &k->hypers[i], k->hypers[i].dflt);
    return c;
}

const MfOptHyper *mf_opt_find_hyper(MfOptKind kind, const char *name)
{
    const MfOptClass *k = mf_opt_class(kind);
    for (int i = 0; k && i < k->nhypers; i++)
        if (strcmp(k->hypers[i].name, name) == 0)
            return &k->hypers[i];
    return NULL;
}

/* ---- checks ------------------------------------------------------------------------ */

static MfStatus check_hyper(const char *who, const MfOptHyper *h, double v)
{
    if ((h->lo_open ? v > h->lo : v >= h->lo) && (h->hi_open ? v < h->hi : v <= h->hi))
        return MF_OK;
    if (h->lo_open)   /* only (lo, inf] ranges are open below */
        return mf_err_set(MF_EARG, "%s: %s must be > %g, got %g", who, h->name, h->lo, v);
    return mf_err_set(MF_EARG, "%s: %s must be in [%g, %g%s, got %g", who, h->name, h->lo, h->hi,
                      h->hi_open ? ")" : "]", v);
}

static MfStatus check_lr(const char *who, const MfOptConfig *c)
{
    if (c->lr_tensor || c->lr_var) {
        const MfTensor *t = c->lr_var ? c->lr_var->value : c->lr_tensor;
        if (t && (mf_tensor_numel(t) != 1 || t->rank != 0 || t->dtype == MF_BOOL))
            return mf_err_set(MF_EARG, "%s: learning_rate must be a scalar number, got a %s "
                              "tensor of rank %d", who, mf_dtype_name(t->dtype), t->rank);
        return MF_OK;
    }
    if (!(c->lr > 0) || !isfinite(c->lr))
        return mf_err_set(MF_EARG, "%s: learning_rate must be > 0, got %g", who, c->lr);
    return MF_OK;
}

static MfStatus check_name(const char *who, const char *name)
{
    if (name && (!*name || strchr(name, ':') || strchr(name, '/')))
        return mf_err_set(MF_EARG, "%s: invalid name '%s' (expected a non-empty name without "
                          "':' or '/')", who, name);
    return MF_OK;
}

MfStatus mf_opt_check_config(const MfOptConfig *c)
{
    const MfOptClass *k = mf_opt_class(c->kind);
    if (!k)
        return mf_err_set(MF_EARG, "optimizer: unknown kind %d", (int)c->kind);
    MfStatus st = check_name(k->class_name, c->name);
    if (st == MF_OK)
        st = check_lr(k->class_name, c);
    for (int i = 0; st == MF_OK && i < k->nhypers; i++) {
        const MfOptHyper *h = &k->hypers[i];
        if (!h->is_bool)
            st = check_hyper(k->class_name, h, mf_opt_hyper_get(c, h));
    }
    return st;
}

void mf_opt_describe_hypers(const MfOptConfig *c, MfStrBuf *out)
{
    const MfOptClass *k = mf_opt_class(c->kind);
    for (int i = 0; k && i < k->nhypers; i++) {
        const MfOptHyper *h = &k->hypers[i];
        bool on = mf_opt_hyper_get(c, h) != 0;
        if (h->choices)
            mf_strbuf_addf(out, ", %s=%s", h->name, h->choices[on]);
        else if (h->is_bool)
            mf_strbuf_addf(out, ", %s=%s", h->name, on ? "true" : "false");
        else
            mf_strbuf_addf(out, ", %s=%g", h->name, mf_opt_hyper_get(c, h));
    }
}

/* ---- the constructor's arguments --------------------------------------------------- */

int mf_opt_option_names(MfOptKind kind, const char *names[MF_OPT_MAX_OPTIONS + 1])
{
    const MfOptClass *k = mf_opt_class(kind);
    int n = 0, npos = 0;
    for (int i = 0; k && i < k->nhypers; i++) {
        if (k->hypers[i].positional)
            npos++;
        else
            names[n++] = k->hypers[i].name;
    }
    names[n++] = "name";
    names[n] = NULL;
    return npos;
}

/* "MomentumOptimizer(learning_rate, momentum [, {use_nesterov}])" into 'buf'. */
static void signature(const MfOptClass *k, char *buf, size_t cap)
{
    size_t len = (size_t)snprintf(buf, cap, "%s(learning_rate", k->class_name);
    for (int i = 0; i < k->nhypers && len < cap; i++)
        if (k->hypers[i].positional)
            len += (size_t)snprintf(buf + len, cap - len, ", %s", k->hypers[i].name);
    const char *sep = " [, {";
    for (int i = 0; i < k->nhypers && len < cap; i++)
        if (!k->hypers[i].positional) {
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", sep, k->hypers[i].name);
            sep = ", ";
        }
    if (len < cap)
        snprintf(buf + len, cap - len, "%s)", sep[0] == ',' ? "}]" : "");
}

MfStatus mf_opt_missing(MfOptKind kind, const char *name)
{
    const MfOptClass *k = mf_opt_class(kind);
    if (strcmp(name, "learning_rate") == 0)
        return mf_err_set(MF_EARG, "%s: learning_rate is required (TensorFlow 1.x gives it no "
                          "default; e.g. %s(0.01))", k->class_name, k->class_name);
    char sig[160];
    signature(k, sig, sizeof sig);
    return mf_err_set(MF_EARG, "%s: %s is required (TensorFlow 1.x gives it no default)", sig,
                      name);
}

MfStatus mf_opt_hyper_from_tensor(const char *who, const char *key, const MfTensor *t,
                                  double *out)
{
    if (!t->storage)
        return mf_err_set(MF_EARG, "%s: %s is a graph tensor; moonflow reads hyperparameters "
                          "other than the learning rate as values (a number, a concrete tensor "
                          "or eager Variable, or a function)", who, key);
    if (mf_tensor_numel(t) != 1 || t->dtype == MF_BOOL)
        return mf_err_set(MF_EARG, "%s: %s must be a scalar number, got a %s tensor of rank %d",
                          who, key, mf_dtype_name(t->dtype), t->rank);
    *out = mf_tensor_get(t, 0);
    return MF_OK;
}
