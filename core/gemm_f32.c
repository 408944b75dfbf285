/* gemm_f32.c — moonflow's own float32 GEMM (see gemm_f32.h).
 *
 * C is computed by tiles of MR rows and 16 or 32 columns held in registers
 * (gemm_f32_tiles.h: 8-float vectors under AVX2, 16-float under AVX-512,
 * the table chosen at run time by MF_SIMD). op(B) is packed once per call
 * into column panels of K x NR floats (zero-padded past N; B^T is
 * transposed there); op(A) is read in place, A(i, k) broadcast from A's
 * rows or, for A^T, from its columns. A tile's sums run over all of K in k
 * order, each element its own chain of multiply-adds started at 0, then
 * C = alpha s (beta = 0: C is never read) or alpha s + beta C. Tiles at
 * the edges use kernels of fewer rows or columns and a zero-padded panel,
 * the same chains: so no element's value depends on where the tile or a
 * thread's share of C starts, nor on the table (AVX-512 or AVX2), and a
 * split result is the unsplit one bit for bit. */
#include "gemm_f32.h"

#include <string.h>

#include "gemm_f32_tiles.h"
#include "ops/vecmath.h"
#include "v8.h"

#define MR MF_GEMM_F32_MR
#define NR MF_GEMM_F32_NR

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

/* The table of tiles in use: MF_SIMD's instruction set (core/ops/vecmath.h). */
static const MfGemmF32Tiles *tiles(void)
{
    switch (mf_simd_level()) {
    case MF_SIMD_AVX512: return &mf_gemm_f32_tiles_avx512;
    case MF_SIMD_AVX2: return &mf_gemm_f32_tiles_avx2;
    default: return &mf_gemm_f32_tiles_generic;
    }
}

bool mf_gemm_f32_avx512(void)
{
    return tiles() == &mf_gemm_f32_tiles_avx512;
}

/* The tiles of rows [r0, r1) (at most MC) and the panel's columns
 * [j, j + cols), the sum over k in [k0, k0 + kn). A tile narrower than
 * NR ends in a full-width tile on the stack (holding C's values when beta
 * reads them), copied out. */
static void block(const MfGemmF32 *g, const MfGemmF32Tiles *t, const float *a, int64_t lda,
                  int64_t r0, int64_t r1, int64_t j, int64_t cols, int64_t k0, int64_t kn,
                  float *partial)
{
    bool first = k0 == 0, last = k0 + kn >= g->K;
    int64_t w = panel_width(g->N, j);
    const float *bp = g->packed + j / NR * panel_stride(g->K) + k0 * w;
    for (int64_t r = r0; r < r1; r += MR) {
        int64_t rows = r1 - r < MR ? r1 - r : MR;
        MfGemmF32Tile *fn = t->tile[w < NR][g->trans_a][rows - 1];
        const float *ar = g->trans_a ? a + (r - r0) * g->K + k0 * MR : a + (r - r0) * lda + k0;
        float *p = partial + (r - r0) * NR, *c = g->C + r * g->ldc + j;
        if (!last || cols == w) {
            fn(ar, lda, bp, kn, p, first, last, g->alpha, g->beta, c, g->ldc);
            continue;
        }
        float tmp[MR * NR] = {0};
        for (int64_t i = 0; i < rows && g->beta != 0; i++)
            memcpy(tmp + i * NR, c + i * g->ldc, sizeof(float) * (size_t)cols);
        fn(ar, lda, bp, kn, p, first, last, g->alpha, g->beta, tmp, NR);
        for (int64_t i = 0; i < rows; i++)
            memcpy(c + i * g->ldc, tmp + i * NR, sizeof(float) * (size_t)cols);
    }
}

/* block() for the 32 columns [j, j + 32) of two full panels, by wide tiles. */
static void wide_block(const MfGemmF32 *g, const MfGemmF32Tiles *t, const float *a, int64_t lda,
                       int64_t r0, int64_t r1, int64_t j, int64_t k0, int64_t kn, float *partial)
{
    bool first = k0 == 0, last = k0 + kn >= g->K;
    int64_t ps = panel_stride(g->K);
    const float *bp = g->packed + j / NR * ps + k0 * NR;
    for (int64_t r = r0; r < r1; r += MR) {
        int64_t rows = r1 - r < MR ? r1 - r : MR;
        const float *ar = g->trans_a ? a + (r - r0) * g->K + k0 * MR : a + (r - r0) * lda + k0;
        t->wide[g->trans_a][rows - 1](ar, lda, bp, ps, kn, partial + (r - r0) * 2 * NR, first,
                                      last, g->alpha, g->beta, g->C + r * g->ldc + j, g->ldc);
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
    float partial[MC * 2 * NR] __attribute__((aligned(64)));
    const MfGemmF32Tiles *t = tiles();
    for (int64_t m = r0; m < r1; m += MC) {
        int64_t m1 = r1 - m < MC ? r1 : m + MC;
        const float *a = g->A + m * g->lda;
        int64_t lda = g->lda;
        if (g->trans_a) {
            pack_a_transposed(g, m, m1, scratch);
            a = scratch;
            lda = MR;
        }
        for (int64_t j = c0; j < c1;) {
            /* two whole panels in one wide tile where the table has them */
            bool wide = t->wide[0][0] && c1 - j >= 2 * NR;
            int64_t cols = wide ? 2 * NR : c1 - j < NR ? c1 - j : NR;
            for (int64_t k = 0; k == 0 || k < g->K; k += KC) {
                int64_t kn = g->K - k < KC ? g->K - k : KC;
                if (wide)
                    wide_block(g, t, a, lda, m, m1, j, k, kn, partial);
                else
                    block(g, t, a, lda, m, m1, j, cols, k, kn, partial);
            }
            j += wide ? 2 * NR : NR;
        }
    }
}
