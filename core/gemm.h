/* gemm.h — the engine's one door to GEMM: OpenBLAS, or for float32 the
 * own kernel (gemm_f32.h) where it is faster.
 *
 * Every float GEMM (MatMul, BatchMatMulV2, Conv2D and its backprops) goes
 * through 'mf_gemm', so sizes are checked once before BLAS sees them and the
 * profiler sees every call with its M, N, K and transposes. Row-major. */
#ifndef MF_GEMM_H
#define MF_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "dtype.h"
#include "err.h"

typedef struct MfGemm {
    const char *op;          /* the calling op, for the profiler: "Conv2DBackpropFilter" */
    const char *algorithm;   /* the profiler's label for the lowering ("winograd"); NULL:
                              * a plain GEMM */
    MfDType dtype;           /* MF_FLOAT32 or MF_FLOAT64 */
    bool trans_a, trans_b;
    int64_t M, N, K;
    double alpha, beta;
    const void *A;
    int64_t lda;
    const void *B;
    int64_t ldb;
    void *C;
    int64_t ldc;
} MfGemm;

/* C = alpha * op(A) op(B) + beta * C. Fails with MF_EARG when a size does
 * not fit BLAS's int, MF_EDTYPE for a non-float dtype, or MF_ENOMEM. */
MfStatus mf_gemm(const MfGemm *g);

/* Which kernel computes float32 GEMMs: the own kernel where it is measured
 * faster (AUTO), always OpenBLAS, or always the own kernel. Chosen once
 * from MF_GEMM=blas|own (otherwise AUTO); tests and benchmarks set it. */
typedef enum MfGemmKernel { MF_GEMM_AUTO, MF_GEMM_BLAS, MF_GEMM_OWN } MfGemmKernel;
MfGemmKernel mf_gemm_kernel(void);
void mf_gemm_set_kernel(MfGemmKernel k);

#endif
