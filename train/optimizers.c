/* optimizers.c — the five update rules, TensorFlow 1.x's training kernels
 * (training_ops.cc) written with ops through the dispatcher, in the
 * variable's dtype:
 *   GradientDescent  var -= lr * g
 *   Momentum         accum = accum * momentum + g;  var -= lr * accum
 *                    (nesterov: var -= g * lr + accum * momentum * lr)
 *   Adagrad          accum += g^2;  var -= g * lr * rsqrt(accum)
 *   RMSProp          ms += (g^2 - ms) * (1 - decay);
 *                    mom = mom * momentum + g * lr / sqrt(ms + epsilon);  var -= mom
 *   Adam             lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power);
 *                    m += (g - m) * (1 - beta1);  v += (g^2 - v) * (1 - beta2);
 *                    var -= m * lr_t / (sqrt(v) + epsilon)
 * Every new value is computed first, then the slots and the variable are
 * assigned (so a failing op leaves them all unchanged). */
#include <stddef.h>

#include "optimizer_impl.h"

/* ---- a scratch list of temporaries ------------------------------------------------ */

#define SCRATCH_MAX 24

/* Temporaries of one update; the first failure sticks in 'st' and later
 * steps do nothing. 'done' releases them all. */
typedef struct Scratch {
    MfTensor *t[SCRATCH_MAX];
    int n;
    MfStatus st;
} Scratch;

static MfTensor *keep(Scratch *s, MfTensor *t)
{
    if (s->n == SCRATCH_MAX) {
        mf_tensor_release(t);
        s->st = mf_err_set(MF_EINTERNAL, "apply_gradients: too many temporaries");
        return NULL;
    }
    s->t[s->n++] = t;
    return t;
}

static MfTensor *bin(Scratch *s, MfOpId op, MfTensor *a, MfTensor *b)
{
    MfTensor *out = NULL;
    if (s->st == MF_OK)
        s->st = mf_binary(op, a, b, &out);
    return s->st == MF_OK ? keep(s, out) : NULL;
}

static MfTensor *un(Scratch *s, MfOpId op, MfTensor *a)
{
    MfTensor *out = NULL;
    if (s->st == MF_OK)
        s->st = mf_unary(op, a, &out);
    return s->st == MF_OK ? keep(s, out) : NULL;
}

static MfTensor *cst(Scratch *s, MfDType dt, double v)
{
    if (s->st != MF_OK)
        return NULL;
    MfTensor *t = mf_tensor_scalar(dt, v);
    if (!t) {
        s->st = MF_ENOMEM;
        return NULL;
    }
    return keep(s, t);
}

/* 'x' in dtype 'dt' (itself when it already is). */
static MfTensor *cast(Scratch *s, MfTensor *x, MfDType dt)
{
    if (s->st != MF_OK || x->dtype == dt)
        return s->st == MF_OK ? x : NULL;
    MfAttrs a = mf_attrs_default();
    a.dtype = dt;
    MfTensor *out = NULL;
    s->st = mf_op1(MF_OP_CAST, 1, &x, &a, &out);
    return s->st == MF_OK ? keep(s, out) : NULL;
}

static void assign(Scratch *s, MfVariable *v, MfTensor *x)
{
    if (s->st == MF_OK)
        s->st = mf_variable_assign(v, x);
}

static MfStatus done(Scratch *s)
{
    for (int i = 0; i < s->n; i++)
        mf_tensor_release(s->t[i]);
    s->n = 0;
    return s->st;
}

/* ---- the rules ---------------------------------------------------------------------- */

static MfTensor *val(MfVariable *v)
{
    return v->value;
}

static void sgd(Scratch *s, const MfUpdate *u)
{
    MfTensor *step = bin(s, MF_OP_MUL, u->lr, u->grad);
    assign(s, u->var, bin(s, MF_OP_SUB, val(u->var), step));
}

static void momentum(Scratch *s, const MfUpdate *u)
{
    const MfOptConfig *c = &u->o->cfg;
    MfDType dt = u->var->value->dtype;
    MfTensor *mom = cst(s, dt, c->momentum);
    MfTensor *accum = bin(s, MF_OP_ADD, bin(s, MF_OP_MUL, val(u->slot[0]), mom), u->grad);
    MfTensor *step;
    if (c->use_nesterov) {
        MfTensor *a = bin(s, MF_OP_MUL, u->grad, u->lr);
        MfTensor *b = bin(s, MF_OP_MUL, bin(s, MF_OP_MUL, accum, mom), u->lr);
        step = bin(s, MF_OP_ADD, a, b);
    } else {
        step = bin(s, MF_OP_MUL, u->lr, accum);
    }
    MfTensor *var = bin(s, MF_OP_SUB, val(u->var), step);
    assign(s, u->slot[0], accum);
    assign(s, u->var, var);
}

static void adagrad(Scratch *s, const MfUpdate *u)
{
    MfTensor *accum = bin(s, MF_OP_ADD, val(u->slot[0]), bin(s, MF_OP_MUL, u->grad, u->grad));
    MfTensor *step = bin(s, MF_OP_MUL, bin(s, MF_OP_MUL, u->grad, u->lr),
                         un(s, MF_OP_RSQRT, accum));
    MfTensor *var = bin(s, MF_OP_SUB, val(u->var), step);
    assign(s, u->slot[0], accum);
    assign(s, u->var, var);
}

static void rmsprop(Scratch *s, const MfUpdate *u)
{
    const MfOptConfig *c = &u->o->cfg;
    MfDType dt = u->var->value->dtype;
    MfTensor *g2 = bin(s, MF_OP_MUL, u->grad, u->grad);
    MfTensor *ms_step = bin(s, MF_OP_MUL, bin(s, MF_OP_SUB, g2, val(u->slot[0])),
                            cst(s, dt, 1 - c->decay));
    MfTensor *ms = bin(s, MF_OP_ADD, val(u->slot[0]), ms_step);
    MfTensor *denom = un(s, MF_OP_SQRT, bin(s, MF_OP_ADD, ms, cst(s, dt, c->epsilon)));
    MfTensor *scaled = bin(s, MF_OP_DIV, bin(s, MF_OP_MUL, u->grad, u->lr), denom);
    MfTensor *mom = bin(s, MF_OP_ADD, bin(s, MF_OP_MUL, val(u->slot[1]),
                                           cst(s, dt, c->momentum)), scaled);
    MfTensor *var = bin(s, MF_OP_SUB, val(u->var), mom);
    assign(s, u->slot[0], ms);
    assign(s, u->slot[1], mom);
    assign(s, u->var, var);
}

/* lr * sqrt(1 - beta2_power) / (1 - beta1_power), in dtype 'dt'. */
static MfTensor *adam_lr(Scratch *s, const MfUpdate *u, MfDType dt)
{
    MfTensor *one = cst(s, dt, 1);
    if (s->st != MF_OK)
        return NULL;
    MfTensor *b1p = cast(s, u->o->beta_power[0]->value, dt);
    MfTensor *b2p = cast(s, u->o->beta_power[1]->value, dt);
    MfTensor *num = bin(s, MF_OP_MUL, u->lr, un(s, MF_OP_SQRT, bin(s, MF_OP_SUB, one, b2p)));
    return bin(s, MF_OP_DIV, num, bin(s, MF_OP_SUB, one, b1p));
}

static void adam(Scratch *s, const MfUpdate *u)
{
    const MfOptConfig *c = &u->o->cfg;
    MfDType dt = u->var->value->dtype;
    MfTensor *lr_t = adam_lr(s, u, dt);
    MfTensor *m_step = bin(s, MF_OP_MUL, bin(s, MF_OP_SUB, u->grad, val(u->slot[0])),
                           cst(s, dt, 1 - c->beta1));
    MfTensor *m = bin(s, MF_OP_ADD, val(u->slot[0]), m_step);
    MfTensor *g2 = bin(s, MF_OP_MUL, u->grad, u->grad);
    MfTensor *v_step = bin(s, MF_OP_MUL, bin(s, MF_OP_SUB, g2, val(u->slot[1])),
                           cst(s, dt, 1 - c->beta2));
    MfTensor *v = bin(s, MF_OP_ADD, val(u->slot[1]), v_step);
    MfTensor *denom = bin(s, MF_OP_ADD, un(s, MF_OP_SQRT, v), cst(s, dt, c->epsilon));
    MfTensor *step = bin(s, MF_OP_DIV, bin(s, MF_OP_MUL, m, lr_t), denom);
    MfTensor *var = bin(s, MF_OP_SUB, val(u->var), step);
    assign(s, u->slot[0], m);
    assign(s, u->slot[1], v);
    assign(s, u->var, var);
}

MfStatus mf_opt_update(const MfUpdate *u)
{
    Scratch s = {.n = 0, .st = MF_OK};
    switch (u->o->cfg.kind) {
    case MF_OPT_SGD: sgd(&s, u); break;
    case MF_OPT_MOMENTUM: momentum(&s, u); break;
    case MF_OPT_ADAGRAD: adagrad(&s, u); break;
    case MF_OPT_RMSPROP: rmsprop(&s, u); break;
    case MF_OPT_ADAM: adam(&s, u); break;
    }
    return done(&s);
}

/* ---- slots and Adam's powers -------------------------------------------------------- */

int mf_opt_kind_slots(MfOptKind kind, const char *names[MF_OPT_MAX_SLOTS])
{
    names[0] = names[1] = NULL;
    switch (kind) {
    case MF_OPT_SGD: return 0;
    case MF_OPT_MOMENTUM: names[0] = "momentum"; return 1;
    case MF_OPT_ADAGRAD: names[0] = "accumulator"; return 1;
    case MF_OPT_RMSPROP: names[0] = "rms"; names[1] = "momentum"; return 2;
    case MF_OPT_ADAM: names[0] = "m"; names[1] = "v"; return 2;
    }
    return 0;
}

double mf_opt_slot_init(const MfOptConfig *cfg, int k)
{
    if (cfg->kind == MF_OPT_ADAGRAD)
        return cfg->initial_accumulator_value;
    if (cfg->kind == MF_OPT_RMSPROP && k == 0)
        return 1.0;
    return 0.0;
}

MfStatus mf_opt_adam_prepare(MfOptimizer *o, MfDType dt)
{
    static const char *const names[2] = {"beta1_power", "beta2_power"};
    const double init[2] = {o->cfg.beta1, o->cfg.beta2};
    for (int i = 0; i < 2; i++) {
        if (o->beta_power[i])
            continue;
        MfTensor *t = mf_tensor_scalar(dt, init[i]);
        if (!t)
            return MF_ENOMEM;
        o->beta_power[i] = mf_variable_new(t, names[i], false);
        mf_tensor_release(t);
        if (!o->beta_power[i])
            return MF_ENOMEM;
    }
    return MF_OK;
}

MfStatus mf_opt_adam_finish(MfOptimizer *o)
{
    const double beta[2] = {o->cfg.beta1, o->cfg.beta2};
    Scratch s = {.n = 0, .st = MF_OK};
    MfTensor *next[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        MfTensor *p = o->beta_power[i]->value;
        next[i] = bin(&s, MF_OP_MUL, p, cst(&s, p->dtype, beta[i]));
    }
    for (int i = 0; i < 2; i++)
        assign(&s, o->beta_power[i], next[i]);
    return done(&s);
}
