/* attention_tile.c — the float32 products of the attention ops' tiles
 * (attention.c, attention_grad.c) without BLAS: at the char-GPT's shapes
 * (64 x 64 tiles, d = 32) OpenBLAS spent as long packing its operands and
 * setting up each call as multiplying (bench/attention_tiles.c), and it
 * computes the whole tile where a causal mask needs only its lower half.
 *
 * C (M x N) = alpha op(A) B (+ C) is computed by blocks of MR rows and 16
 * or 32 columns held in registers (attention_tile_kernels.h, compiled once
 * per instruction set, the table picked by MF_SIMD like the GEMM's), the
 * operands read in place: A's elements are broadcast from any layout (A or
 * A^T), a transposed B is first copied to K x N rows (a tile of keys, at
 * most ATTN_TILE_MAX floats, on the stack). The causal band (AttnBand) says
 * which columns or which range of the sum a block of rows needs; what is
 * skipped is either never read (columns past a row's keys: the callers
 * mask or zero them) or exact zeros (probabilities and their gradients
 * past a row's keys), so the band changes no result. Each element is one
 * sum in k order, so results do not depend on the thread count, nor on the
 * table (AVX-512 or AVX2). */
#include "attention.h"

#include "../v8.h"
#include "attention_tile.h"
#include "vecmath.h"

#define MR ATTN_TILE_MR
#define NR ATTN_TILE_NR

static inline int64_t clamp(int64_t x, int64_t lo, int64_t hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* n up to whole blocks of NR columns. */
static inline int64_t round_up(int64_t n)
{
    return (n + NR - 1) / NR * NR;
}

/* The register blocks of MF_SIMD's instruction set (core/ops/vecmath.h). */
static AttnRowBlock row_block(void)
{
    switch (mf_simd_level()) {
    case MF_SIMD_AVX512: return mf_attn_rows_avx512;
    case MF_SIMD_AVX2: return mf_attn_rows_avx2;
    default: return mf_attn_rows_generic;
    }
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
    AttnRowBlock rows_of = row_block();
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
        AttnOperand a = {ta ? A + r : A + r * lda, ta ? 1 : lda, ta ? lda : 1};
        rows_of(a, rows, B, ldb, cols, k0, k1 > k0 ? k1 : k0, alpha, acc, C + r * ldc, ldc);
    }
}
