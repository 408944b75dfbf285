/* linalg_grad.c — gradients of MatMul, BatchMatMulV2, Trace and the view
 * ops Transpose, Reshape, ExpandDims, Squeeze (see linalg_grad.h).
 *
 * As TensorFlow's _MatMulGrad: for y = op(a) x op(b) the gradients are
 * products of dy with the other operand, the transposes folded into the
 * product's flags rather than made as copies. BatchMatMulV2 then sums the
 * gradient of an operand over the batches it was broadcast along
 * ('mf_grad_unbroadcast'). Trace's gradient is dy times the identity matrix
 * of the input's shape; the view ops undo their view. */
#include "linalg_grad.h"

#include "../create.h"
#include "../grad.h"
#include "view.h"

/* op(x) x op(y) with 'op' (MatMul or BatchMatMulV2, as the forward call). */
static MfStatus product(MfOpId op, MfTensor *x, MfTensor *y, bool tx, bool ty, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    a.transpose_a = tx;
    a.transpose_b = ty;
    MfTensor *in[2] = {x, y};
    return mf_op1(op, 2, in, &a, out);
}

/* da and db of y = op(a) x op(b), before any unbroadcasting:
 *   plain:      da = dy b^T     db = a^T dy
 *   tb:         da = dy b       db = dy^T a
 *   ta:         da = b dy^T     db = a dy
 *   ta and tb:  da = b^T dy^T   db = dy^T a^T
 * An operand whose gradient is not wanted (the input batch of a layer) gets
 * none: that product would be a third of a dense layer's backward FLOPs. */
static MfStatus product_grads(const MfGradCall *g, MfTensor **da, MfTensor **db)
{
    const MfOpCall *c = g->call;
    MfTensor *a = c->inputs[0], *b = c->inputs[1], *dy = g->doutputs[0];
    bool ta = c->attrs->transpose_a, tb = c->attrs->transpose_b;
    MfStatus st = MF_OK;
    if (mf_grad_needs(g, 0))
        st = ta ? product(c->op, b, dy, tb, true, da) : product(c->op, dy, b, false, !tb, da);
    if (st != MF_OK || !mf_grad_needs(g, 1))
        return st;
    st = tb ? product(c->op, dy, a, true, ta, db) : product(c->op, a, dy, !ta, false, db);
    if (st != MF_OK) {
        mf_tensor_release(*da);
        *da = NULL;
    }
    return st;
}

MfStatus mf_matmul_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return product_grads(g, &dinputs[0], &dinputs[1]);
}

MfStatus mf_batch_matmul_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *d[2] = {NULL, NULL};
    MfStatus st = product_grads(g, &d[0], &d[1]);
    for (int i = 0; i < 2 && st == MF_OK; i++)
        if (d[i]) /* NULL: not wanted */
            st = mf_grad_unbroadcast(d[i], g->call->inputs[i], &dinputs[i]);
    mf_tensor_release(d[0]);
    mf_tensor_release(d[1]);
    if (st != MF_OK) {
        mf_tensor_release(dinputs[0]);
        dinputs[0] = NULL;
    }
    return st;
}

/* d trace(x) / dx = dy * eye, shaped like x (also when x is not square). */
MfStatus mf_trace_grad(const MfGradCall *g, MfTensor **dinputs)
{
    const MfTensor *x = g->call->inputs[0];
    MfTensor *eye = NULL;
    MfStatus st = mf_create_eye(x->dtype, x->shape[0], x->shape[1], &eye);
    if (st != MF_OK)
        return st;
    st = mf_binary(MF_OP_MUL, g->doutputs[0], eye, &dinputs[0]);
    mf_tensor_release(eye);
    return st;
}

/* Transposes dy back by the inverse permutation. */
MfStatus mf_transpose_grad(const MfGradCall *g, MfTensor **dinputs)
{
    const MfAttrs *a = g->call->attrs;
    MfTensor *dy = g->doutputs[0];
    if (a->naxes == 0) /* reversing the axes is its own inverse */
        return mf_transpose(dy, NULL, 0, &dinputs[0]);
    int64_t inv[MF_MAX_RANK];
    for (int i = 0; i < a->naxes; i++)
        inv[a->axes[i]] = i;
    return mf_transpose(dy, inv, a->naxes, &dinputs[0]);
}

MfStatus mf_reshape_back_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return mf_grad_reshape_like(g->doutputs[0], g->call->inputs[0], &dinputs[0]);
}
