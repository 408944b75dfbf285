/* grad_cases_conv.h — gradient-check cases for Conv2D, Conv2DBackpropInput
 * and Conv2DBackpropFilter (see grad_cases.h): SAME and VALID padding,
 * strides, dilations, the 1x1 path; the three ops are each other's
 * gradients, so the SAME cases also check second order. The backprops'
 * sizes are attributes (ints[0..3]): input_sizes NHWC, filter_sizes HWIO.
 * The depthwise ops (DepthwiseConv2dNative and its backprops) likewise. */
#ifndef MF_GRAD_CASES_CONV_H
#define MF_GRAD_CASES_CONV_H

#include "grad_cases.h"

/* Window attributes: padding (1 SAME), strides and dilations (H, W). */
static void gcc_window(MfAttrs *a, int same, int64_t sh, int64_t sw, int64_t dh, int64_t dw)
{
    a->padding = same;
    a->strides[0] = a->strides[3] = a->dilations[0] = a->dilations[3] = 1;
    a->strides[1] = sh;
    a->strides[2] = sw;
    a->dilations[1] = dh;
    a->dilations[2] = dw;
}

static void gcc_sizes(MfAttrs *a, int64_t s0, int64_t s1, int64_t s2, int64_t s3)
{
    a->nints = 4;
    a->ints[0] = s0;
    a->ints[1] = s1;
    a->ints[2] = s2;
    a->ints[3] = s3;
}

static void gcc_same(MfAttrs *a) { gcc_window(a, 1, 1, 1, 1, 1); }
static void gcc_valid_s21(MfAttrs *a) { gcc_window(a, 0, 2, 1, 1, 1); }
static void gcc_same_s2_d2(MfAttrs *a) { gcc_window(a, 1, 2, 2, 2, 2); }
static void gcc_valid(MfAttrs *a) { gcc_window(a, 0, 1, 1, 1, 1); }

static void gcc_in_same(MfAttrs *a)
{
    gcc_same(a);
    gcc_sizes(a, 2, 5, 5, 2);
}

static void gcc_in_valid_s21(MfAttrs *a)
{
    gcc_valid_s21(a);
    gcc_sizes(a, 1, 6, 7, 2);
}

static void gcc_in_pointwise(MfAttrs *a)
{
    gcc_valid(a);
    gcc_sizes(a, 2, 3, 3, 3);
}

static void gcc_f_same(MfAttrs *a)
{
    gcc_same(a);
    gcc_sizes(a, 3, 3, 2, 3);
}

static void gcc_f_same_s2_d2(MfAttrs *a)
{
    gcc_same_s2_d2(a);
    gcc_sizes(a, 2, 2, 1, 2);
}

/* Depthwise: input_sizes / filter_sizes ([kh, kw, C, M]) as attributes too. */
static void gcc_dw_in_same(MfAttrs *a)
{
    gcc_same(a);
    gcc_sizes(a, 2, 5, 4, 3);
}

static void gcc_dw_in_valid_s21(MfAttrs *a)
{
    gcc_valid_s21(a);
    gcc_sizes(a, 1, 6, 7, 2);
}

static void gcc_dw_f_same_s2_d2(MfAttrs *a)
{
    gcc_same_s2_d2(a);
    gcc_sizes(a, 2, 2, 2, 2);
}

#define GCC_F MF_FLOAT64

static const GradCase cases_conv[] = {
    {MF_OP_CONV2D, "conv2d (2,5,5,2) * (3,3,2,3) SAME", 2, {4, 4},
     {{2, 5, 5, 2}, {3, 3, 2, 3}}, {GCC_F, GCC_F}, -1, 1, gcc_same, NULL, true},
    {MF_OP_CONV2D, "conv2d (1,6,7,2) * (2,3,2,2) VALID strides 2,1", 2, {4, 4},
     {{1, 6, 7, 2}, {2, 3, 2, 2}}, {GCC_F, GCC_F}, -1, 1, gcc_valid_s21, NULL, false},
    {MF_OP_CONV2D, "conv2d (1,7,6,1) * (2,2,1,2) SAME strides 2 dilations 2", 2, {4, 4},
     {{1, 7, 6, 1}, {2, 2, 1, 2}}, {GCC_F, GCC_F}, -1, 1, gcc_same_s2_d2, NULL, true},
    {MF_OP_CONV2D, "conv2d 1x1 (2,3,3,3) * (1,1,3,2)", 2, {4, 4},
     {{2, 3, 3, 3}, {1, 1, 3, 2}}, {GCC_F, GCC_F}, -1, 1, gcc_valid, NULL, true},
    {MF_OP_CONV2D_BACKPROP_INPUT, "conv2d_backprop_input (2,5,5,2) SAME", 2, {4, 4},
     {{3, 3, 2, 3}, {2, 5, 5, 3}}, {GCC_F, GCC_F}, -1, 1, gcc_in_same, NULL, true},
    {MF_OP_CONV2D_BACKPROP_INPUT, "conv2d_backprop_input (1,6,7,2) VALID strides 2,1", 2,
     {4, 4}, {{2, 3, 2, 2}, {1, 3, 5, 2}}, {GCC_F, GCC_F}, -1, 1, gcc_in_valid_s21, NULL,
     false},
    {MF_OP_CONV2D_BACKPROP_INPUT, "conv2d_backprop_input 1x1 (2,3,3,3)", 2, {4, 4},
     {{1, 1, 3, 2}, {2, 3, 3, 2}}, {GCC_F, GCC_F}, -1, 1, gcc_in_pointwise, NULL, true},
    /* input_sizes from input 3's shape (core/ops/like.c; an int here: no gradient) */
    {MF_OP_CONV2D_BACKPROP_INPUT_LIKE, "conv2d_backprop_input_like (2,5,5,2) SAME", 3,
     {4, 4, 4}, {{3, 3, 2, 3}, {2, 5, 5, 3}, {2, 5, 5, 2}}, {GCC_F, GCC_F, MF_INT64}, -1, 1,
     gcc_same, NULL, false},
    {MF_OP_CONV2D_BACKPROP_FILTER, "conv2d_backprop_filter (3,3,2,3) SAME", 2, {4, 4},
     {{2, 5, 5, 2}, {2, 5, 5, 3}}, {GCC_F, GCC_F}, -1, 1, gcc_f_same, NULL, true},
    {MF_OP_CONV2D_BACKPROP_FILTER, "conv2d_backprop_filter (2,2,1,2) SAME strides 2 "
     "dilations 2", 2, {4, 4}, {{1, 7, 6, 1}, {1, 4, 3, 2}}, {GCC_F, GCC_F}, -1, 1,
     gcc_f_same_s2_d2, NULL, true},
    {MF_OP_DEPTHWISE_CONV2D, "depthwise_conv2d (2,5,4,3) * (3,3,3,2) SAME", 2, {4, 4},
     {{2, 5, 4, 3}, {3, 3, 3, 2}}, {GCC_F, GCC_F}, -1, 1, gcc_same, NULL, true},
    {MF_OP_DEPTHWISE_CONV2D, "depthwise_conv2d (1,6,7,2) * (2,3,2,1) VALID strides 2,1", 2,
     {4, 4}, {{1, 6, 7, 2}, {2, 3, 2, 1}}, {GCC_F, GCC_F}, -1, 1, gcc_valid_s21, NULL, false},
    {MF_OP_DEPTHWISE_CONV2D, "depthwise_conv2d (1,7,6,2) * (2,2,2,2) SAME strides 2 "
     "dilations 2", 2, {4, 4}, {{1, 7, 6, 2}, {2, 2, 2, 2}}, {GCC_F, GCC_F}, -1, 1,
     gcc_same_s2_d2, NULL, true},
    {MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT, "depthwise_conv2d_backprop_input (2,5,4,3) SAME", 2,
     {4, 4}, {{3, 3, 3, 2}, {2, 5, 4, 6}}, {GCC_F, GCC_F}, -1, 1, gcc_dw_in_same, NULL, true},
    {MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT, "depthwise_conv2d_backprop_input (1,6,7,2) VALID "
     "strides 2,1", 2, {4, 4}, {{2, 3, 2, 1}, {1, 3, 5, 2}}, {GCC_F, GCC_F}, -1, 1,
     gcc_dw_in_valid_s21, NULL, false},
    {MF_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER, "depthwise_conv2d_backprop_filter (2,2,2,2) SAME "
     "strides 2 dilations 2", 2, {4, 4}, {{1, 7, 6, 2}, {1, 4, 3, 4}}, {GCC_F, GCC_F}, -1, 1,
     gcc_dw_f_same_s2_d2, NULL, true},
};

#endif
