/* slice_accumulate.c — the gradient of a Slice added in place into the
 * gradient accumulated for its input.
 *
 * The op's gradient pads dy with zeros to the input's shape (Pad) and the
 * walk adds that to what it holds (AddV2). A tensor cut into T slices (split,
 * a recurrent layer's per-step inputs) then costs T full-size Pads and T
 * full-size adds: quadratic in T. Adding dy into the slice's window of the
 * accumulated gradient touches only the window. The sums are the same
 * (old + dy inside the window, old + 0 = old outside it).
 *
 * Only eager values, float32/float64, with no other tape recording (a
 * higher-order tape must see the gradient ops), and only into a buffer the
 * walk alone owns; otherwise the caller takes the op's gradient. */
#include "slice_accumulate.h"

#include "core/tensor.h"

bool mf_accumulator_owned(const MfTensor *t)
{
    return t->refcount == 1 && t->storage && t->storage->refcount == 1 && t->offset == 0 &&
           mf_tensor_is_contiguous(t);
}

/* acc[window] += dy, walking dy's index space (rank <= MF_MAX_RANK); the
 * innermost axis is the tight loop. */
#define ADD_WINDOW(T)                                                                         \
    static void add_window_##T(MfTensor *acc, const int64_t *begin, const MfTensor *dy)       \
    {                                                                                         \
        int r = dy->rank, last = r - 1;                                                       \
        int64_t idx[MF_MAX_RANK] = {0}, n = dy->shape[last];                                  \
        T *a = mf_tensor_data(acc);                                                           \
        const T *d = (const T *)dy->storage->data + dy->offset;                               \
        int64_t sa = acc->strides[last], sd = dy->strides[last];                              \
        for (;;) {                                                                            \
            int64_t oa = begin[last] * sa, od = 0;                                            \
            for (int k = 0; k < last; k++) {                                                  \
                oa += (begin[k] + idx[k]) * acc->strides[k];                                  \
                od += idx[k] * dy->strides[k];                                                \
            }                                                                                 \
            for (int64_t i = 0; i < n; i++)                                                   \
                a[oa + i * sa] += d[od + i * sd];                                             \
            int k = last - 1;                                                                 \
            while (k >= 0 && ++idx[k] == dy->shape[k])                                        \
                idx[k--] = 0;                                                                 \
            if (k < 0)                                                                        \
                return;                                                                       \
        }                                                                                     \
    }
ADD_WINDOW(float)
ADD_WINDOW(double)

bool mf_slice_accumulate(MfOpId op, const MfAttrs *attrs, bool higher_order, MfTensor *x,
                         MfTensor *dy, MfTensor **acc)
{
    if (op != MF_OP_SLICE || higher_order || !attrs || attrs->nints != 2 * x->rank ||
        x->rank == 0 || !x->storage || !dy || !dy->storage || dy->dtype != x->dtype ||
        (x->dtype != MF_FLOAT32 && x->dtype != MF_FLOAT64) || dy->rank != x->rank)
        return false;
    for (int k = 0; k < dy->rank; k++)
        if (dy->shape[k] == 0)
            return false;
    if (*acc && !mf_accumulator_owned(*acc))
        return false;
    if (!*acc && !(*acc = mf_tensor_zeros(x->dtype, x->rank, x->shape)))
        return false;
    if (x->dtype == MF_FLOAT32)
        add_window_float(*acc, attrs->ints, dy);
    else
        add_window_double(*acc, attrs->ints, dy);
    return true;
}
