/* grad_cases_math.h — gradient-check cases (see grad_cases.h) for the math
 * families: elementwise binary and unary ops, SelectV2 and Cast, and the
 * reductions. Value ranges keep inputs away from kinks and poles (|x| near
 * 0 for abs/relu, x <= 0 for log, integers of a/b for mod) so central
 * differences are meaningful; ties and zeros are covered by value tests in
 * test_grad.c and by the Prod cases below. */
#ifndef MF_GRAD_CASES_MATH_H
#define MF_GRAD_CASES_MATH_H

#include <stdint.h>

#include "grad_cases.h"

static void gc_axis1(MfAttrs *a)
{
    a->axes[0] = 1;
    a->naxes = 1;
}

static void gc_axis_last(MfAttrs *a)
{
    a->axes[0] = -1;
    a->naxes = 1;
}

static void gc_axes02_keep(MfAttrs *a)
{
    a->axes[0] = 0;
    a->axes[1] = 2;
    a->naxes = 2;
    a->keepdims = true;
}

static void gc_all_axes(MfAttrs *a)
{
    a->all_axes = true;
}

static void gc_to_float64(MfAttrs *a)
{
    a->dtype = MF_FLOAT64;
}

/* SelectV2: the condition (input 0, bool) alternates true / false. */
static void gc_select_cond(int input, MfTensor *t)
{
    if (input != 0)
        return;
    uint8_t *p = mf_tensor_data(t);
    for (int64_t i = 0; i < mf_tensor_numel(t); i++)
        p[i] = (uint8_t)(i % 3 != 1);
}

/* Prod over axis 1 of a (2,3,4) input: group (0,*,0) holds one zero, group
 * (1,*,2) two zeros; the other groups none. */
static void gc_prod_zeros(int input, MfTensor *t)
{
    double *p = mf_tensor_data(t);
    (void)input;
    p[0 * 12 + 1 * 4 + 0] = 0;
    p[1 * 12 + 0 * 4 + 2] = 0;
    p[1 * 12 + 2 * 4 + 2] = 0;
}

#define GC_F64 MF_FLOAT64
#define GC_2x3 {2, 3}
#define GC_2x3x4 {2, 3, 4}

static const GradCase cases_math[] = {
    /* elementwise binary */
    {MF_OP_ADD, "same shape", 2, {2, 2}, {GC_2x3, GC_2x3}, {GC_F64, GC_F64}, -2, 2, NULL, NULL,
     false},
    {MF_OP_ADD, "broadcast (2,3) + (3,)", 2, {2, 1}, {GC_2x3, {3}}, {GC_F64, GC_F64}, -2, 2,
     NULL, NULL, false},
    {MF_OP_SUB, "broadcast (2,1) - (1,3)", 2, {2, 2}, {{2, 1}, {1, 3}}, {GC_F64, GC_F64}, -2, 2,
     NULL, NULL, false},
    {MF_OP_MUL, "same shape", 2, {2, 2}, {GC_2x3, GC_2x3}, {GC_F64, GC_F64}, -2, 2, NULL, NULL,
     true},
    {MF_OP_MUL, "broadcast (2,3) * scalar", 2, {2, 0}, {GC_2x3, {0}}, {GC_F64, GC_F64}, -2, 2,
     NULL, NULL, false},
    {MF_OP_DIV, "same shape", 2, {2, 2}, {GC_2x3, GC_2x3}, {GC_F64, GC_F64}, 0.5, 2, NULL, NULL,
     true},
    {MF_OP_DIV, "broadcast (3,) / (2,3)", 2, {1, 2}, {{3}, GC_2x3}, {GC_F64, GC_F64}, 0.5, 2,
     NULL, NULL, false},
    {MF_OP_MOD, "broadcast (2,3) mod (3,)", 2, {2, 1}, {GC_2x3, {3}}, {GC_F64, GC_F64}, 0.3, 3,
     NULL, NULL, false},
    {MF_OP_POW, "positive base", 2, {2, 2}, {GC_2x3, GC_2x3}, {GC_F64, GC_F64}, 0.5, 2, NULL,
     NULL, true},
    {MF_OP_POW, "broadcast (2,3) ^ (1,3)", 2, {2, 2}, {GC_2x3, {1, 3}}, {GC_F64, GC_F64}, 0.5, 2,
     NULL, NULL, false},
    {MF_OP_MAXIMUM, "same shape", 2, {2, 2}, {GC_2x3, GC_2x3}, {GC_F64, GC_F64}, -1, 1, NULL,
     NULL, false},
    {MF_OP_MAXIMUM, "broadcast (2,3), (2,1)", 2, {2, 2}, {GC_2x3, {2, 1}}, {GC_F64, GC_F64}, -1, 1,
     NULL, NULL, false},
    {MF_OP_MINIMUM, "broadcast (3,), (2,3)", 2, {1, 2}, {{3}, GC_2x3}, {GC_F64, GC_F64}, -1, 1,
     NULL, NULL, false},

    /* elementwise unary */
    {MF_OP_NEG, "(2,3)", 1, {2}, {GC_2x3}, {GC_F64}, -2, 2, NULL, NULL, false},
    {MF_OP_ABS, "(2,3) both signs", 1, {2}, {GC_2x3}, {GC_F64}, -2, 2, NULL, NULL, false},
    {MF_OP_SQUARE, "(2,3)", 1, {2}, {GC_2x3}, {GC_F64}, -2, 2, NULL, NULL, true},
    {MF_OP_SQRT, "(2,3)", 1, {2}, {GC_2x3}, {GC_F64}, 0.5, 2, NULL, NULL, true},
    {MF_OP_RSQRT, "(2,3)", 1, {2}, {GC_2x3}, {GC_F64}, 0.5, 2, NULL, NULL, true},
    {MF_OP_EXP, "(2,3)", 1, {2}, {GC_2x3}, {GC_F64}, -2, 2, NULL, NULL, true},
    {MF_OP_LOG, "(2,3)", 1, {2}, {GC_2x3}, {GC_F64}, 0.5, 2, NULL, NULL, true},
    {MF_OP_LOG1P, "(2,3)", 1, {2}, {GC_2x3}, {GC_F64}, -0.5, 2, NULL, NULL, true},
    {MF_OP_SIN, "(2,3)", 1, {2}, {GC_2x3}, {GC_F64}, -3, 3, NULL, NULL, true},
    {MF_OP_COS, "(2,3)", 1, {2}, {GC_2x3}, {GC_F64}, -3, 3, NULL, NULL, true},
    {MF_OP_TANH, "(2,3)", 1, {2}, {GC_2x3}, {GC_F64}, -2, 2, NULL, NULL, true},
    {MF_OP_SIGMOID, "(2,3)", 1, {2}, {GC_2x3}, {GC_F64}, -3, 3, NULL, NULL, true},
    {MF_OP_RELU, "(2,3) both signs", 1, {2}, {GC_2x3}, {GC_F64}, -2, 2, NULL, NULL, false},
    {MF_OP_SOFTPLUS, "(2,3)", 1, {2}, {GC_2x3}, {GC_F64}, -3, 3, NULL, NULL, true},

    /* select and cast */
    {MF_OP_SELECT, "cond (2,3), x (2,3), y (3,)", 3, {2, 2, 1}, {GC_2x3, GC_2x3, {3}},
     {MF_BOOL, GC_F64, GC_F64}, -2, 2, NULL, gc_select_cond, false},
    {MF_OP_CAST, "float64 to float64", 1, {2}, {GC_2x3}, {GC_F64}, -2, 2, gc_to_float64, NULL,
     false},

    /* reductions */
    {MF_OP_SUM, "axis 1 of (2,3,4)", 1, {3}, {GC_2x3x4}, {GC_F64}, -2, 2, gc_axis1, NULL, false},
    {MF_OP_SUM, "axes 0,2 keepdims", 1, {3}, {GC_2x3x4}, {GC_F64}, -2, 2, gc_axes02_keep, NULL,
     false},
    {MF_OP_SUM, "all axes", 1, {3}, {GC_2x3x4}, {GC_F64}, -2, 2, gc_all_axes, NULL, false},
    {MF_OP_MEAN, "axis -1", 1, {3}, {GC_2x3x4}, {GC_F64}, -2, 2, gc_axis_last, NULL, false},
    {MF_OP_MEAN, "axes 0,2 keepdims", 1, {3}, {GC_2x3x4}, {GC_F64}, -2, 2, gc_axes02_keep, NULL,
     false},
    {MF_OP_MAX, "axis 1", 1, {3}, {GC_2x3x4}, {GC_F64}, -2, 2, gc_axis1, NULL, false},
    {MF_OP_MAX, "all axes", 1, {3}, {GC_2x3x4}, {GC_F64}, -2, 2, gc_all_axes, NULL, false},
    {MF_OP_MIN, "axis -1", 1, {3}, {GC_2x3x4}, {GC_F64}, -2, 2, gc_axis_last, NULL, false},
    {MF_OP_PROD, "axis 1, no zeros", 1, {3}, {GC_2x3x4}, {GC_F64}, 0.5, 1.5, gc_axis1, NULL,
     true},
    {MF_OP_PROD, "axis 1, one and two zeros", 1, {3}, {GC_2x3x4}, {GC_F64}, -1.5, 1.5, gc_axis1,
     gc_prod_zeros, false},
    {MF_OP_PROD, "axes 0,2 keepdims", 1, {3}, {GC_2x3x4}, {GC_F64}, 0.5, 1.5, gc_axes02_keep,
     NULL, false},
};

#undef GC_F64
#undef GC_2x3
#undef GC_2x3x4

#endif
