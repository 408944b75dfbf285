/* gemm_f32.c — moonflow's own float32 GEMM (see gemm_f32.h).
 *
 * C is computed by tiles of MR rows and NR columns held in registers
 * (GCC/clang vector extensions: 8-float vectors, AVX2 FMAs under
 * -march=native, two SSE halves elsewhere). op(B) is packed once per call
 * into column panels of K x NR floats (zero-padded past N; B^T is
 * transposed there); op(A) is read in place, A(i, k) broadcast from A's
 * rows or, for A^T, from its columns. A tile's sums run over all of K in k
 * order, each element its own chain of multiply-adds started at 0, then
 * C = alpha s (beta = 0: C is never read) or alpha s + beta C. Tiles at
 * the edges use kernels of fewer rows and a zero-padded panel, the same
 * chains: so no element's value depends on where the tile or a thread's
 * share of C starts, and a split result is the unsplit one bit for bit. */
#include "gemm_f32.h"

#include <string.h>

#include "v8.h"

#define MR 6
#define NR 16

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
 * COLS, COLS = 16 or 8): the sums start at 0 (first) or at the partial
 * sums p (ROWS x NR), and end in C (last) or back in p, so a sum split
 * over blocks of k is the same chain as one pass. */
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

typedef void TileFn(const float *a, int64_t lda, const float *bp, int64_t K, float *p, bool first,
                    bool last, float alpha, float beta, float *C, int64_t ldc);

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

/* [narrow panel][trans_a][rows - 1] */
static TileFn *const tiles[2][2][MR] = {
    {{rows1, rows2, rows3, rows4, rows5, rows6}, {cols1, cols2, cols3, cols4, cols5, cols6}},
    {{rows1_8, rows2_8, rows3_8, rows4_8, rows5_8, rows6_8},
     {cols1_8, cols2_8, cols3_8, cols4_8, cols5_8, cols6_8}}};

/* Columns [j0, j0 + n) of op(B) = B^T (B is N x K, row stride ldb) into
 * a panel dst (K x w): 8 x 8 blocks, then the edges one at a time. */
static void pack_transposed(const float *B, int64_t ldb, int64_t j0, int64_t n, int64_t K,
                            float *dst, int64_t w)
{
    int64_t n8 = n / 8 * 8, k8 = K / 8 * 8;
    for (int64_t j = 0; j < n8; j += 8)
        for (int64_t k = 0; k < k8; k += 8)
            transpose8(B + (j0 + j) * ldb + k, ldb, dst + k * w + j, w);
    for (int64_t j = 0; j < n; j++)
        for (int64_t k = j < n8 ? k8 : 0; k < K; k++)
            dst[k * w + j] = B[(j0 + j) * ldb + k];
}

/* Floats from one packed panel (K x NR) to the next: one cache line more
 * than the panel, so that row k of every panel does not fall in the same
 * cache sets (K * NR floats is a multiple of 4 KiB for K = 64, 128, ...)
 * and B's rows can be packed into all panels at once. */
static int64_t panel_stride(int64_t K)
{
    return (K > 0 ? K : 1) * NR + 16;
}

/* The width of the panel starting at column j of op(B): NR, or 8 for a
 * last panel of at most 8 columns (N = 65 computes 72 columns, not 80). */
static int64_t panel_width(int64_t N, int64_t j)
{
    return N - j <= 8 && j == N / NR * NR ? 8 : NR;
}

int64_t mf_gemm_f32_padded_columns(int64_t N)
{
    return N % NR == 0 ? N : N / NR * NR + panel_width(N, N / NR * NR);
}

size_t mf_gemm_f32_packed_floats(int64_t N, int64_t K)
{
    return (size_t)((N + NR - 1) / NR) * (size_t)panel_stride(K);
}

/* Columns [j0, j1) of B (K x N, not transposed) into their panels: row
 * by row, each row read from start to end (reading panel by panel walks B
 * down its columns, a page per row: 1.8x slower from L3 for 768 x 512). */
static void pack_rows(const float *B, int64_t ldb, int64_t N, int64_t K, int64_t j0, int64_t j1,
                      float *packed)
{
    int64_t full = j1 / NR * NR, ps = panel_stride(K), w = panel_width(N, full);
    float *edge = packed + full / NR * ps;
    if (full < j1)
        memset(edge, 0, sizeof(float) * (size_t)(K * w));
    for (int64_t k = 0; k < K; k++) {
        const float *src = B + k * ldb;
        float *dst = packed + k * NR;
        for (int64_t j = j0; j < full; j += NR) /* a fixed size: copied in registers */
            memcpy(dst + j / NR * ps, src + j, sizeof(float) * NR);
        if (full < j1)
            memcpy(edge + k * w, src + full, sizeof(float) * (size_t)(j1 - full));
    }
}

void mf_gemm_f32_pack_b(bool trans_b, int64_t N, int64_t K, const float *B, int64_t ldb,
                        int64_t j0, int64_t j1, float *packed)
{
    if (!trans_b) {
        pack_rows(B, ldb, N, K, j0, j1, packed);
        return;
    }
    for (int64_t j = j0; j < j1; j += NR) {
        int64_t n = j1 - j < NR ? j1 - j : NR, w = panel_width(N, j);
        float *dst = packed + j / NR * panel_stride(K);
        if (n < w)
            memset(dst, 0, sizeof(float) * (size_t)(K * w));
        pack_transposed(B, ldb, j, n, K, dst, w);
    }
}

/* Blocks of k: a panel's KC x NR floats stay in L1 while MC rows of A
 * pass over it. */
#define KC 256
#define MC MF_GEMM_F32_ROW_BLOCK

/* The tiles of rows [r0, r1) (at most MC) and the panel's columns
 * [j, j + cols), the sum over k in [k0, k0 + kn). A tile narrower than
 * NR ends in a full-width tile on the stack (holding C's values when beta
 * reads them), copied out. */
static void block(const MfGemmF32 *g, const float *a, int64_t lda, int64_t r0, int64_t r1,
                  int64_t j, int64_t cols, int64_t k0, int64_t kn, float *partial)
{
    bool first = k0 == 0, last = k0 + kn >= g->K;
    int64_t w = panel_width(g->N, j);
    const float *bp = g->packed + j / NR * panel_stride(g->K) + k0 * w;
    for (int64_t r = r0; r < r1; r += MR) {
        int64_t rows = r1 - r < MR ? r1 - r : MR;
        TileFn *fn = tiles[w < NR][g->trans_a][rows - 1];
        const float *ar = g->trans_a ? a + (r - r0) * g->K + k0 * MR : a + (r - r0) * lda + k0;
        float *p = partial + (r - r0) * NR, *c = g->C + r * g->ldc + j;
        if (!last || cols == w) {
            fn(ar, lda, bp, kn, p, first, last, g->alpha, g->beta, c, g->ldc);
            continue;
        }
        float t[MR * NR] = {0};
        for (int64_t i = 0; i < rows && g->beta != 0; i++)
            memcpy(t + i * NR, c + i * g->ldc, sizeof(float) * (size_t)cols);
        fn(ar, lda, bp, kn, p, first, last, g->alpha, g->beta, t, NR);
        for (int64_t i = 0; i < rows; i++)
            memcpy(c + i * g->ldc, t + i * NR, sizeof(float) * (size_t)cols);
    }
}

/* A^T's rows [r0, r1) (columns of A, K x M) packed by MR rows: each block
 * K x MR, read by the A_COLS tiles with lda = MR. */
static void pack_a_transposed(const MfGemmF32 *g, int64_t r0, int64_t r1, float *dst)
{
    for (int64_t r = r0; r < r1; r += MR) {
        int64_t rows = r1 - r < MR ? r1 - r : MR;
        float *d = dst + (r - r0) * g->K;
        const float *src = g->A + r;
        if (rows == MR) /* a fixed size: copied in registers, not by memcpy calls */
            for (int64_t k = 0; k < g->K; k++)
                memcpy(d + k * MR, src + k * g->lda, sizeof(float) * MR);
        else
            for (int64_t k = 0; k < g->K; k++)
                for (int64_t i = 0; i < rows; i++)
                    d[k * MR + i] = src[k * g->lda + i];
    }
}

size_t mf_gemm_f32_scratch_floats(int64_t K)
{
    return (size_t)MC * (size_t)(K > 0 ? K : 1);
}

void mf_gemm_f32(const MfGemmF32 *g, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                 float *scratch)
{
    float partial[MC * NR] __attribute__((aligned(32)));
    for (int64_t m = r0; m < r1; m += MC) {
        int64_t m1 = r1 - m < MC ? r1 : m + MC;
        const float *a = g->A + m * g->lda;
        int64_t lda = g->lda;
        if (g->trans_a) {
            pack_a_transposed(g, m, m1, scratch);
            a = scratch;
            lda = MR;
        }
        for (int64_t j = c0; j < c1; j += NR) {
            int64_t cols = c1 - j < NR ? c1 - j : NR;
            for (int64_t k = 0; k == 0 || k < g->K; k += KC)
                block(g, a, lda, m, m1, j, cols, k, g->K - k < KC ? g->K - k : KC, partial);
        }
    }
}
