/* output_grad.c — the gradients of Sigmoid and Tanh from their outputs as
 * single ops, as TensorFlow's SigmoidGrad and TanhGrad:
 *
 *   SigmoidGrad(dy, y) = dy * (y * (1 - y))
 *   TanhGrad(dy, y)    = dy * (1 - y * y)
 *
 * (moonflow's gradient ops take (gradients, features) in that order, as
 * ReluGrad and GeluGrad; TensorFlow's take (y, dy).) One pass over memory
 * where the composition of three ops they replace (Sub, Mul, Mul) wrote
 * two temporaries and read the tensor five times: sigmoid's gradient on 4M
 * elements took 2.4 times PyTorch's. The expression and its order of
 * rounding are the composition's, so the values are the same bits. float32
 * and float64, one shape (no broadcasting: the gradient is shaped like the
 * activation); large calls split over the worker pool (MF_OP_ELEMENTWISE).
 *
 * Their own gradients (TensorFlow's _SigmoidGradGrad, _TanhGradGrad),
 * written with ops, so second derivatives work:
 *   SigmoidGrad: d dy = SigmoidGrad(ddx, y), d y = ddx * dy * (1 - 2 y)
 *   TanhGrad:    d dy = TanhGrad(ddx, y),    d y = ddx * dy * (-2 y) */
#include "binary_rows.h"
#include "common.h"
#include "grads_math.h"

static bool is_sigmoid(const MfOpCall *c)
{
    return c->op == MF_OP_SIGMOID_GRAD;
}

static MfStatus output_grad_infer(MfOpCall *c)
{
    return mf_infer_grad_pair(c, MF_FLOATS, "a float dtype (float32 or float64)");
}

/* inputs: 'a' the incoming gradient, 'b' the forward output */
static MfStatus output_grad_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *out = outs[0];
    bool sig = is_sigmoid(c);
    if (out->dtype == MF_FLOAT32 && sig)
        BINARY_ROWS_TO(float, float, a * (b * (1.0f - b)));
    else if (out->dtype == MF_FLOAT32)
        BINARY_ROWS_TO(float, float, a * (1.0f - b * b));
    else if (sig)
        BINARY_ROWS_TO(double, double, a * (b * (1.0 - b)));
    else
        BINARY_ROWS_TO(double, double, a * (1.0 - b * b));
    return MF_OK;
}

/* ddx * dy * (1 - 2 y) (sigmoid) or ddx * dy * (-2 y) (tanh) */
static MfStatus output_grad_of_y(const MfGradCall *g, MfTensor **out)
{
    MfTensor *dy = g->call->inputs[0], *y = g->call->inputs[1], *t[4] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_grad_scale(y, -2, &t[0]));
    MfTensor *factor = t[0];
    if (is_sigmoid(g->call)) {
        MF_GRAD_TRY(mf_grad_const(y, 1, &t[1]));
        MF_GRAD_TRY(mf_binary(MF_OP_ADD, t[1], t[0], &t[2]));
        factor = t[2];
    }
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, g->doutputs[0], dy, &t[3]));
    st = mf_binary(MF_OP_MUL, t[3], factor, out);
done:
    mf_grad_release_n(t, 4);
    return st;
}

static MfStatus output_grad_backward(const MfGradCall *g, MfTensor **dinputs)
{
    MfStatus st = MF_OK;
    if (mf_grad_needs(g, 0)) {
        MfTensor *in[2] = {g->doutputs[0], g->call->inputs[1]};
        st = mf_op1(g->call->op, 2, in, NULL, &dinputs[0]);
    }
    if (st == MF_OK && mf_grad_needs(g, 1))
        st = output_grad_of_y(g, &dinputs[1]);
    if (st != MF_OK)
        mf_grad_release_n(dinputs, 2);
    return st;
}

MfStatus mf_output_grad(MfOpId op, MfTensor *dy, MfTensor *y, MfTensor **out)
{
    MfTensor *in[2] = {dy, y};
    return mf_op1(op, 2, in, NULL, out);
}

const MfOpDesc mf_desc_sigmoid_grad = {
    .name = "SigmoidGrad", .api = "sigmoid_grad", .arity = 2, .flags = MF_OP_ELEMENTWISE,
    .infer = output_grad_infer, .forward = output_grad_forward,
    .backward = output_grad_backward, .cost = mf_cost_elementwise,
};

const MfOpDesc mf_desc_tanh_grad = {
    .name = "TanhGrad", .api = "tanh_grad", .arity = 2, .flags = MF_OP_ELEMENTWISE,
    .infer = output_grad_infer, .forward = output_grad_forward,
    .backward = output_grad_backward, .cost = mf_cost_elementwise,
};
