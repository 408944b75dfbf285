/* unary_grad.c — gradients of the elementwise unary ops (Neg, Abs, Square,
 * Sqrt, Rsqrt, Exp, Log, Log1p, Sin, Cos, Tanh, Sigmoid, Relu, Softplus) and
 * of the compare family's differentiable ops (SelectV2, Cast), as
 * TensorFlow's math_grad.py / array_grad.py define them. Where TensorFlow
 * writes the derivative in terms of the output (exp, sqrt, tanh, ...), so do
 * we: an outer tape then sees the output's own dependence on x. */
#include "grads_math.h"

#include "compare.h"
#include "nn.h"

/* dinputs[0] = dy * d, consuming 'd' (owned; NULL when computing it failed,
 * with 'st' its status). */
static MfStatus times_dy(const MfGradCall *g, MfStatus st, MfTensor *d, MfTensor **dinputs)
{
    if (st == MF_OK)
        st = mf_binary(MF_OP_MUL, g->doutputs[0], d, &dinputs[0]);
    mf_tensor_release(d);
    return st;
}

static MfTensor *x_of(const MfGradCall *g)
{
    return g->call->inputs[0];
}

MfStatus mf_neg_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return mf_unary(MF_OP_NEG, g->doutputs[0], &dinputs[0]);
}

MfStatus mf_abs_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *d = NULL;
    MfStatus st = mf_unary(MF_OP_SIGN, x_of(g), &d);
    return times_dy(g, st, d, dinputs);
}

MfStatus mf_square_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *d = NULL;
    MfStatus st = mf_grad_scale(x_of(g), 2, &d);
    return times_dy(g, st, d, dinputs);
}

/* dy * 0.5 / y */
MfStatus mf_sqrt_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *t = NULL;
    MfStatus st = mf_binary(MF_OP_DIV, g->doutputs[0], g->outputs[0], &t);
    if (st == MF_OK)
        st = mf_grad_scale(t, 0.5, &dinputs[0]);
    mf_tensor_release(t);
    return st;
}

/* dy * -0.5 * y^3 */
MfStatus mf_rsqrt_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *y = g->outputs[0], *t[3] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, y, y, &t[0]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, t[0], y, &t[1]));
    MF_GRAD_TRY(mf_grad_scale(t[1], -0.5, &t[2]));
    st = times_dy(g, st, t[2], dinputs);
    t[2] = NULL;
done:
    mf_grad_release_n(t, 3);
    return st;
}

MfStatus mf_exp_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return mf_binary(MF_OP_MUL, g->doutputs[0], g->outputs[0], &dinputs[0]);
}

MfStatus mf_log_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return mf_binary(MF_OP_DIV, g->doutputs[0], x_of(g), &dinputs[0]);
}

/* dy / (1 + x) */
MfStatus mf_log1p_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *one = NULL, *t = NULL;
    MfStatus st = mf_grad_const(x_of(g), 1, &one);
    if (st == MF_OK)
        st = mf_binary(MF_OP_ADD, one, x_of(g), &t);
    if (st == MF_OK)
        st = mf_binary(MF_OP_DIV, g->doutputs[0], t, &dinputs[0]);
    mf_tensor_release(one);
    mf_tensor_release(t);
    return st;
}

MfStatus mf_sin_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *d = NULL;
    MfStatus st = mf_unary(MF_OP_COS, x_of(g), &d);
    return times_dy(g, st, d, dinputs);
}

/* dy * -sin(x) */
MfStatus mf_cos_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *s = NULL, *d = NULL;
    MfStatus st = mf_unary(MF_OP_SIN, x_of(g), &s);
    if (st == MF_OK)
        st = mf_unary(MF_OP_NEG, s, &d);
    mf_tensor_release(s);
    return times_dy(g, st, d, dinputs);
}

/* dy * (1 - y*y) and dy * y * (1 - y): one op each (output_grad.c) */
MfStatus mf_tanh_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return mf_output_grad(MF_OP_TANH_GRAD, g->doutputs[0], g->outputs[0], &dinputs[0]);
}

MfStatus mf_sigmoid_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return mf_output_grad(MF_OP_SIGMOID_GRAD, g->doutputs[0], g->outputs[0], &dinputs[0]);
}

/* dy where x > 0, else 0: the fused op ReluGrad (nn_relu.c). */
MfStatus mf_relu_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return mf_relu_backprop(g->doutputs[0], x_of(g), &dinputs[0]);
}

MfStatus mf_softplus_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *d = NULL;
    MfStatus st = mf_unary(MF_OP_SIGMOID, x_of(g), &d);
    return times_dy(g, st, d, dinputs);
}

/* where(cond, a, b): dy to a where cond holds, to b elsewhere, each summed
 * back to its input's shape; the condition gets none. */
MfStatus mf_select_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *const *in = g->call->inputs;
    MfTensor *dy = g->doutputs[0], *t[3] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_grad_const(dy, 0, &t[0]));
    MF_GRAD_TRY(mf_where(in[0], dy, t[0], &t[1]));
    MF_GRAD_TRY(mf_where(in[0], t[0], dy, &t[2]));
    MF_GRAD_TRY(mf_grad_unbroadcast(t[1], in[1], &dinputs[1]));
    MF_GRAD_TRY(mf_grad_unbroadcast(t[2], in[2], &dinputs[2]));
done:
    if (st != MF_OK)
        mf_grad_release_n(dinputs, 3);
    mf_grad_release_n(t, 3);
    return st;
}

/* Between float dtypes dy is cast back to the input's dtype; a cast to or
 * from an integer or bool passes no gradient (NULL), as TensorFlow. */
MfStatus mf_cast_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfDType from = x_of(g)->dtype, to = g->call->attrs->dtype;
    if (!mf_grad_is_float(from) || !mf_grad_is_float(to))
        return MF_OK;
    return mf_cast(g->doutputs[0], from, &dinputs[0]);
}
