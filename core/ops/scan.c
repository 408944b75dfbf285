/* scan.c — Cumsum and Cumprod: running sums and products along one axis
 * (TensorFlow's ops, with 'exclusive' and 'reverse'), float32, float64,
 * int32, int64 (integers wrap as TensorFlow's). 'exclusive' leaves each
 * element out of its own result (the first result is 0 or 1); 'reverse'
 * runs from the last element. The binder makes mf.cumsum(x [, axis]
 * [, {exclusive, reverse}]) and mf.cumprod(...) from the schema.
 *
 * Gradients (TensorFlow's math_grad.py):
 *   Cumsum   the cumsum of dy the other way along the same axis.
 *   Cumprod  cumsum(cumprod(x) * dy) the other way, divided by x
 *            (TensorFlow's formula), where no zero comes before; exact
 *            with zeros too, as PyTorch's (TensorFlow's div_no_nan gives
 *            0 at a zero): see cumprod_grad. */
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

/* Which elements of x come at or after the first zero of their row, in
 * the scan's direction: '*first' is that zero, '*after' every element past
 * it (owned bool tensors). */
static MfStatus zero_masks(MfTensor *x, const MfAttrs *a, MfTensor **first, MfTensor **after)
{
    MfTensor *t[5] = {0};
    MfAttrs before = *a;
    before.exclusive = true;
    MfStatus st;
    MF_GRAD_TRY(mf_grad_const(x, 0, &t[0]));
    MF_GRAD_TRY(mf_binary(MF_OP_EQUAL, x, t[0], &t[1]));
    MF_GRAD_TRY(mf_cast(t[1], x->dtype, &t[2]));
    MF_GRAD_TRY(mf_op1(MF_OP_CUMSUM, 1, &t[2], &before, &t[3])); /* zeros strictly before */
    MF_GRAD_TRY(mf_binary(MF_OP_GREATER, t[3], t[0], after));
    MF_GRAD_TRY(mf_unary(MF_OP_LOGICAL_NOT, *after, &t[4]));
    st = mf_binary(MF_OP_LOGICAL_AND, t[1], t[4], first);
done:
    mf_grad_release_n(t, 5);
    return st;
}

/* Exact with zeros (as PyTorch's): with b = the scan the other way,
 *   before the row's first zero: cumsum_b(y * dy) / x (TensorFlow's rule);
 *   at the first zero z: cumsum_b(cumprod(x with x_z = 1) * dy);
 *   after it: 0 (every product it enters holds x_z = 0). */
static MfStatus cumprod_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = g->call->inputs[0], *dy = g->doutputs[0], *t[12] = {0};
    MfAttrs b = *g->call->attrs;
    b.reverse = !b.reverse;
    MfStatus st;
    MF_GRAD_TRY(zero_masks(x, g->call->attrs, &t[0], &t[1]));       /* first, after */
    MF_GRAD_TRY(mf_grad_const(x, 1, &t[2]));
    MF_GRAD_TRY(mf_grad_const(x, 0, &t[3]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, g->outputs[0], dy, &t[4]));
    MF_GRAD_TRY(mf_op1(MF_OP_CUMSUM, 1, &t[4], &b, &t[5]));
    MF_GRAD_TRY(mf_binary(MF_OP_EQUAL, x, t[3], &t[6]));
    MF_GRAD_TRY(mf_where(t[6], t[2], x, &t[7]));                     /* x, no 0/0 */
    MF_GRAD_TRY(mf_binary(MF_OP_DIV, t[5], t[7], &t[8]));            /* before the zero */
    MF_GRAD_TRY(mf_where(t[0], t[2], x, &t[9]));                     /* x with x_z = 1 */
    MF_GRAD_TRY(mf_op1(MF_OP_CUMPROD, 1, &t[9], g->call->attrs, &t[10]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, t[10], dy, &t[11]));
    mf_tensor_release(t[9]);
    t[9] = NULL;
    MF_GRAD_TRY(mf_op1(MF_OP_CUMSUM, 1, &t[11], &b, &t[9]));          /* at the zero */
    mf_tensor_release(t[10]);
    t[10] = NULL;
    MF_GRAD_TRY(mf_where(t[0], t[9], t[8], &t[10]));
    st = mf_where(t[1], t[3], t[10], &dinputs[0]);
done:
    mf_grad_release_n(t, 12);
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
        "last element. Gradient: TensorFlow's formula, cumsum(cumprod(x) * dy) the other way "
        "divided by x, before a row's first zero; exact at and after zeros too (as PyTorch's; "
        "TensorFlow's div_no_nan gives 0 at a zero).",
    .example =
        "mf.cumprod(mf.tensor{2, 3, 4})       --> {2, 6, 24}\n"
        "mf.cumprod(mf.tensor{2, 3, 4}, {exclusive = true, reverse = true}) --> {12, 4, 1}",
};
