/* attention_tile_kernels.h — the register blocks of the attention tile
 * products (attention_tile.c), included by attention_tile_avx512.c,
 * attention_tile_avx2.c and attention_tile_generic.c, which define
 * MF_ATTN_ROWS (the name of the AttnRowBlock they export) and, for AVX-512,
 * MF_ATTN_WIDE (blocks of 32 columns in 16-float vectors). The operands are
 * read in place: A's elements broadcast from either layout, B by rows. */
#include "attention_tile.h"

#include "../v8.h"

#define MR ATTN_TILE_MR

/* One MR x (8 NV) block at (0, 0): the sum over k in [k0, k1), then
 * C = alpha s (+ C). Written out row by row: GCC keeps an array of
 * accumulators in memory, named ones in registers. */
#define ROW_FMA(i, NV)                                                                     \
    {                                                                                      \
        float x = a.p[(i) * a.rs + k * a.cs];                                              \
        s##i##0 += x * b0;                                                                 \
        if (NV > 1)                                                                        \
            s##i##1 += x * b1;                                                             \
    }
#define ROW_STORE(i, NV)                                                                   \
    {                                                                                      \
        float *c = C + (i) * ldc;                                                          \
        store8(c, acc ? load8(c) + alpha * s##i##0 : alpha * s##i##0);                     \
        if (NV > 1)                                                                        \
            store8(c + 8, acc ? load8(c + 8) + alpha * s##i##1 : alpha * s##i##1);         \
    }
#define MICRO(NV)                                                                          \
    static void micro_##NV(AttnOperand a, const float *B, int64_t ldb, int64_t k0,         \
                           int64_t k1, float alpha, bool acc, float *C, int64_t ldc)       \
    {                                                                                      \
        v8 s00 = {0}, s01 = {0}, s10 = {0}, s11 = {0}, s20 = {0}, s21 = {0}, s30 = {0},    \
           s31 = {0};                                                                      \
        for (int64_t k = k0; k < k1; k++) {                                                \
            v8 b0 = load8(B + k * ldb), b1 = NV > 1 ? load8(B + k * ldb + 8) : b0;         \
            IN_REGISTERS(b0, b1);                                                          \
            ROW_FMA(0, NV) ROW_FMA(1, NV) ROW_FMA(2, NV) ROW_FMA(3, NV)                    \
        }                                                                                  \
        ROW_STORE(0, NV) ROW_STORE(1, NV) ROW_STORE(2, NV) ROW_STORE(3, NV)                \
    }

MICRO(2)
MICRO(1)

#ifdef MF_ATTN_WIDE
typedef float v16 __attribute__((vector_size(64)));
typedef float v16u __attribute__((vector_size(64), aligned(4))); /* unaligned rows */

/* B's row in zmm registers once (see IN_REGISTERS). */
#define IN_ZMM(x, y) __asm__("" : "+v"(x), "+v"(y))

#define WIDE_FMA(i)                                                                        \
    {                                                                                      \
        float x = a.p[(i) * a.rs + k * a.cs];                                              \
        w##i##0 += x * b0;                                                                 \
        w##i##1 += x * b1;                                                                 \
    }
#define WIDE_STORE(i)                                                                      \
    {                                                                                      \
        v16u *c = (v16u *)(C + (i) * ldc);                                                 \
        c[0] = acc ? c[0] + alpha * w##i##0 : alpha * w##i##0;                             \
        c[1] = acc ? c[1] + alpha * w##i##1 : alpha * w##i##1;                             \
    }

/* One MR x 32 block: two 16-float vectors a row, 8 accumulators. */
static void wide(AttnOperand a, const float *B, int64_t ldb, int64_t k0, int64_t k1,
                 float alpha, bool acc, float *C, int64_t ldc)
{
    v16 w00 = {0}, w01 = {0}, w10 = {0}, w11 = {0}, w20 = {0}, w21 = {0}, w30 = {0},
        w31 = {0};
    for (int64_t k = k0; k < k1; k++) {
        v16 b0 = *(const v16u *)(B + k * ldb), b1 = *(const v16u *)(B + k * ldb + 16);
        IN_ZMM(b0, b1);
        WIDE_FMA(0) WIDE_FMA(1) WIDE_FMA(2) WIDE_FMA(3)
    }
    WIDE_STORE(0) WIDE_STORE(1) WIDE_STORE(2) WIDE_STORE(3)
}
#endif

/* The rows and columns no register block covers, one element at a time. */
static void edge(AttnOperand a, int64_t rows, const float *B, int64_t ldb, int64_t cols,
                 int64_t k0, int64_t k1, float alpha, bool acc, float *C, int64_t ldc)
{
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            float s = 0;
            for (int64_t k = k0; k < k1; k++)
                s += a.p[i * a.rs + k * a.cs] * B[k * ldb + j];
            C[i * ldc + j] = acc ? C[i * ldc + j] + alpha * s : alpha * s;
        }
}

static void row_block(AttnOperand a, int64_t rows, const float *B, int64_t ldb, int64_t cols,
                      int64_t k0, int64_t k1, float alpha, bool acc, float *C, int64_t ldc)
{
    int64_t c = 0;
    if (rows == MR) {
#ifdef MF_ATTN_WIDE
        for (; c + 32 <= cols; c += 32)
            wide(a, B + c, ldb, k0, k1, alpha, acc, C + c, ldc);
#endif
        for (; c + 16 <= cols; c += 16)
            micro_2(a, B + c, ldb, k0, k1, alpha, acc, C + c, ldc);
        for (; c + 8 <= cols; c += 8)
            micro_1(a, B + c, ldb, k0, k1, alpha, acc, C + c, ldc);
    }
    if (c < cols)
        edge(a, rows, B + c, ldb, cols - c, k0, k1, alpha, acc, C + c, ldc);
}

const AttnRowBlock MF_ATTN_ROWS = row_block;
