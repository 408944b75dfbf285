/* grad_cases_linalg.h — gradient-check cases for mf.linalg's LAPACK ops
 * (see grad_cases.h): MatrixInverse, MatrixSolve (plain and adjoint),
 * Cholesky, MatrixDeterminant, batched (rank 3, and rank 4 through the
 * gradients' folded products). Inputs are made well conditioned (a
 * diagonal of 2 over entries in [-0.5, 0.5]) and Cholesky's symmetric
 * positive definite (M M^T + n I): random matrices could be near singular. */
#ifndef MF_GRAD_CASES_LINALG_H
#define MF_GRAD_CASES_LINALG_H

#include <math.h>

#include "grad_cases.h"

#define GCL_F MF_FLOAT64

/* Entry (i, j) of matrix b: sin-pattern values, 2 added on the diagonal of
 * square matrices. */
static void gcl_values(int input, MfTensor *t)
{
    double *p = mf_tensor_data(t);
    int64_t r = t->shape[t->rank - 2], c = t->shape[t->rank - 1];
    for (int64_t k = 0; k < mf_tensor_numel(t); k++) {
        int64_t i = k / c % r, j = k % c;
        p[k] = 0.5 * sin(1.3 * (double)k + 0.4 * input + 0.2) + (r == c && i == j ? 2 : 0);
    }
}

/* M M^T + n I for each matrix M of the sin pattern. */
static void gcl_spd(int input, MfTensor *t)
{
    double *p = mf_tensor_data(t);
    int64_t n = t->shape[t->rank - 1], count = mf_tensor_numel(t) / (n * n);
    for (int64_t b = 0; b < count; b++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = i == j ? (double)n : 0;
                for (int64_t k = 0; k < n; k++)
                    s += sin(1.3 * (double)(b * n * n + i * n + k) + input) *
                         sin(1.3 * (double)(b * n * n + j * n + k) + input);
                p[(b * n + i) * n + j] = s;
            }
}

static void gcl_adjoint(MfAttrs *a) { a->transpose_a = true; }

static const GradCase cases_linalg[] = {
    {MF_OP_MATRIX_INVERSE, "inv (3,3)", 1, {2}, {{3, 3}}, {GCL_F}, -1, 1, NULL, gcl_values,
     true},
    {MF_OP_MATRIX_INVERSE, "inv (2,1,3,3)", 1, {4}, {{2, 1, 3, 3}}, {GCL_F}, -1, 1, NULL,
     gcl_values, false},
    {MF_OP_MATRIX_SOLVE, "solve (2,3,3) (2,3,2)", 2, {3, 3}, {{2, 3, 3}, {2, 3, 2}},
     {GCL_F, GCL_F}, -1, 1, NULL, gcl_values, true},
    {MF_OP_MATRIX_SOLVE, "solve adjoint (3,3) (3,1)", 2, {2, 2}, {{3, 3}, {3, 1}},
     {GCL_F, GCL_F}, -1, 1, gcl_adjoint, gcl_values, false},
    {MF_OP_CHOLESKY, "cholesky (2,3,3)", 1, {3}, {{2, 3, 3}}, {GCL_F}, -1, 1, NULL, gcl_spd,
     false},
    {MF_OP_CHOLESKY, "cholesky (4,4)", 1, {2}, {{4, 4}}, {GCL_F}, -1, 1, NULL, gcl_spd, true},
    {MF_OP_MATRIX_DETERMINANT, "det (2,3,3)", 1, {3}, {{2, 3, 3}}, {GCL_F}, -1, 1, NULL,
     gcl_values, true},
    {MF_OP_MATRIX_DETERMINANT, "det (2,2)", 1, {2}, {{2, 2}}, {GCL_F}, -1, 1, NULL, gcl_values,
     false},
};

#endif
