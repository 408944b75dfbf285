/* unary_more_grad.c — gradients of unary_more.c's ops, written with ops as
 * TensorFlow's math_grad.py writes them (in terms of the output where it
 * does: tan, expm1, reciprocal). */
#include <math.h>

#include "grads_math.h"

static MfTensor *x_of(const MfGradCall *g)
{
    return g->call->inputs[0];
}

/* dinputs[0] = dy * d, consuming 'd'. */
static MfStatus times_dy(const MfGradCall *g, MfStatus st, MfTensor *d, MfTensor **dinputs)
{
    if (st == MF_OK)
        st = mf_binary(MF_OP_MUL, g->doutputs[0], d, &dinputs[0]);
    mf_tensor_release(d);
    return st;
}

/* dy * (1 + y^2) */
MfStatus mf_tan_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *y = g->outputs[0], *t[2] = {0}, *d = NULL;
    MfStatus st;
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, y, y, &t[0]));
    MF_GRAD_TRY(mf_grad_const(y, 1, &t[1]));
    MF_GRAD_TRY(mf_binary(MF_OP_ADD, t[1], t[0], &d));
    st = times_dy(g, st, d, dinputs);
done:
    mf_grad_release_n(t, 2);
    return st;
}

MfStatus mf_sinh_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *d = NULL;
    MfStatus st = mf_unary(MF_OP_COSH, x_of(g), &d);
    return times_dy(g, st, d, dinputs);
}

MfStatus mf_cosh_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *d = NULL;
    MfStatus st = mf_unary(MF_OP_SINH, x_of(g), &d);
    return times_dy(g, st, d, dinputs);
}

/* sign * rsqrt(1 - x^2): asin (sign 1) and acos (sign -1) */
static MfStatus arc_grad(const MfGradCall *g, double sign, MfTensor **dinputs)
{
    MfTensor *x = x_of(g), *t[4] = {0}, *d = NULL;
    MfStatus st;
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, x, x, &t[0]));
    MF_GRAD_TRY(mf_grad_const(x, 1, &t[1]));
    MF_GRAD_TRY(mf_binary(MF_OP_SUB, t[1], t[0], &t[2]));
    MF_GRAD_TRY(mf_unary(MF_OP_RSQRT, t[2], &t[3]));
    MF_GRAD_TRY(mf_grad_scale(t[3], sign, &d));
    st = times_dy(g, st, d, dinputs);
done:
    mf_grad_release_n(t, 4);
    return st;
}

MfStatus mf_asin_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return arc_grad(g, 1, dinputs);
}

MfStatus mf_acos_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return arc_grad(g, -1, dinputs);
}

/* dy / (1 + x^2) */
MfStatus mf_atan_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = x_of(g), *t[3] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, x, x, &t[0]));
    MF_GRAD_TRY(mf_grad_const(x, 1, &t[1]));
    MF_GRAD_TRY(mf_binary(MF_OP_ADD, t[1], t[0], &t[2]));
    st = mf_binary(MF_OP_DIV, g->doutputs[0], t[2], &dinputs[0]);
done:
    mf_grad_release_n(t, 3);
    return st;
}

/* dy * (y + 1) = dy * exp(x) */
MfStatus mf_expm1_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *y = g->outputs[0], *one = NULL, *d = NULL;
    MfStatus st = mf_grad_const(y, 1, &one);
    if (st == MF_OK)
        st = mf_binary(MF_OP_ADD, y, one, &d);
    mf_tensor_release(one);
    return times_dy(g, st, d, dinputs);
}

/* dy * 2 / sqrt(pi) * exp(-x^2) */
MfStatus mf_erf_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = x_of(g), *t[3] = {0}, *d = NULL;
    MfStatus st;
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, x, x, &t[0]));
    MF_GRAD_TRY(mf_unary(MF_OP_NEG, t[0], &t[1]));
    MF_GRAD_TRY(mf_unary(MF_OP_EXP, t[1], &t[2]));
    MF_GRAD_TRY(mf_grad_scale(t[2], 2 / sqrt(M_PI), &d));
    st = times_dy(g, st, d, dinputs);
done:
    mf_grad_release_n(t, 3);
    return st;
}

/* -dy * 2 / sqrt(pi) * exp(-x^2) */
MfStatus mf_erfc_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = x_of(g), *t[3] = {0}, *d = NULL;
    MfStatus st;
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, x, x, &t[0]));
    MF_GRAD_TRY(mf_unary(MF_OP_NEG, t[0], &t[1]));
    MF_GRAD_TRY(mf_unary(MF_OP_EXP, t[1], &t[2]));
    MF_GRAD_TRY(mf_grad_scale(t[2], -2 / sqrt(M_PI), &d));
    st = times_dy(g, st, d, dinputs);
done:
    mf_grad_release_n(t, 3);
    return st;
}

/* dy / sqrt(x^2 - 1) */
MfStatus mf_acosh_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = x_of(g), *t[4] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, x, x, &t[0]));
    MF_GRAD_TRY(mf_grad_const(x, 1, &t[1]));
    MF_GRAD_TRY(mf_binary(MF_OP_SUB, t[0], t[1], &t[2]));
    MF_GRAD_TRY(mf_unary(MF_OP_SQRT, t[2], &t[3]));
    st = mf_binary(MF_OP_DIV, g->doutputs[0], t[3], &dinputs[0]);
done:
    mf_grad_release_n(t, 4);
    return st;
}

/* -dy * y^2 */
MfStatus mf_reciprocal_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *y = g->outputs[0], *t = NULL, *d = NULL;
    MfStatus st = mf_binary(MF_OP_MUL, y, y, &t);
    if (st == MF_OK)
        st = mf_grad_scale(t, -1, &d);
    mf_tensor_release(t);
    return times_dy(g, st, d, dinputs);
}
