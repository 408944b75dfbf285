/* linalg.h — linear algebra from C: matrix products (the MatMul and
 * BatchMatMulV2 ops), the trace (the Trace op) and tensordot (a composite of
 * Transpose, Reshape and MatMul, as TensorFlow composes it in Python).
 *
 * Everything goes through 'mf_op_call', so it works in eager and graph mode
 * and is recorded by tapes. On success '*out' is an owned reference; on
 * failure it is NULL and a message is pending (err.h). Axes here are 0-based
 * (a negative axis counts from the end); messages name them 1-based, as the
 * Lua API does. */
#ifndef MF_OPS_LINALG_H
#define MF_OPS_LINALG_H

#include <stdbool.h>

#include "../op.h"

/* op(a) x op(b), op = transpose when the flag is set: MatMul for two rank-2
 * tensors, BatchMatMulV2 when either is rank 3 (a size-1 or missing batch
 * dim broadcasts). Errors: MF_ESHAPE (a rank other than 2 or 3, inner or
 * batch dims that differ), MF_EDTYPE (bool, or dtypes that differ),
 * MF_EARG (a GEMM too large for BLAS's int sizes), MF_ENOMEM. */
MfStatus mf_matmul(MfTensor *a, MfTensor *b, bool transpose_a, bool transpose_b,
                   MfTensor **out);

/* The sum of the main diagonal of a rank-2 tensor (a rank-0 tensor of its
 * dtype; non-square matrices sum their min(rows, cols) diagonal entries).
 * Errors: MF_ESHAPE (rank not 2), MF_EDTYPE (bool), MF_ENOMEM. */
MfStatus mf_trace(MfTensor *t, MfTensor **out);

/* Sums the products of 'a' and 'b' over the 'naxes' axis pairs
 * (axes_a[i], axes_b[i]). The result has a's remaining axes, then b's.
 * Errors: MF_EARG (axis out of range or repeated), MF_ESHAPE (paired axes of
 * different sizes, result rank over 8), MF_EDTYPE, MF_ENOMEM. */
MfStatus mf_tensordot(MfTensor *a, MfTensor *b, int naxes, const int64_t *axes_a,
                      const int64_t *axes_b, MfTensor **out);

/* tensordot over the last 'n' axes of 'a' and the first 'n' of 'b'
 * (n = 0: the outer product). Errors as 'mf_tensordot'. */
MfStatus mf_tensordot_n(MfTensor *a, MfTensor *b, int64_t n, MfTensor **out);

#endif
