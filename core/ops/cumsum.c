/* cumsum.c — Cumsum: running sums along one axis (TensorFlow's Cumsum with
 * 'reverse'; 'exclusive' is not offered), float32, float64, int32, int64
 * (integers wrap as TensorFlow's). The gradient is the cumsum of dy the
 * other way along the same axis. Kernel, gradient and descriptor (schema,
 * Lua name, summary) are all here; repl/lmf_op.c binds mf.cumsum(x [, axis]
 * [, {reverse =}]) and x:cumsum(...) from the schema. */
#include "common.h"

static MfStatus cumsum_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    MfStatus st = mf_check_dtype(c, x, MF_NUMERIC, "a numeric dtype");
    if (st != MF_OK)
        return st;
    if (x->rank == 0 || c->attrs->axis < 0 || c->attrs->axis >= x->rank)
        return mf_err_set(MF_EARG, "cumsum: axis %lld out of range for rank %d",
                          (long long)c->attrs->axis + 1, x->rank);
    mf_spec_like(c, x, x->dtype);
    return MF_OK;
}

/* One dtype's loop over [outer, n, inner] of contiguous data. */
#define CUMSUM_LOOP(T, ACC)                                                          \
    do {                                                                             \
        const T *src = mf_tensor_data(x);                                            \
        T *dst = mf_tensor_data(outs[0]);                                            \
        for (int64_t o = 0; o < outer; o++)                                          \
            for (int64_t i = 0; i < inner; i++) {                                    \
                ACC acc = 0;                                                         \
                for (int64_t k = 0; k < n; k++) {                                    \
                    int64_t j = rev ? n - 1 - k : k, at = (o * n + j) * inner + i;   \
                    acc = (ACC)(acc + (ACC)src[at]);                                 \
                    dst[at] = (T)acc;                                                \
                }                                                                    \
            }                                                                        \
    } while (0)

static MfStatus cumsum_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *x = mf_tensor_contiguous(c->inputs[0]);
    if (!x)
        return mf_err_set(MF_ENOMEM, "cumsum: out of memory");
    int axis = (int)c->attrs->axis;
    bool rev = c->attrs->reverse;
    int64_t outer = 1, inner = 1, n = x->shape[axis];
    for (int d = 0; d < axis; d++)
        outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++)
        inner *= x->shape[d];
    switch (x->dtype) {
    case MF_FLOAT32: CUMSUM_LOOP(float, float); break;
    case MF_FLOAT64: CUMSUM_LOOP(double, double); break;
    case MF_INT32: CUMSUM_LOOP(int32_t, uint32_t); break;
    default: CUMSUM_LOOP(int64_t, uint64_t); break;
    }
    mf_tensor_release(x);
    return MF_OK;
}

/* dx = cumsum(dy) along the same axis in the other direction */
static MfStatus cumsum_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfAttrs a = *g->call->attrs;
    a.reverse = !a.reverse;
    return mf_op1(MF_OP_CUMSUM, 1, &g->doutputs[0], &a, &dinputs[0]);
}

static const MfAttrDef cumsum_attrs[] = {
    {"axis", MF_ATTR_AXIS, MF_ATTR_POSITIONAL, MF_ATTR_AT(axis), 0, 1, NULL, NULL},
    {"reverse", MF_ATTR_BOOL, 0, MF_ATTR_AT(reverse), 0, 0, NULL, NULL},
};

const MfOpDesc mf_desc_cumsum = {
    .name = "Cumsum", .api = "cumsum", .arity = 1, .infer = cumsum_infer,
    .forward = cumsum_forward, .backward = cumsum_grad, .cost = mf_cost_elementwise,
    .attrs = cumsum_attrs, .nattrs = MF_NATTRS(cumsum_attrs), .lua = "cumsum", .inputs = "x",
    .summary = "running sums along axis (1 by default; {reverse = true}: from the end)",
};
