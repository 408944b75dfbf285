/* nn_grad.c — gradients of the NN ops (nn.h) and the pooling ops (pool.h),
 * as TensorFlow's nn_grad.py defines them, written with ops so that tapes
 * record them (higher-order gradients) and graph mode builds them
 * (Softmax's and LogSoftmax's are ops of their own, in softmax.c):
 *   cross-entropies: dlogits = dloss * backprop, plus, when the backprop
 *                output is used, the softmax Jacobian applied to its
 *                gradient; dense labels get -dloss * log_softmax(logits)
 *                (TensorFlow's v2), sparse labels none
 *   BiasAdd:     dvalue = dy, dbias = dy summed over all but the bias axis
 *   pooling:     MaxPool -> MaxPoolGrad -> MaxPoolGradGrad -> MaxPoolGrad,
 *                AvgPool -> AvgPoolGrad -> AvgPool (each linear in the
 *                gradient it routes; the routing input x gets none). */
#include "nn.h"

#include "grads_math.h"
#include "pool.h"
#include "reduce.h"
#include "view.h"
#include "window.h"

/* Hands over '*slot' (owned), leaving NULL behind. */
static MfTensor *take(MfTensor **slot)
{
    MfTensor *t = *slot;
    *slot = NULL;
    return t;
}

/* *acc += t, consuming 't' (owned) also on failure. */
static MfStatus accumulate(MfTensor **acc, MfTensor *t)
{
    if (!*acc) {
        *acc = t;
        return MF_OK;
    }
    MfTensor *sum = NULL;
    MfStatus st = mf_binary(MF_OP_ADD, *acc, t, &sum);
    mf_tensor_release(t);
    mf_tensor_release(*acc);
    *acc = sum;
    return st;
}

/* (w - sum(w * s, axis, keepdims)) * s: the softmax Jacobian applied to w. */
static MfStatus softmax_vjp(MfTensor *s, MfTensor *w, int64_t axis, MfTensor **out)
{
    MfTensor *t[3] = {0};
    MfStatus st;
    *out = NULL;
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, w, s, &t[0]));
    MF_GRAD_TRY(mf_reduce(MF_OP_SUM, t[0], &axis, 1, true, &t[1]));
    MF_GRAD_TRY(mf_binary(MF_OP_SUB, w, t[1], &t[2]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, t[2], s, out));
done:
    mf_grad_release_n(t, 3);
    return st;
}

/* The logits' gradient of either cross-entropy op (into '*dl'). */
static MfStatus xent_logits_grad(const MfGradCall *g, MfTensor *dloss_col, MfTensor **dl)
{
    MfTensor *dbp = g->doutputs[1], *t[2] = {0};
    MfStatus st = MF_OK;
    if (dloss_col) {
        MF_GRAD_TRY(mf_binary(MF_OP_MUL, dloss_col, g->outputs[1], &t[0]));
        MF_GRAD_TRY(accumulate(dl, take(&t[0])));
    }
    if (dbp) {
        MF_GRAD_TRY(mf_softmax(g->call->inputs[0], -1, &t[0]));
        MF_GRAD_TRY(softmax_vjp(t[0], dbp, -1, &t[1]));
        MF_GRAD_TRY(accumulate(dl, take(&t[1])));
    }
done:
    mf_grad_release_n(t, 2);
    return st;
}

/* The dense labels' gradient: -dloss * log_softmax(logits) - dbackprop. */
static MfStatus xent_labels_grad(const MfGradCall *g, MfTensor *dloss_col, MfTensor **dz)
{
    MfTensor *dbp = g->doutputs[1], *t[3] = {0};
    MfStatus st = MF_OK;
    if (dloss_col) {
        MF_GRAD_TRY(mf_log_softmax(g->call->inputs[0], -1, &t[0]));
        MF_GRAD_TRY(mf_binary(MF_OP_MUL, dloss_col, t[0], &t[1]));
        MF_GRAD_TRY(mf_unary(MF_OP_NEG, t[1], &t[2]));
        MF_GRAD_TRY(accumulate(dz, take(&t[2])));
    }
    if (dbp) {
        MF_GRAD_TRY(mf_unary(MF_OP_NEG, dbp, &t[2]));
        MF_GRAD_TRY(accumulate(dz, take(&t[2])));
    }
done:
    mf_grad_release_n(t, 3);
    return st;
}

static MfStatus xent_grad(const MfGradCall *g, bool dense, MfTensor **dinputs)
{
    MfTensor *col = NULL;
    MfStatus st = MF_OK;
    if (g->doutputs[0])
        MF_GRAD_TRY(mf_expand_dims(g->doutputs[0], -1, &col));
    if (mf_grad_needs(g, 0))
        MF_GRAD_TRY(xent_logits_grad(g, col, &dinputs[0]));
    if (dense && mf_grad_needs(g, 1))
        MF_GRAD_TRY(xent_labels_grad(g, col, &dinputs[1]));
done:
    mf_tensor_release(col);
    if (st != MF_OK)
        mf_grad_release_n(dinputs, 2);
    return st;
}

MfStatus mf_xent_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return xent_grad(g, true, dinputs);
}

MfStatus mf_sparse_xent_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return xent_grad(g, false, dinputs);
}

MfStatus mf_bias_add_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *dy = g->doutputs[0];
    int rank = dy->rank, bias_axis = g->call->attrs->data_format == MF_NCHW ? 1 : rank - 1;
    int64_t axes[MF_MAX_RANK];
    int naxes = 0;
    for (int i = 0; i < rank; i++)
        if (i != bias_axis)
            axes[naxes++] = i;
    mf_tensor_retain(dy);
    dinputs[0] = dy;
    if (!mf_grad_needs(g, 1))
        return MF_OK;
    if (naxes == 0) {
        mf_tensor_retain(dy);
        dinputs[1] = dy;
        return MF_OK;
    }
    MfStatus st = mf_reduce(MF_OP_SUM, dy, axes, naxes, false, &dinputs[1]);
    if (st != MF_OK)
        mf_grad_release_n(dinputs, 2);
    return st;
}

/* Runs pooling op 'op' on (inputs[0..n)) with the forward call's attributes
 * into 'dinputs[k]'. */
static MfStatus pool_op(const MfGradCall *g, MfOpId op, int n, MfTensor *const *inputs,
                        MfTensor **din)
{
    return mf_op1(op, n, inputs, g->call->attrs, din);
}

MfStatus mf_max_pool_backward(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *in[3] = {g->call->inputs[0], g->outputs[0], g->doutputs[0]};
    return pool_op(g, MF_OP_MAX_POOL_GRAD, 3, in, &dinputs[0]);
}

MfStatus mf_avg_pool_backward(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *in[2] = {g->call->inputs[0], g->doutputs[0]};
    return pool_op(g, MF_OP_AVG_POOL_GRAD, 2, in, &dinputs[0]);
}

MfStatus mf_max_pool_grad_backward(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *const *x = g->call->inputs;
    MfTensor *in[3] = {x[0], x[1], g->doutputs[0]};
    return pool_op(g, MF_OP_MAX_POOL_GRAD_GRAD, 3, in, &dinputs[2]);
}

MfStatus mf_avg_pool_grad_backward(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *dy = g->doutputs[0];
    return pool_op(g, MF_OP_AVG_POOL, 1, &dy, &dinputs[1]);
}

MfStatus mf_max_pool_grad_grad_backward(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *const *x = g->call->inputs;
    MfTensor *in[3] = {x[0], x[1], g->doutputs[0]};
    return pool_op(g, MF_OP_MAX_POOL_GRAD, 3, in, &dinputs[2]);
}
