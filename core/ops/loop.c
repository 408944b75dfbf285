/* loop.c — row walker for elementwise kernels (see loop.h). */
#include "loop.h"

#include "../shape.h"

/* Merges dim i into dim i+1 when every operand is contiguous across them. */
static void merge_dims(MfLoop *l)
{
    int r = l->rank;
    int w = 0;
    for (int i = 0; i < r; i++) {
        if (l->shape[i] == 1 && r > 1)
            continue; /* size-1 dims never move a pointer */
        if (w > 0) {
            bool mergeable = true;
            for (int k = 0; k < l->noperands; k++)
                if (l->strides[k][w - 1] != l->strides[k][i] * l->shape[i])
                    mergeable = false;
            if (mergeable) {
                l->shape[w - 1] *= l->shape[i];
                for (int k = 0; k < l->noperands; k++)
                    l->strides[k][w - 1] = l->strides[k][i];
                continue;
            }
        }
        l->shape[w] = l->shape[i];
        for (int k = 0; k < l->noperands; k++)
            l->strides[k][w] = l->strides[k][i];
        w++;
    }
    if (w == 0) { /* rank 0, or all dims of size 1: one element */
        l->shape[0] = 1;
        for (int k = 0; k < l->noperands; k++)
            l->strides[k][0] = 0;
        w = 1;
    }
    l->rank = w;
}

void mf_loop_init(MfLoop *l, int noperands, MfTensor *const *ts, int rank,
                  const int64_t *shape)
{
    l->noperands = noperands;
    l->rank = rank;
    int64_t total = 1;
    for (int i = 0; i < rank; i++) {
        l->shape[i] = shape[i];
        total *= shape[i];
    }
    for (int k = 0; k < noperands; k++) {
        mf_broadcast_strides(ts[k], rank, shape, l->strides[k]);
        l->esize[k] = (int64_t)mf_dtype_size(ts[k]->dtype);
        l->base[k] = (char *)ts[k]->storage->data + ts[k]->offset * l->esize[k];
    }
    merge_dims(l);
    int r = l->rank;
    l->n = l->shape[r - 1];
    for (int k = 0; k < noperands; k++)
        l->step[k] = l->strides[k][r - 1];
    for (int i = 0; i < r; i++)
        l->index[i] = 0;
    l->rows_left = total == 0 ? 0 : total / l->n;
}

bool mf_loop_next(MfLoop *l, char **ptrs)
{
    if (l->rows_left == 0)
        return false;
    int r = l->rank;
    for (int k = 0; k < l->noperands; k++) {
        int64_t off = 0;
        for (int i = 0; i < r - 1; i++)
            off += l->index[i] * l->strides[k][i];
        ptrs[k] = l->base[k] + off * l->esize[k];
    }
    for (int i = r - 2; i >= 0 && ++l->index[i] == l->shape[i]; i--)
        l->index[i] = 0;
    l->rows_left--;
    return true;
}
