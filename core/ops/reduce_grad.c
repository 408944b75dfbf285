/* reduce_grad.c — gradients of the reductions (Sum, Mean, Max, Min, Prod),
 * as TensorFlow's math_grad.py defines them: dy is reshaped to the input's
 * rank with the reduced axes kept as 1, then spread over the input.
 *
 *   Sum   dx = broadcast(dy)
 *   Mean  dx = broadcast(dy) / (elements per output)
 *   Max, Min  dx = dy * mask / count, mask = (x == broadcast(y)): the
 *         gradient is shared equally among tied extremes.
 *   Prod  dx = dy * (product of the other elements), computed without
 *         dividing by zero: with no zero in the group it is y / x; with one
 *         zero, the product of the non-zeros goes to the zero's place and 0
 *         elsewhere; with two or more zeros it is 0 everywhere.
 *
 * Element counts are taken from the static input shape; with unknown (-1)
 * dims (graph mode) Mean counts at run time (Size nodes) and the keepdims
 * shape is rebuilt with ExpandDims. */
#include "grads_math.h"

#include "../shape.h"
#include "compare.h"
#include "reduce.h"
#include "view.h"

/* The reduced axes of the call (0-based, normalised) into 'axes'; returns
 * how many, and fills 'kshape' with the input's shape where reduced axes
 * are 1 (the output's shape with keepdims). */
static int reduced_axes(const MfOpCall *c, int64_t *axes, int64_t *kshape)
{
    const MfTensor *x = c->inputs[0];
    const MfAttrs *a = c->attrs;
    bool red[MF_MAX_RANK] = {false};
    for (int i = 0; i < x->rank; i++)
        red[i] = a->all_axes;
    for (int i = 0; !a->all_axes && i < a->naxes; i++)
        red[a->axes[i] < 0 ? a->axes[i] + x->rank : a->axes[i]] = true;
    int n = 0;
    for (int i = 0; i < x->rank; i++) {
        kshape[i] = red[i] ? 1 : x->shape[i];
        if (red[i])
            axes[n++] = i;
    }
    return n;
}

/* With unknown dims (graph mode) the keepdims shape is not known: the
 * reduced axes are put back one by one (ExpandDims, a view), in increasing
 * order so each lands where it was. */
static MfStatus expand_reduced(MfTensor *t, const int64_t *axes, int naxes, MfTensor **out)
{
    MfTensor *cur = t;
    mf_tensor_retain(cur);
    for (int i = 0; i < naxes; i++) {
        MfTensor *next = NULL;
        MfStatus st = mf_expand_dims(cur, axes[i], &next);
        mf_tensor_release(cur);
        if (st != MF_OK)
            return st;
        cur = next;
    }
    *out = cur;
    return MF_OK;
}

/* 't' (shaped like the output) reshaped to the keepdims shape. */
static MfStatus keepdims(const MfGradCall *g, MfTensor *t, MfTensor **out)
{
    int64_t axes[MF_MAX_RANK], kshape[MF_MAX_RANK];
    const MfTensor *x = g->call->inputs[0];
    int naxes = reduced_axes(g->call, axes, kshape);
    if (mf_grad_unknown_dims(x))
        return t->rank == x->rank ? (mf_tensor_retain(t), *out = t, MF_OK)
                                  : expand_reduced(t, axes, naxes, out);
    if (mf_shape_equal(t->rank, t->shape, x->rank, kshape)) {
        mf_tensor_retain(t);
        *out = t;
        return MF_OK;
    }
    return mf_reshape(t, x->rank, kshape, out);
}

/* broadcast(dy * k) to the input's shape. */
static MfStatus spread(const MfGradCall *g, double k, MfTensor **dinputs)
{
    MfTensor *t[2] = {0};
    MfStatus st;
    MF_GRAD_TRY(keepdims(g, g->doutputs[0], &t[0]));
    if (k != 1)
        MF_GRAD_TRY(mf_grad_scale(t[0], k, &t[1]));
    st = mf_grad_broadcast_like(t[1] ? t[1] : t[0], g->call->inputs[0], &dinputs[0]);
done:
    mf_grad_release_n(t, 2);
    return st;
}

MfStatus mf_sum_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return spread(g, 1, dinputs);
}

/* The elements per output as a scalar of x's dtype, counted when the graph
 * runs: Cast(Size(x) / Maximum(Size(y), 1)). Then 1 / count. */
static MfStatus runtime_inverse_count(const MfGradCall *g, MfTensor **out)
{
    MfTensor *t[7] = {0};
    MfTensor *x = g->call->inputs[0];
    MfStatus st;
    MF_GRAD_TRY(mf_unary(MF_OP_SIZE, x, &t[0]));
    MF_GRAD_TRY(mf_unary(MF_OP_SIZE, g->outputs[0], &t[1]));
    t[2] = mf_tensor_scalar(MF_INT32, 1);
    if (!t[2]) {
        st = mf_err_nomem("reduce_mean gradient", sizeof(int32_t));
        goto done;
    }
    MF_GRAD_TRY(mf_binary(MF_OP_MAXIMUM, t[1], t[2], &t[3]));
    MF_GRAD_TRY(mf_binary(MF_OP_DIV, t[0], t[3], &t[4]));
    MF_GRAD_TRY(mf_cast(t[4], x->dtype, &t[5]));
    MF_GRAD_TRY(mf_grad_const(x, 1, &t[6]));
    st = mf_binary(MF_OP_DIV, t[6], t[5], out);
done:
    mf_grad_release_n(t, 7);
    return st;
}

/* Mean with unknown dims: broadcast(dy * (1 / count)), count at run time. */
static MfStatus mean_grad_runtime(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *t[3] = {0};
    MfStatus st;
    MF_GRAD_TRY(runtime_inverse_count(g, &t[0]));
    MF_GRAD_TRY(keepdims(g, g->doutputs[0], &t[1]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, t[1], t[0], &t[2]));
    st = mf_grad_broadcast_like(t[2], g->call->inputs[0], &dinputs[0]);
done:
    mf_grad_release_n(t, 3);
    return st;
}

MfStatus mf_mean_grad(const MfGradCall *g, MfTensor **dinputs)
{
    if (mf_grad_unknown_dims(g->call->inputs[0]))
        return mean_grad_runtime(g, dinputs);
    int64_t nx = mf_tensor_numel(g->call->inputs[0]), ny = mf_tensor_numel(g->outputs[0]);
    int64_t count = ny > 0 ? nx / ny : 0;
    return spread(g, count > 0 ? 1.0 / (double)count : 1.0, dinputs);
}

/* Max and Min: dy shared among the elements equal to the result. */
static MfStatus extreme_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = g->call->inputs[0], *t[6] = {0};
    int64_t axes[MF_MAX_RANK], kshape[MF_MAX_RANK];
    int naxes = reduced_axes(g->call, axes, kshape);
    MfStatus st;
    MF_GRAD_TRY(keepdims(g, g->outputs[0], &t[0]));
    MF_GRAD_TRY(mf_binary(MF_OP_EQUAL, x, t[0], &t[1]));
    MF_GRAD_TRY(mf_cast(t[1], x->dtype, &t[2]));
    MF_GRAD_TRY(mf_reduce(MF_OP_SUM, t[2], axes, naxes, true, &t[3]));
    MF_GRAD_TRY(keepdims(g, g->doutputs[0], &t[4]));
    MF_GRAD_TRY(mf_binary(MF_OP_DIV, t[4], t[3], &t[5]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, t[2], t[5], &dinputs[0]));
done:
    mf_grad_release_n(t, 6);
    return st;
}

MfStatus mf_max_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return extreme_grad(g, dinputs);
}

MfStatus mf_min_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return extreme_grad(g, dinputs);
}

/* Prod, part 1: 'isz' = (x == 0), 'safe' = x with zeros replaced by 1,
 * 'pnz' = product of 'safe' and 'nz' = number of zeros (both keepdims). */
static MfStatus prod_parts(const MfGradCall *g, MfTensor **zero, MfTensor **isz,
                           MfTensor **safe, MfTensor **pnz, MfTensor **nz)
{
    MfTensor *x = g->call->inputs[0], *one = NULL, *f = NULL;
    int64_t axes[MF_MAX_RANK], kshape[MF_MAX_RANK];
    int naxes = reduced_axes(g->call, axes, kshape);
    MfStatus st;
    MF_GRAD_TRY(mf_grad_const(x, 0, zero));
    MF_GRAD_TRY(mf_grad_const(x, 1, &one));
    MF_GRAD_TRY(mf_binary(MF_OP_EQUAL, x, *zero, isz));
    MF_GRAD_TRY(mf_where(*isz, one, x, safe));
    MF_GRAD_TRY(mf_reduce(MF_OP_PROD, *safe, axes, naxes, true, pnz));
    MF_GRAD_TRY(mf_cast(*isz, x->dtype, &f));
    MF_GRAD_TRY(mf_reduce(MF_OP_SUM, f, axes, naxes, true, nz));
done:
    mf_tensor_release(one);
    mf_tensor_release(f);
    return st;
}

/* Prod, part 2: the product of the other elements of each group. */
static MfStatus prod_others(MfTensor *const *p, MfTensor **out)
{
    MfTensor *zero = p[0], *isz = p[1], *safe = p[2], *pnz = p[3], *nz = p[4];
    MfTensor *t[6] = {0};
    MfStatus st;
    MF_GRAD_TRY(mf_grad_const(nz, 1, &t[0]));
    MF_GRAD_TRY(mf_binary(MF_OP_EQUAL, nz, t[0], &t[1]));     /* one zero */
    MF_GRAD_TRY(mf_where(t[1], pnz, zero, &t[2]));            /* at the zero */
    MF_GRAD_TRY(mf_binary(MF_OP_EQUAL, nz, zero, &t[3]));     /* no zero */
    MF_GRAD_TRY(mf_binary(MF_OP_DIV, pnz, safe, &t[4]));
    MF_GRAD_TRY(mf_where(t[3], t[4], zero, &t[5]));           /* elsewhere */
    MF_GRAD_TRY(mf_where(isz, t[2], t[5], out));
done:
    mf_grad_release_n(t, 6);
    return st;
}

MfStatus mf_prod_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *p[5] = {0}, *t[2] = {0};
    MfStatus st;
    MF_GRAD_TRY(prod_parts(g, &p[0], &p[1], &p[2], &p[3], &p[4]));
    MF_GRAD_TRY(prod_others(p, &t[0]));
    MF_GRAD_TRY(keepdims(g, g->doutputs[0], &t[1]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, t[0], t[1], &dinputs[0]));
done:
    mf_grad_release_n(p, 5);
    mf_grad_release_n(t, 2);
    return st;
}
