/* common.c — shared checks and inference for op families (see common.h). */
#include "common.h"

MfStatus mf_check_same_dtype(const MfOpCall *c, const MfTensor *a, const MfTensor *b)
{
    if (a->dtype == b->dtype)
        return MF_OK;
    return mf_err_set(MF_EDTYPE, "%s: dtypes differ: %s and %s (convert one with mf.cast)",
                      op_api(c), mf_dtype_name(a->dtype), mf_dtype_name(b->dtype));
}

MfStatus mf_check_dtype(const MfOpCall *c, const MfTensor *t, unsigned mask, const char *what)
{
    if (mask & MF_MASK(t->dtype))
        return MF_OK;
    return mf_err_set(MF_EDTYPE, "%s: expected %s, got %s", op_api(c), what,
                      mf_dtype_name(t->dtype));
}

MfStatus mf_shape_from_tensor(const MfOpCall *c, const MfTensor *s, int *rank, int64_t *shape)
{
    if (!mf_dtype_is_int(s->dtype) || s->rank != 1 || s->shape[0] < 0 ||
        s->shape[0] > MF_MAX_RANK)
        return mf_err_set(MF_ESHAPE, "%s: a shape tensor must be 1-D int32/int64 of known length "
                          "<= %d (such as mf.shape(x)), got %s of rank %d", op_api(c),
                          MF_MAX_RANK, mf_dtype_name(s->dtype), s->rank);
    *rank = (int)s->shape[0];
    for (int i = 0; i < *rank; i++) {
        shape[i] = s->storage ? mf_tensor_get_int(s, i) : -1;
        if (s->storage && shape[i] < 0)
            return mf_err_set(MF_ESHAPE, "%s: shape entry %d must be >= 0, got %lld",
                              op_api(c), i + 1, (long long)shape[i]);
    }
    return MF_OK;
}

void mf_spec_like(MfOpCall *c, const MfTensor *t, MfDType dt)
{
    c->noutputs = 1;
    c->out[0].dtype = dt;
    c->out[0].rank = t->rank;
    for (int i = 0; i < t->rank; i++)
        c->out[0].shape[i] = t->shape[i];
}

MfStatus mf_infer_float_like(MfOpCall *c)
{
    MfStatus st = mf_check_dtype(c, c->inputs[0], MF_FLOATS,
                                 "a float dtype (float32 or float64; use mf.cast)");
    if (st == MF_OK)
        mf_spec_like(c, c->inputs[0], c->inputs[0]->dtype);
    return st;
}

MfStatus mf_infer_grad_pair(MfOpCall *c, unsigned mask, const char *what)
{
    const MfTensor *dy = c->inputs[0], *x = c->inputs[1];
    MfStatus st = mf_check_same_dtype(c, dy, x);
    if (st == MF_OK)
        st = mf_check_dtype(c, x, mask, what);
    if (st != MF_OK)
        return st;
    bool same = dy->rank == x->rank;
    for (int i = 0; same && i < x->rank; i++)
        same = dy->shape[i] < 0 || x->shape[i] < 0 || dy->shape[i] == x->shape[i];
    if (!same) {
        char a[96], b[96];
        return mf_err_set(MF_ESHAPE, "%s: gradients and features must have one shape, got %s "
                          "and %s", op_api(c), mf_shape_str(dy->rank, dy->shape, a, sizeof a),
                          mf_shape_str(x->rank, x->shape, b, sizeof b));
    }
    /* A known dim wins over an unknown one. */
    mf_spec_like(c, x, x->dtype);
    for (int i = 0; i < x->rank; i++)
        if (c->out[0].shape[i] < 0)
            c->out[0].shape[i] = dy->shape[i];
    return MF_OK;
}

MfStatus mf_infer_broadcast(MfOpCall *c, unsigned mask, const char *what, int dt)
{
    const MfTensor *a = c->inputs[0], *b = c->inputs[1];
    MfStatus st = mf_check_same_dtype(c, a, b);
    if (st == MF_OK)
        st = mf_check_dtype(c, a, mask, what);
    if (st != MF_OK)
        return st;
    c->noutputs = 1;
    c->out[0].dtype = dt < 0 ? a->dtype : (MfDType)dt;
    return mf_broadcast_shapes(op_api(c), a->rank, a->shape, b->rank, b->shape,
                               &c->out[0].rank, c->out[0].shape);
}

MfCost mf_cost_elementwise(const MfOpCall *c)
{
    MfCost cost = {0, 0};
    for (int i = 0; i < c->noutputs; i++) {
        double n = (double)mf_shape_numel(c->out[i].rank, c->out[i].shape);
        cost.flops += n;
        cost.bytes += n * (double)mf_dtype_size(c->out[i].dtype);
    }
    for (int i = 0; i < c->ninputs; i++)
        cost.bytes += (double)mf_tensor_numel(c->inputs[i]) *
                      (double)mf_dtype_size(c->inputs[i]->dtype);
    return cost;
}
