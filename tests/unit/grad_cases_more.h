/* grad_cases_more.h — cases for the ops of issue 17's "More ops" list (see
 * grad_cases.h): Atan2 (broadcasting), Cumprod and Cumsum (exclusive,
 * reverse), and, in 'cases_more_nondiff' (graph walks only), the ops
 * without a gradient: Any, All. */
#ifndef MF_GRAD_CASES_MORE_H
#define MF_GRAD_CASES_MORE_H

#include "grad_cases.h"

#define GCM_F MF_FLOAT64

static void gcm_axis_0(MfAttrs *a) { a->axis = 0; }
static void gcm_axis_1_excl(MfAttrs *a) { a->axis = 1; a->exclusive = true; }
static void gcm_axis_1_excl_rev(MfAttrs *a)
{
    a->axis = 1;
    a->exclusive = a->reverse = true;
}
static void gcm_axis_0_rev(MfAttrs *a) { a->axis = 0; a->reverse = true; }

/* Zeros in the rows of a (2,4): one at the start, two in the middle. */
static void gcm_zeros(int input, MfTensor *t)
{
    (void)input;
    double *p = mf_tensor_data(t);
    p[0] = 0;
    p[5] = p[6] = 0;
}

static void gcm_reduce_axis_1(MfAttrs *a)
{
    a->naxes = 1;
    a->axes[0] = 1;
}

static void gcm_reduce_all_keep(MfAttrs *a)
{
    a->all_axes = true;
    a->keepdims = true;
}

/* A bool pattern with whole rows true and false, so Any and All give both. */
static void gcm_bools(int input, MfTensor *t)
{
    (void)input;
    uint8_t *p = mf_tensor_data(t);
    for (int64_t i = 0; i < mf_tensor_numel(t); i++)
        p[i] = (uint8_t)(i < 4 || i % 3 == 0);
}

static void gcm_k2(MfAttrs *a) { a->n = 2; }
static void gcm_axis_1(MfAttrs *a) { a->axis = 1; }
static void gcm_desc_axis_0(MfAttrs *a) { a->axis = 0; a->direction = 1; }

/* Positions 1..3 along axis 2 (input 1; repeats, so scatters add up). */
static void gcm_positions(int input, MfTensor *t)
{
    if (input != 1)
        return;
    int64_t *p = mf_tensor_data(t);
    for (int64_t i = 0; i < mf_tensor_numel(t); i++)
        p[i] = 1 + (i * 5 + 1) % 3;
}

/* Index tuples for a (3,4) params: {1,2}, {3,4}, {1,2} (a repeat), {2,1};
 * input 'ix' holds them. */
static void gcm_tuples(int ix, MfTensor *t)
{
    static const int64_t v[] = {1, 2, 3, 4, 1, 2, 2, 1};
    int64_t *p = mf_tensor_data(t);
    for (int64_t i = 0; i < mf_tensor_numel(t) && i < 8; i++)
        p[i] = v[i];
    (void)ix;
}

static void gcm_tuples_1(int input, MfTensor *t)
{
    if (input == 1)
        gcm_tuples(input, t);
}

static void gcm_tuples_0(int input, MfTensor *t)
{
    if (input == 0)
        gcm_tuples(input, t);
}

/* Rows 3, 1, 3 of a (3,2) output (input 0, or input 1 for the gather). */
static void gcm_rows(int input, MfTensor *t)
{
    static const int64_t v[] = {3, 1, 3};
    if (input != 0)
        return;
    int64_t *p = mf_tensor_data(t);
    for (int64_t i = 0; i < mf_tensor_numel(t) && i < 3; i++)
        p[i] = v[i];
}

static void gcm_rows_1(int input, MfTensor *t)
{
    if (input == 1)
        gcm_rows(0, t);
}

/* Distinct index tuples {1,2}, {3,4}, {2,1} (input 1): an update by a
 * repeated tuple hides the earlier update, whose gradient is then 0. */
static void gcm_distinct_tuples_1(int input, MfTensor *t)
{
    static const int64_t v[] = {1, 2, 3, 4, 2, 1};
    if (input != 1)
        return;
    int64_t *p = mf_tensor_data(t);
    for (int64_t i = 0; i < mf_tensor_numel(t) && i < 6; i++)
        p[i] = v[i];
}

static void gcm_shape_3x4(MfAttrs *a)
{
    a->nints = 2;
    a->ints[0] = 3;
    a->ints[1] = 4;
}

static void gcm_shape_3x2(MfAttrs *a)
{
    a->nints = 2;
    a->ints[0] = 3;
    a->ints[1] = 2;
}

static void gcm_approximate(MfAttrs *a)
{
    a->approximate = true;
}

static const GradCase cases_more[] = {
    {MF_OP_GATHER_ND, "gather_nd (3,4) by (4,2)", 2, {2, 2}, {{3, 4}, {4, 2}},
     {GCM_F, MF_INT64}, -2, 2, NULL, gcm_tuples_1, true},
    {MF_OP_GATHER_ND, "gather_nd rows of (3,2) by (3,1)", 2, {2, 2}, {{3, 2}, {3, 1}},
     {GCM_F, MF_INT64}, -2, 2, NULL, gcm_rows_1, false},
    {MF_OP_SCATTER_ND, "scatter_nd (4,2) into (3,4)", 2, {2, 1}, {{4, 2}, {4}},
     {MF_INT64, GCM_F}, -2, 2, gcm_shape_3x4, gcm_tuples_0, true},
    {MF_OP_SCATTER_ND, "scatter_nd rows (3,1), (3,2) into (3,2)", 2, {2, 2}, {{3, 1}, {3, 2}},
     {MF_INT64, GCM_F}, -2, 2, gcm_shape_3x2, gcm_rows, false},
    {MF_OP_SCATTER_ND_LIKE, "scatter_nd_like (3,4), (4,2), (4,)", 3, {2, 2, 1},
     {{3, 4}, {4, 2}, {4}}, {GCM_F, MF_INT64, GCM_F}, -2, 2, NULL, gcm_tuples_1, false},
    {MF_OP_TENSOR_SCATTER_UPDATE, "tensor_scatter_update (3,4) at (3,2) distinct", 3,
     {2, 2, 1}, {{3, 4}, {3, 2}, {3}}, {GCM_F, MF_INT64, GCM_F}, -2, 2, NULL,
     gcm_distinct_tuples_1, true},
    {MF_OP_TENSOR_SCATTER_UPDATE, "tensor_scatter_update rows of (3,2) at (2,1)", 3,
     {2, 2, 2}, {{3, 2}, {2, 1}, {2, 2}}, {GCM_F, MF_INT64, GCM_F}, -2, 2, NULL, gcm_rows_1,
     false},
    {MF_OP_TENSOR_SCATTER_ADD, "tensor_scatter_add (3,4) at (4,2) with a repeat", 3,
     {2, 2, 1}, {{3, 4}, {4, 2}, {4}}, {GCM_F, MF_INT64, GCM_F}, -2, 2, NULL, gcm_tuples_1,
     true},
    {MF_OP_TENSOR_SCATTER_SUB, "tensor_scatter_sub (3,4) at (4,2) with a repeat", 3,
     {2, 2, 1}, {{3, 4}, {4, 2}, {4}}, {GCM_F, MF_INT64, GCM_F}, -2, 2, NULL, gcm_tuples_1,
     true},
    {MF_OP_TOP_K, "top_k (3,5) k 2", 1, {2}, {{3, 5}}, {GCM_F}, -2, 2, gcm_k2, NULL, true},
    {MF_OP_SORT, "sort (3,4) axis 2", 1, {2}, {{3, 4}}, {GCM_F}, -2, 2, gcm_axis_1, NULL, true},
    {MF_OP_SORT, "sort (3,4) axis 1 descending", 1, {2}, {{3, 4}}, {GCM_F}, -2, 2,
     gcm_desc_axis_0, NULL, false},
    {MF_OP_GATHER_ALONG_AXIS, "gather_along_axis (2,3) by (2,4)", 2, {2, 2}, {{2, 3}, {2, 4}},
     {GCM_F, MF_INT64}, -2, 2, gcm_axis_1, gcm_positions, true},
    {MF_OP_SCATTER_ALONG_AXIS, "scatter_along_axis like (2,3), (2,4)", 3, {2, 2, 2},
     {{2, 3}, {2, 4}, {2, 4}}, {GCM_F, MF_INT64, GCM_F}, -2, 2, gcm_axis_1, gcm_positions,
     false}, /* first order only: 'like' gets no gradient (second order: the gather case) */
    {MF_OP_ATAN2, "atan2 (2,3), (3,)", 2, {2, 1}, {{2, 3}, {3}}, {GCM_F, GCM_F}, -2, 2, NULL,
     NULL, true},
    {MF_OP_ATAN2, "atan2 (), (2,3)", 2, {0, 2}, {{0}, {2, 3}}, {GCM_F, GCM_F}, 0.5, 2, NULL,
     NULL, false},
    {MF_OP_CUMPROD, "cumprod (3,4) axis 1", 1, {2}, {{3, 4}}, {GCM_F}, 0.5, 1.5, gcm_axis_0,
     NULL, true},
    {MF_OP_CUMPROD, "cumprod (2,4) axis 2 exclusive", 1, {2}, {{2, 4}}, {GCM_F}, -1.5, -0.5,
     gcm_axis_1_excl, NULL, false},
    {MF_OP_CUMPROD, "cumprod (2,4) axis 2 exclusive reverse", 1, {2}, {{2, 4}}, {GCM_F}, 0.5,
     1.5, gcm_axis_1_excl_rev, NULL, false},
    {MF_OP_CUMPROD, "cumprod (3,2) axis 1 reverse", 1, {2}, {{3, 2}}, {GCM_F}, 0.5, 1.5,
     gcm_axis_0_rev, NULL, false},
    {MF_OP_CUMPROD, "cumprod (2,4) axis 2 with zeros", 1, {2}, {{2, 4}}, {GCM_F}, 0.5, 1.5,
     gcm_axis_1, gcm_zeros, false},
    {MF_OP_CUMPROD, "cumprod (2,4) axis 2 exclusive reverse with zeros", 1, {2}, {{2, 4}},
     {GCM_F}, 0.5, 1.5, gcm_axis_1_excl_rev, gcm_zeros, false},
    {MF_OP_CUMSUM, "cumsum (2,4) axis 2 exclusive reverse", 1, {2}, {{2, 4}}, {GCM_F}, -2, 2,
     gcm_axis_1_excl_rev, NULL, true},
    /* activations (activation.c): the ops, and their gradient ops to second order (the
     * gradient ops' own gradients are written with ops) */
    {MF_OP_GELU, "gelu (2,3)", 1, {2}, {{2, 3}}, {GCM_F}, -3, 3, NULL, NULL, true},
    {MF_OP_GELU, "gelu (2,3) approximate", 1, {2}, {{2, 3}}, {GCM_F}, -3, 3, gcm_approximate,
     NULL, true},
    {MF_OP_GELU_GRAD, "gelu_grad (2,3)", 2, {2, 2}, {{2, 3}, {2, 3}}, {GCM_F, GCM_F}, -3, 3,
     NULL, NULL, true},
    {MF_OP_GELU_GRAD, "gelu_grad (2,3) approximate", 2, {2, 2}, {{2, 3}, {2, 3}},
     {GCM_F, GCM_F}, -3, 3, gcm_approximate, NULL, true},
    {MF_OP_SILU, "silu (2,3)", 1, {2}, {{2, 3}}, {GCM_F}, -4, 4, NULL, NULL, true},
    {MF_OP_SILU_GRAD, "silu_grad (2,3)", 2, {2, 2}, {{2, 3}, {2, 3}}, {GCM_F, GCM_F}, -4, 4,
     NULL, NULL, true},
    /* (dy, y) with y in (0, 1) (a sigmoid's output) and (-1, 1) (tanh's) */
    {MF_OP_SIGMOID_GRAD, "sigmoid_grad (2,3)", 2, {2, 2}, {{2, 3}, {2, 3}}, {GCM_F, GCM_F},
     0.05, 0.95, NULL, NULL, true},
    {MF_OP_TANH_GRAD, "tanh_grad (2,3)", 2, {2, 2}, {{2, 3}, {2, 3}}, {GCM_F, GCM_F}, -0.9, 0.9,
     NULL, NULL, true},
    {MF_OP_ERFC, "erfc (2,3)", 1, {2}, {{2, 3}}, {GCM_F}, -2, 2, NULL, NULL, true},
    {MF_OP_ACOSH, "acosh (2,3)", 1, {2}, {{2, 3}}, {GCM_F}, 1.2, 3, NULL, NULL, true},
    {MF_OP_SQUARED_DIFFERENCE, "squared_difference (2,3), (3,)", 2, {2, 1}, {{2, 3}, {3}},
     {GCM_F, GCM_F}, -2, 2, NULL, NULL, true},
    {MF_OP_SQUARED_DIFFERENCE, "squared_difference (), (2,3)", 2, {0, 2}, {{0}, {2, 3}},
     {GCM_F, GCM_F}, -2, 2, NULL, NULL, false},
};

static const GradCase cases_more_nondiff[] = {
    {MF_OP_ARGSORT, "argsort (3,4) axis 2", 1, {2}, {{3, 4}}, {GCM_F}, -2, 2, gcm_axis_1, NULL,
     false},
    {MF_OP_ANY, "any axis 2 of (3,4)", 1, {2}, {{3, 4}}, {MF_BOOL}, 0, 0, gcm_reduce_axis_1,
     gcm_bools, false},
    {MF_OP_ALL, "all of (3,4), keepdims", 1, {2}, {{3, 4}}, {MF_BOOL}, 0, 0, gcm_reduce_all_keep,
     gcm_bools, false},
    {MF_OP_ALL, "all axis 2 of (3,4)", 1, {2}, {{3, 4}}, {MF_BOOL}, 0, 0, gcm_reduce_axis_1,
     gcm_bools, false},
};

#undef GCM_F

#endif
