/* gemm_f32.h — moonflow's own float32 GEMM kernel, used by mf_gemm
 * (core/gemm.c) for the products where it is faster than OpenBLAS.
 *
 * Row-major C = alpha op(A) op(B) + beta C, in two steps: op(B) packed once
 * (mf_gemm_f32_pack_b), then any block of C's rows and columns computed
 * from the packed B (mf_gemm_f32), so threads can share one packing. Each
 * element of C is one sum over k in order, whatever the block: results do
 * not depend on how C is split. beta = 0 never reads C. */
#ifndef MF_GEMM_F32_H
#define MF_GEMM_F32_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct MfGemmF32 {
    bool trans_a;
    int64_t M, N, K;
    float alpha, beta;
    const float *A; /* M x K (lda), or K x M when trans_a */
    int64_t lda;
    const float *packed; /* op(B) by mf_gemm_f32_pack_b */
    float *C;
    int64_t ldc;
} MfGemmF32;

/* The columns computed for an op(B) of N columns: N rounded up to the
 * panels (16 wide; a last one of at most 8 columns is 8 wide). */
int64_t mf_gemm_f32_padded_columns(int64_t N);

/* Floats mf_gemm_f32_pack_b writes for an op(B) of K x N. */
size_t mf_gemm_f32_packed_floats(int64_t N, int64_t K);

/* Columns [j0, j1) of op(B) (K x N: B row-major K x N, or N x K when
 * trans_b) into their panels of 'packed': 32-byte aligned,
 * mf_gemm_f32_packed_floats(N, K) floats. j0 and j1 multiples of 16 (or
 * j1 = N), so threads can pack disjoint ranges of one buffer. */
void mf_gemm_f32_pack_b(bool trans_b, int64_t N, int64_t K, const float *B, int64_t ldb,
                        int64_t j0, int64_t j1, float *packed);

/* True when the tiles in use are the AVX-512 ones (MF_SIMD and the CPU
 * allow): mf_gemm gives the own kernel more products then. */
bool mf_gemm_f32_avx512(void);

/* Rows of C (of op(A)) one pass over the packed B serves: with A^T, those
 * rows of A^T are packed together. */
#define MF_GEMM_F32_ROW_BLOCK 96

/* Floats of the scratch each concurrent mf_gemm_f32 call needs when
 * trans_a (A^T's rows are packed there). */
size_t mf_gemm_f32_scratch_floats(int64_t K);

/* Rows [r0, r1) and columns [c0, c1) of C; c0 a multiple of 16. 'scratch':
 * mf_gemm_f32_scratch_floats(K) floats, 32-byte aligned, when trans_a
 * (else unused). */
void mf_gemm_f32(const MfGemmF32 *g, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                 float *scratch);

#endif
