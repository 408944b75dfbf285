/* reduce_walk.h — the reduction kernel behind Sum, Mean, Max, Min and Prod
 * (reduce.c), for ops that reduce without going through an op call (a fused
 * chain ending in a reduction, the gradient of a broadcast).
 *
 * The result does not depend on the thread count, bit for bit: the order in
 * which each output element combines its inputs is fixed by the shapes alone
 * (reduce_walk.c says which order), and threads only take disjoint output
 * elements or disjoint subtrees of a float sum. */
#ifndef MF_OPS_REDUCE_WALK_H
#define MF_OPS_REDUCE_WALK_H

#include <stdbool.h>

#include "../tensor.h"

typedef enum MfReduceKind {
    MF_REDUCE_SUM, MF_REDUCE_PROD, MF_REDUCE_MAX, MF_REDUCE_MIN, MF_REDUCE_MEAN
} MfReduceKind;

/* Reduces 'x' (any strides) over the dims flagged in 'reduced' into 'out',
 * which the caller allocated with x's dtype and x's shape without (or with
 * size 1 in place of) the reduced dims; 'out' must be contiguous and may not
 * overlap 'x'. Floats accumulate in double (float32 sums after at most 7
 * float additions per element; reduce_walk.c says which), integer sums and
 * products wrap in 64 bits, an integer mean truncates. Max and min
 * propagate NaN. An empty reduction gives the identity (NaN for a float
 * mean): callers refuse max and min of an empty axis first. MF_ENOMEM
 * (naming 'who') when the accumulators cannot be allocated. */
MfStatus mf_reduce_into(MfReduceKind kind, const MfTensor *x, const bool *reduced,
                        MfTensor *out, const char *who);

/* An accumulator of any kind and dtype: double for floats (float for
 * float32 max and min), 64-bit integers for integers. */
typedef union MfReduceAcc {
    double f;
    float f32;
    uint64_t u;
    int64_t i;
} MfReduceAcc;

/* The reduction of every element of a contiguous row made a piece at a
 * time (a fused chain's blocks, graph/fusion_run.c), with the bits of
 * mf_reduce_into over the whole row written out. The row's tree has leaves
 * of L = mf_reduce_leaf_len elements, leaf k holding elements [k L, k L +
 * L) (the last one the rest); mf_reduce_leaf gives the value of a leaf of
 * 'n' elements, mf_reduce_leaves_into the reduction of a row of 'n'
 * elements into the one element of 'out' (x's dtype) from the values of
 * its leaves, in order. */
int64_t mf_reduce_leaf_len(MfReduceKind kind, MfDType dt);
void mf_reduce_leaf(MfReduceKind kind, MfDType dt, const void *x, int64_t n, MfReduceAcc *v);
void mf_reduce_leaves_into(MfReduceKind kind, const MfReduceAcc *leaves, int64_t n,
                           MfTensor *out);

/* Columns reduced a piece at a time (a fused chain's blocks ending in a
 * reduction over its leading dims, graph/fusion_run.c), with the bits of
 * mf_reduce_into over a contiguous (rows, n) tensor reduced over its rows:
 * mf_reduce_cols folds 'rows' rows of 'x' (contiguous, n wide) into the n
 * accumulators 'acc' (mf_reduce_acc_size bytes each, set by
 * mf_reduce_cols_init) in row order, by groups of MF_REDUCE_ROW_GROUP rows
 * counted from its first row, as mf_reduce_into counts them from row 0: so
 * every call but the last passes a multiple of MF_REDUCE_ROW_GROUP rows.
 * mf_reduce_cols_finish writes the accumulators into 'out' (the rows'
 * dtype; 'count' rows in all, for a mean). */
#define MF_REDUCE_ROW_GROUP 8
size_t mf_reduce_acc_size(MfReduceKind kind, MfDType dt);
void mf_reduce_cols_init(MfReduceKind kind, MfDType dt, void *acc, int64_t n);
void mf_reduce_cols(MfReduceKind kind, MfDType dt, void *acc, const void *x, int64_t rows,
                    int64_t n);
void mf_reduce_cols_finish(MfReduceKind kind, const void *acc, int64_t n, int64_t count,
                           MfTensor *out);

/* The sum of a contiguous row of 'n' elements, by the tree of
 * mf_reduce_into (blocked pairwise in double): for row kernels (softmax.c). */
double mf_sum_row_f32(const float *x, int64_t n);
double mf_sum_row_f64(const double *x, int64_t n);

/* The sums of two float32 rows of 'n' elements, each with the bits of
 * mf_sum_row_f32, computed together: the additions of two short rows
 * overlap (LayerNormGrad sums a row of x and of dy at once). */
void mf_sum_rows2_f32(const float *a, const float *b, int64_t n, double *sa, double *sb);

/* The sum of (x[i] - c) * (x[i] - c) over a float32 row, each square
 * rounded to float: the bits of mf_sum_row_f32 over a row of those squares,
 * without writing it (a variance in one pass fewer). */
double mf_sqdev_row_f32(const float *x, int64_t n, float c);

/* out[i] = dy[i] * ((x[i] - c) * r) over a float32 row (LayerNormGrad's
 * first dx), written, and their sum: the bits of mf_sum_row_f32 over 'out'
 * afterwards, in one pass fewer. */
double mf_scaled_dev_row_f32(const float *x, const float *dy, float *out, int64_t n, float c,
                             float r);

/* The maximum of a contiguous float32 row of 'n' elements (-inf when n is
 * 0; NaN when the row holds one), in 8-float vectors. */
double mf_max_row_f32(const float *x, int64_t n);

#endif
