/* roll.c — Roll: the elements of x shifted along axes, wrapping around
 * (TensorFlow's tf.roll, numpy's roll): out[.., i, ..] = x[.., i - shift,
 * ..] modulo the axis' size. Any dtype. 'shift' and 'axis' are lists of
 * the same length (or one number each). The face refuses an axis listed
 * twice (as for every axes attribute); from C, such an axis gets the sum of
 * its shifts, as TensorFlow's. Gradient: dy rolled back by -shift.
 * Everything the op needs is here: kernel, gradient, descriptor with its
 * attribute schema; the binder makes mf.roll(x, shift, axis) and
 * x:roll(shift, axis) from it. */
#include <string.h>

#include "common.h"

/* Each axis' total shift, in 0..size-1 (zero for an axis not listed);
 * checks the lists' lengths and the axes. */
static MfStatus total_shifts(const MfOpCall *c, const MfTensor *x, int64_t *shift)
{
    const MfAttrs *a = c->attrs;
    if (a->nints != a->naxes)
        return mf_err_set(MF_EARG, "roll: shift and axis must have the same length, got %d "
                          "shifts and %d axes", a->nints, a->naxes);
    memset(shift, 0, MF_MAX_RANK * sizeof *shift);
    for (int k = 0; k < a->naxes; k++) {
        int64_t ax = a->axes[k] < 0 ? a->axes[k] + x->rank : a->axes[k];
        if (ax < 0 || ax >= x->rank)
            return mf_err_set(MF_EARG, "roll: axis %lld out of range for rank %d (axes are "
                              "1-based: 1..%d, or -%d..-1)", (long long)(ax + 1), x->rank,
                              x->rank, x->rank);
        int64_t n = x->shape[ax];
        if (n > 0)
            shift[ax] = ((shift[ax] + a->ints[k]) % n + n) % n;
    }
    return MF_OK;
}

static MfStatus roll_infer(MfOpCall *c)
{
    int64_t shift[MF_MAX_RANK];
    MfStatus st = total_shifts(c, c->inputs[0], shift);
    if (st == MF_OK)
        mf_spec_like(c, c->inputs[0], c->inputs[0]->dtype);
    return st;
}

/* One output row (the last axis) from the source row 'src': in two pieces
 * when the row is contiguous, element by element when it is strided. */
static void roll_row(char *dst, const char *src, int64_t n, int64_t stride, int64_t shift,
                     size_t es)
{
    if (stride == 1) {
        memcpy(dst + (size_t)shift * es, src, (size_t)(n - shift) * es);
        memcpy(dst, src + (size_t)(n - shift) * es, (size_t)shift * es);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t j = i - shift < 0 ? i - shift + n : i - shift;
        memcpy(dst + (size_t)i * es, src + (size_t)(j * stride) * es, es);
    }
}

static MfStatus roll_forward(const MfOpCall *c, MfTensor **outs)
{
    const MfTensor *x = c->inputs[0];
    int64_t shift[MF_MAX_RANK], idx[MF_MAX_RANK] = {0};
    MfStatus st = total_shifts(c, x, shift);
    if (st != MF_OK || mf_tensor_numel(x) == 0)
        return st;
    if (x->rank == 0) {
        memcpy(mf_tensor_data(outs[0]), mf_tensor_data(x), mf_dtype_size(x->dtype));
        return MF_OK;
    }
    int last = x->rank - 1;
    int64_t n = x->shape[last], rows = mf_tensor_numel(x) / n;
    size_t es = mf_dtype_size(x->dtype);
    const char *src = mf_tensor_data(x);
    char *dst = mf_tensor_data(outs[0]);
    for (int64_t r = 0; r < rows; r++) {
        int64_t off = 0; /* the source row of output row idx[0..last) */
        for (int d = 0; d < last; d++) {
            int64_t j = idx[d] - shift[d];
            off += (j < 0 ? j + x->shape[d] : j) * x->strides[d];
        }
        roll_row(dst + (size_t)(r * n) * es, src + (size_t)off * es, n, x->strides[last],
                 shift[last], es);
        for (int d = last - 1; d >= 0 && ++idx[d] == x->shape[d]; d--)
            idx[d] = 0;
    }
    return MF_OK;
}

/* dy rolled by -shift along the same axes */
static MfStatus roll_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfAttrs back = *g->call->attrs;
    for (int k = 0; k < back.nints; k++)
        back.ints[k] = -back.ints[k];
    MfTensor *dy = g->doutputs[0];
    return mf_op1(MF_OP_ROLL, 1, &dy, &back, &dinputs[0]);
}

static const MfAttrDef roll_attrs[] = {
    {"shift", MF_ATTR_INTS, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(ints),
     MF_ATTR_AT(nints), 0, NULL, NULL},
    {"axis", MF_ATTR_AXES, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(axes),
     MF_ATTR_AT(naxes), 0, NULL, NULL},
};

const MfOpDesc mf_desc_roll = {
    .name = "Roll", .api = "roll", .arity = 1, .infer = roll_infer, .forward = roll_forward,
    .backward = roll_grad, .cost = mf_cost_elementwise, .attrs = roll_attrs,
    .nattrs = MF_NATTRS(roll_attrs), .lua = "roll", .inputs = "x",
    .summary = "the elements of x shifted along axes, wrapping around",
    .topic = "shape",
    .details =
        "Shifts the elements of x by 'shift' places along 'axis' (1-based), those pushed past "
        "the end coming back at the start: TensorFlow's tf.roll. shift and axis are numbers or "
        "lists of one length, each axis at most once; a negative shift rolls the other way. "
        "Gradient: dy rolled back by -shift.",
    .example =
        "mf.roll(mf.tensor{1, 2, 3, 4}, 1, 1)                     --> {4, 1, 2, 3}\n"
        "mf.roll(mf.tensor{{1, 2}, {3, 4}}, {1, -1}, {1, 2})      --> {{4, 3}, {2, 1}}",
};
