/* jvp.c — the forward-mode rule of each differentiable op (see jvp.h),
 * grouped by family. Every rule calls ops, so tapes and outer accumulators
 * see its work. To give a new op a rule, add its line to 'rules' below: the
 * op-table walk of tests/unit/test_jvp.c names ops that lack one. */
#include "jvp.h"

#include "core/alloc.h"
#include "core/create.h"
#include "core/grad.h"
#include "core/ops/attention.h"
#include "core/ops/reduce.h"
#include "eager.h"

#define ALL ~0u
#define IN(i) (1u << (i))

/* An ALL mask stops at the call's inputs. */
static bool in_mask(unsigned mask, int i)
{
    return i < 32 && (mask & IN(i));
}

/* ---- the families ------------------------------------------------------------- */

/* A diagonal Jacobian: backward(dy = t) is J t. */
static MfStatus unary(const MfJvpCall *j, MfTensor **dout)
{
    MfGradCall g = {.call = j->call, .outputs = j->outputs, .doutputs = j->tangents};
    MfTensor *din[1] = {NULL};
    MfStatus st = mf_grad_call(&g, din);
    dout[0] = din[0];
    return st;
}

/* The op with its inputs in 'mask' replaced by their tangents (zeros where
 * none); adds its float outputs to 'dout' (AddV2 where one is there). */
static MfStatus run_on_tangents(const MfJvpCall *j, unsigned mask, MfTensor **dout)
{
    const MfOpCall *c = j->call;
    MfTensor *small[8], **in = small, *outs[MF_MAX_OUTPUTS];
    if (c->ninputs > 8 && !(in = mf_calloc((size_t)c->ninputs, sizeof *in)))
        return mf_err_nomem("forward mode", (unsigned long long)c->ninputs * sizeof *in);
    MfStatus st = MF_OK;
    for (int i = 0; i < c->ninputs; i++) {
        in[i] = c->inputs[i];
        mf_tensor_retain(in[i]);
        if (!in_mask(mask, i))
            continue;
        mf_tensor_release(in[i]);
        in[i] = NULL;
        MfTensor *t = j->tangents[i];
        if (t) {
            mf_tensor_retain(t);
            in[i] = t;
        } else if (st == MF_OK) {
            st = mf_grad_zeros_like(c->inputs[i], &in[i]);
        }
    }
    if (st == MF_OK)
        st = mf_op_call(c->op, c->ninputs, in, c->attrs, outs, NULL);
    for (int k = 0; k < MF_MAX_OUTPUTS && st == MF_OK; k++) {
        if (!outs[k] || !mf_grad_is_float(outs[k]->dtype)) {
            mf_tensor_release(outs[k]);
            continue;
        }
        if (!dout[k]) {
            dout[k] = outs[k];
            continue;
        }
        MfTensor *sum = NULL;
        st = mf_binary(MF_OP_ADD, dout[k], outs[k], &sum);
        mf_tensor_release(outs[k]);
        mf_tensor_release(dout[k]);
        dout[k] = sum;
    }
    for (int i = 0; i < c->ninputs; i++)
        mf_tensor_release(in[i]);
    if (in != small)
        mf_free(in);
    return st;
}

static MfStatus linear(const MfJvpCall *j, unsigned mask, MfTensor **dout)
{
    return run_on_tangents(j, mask, dout);
}

/* op(ta, b) + op(a, tb): each masked input with a tangent in turn, the
 * other masked input kept as it is. */
static MfStatus bilinear(const MfJvpCall *j, unsigned mask, MfTensor **dout)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < j->call->ninputs && st == MF_OK; i++)
        if (in_mask(mask, i) && j->tangents[i])
            st = run_on_tangents(j, IN(i), dout);
    return st;
}

/* ---- rules of their own --------------------------------------------------------- */

/* d(a / b) = (ta - (a / b) tb) / b */
static MfStatus jvp_div(const MfJvpCall *j, MfTensor **dout)
{
    MfTensor *const *in = j->call->inputs, *ta = j->tangents[0], *tb = j->tangents[1];
    MfTensor *num = NULL, *q = NULL;
    MfStatus st = MF_OK;
    if (tb)
        st = mf_binary(MF_OP_MUL, j->outputs[0], tb, &q);
    if (st == MF_OK && ta && q)
        st = mf_binary(MF_OP_SUB, ta, q, &num);
    else if (st == MF_OK && q)
        st = mf_unary(MF_OP_NEG, q, &num);
    else if (st == MF_OK)
        mf_tensor_retain(num = ta);
    if (st == MF_OK)
        st = mf_binary(MF_OP_DIV, num, in[1], &dout[0]);
    mf_tensor_release(num);
    mf_tensor_release(q);
    return st;
}

/* A few ops in a row: each result stays in the pool until 'pool_free', and
 * after the first error every later step gives NULL with the status kept. */
typedef struct Pool {
    MfStatus st;
    int n;
    MfTensor *t[40];
} Pool;

static MfTensor *pool_keep(Pool *p, MfStatus st, MfTensor *t)
{
    if (st == MF_OK && p->n == (int)(sizeof p->t / sizeof p->t[0]))
        st = mf_err_set(MF_EARG, "forward mode: a rule ran out of room");
    if (st != MF_OK) {
        mf_tensor_release(t);
        p->st = st;
        return NULL;
    }
    return p->t[p->n++] = t;
}

static MfTensor *pool_op(Pool *p, MfOpId op, MfTensor *a, MfTensor *b)
{
    MfTensor *out = NULL;
    if (p->st != MF_OK || !a || (op != MF_OP_SIGMOID && op != MF_OP_TANH && !b))
        return NULL;
    MfStatus st = b ? mf_binary(op, a, b, &out) : mf_unary(op, a, &out);
    return pool_keep(p, st, out);
}

/* One gate (columns k*units .. (k+1)*units) of 'z' (batch, 4 units). */
static MfTensor *pool_gate(Pool *p, MfTensor *z, int k)
{
    MfTensor *out = NULL;
    if (p->st != MF_OK || !z)
        return NULL;
    MfAttrs a = mf_attrs_default();
    int64_t units = z->shape[1] / 4;
    a.nints = 4;
    a.ints[1] = k * units;
    a.ints[2] = -1;
    a.ints[3] = units;
    MfStatus st = mf_op1(MF_OP_SLICE, 1, &z, &a, &out);
    return pool_keep(p, st, out);
}

static void pool_free(Pool *p)
{
    for (int i = 0; i < p->n; i++)
        mf_tensor_release(p->t[i]);
}

/* LSTMCell (its gradient op has none of its own to transpose): with gates
 * i, f, g, o of z, c = s(f) c_prev + s(i) tanh(g) and h = s(o) tanh(c), so
 * dc = s'(f) df c_prev + s(f) dc_prev + s'(i) di tanh(g) + s(i) tanh'(g) dg
 * and dh = s'(o) do tanh(c) + s(o) tanh'(c) dc. */
static MfStatus jvp_lstm_cell(const MfJvpCall *j, MfTensor **dout)
{
    MfTensor *z = j->call->inputs[0], *tz = j->tangents[0];
    MfTensor *cp = j->call->ninputs > 1 ? j->call->inputs[1] : NULL;
    MfTensor *tcp = j->call->ninputs > 1 ? j->tangents[1] : NULL;
    if (z->shape[1] < 0)
        return mf_err_set(MF_EARG, "forward mode: LSTMCell needs the number of units known");
    Pool p = {MF_OK, 0, {NULL}};
    MfTensor *one = NULL;
    MfStatus st = mf_grad_const(z, 1, &one);
    pool_keep(&p, st, one);
    MfTensor *s = pool_op(&p, MF_OP_SIGMOID, z, NULL), *t = pool_op(&p, MF_OP_TANH, z, NULL);
    MfTensor *ds = NULL, *dt = NULL;
    if (tz) {   /* s' = s (1 - s), tanh' = 1 - tanh^2 */
        ds = pool_op(&p, MF_OP_MUL, pool_op(&p, MF_OP_MUL, s, pool_op(&p, MF_OP_SUB, one, s)), tz);
        dt = pool_op(&p, MF_OP_MUL, pool_op(&p, MF_OP_SUB, one, pool_op(&p, MF_OP_MUL, t, t)), tz);
    }
    MfTensor *gi = pool_gate(&p, s, 0), *gf = pool_gate(&p, s, 1), *gg = pool_gate(&p, t, 2);
    MfTensor *go = pool_gate(&p, s, 3), *dc = NULL;
    if (tz) {
        dc = pool_op(&p, MF_OP_ADD, pool_op(&p, MF_OP_MUL, pool_gate(&p, ds, 0), gg),
                     pool_op(&p, MF_OP_MUL, gi, pool_gate(&p, dt, 2)));
        if (cp)
            dc = pool_op(&p, MF_OP_ADD, dc, pool_op(&p, MF_OP_MUL, pool_gate(&p, ds, 1), cp));
    }
    if (tcp) {
        MfTensor *term = pool_op(&p, MF_OP_MUL, gf, tcp);
        dc = dc ? pool_op(&p, MF_OP_ADD, dc, term) : term;
    }
    MfTensor *tc = pool_op(&p, MF_OP_TANH, j->outputs[1], NULL);
    MfTensor *dh = pool_op(&p, MF_OP_MUL, pool_op(&p, MF_OP_MUL, go,
                                                  pool_op(&p, MF_OP_SUB, one,
                                                          pool_op(&p, MF_OP_MUL, tc, tc))),
                           dc);
    if (tz)
        dh = pool_op(&p, MF_OP_ADD, dh, pool_op(&p, MF_OP_MUL, pool_gate(&p, ds, 3), tc));
    if (p.st == MF_OK) {
        mf_tensor_retain(dout[0] = dh);
        mf_tensor_retain(dout[1] = dc);
    }
    st = p.st;
    pool_free(&p);
    return st;
}

/* ---- attention -------------------------------------------------------------------- */

static MfTensor *pool_matmul(Pool *p, MfTensor *a, MfTensor *b, bool transpose_b)
{
    MfTensor *out = NULL, *in[2] = {a, b};
    if (p->st != MF_OK || !a || !b)
        return NULL;
    MfAttrs at = mf_attrs_default();
    at.transpose_b = transpose_b;
    MfStatus st = mf_op1(MF_OP_BATCH_MATMUL, 2, in, &at, &out);
    return pool_keep(p, st, out);
}

/* The sum over the last axis (kept or not). */
static MfTensor *pool_rowsum(Pool *p, MfTensor *x, bool keepdims)
{
    MfTensor *out = NULL;
    int64_t axis = -1;
    if (p->st != MF_OK || !x)
        return NULL;
    MfStatus st = mf_reduce(MF_OP_SUM, x, &axis, 1, keepdims, &out);
    return pool_keep(p, st, out);
}

/* 'a' + 'b' where either may be NULL (no term). */
static MfTensor *pool_add(Pool *p, MfTensor *a, MfTensor *b)
{
    return !a ? b : !b ? a : pool_op(p, MF_OP_ADD, a, b);
}

/* The attention weights of call 'c' (the op itself on v = I): softmax
 * P, or with 'dropped' the weights the call used, P Z under its dropout
 * mask (an eager call redraws it from its key; a graph node of the same
 * op seed runs as often as the call's, so its key matches too). */
static MfTensor *attention_probs(Pool *p, const MfOpCall *c, bool dropped)
{
    MfTensor *k = c->inputs[1], *eye = NULL, *outs[MF_MAX_OUTPUTS] = {NULL};
    int64_t tk = k->shape[k->rank - 2];
    if (tk < 0) {
        p->st = mf_err_set(MF_EARG, "forward mode: scaled_dot_product_attention needs the "
                           "number of keys known");
        return NULL;
    }
    MfStatus st = mf_create_eye(k->dtype, tk, tk, &eye);
    pool_keep(p, st, eye);
    MfTensor *in[4] = {c->inputs[0], k, eye, c->ninputs > 3 ? c->inputs[3] : NULL};
    MfAttrs a = *c->attrs;
    a.scalar[1] = dropped ? a.scalar[1] : 0;
    if (p->st == MF_OK)
        st = mf_op_call(c->op, c->ninputs, in, &a, outs, NULL);
    for (int i = 1; i < MF_MAX_OUTPUTS; i++)
        mf_tensor_release(outs[i]);
    return pool_keep(p, st, outs[0]);
}

/* ScaledDotProductAttention, with P its probabilities, Pd = P Z the
 * weights after dropout (P without), dS = scale (dq k^T + q dk^T) (+ a
 * float mask's tangent) and c = rowsum(P dS):
 * dout = Pd (dS - c) v + Pd dv, dlse = c. */
static MfStatus jvp_attention(const MfJvpCall *j, MfTensor **dout)
{
    const MfOpCall *c = j->call;
    MfTensor *const *t = j->tangents;
    MfTensor *q = c->inputs[0], *k = c->inputs[1], *v = c->inputs[2];
    Pool p = {MF_OK, 0, {NULL}};
    MfTensor *P = attention_probs(&p, c, false), *scale = NULL;
    MfTensor *Pd = c->attrs->scalar[1] > 0 ? attention_probs(&p, c, true) : P;
    MfStatus st = mf_grad_const(q, mf_attn_scale(c->attrs, q->shape[q->rank - 1]), &scale);
    pool_keep(&p, st, scale);
    MfTensor *dS = pool_add(&p, t[0] ? pool_matmul(&p, t[0], k, true) : NULL,
                            t[1] ? pool_matmul(&p, q, t[1], true) : NULL);
    dS = dS ? pool_op(&p, MF_OP_MUL, dS, scale) : NULL;
    dS = pool_add(&p, dS, c->ninputs > 3 ? t[3] : NULL);
    MfTensor *out = t[2] ? pool_matmul(&p, Pd, t[2], false) : NULL, *lse = NULL;
    if (dS) {
        MfTensor *PdS = pool_op(&p, MF_OP_MUL, P, dS);
        MfTensor *dP = pool_op(&p, MF_OP_MUL, Pd,
                               pool_op(&p, MF_OP_SUB, dS, pool_rowsum(&p, PdS, true)));
        lse = pool_rowsum(&p, PdS, false);
        out = pool_add(&p, out, pool_matmul(&p, dP, v, false));
    }
    if (p.st == MF_OK) {
        if ((dout[0] = out))
            mf_tensor_retain(out);
        if ((dout[1] = lse))
            mf_tensor_retain(lse);
    }
    st = p.st;
    pool_free(&p);
    return st;
}

/* ---- the transposed backward ------------------------------------------------------ */

static const MfJvpGraphHooks *graph_hooks;

void mf_jvp_set_graph_hooks(const MfJvpGraphHooks *h)
{
    graph_hooks = h;
}

/* sum over inputs of sum(din[i] * t[i]) into '*s' (NULL: no input has both). */
static MfStatus dot_tangents(const MfJvpCall *j, MfTensor *const *din, MfTensor **s)
{
    MfStatus st = MF_OK;
    *s = NULL;
    for (int i = 0; i < j->call->ninputs && st == MF_OK; i++) {
        if (!din[i] || !j->tangents[i])
            continue;
        MfTensor *p = NULL, *ps = NULL, *sum = NULL;
        MfAttrs all = mf_attrs_default();
        all.all_axes = true;
        st = mf_binary(MF_OP_MUL, din[i], j->tangents[i], &p);
        if (st == MF_OK)
            st = mf_op1(MF_OP_SUM, 1, &p, &all, &ps);
        if (st == MF_OK && *s)
            st = mf_binary(MF_OP_ADD, *s, ps, &sum);
        else if (st == MF_OK)
            mf_tensor_retain(sum = ps);
        mf_tensor_release(*s);
        *s = sum;
        mf_tensor_release(p);
        mf_tensor_release(ps);
    }
    return st;
}

/* d<backward(u), t>/du at u = 0: the Jacobian applied to t, whatever the op
 * (backward is linear in u). Eagerly a tape records backward(u) and the
 * sum; on a graph, the graph hooks take the gradient over the new nodes. */
static MfStatus transpose(const MfJvpCall *j, MfTensor **dout)
{
    const MfOpCall *c = j->call;
    bool graph = j->outputs[0]->node != NULL;   /* the op was built into a graph */
    if (graph && !graph_hooks)
        return mf_err_set(MF_EARG, "forward mode: %s in a graph needs the graph hooks "
                          "(mf_forward_graph_register)", mf_op_table[c->op]->name);
    if (c->ninputs > MF_MAX_OUTPUTS * 4)
        return mf_err_set(MF_EARG, "forward mode: %s: too many inputs",
                          mf_op_table[c->op]->name);
    MfTensor *u[MF_MAX_OUTPUTS] = {NULL}, *din[MF_MAX_OUTPUTS * 4] = {NULL}, *s = NULL;
    MfTensor *grads[MF_MAX_OUTPUTS] = {NULL};
    MfTapeSource src[MF_MAX_OUTPUTS] = {{0}};
    int which[MF_MAX_OUTPUTS], nsrc = 0;
    int64_t mark = graph ? graph_hooks->mark(j->outputs[0]) : 0;
    MfTape *tape = graph ? NULL : mf_tape_new(false, false);
    MfStatus st = graph || tape ? MF_OK : MF_ENOMEM;
    for (int k = 0; k < c->noutputs && st == MF_OK; k++) {
        if (!mf_grad_is_float(j->outputs[k]->dtype))
            continue;
        st = mf_grad_zeros_like(j->outputs[k], &u[nsrc]);
        if (st == MF_OK && tape)
            st = mf_tape_watch(tape, u[nsrc]);
        src[nsrc].tensor = u[nsrc];
        which[nsrc++] = k;
    }
    if (st == MF_OK) {
        MfTensor *uk[MF_MAX_OUTPUTS] = {NULL};   /* by output, as the backward reads them */
        for (int q = 0; q < nsrc; q++)
            uk[which[q]] = u[q];
        MfGradCall g = {.call = c, .outputs = j->outputs, .doutputs = uk};
        st = mf_grad_call(&g, din);
    }
    if (st == MF_OK)
        st = dot_tangents(j, din, &s);
    if (st == MF_OK && s && tape) {
        mf_tape_stop(tape);
        st = mf_tape_gradient(tape, s, nsrc, src, NULL, false, grads);
    } else if (st == MF_OK && s) {
        st = graph_hooks->gradients(mark, s, nsrc, u, grads);
    }
    for (int q = 0; q < nsrc; q++)
        dout[which[q]] = grads[q];
    mf_tensor_release(s);
    for (int i = 0; i < MF_MAX_OUTPUTS * 4; i++)
        mf_tensor_release(din[i]);
    for (int k = 0; k < MF_MAX_OUTPUTS; k++)
        mf_tensor_release(u[k]);
    if (tape)
        mf_tape_release(tape);
    return st;
}

/* ---- the table -------------------------------------------------------------------- */

#define UNARY {MF_JVP_UNARY, 0, NULL}
#define LINEAR(m) {MF_JVP_LINEAR, (m), NULL}
#define BILINEAR(m) {MF_JVP_BILINEAR, (m), NULL}
#define OWN(f) {MF_JVP_OWN, 0, (f)}
#define TRANSPOSE {MF_JVP_TRANSPOSE, 0, NULL}

static const MfJvpRule rules[MF_NOPS] = {
    /* elementwise, one input: a diagonal Jacobian */
    [MF_OP_ABS] = UNARY, [MF_OP_SQUARE] = UNARY, [MF_OP_SQRT] = UNARY, [MF_OP_RSQRT] = UNARY,
    [MF_OP_EXP] = UNARY, [MF_OP_LOG] = UNARY, [MF_OP_LOG1P] = UNARY, [MF_OP_SIN] = UNARY,
    [MF_OP_COS] = UNARY, [MF_OP_TANH] = UNARY, [MF_OP_SIGMOID] = UNARY, [MF_OP_RELU] = UNARY,
    [MF_OP_SOFTPLUS] = UNARY, [MF_OP_TAN] = UNARY, [MF_OP_SINH] = UNARY, [MF_OP_COSH] = UNARY,
    [MF_OP_ASIN] = UNARY, [MF_OP_ACOS] = UNARY, [MF_OP_ATAN] = UNARY, [MF_OP_EXPM1] = UNARY,
    [MF_OP_ERF] = UNARY, [MF_OP_RECIPROCAL] = UNARY, [MF_OP_ATANH] = UNARY,
    [MF_OP_ASINH] = UNARY, [MF_OP_GELU] = UNARY, [MF_OP_SILU] = UNARY, [MF_OP_ERFC] = UNARY,
    [MF_OP_ACOSH] = UNARY,
    /* linear in every input */
    [MF_OP_ADD] = LINEAR(ALL), [MF_OP_SUB] = LINEAR(ALL), [MF_OP_NEG] = LINEAR(ALL),
    [MF_OP_CAST] = LINEAR(ALL), [MF_OP_SUM] = LINEAR(ALL), [MF_OP_MEAN] = LINEAR(ALL),
    [MF_OP_TRACE] = LINEAR(ALL), [MF_OP_TRANSPOSE] = LINEAR(ALL),
    [MF_OP_RESHAPE] = LINEAR(IN(0)), [MF_OP_EXPAND_DIMS] = LINEAR(ALL),
    [MF_OP_SQUEEZE] = LINEAR(ALL), [MF_OP_CONCAT] = LINEAR(ALL), [MF_OP_STACK] = LINEAR(ALL),
    [MF_OP_SLICE] = LINEAR(ALL), [MF_OP_REVERSE] = LINEAR(ALL), [MF_OP_TILE] = LINEAR(ALL),
    [MF_OP_BROADCAST_TO] = LINEAR(ALL), [MF_OP_IDENTITY] = LINEAR(ALL),
    [MF_OP_ROLL] = LINEAR(ALL), [MF_OP_CUMSUM] = LINEAR(ALL), [MF_OP_BIAS_ADD] = LINEAR(ALL),
    [MF_OP_AVG_POOL] = LINEAR(ALL),
    /* linear in some inputs; the others (indices, conditions, shapes) as given */
    [MF_OP_SELECT] = LINEAR(IN(1) | IN(2)), [MF_OP_GATHER] = LINEAR(IN(0)),
    [MF_OP_GATHER_ND] = LINEAR(IN(0)), [MF_OP_GATHER_ALONG_AXIS] = LINEAR(IN(0)),
    [MF_OP_SCATTER_ND] = LINEAR(IN(1)), [MF_OP_UNSORTED_SEGMENT_SUM] = LINEAR(IN(0)),
    [MF_OP_RESHAPE_LIKE] = LINEAR(IN(0)), [MF_OP_BROADCAST_TO_LIKE] = LINEAR(IN(0)),
    [MF_OP_SUM_TO_LIKE] = LINEAR(IN(0)), [MF_OP_MATRIX_BAND_PART] = LINEAR(IN(0)),
    [MF_OP_TRILU] = LINEAR(IN(0)), [MF_OP_STRIDED_SLICE] = LINEAR(IN(0)),
    [MF_OP_STRIDED_SLICE_GRAD] = LINEAR(IN(0)), [MF_OP_STRIDED_SLICE_UPDATE] = LINEAR(ALL),
    [MF_OP_TENSOR_SCATTER_UPDATE] = LINEAR(IN(0) | IN(2)),
    [MF_OP_TENSOR_SCATTER_ADD] = LINEAR(IN(0) | IN(2)),
    [MF_OP_TENSOR_SCATTER_SUB] = LINEAR(IN(0) | IN(2)),
    /* linear in each of two inputs */
    [MF_OP_MUL] = BILINEAR(IN(0) | IN(1)), [MF_OP_MATMUL] = BILINEAR(IN(0) | IN(1)),
    [MF_OP_BATCH_MATMUL] = BILINEAR(IN(0) | IN(1)), [MF_OP_CONV2D] = BILINEAR(IN(0) | IN(1)),
    [MF_OP_DEPTHWISE_CONV2D] = BILINEAR(IN(0) | IN(1)),
    [MF_OP_CONV2D_BACKPROP_INPUT] = BILINEAR(IN(0) | IN(1)),
    [MF_OP_CONV2D_BACKPROP_FILTER] = BILINEAR(IN(0) | IN(1)),
    [MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT] = BILINEAR(IN(0) | IN(1)),
    [MF_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER] = BILINEAR(IN(0) | IN(1)),
    /* their own */
    [MF_OP_DIV] = OWN(jvp_div),
    /* the transposed backward */
    [MF_OP_MOD] = TRANSPOSE, [MF_OP_POW] = TRANSPOSE, [MF_OP_MAXIMUM] = TRANSPOSE,
    [MF_OP_MINIMUM] = TRANSPOSE, [MF_OP_ATAN2] = TRANSPOSE, [MF_OP_MAX] = TRANSPOSE,
    [MF_OP_MIN] = TRANSPOSE, [MF_OP_PROD] = TRANSPOSE, [MF_OP_CUMPROD] = TRANSPOSE,
    [MF_OP_PAD] = TRANSPOSE, [MF_OP_TOP_K] = TRANSPOSE, [MF_OP_SORT] = TRANSPOSE,
    [MF_OP_SCATTER_ALONG_AXIS] = TRANSPOSE, [MF_OP_SCATTER_ND_LIKE] = TRANSPOSE,
    [MF_OP_CONV2D_BACKPROP_INPUT_LIKE] = TRANSPOSE, [MF_OP_MATRIX_INVERSE] = TRANSPOSE,
    [MF_OP_MATRIX_SOLVE] = TRANSPOSE, [MF_OP_CHOLESKY] = TRANSPOSE,
    [MF_OP_MATRIX_DETERMINANT] = TRANSPOSE, [MF_OP_SOFTMAX] = TRANSPOSE,
    [MF_OP_LOG_SOFTMAX] = TRANSPOSE, [MF_OP_SOFTMAX_GRAD] = TRANSPOSE,
    [MF_OP_LOG_SOFTMAX_GRAD] = TRANSPOSE, [MF_OP_LAYER_NORM] = TRANSPOSE,
    [MF_OP_LAYER_NORM_GRAD] = TRANSPOSE, [MF_OP_SOFTMAX_XENT] = TRANSPOSE,
    [MF_OP_SPARSE_SOFTMAX_XENT] = TRANSPOSE, [MF_OP_FUSED_BATCH_NORM] = TRANSPOSE,
    [MF_OP_FUSED_BATCH_NORM_GRAD] = TRANSPOSE, [MF_OP_LSTM_CELL] = OWN(jvp_lstm_cell),
    [MF_OP_ATTENTION] = OWN(jvp_attention),
    [MF_OP_MAX_POOL] = TRANSPOSE, [MF_OP_MAX_POOL_GRAD] = TRANSPOSE,
    [MF_OP_AVG_POOL_GRAD] = TRANSPOSE, [MF_OP_MAX_POOL_GRAD_GRAD] = TRANSPOSE,
    [MF_OP_RELU_GRAD] = TRANSPOSE, [MF_OP_GELU_GRAD] = TRANSPOSE,
    [MF_OP_SILU_GRAD] = TRANSPOSE, [MF_OP_SQUARED_DIFFERENCE] = TRANSPOSE,
    [MF_OP_SIGMOID_GRAD] = TRANSPOSE, [MF_OP_TANH_GRAD] = TRANSPOSE,
};

MfJvpRule mf_jvp_rule(MfOpId op)
{
    MfJvpRule none = {MF_JVP_NONE, 0, NULL};
    return op < MF_NOPS && mf_op_differentiable(op) ? rules[op] : none;
}

const char *mf_jvp_kind_name(MfJvpKind kind)
{
    static const char *const names[] = {"none", "unary", "linear", "bilinear", "own",
                                        "transposed backward"};
    return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

MfStatus mf_jvp_call(const MfJvpCall *j, MfTensor **dout)
{
    MfJvpRule r = mf_jvp_rule(j->call->op);
    for (int k = 0; k < MF_MAX_OUTPUTS; k++)
        dout[k] = NULL;
    MfStatus st;
    switch (r.kind) {
    case MF_JVP_UNARY: st = unary(j, dout); break;
    case MF_JVP_LINEAR: st = linear(j, r.mask, dout); break;
    case MF_JVP_BILINEAR: st = bilinear(j, r.mask, dout); break;
    case MF_JVP_OWN: st = r.own(j, dout); break;
    case MF_JVP_TRANSPOSE: st = transpose(j, dout); break;
    default:
        return mf_err_set(MF_EARG, "forward mode: op %s (%s) has no forward rule: add one "
                          "to the table in eager/jvp.c", mf_op_table[j->call->op]->name,
                          mf_op_table[j->call->op]->api);
    }
    if (st != MF_OK)
        for (int k = 0; k < MF_MAX_OUTPUTS; k++) {
            mf_tensor_release(dout[k]);
            dout[k] = NULL;
        }
    return st;
}
