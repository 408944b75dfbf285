/* graph_cases.h — the op cases the graph-mode walks share
 * (tests/unit/test_graph_ops.c, tests/unit/test_graph_grad.c).
 *
 * The gradcheck cases (grad_cases_*.h) cover every differentiable op; the
 * cases below add the ops without a gradient (compare and logic, rounding,
 * arg-reductions, OneHot, StopGradient, Size/Rank/Shape, the random ops), so
 * a walk over all the tables reaches every op of core/oplist.h. Inputs are
 * drawn by a fixed generator (a splitmix64 stream seeded per case), so a
 * case gives the same values in every run. */
#ifndef MF_GRAPH_CASES_H
#define MF_GRAPH_CASES_H

#include <stdint.h>

#include "case_inputs.h"
#include "grad_cases.h"
#include "grad_cases_conv.h"
#include "grad_cases_linalg.h"
#include "grad_cases_math.h"
#include "grad_cases_more.h"
#include "grad_cases_nn.h"
#include "grad_cases_shape.h"

/* ---- attributes and values of the non-differentiable cases ----------------- */

static void gn_axis1(MfAttrs *a)
{
    a->axis = 1;
}

static void gn_one_hot(MfAttrs *a)
{
    a->n = 4;
    a->dtype = MF_FLOAT32;
}

/* Random ops: shape (3,5), a fixed seed and the two scalar parameters. */
static void gn_random_f32(MfAttrs *a)
{
    a->nints = 2;
    a->ints[0] = 3;
    a->ints[1] = 5;
    a->dtype = MF_FLOAT32;
    a->seed = 1234;
    a->scalar[0] = -1;
    a->scalar[1] = 2;
}

static void gn_random_f64(MfAttrs *a)
{
    gn_random_f32(a);
    a->dtype = MF_FLOAT64;
    a->scalar[0] = 0.5;
}

static void gn_random_int(MfAttrs *a)
{
    gn_random_f32(a);
    a->dtype = MF_INT64;
    a->scalar[0] = -5;
    a->scalar[1] = 17;
}

static void gn_to_int32(MfAttrs *a)
{
    a->dtype = MF_INT32;
}

static void gn_seed(MfAttrs *a)
{
    a->seed = 99;
}

/* Multinomial: 6 samples per row, int64 classes */
static void gn_categorical(MfAttrs *a)
{
    a->seed = 99;
    a->n = 6;
    a->dtype = MF_INT64;
}

/* Indices 0..3 for OneHot (the engine's indices are 0-based). */
static void gn_indices(int input, MfTensor *t)
{
    (void)input;
    for (int64_t i = 0; i < mf_tensor_numel(t); i++)
        ((int32_t *)mf_tensor_data(t))[i] = (int32_t)((i * 7) % 4);
}

/* Fill's dims: (2,3). */
static void gn_dims(int input, MfTensor *t)
{
    if (input == 0) {
        ((int32_t *)mf_tensor_data(t))[0] = 2;
        ((int32_t *)mf_tensor_data(t))[1] = 3;
    }
}

/* Booleans for the logic ops: a pattern that differs between inputs. */
static void gn_bools(int input, MfTensor *t)
{
    uint8_t *p = mf_tensor_data(t);
    for (int64_t i = 0; i < mf_tensor_numel(t); i++)
        p[i] = (uint8_t)((i + (int64_t)input) % 3 == 0);
}

/* Equal values in a few places (so Equal and friends give both answers),
 * and NaN and infinities for the IsNan/IsInf/IsFinite tests. */
static void gn_specials(int input, MfTensor *t)
{
    double *p = mf_tensor_data(t);
    p[0] = 0.25;
    if (input == 0 && mf_tensor_numel(t) >= 6) {
        p[3] = DNAN;
        p[4] = DINF;
        p[5] = -DINF;
    }
}

#define GN_F64 MF_FLOAT64
#define GN_2x3 {2, 3}

static void gn_bn_eps(MfAttrs *a)
{
    a->scalar[0] = 1e-3;
}

static const GradCase cases_nondiff[] = {
    {MF_OP_LSTM_CELL_GRAD, "lstm_cell_grad (3,8), c_prev", 5, {2, 2, 2, 2, 2},
     {{3, 8}, {3, 2}, {3, 2}, {3, 2}, {3, 2}}, {GN_F64, GN_F64, GN_F64, GN_F64, GN_F64}, -1, 1,
     NULL, NULL, false},
    {MF_OP_LSTM_CELL_GRAD, "lstm_cell_grad (2,4), zero state", 4, {2, 2, 2, 2},
     {{2, 4}, {2, 1}, {2, 1}, {2, 1}}, {GN_F64, GN_F64, GN_F64, GN_F64}, -1, 1, NULL, NULL,
     false},
    {MF_OP_FUSED_BATCH_NORM_GRAD, "fused_batch_norm_grad (4,3)", 5, {2, 2, 1, 1, 1},
     {{4, 3}, {4, 3}, {3}, {3}, {3}}, {GN_F64, GN_F64, GN_F64, GN_F64, GN_F64}, 0.1, 0.9,
     gn_bn_eps, NULL, false},
    {MF_OP_FUSED_BATCH_NORM_GRAD, "fused_batch_norm_grad (2,2,3), dmean, dvar", 7,
     {3, 3, 1, 1, 1, 1, 1}, {{2, 2, 3}, {2, 2, 3}, {3}, {3}, {3}, {3}, {3}},
     {GN_F64, GN_F64, GN_F64, GN_F64, GN_F64, GN_F64, GN_F64}, 0.1, 0.9, gn_bn_eps, NULL,
     false},
    {MF_OP_ATTENTION_GRAD, "scaled_dot_product_attention_grad (2,5,3) (2,4,3) (2,4,2)", 7,
     {3, 3, 3, 3, 2, 3, 2}, {{2, 5, 3}, {2, 4, 3}, {2, 4, 2}, {2, 5, 2}, {2, 5}, {2, 5, 2},
     {2, 5}}, {GN_F64, GN_F64, GN_F64, GN_F64, GN_F64, GN_F64, GN_F64}, 0.5, 1.5, NULL, NULL,
     false},
    {MF_OP_SIGN, "sign (2,3)", 1, {2}, {GN_2x3}, {GN_F64}, -2, 2, NULL, gn_specials, false},
    {MF_OP_FLOOR, "floor (2,3)", 1, {2}, {GN_2x3}, {GN_F64}, -3, 3, NULL, NULL, false},
    {MF_OP_CEIL, "ceil (2,3)", 1, {2}, {GN_2x3}, {GN_F64}, -3, 3, NULL, NULL, false},
    {MF_OP_ROUND, "round (2,3)", 1, {2}, {GN_2x3}, {GN_F64}, -3, 3, NULL, NULL, false},
    {MF_OP_EQUAL, "equal (2,3), (3,)", 2, {2, 1}, {GN_2x3, {3}}, {GN_F64, GN_F64}, -1, 1, NULL,
     gn_specials, false},
    {MF_OP_NOT_EQUAL, "not_equal (2,3), (3,)", 2, {2, 1}, {GN_2x3, {3}}, {GN_F64, GN_F64}, -1, 1,
     NULL, gn_specials, false},
    {MF_OP_LESS, "less (2,3), (2,1)", 2, {2, 2}, {GN_2x3, {2, 1}}, {GN_F64, GN_F64}, -1, 1, NULL,
     NULL, false},
    {MF_OP_LESS_EQUAL, "less_equal (2,3)", 2, {2, 2}, {GN_2x3, GN_2x3}, {GN_F64, GN_F64}, -1, 1,
     NULL, gn_specials, false},
    {MF_OP_GREATER, "greater (2,3), ()", 2, {2, 0}, {GN_2x3, {0}}, {GN_F64, GN_F64}, -1, 1, NULL,
     NULL, false},
    {MF_OP_GREATER_EQUAL, "greater_equal (2,3)", 2, {2, 2}, {GN_2x3, GN_2x3}, {GN_F64, GN_F64},
     -1, 1, NULL, gn_specials, false},
    {MF_OP_LOGICAL_AND, "logical_and (2,3)", 2, {2, 2}, {GN_2x3, GN_2x3}, {MF_BOOL, MF_BOOL}, 0,
     0, NULL, gn_bools, false},
    {MF_OP_LOGICAL_OR, "logical_or (2,3), (3,)", 2, {2, 1}, {GN_2x3, {3}}, {MF_BOOL, MF_BOOL}, 0,
     0, NULL, gn_bools, false},
    {MF_OP_LOGICAL_NOT, "logical_not (2,3)", 1, {2}, {GN_2x3}, {MF_BOOL}, 0, 0, NULL, gn_bools,
     false},
    {MF_OP_IS_NAN, "is_nan (2,3)", 1, {2}, {GN_2x3}, {GN_F64}, -1, 1, NULL, gn_specials, false},
    {MF_OP_IS_INF, "is_inf (2,3)", 1, {2}, {GN_2x3}, {GN_F64}, -1, 1, NULL, gn_specials, false},
    {MF_OP_IS_FINITE, "is_finite (2,3)", 1, {2}, {GN_2x3}, {GN_F64}, -1, 1, NULL, gn_specials,
     false},
    {MF_OP_CAST, "float64 to int32", 1, {2}, {GN_2x3}, {GN_F64}, -3, 3, gn_to_int32, NULL,
     false},
    {MF_OP_ARGMAX, "argmax axis 1 of (2,3,4)", 1, {3}, {{2, 3, 4}}, {GN_F64}, -1, 1, gn_axis1,
     NULL, false},
    {MF_OP_ARGMIN, "argmin axis 1 of (2,3,4)", 1, {3}, {{2, 3, 4}}, {GN_F64}, -1, 1, gn_axis1,
     NULL, false},
    {MF_OP_ONE_HOT, "one_hot (5,) depth 4", 1, {1}, {{5}}, {MF_INT32}, 0, 0, gn_one_hot,
     gn_indices, false},
    {MF_OP_FILL, "fill (2,3) with a scalar", 2, {1, 0}, {{2}, {0}}, {MF_INT32, GN_F64}, -1, 1,
     NULL, gn_dims, false},
    {MF_OP_STOP_GRADIENT, "stop_gradient (2,3)", 1, {2}, {GN_2x3}, {GN_F64}, -1, 1, NULL, NULL,
     false},
    {MF_OP_SIZE, "size (2,3,4)", 1, {3}, {{2, 3, 4}}, {GN_F64}, -1, 1, NULL, NULL, false},
    {MF_OP_RANK, "rank (2,3,4)", 1, {3}, {{2, 3, 4}}, {GN_F64}, -1, 1, NULL, NULL, false},
    {MF_OP_SHAPE, "shape (2,3,4)", 1, {3}, {{2, 3, 4}}, {GN_F64}, -1, 1, NULL, NULL, false},
    /* one process (no mpirun): the reduction of one tensor is the tensor */
    {MF_OP_ALLREDUCE, "allreduce (2,3) sum", 1, {2}, {GN_2x3}, {GN_F64}, -1, 1, NULL, NULL,
     false},
    /* ... started and waited for: the same; a wait on a tensor no allreduce
     * writes gives the tensor */
    {MF_OP_ALLREDUCE_START, "allreduce_start (2,3) sum", 1, {2}, {GN_2x3}, {GN_F64}, -1, 1,
     NULL, NULL, false},
    {MF_OP_ALLREDUCE_WAIT, "allreduce_wait (2,3)", 1, {2}, {GN_2x3}, {GN_F64}, -1, 1, NULL,
     NULL, false},
    {MF_OP_RANDOM_NORMAL, "random normal (3,5) float32", 0, {0}, {{0}}, {GN_F64}, 0, 0,
     gn_random_f32, NULL, false},
    {MF_OP_RANDOM_NORMAL, "random normal (3,5) float64", 0, {0}, {{0}}, {GN_F64}, 0, 0,
     gn_random_f64, NULL, false},
    {MF_OP_TRUNCATED_NORMAL, "truncated normal (3,5)", 0, {0}, {{0}}, {GN_F64}, 0, 0,
     gn_random_f32, NULL, false},
    {MF_OP_RANDOM_UNIFORM, "uniform (3,5) float64", 0, {0}, {{0}}, {GN_F64}, 0, 0,
     gn_random_f64, NULL, false},
    {MF_OP_RANDOM_UNIFORM_INT, "uniform int64 (3,5) in [-5,17)", 0, {0}, {{0}}, {GN_F64}, 0, 0,
     gn_random_int, NULL, false},
    {MF_OP_RANDOM_SHUFFLE, "shuffle (6,2)", 1, {2}, {{6, 2}}, {GN_F64}, -1, 1, gn_seed, NULL,
     false},
    {MF_OP_MULTINOMIAL, "categorical (4,5) logits", 1, {2}, {{4, 5}}, {GN_F64}, -1, 1,
     gn_categorical, NULL, false},

/* The training ops update their first inputs in place (core/ops/apply.c):
 * var and slots (2,3), scalar hyperparameters in (0.1, 0.9), the gradient
 * (2,3). Each run gets fresh inputs, so the buffers are not shared. */
#define GN_S {0}
#define GN_F3 GN_F64, GN_F64, GN_F64
    {MF_OP_APPLY_GRADIENT_DESCENT, "apply_gradient_descent (2,3)", 3, {2, 0, 2},
     {GN_2x3, GN_S, GN_2x3}, {GN_F3}, 0.1, 0.9, NULL, NULL, false},
    {MF_OP_APPLY_MOMENTUM, "apply_momentum (2,3)", 5, {2, 2, 0, 2, 0},
     {GN_2x3, GN_2x3, GN_S, GN_2x3, GN_S}, {GN_F3, GN_F64, GN_F64}, 0.1, 0.9, NULL, NULL, false},
    {MF_OP_APPLY_ADAGRAD, "apply_adagrad (2,3)", 4, {2, 2, 0, 2},
     {GN_2x3, GN_2x3, GN_S, GN_2x3}, {GN_F3, GN_F64}, 0.1, 0.9, NULL, NULL, false},
    {MF_OP_APPLY_RMSPROP, "apply_rms_prop (2,3)", 8, {2, 2, 2, 0, 0, 0, 0, 2},
     {GN_2x3, GN_2x3, GN_2x3, GN_S, GN_S, GN_S, GN_S, GN_2x3}, {GN_F3, GN_F3, GN_F64, GN_F64},
     0.1, 0.9, NULL, NULL, false},
    {MF_OP_APPLY_ADAM, "apply_adam (2,3)", 10, {2, 2, 2, 0, 0, 0, 0, 0, 0, 2},
     {GN_2x3, GN_2x3, GN_2x3, GN_S, GN_S, GN_S, GN_S, GN_S, GN_S, GN_2x3},
     {GN_F3, GN_F3, GN_F3, GN_F64}, 0.1, 0.9, NULL, NULL, false},
    {MF_OP_APPLY_LION, "apply_lion (2,3)", 7, {2, 2, 0, 0, 0, 0, 2},
     {GN_2x3, GN_2x3, GN_S, GN_S, GN_S, GN_S, GN_2x3}, {GN_F3, GN_F3, GN_F64}, 0.1, 0.9, NULL,
     NULL, false},
};

#undef GN_S
#undef GN_F3
#undef GN_F64
#undef GN_2x3

/* ---- all tables ------------------------------------------------------------ */

typedef struct CaseTable {
    const char *name;
    const GradCase *cases;
    size_t n;
} CaseTable;

#define GN_TABLE(arr) {#arr, arr, sizeof arr / sizeof arr[0]}

static const CaseTable case_tables[] = {
    GN_TABLE(cases_math), GN_TABLE(cases_shape), GN_TABLE(cases_nn),
    GN_TABLE(cases_conv), GN_TABLE(cases_nondiff), GN_TABLE(cases_more),
    GN_TABLE(cases_more_nondiff), GN_TABLE(cases_linalg),
};

#undef GN_TABLE

#define N_CASE_TABLES (sizeof case_tables / sizeof case_tables[0])

/* True when some table holds a case of 'op'. */
static bool gn_has_case(MfOpId op)
{
    for (size_t t = 0; t < N_CASE_TABLES; t++)
        for (size_t i = 0; i < case_tables[t].n; i++)
            if (case_tables[t].cases[i].label && case_tables[t].cases[i].op == op)
                return true;
    return false;
}

/* True when 'a' and 'b' have one dtype and shape and the same bytes
 * (bit-for-bit: NaNs of one pattern compare equal, -0 differs from 0). */
static bool gn_same_bits(MfTensor *a, MfTensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    MfTensor *ca = mf_tensor_contiguous(a), *cb = mf_tensor_contiguous(b);
    assert_non_null(ca);
    assert_non_null(cb);
    size_t bytes = (size_t)mf_tensor_numel(a) * mf_dtype_size(a->dtype);
    bool same = memcmp(mf_tensor_data(ca), mf_tensor_data(cb), bytes) == 0;
    mf_tensor_release(ca);
    mf_tensor_release(cb);
    return same;
}

#endif
