/* conv_grad.c — gradients of Conv2D, Conv2DBackpropInput and
 * Conv2DBackpropFilter (see conv.h), as TensorFlow's nn_grad.py defines
 * them. The three ops are bilinear and each one's gradients are the other
 * two, so gradients of gradients (second order) are convolutions again:
 *   y  = Conv2D(x, w):               dx = BackpropInput(shape x, w, dy)
 *                                    dw = BackpropFilter(x, shape w, dy)
 *   dx = BackpropInput(sizes, w, d): dw = BackpropFilter(g, shape w, d)
 *                                    dd = Conv2D(g, w)
 *   dw = BackpropFilter(x, sizes, d): dx = BackpropInput(shape x, g, d)
 *                                    dd = Conv2D(x, g)
 * (g is the gradient flowing into the op's output). Every call keeps the
 * forward call's strides, dilations and padding. When the input's shape has
 * unknown dims (graph mode), BackpropInput takes it at run time
 * (Conv2DBackpropInputLike, core/ops/like.c). */
#include "conv.h"

#include "../grad.h"

/* Calls 'op' on (a, b) with the forward call's window attributes and, for
 * the backprops, 'sizes' (the shape of 'like'). Skipped (NULL) when 'need'
 * is false. */
static MfStatus conv_call(const MfGradCall *g, bool need, MfOpId op, MfTensor *a, MfTensor *b,
                          const MfTensor *like, MfTensor **out)
{
    *out = NULL;
    if (!need)
        return MF_OK;
    MfAttrs at = *g->call->attrs;
    at.nints = 0;
    if (like && op == MF_OP_CONV2D_BACKPROP_INPUT && mf_grad_unknown_dims(like)) {
        /* graph mode, the input's shape known only at run time */
        MfTensor *in3[3] = {a, b, (MfTensor *)like};
        return mf_op1(MF_OP_CONV2D_BACKPROP_INPUT_LIKE, 3, in3, &at, out);
    }
    if (like) {
        at.nints = 4;
        for (int i = 0; i < 4; i++)
            at.ints[i] = like->shape[i];
    }
    MfTensor *in[2] = {a, b};
    return mf_op1(op, 2, in, &at, out);
}

/* Releases the first gradient when the second failed. */
static MfStatus finish(MfStatus st, MfTensor **dinputs)
{
    if (st != MF_OK) {
        mf_tensor_release(dinputs[0]);
        dinputs[0] = NULL;
    }
    return st;
}

MfStatus mf_conv2d_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = g->call->inputs[0], *w = g->call->inputs[1], *dy = g->doutputs[0];
    MfStatus st = conv_call(g, mf_grad_needs(g, 0), MF_OP_CONV2D_BACKPROP_INPUT, w, dy, x,
                            &dinputs[0]);
    if (st == MF_OK)
        st = conv_call(g, mf_grad_needs(g, 1), MF_OP_CONV2D_BACKPROP_FILTER, x, dy, w,
                       &dinputs[1]);
    return finish(st, dinputs);
}

/* Inputs (filter, out_backprop); output dx. */
MfStatus mf_conv2d_backprop_input_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *w = g->call->inputs[0], *d = g->call->inputs[1], *gz = g->doutputs[0];
    MfStatus st = conv_call(g, mf_grad_needs(g, 0), MF_OP_CONV2D_BACKPROP_FILTER, gz, d, w,
                            &dinputs[0]);
    if (st == MF_OK)
        st = conv_call(g, mf_grad_needs(g, 1), MF_OP_CONV2D, gz, w, NULL, &dinputs[1]);
    return finish(st, dinputs);
}

/* Inputs (input, out_backprop); output dw. */
MfStatus mf_conv2d_backprop_filter_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = g->call->inputs[0], *d = g->call->inputs[1], *gz = g->doutputs[0];
    MfStatus st = conv_call(g, mf_grad_needs(g, 0), MF_OP_CONV2D_BACKPROP_INPUT, gz, d, x,
                            &dinputs[0]);
    if (st == MF_OK)
        st = conv_call(g, mf_grad_needs(g, 1), MF_OP_CONV2D, x, gz, NULL, &dinputs[1]);
    return finish(st, dinputs);
}
