/* gemm_f32_kernels.h — the bodies of the own float32 GEMM's register tiles
 * (gemm_f32_tiles.h), included by gemm_f32_avx512.c, gemm_f32_avx2.c and
 * gemm_f32_generic.c, which define MF_GEMM_F32_TABLE (the name of the
 * table they export) and, for AVX-512, MF_GEMM_F32_WIDE (the 32-column
 * tiles). Compiled with -ffp-contract=fast: every multiply-add is an FMA
 * where the target has them.
 *
 * Tiles of 16 columns hold a row of C in two 8-float vectors (v8: AVX2
 * ymm, two SSE halves in the generic table); the wide tiles hold 32
 * columns, two panels, in two 16-float vectors (zmm): 12 accumulators of
 * 16 floats, where an FMA of 16 floats costs the same as one of 8 on Zen 5
 * (a 12-chain FMA loop: 166 GFLOP/s on zmm, 89 on ymm, one core). Each
 * k step broadcasts A(i, k) and multiplies it into the row's vectors, so
 * every element of C is its own chain of FMAs in k order in every tile. */
#ifndef MF_GEMM_F32_TABLE
#error "gemm_f32_kernels.h is included by gemm_f32_{avx512,avx2,generic}.c"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gemm_f32_tiles.h"
#include "v8.h"

#define MR MF_GEMM_F32_MR
#define NR MF_GEMM_F32_NR

/* A(i, k) of row-major A (rows at stride lda) or of A^T (A's columns). */
#define A_ROWS(i) a[(i) * lda + k]
#define A_COLS(i) a[k * lda + (i)]

/* Each macro's second vector (columns 8..15) exists in tiles of WIDTH 16. */
#define TILE_FMA(i, AT)                                                                    \
    if ((i) < NROWS) {                                                                      \
        float x = AT(i);                                                                   \
        s##i##0 += x * b0;                                                                 \
        if (WIDTH > 8)                                                                     \
            s##i##1 += x * b1;                                                             \
    }
#define TILE_LOAD(i)                                                                       \
    if ((i) < NROWS && !first) {                                                           \
        s##i##0 = *(const v8 *)(p + (i) * NR);                                             \
        if (WIDTH > 8)                                                                     \
            s##i##1 = *(const v8 *)(p + (i) * NR + 8);                                     \
    }
#define TILE_PREFETCH(i)                                                                   \
    if ((i) < NROWS) {                                                                     \
        __builtin_prefetch(C + (i) * ldc, 1);                                              \
        __builtin_prefetch(C + (i) * ldc + WIDTH - 1, 1);                                  \
    }
#define TILE_KEEP(i)                                                                       \
    if ((i) < NROWS) {                                                                     \
        *(v8 *)(p + (i) * NR) = s##i##0;                                                   \
        if (WIDTH > 8)                                                                     \
            *(v8 *)(p + (i) * NR + 8) = s##i##1;                                           \
    }
#define TILE_STORE(i)                                                                      \
    if ((i) < NROWS) {                                                                     \
        float *c = C + (i) * ldc;                                                          \
        if (beta == 0) {                                                                   \
            store8(c, alpha * s##i##0);                                                    \
            if (WIDTH > 8)                                                                 \
                store8(c + 8, alpha * s##i##1);                                            \
        } else {                                                                           \
            store8(c, alpha * s##i##0 + beta * load8(c));                                  \
            if (WIDTH > 8)                                                                 \
                store8(c + 8, alpha * s##i##1 + beta * load8(c + 8));                     \
        }                                                                                  \
    }
#define ALL_ROWS(M) M(0) M(1) M(2) M(3) M(4) M(5)
/* ROWS x COLS of C from ROWS rows of op(A) and a packed panel bp (K x
 * COLS, COLS = 16 or 8): see MfGemmF32Tile. */
#define TILE(NAME, ROWS, COLS, AT)                                                         \
    static void NAME(const float *a, int64_t lda, const float *bp, int64_t K, float *p,    \
                     bool first, bool last, float alpha, float beta, float *C, int64_t ldc) \
    {                                                                                      \
        enum { NROWS = ROWS, WIDTH = COLS };                                               \
        v8 s00 = {0}, s01 = {0}, s10 = {0}, s11 = {0}, s20 = {0}, s21 = {0};               \
        v8 s30 = {0}, s31 = {0}, s40 = {0}, s41 = {0}, s50 = {0}, s51 = {0};               \
        ALL_ROWS(TILE_LOAD)                                                                \
        if (last) {                                                                        \
            ALL_ROWS(TILE_PREFETCH)                                                        \
        }                                                                                  \
        for (int64_t k = 0; k < K; k++) {                                                  \
            v8 b0 = *(const v8 *)(bp + k * WIDTH), b1 = {0};                               \
            if (WIDTH > 8) {                                                               \
                b1 = *(const v8 *)(bp + k * WIDTH + 8);                                    \
                IN_REGISTERS(b0, b1);                                                      \
            }                                                                              \
            TILE_FMA(0, AT) TILE_FMA(1, AT) TILE_FMA(2, AT)                                \
            TILE_FMA(3, AT) TILE_FMA(4, AT) TILE_FMA(5, AT)                                \
        }                                                                                  \
        if (!last) {                                                                       \
            ALL_ROWS(TILE_KEEP)                                                            \
        } else {                                                                           \
            ALL_ROWS(TILE_STORE)                                                           \
        }                                                                                  \
    }

TILE(rows1, 1, 16, A_ROWS)
TILE(rows2, 2, 16, A_ROWS)
TILE(rows3, 3, 16, A_ROWS)
TILE(rows4, 4, 16, A_ROWS)
TILE(rows5, 5, 16, A_ROWS)
TILE(rows6, 6, 16, A_ROWS)
TILE(cols1, 1, 16, A_COLS)
TILE(cols2, 2, 16, A_COLS)
TILE(cols3, 3, 16, A_COLS)
TILE(cols4, 4, 16, A_COLS)
TILE(cols5, 5, 16, A_COLS)
TILE(cols6, 6, 16, A_COLS)
TILE(rows1_8, 1, 8, A_ROWS)
TILE(rows2_8, 2, 8, A_ROWS)
TILE(rows3_8, 3, 8, A_ROWS)
TILE(rows4_8, 4, 8, A_ROWS)
TILE(rows5_8, 5, 8, A_ROWS)
TILE(rows6_8, 6, 8, A_ROWS)
TILE(cols1_8, 1, 8, A_COLS)
TILE(cols2_8, 2, 8, A_COLS)
TILE(cols3_8, 3, 8, A_COLS)
TILE(cols4_8, 4, 8, A_COLS)
TILE(cols5_8, 5, 8, A_COLS)
TILE(cols6_8, 6, 8, A_COLS)

#ifdef MF_GEMM_F32_WIDE
typedef float v16 __attribute__((vector_size(64)));
typedef float v16u __attribute__((vector_size(64), aligned(4))); /* unaligned rows of C */

/* The two panels' rows in zmm registers once (see IN_REGISTERS). */
#define IN_ZMM(x, y) __asm__("" : "+v"(x), "+v"(y))

#define WIDE_FMA(i, AT)                                                                    \
    if ((i) < NROWS) {                                                                      \
        float x = AT(i);                                                                   \
        w##i##0 += x * b0;                                                                 \
        w##i##1 += x * b1;                                                                 \
    }
#define WIDE_LOAD(i)                                                                       \
    if ((i) < NROWS && !first) {                                                           \
        w##i##0 = *(const v16 *)(p + (i) * 2 * NR);                                        \
        w##i##1 = *(const v16 *)(p + (i) * 2 * NR + NR);                                   \
    }
#define WIDE_PREFETCH(i)                                                                   \
    if ((i) < NROWS) {                                                                     \
        __builtin_prefetch(C + (i) * ldc, 1);                                              \
        __builtin_prefetch(C + (i) * ldc + NR, 1);                                         \
        __builtin_prefetch(C + (i) * ldc + 2 * NR - 1, 1);                                 \
    }
#define WIDE_KEEP(i)                                                                       \
    if ((i) < NROWS) {                                                                     \
        *(v16 *)(p + (i) * 2 * NR) = w##i##0;                                              \
        *(v16 *)(p + (i) * 2 * NR + NR) = w##i##1;                                         \
    }
#define WIDE_STORE(i)                                                                      \
    if ((i) < NROWS) {                                                                     \
        v16u *c = (v16u *)(C + (i) * ldc);                                                 \
        if (beta == 0) {                                                                   \
            c[0] = alpha * w##i##0;                                                        \
            c[1] = alpha * w##i##1;                                                        \
        } else {                                                                           \
            c[0] = alpha * w##i##0 + beta * c[0];                                          \
            c[1] = alpha * w##i##1 + beta * c[1];                                          \
        }                                                                                  \
    }
/* ROWS x 32 of C from two adjacent 16-column panels: see MfGemmF32WideTile. */
#define WIDE(NAME, ROWS, AT)                                                               \
    static void NAME(const float *a, int64_t lda, const float *bp, int64_t ps, int64_t K,  \
                     float *p, bool first, bool last, float alpha, float beta, float *C,   \
                     int64_t ldc)                                                          \
    {                                                                                      \
        enum { NROWS = ROWS };                                                             \
        v16 w00 = {0}, w01 = {0}, w10 = {0}, w11 = {0}, w20 = {0}, w21 = {0};              \
        v16 w30 = {0}, w31 = {0}, w40 = {0}, w41 = {0}, w50 = {0}, w51 = {0};              \
        ALL_ROWS(WIDE_LOAD)                                                                \
        if (last) {                                                                        \
            ALL_ROWS(WIDE_PREFETCH)                                                        \
        }                                                                                  \
        for (int64_t k = 0; k < K; k++) {                                                  \
            v16 b0 = *(const v16 *)(bp + k * NR), b1 = *(const v16 *)(bp + ps + k * NR);   \
            IN_ZMM(b0, b1);                                                                \
            WIDE_FMA(0, AT) WIDE_FMA(1, AT) WIDE_FMA(2, AT)                                \
            WIDE_FMA(3, AT) WIDE_FMA(4, AT) WIDE_FMA(5, AT)                                \
        }                                                                                  \
        if (!last) {                                                                       \
            ALL_ROWS(WIDE_KEEP)                                                            \
        } else {                                                                           \
            ALL_ROWS(WIDE_STORE)                                                           \
        }                                                                                  \
    }

WIDE(wide_rows1, 1, A_ROWS)
WIDE(wide_rows2, 2, A_ROWS)
WIDE(wide_rows3, 3, A_ROWS)
WIDE(wide_rows4, 4, A_ROWS)
WIDE(wide_rows5, 5, A_ROWS)
WIDE(wide_rows6, 6, A_ROWS)
WIDE(wide_cols1, 1, A_COLS)
WIDE(wide_cols2, 2, A_COLS)
WIDE(wide_cols3, 3, A_COLS)
WIDE(wide_cols4, 4, A_COLS)
WIDE(wide_cols5, 5, A_COLS)
WIDE(wide_cols6, 6, A_COLS)
#define WIDE_TILES                                                                         \
    {{wide_rows1, wide_rows2, wide_rows3, wide_rows4, wide_rows5, wide_rows6},              \
     {wide_cols1, wide_cols2, wide_cols3, wide_cols4, wide_cols5, wide_cols6}}
#else
#define WIDE_TILES {{NULL}}
#endif

const MfGemmF32Tiles MF_GEMM_F32_TABLE = {
    {{{rows1, rows2, rows3, rows4, rows5, rows6}, {cols1, cols2, cols3, cols4, cols5, cols6}},
     {{rows1_8, rows2_8, rows3_8, rows4_8, rows5_8, rows6_8},
      {cols1_8, cols2_8, cols3_8, cols4_8, cols5_8, cols6_8}}},
    WIDE_TILES};
