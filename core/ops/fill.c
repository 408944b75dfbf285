/* fill.c — the Fill op (see fill.h). */
#include "fill.h"

#include <string.h>

#include "../create.h"
#include "common.h"

static MfStatus fill_infer(MfOpCall *c)
{
    const MfTensor *value = c->inputs[1];
    if (value->rank != 0 && !(value->rank == 1 && value->shape[0] == 1))
        return mf_err_set(MF_ESHAPE, "%s: value must be a scalar, got rank %d", op_api(c),
                          value->rank);
    c->noutputs = 1;
    c->out[0].dtype = value->dtype;
    MfStatus st = mf_shape_from_tensor(c, c->inputs[0], &c->out[0].rank, c->out[0].shape);
    if (st != MF_OK || !c->inputs[0]->storage)   /* dims known when the node runs */
        return st;
    return mf_create_check_size(op_api(c), value->dtype, c->out[0].rank, c->out[0].shape);
}

static MfStatus fill_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *value = c->inputs[1];
    size_t size = mf_dtype_size(value->dtype);
    const char *v = mf_tensor_data(value);
    char *p = outs[0]->storage->data;
    for (int64_t i = 0, n = mf_tensor_numel(outs[0]); i < n; i++)
        memcpy(p + (size_t)i * size, v, size);
    return MF_OK;
}

const MfOpDesc mf_desc_fill = {
    .name = "Fill", .api = "fill", .arity = 2, .flags = MF_OP_NONDIFF,
    .infer = fill_infer, .forward = fill_forward, .cost = mf_cost_elementwise,
};

MfStatus mf_fill_by(MfTensor *dims, MfTensor *value, MfTensor **out)
{
    MfTensor *in[2] = {dims, value};
    return mf_op1(MF_OP_FILL, 2, in, NULL, out);
}

MfStatus mf_fill_like(MfTensor *x, MfDType dt, double value, MfTensor **out)
{
    MfTensor *dims = NULL, *v = mf_tensor_scalar(dt, value);
    *out = NULL;
    MfStatus st = v ? mf_unary(MF_OP_SHAPE, x, &dims)
                    : mf_err_set(MF_ENOMEM, "fill: out of memory");
    if (st == MF_OK)
        st = mf_fill_by(dims, v, out);
    mf_tensor_release(dims);
    mf_tensor_release(v);
    return st;
}

/* 'op' (ReshapeLike or BroadcastToLike) of t against a tensor of shape 'dims'. */
static MfStatus like_dims(MfOpId op, MfTensor *t, MfTensor *dims, MfTensor **out)
{
    MfTensor *zero = mf_tensor_scalar(t->dtype, 0), *like = NULL;
    *out = NULL;
    MfStatus st = zero ? mf_fill_by(dims, zero, &like)
                       : mf_err_set(MF_ENOMEM, "%s: out of memory", mf_op_table[op]->api);
    if (st == MF_OK)
        st = mf_op1(op, 2, (MfTensor *[]){t, like}, NULL, out);
    mf_tensor_release(zero);
    mf_tensor_release(like);
    return st;
}

MfStatus mf_reshape_by(MfTensor *t, MfTensor *dims, MfTensor **out)
{
    return like_dims(MF_OP_RESHAPE_LIKE, t, dims, out);
}

MfStatus mf_broadcast_to_by(MfTensor *t, MfTensor *dims, MfTensor **out)
{
    return like_dims(MF_OP_BROADCAST_TO_LIKE, t, dims, out);
}
