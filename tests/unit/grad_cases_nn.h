/* grad_cases_nn.h — gradient-check cases for the NN ops (see grad_cases.h):
 * Softmax and LogSoftmax along inner and outer axes, their gradient ops
 * SoftmaxGrad and LogSoftmaxGrad (any y, not only a softmax's: the
 * formulas are polynomials in y and dy, and exp), LayerNorm and
 * LayerNormGrad (second order: LayerNormGrad's gradient in x is written
 * with ops),
 * SoftmaxCrossEntropyWithLogits (logits and labels, both outputs weighted),
 * SparseSoftmaxCrossEntropyWithLogits (1-based int64 labels), BiasAdd
 * (NHWC and NCHW), MaxPool and AvgPool (VALID and SAME, strides), and the
 * pooling gradient ops MaxPoolGrad, AvgPoolGrad and MaxPoolGradGrad (first
 * order only: their routing inputs get no gradient, which the second-order
 * check of test_grad.c does not expect). */
#ifndef MF_GRAD_CASES_NN_H
#define MF_GRAD_CASES_NN_H

#include "grad_cases.h"

#define GCN_F MF_FLOAT64
#define GCN_I MF_INT64

static void gcn_axis_m1(MfAttrs *a) { a->axis = -1; }
static void gcn_axis_1(MfAttrs *a) { a->axis = 1; }
static void gcn_axis_0(MfAttrs *a) { a->axis = 0; }
static void gcn_axis_1_rev(MfAttrs *a) { a->axis = 1; a->reverse = true; }
static void gcn_nchw(MfAttrs *a) { a->data_format = 1; }
static void gcn_bn_eps(MfAttrs *a) { a->scalar[0] = 1e-3; }

static void gcn_pool(MfAttrs *a, int64_t k, int64_t s, int padding)
{
    for (int i = 0; i < 4; i++)
        a->ksize[i] = a->strides[i] = 1;
    a->ksize[1] = a->ksize[2] = k;
    a->strides[1] = a->strides[2] = s;
    a->padding = padding;
}

static void gcn_k2s2_valid(MfAttrs *a) { gcn_pool(a, 2, 2, 0); }
static void gcn_k3s2_same(MfAttrs *a) { gcn_pool(a, 3, 2, 1); }
static void gcn_k2s1_same(MfAttrs *a) { gcn_pool(a, 2, 1, 1); }

/* Sparse labels: classes 1..C cycling through the rows. */
static void gcn_labels(int input, MfTensor *t)
{
    if (input != 1)
        return;
    int64_t *p = mf_tensor_data(t);
    for (int64_t i = 0; i < mf_tensor_numel(t); i++)
        p[i] = 1 + (i * 2 + 1) % 3;
}

/* Dense labels: each row a distribution (positive, summing to 1), as the
 * op's gradient assumes (TensorFlow's too). */
static void gcn_distributions(int input, MfTensor *t)
{
    if (input != 1)
        return;
    double *p = mf_tensor_data(t);
    int64_t n = t->shape[t->rank - 1];
    for (int64_t r = 0; r < mf_tensor_numel(t) / n; r++) {
        double sum = 0;
        for (int64_t j = 0; j < n; j++)
            sum += p[r * n + j] += 0.1;
        for (int64_t j = 0; j < n; j++)
            p[r * n + j] /= sum;
    }
}

static void gcn_causal(MfAttrs *a) { a->causal = true; }
static void gcn_causal_scale(MfAttrs *a) { a->causal = true; a->scalar[0] = 0.7; }
/* Attention dropout with a fixed key: every call draws the same mask. */
static void gcn_attn_dropout(MfAttrs *a) { a->causal = true; a->scalar[1] = 0.4; a->seed = 99; }

/* A bool attention mask (input 3) keeping (r + c) % 3 != 2: every row of
 * at least 3 keys keeps one. */
static void gcn_attn_keep(int input, MfTensor *t)
{
    if (input != 3 || t->dtype != MF_BOOL)
        return;
    uint8_t *p = mf_tensor_data(t);
    int64_t cols = t->shape[t->rank - 1], rows = t->shape[t->rank - 2];
    for (int64_t i = 0; i < mf_tensor_numel(t); i++)
        p[i] = (uint8_t)(((i / cols) % rows + i % cols) % 3 != 2);
}

static const GradCase cases_nn[] = {
    /* ScaledDotProductAttention: both outputs (out and the row log-sum-exps) weighted */
    {MF_OP_ATTENTION, "attention (2,5,3) (2,4,3) (2,4,2)", 3, {3, 3, 3},
     {{2, 5, 3}, {2, 4, 3}, {2, 4, 2}}, {GCN_F, GCN_F, GCN_F}, -1, 1, NULL, NULL, false},
    {MF_OP_ATTENTION, "attention causal, batch axes broadcast", 3, {4, 3, 3},
     {{2, 1, 5, 3}, {3, 5, 3}, {1, 5, 2}}, {GCN_F, GCN_F, GCN_F}, -1, 1, gcn_causal_scale,
     NULL, false},
    {MF_OP_ATTENTION, "attention bool mask (4,5)", 4, {3, 3, 3, 2},
     {{2, 4, 3}, {2, 5, 3}, {2, 5, 2}, {4, 5}}, {GCN_F, GCN_F, GCN_F, MF_BOOL}, -1, 1, NULL,
     gcn_attn_keep, false},
    {MF_OP_ATTENTION, "attention float mask (3,1,4), causal Tq < Tk", 4, {3, 3, 3, 3},
     {{3, 2, 3}, {3, 4, 3}, {3, 4, 3}, {3, 1, 4}}, {GCN_F, GCN_F, GCN_F, GCN_F}, -1, 1,
     gcn_causal, NULL, false},
    {MF_OP_ATTENTION, "attention (70,2) x (300,2): several tiles", 3, {2, 2, 2},
     {{70, 2}, {300, 2}, {300, 1}}, {GCN_F, GCN_F, GCN_F}, -1, 1, NULL, NULL, false},
    {MF_OP_ATTENTION, "attention causal (130,2): tiles cut by the diagonal", 3, {2, 2, 2},
     {{130, 2}, {130, 2}, {130, 1}}, {GCN_F, GCN_F, GCN_F}, -1, 1, gcn_causal, NULL, false},
    {MF_OP_ATTENTION, "attention dropout 0.4, causal, float mask (2,6,7)", 4, {3, 3, 3, 2},
     {{2, 6, 3}, {2, 7, 3}, {2, 7, 2}, {6, 7}}, {GCN_F, GCN_F, GCN_F, GCN_F}, -1, 1,
     gcn_attn_dropout, NULL, false},
    {MF_OP_SOFTMAX, "softmax (2,4) last axis", 1, {2}, {{2, 4}}, {GCN_F}, -2, 2, gcn_axis_m1,
     NULL, true},
    {MF_OP_SOFTMAX, "softmax (3,2,2) middle axis", 1, {3}, {{3, 2, 2}}, {GCN_F}, -2, 2,
     gcn_axis_1, NULL, false},
    {MF_OP_LOG_SOFTMAX, "log_softmax (2,4) last axis", 1, {2}, {{2, 4}}, {GCN_F}, -2, 2,
     gcn_axis_m1, NULL, true},
    {MF_OP_LOG_SOFTMAX, "log_softmax (3,2) first axis", 1, {2}, {{3, 2}}, {GCN_F}, -2, 2,
     gcn_axis_0, NULL, false},
    {MF_OP_SOFTMAX_GRAD, "softmax_grad (2,4) last axis", 2, {2, 2}, {{2, 4}, {2, 4}},
     {GCN_F, GCN_F}, -2, 2, gcn_axis_m1, NULL, true},
    {MF_OP_SOFTMAX_GRAD, "softmax_grad (3,2,2) middle axis", 2, {3, 3},
     {{3, 2, 2}, {3, 2, 2}}, {GCN_F, GCN_F}, -2, 2, gcn_axis_1, NULL, true},
    {MF_OP_LOG_SOFTMAX_GRAD, "log_softmax_grad (2,4) last axis", 2, {2, 2}, {{2, 4}, {2, 4}},
     {GCN_F, GCN_F}, -2, 2, gcn_axis_m1, NULL, true},
    {MF_OP_LOG_SOFTMAX_GRAD, "log_softmax_grad (3,2) first axis", 2, {2, 2},
     {{3, 2}, {3, 2}}, {GCN_F, GCN_F}, -2, 2, gcn_axis_0, NULL, true},
    {MF_OP_LAYER_NORM, "layer_norm (2,5)", 1, {2}, {{2, 5}}, {GCN_F}, -2, 2, gcn_bn_eps, NULL,
     true},
    {MF_OP_LAYER_NORM, "layer_norm (3,2,4)", 1, {3}, {{3, 2, 4}}, {GCN_F}, -2, 2, gcn_bn_eps,
     NULL, true},
    {MF_OP_LAYER_NORM_GRAD, "layer_norm_grad (2,5)", 2, {2, 2}, {{2, 5}, {2, 5}},
     {GCN_F, GCN_F}, -2, 2, gcn_bn_eps, NULL, true},
    {MF_OP_LAYER_NORM_GRAD, "layer_norm_grad (3,2,3)", 2, {3, 3}, {{3, 2, 3}, {3, 2, 3}},
     {GCN_F, GCN_F}, -2, 2, gcn_bn_eps, NULL, true},
    {MF_OP_SOFTMAX_XENT, "softmax_cross_entropy (3,4)", 2, {2, 2}, {{3, 4}, {3, 4}},
     {GCN_F, GCN_F}, 0, 1, NULL, gcn_distributions, true},
    {MF_OP_SOFTMAX_XENT, "softmax_cross_entropy (2,2,3)", 2, {3, 3}, {{2, 2, 3}, {2, 2, 3}},
     {GCN_F, GCN_F}, 0, 1, NULL, gcn_distributions, false},
    {MF_OP_SPARSE_SOFTMAX_XENT, "sparse_softmax_cross_entropy (4,3)", 2, {2, 1}, {{4, 3}, {4}},
     {GCN_F, GCN_I}, -2, 2, NULL, gcn_labels, true},
    {MF_OP_SPARSE_SOFTMAX_XENT, "sparse_softmax_cross_entropy (2,2,3)", 2, {3, 2},
     {{2, 2, 3}, {2, 2}}, {GCN_F, GCN_I}, -2, 2, NULL, gcn_labels, false},
    {MF_OP_FUSED_BATCH_NORM, "fused_batch_norm (5,3), all three outputs weighted", 3, {2, 1, 1},
     {{5, 3}, {3}, {3}}, {GCN_F, GCN_F, GCN_F}, -2, 2, gcn_bn_eps, NULL, true},
    {MF_OP_FUSED_BATCH_NORM, "fused_batch_norm (2,2,2,3) NHWC", 3, {4, 1, 1},
     {{2, 2, 2, 3}, {3}, {3}}, {GCN_F, GCN_F, GCN_F}, -2, 2, gcn_bn_eps, NULL, true},
    /* its gradient op (second derivatives), every input independent: the statistics
     * given apart from x, a variance in [0.1, 0.9) */
    {MF_OP_FUSED_BATCH_NORM_GRAD, "fused_batch_norm_grad (4,3)", 5, {2, 2, 1, 1, 1},
     {{4, 3}, {4, 3}, {3}, {3}, {3}}, {GCN_F, GCN_F, GCN_F, GCN_F, GCN_F}, 0.1, 0.9,
     gcn_bn_eps, NULL, false},
    {MF_OP_FUSED_BATCH_NORM_GRAD, "fused_batch_norm_grad (2,2,3), dmean, dvariance", 7,
     {3, 3, 1, 1, 1, 1, 1}, {{2, 2, 3}, {2, 2, 3}, {3}, {3}, {3}, {3}, {3}},
     {GCN_F, GCN_F, GCN_F, GCN_F, GCN_F, GCN_F, GCN_F}, 0.1, 0.9, gcn_bn_eps, NULL, false},
    {MF_OP_TAN, "tan (2,3)", 1, {2}, {{2, 3}}, {GCN_F}, -1, 1, NULL, NULL, true},
    {MF_OP_SINH, "sinh (2,3)", 1, {2}, {{2, 3}}, {GCN_F}, -2, 2, NULL, NULL, true},
    {MF_OP_COSH, "cosh (2,3)", 1, {2}, {{2, 3}}, {GCN_F}, -2, 2, NULL, NULL, true},
    {MF_OP_ASIN, "asin (2,3)", 1, {2}, {{2, 3}}, {GCN_F}, -0.8, 0.8, NULL, NULL, true},
    {MF_OP_ACOS, "acos (2,3)", 1, {2}, {{2, 3}}, {GCN_F}, -0.8, 0.8, NULL, NULL, true},
    {MF_OP_ATAN, "atan (2,3)", 1, {2}, {{2, 3}}, {GCN_F}, -3, 3, NULL, NULL, true},
    {MF_OP_EXPM1, "expm1 (2,3)", 1, {2}, {{2, 3}}, {GCN_F}, -2, 2, NULL, NULL, true},
    {MF_OP_ERF, "erf (2,3)", 1, {2}, {{2, 3}}, {GCN_F}, -2, 2, NULL, NULL, true},
    {MF_OP_ATANH, "atanh (2,3)", 1, {2}, {{2, 3}}, {GCN_F}, -0.8, 0.8, NULL, NULL, true},
    {MF_OP_ASINH, "asinh (2,3)", 1, {2}, {{2, 3}}, {GCN_F}, -2, 2, NULL, NULL, true},
    {MF_OP_CUMSUM, "cumsum (3,4) axis 1", 1, {2}, {{3, 4}}, {GCN_F}, -2, 2, gcn_axis_0, NULL,
     true},
    {MF_OP_CUMSUM, "cumsum (2,3) axis 2 reverse", 1, {2}, {{2, 3}}, {GCN_F}, -2, 2,
     gcn_axis_1_rev, NULL, false},
    {MF_OP_RECIPROCAL, "reciprocal (2,3)", 1, {2}, {{2, 3}}, {GCN_F}, 0.5, 2, NULL, NULL, true},
    {MF_OP_LSTM_CELL, "lstm_cell z (3,8), c_prev (3,2)", 2, {2, 2}, {{3, 8}, {3, 2}},
     {GCN_F, GCN_F}, -2, 2, NULL, NULL, false},
    {MF_OP_LSTM_CELL, "lstm_cell z (2,12), zero state", 1, {2}, {{2, 12}}, {GCN_F}, -2, 2, NULL,
     NULL, false},
    {MF_OP_BIAS_ADD, "bias_add NHWC (2,3,4) + (4)", 2, {3, 1}, {{2, 3, 4}, {4}}, {GCN_F, GCN_F},
     -1, 1, NULL, NULL, false},
    {MF_OP_BIAS_ADD, "bias_add NCHW (2,3,2,2) + (3)", 2, {4, 1}, {{2, 3, 2, 2}, {3}},
     {GCN_F, GCN_F}, -1, 1, gcn_nchw, NULL, false},
    {MF_OP_BIAS_ADD, "bias_add (3) + (3)", 2, {1, 1}, {{3}, {3}}, {GCN_F, GCN_F}, -1, 1, NULL,
     NULL, false},
    {MF_OP_MAX_POOL, "max_pool (1,4,4,2) k2 s2 VALID", 1, {4}, {{1, 4, 4, 2}}, {GCN_F}, -1, 1,
     gcn_k2s2_valid, NULL, true},
    {MF_OP_MAX_POOL, "max_pool (2,5,5,1) k3 s2 SAME", 1, {4}, {{2, 5, 5, 1}}, {GCN_F}, -1, 1,
     gcn_k3s2_same, NULL, false},
    {MF_OP_AVG_POOL, "avg_pool (1,4,4,2) k2 s2 VALID", 1, {4}, {{1, 4, 4, 2}}, {GCN_F}, -1, 1,
     gcn_k2s2_valid, NULL, true},
    {MF_OP_AVG_POOL, "avg_pool (2,5,4,2) k3 s2 SAME", 1, {4}, {{2, 5, 4, 2}}, {GCN_F}, -1, 1,
     gcn_k3s2_same, NULL, false},
    {MF_OP_AVG_POOL, "avg_pool (1,3,3,1) k2 s1 SAME", 1, {4}, {{1, 3, 3, 1}}, {GCN_F}, -1, 1,
     gcn_k2s1_same, NULL, false},
    {MF_OP_MAX_POOL_GRAD, "max_pool_grad (1,4,4,2) k2 s2 VALID", 3, {4, 4, 4},
     {{1, 4, 4, 2}, {1, 2, 2, 2}, {1, 2, 2, 2}}, {GCN_F, GCN_F, GCN_F}, -1, 1, gcn_k2s2_valid,
     NULL, false},
    {MF_OP_AVG_POOL_GRAD, "avg_pool_grad (1,5,5,1) k3 s2 SAME", 2, {4, 4},
     {{1, 5, 5, 1}, {1, 3, 3, 1}}, {GCN_F, GCN_F}, -1, 1, gcn_k3s2_same, NULL, false},
    {MF_OP_MAX_POOL_GRAD_GRAD, "max_pool_grad_grad (1,5,5,2) k3 s2 SAME", 3, {4, 4, 4},
     {{1, 5, 5, 2}, {1, 3, 3, 2}, {1, 5, 5, 2}}, {GCN_F, GCN_F, GCN_F}, -1, 1, gcn_k3s2_same,
     NULL, false},
    {MF_OP_RELU_GRAD, "relu_grad (2,3,4)", 2, {3, 3}, {{2, 3, 4}, {2, 3, 4}}, {GCN_F, GCN_F},
     -2, 2, NULL, NULL, true},
};

#endif
