/* grad.c — undoing broadcasting, and running an op's gradient (see grad.h). */
#include "grad.h"

#include "grad_registry.h"
#include "shape.h"
#include "ops/reduce.h"
#include "ops/view.h"

bool mf_grad_unknown_dims(const MfTensor *t)
{
    for (int d = 0; d < t->rank; d++)
        if (t->shape[d] < 0)
            return true;
    return false;
}

/* The op 'op'(t, like) for a shape known only at run time. 'like' is only
 * read (its shape), never changed: the op table takes non-const inputs. */
static MfStatus like_op(MfOpId op, MfTensor *t, const MfTensor *like, MfTensor **out)
{
    MfTensor *in[2] = {t, (MfTensor *)like};
    return mf_op1(op, 2, in, NULL, out);
}

MfStatus mf_grad_unbroadcast(MfTensor *grad, const MfTensor *input, MfTensor **out)
{
    /* Unknown dims may turn out to be 1 (stretched) when the graph runs,
     * even where the static shapes look alike. */
    if (mf_grad_unknown_dims(grad) || mf_grad_unknown_dims(input))
        return like_op(MF_OP_SUM_TO_LIKE, grad, input, out);
    if (mf_shape_equal_t(grad, input)) {
        mf_tensor_retain(grad);
        *out = grad;
        return MF_OK;
    }
    /* Axes of 'grad' that 'input' lacks (leading) or has as 1 (stretched). */
    int64_t axes[MF_MAX_RANK];
    int naxes = 0, lead = grad->rank - input->rank;
    for (int i = 0; i < grad->rank; i++)
        if (i < lead || (input->shape[i - lead] == 1 && grad->shape[i] != 1))
            axes[naxes++] = i;
    MfTensor *summed = NULL;
    MfStatus st = naxes ? mf_reduce(MF_OP_SUM, grad, axes, naxes, true, &summed)
                        : (mf_tensor_retain(grad), summed = grad, MF_OK);
    if (st != MF_OK)
        return st;
    st = mf_reshape(summed, input->rank, input->shape, out);
    mf_tensor_release(summed);
    return st;
}

bool mf_op_differentiable(MfOpId op)
{
    const MfOpDesc *d = mf_op_table[op];
    return !(d->flags & MF_OP_NONDIFF) && d->backward != NULL;
}

MfStatus mf_grad_call(const MfGradCall *g, MfTensor **dinputs)
{
    const MfOpCall *c = g->call;
    for (int i = 0; i < c->ninputs; i++)
        dinputs[i] = NULL;
    if (!g->override && !mf_op_differentiable(c->op))
        return MF_OK;
    MfStatus st = g->override ? g->override->backward(g->override, g, dinputs)
                              : mf_op_table[c->op]->backward(g, dinputs);
    /* a registered gradient is the user's code: its results are checked */
    for (int i = 0; g->override && st == MF_OK && i < c->ninputs; i++)
        st = mf_grad_check_result(g->override, g, i, dinputs[i]);
    if (st != MF_OK) {
        for (int i = 0; i < c->ninputs; i++) {
            mf_tensor_release(dinputs[i]);
            dinputs[i] = NULL;
        }
    }
    return st;
}

MfStatus mf_grad_const(const MfTensor *like, double v, MfTensor **out)
{
    *out = mf_tensor_scalar(like->dtype, v);
    return *out ? MF_OK : mf_err_set(MF_ENOMEM, "gradient: out of memory for a constant");
}

MfStatus mf_grad_scale(MfTensor *t, double k, MfTensor **out)
{
    MfTensor *kt = NULL;
    *out = NULL;
    MfStatus st = mf_grad_const(t, k, &kt);
    if (st == MF_OK)
        st = mf_binary(MF_OP_MUL, t, kt, out);
    mf_tensor_release(kt);
    return st;
}

MfStatus mf_grad_reshape_like(MfTensor *t, const MfTensor *like, MfTensor **out)
{
    if (mf_grad_unknown_dims(like))
        return like_op(MF_OP_RESHAPE_LIKE, t, like, out);
    if (mf_shape_equal_t(t, like)) {
        mf_tensor_retain(t);
        *out = t;
        return MF_OK;
    }
    return mf_reshape(t, like->rank, like->shape, out);
}

MfStatus mf_grad_broadcast_like(MfTensor *t, const MfTensor *like, MfTensor **out)
{
    if (mf_grad_unknown_dims(like))
        return like_op(MF_OP_BROADCAST_TO_LIKE, t, like, out);
    if (mf_shape_equal_t(t, like)) {
        mf_tensor_retain(t);
        *out = t;
        return MF_OK;
    }
    MfAttrs a = mf_attrs_default();
    a.nints = like->rank;
    for (int i = 0; i < like->rank; i++)
        a.ints[i] = like->shape[i];
    return mf_op1(MF_OP_BROADCAST_TO, 1, &t, &a, out);
}

MfStatus mf_grad_zeros_like(const MfTensor *like, MfTensor **out)
{
    MfTensor *zero = NULL;
    MfStatus st = mf_grad_const(like, 0, &zero);
    if (st == MF_OK)
        st = mf_grad_broadcast_like(zero, like, out);
    mf_tensor_release(zero);
    return st;
}

bool mf_grad_is_float(MfDType dt)
{
    return mf_dtype_is_float(dt) || mf_dtype_is_half(dt);
}
