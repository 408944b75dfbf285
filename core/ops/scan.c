/* scan.c — Cumsum and Cumprod: running sums and products along one axis
 * (TensorFlow's ops, with 'exclusive' and 'reverse'), float32, float64,
 * int32, int64 (integers wrap as TensorFlow's). 'exclusive' leaves each
 * element out of its own result (the first result is 0 or 1); 'reverse'
 * runs from the last element. The binder makes mf.cumsum(x [, axis]
 * [, {exclusive, reverse}]) and mf.cumprod(...) from the schema.
 *
 * Gradients (TensorFlow's math_grad.py):
 *   Cumsum   the cumsum of dy the other way along the same axis.
 *   Cumprod  cumsum(cumprod(x) * dy) the other way, divided by x, and 0
 *            where x is 0 (TensorFlow's div_no_nan): exact while no
 *            element is 0; where some are, the gradients of the zero
 *            elements are 0 (PyTorch's are exact there). */
#include "common.h"
#include "compare.h"
#include "grads_math.h"

static MfStatus scan_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    MfStatus st = mf_check_dtype(c, x, MF_NUMERIC, "a numeric dtype");
    if (st != MF_OK)
        return st;
    if (x->rank == 0 || c->attrs->axis < 0 || c->attrs->axis >= x->rank)
        return mf_err_set(MF_EARG, "%s: axis %lld out of range for rank %d", op_api(c),
                          (long long)c->attrs->axis + 1, x->rank);
    mf_spec_like(c, x, x->dtype);
    return MF_OK;
}

/* One dtype's loop over [outer, n, inner] of contiguous data; OP combines
 * the accumulator with an element, from ID. */
#define SCAN_LOOP(T, ACC, OP, ID)                                                    \
    do {                                                                             \
        const T *src = mf_tensor_data(x);                                            \
        T *dst = mf_tensor_data(outs[0]);                                            \
        for (int64_t o = 0; o < outer; o++)                                          \
            for (int64_t i = 0; i < inner; i++) {                                    \
                ACC acc = (ACC)(ID);                                                 \
                for (int64_t k = 0; k < n; k++) {                                    \
                    int64_t j = rev ? n - 1 - k : k, at = (o * n + j) * inner + i;   \
                    if (excl)                                                        \
                        dst[at] = (T)acc;                                            \
                    acc = (ACC)(acc OP (ACC)src[at]);                                \
                    if (!excl)                                                       \
                        dst[at] = (T)acc;                                            \
                }                                                                    \
            }                                                                        \
    } while (0)

#define SCAN_DTYPES(OP, ID)                                                          \
    switch (x->dtype) {                                                              \
    case MF_FLOAT32: SCAN_LOOP(float, float, OP, ID); break;                         \
    case MF_FLOAT64: SCAN_LOOP(double, double, OP, ID); break;                       \
    case MF_INT32: SCAN_LOOP(int32_t, uint32_t, OP, ID); break;                      \
    default: SCAN_LOOP(int64_t, uint64_t, OP, ID); break;                            \
    }

static MfStatus scan_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *x = mf_tensor_contiguous(c->inputs[0]);
    if (!x)
        return mf_err_set(MF_ENOMEM, "%s: out of memory", op_api(c));
    int axis = (int)c->attrs->axis;
    bool rev = c->attrs->reverse, excl = c->attrs->exclusive;
    int64_t outer = 1, inner = 1, n = x->shape[axis];
    for (int d = 0; d < axis; d++)
        outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++)
        inner *= x->shape[d];
    if (c->op == MF_OP_CUMSUM)
        SCAN_DTYPES(+, 0)
    else
        SCAN_DTYPES(*, 1)
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

/* dx = cumsum(y * dy) the other way / x; 0 where x is 0 (see the top). */
static MfStatus cumprod_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = g->call->inputs[0], *t[7] = {0};
    MfAttrs a = *g->call->attrs;
    a.reverse = !a.reverse;
    MfStatus st;
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, g->outputs[0], g->doutputs[0], &t[0]));
    MF_GRAD_TRY(mf_op1(MF_OP_CUMSUM, 1, &t[0], &a, &t[1]));
    MF_GRAD_TRY(mf_grad_const(x, 0, &t[2]));
    MF_GRAD_TRY(mf_grad_const(x, 1, &t[3]));
    MF_GRAD_TRY(mf_binary(MF_OP_EQUAL, x, t[2], &t[4]));
    MF_GRAD_TRY(mf_where(t[4], t[3], x, &t[5]));     /* x, with 1 for 0: no 0/0 */
    MF_GRAD_TRY(mf_binary(MF_OP_DIV, t[1], t[5], &t[6]));
    st = mf_where(t[4], t[2], t[6], &dinputs[0]);
done:
    mf_grad_release_n(t, 7);
    return st;
}

static const MfAttrDef scan_attrs[] = {
    {"axis", MF_ATTR_AXIS, MF_ATTR_POSITIONAL, MF_ATTR_AT(axis), 0, 1, NULL, NULL},
    {"exclusive", MF_ATTR_BOOL, 0, MF_ATTR_AT(exclusive), 0, 0, NULL, NULL},
    {"reverse", MF_ATTR_BOOL, 0, MF_ATTR_AT(reverse), 0, 0, NULL, NULL},
};

const MfOpDesc mf_desc_cumsum = {
    .name = "Cumsum", .api = "cumsum", .arity = 1, .infer = scan_infer,
    .forward = scan_forward, .backward = cumsum_grad, .cost = mf_cost_elementwise,
    .attrs = scan_attrs, .nattrs = MF_NATTRS(scan_attrs), .lua = "cumsum", .inputs = "x",
    .summary = "running sums along axis (1 by default; {exclusive, reverse})",
    .topic = "math",
    .details =
        "Running sums along axis (1-based, 1 by default), TensorFlow's Cumsum; exclusive leaves "
        "each element out of its own sum (the first is 0), reverse sums from the last element. "
        "Gradient: the cumsum of dy in the other direction.",
    .example =
        "mf.cumsum(mf.tensor{1, 2, 3})        --> {1, 3, 6}\n"
        "mf.cumsum(mf.tensor{1, 2, 3}, {exclusive = true}) --> {0, 1, 3}",
};

const MfOpDesc mf_desc_cumprod = {
    .name = "Cumprod", .api = "cumprod", .arity = 1, .infer = scan_infer,
    .forward = scan_forward, .backward = cumprod_grad, .cost = mf_cost_elementwise,
    .attrs = scan_attrs, .nattrs = MF_NATTRS(scan_attrs), .lua = "cumprod", .inputs = "x",
    .summary = "running products along axis (1 by default; {exclusive, reverse})",
    .topic = "math",
    .details =
        "Running products along axis (1-based, 1 by default), TensorFlow's Cumprod; exclusive "
        "leaves each element out of its own product (the first is 1), reverse runs from the "
        "last element. Gradient: TensorFlow's, cumsum(cumprod(x) * dy) the other way divided by "
        "x, and 0 where x is 0 (div_no_nan; PyTorch's gradient is exact at zeros).",
    .example =
        "mf.cumprod(mf.tensor{2, 3, 4})       --> {2, 6, 24}\n"
        "mf.cumprod(mf.tensor{2, 3, 4}, {exclusive = true, reverse = true}) --> {12, 4, 1}",
};
