/* grad_cases_shape.h — gradient-check cases for the linear algebra, view
 * and shape ops (see grad_cases.h): MatMul and BatchMatMulV2 with every
 * transpose flag and broadcast batches, Trace, MatrixBandPart, Trilu,
 * Transpose, Reshape, ExpandDims, Squeeze, ConcatV2, Pack, Slice, GatherV2
 * (repeated indices, inner axes, negative axes), ReverseV2, Tile, Pad,
 * BroadcastTo, Identity and UnsortedSegmentSum. Attributes are given as the ops take them:
 * 0-based, normalised except where the op accepts negative axes. */
#ifndef MF_GRAD_CASES_SHAPE_H
#define MF_GRAD_CASES_SHAPE_H

#include <string.h>

#include "grad_cases.h"

/* Writes 'v' into the int32 or int64 (contiguous) tensor 't'. */
static void gcs_set_ints(MfTensor *t, const int64_t *v)
{
    int64_t n = mf_tensor_numel(t);
    void *p = mf_tensor_data(t);
    for (int64_t i = 0; i < n; i++) {
        if (t->dtype == MF_INT32)
            ((int32_t *)p)[i] = (int32_t)v[i];
        else
            ((int64_t *)p)[i] = v[i];
    }
}

static void gcs_ta(MfAttrs *a) { a->transpose_a = true; }
static void gcs_tb(MfAttrs *a) { a->transpose_b = true; }
static void gcs_tab(MfAttrs *a) { a->transpose_a = a->transpose_b = true; }

/* MatrixBandPart(1, 0); Trilu: triu(1), tril(-1) */
static void gcs_band_10(MfAttrs *a) { a->num_lower = 1; a->num_upper = 0; }
static void gcs_triu_1(MfAttrs *a) { a->upper = true; a->diagonal = 1; }
static void gcs_tril_m1(MfAttrs *a) { a->diagonal = -1; }

static void gcs_perm_201(MfAttrs *a)
{
    a->naxes = 3;
    a->axes[0] = 2;
    a->axes[1] = 0;
    a->axes[2] = 1;
}

static void gcs_perm_1032(MfAttrs *a)
{
    a->naxes = 4;
    a->axes[0] = 1;
    a->axes[1] = 0;
    a->axes[2] = 3;
    a->axes[3] = 2;
}

static void gcs_reshape_4_m1(MfAttrs *a)
{
    a->nints = 2;
    a->ints[0] = 4;
    a->ints[1] = -1;
}

static void gcs_reshape_2_3(MfAttrs *a)
{
    a->nints = 2;
    a->ints[0] = 2;
    a->ints[1] = 3;
}

static void gcs_reshape_1_1(MfAttrs *a)
{
    a->nints = 2;
    a->ints[0] = 1;
    a->ints[1] = 1;
}

static void gcs_axis0(MfAttrs *a) { a->axis = 0; }
static void gcs_axis1(MfAttrs *a) { a->axis = 1; }
static void gcs_axis2(MfAttrs *a) { a->axis = 2; }
static void gcs_axis_m1(MfAttrs *a) { a->axis = -1; }
static void gcs_axis_m2(MfAttrs *a) { a->axis = -2; }

static void gcs_axes_1(MfAttrs *a)
{
    a->naxes = 1;
    a->axes[0] = 1;
}

static void gcs_axes_0(MfAttrs *a)
{
    a->naxes = 1;
    a->axes[0] = 0;
}

static void gcs_axes_m1_0(MfAttrs *a)
{
    a->naxes = 2;
    a->axes[0] = -1;
    a->axes[1] = 0;
}

/* Slice of (4,5): begin (1,2), size (2,-1). */
static void gcs_slice_45(MfAttrs *a)
{
    const int64_t v[4] = {1, 2, 2, -1};
    a->nints = 4;
    memcpy(a->ints, v, sizeof v);
}

/* Slice of (3,4,2): begin (0,1,1), size (3,2,1). */
static void gcs_slice_342(MfAttrs *a)
{
    const int64_t v[6] = {0, 1, 1, 3, 2, 1};
    a->nints = 6;
    memcpy(a->ints, v, sizeof v);
}

/* Strided window of (4,5): rows 1 and 3, columns 1, 3 and 5 (0-based
 * begin (1,0), counts (2,3), steps (2,2)). */
static void gcs_strided_45(MfAttrs *a)
{
    const int64_t v[4] = {1, 0, 2, 3}, step[2] = {2, 2};
    a->nints = 4;
    memcpy(a->ints, v, sizeof v);
    memcpy(a->steps, step, sizeof step);
}

/* Strided window of (3,4,2): rows 1 and 3, column 3 dropped (an integer
 * index), both of the last axis. */
static void gcs_strided_342(MfAttrs *a)
{
    const int64_t v[6] = {0, 2, 0, 2, 1, 2}, step[3] = {2, 1, 1};
    a->nints = 6;
    memcpy(a->ints, v, sizeof v);
    memcpy(a->steps, step, sizeof step);
    a->naxes = 1;
    a->axes[0] = 1;
}

/* roll by 1 along axis 0 and by -2 along the last */
static void gcs_roll(MfAttrs *a)
{
    a->nints = a->naxes = 2;
    a->ints[0] = 1;
    a->ints[1] = -2;
    a->axes[0] = 0;
    a->axes[1] = -1;
}

static void gcs_tile_21(MfAttrs *a)
{
    a->nints = 2;
    a->ints[0] = 2;
    a->ints[1] = 1;
}

static void gcs_tile_132(MfAttrs *a)
{
    a->nints = 3;
    a->ints[0] = 1;
    a->ints[1] = 3;
    a->ints[2] = 2;
}

/* Rank 5, every axis tiled: the split shape has rank 10, so the gradient
 * sums one axis at a time. */
static void gcs_tile_22222(MfAttrs *a)
{
    a->nints = 5;
    for (int d = 0; d < 5; d++)
        a->ints[d] = 2;
}

static void gcs_pad_2d(MfAttrs *a)
{
    const int64_t v[4] = {1, 0, 2, 1};
    a->nints = 4;
    memcpy(a->ints, v, sizeof v);
}

static void gcs_pad_1d_const(MfAttrs *a)
{
    a->nints = 2;
    a->ints[0] = 0;
    a->ints[1] = 2;
    a->scalar[0] = 1.5;
}

static void gcs_bcast_23(MfAttrs *a)
{
    a->nints = 2;
    a->ints[0] = 2;
    a->ints[1] = 3;
}

static void gcs_bcast_324(MfAttrs *a)
{
    a->nints = 3;
    a->ints[0] = 3;
    a->ints[1] = 2;
    a->ints[2] = 4;
}

static void gcs_bcast_22(MfAttrs *a)
{
    a->nints = 2;
    a->ints[0] = 2;
    a->ints[1] = 2;
}

static void gcs_segments_3(MfAttrs *a) { a->n = 3; }
static void gcs_segments_4(MfAttrs *a) { a->n = 4; }

/* Index values: input 1 of the gathers and segment sums. */
static void gcs_ix_1310(int input, MfTensor *t)
{
    const int64_t v[4] = {1, 3, 1, 0};
    if (input == 1)
        gcs_set_ints(t, v);
}

static void gcs_ix_2x2(int input, MfTensor *t)
{
    const int64_t v[4] = {3, 0, 3, 2};
    if (input == 1)
        gcs_set_ints(t, v);
}

static void gcs_ix_scalar2(int input, MfTensor *t)
{
    const int64_t v[1] = {2};
    if (input == 1)
        gcs_set_ints(t, v);
}

static void gcs_ids_2021(int input, MfTensor *t)
{
    const int64_t v[4] = {2, 0, 2, 1};
    if (input == 1)
        gcs_set_ints(t, v);
}

static void gcs_ids_2x3(int input, MfTensor *t)
{
    const int64_t v[6] = {3, 1, 3, 0, 0, 3};
    if (input == 1)
        gcs_set_ints(t, v);
}

#define GCS_F MF_FLOAT64
#define GCS_I MF_INT64

static const GradCase cases_shape[] = {
    /* MatMul: each transpose flag */
    {MF_OP_MATMUL, "matmul (2,3) x (3,4)", 2, {2, 2}, {{2, 3}, {3, 4}}, {GCS_F, GCS_F}, -1, 1,
     NULL, NULL, true},
    {MF_OP_MATMUL, "matmul transpose_a (3,2)' x (3,4)", 2, {2, 2}, {{3, 2}, {3, 4}},
     {GCS_F, GCS_F}, -1, 1, gcs_ta, NULL, false},
    {MF_OP_MATMUL, "matmul transpose_b (2,3) x (4,3)'", 2, {2, 2}, {{2, 3}, {4, 3}},
     {GCS_F, GCS_F}, -1, 1, gcs_tb, NULL, false},
    {MF_OP_MATMUL, "matmul transpose_a and _b (3,2)' x (4,3)'", 2, {2, 2}, {{3, 2}, {4, 3}},
     {GCS_F, GCS_F}, -1, 1, gcs_tab, NULL, true},
    {MF_OP_MATMUL, "matmul vector-like (1,3) x (3,1)", 2, {2, 2}, {{1, 3}, {3, 1}},
     {GCS_F, GCS_F}, -1, 1, NULL, NULL, false},
    /* BatchMatMulV2: equal batches, broadcast batches, rank 2 against rank 3 */
    {MF_OP_BATCH_MATMUL, "batch matmul (2,2,3) x (2,3,4)", 2, {3, 3}, {{2, 2, 3}, {2, 3, 4}},
     {GCS_F, GCS_F}, -1, 1, NULL, NULL, true},
    {MF_OP_BATCH_MATMUL, "batch matmul broadcast (1,2,3) x (3,3,4)", 2, {3, 3},
     {{1, 2, 3}, {3, 3, 4}}, {GCS_F, GCS_F}, -1, 1, NULL, NULL, false},
    {MF_OP_BATCH_MATMUL, "batch matmul rank 2 x rank 3: (2,3) x (2,3,4)", 2, {2, 3},
     {{2, 3}, {2, 3, 4}}, {GCS_F, GCS_F}, -1, 1, NULL, NULL, false},
    {MF_OP_BATCH_MATMUL, "batch matmul transposes, rank 3 x rank 2: (2,3,2)' x (4,3)'", 2,
     {3, 2}, {{2, 3, 2}, {4, 3}}, {GCS_F, GCS_F}, -1, 1, gcs_tab, NULL, false},
    {MF_OP_BATCH_MATMUL, "batch matmul transpose_b broadcast (3,2,3) x (1,4,3)'", 2, {3, 3},
     {{3, 2, 3}, {1, 4, 3}}, {GCS_F, GCS_F}, -1, 1, gcs_tb, NULL, false},
    /* any rank: two batch axes broadcast both ways, a matrix against a batch
     * (one GEMM for all batches forward), ranks 4 against 3 */
    {MF_OP_BATCH_MATMUL, "batch matmul rank 4 broadcast (2,1,2,3) x (3,3,2)", 2, {4, 3},
     {{2, 1, 2, 3}, {3, 3, 2}}, {GCS_F, GCS_F}, -1, 1, NULL, NULL, true},
    {MF_OP_BATCH_MATMUL, "batch matmul folded weight (2,2,2,3) x (2,3)'", 2, {4, 2},
     {{2, 2, 2, 3}, {2, 3}}, {GCS_F, GCS_F}, -1, 1, gcs_tb, NULL, true},
    {MF_OP_BATCH_MATMUL, "batch matmul folded weight (3,2,3) x (3,2)", 2, {3, 2},
     {{3, 2, 3}, {3, 2}}, {GCS_F, GCS_F}, -1, 1, NULL, NULL, false},
    {MF_OP_BATCH_MATMUL, "batch matmul rank 3 x rank 4 transposes (1,3,2)' x (2,2,4,3)'", 2,
     {3, 4}, {{1, 3, 2}, {2, 2, 4, 3}}, {GCS_F, GCS_F}, -1, 1, gcs_tab, NULL, false},
    /* MatrixBandPart and Trilu: batched, wide and tall matrices */
    {MF_OP_MATRIX_BAND_PART, "band_part (2,3,4) lower 1 upper 0", 1, {3}, {{2, 3, 4}}, {GCS_F},
     -1, 1, gcs_band_10, NULL, true},
    {MF_OP_TRILU, "triu (4,3) diagonal 1", 1, {2}, {{4, 3}}, {GCS_F}, -1, 1, gcs_triu_1, NULL,
     false},
    {MF_OP_TRILU, "tril (2,3,3) diagonal -1", 1, {3}, {{2, 3, 3}}, {GCS_F}, -1, 1, gcs_tril_m1,
     NULL, false},
    /* Trace */
    {MF_OP_TRACE, "trace (3,3)", 1, {2}, {{3, 3}}, {GCS_F}, -1, 1, NULL, NULL, false},
    {MF_OP_TRACE, "trace wide (2,4)", 1, {2}, {{2, 4}}, {GCS_F}, -1, 1, NULL, NULL, false},
    {MF_OP_TRACE, "trace tall (4,2)", 1, {2}, {{4, 2}}, {GCS_F}, -1, 1, NULL, NULL, false},
    /* views */
    {MF_OP_TRANSPOSE, "transpose (2,3,4) perm (3,1,2)", 1, {3}, {{2, 3, 4}}, {GCS_F}, -1, 1,
     gcs_perm_201, NULL, false},
    {MF_OP_TRANSPOSE, "transpose (2,3,2,3) perm (2,1,4,3)", 1, {4}, {{2, 3, 2, 3}}, {GCS_F},
     -1, 1, gcs_perm_1032, NULL, false},
    {MF_OP_TRANSPOSE, "transpose (2,3) default perm", 1, {2}, {{2, 3}}, {GCS_F}, -1, 1, NULL,
     NULL, false},
    {MF_OP_RESHAPE, "reshape (2,3,4) to (4,-1)", 1, {3}, {{2, 3, 4}}, {GCS_F}, -1, 1,
     gcs_reshape_4_m1, NULL, false},
    {MF_OP_RESHAPE, "reshape (6) to (2,3)", 1, {1}, {{6}}, {GCS_F}, -1, 1, gcs_reshape_2_3,
     NULL, false},
    {MF_OP_RESHAPE, "reshape scalar to (1,1)", 1, {0}, {{0}}, {GCS_F}, -1, 1, gcs_reshape_1_1,
     NULL, false},
    {MF_OP_EXPAND_DIMS, "expand_dims (2,3) axis 1", 1, {2}, {{2, 3}}, {GCS_F}, -1, 1,
     gcs_axis0, NULL, false},
    {MF_OP_EXPAND_DIMS, "expand_dims (2,3) at the end", 1, {2}, {{2, 3}}, {GCS_F}, -1, 1,
     gcs_axis2, NULL, false},
    {MF_OP_SQUEEZE, "squeeze (2,1,3,1) every size-1 axis", 1, {4}, {{2, 1, 3, 1}}, {GCS_F},
     -1, 1, NULL, NULL, false},
    {MF_OP_SQUEEZE, "squeeze (2,1,3,1) axis 2", 1, {4}, {{2, 1, 3, 1}}, {GCS_F}, -1, 1,
     gcs_axes_1, NULL, false},
    /* ConcatV2 and Pack */
    {MF_OP_CONCAT, "concat (2,3),(2,1),(2,2) axis 2", 3, {2, 2, 2}, {{2, 3}, {2, 1}, {2, 2}},
     {GCS_F, GCS_F, GCS_F}, -1, 1, gcs_axis1, NULL, false},
    {MF_OP_CONCAT, "concat (1,3),(2,3) axis -2", 2, {2, 2}, {{1, 3}, {2, 3}}, {GCS_F, GCS_F},
     -1, 1, gcs_axis_m2, NULL, false},
    {MF_OP_CONCAT, "concat one entry (3,2) axis 1", 1, {2}, {{3, 2}}, {GCS_F}, -1, 1,
     gcs_axis0, NULL, false},
    {MF_OP_STACK, "stack 3 x (2,3) axis 1", 3, {2, 2, 2}, {{2, 3}, {2, 3}, {2, 3}},
     {GCS_F, GCS_F, GCS_F}, -1, 1, gcs_axis0, NULL, false},
    {MF_OP_STACK, "stack 2 x (2,3) axis -1", 2, {2, 2}, {{2, 3}, {2, 3}}, {GCS_F, GCS_F}, -1, 1,
     gcs_axis_m1, NULL, false},
    {MF_OP_STACK, "stack 4 scalars", 4, {0, 0, 0, 0}, {{0}, {0}, {0}, {0}},
     {GCS_F, GCS_F, GCS_F, GCS_F}, -1, 1, gcs_axis0, NULL, false},
    /* Slice */
    {MF_OP_SLICE, "slice (4,5) begin (2,3) size (2,-1)", 1, {2}, {{4, 5}}, {GCS_F}, -1, 1,
     gcs_slice_45, NULL, false},
    {MF_OP_SLICE, "slice (3,4,2) begin (1,2,2) size (3,2,1)", 1, {3}, {{3, 4, 2}}, {GCS_F}, -1,
     1, gcs_slice_342, NULL, false},
    /* StridedSlice, its gradient and TensorStridedSliceUpdate (core/ops/strided_slice.c);
     * StridedSliceGrad's second input gives only its shape (an int here: no gradient) */
    {MF_OP_STRIDED_SLICE, "strided_slice (4,5) rows 2:4:2, cols 1:5:2", 1, {2}, {{4, 5}},
     {GCS_F}, -1, 1, gcs_strided_45, NULL, true},
    {MF_OP_STRIDED_SLICE, "strided_slice (3,4,2) rows 1:3:2, col 3 dropped", 1, {3},
     {{3, 4, 2}}, {GCS_F}, -1, 1, gcs_strided_342, NULL, true},
    {MF_OP_STRIDED_SLICE_GRAD, "strided_slice_grad (2,3) into (4,5)", 2, {2, 2},
     {{2, 3}, {4, 5}}, {GCS_F, GCS_I}, -1, 1, gcs_strided_45, NULL, true},
    {MF_OP_STRIDED_SLICE_UPDATE, "strided_slice_update (4,5) window (2,3)", 2, {2, 2},
     {{4, 5}, {2, 3}}, {GCS_F, GCS_F}, -1, 1, gcs_strided_45, NULL, true},
    {MF_OP_STRIDED_SLICE_UPDATE, "strided_slice_update (3,4,2) window (2,2)", 2, {3, 2},
     {{3, 4, 2}, {2, 2}}, {GCS_F, GCS_F}, -1, 1, gcs_strided_342, NULL, false},
    /* GatherV2: repeated indices add up */
    {MF_OP_GATHER, "gather (5,3) rows {2,4,2,1}", 2, {2, 1}, {{5, 3}, {4}}, {GCS_F, GCS_I}, -1,
     1, gcs_axis0, gcs_ix_1310, true},
    {MF_OP_GATHER, "gather (2,4,3) axis 2 with (2,2) indices", 2, {3, 2}, {{2, 4, 3}, {2, 2}},
     {GCS_F, GCS_I}, -1, 1, gcs_axis1, gcs_ix_2x2, false},
    {MF_OP_GATHER, "gather (3,4) axis -1 with a scalar index", 2, {2, 0}, {{3, 4}, {0}},
     {GCS_F, GCS_I}, -1, 1, gcs_axis_m1, gcs_ix_scalar2, false},
    {MF_OP_GATHER, "gather (2,2,4) axis 3, indices {2,4,2,1}", 2, {3, 1}, {{2, 2, 4}, {4}},
     {GCS_F, GCS_I}, -1, 1, gcs_axis2, gcs_ix_1310, false},
    /* ReverseV2 */
    {MF_OP_REVERSE, "reverse (3,4) axis 1", 1, {2}, {{3, 4}}, {GCS_F}, -1, 1, gcs_axes_0, NULL,
     false},
    {MF_OP_REVERSE, "reverse (2,3,4) axes -1 and 1", 1, {3}, {{2, 3, 4}}, {GCS_F}, -1, 1,
     gcs_axes_m1_0, NULL, false},
    /* Roll */
    {MF_OP_ROLL, "roll (2,3,4) by 1 on axis 1, -2 on the last", 1, {3}, {{2, 3, 4}}, {GCS_F},
     -1, 1, gcs_roll, NULL, true},
    /* Tile */
    {MF_OP_TILE, "tile (2,3) by (2,1)", 1, {2}, {{2, 3}}, {GCS_F}, -1, 1, gcs_tile_21, NULL,
     false},
    {MF_OP_TILE, "tile (2,1,3) by (1,3,2)", 1, {3}, {{2, 1, 3}}, {GCS_F}, -1, 1, gcs_tile_132,
     NULL, false},
    {MF_OP_TILE, "tile rank 5 (2,1,2,1,2) by 2 on every axis", 1, {5}, {{2, 1, 2, 1, 2}},
     {GCS_F}, -1, 1, gcs_tile_22222, NULL, false},
    /* Pad */
    {MF_OP_PAD, "pad (2,3) by {1,0},{2,1}", 1, {2}, {{2, 3}}, {GCS_F}, -1, 1, gcs_pad_2d, NULL,
     false},
    {MF_OP_PAD, "pad (3) by {0,2} with 1.5", 1, {1}, {{3}}, {GCS_F}, -1, 1, gcs_pad_1d_const,
     NULL, false},
    /* BroadcastTo */
    {MF_OP_BROADCAST_TO, "broadcast_to (3) to (2,3)", 1, {1}, {{3}}, {GCS_F}, -1, 1,
     gcs_bcast_23, NULL, false},
    {MF_OP_BROADCAST_TO, "broadcast_to (2,1) to (3,2,4)", 1, {2}, {{2, 1}}, {GCS_F}, -1, 1,
     gcs_bcast_324, NULL, false},
    {MF_OP_BROADCAST_TO, "broadcast_to scalar to (2,2)", 1, {0}, {{0}}, {GCS_F}, -1, 1,
     gcs_bcast_22, NULL, false},
    /* Identity */
    {MF_OP_IDENTITY, "identity (2,3)", 1, {2}, {{2, 3}}, {GCS_F}, -1, 1, NULL, NULL, false},
    /* UnsortedSegmentSum (the gradient of GatherV2) */
    {MF_OP_UNSORTED_SEGMENT_SUM, "unsorted_segment_sum (4,3) ids {3,1,3,2} into 3", 2, {2, 1},
     {{4, 3}, {4}}, {GCS_F, GCS_I}, -1, 1, gcs_segments_3, gcs_ids_2021, true},
    {MF_OP_UNSORTED_SEGMENT_SUM, "unsorted_segment_sum (2,3,2) ids (2,3) into 4", 2, {3, 2},
     {{2, 3, 2}, {2, 3}}, {GCS_F, GCS_I}, -1, 1, gcs_segments_4, gcs_ids_2x3, false},
    /* run-time shape ops (core/ops/like.c): input 2 gives only its shape (an int here,
     * so it gets no gradient in any test) */
    {MF_OP_RESHAPE_LIKE, "reshape_like (2,3) to (3,2)", 2, {2, 2}, {{2, 3}, {3, 2}},
     {GCS_F, GCS_I}, -1, 1, NULL, NULL, false},
    {MF_OP_BROADCAST_TO_LIKE, "broadcast_to_like (2,1) to (3,2,4)", 2, {2, 3},
     {{2, 1}, {3, 2, 4}}, {GCS_F, GCS_I}, -1, 1, NULL, NULL, false},
    {MF_OP_SUM_TO_LIKE, "sum_to_like (3,2,4) to (2,1)", 2, {3, 2}, {{3, 2, 4}, {2, 1}},
     {GCS_F, GCS_I}, -1, 1, NULL, NULL, false},
    {MF_OP_SUM_TO_LIKE, "sum_to_like (2,3) to (2,3)", 2, {2, 2}, {{2, 3}, {2, 3}},
     {GCS_F, GCS_I}, -1, 1, NULL, NULL, false},
};

#define N_CASES_SHAPE (sizeof cases_shape / sizeof cases_shape[0])

#endif
