/* slices.c — the gradient of Slices in both modes (see slices.h). */
#include "slices.h"

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

/* ---- Slices tiling their input (graph mode) --------------------------------------- */

static bool whole(const MfSliceWindow *s, int d)
{
    return s->begin[d] == 0 && (s->size[d] == -1 || (s->dims[d] >= 0 &&
                                                     s->size[d] == s->dims[d]));
}

int mf_slice_window_axis(const MfSliceWindow *s)
{
    if (s->rank < 1)
        return -1;
    int axis = -1;
    for (int d = 0; d < s->rank; d++) {
        if (whole(s, d))
            continue;
        if (axis >= 0)
            return -1;
        axis = d;
    }
    return axis;
}

/* The window [begin, end) of 's' along 'axis' (false: not static). */
static bool window(const MfSliceWindow *s, int axis, int64_t *begin, int64_t *end)
{
    int64_t size = s->size[axis], dim = s->dims[axis];
    *begin = s->begin[axis];
    if (size == -1)
        size = dim - *begin;
    *end = *begin + size;
    return dim >= 0 && *begin >= 0 && size >= 0 && *end <= dim;
}

/* 'order' sorted by the windows' begin (insertion sort: a few hundred steps
 * at most, and no comparator state outside the call). */
static void sort_by_begin(int n, const MfSliceWindow *s, int axis, int *order)
{
    for (int i = 1; i < n; i++) {
        int v = order[i], j = i;
        for (; j > 0 && s[order[j - 1]].begin[axis] > s[v].begin[axis]; j--)
            order[j] = order[j - 1];
        order[j] = v;
    }
}

bool mf_slices_tile(int n, const MfSliceWindow *s, int *order, int *axis)
{
    if (n < 2 || (*axis = mf_slice_window_axis(&s[0])) < 0)
        return false;
    for (int i = 0; i < n; i++) {
        if (mf_slice_window_axis(&s[i]) != *axis)
            return false;
        order[i] = i;
    }
    sort_by_begin(n, s, *axis, order);
    int64_t at = 0, begin, end;
    for (int i = 0; i < n; i++) {
        if (!window(&s[order[i]], *axis, &begin, &end) || begin != at)
            return false;
        at = end;
    }
    return at == s[0].dims[*axis];
}
