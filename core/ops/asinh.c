/* asinh.c — Asinh: elementwise inverse hyperbolic sine, float32 and
 * float64, with its gradient dy / sqrt(x^2 + 1) (TensorFlow's). Everything
 * the op needs is here: kernel, gradient, descriptor (its Lua name, help
 * and example); the schema binder (repl/lmf_op.c) makes mf.asinh(x) and
 * x:asinh() from the descriptor. */
#include <math.h>

#include "common.h"
#include "grads_math.h"
#include "unary_loop.h"
#include "vecmath.h"

static MfStatus asinh_forward(const MfOpCall *c, MfTensor **outs)
{
    if (mf_vec_unary(MF_VEC_ASINH, c->inputs[0], outs[0]))
        return MF_OK;
    UNARY_FORWARD(asinhf(a), asinh(a), NOINT);
}

/* dy / sqrt(x^2 + 1), in ops so that it has a gradient too */
static MfStatus asinh_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = g->call->inputs[0], *t[4] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, x, x, &t[0]));
    MF_GRAD_TRY(mf_grad_const(x, 1, &t[1]));
    MF_GRAD_TRY(mf_binary(MF_OP_ADD, t[0], t[1], &t[2]));
    MF_GRAD_TRY(mf_unary(MF_OP_SQRT, t[2], &t[3]));
    st = mf_binary(MF_OP_DIV, g->doutputs[0], t[3], &dinputs[0]);
done:
    mf_grad_release_n(t, 4);
    return st;
}

const MfOpDesc mf_desc_asinh = {
    .name = "Asinh", .api = "asinh", .arity = 1, .flags = MF_OP_SIMPLE | MF_OP_ELEMENTWISE,
    .infer = mf_infer_float_like, .forward = asinh_forward, .backward = asinh_grad,
    .cost = mf_cost_elementwise, .lua = "asinh", .inputs = "x",
    .summary = "elementwise inverse hyperbolic sine",
    .topic = "math",
    .details =
        "Elementwise the inverse hyperbolic sine (TensorFlow's Asinh), float32 or float64. "
        "Gradient: dy / sqrt(x^2 + 1)." MF_VEC_ACCURACY_FLOAT("2"),
    .example =
        "mf.asinh(mf.tensor{0})               --> {0}",
};
