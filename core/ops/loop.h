/* loop.h — walking several same-shaped (after broadcasting) tensors row by row.
 *
 * Elementwise kernels describe their operands once (output first, inputs
 * after), and 'mf_loop_next' hands out one row at a time: a pointer per
 * operand and a stride per operand (in elements) along the row. Dimensions
 * that are contiguous across all operands are merged first, so contiguous
 * tensors make a single row of 'numel' elements and a broadcast scalar a row
 * with stride 0. The kernels then run plain typed loops: no function pointer
 * per element. */
#ifndef MF_LOOP_H
#define MF_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "../tensor.h"

#define MF_LOOP_MAX_OPERANDS 4

typedef struct MfLoop {
    int noperands;
    int rank;                                      /* after merging */
    int64_t shape[MF_MAX_RANK];
    int64_t strides[MF_LOOP_MAX_OPERANDS][MF_MAX_RANK]; /* in elements */
    char *base[MF_LOOP_MAX_OPERANDS];
    int64_t esize[MF_LOOP_MAX_OPERANDS];
    int64_t index[MF_MAX_RANK];                    /* odometer over the outer dims */
    int64_t rows_left;
    /* per row, read after 'mf_loop_next': */
    int64_t n;                                     /* elements in the row */
    int64_t step[MF_LOOP_MAX_OPERANDS];            /* stride along the row, in elements */
} MfLoop;

/* Sets up a walk over 'shape' (rank 'rank'); operand k is 'ts[k]', read
 * with broadcasting to 'shape'. 'ts[0]' is normally the output. */
void mf_loop_init(MfLoop *l, int noperands, MfTensor *const *ts, int rank,
                  const int64_t *shape);

/* Fills 'ptrs[k]' with the start of the next row of each operand; false
 * when the walk is done. */
bool mf_loop_next(MfLoop *l, char **ptrs);

#endif
