/* activation.c — GELU and SiLU as single ops, each with its gradient as one
 * op (GeluGrad, SiluGrad: dy * f'(x) in one pass, as ReluGrad), float32 and
 * float64. The schema binder makes mf.nn.gelu(x [, {approximate}]) and
 * mf.nn.silu(x) from the descriptors (lib/activations.lua's Keras
 * activations by name use them).
 *
 *   gelu(x) = x Phi(x) = x (1 + erf(x / sqrt 2)) / 2 (PyTorch's gelu,
 *       approximate = 'none'); approximate: x (1 + tanh(v / 2)) / 2 =
 *       x sigmoid(v) with v = 2 sqrt(2/pi) (x + 0.044715 x^3) (PyTorch's
 *       approximate = 'tanh', Keras's approximate = true).
 *   silu(x) = x sigmoid(x).
 *
 * float32 runs vecmath.h's float-lane kernels (the ulp bounds of
 * tests/unit/test_vecmath.c); float64 uses libm. At -inf both give -0
 * (their limit; PyTorch's formulas give NaN there).
 *
 * Second derivatives: the gradient ops' own gradients are written with ops
 * (so hessians and forward-over-reverse work): GeluGrad(dy, x) gives
 * GeluGrad(ddx, x) for dy and ddx dy f''(x) for x, with
 *   f'' = phi(x) (2 - x^2) for the exact gelu, and
 *   f'' = s (1 - s) (2 v' + x (1 - 2 s) v'^2 + x v'') for x sigmoid(v(x))
 *       (s = sigmoid(v); silu: v = x). */
#include <math.h>

#include "binary_rows.h"
#include "common.h"
#include "grads_math.h"
#include "unary_loop.h"
#include "vecmath.h"

#define GELU_K1 1.5957691216057308 /* 2 sqrt(2 / pi) */
#define GELU_K3 (GELU_K1 * 0.044715)
#define INV_SQRT_2PI 0.39894228040143268

typedef enum { ACT_GELU, ACT_GELU_TANH, ACT_SILU } ActKind;

static ActKind kind_of(const MfOpCall *c)
{
    if (c->op == MF_OP_SILU || c->op == MF_OP_SILU_GRAD)
        return ACT_SILU;
    return c->attrs->approximate ? ACT_GELU_TANH : ACT_GELU;
}

/* ---- float64 (and the reference for float32's fallbacks): libm ---- */

/* x sigmoid(v), -0 at x = -inf */
static double x_sigmoid(double x, double v)
{
    if (x == -(double)INFINITY)
        return -0.0;
    return v >= 0 ? x / (1.0 + exp(-v)) : x * exp(v) / (1.0 + exp(v));
}

static double gelu_tanh_arg(double x)
{
    return x * (GELU_K1 + GELU_K3 * x * x);
}

static double act64(ActKind k, double x)
{
    switch (k) {
    case ACT_GELU: return x < -40 ? -0.0 : 0.5 * x * erfc(-x * M_SQRT1_2);
    case ACT_GELU_TANH: return x_sigmoid(x, gelu_tanh_arg(x));
    default: return x_sigmoid(x, x);
    }
}

/* f'(x): Phi + x phi, or s (1 + x (1 - s) v') for x sigmoid(v(x)); x
 * limited where f' is 0 or 1 (so that inf * 0 does not make NaN) */
static double act_grad64(ActKind k, double x)
{
    double xc = x < -40 ? -40 : x > 40 ? 40 : x;
    if (x != x)
        return x;
    if (k == ACT_GELU)
        return 0.5 * erfc(-xc * M_SQRT1_2) + xc * INV_SQRT_2PI * exp(-0.5 * xc * xc);
    double v = k == ACT_SILU ? xc : gelu_tanh_arg(xc);
    double dv = k == ACT_SILU ? 1.0 : GELU_K1 + 3 * GELU_K3 * xc * xc;
    double s = 1.0 / (1.0 + exp(-v)), comp = 1.0 / (1.0 + exp(v));
    return s * (1.0 + xc * comp * dv);
}

static const MfVecFn vec_fn[] = {MF_VEC_GELU, MF_VEC_GELU_TANH, MF_VEC_SILU};
static const MfVecGradFn vec_grad_fn[] = {MF_VEC_GELU_GRAD, MF_VEC_GELU_TANH_GRAD,
                                          MF_VEC_SILU_GRAD};

static MfStatus act_forward(const MfOpCall *c, MfTensor **outs)
{
    ActKind k = kind_of(c);
    if (mf_vec_unary(vec_fn[k], c->inputs[0], outs[0]))
        return MF_OK;
    MfTensor *out = outs[0]; /* float64 (float32 went to the kernels) */
    UNARY_ROWS(double, act64(k, a));
    return MF_OK;
}

static MfStatus act_grad_forward(const MfOpCall *c, MfTensor **outs)
{
    ActKind k = kind_of(c);
    if (mf_vec_grad(vec_grad_fn[k], c->inputs[0], c->inputs[1], outs[0]))
        return MF_OK;
    MfTensor *out = outs[0];
    BINARY_ROWS_TO(double, double, a * act_grad64(k, b));
    return MF_OK;
}

static MfStatus act_grad_infer(MfOpCall *c)
{
    return mf_infer_grad_pair(c, MF_FLOATS, "a float dtype (float32 or float64)");
}

/* ---- gradients ---- */

static MfOpId grad_op_of(ActKind k)
{
    return k == ACT_SILU ? MF_OP_SILU_GRAD : MF_OP_GELU_GRAD;
}

static MfStatus act_backward(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *in[2] = {g->doutputs[0], g->call->inputs[0]};
    return mf_op1(grad_op_of(kind_of(g->call)), 2, in, g->call->attrs, &dinputs[0]);
}

/* A chain of ops whose results live until chain_release; after a failure
 * every step returns NULL and 'st' keeps the first error. */
enum { CHAIN_MAX = 40 };
typedef struct {
    MfTensor *t[CHAIN_MAX];
    int n;
    MfStatus st;
} Chain;

static MfTensor *chain_keep(Chain *ch, MfStatus st, MfTensor *t)
{
    if (ch->st == MF_OK)
        ch->st = st;
    if (st != MF_OK || ch->n == CHAIN_MAX) {
        mf_tensor_release(t);
        if (ch->st == MF_OK)
            ch->st = mf_err_set(MF_EINTERNAL, "activation gradient: chain too long");
        return NULL;
    }
    ch->t[ch->n++] = t;
    return t;
}

static MfTensor *bin(Chain *ch, MfOpId op, MfTensor *a, MfTensor *b)
{
    MfTensor *out = NULL;
    if (ch->st != MF_OK)
        return NULL;
    MfStatus st = mf_binary(op, a, b, &out);
    return chain_keep(ch, st, out);
}

static MfTensor *un(Chain *ch, MfOpId op, MfTensor *a)
{
    MfTensor *out = NULL;
    if (ch->st != MF_OK)
        return NULL;
    MfStatus st = mf_unary(op, a, &out);
    return chain_keep(ch, st, out);
}

static MfTensor *scale(Chain *ch, MfTensor *a, double k)
{
    MfTensor *out = NULL;
    if (ch->st != MF_OK)
        return NULL;
    MfStatus st = mf_grad_scale(a, k, &out);
    return chain_keep(ch, st, out);
}

/* a + k */
static MfTensor *plus(Chain *ch, MfTensor *a, double k)
{
    MfTensor *c = NULL;
    if (ch->st != MF_OK)
        return NULL;
    MfStatus st = mf_grad_const(a, k, &c);
    return bin(ch, MF_OP_ADD, a, chain_keep(ch, st, c));
}

/* f''(x) as ops (see the header) */
static MfTensor *second_derivative(Chain *ch, ActKind k, MfTensor *x)
{
    MfTensor *x2 = bin(ch, MF_OP_MUL, x, x);
    if (k == ACT_GELU) {
        MfTensor *e = un(ch, MF_OP_EXP, scale(ch, x2, -0.5));
        MfTensor *two_minus = plus(ch, scale(ch, x2, -1), 2);
        return scale(ch, bin(ch, MF_OP_MUL, e, two_minus), INV_SQRT_2PI);
    }
    MfTensor *v = x, *dv = NULL, *x_d2v = NULL;
    if (k == ACT_GELU_TANH) {
        v = bin(ch, MF_OP_MUL, x, plus(ch, scale(ch, x2, GELU_K3), GELU_K1));
        dv = plus(ch, scale(ch, x2, 3 * GELU_K3), GELU_K1);
        x_d2v = scale(ch, x2, 6 * GELU_K3);
    }
    MfTensor *s = un(ch, MF_OP_SIGMOID, v);
    MfTensor *s1 = bin(ch, MF_OP_MUL, s, plus(ch, scale(ch, s, -1), 1));
    MfTensor *u = plus(ch, scale(ch, s, -2), 1);
    MfTensor *inner; /* 2 v' + x (1 - 2 s) v'^2 + x v'' */
    if (k == ACT_SILU) {
        inner = plus(ch, bin(ch, MF_OP_MUL, x, u), 2);
    } else {
        MfTensor *xu = bin(ch, MF_OP_MUL, x, u);
        MfTensor *t = bin(ch, MF_OP_MUL, xu, bin(ch, MF_OP_MUL, dv, dv));
        inner = bin(ch, MF_OP_ADD, bin(ch, MF_OP_ADD, scale(ch, dv, 2), t), x_d2v);
    }
    return bin(ch, MF_OP_MUL, s1, inner);
}

static MfStatus act_grad_backward(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *dy = g->call->inputs[0], *x = g->call->inputs[1], *ddx = g->doutputs[0];
    ActKind k = kind_of(g->call);
    MfStatus st = MF_OK;
    if (mf_grad_needs(g, 0)) {
        MfTensor *in[2] = {ddx, x};
        st = mf_op1(grad_op_of(k), 2, in, g->call->attrs, &dinputs[0]);
    }
    if (st == MF_OK && mf_grad_needs(g, 1)) {
        Chain ch = {.st = MF_OK};
        MfTensor *d = bin(&ch, MF_OP_MUL, bin(&ch, MF_OP_MUL, ddx, dy),
                          second_derivative(&ch, k, x));
        st = ch.st;
        if (st == MF_OK) {
            mf_tensor_retain(d);
            dinputs[1] = d;
        }
        mf_grad_release_n(ch.t, ch.n);
    }
    if (st != MF_OK)
        mf_grad_release_n(dinputs, 2);
    return st;
}

/* ---- descriptors ---- */

static const MfAttrDef gelu_attrs[] = {
    {"approximate", MF_ATTR_BOOL, 0, MF_ATTR_AT(approximate), 0, 0, NULL, NULL},
};

const MfOpDesc mf_desc_gelu = {
    .name = "Gelu", .api = "gelu", .arity = 1, .flags = MF_OP_ELEMENTWISE,
    .infer = mf_infer_float_like, .forward = act_forward, .backward = act_backward,
    .cost = mf_cost_elementwise, .attrs = gelu_attrs, .nattrs = MF_NATTRS(gelu_attrs),
    .lua = "nn.gelu", .inputs = "x",
    .summary = "x Phi(x), the Gaussian error linear unit ({approximate = true}: the tanh form)",
    .topic = "nn",
    .grad_note = "dx = GeluGrad(dy, x) = dy * (Phi(x) + x phi(x)), one op",
    .details =
        "Elementwise x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), Phi the standard normal "
        "distribution function, as torch.nn.functional.gelu; approximate = true: the tanh "
        "form 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), PyTorch's approximate = "
        "'tanh' and Keras's approximate = True. One op, float32 or float64, its gradient one "
        "op too (GeluGrad: dy * (Phi(x) + x phi(x)), or the tanh form's derivative), whose "
        "own gradient is written with ops. float32 runs vectorised in float lanes (16 per "
        "AVX-512 vector or 8 per AVX2) within 4 ulp of the exact value (3.5 for the tanh "
        "form), computed without cancellation for negative x; float64 uses libm. gelu(-inf) "
        "is -0, the limit (PyTorch's formula gives NaN).",
    .example =
        "mf.nn.gelu(mf.tensor{0, 1})                          --> {0, 0.841345}\n"
        "mf.nn.gelu(mf.tensor{1}, {approximate = true})       --> {0.841192}",
};

const MfOpDesc mf_desc_gelu_grad = {
    .name = "GeluGrad", .api = "gelu_grad", .arity = 2, .flags = MF_OP_ELEMENTWISE,
    .infer = act_grad_infer, .forward = act_grad_forward, .backward = act_grad_backward,
    .cost = mf_cost_elementwise, .attrs = gelu_attrs, .nattrs = MF_NATTRS(gelu_attrs),
};

const MfOpDesc mf_desc_silu = {
    .name = "Silu", .api = "silu", .arity = 1, .flags = MF_OP_SIMPLE | MF_OP_ELEMENTWISE,
    .infer = mf_infer_float_like, .forward = act_forward, .backward = act_backward,
    .cost = mf_cost_elementwise, .lua = "nn.silu", .inputs = "x",
    .summary = "x * sigmoid(x), the sigmoid linear unit (swish)",
    .topic = "nn",
    .grad_note = "dx = SiluGrad(dy, x) = dy * s (1 + x (1 - s)), s = sigmoid(x), one op",
    .details =
        "Elementwise x * sigmoid(x) (SiLU, swish), as torch.nn.functional.silu and "
        "tf.nn.silu. One op, float32 or float64, its gradient one op too (SiluGrad: dy * s (1 "
        "+ x (1 - s)) with s = sigmoid(x)), whose own gradient is written with ops. float32 "
        "runs vectorised in float lanes (16 per AVX-512 vector or 8 per AVX2) within 3.5 ulp "
        "of the exact value; float64 uses libm. silu(-inf) is -0, the limit (PyTorch's "
        "formula gives NaN).",
    .example =
        "mf.nn.silu(mf.tensor{0, 1})                          --> {0, 0.731059}",
};

const MfOpDesc mf_desc_silu_grad = {
    .name = "SiluGrad", .api = "silu_grad", .arity = 2, .flags = MF_OP_ELEMENTWISE,
    .infer = act_grad_infer, .forward = act_grad_forward, .backward = act_grad_backward,
    .cost = mf_cost_elementwise,
};
