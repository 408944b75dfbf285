/* binary_grad.c — gradients of the elementwise binary ops (AddV2, Sub, Mul,
 * RealDiv, FloorMod, Pow, Maximum, Minimum), as TensorFlow's math_grad.py
 * defines them. Each computes the gradient for the broadcast output shape
 * and 'finish' sums it back to each input's shape (mf_grad_unbroadcast). */
#include "grads_math.h"

#include "compare.h"

/* Unbroadcasts 'ga' and 'gb' (owned, consumed; NULL: no gradient) into
 * 'dinputs[0]' and 'dinputs[1]'. */
static MfStatus finish(const MfGradCall *g, MfTensor *ga, MfTensor *gb, MfTensor **dinputs)
{
    MfTensor *const *in = g->call->inputs;
    MfStatus st = MF_OK;
    if (ga)
        st = mf_grad_unbroadcast(ga, in[0], &dinputs[0]);
    if (st == MF_OK && gb)
        st = mf_grad_unbroadcast(gb, in[1], &dinputs[1]);
    mf_tensor_release(ga);
    mf_tensor_release(gb);
    if (st != MF_OK)
        mf_grad_release_n(dinputs, 2);
    return st;
}

/* Takes a new reference to 't' (for gradients that pass 'dy' through). */
static MfTensor *ref(MfTensor *t)
{
    mf_tensor_retain(t);
    return t;
}

MfStatus mf_add_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *dy = g->doutputs[0];
    return finish(g, ref(dy), ref(dy), dinputs);
}

MfStatus mf_sub_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *gb = NULL;
    MfStatus st = mf_unary(MF_OP_NEG, g->doutputs[0], &gb);
    if (st != MF_OK)
        return st;
    return finish(g, ref(g->doutputs[0]), gb, dinputs);
}

MfStatus mf_mul_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *const *in = g->call->inputs;
    MfTensor *ga = NULL, *gb = NULL;
    MfStatus st = MF_OK;
    if (mf_grad_needs(g, 0))
        st = mf_binary(MF_OP_MUL, g->doutputs[0], in[1], &ga);
    if (st == MF_OK && mf_grad_needs(g, 1))
        st = mf_binary(MF_OP_MUL, in[0], g->doutputs[0], &gb);
    if (st != MF_OK) {
        mf_tensor_release(ga);
        return st;
    }
    return finish(g, ga, gb, dinputs);
}

/* d(a/b) = dy / b, and dy * (-a / b / b) for b. */
MfStatus mf_div_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *const *in = g->call->inputs;
    MfTensor *dy = g->doutputs[0], *t[5] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_binary(MF_OP_DIV, dy, in[1], &t[0]));
    MF_GRAD_TRY(mf_unary(MF_OP_NEG, in[0], &t[1]));
    MF_GRAD_TRY(mf_binary(MF_OP_DIV, t[1], in[1], &t[2]));
    MF_GRAD_TRY(mf_binary(MF_OP_DIV, t[2], in[1], &t[3]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, dy, t[3], &t[4]));
    st = finish(g, t[0], t[4], dinputs);
    t[0] = t[4] = NULL;
done:
    mf_grad_release_n(t, 5);
    return st;
}

/* a mod b = a - floor(a / b) * b: dy for a, -dy * floor(a / b) for b. The
 * quotient is floor division for integers already. */
MfStatus mf_mod_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *const *in = g->call->inputs;
    MfTensor *dy = g->doutputs[0], *t[4] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_binary(MF_OP_DIV, in[0], in[1], &t[0]));
    MF_GRAD_TRY(mf_unary(MF_OP_FLOOR, t[0], &t[1]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, dy, t[1], &t[2]));
    MF_GRAD_TRY(mf_unary(MF_OP_NEG, t[2], &t[3]));
    st = finish(g, ref(dy), t[3], dinputs);
    t[3] = NULL;
done:
    mf_grad_release_n(t, 4);
    return st;
}

/* dy * log(a) * a^b for b, with log(a) taken as 0 where a <= 0 (and computed
 * on a safe value there, so second derivatives stay finite), as TensorFlow. */
static MfStatus pow_grad_exponent(const MfGradCall *g, MfTensor **gb)
{
    MfTensor *a = g->call->inputs[0], *t[7] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_grad_const(a, 0, &t[0]));
    MF_GRAD_TRY(mf_grad_const(a, 1, &t[1]));
    MF_GRAD_TRY(mf_binary(MF_OP_GREATER, a, t[0], &t[2]));
    MF_GRAD_TRY(mf_where(t[2], a, t[1], &t[3]));
    MF_GRAD_TRY(mf_unary(MF_OP_LOG, t[3], &t[4]));
    MF_GRAD_TRY(mf_where(t[2], t[4], t[0], &t[5]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, g->outputs[0], t[5], &t[6]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, g->doutputs[0], t[6], gb));
done:
    mf_grad_release_n(t, 7);
    return st;
}

/* dy * b * a^(b - 1) for a. Integer powers have no gradient (a^(b - 1)
 * would be an integer to a negative power at b = 0). */
MfStatus mf_pow_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *const *in = g->call->inputs;
    MfTensor *t[5] = {0}, *gb = NULL;
    MfStatus st = MF_OK;
    if (!mf_grad_is_float(in[0]->dtype))
        return MF_OK;
    MF_GRAD_TRY(mf_grad_const(in[1], 1, &t[0]));
    MF_GRAD_TRY(mf_binary(MF_OP_SUB, in[1], t[0], &t[1]));
    MF_GRAD_TRY(mf_binary(MF_OP_POW, in[0], t[1], &t[2]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, in[1], t[2], &t[3]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, g->doutputs[0], t[3], &t[4]));
    if (mf_grad_needs(g, 1))
        MF_GRAD_TRY(pow_grad_exponent(g, &gb));
    st = finish(g, t[4], gb, dinputs);
    t[4] = NULL;
done:
    mf_grad_release_n(t, 5);
    return st;
}

/* dy goes to a where 'cmp(a, b)' holds (ties go to a), else to b. */
static MfStatus select_side(const MfGradCall *g, MfOpId cmp, MfTensor **dinputs)
{
    MfTensor *const *in = g->call->inputs;
    MfTensor *dy = g->doutputs[0], *t[4] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_binary(cmp, in[0], in[1], &t[0]));
    MF_GRAD_TRY(mf_grad_const(dy, 0, &t[1]));
    MF_GRAD_TRY(mf_where(t[0], dy, t[1], &t[2]));
    MF_GRAD_TRY(mf_where(t[0], t[1], dy, &t[3]));
    st = finish(g, t[2], t[3], dinputs);
    t[2] = t[3] = NULL;
done:
    mf_grad_release_n(t, 4);
    return st;
}

MfStatus mf_maximum_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return select_side(g, MF_OP_GREATER_EQUAL, dinputs);
}

MfStatus mf_minimum_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return select_side(g, MF_OP_LESS_EQUAL, dinputs);
}

/* 2 dy (x - y) for x, its negative for y (TensorFlow's math_grad.py) */
MfStatus mf_squared_difference_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *const *in = g->call->inputs;
    MfTensor *diff = NULL, *t = NULL, *ga = NULL, *gb = NULL;
    MfStatus st = mf_binary(MF_OP_SUB, in[0], in[1], &diff);
    if (st == MF_OK)
        st = mf_binary(MF_OP_MUL, g->doutputs[0], diff, &t);
    if (st == MF_OK)
        st = mf_grad_scale(t, 2, &ga);
    if (st == MF_OK && mf_grad_needs(g, 1))
        st = mf_unary(MF_OP_NEG, ga, &gb);
    mf_tensor_release(diff);
    mf_tensor_release(t);
    if (st != MF_OK) {
        mf_tensor_release(ga);
        return st;
    }
    if (!mf_grad_needs(g, 0)) {
        mf_tensor_release(ga);
        ga = NULL;
    }
    return finish(g, ga, gb, dinputs);
}
