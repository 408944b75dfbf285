/* gemm_f32_tiles.h — the register tiles of the own float32 GEMM
 * (gemm_f32.c): their type and the tables of them, one per instruction
 * set (gemm_f32_kernels.h compiled by gemm_f32_avx512.c, gemm_f32_avx2.c
 * and gemm_f32_generic.c with their own -march, see the Makefile).
 * gemm_f32.c picks a table at run time by mf_simd_level() (MF_SIMD).
 *
 * Every tile computes each element of C as one chain of FMAs over k in
 * order from 0 (the AVX-512 and AVX2 tables alike), so the table, the
 * tile and the thread split never change a result's bits. The generic
 * table (no -march: the sanitizer build on a CPU without AVX2) multiplies
 * and adds without FMA where the target has none. */
#ifndef MF_GEMM_F32_TILES_H
#define MF_GEMM_F32_TILES_H

#include <stdbool.h>
#include <stdint.h>

/* Rows of C in a tile, and columns of a packed panel of op(B). */
#define MF_GEMM_F32_MR 6
#define MF_GEMM_F32_NR 16

/* A tile of up to MR rows of C and one panel bp (K x 16, or 8 for a last
 * narrow panel): the sums start at 0 (first) or at the partial sums p
 * (rows x NR), and end in C (last) or back in p, so a sum split over
 * blocks of k is the same chain as one pass. A's rows at stride lda (or,
 * for A^T packed by MR rows, A(i, k) at a[k * lda + i]). */
typedef void MfGemmF32Tile(const float *a, int64_t lda, const float *bp, int64_t K, float *p,
                           bool first, bool last, float alpha, float beta, float *C, int64_t ldc);

/* The same over two adjacent 16-column panels, bp and bp + ps: 32
 * columns of C, partial sums p of rows x 2 NR. */
typedef void MfGemmF32WideTile(const float *a, int64_t lda, const float *bp, int64_t ps,
                               int64_t K, float *p, bool first, bool last, float alpha, float beta,
                               float *C, int64_t ldc);

typedef struct MfGemmF32Tiles {
    MfGemmF32Tile *tile[2][2][MF_GEMM_F32_MR]; /* [narrow panel][trans_a][rows - 1] */
    MfGemmF32WideTile *wide[2][MF_GEMM_F32_MR]; /* [trans_a][rows - 1]; NULL: none */
} MfGemmF32Tiles;

extern const MfGemmF32Tiles mf_gemm_f32_tiles_avx512;
extern const MfGemmF32Tiles mf_gemm_f32_tiles_avx2;
extern const MfGemmF32Tiles mf_gemm_f32_tiles_generic;

#endif
