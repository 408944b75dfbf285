/* optimizers.c — the five update rules. Each step of a variable is one
 * fused, in-place op of the table (core/ops/apply.c: ApplyGradientDescent,
 * ApplyMomentum, ApplyAdagrad, ApplyRMSProp, ApplyAdam, TensorFlow 1.x's
 * training kernels), run in the variable's dtype with the hyperparameters as
 * scalar tensors. Before the op runs, the variable and its slots are made
 * the sole owners of their buffers (copy-on-write), so tensors read from
 * them earlier keep their values. A step is prepared (mf_opt_prepare:
 * every allocation and check) before it is committed (mf_opt_commit: the
 * Apply op, which then allocates nothing), so that apply_gradients can
 * prepare all its variables before it writes the first one. With graph
 * Variable handles (train/graph_train.c) the same code adds the Apply node
 * instead. Adam's beta powers advance after every apply (ordinary ops,
 * then assign). */
#include <stddef.h>

#include "optimizer_impl.h"

/* ---- a scratch list of temporaries ------------------------------------------------ */

/* Temporaries of one update (MfOptScratch, optimizer_impl.h); the first
 * failure sticks in 'st' and later steps do nothing. 'done' releases them
 * all. */
typedef MfOptScratch Scratch;

static MfTensor *keep(Scratch *s, MfTensor *t)
{
    if (s->n == MF_OPT_SCRATCH_MAX) {
        mf_tensor_release(t);
        s->st = mf_err_set(MF_EINTERNAL, "apply_gradients: too many temporaries");
        return NULL;
    }
    s->t[s->n++] = t;
    return t;
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

static MfStatus done(Scratch *s)
{
    for (int i = 0; i < s->n; i++)
        mf_tensor_release(s->t[i]);
    s->n = 0;
    return s->st;
}

/* ---- the rules: one fused Apply op per variable ----------------------------------- */

/* Makes 'v' the only owner of a contiguous buffer, so that an Apply op may
 * write into it: a value someone else holds (a tensor the user read, a tape
 * record, a view) is copied first and the copy swapped in (copy-on-write);
 * the old tensor keeps its values. */
static void own(Scratch *s, MfVariable *v)
{
    MfTensor *x = v->value;
    if (s->st != MF_OK || x->node ||
        (x->refcount == 1 && x->storage->refcount == 1 && mf_tensor_is_contiguous(x)))
        return;
    MfTensor *copy = mf_tensor_clone(x);
    if (!copy) {
        s->st = MF_ENOMEM;
        return;
    }
    mf_tensor_release(v->value);
    v->value = copy;
}

/* The Apply op of each optimizer kind and its number of slots. */
static const MfOpId apply_op[] = {
    [MF_OPT_SGD] = MF_OP_APPLY_GRADIENT_DESCENT, [MF_OPT_MOMENTUM] = MF_OP_APPLY_MOMENTUM,
    [MF_OPT_ADAGRAD] = MF_OP_APPLY_ADAGRAD,      [MF_OPT_RMSPROP] = MF_OP_APPLY_RMSPROP,
    [MF_OPT_ADAM] = MF_OP_APPLY_ADAM,
};
_Static_assert(MF_COUNTOF(apply_op) == MF_OPT_NKINDS, "one Apply op per MfOptKind");

/* The inputs of the Apply op after var and the slots, in TensorFlow's
 * order; returns how many it wrote at 'in'. */
static int hyper_inputs(Scratch *s, const MfUpdate *u, MfDType dt, MfTensor **in)
{
    const MfOptConfig *c = &u->o->cfg;
    switch (c->kind) {
    case MF_OPT_SGD:
        in[0] = u->lr, in[1] = u->grad;
        return 2;
    case MF_OPT_MOMENTUM:
        in[0] = u->lr, in[1] = u->grad, in[2] = cst(s, dt, c->momentum);
        return 3;
    case MF_OPT_ADAGRAD:
        in[0] = u->lr, in[1] = u->grad;
        return 2;
    case MF_OPT_RMSPROP:
        in[0] = u->lr, in[1] = cst(s, dt, c->decay), in[2] = cst(s, dt, c->momentum);
        in[3] = cst(s, dt, c->epsilon), in[4] = u->grad;
        return 5;
    case MF_OPT_ADAM:
        in[0] = cast(s, u->o->beta_power[0]->value, dt);
        in[1] = cast(s, u->o->beta_power[1]->value, dt);
        in[2] = u->lr, in[3] = cst(s, dt, c->beta1), in[4] = cst(s, dt, c->beta2);
        in[5] = cst(s, dt, c->epsilon), in[6] = u->grad;
        return 7;
    }
    return 0;
}

/* A contiguous gradient (a copy of a strided one, kept in the scratch), so
 * that the Apply op itself allocates nothing. Symbolic: as it is. */
static MfTensor *contiguous_grad(Scratch *s, MfTensor *g)
{
    if (s->st != MF_OK || g->node || mf_tensor_is_contiguous(g))
        return s->st == MF_OK ? g : NULL;
    MfTensor *copy = mf_tensor_clone(g);
    if (!copy) {
        s->st = MF_ENOMEM;
        return NULL;
    }
    return keep(s, copy);
}

MfStatus mf_opt_prepare(const MfUpdate *u, MfPrepared *p)
{
    p->s.n = 0;
    p->s.st = MF_OK;
    Scratch *s = &p->s;
    const char *names[MF_OPT_MAX_SLOTS];
    int nslots = mf_opt_kind_slots(u->o->cfg.kind, names);
    MfDType dt = u->var->value->dtype;
    MfUpdate v = *u;
    v.grad = contiguous_grad(s, u->grad);
    own(s, u->var);
    for (int k = 0; k < nslots; k++)
        own(s, u->slot[k]);
    if (s->st != MF_OK)
        return s->st;
    /* read the values only now: 'own' may have swapped in copies */
    p->in[0] = u->var->value;
    for (int k = 0; k < nslots; k++)
        p->in[1 + k] = u->slot[k]->value;
    p->nin = 1 + nslots + hyper_inputs(s, &v, dt, p->in + 1 + nslots);
    p->op = apply_op[u->o->cfg.kind];
    p->attrs = mf_attrs_default();
    p->attrs.n = u->o->cfg.use_nesterov;
    p->attrs.nonfinite = (int)u->nonfinite;
    return s->st;
}

MfStatus mf_opt_commit(MfPrepared *p, MfTensor **out)
{
    MfTensor *r = NULL;
    MfStatus st = mf_op1(p->op, p->nin, p->in, &p->attrs, &r);
    if (out && st == MF_OK)
        *out = r;
    else
        mf_tensor_release(r);
    return st;
}

void mf_opt_prepared_free(MfPrepared *p)
{
    done(&p->s);
}

MfStatus mf_opt_update(const MfUpdate *u)
{
    MfPrepared p;
    MfStatus st = mf_opt_prepare(u, &p);
    if (st == MF_OK)
        st = mf_opt_commit(&p, u->out);
    mf_opt_prepared_free(&p);
    return st;
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

/* The graph of a pair of beta powers (NULL: eager). */
static const MfGraph *context_of(MfVariable *const pair[2])
{
    return mf_opt_graph_node(pair[0]) ? mf_tensor_graph(pair[0]->value) : NULL;
}

MfStatus mf_opt_adam_context(MfOptimizer *o, const MfGraph *g)
{
    if (!o->beta_power[0] || context_of(o->beta_power) == g)
        return MF_OK;
    int k = 0;
    while (k < o->naside && context_of(o->aside[k]) != g)
        k++;
    if (k == o->naside && o->naside == MF_OPT_MAX_ASIDE)
        return mf_err_set(MF_EARG, "apply_gradients: this %s trains in %d graphs already (at "
                          "most %d); make a new optimizer", mf_optimizer_class(o),
                          MF_OPT_MAX_ASIDE + 1, MF_OPT_MAX_ASIDE + 1);
    if (k == o->naside) {   /* a new context: no powers yet */
        o->aside[k][0] = o->aside[k][1] = NULL;
        o->naside++;
    }
    for (int i = 0; i < 2; i++) {
        MfVariable *t = o->aside[k][i];
        o->aside[k][i] = o->beta_power[i];
        o->beta_power[i] = t;
    }
    return MF_OK;
}

MfStatus mf_opt_adam_prepare(MfOptimizer *o, MfDType dt)
{
    static const char *const names[2] = {"beta1_power", "beta2_power"};
    const double init[2] = {o->cfg.beta1, o->cfg.beta2};
    MfStatus st = mf_opt_adam_context(o, NULL);
    if (st != MF_OK)
        return st;
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

MfStatus mf_opt_adam_next(const MfOptimizer *o, MfTensor *next[2])
{
    const double beta[2] = {o->cfg.beta1, o->cfg.beta2};
    next[0] = next[1] = NULL;
    MfStatus st = MF_OK;
    for (int i = 0; i < 2 && st == MF_OK; i++) {
        MfTensor *p = o->beta_power[i]->value;
        MfTensor *b = mf_tensor_scalar(p->dtype, beta[i]);
        st = b ? mf_binary(MF_OP_MUL, p, b, &next[i]) : MF_ENOMEM;
        mf_tensor_release(b);
    }
    if (st != MF_OK) {
        mf_tensor_release(next[0]);
        mf_tensor_release(next[1]);
        next[0] = next[1] = NULL;
    }
    return st;
}
