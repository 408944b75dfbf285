/* linalg_lapack.h — the gradients of mf.linalg's LAPACK ops (MatrixInverse,
 * MatrixSolve, Cholesky, MatrixDeterminant; core/ops/linalg_lapack.c),
 * written with ops in linalg_lapack_grad.c. */
#ifndef MF_OPS_LINALG_LAPACK_H
#define MF_OPS_LINALG_LAPACK_H

#include "../op.h"

MfStatus mf_matrix_inverse_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_matrix_solve_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_cholesky_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_matrix_determinant_grad(const MfGradCall *g, MfTensor **dinputs);

#endif
