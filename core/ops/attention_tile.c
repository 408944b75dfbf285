/* attention_tile.c — the float32 products of the attention ops' tiles
 * (attention.c, attention_grad.c) without BLAS: at the char-GPT's shapes
 * (64 x 64 tiles, d = 32) OpenBLAS spent as long packing its operands and
 * setting up each call as multiplying (bench/attention_tiles.c), and it
 * computes the whole tile where a causal mask needs only its lower half.
 *
 * C (M x N) = alpha op(A) B (+ C) is computed by blocks of MR rows and NR
 * columns held in registers (GCC/clang vector extensions: 8-float vectors,
 * AVX2 FMAs under -march=native, two SSE halves elsewhere), the operands
 * read in place: A's elements are broadcast from any layout (A or A^T), a
 * transposed B is first copied to K x N rows (a tile of keys, at most
 * ATTN_TILE_MAX floats, on the stack). The causal band (AttnBand) says
 * which columns or which range of the sum a block of rows needs; what is
 * skipped is either never read (columns past a row's keys: the callers
 * mask or zero them) or exact zeros (probabilities and their gradients
 * past a row's keys), so the band changes no result. Each element is one
 * sum in k order, so results do not depend on the thread count. */
#include "attention.h"

#include <string.h>

#include "../v8.h"

#define MR 4
#define NR 16

static inline int64_t clamp(int64_t x, int64_t lo, int64_t hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* n up to whole blocks of NR columns. */
static inline int64_t round_up(int64_t n)
{
    return (n + NR - 1) / NR * NR;
}

/* A(i, k) of the row-major A or, transposed, of A^T. */
typedef struct Operand {
    const float *p;
    int64_t rs, cs; /* strides of i and k */
} Operand;

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
    static void micro_##NV(Operand a, const float *B, int64_t ldb, int64_t k0, int64_t k1, \
                           float alpha, bool acc, float *C, int64_t ldc)                   \
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

/* The rows and columns no register block covers, one element at a time. */
static void edge(Operand a, int64_t rows, const float *B, int64_t ldb, int64_t cols,
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

/* Rows [r, r + rows) of C, columns [0, cols), the sum over [k0, k1). */
static void row_block(Operand a, int64_t rows, const float *B, int64_t ldb, int64_t cols,
                      int64_t k0, int64_t k1, float alpha, bool acc, float *C, int64_t ldc)
{
    int64_t c = 0;
    if (rows == MR) {
        for (; c + NR <= cols; c += NR)
            micro_2(a, B + c, ldb, k0, k1, alpha, acc, C + c, ldc);
        for (; c + 8 <= cols; c += 8)
            micro_1(a, B + c, ldb, k0, k1, alpha, acc, C + c, ldc);
    }
    if (c < cols)
        edge(a, rows, B + c, ldb, cols - c, k0, k1, alpha, acc, C + c, ldc);
}

/* B^T's K x N rows from B (N x K, row stride ldb): 8 x 8 blocks, then the
 * edges one element at a time. */
static void transpose(const float *B, int64_t ldb, int64_t n, int64_t k, float *bt)
{
    int64_t n8 = n / 8 * 8, k8 = k / 8 * 8;
    for (int64_t j = 0; j < n8; j += 8)
        for (int64_t c = 0; c < k8; c += 8)
            transpose8(B + j * ldb + c, ldb, bt + c * n + j, n);
    for (int64_t j = 0; j < n; j++)
        for (int64_t c = j < n8 ? k8 : 0; c < k; c++)
            bt[c * n + j] = B[j * ldb + c];
}

bool mf_attn_tile_fits(bool tb, int64_t N, int64_t K)
{
    return K <= ATTN_TILE_K && (!tb || N * K <= ATTN_TILE_MAX);
}

void mf_attn_tile_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
                       const float *A, int64_t lda, const float *B, int64_t ldb, bool acc,
                       float *C, int64_t ldc, AttnBand band)
{
    float bt[ATTN_TILE_MAX];
    /* columns by whole register blocks: past a row's keys they are masked */
    int64_t need = band.kind == ATTN_BAND_COLS ? clamp(round_up(M + band.off), 0, N) : N;
    if (tb) { /* only the columns some row needs */
        transpose(B, ldb, need, K, bt);
        B = bt;
        ldb = need;
    }
    for (int64_t r = 0; r < M; r += MR) {
        int64_t rows = M - r < MR ? M - r : MR, cols = N, k0 = 0, k1 = K;
        if (band.kind == ATTN_BAND_COLS)
            cols = clamp(round_up(r + rows + band.off), 0, need);
        else if (band.kind == ATTN_BAND_KEND)
            k1 = clamp(r + rows + band.off, 0, K);
        else if (band.kind == ATTN_BAND_KSTART)
            k0 = clamp(r + band.off, 0, K);
        Operand a = {ta ? A + r : A + r * lda, ta ? 1 : lda, ta ? lda : 1};
        row_block(a, rows, B, ldb, cols, k0, k1 > k0 ? k1 : k0, alpha, acc, C + r * ldc, ldc);
    }
}
