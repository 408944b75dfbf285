/* atanh.c — Atanh: elementwise inverse hyperbolic tangent, float32 and
 * float64, with its gradient dy / (1 - x^2) (TensorFlow's). Everything the
 * op needs is here: kernel, gradient, descriptor (its Lua name and
 * summary); the schema binder (repl/lmf_op.c) makes mf.atanh(x) and
 * x:atanh() from the descriptor. */
#include <math.h>

#include "common.h"
#include "grads_math.h"
#include "unary_loop.h"
#include "vecmath.h"

static MfStatus atanh_forward(const MfOpCall *c, MfTensor **outs)
{
    if (mf_vec_unary(MF_VEC_ATANH, c->inputs[0], outs[0]))
        return MF_OK;
    UNARY_FORWARD(atanhf(a), atanh(a), NOINT);
}

/* dy / (1 - x^2) */
static MfStatus atanh_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = g->call->inputs[0], *t[3] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, x, x, &t[0]));
    MF_GRAD_TRY(mf_grad_const(x, 1, &t[1]));
    MF_GRAD_TRY(mf_binary(MF_OP_SUB, t[1], t[0], &t[2]));
    st = mf_binary(MF_OP_DIV, g->doutputs[0], t[2], &dinputs[0]);
done:
    mf_grad_release_n(t, 3);
    return st;
}

const MfOpDesc mf_desc_atanh = {
    .name = "Atanh", .api = "atanh", .arity = 1, .flags = MF_OP_SIMPLE | MF_OP_ELEMENTWISE,
    .infer = mf_infer_float_like, .forward = atanh_forward, .backward = atanh_grad,
    .cost = mf_cost_elementwise, .lua = "atanh", .inputs = "x",
    .summary = "elementwise inverse hyperbolic tangent (x in (-1, 1))",
    .topic = "math",
    .details =
        "Elementwise the inverse hyperbolic tangent (TensorFlow's Atanh), float32 or float64, "
        "x in (-1, 1). Gradient: dy / (1 - x^2)." MF_VEC_ACCURACY_FLOAT("1.5"),
    .example =
        "mf.atanh(mf.tensor{0})               --> {0}",
};
