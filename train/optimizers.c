/* optimizers.c — one variable's update, as its optimizer's descriptor
 * (opt_classes.c) says: each step of a variable is one fused, in-place op
 * of the table (core/ops/apply.c: ApplyGradientDescent, ApplyMomentum,
 * ApplyAdagrad, ApplyRMSProp, ApplyAdam, ApplyLion), run in the variable's
 * dtype with the inputs the descriptor lists as scalar tensors. Before the
 * op runs, the variable and its slots are made the sole owners of their
 * buffers (copy-on-write), so tensors read from them earlier keep their
 * values. A step is prepared (mf_opt_prepare: every allocation and check)
 * before it is committed (mf_opt_commit: the Apply op, which then
 * allocates nothing), so that apply_gradients can prepare all its
 * variables before it writes the first one. With graph Variable handles
 * (train/graph_train.c) the same code adds the Apply node instead. The
 * non-slot state (Adam's beta powers) advances after every apply
 * (ordinary ops, then assign). Calls optimizer.c and opt_classes.c only. */
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

/* Hyperparameter 'i' as a scalar of 'dt': a graph's input, or the number. */
static MfTensor *hyper_input(Scratch *s, const MfOptimizer *o, int i, MfDType dt)
{
    if (mf_opt_hyper_tensor(o, i))
        return cast(s, mf_opt_hyper_tensor(o, i), dt);
    return cst(s, dt, mf_opt_hyper_get(&o->cfg, &mf_opt_desc(o)->hypers[i]));
}

/* 'a' op 'b' (a binary op) or op 'a' (b NULL), kept in the scratch. */
static MfTensor *op(Scratch *s, MfOpId id, MfTensor *a, MfTensor *b)
{
    if (s->st != MF_OK || !a)
        return NULL;
    MfTensor *out = NULL;
    s->st = b ? mf_binary(id, a, b, &out) : mf_unary(id, a, &out);
    return s->st == MF_OK ? keep(s, out) : NULL;
}

/* Adam's epsilon input (MF_OPT_IN_EPSILON). PyTorch's step,
 * lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps), is TensorFlow's,
 * lr*sqrt(1-b2^t)/(1-b1^t) * m / (sqrt(v) + eps'), with
 * eps' = eps * sqrt(1 - b2^t): made with ops from beta2_power, so eager,
 * graph and traced steps compute it alike and ApplyAdam stays one kernel. */
static MfTensor *epsilon_input(Scratch *s, const MfOptimizer *o, int i, MfDType dt)
{
    const MfOptClass *d = mf_opt_desc(o);
    MfTensor *eps = hyper_input(s, o, i, dt);
    if (d->placement < 0 || mf_opt_hyper_get(&o->cfg, &d->hypers[d->placement]) == 0)
        return eps;
    MfTensor *rest = op(s, MF_OP_SUB, cst(s, dt, 1.0), cast(s, o->power[1]->value, dt));
    return op(s, MF_OP_MUL, eps, op(s, MF_OP_SQRT, rest, NULL));
}

/* The inputs of the Apply op after var and the slots, as the descriptor
 * lists them; returns how many it wrote at 'in'. */
static int hyper_inputs(Scratch *s, const MfUpdate *u, MfDType dt, MfTensor **in)
{
    const MfOptClass *d = mf_opt_desc(u->o);
    for (int i = 0; i < d->ninputs; i++) {
        const MfOptInput *x = &d->inputs[i];
        if (x->kind == MF_OPT_IN_LR)
            in[i] = u->lr;
        else if (x->kind == MF_OPT_IN_GRAD)
            in[i] = u->grad;
        else if (x->kind == MF_OPT_IN_HYPER)
            in[i] = hyper_input(s, u->o, x->index, dt);
        else if (x->kind == MF_OPT_IN_EPSILON)
            in[i] = epsilon_input(s, u->o, x->index, dt);
        else
            in[i] = cast(s, u->o->power[x->index]->value, dt);
    }
    return d->ninputs;
}

/* The decoupled weight decay of one pair as ApplyAdam's 11th input, a scalar
 * of 'dt'; MF_EARG for an optimizer whose Apply op takes none. */
static MfTensor *decay_input(Scratch *s, const MfOptClass *d, MfTensor *decay, MfDType dt)
{
    if (d->apply != MF_OP_APPLY_ADAM) {
        s->st = mf_err_set(MF_EARG, "apply_gradients: a weight decay (a pair's third element) "
                           "is AdamOptimizer's (AdamW), not %s's", d->class_name);
        return NULL;
    }
    if (decay->rank != 0 || !mf_dtype_is_float(decay->dtype)) {
        char shape[96];
        mf_shape_str(decay->rank, decay->shape, shape, sizeof shape);
        s->st = mf_err_set(MF_EARG, "apply_gradients: a weight decay must be a float scalar, "
                           "got %s of shape %s", mf_dtype_name(decay->dtype), shape);
        return NULL;
    }
    return cast(s, decay, dt);
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
    const MfOptClass *d = mf_opt_desc(u->o);
    if (u->decay && s->st == MF_OK)
        p->in[p->nin++] = decay_input(s, d, u->decay, dt);
    if (u->grad_scale && s->st == MF_OK)   /* graph_train.c: ApplyAdam's, of dtype dt */
        p->in[p->nin++] = u->grad_scale;
    p->op = d->apply;
    p->attrs = mf_attrs_default();
    p->attrs.grad_scaled = u->grad_scale != NULL;
    p->attrs.gated = u->gated;
    p->attrs.use_nesterov =
        d->nesterov >= 0 && mf_opt_hyper_get(&u->o->cfg, &d->hypers[d->nesterov]) != 0;
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

/* ---- the non-slot state -------------------------------------------------------------- */

MfStatus mf_opt_powers_next(const MfOptimizer *o, MfTensor *next[MF_OPT_MAX_POWERS])
{
    const MfOptClass *d = mf_opt_desc(o);
    for (int i = 0; i < MF_OPT_MAX_POWERS; i++)
        next[i] = NULL;
    MfStatus st = MF_OK;
    for (int i = 0; i < d->npowers && st == MF_OK; i++) {
        MfTensor *p = o->power[i]->value;
        MfTensor *b = mf_tensor_scalar(p->dtype,
                                       mf_opt_hyper_get(&o->cfg, &d->hypers[d->powers[i].hyper]));
        st = b ? mf_binary(MF_OP_MUL, p, b, &next[i]) : MF_ENOMEM;
        mf_tensor_release(b);
    }
    if (st != MF_OK)
        for (int i = 0; i < MF_OPT_MAX_POWERS; i++) {
            mf_tensor_release(next[i]);
            next[i] = NULL;
        }
    return st;
}
