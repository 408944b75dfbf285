/* atan2.c — Atan2: elementwise atan2(y, x), the angle of the point (x, y)
 * in (-pi, pi], float32 and float64, with NumPy broadcasting (TensorFlow's
 * Atan2; note the order: y first). Gradient (TensorFlow's math_grad.py):
 * dy * x / (x^2 + y^2) for y and dy * -y / (x^2 + y^2) for x, each summed
 * back to its input's shape. The schema binder makes mf.atan2(y, x) and
 * y:atan2(x). */
#include <math.h>

#include "binary_rows.h"
#include "common.h"
#include "grads_math.h"

static MfStatus atan2_infer(MfOpCall *c)
{
    return mf_infer_broadcast(c, MF_FLOATS, "a float dtype (float32 or float64; use mf.cast)",
                              -1);
}

static MfStatus atan2_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    if (out->dtype == MF_FLOAT32)
        BINARY_ROWS_TO(float, float, atan2f(a, b));
    else
        BINARY_ROWS_TO(double, double, atan2(a, b));
    return MF_OK;
}

/* 'g' (shaped like the output) summed back to the shape of input 'i'. */
static MfStatus to_input(const MfGradCall *g, int i, MfTensor *grad, MfTensor **dinputs)
{
    if (!mf_grad_needs(g, i))
        return MF_OK;
    return mf_grad_unbroadcast(grad, g->call->inputs[i], &dinputs[i]);
}

static MfStatus atan2_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *y = g->call->inputs[0], *x = g->call->inputs[1], *t[7] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, x, x, &t[0]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, y, y, &t[1]));
    MF_GRAD_TRY(mf_binary(MF_OP_ADD, t[0], t[1], &t[2]));
    MF_GRAD_TRY(mf_binary(MF_OP_DIV, g->doutputs[0], t[2], &t[3])); /* dy / (x^2 + y^2) */
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, t[3], x, &t[4]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, t[3], y, &t[5]));
    MF_GRAD_TRY(mf_unary(MF_OP_NEG, t[5], &t[6]));
    MF_GRAD_TRY(to_input(g, 0, t[4], dinputs));
    MF_GRAD_TRY(to_input(g, 1, t[6], dinputs));
done:
    if (st != MF_OK)
        mf_grad_release_n(dinputs, 2);
    mf_grad_release_n(t, 7);
    return st;
}

const MfOpDesc mf_desc_atan2 = {
    .name = "Atan2", .api = "atan2", .arity = 2, .flags = MF_OP_SIMPLE | MF_OP_ELEMENTWISE,
    .infer = atan2_infer, .forward = atan2_forward, .backward = atan2_grad,
    .cost = mf_cost_elementwise, .lua = "atan2", .inputs = "y, x",
    .summary = "elementwise angle of the point (x, y), atan2(y, x) in (-pi, pi] (broadcasting)",
    .topic = "math",
    .details =
        "Elementwise the angle of the point (x, y): atan2(y, x) in (-pi, pi], TensorFlow's Atan2 "
        "(y first), float32 or float64, broadcasting. Gradient: dy * x / (x^2 + y^2) for y, "
        "dy * -y / (x^2 + y^2) for x.",
    .example =
        "mf.atan2(mf.tensor{1, -1}, mf.tensor{0, 0}) --> {1.5708, -1.5708}",
};
