/* gemm.c — checked, profiled GEMM: moonflow's own float32 kernel
 * (gemm_f32.c) where it is measured faster, OpenBLAS elsewhere (see gemm.h).
 *
 * With more than one thread, OpenBLAS's own pool and ours (core/parallel.c,
 * which shares im2col, pooling, ReLU gradient, ... around the GEMMs) would
 * compete for the cores: OpenBLAS's workers spin for a while after every
 * threaded GEMM, exactly when our workers want the core for the
 * memory-bound loop that follows. So there is one set of threads: mf_gemm
 * runs OpenBLAS single-threaded and splits a large GEMM among our workers
 * itself, by rows of C (or by columns when C is wide and short). With the
 * own kernel each element of C is one sum over k in order wherever its
 * share starts, so the result does not depend on the thread count. An
 * OpenBLAS share rounds as its own call: OpenBLAS (0.3.21, Zen kernels)
 * splits K differently for a share than for the unsplit call, so the
 * last bits of a split OpenBLAS GEMM may differ from one thread's. */
#include "gemm.h"

#include <cblas.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "gemm_f32.h"
#include "parallel.h"
#include "profile/profile.h"

/* Every share has more than this M*N*K. OpenBLAS (0.3.21, SkylakeX and
 * Cooperlake kernels) computes GEMMs of at most 100^3 with a separate
 * "small matrix" kernel that rounds differently, so a share below it would
 * change the result; at 2 MFLOP a share also pays well for a wake-up. */
#define SPLIT_MIN_MNK 1e6
/* The narrowest share of rows or columns worth a thread. */
#define SPLIT_MIN_WIDTH 16
/* Shares start at multiples of this (every kernel's unroll divides it), so
 * each one's edge blocks are those of the unsplit call: cutting the
 * columns of a 1000x1000x100 DGEMM at 500 changed results (the edge of 4
 * columns went through another micro-kernel), at 496 it does not. */
#define SPLIT_ALIGN 16

static bool fits(int64_t v)
{
    return v >= 0 && v <= INT_MAX;
}

/* Zeroes the M x N block of C (row stride ldc). OpenBLAS's own beta = 0
 * pass (sgemm_beta) zeroes C at a few GB/s, 3.6% of the char-GPT step's
 * samples; memset is several times faster, and the GEMM then adds into C
 * with beta = 1: the same result bit for bit (0 + x is x, and NaN or Inf
 * already in C is overwritten either way). */
static void zero_block(void *C, int64_t M, int64_t N, int64_t ldc, size_t es)
{
    if (ldc == N) {
        memset(C, 0, (size_t)(M * N) * es);
        return;
    }
    for (int64_t r = 0; r < M; r++)
        memset((char *)C + (size_t)(r * ldc) * es, 0, (size_t)N * es);
}

/* C[M, N] = alpha op(A) op(B) + beta C through BLAS, for sub-blocks too. */
static void blas(const MfGemm *g, int64_t M, int64_t N, const void *A, const void *B, void *C)
{
    enum CBLAS_TRANSPOSE ta = g->trans_a ? CblasTrans : CblasNoTrans;
    enum CBLAS_TRANSPOSE tb = g->trans_b ? CblasTrans : CblasNoTrans;
    double beta = g->beta;
    if (beta == 0) {
        zero_block(C, M, N, g->ldc, mf_dtype_size(g->dtype));
        beta = 1;
    }
    if (g->dtype == MF_FLOAT32)
        cblas_sgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)g->K, (float)g->alpha, A,
                    (int)g->lda, B, (int)g->ldb, (float)beta, C, (int)g->ldc);
    else
        cblas_dgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)g->K, g->alpha, A, (int)g->lda,
                    B, (int)g->ldb, beta, C, (int)g->ldc);
}

static int kernel_choice = -1; /* MfGemmKernel; -1: MF_GEMM not read yet */

MfGemmKernel mf_gemm_kernel(void)
{
    if (kernel_choice < 0) {
        const char *env = getenv("MF_GEMM");
        kernel_choice = env && strcmp(env, "blas") == 0  ? MF_GEMM_BLAS
                        : env && strcmp(env, "own") == 0 ? MF_GEMM_OWN
                                                         : MF_GEMM_AUTO;
    }
    return (MfGemmKernel)kernel_choice;
}

void mf_gemm_set_kernel(MfGemmKernel k)
{
    kernel_choice = k;
}

/* The float32 products the own kernel computes faster than OpenBLAS
 * (bench/bench_matmul.c; medians of alternating runs, one thread).
 *
 * With its AVX-512 tiles (Zen 5, where OpenBLAS 0.3.21 runs its AVX2
 * Haswell kernels): nearly all, at 0.45-0.60x OpenBLAS's time: the
 * char-GPT's dW = dY^T X (TN, K = 768, M = 128/384/512) 0.56-0.60x, C
 * wider than 512 (768x1024x128) 0.50x, K past 1024 (1568x256x2304) 0.50x,
 * A of more than 2^20 floats (25088x64x288) 0.45x, 1024^3 0.52x. Except a
 * transposed A with a long K: A^T's packed blocks of 96 rows outgrow L2
 * (288x64x8192 1.1-1.9x, 96x96x25088 1.24x; K = 2048 and 4096 0.61x and
 * 0.73x), so K <= 4096 there. op(B)'s packed copy is kept to 16 MiB (2^22
 * floats, beyond every shape measured).
 *
 * With AVX2 tiles (measured on Zen 3 against OpenBLAS's Zen kernels): C at
 * most 512 columns wide and K at most 1024 (conv's 8x14x14x256 layer, K =
 * 2304, was slower), A of at most 2^20 floats (read in place, a larger one
 * comes from memory by six strided rows: conv's 32x28x28x32 -> 64 forward,
 * A of 25088 x 288, was 1.3-1.8x slower). A transposed A (dW = dY^T X) is
 * packed, and that packing makes it 1.00-1.05x OpenBLAS's time on the
 * char-GPT's dW; except when all of A^T is one packed block (M <=
 * MF_GEMM_F32_ROW_BLOCK), which passes over the packed B once: the head's
 * dW, 65x128x768, 0.91-0.96x.
 *
 * Either way at most 1/8 of the columns computed are wasted on padding
 * (the head's N = 65 computes 72). */
static bool own_kernel(const MfGemm *g)
{
    if (g->dtype != MF_FLOAT32)
        return false;
    switch (mf_gemm_kernel()) {
    case MF_GEMM_BLAS: return false;
    case MF_GEMM_OWN: return true;
    default: break;
    }
    if (mf_gemm_f32_padded_columns(g->N) * 7 > g->N * 8)
        return false;
    if (mf_gemm_f32_avx512())
        return (!g->trans_a || g->K <= 4096) && g->N * g->K <= (1 << 22);
    return (!g->trans_a || g->M <= MF_GEMM_F32_ROW_BLOCK) && g->N <= 512 && g->K <= 1024 &&
           g->M * g->K <= (1 << 20);
}

typedef struct GemmShare {
    const MfGemm *g;
    const MfGemmF32 *own; /* the own kernel's call; NULL: OpenBLAS */
    float *packed;        /* its op(B): each column share packs its own panels */
    float *scratch;       /* the own kernel's: one mf_gemm_f32_scratch_floats per share */
    bool by_rows;         /* split M (rows of A and C), else N (columns of B and C) */
    int64_t n;            /* M or N */
    atomic_int shares;    /* shares started: each takes the next scratch */
} GemmShare;

/* Blocks [bb, eb) of SPLIT_ALIGN rows (or columns) of C: the matching
 * rows of op(A) (columns of op(B)), which for a transposed row-major
 * operand are its columns (rows). */
static void gemm_share(void *ctx, int64_t bb, int64_t eb)
{
    GemmShare *s = ctx;
    const MfGemm *g = s->g;
    int64_t b = bb * SPLIT_ALIGN, e = eb * SPLIT_ALIGN < s->n ? eb * SPLIT_ALIGN : s->n;
    if (s->own) {
        int slot = atomic_fetch_add(&s->shares, 1);
        float *scratch = s->scratch + (size_t)slot * mf_gemm_f32_scratch_floats(g->K);
        if (s->by_rows) {
            mf_gemm_f32(s->own, b, e, 0, g->N, scratch);
        } else {
            mf_gemm_f32_pack_b(g->trans_b, g->N, g->K, g->B, g->ldb, b, e, s->packed);
            mf_gemm_f32(s->own, 0, g->M, b, e, scratch);
        }
        return;
    }
    size_t es = mf_dtype_size(g->dtype);
    const char *A = g->A, *B = g->B;
    char *C = g->C;
    if (s->by_rows)
        blas(g, e - b, g->N, A + (size_t)(g->trans_a ? b : b * g->lda) * es, B,
             C + (size_t)(b * g->ldc) * es);
    else
        blas(g, g->M, e - b, A, B + (size_t)(g->trans_b ? b * g->ldb : b) * es,
             C + (size_t)b * es);
}

/* How many of 'threads' shares to cut 'n' rows (columns) into, each line
 * of them 'line' multiply-adds: as many as keep every share, the shorter
 * last one included, above SPLIT_MIN_MNK and SPLIT_MIN_WIDTH. Shares are
 * whole SPLIT_ALIGN blocks, as mf_parallel_for_threads cuts them. */
static int shares(int threads, int64_t n, double line)
{
    int64_t blocks = (n + SPLIT_ALIGN - 1) / SPLIT_ALIGN;
    for (; threads > 1; threads--) {
        int64_t chunk = (blocks + threads - 1) / threads * SPLIT_ALIGN;
        int64_t last = n - (threads - 1) * chunk;
        if (last >= SPLIT_MIN_WIDTH && (double)last * line > SPLIT_MIN_MNK)
            return threads;
    }
    return 1;
}

/* How many shares 'g' is cut into on our threads. */
static int split(const MfGemm *g, bool *by_rows)
{
    *by_rows = g->M >= g->N || g->N < 2 * SPLIT_MIN_WIDTH;
    double line = (double)(*by_rows ? g->N : g->M) * (double)g->K;
    int threads = mf_parallel_threads();
    return threads <= 1 ? 1 : shares(threads, *by_rows ? g->M : g->N, line);
}

/* Panels [pb, pe) of the own kernel's op(B), 16 columns each. */
static void pack_share(void *ctx, int64_t pb, int64_t pe)
{
    const GemmShare *s = ctx;
    const MfGemm *g = s->g;
    int64_t e = pe * SPLIT_ALIGN < g->N ? pe * SPLIT_ALIGN : g->N;
    mf_gemm_f32_pack_b(g->trans_b, g->N, g->K, g->B, g->ldb, pb * SPLIT_ALIGN, e, s->packed);
}

/* Runs 'g' on 'use' shares, through 'own' (op(B) packed into 'packed' by
 * the shares of columns, or before the shares of rows, which all read
 * all of it; 'scratch' for each share) or OpenBLAS (itself
 * single-threaded: see parallel.h). */
static void run(const MfGemm *g, int use, bool by_rows, const MfGemmF32 *own, float *packed,
                float *scratch)
{
    int64_t n = by_rows ? g->M : g->N;
    GemmShare s = {g, own, packed, scratch, by_rows, n, 0};
    int64_t panels = (g->N + SPLIT_ALIGN - 1) / SPLIT_ALIGN;
    if (own && by_rows)
        pack_share(&s, 0, panels);
    if (use <= 1)
        gemm_share(&s, 0, (n + SPLIT_ALIGN - 1) / SPLIT_ALIGN);
    else
        mf_parallel_for_threads(use, (n + SPLIT_ALIGN - 1) / SPLIT_ALIGN, 1, gemm_share, &s);
}

/* The own kernel's call. Its buffers come from the engine's caching
 * allocator: reused, not fresh pages each call. */
static MfStatus run_own(const MfGemm *g, int use, bool by_rows)
{
    size_t packed = (mf_gemm_f32_packed_floats(g->N, g->K) + 7) / 8 * 8;
    size_t floats = packed + (g->trans_a ? (size_t)use * mf_gemm_f32_scratch_floats(g->K) : 0);
    size_t bytes = floats * sizeof(float);
    float *buf = mf_alloc(bytes);
    if (!buf)
        return mf_err_set(MF_ENOMEM, "%s: out of memory (%zu bytes) for a GEMM", g->op, bytes);
    MfGemmF32 own = {g->trans_a, g->M, g->N, g->K, (float)g->alpha, (float)g->beta,
                     g->A, g->lda, buf, g->C, g->ldc};
    run(g, use, by_rows, &own, buf, buf + packed);
    mf_dealloc(buf, bytes);
    return MF_OK;
}

MfStatus mf_gemm(const MfGemm *g)
{
    if (!fits(g->M) || !fits(g->N) || !fits(g->K) || !fits(g->lda) || !fits(g->ldb) ||
        !fits(g->ldc))
        return mf_err_set(MF_EARG, "%s: GEMM of M=%lld N=%lld K=%lld is too large for BLAS",
                          g->op, (long long)g->M, (long long)g->N, (long long)g->K);
    if (g->dtype != MF_FLOAT32 && g->dtype != MF_FLOAT64)
        return mf_err_set(MF_EDTYPE, "%s: GEMM needs float32 or float64, got %s", g->op,
                          mf_dtype_name(g->dtype));
    if (g->M == 0 || g->N == 0)
        return MF_OK;
    MfStatus st = mf_parallel_blas_buffers(g->op, mf_parallel_threads());
    if (st != MF_OK)
        return st;
    MfProfSpan span;
    mf_prof_begin(&span);
    bool by_rows;
    int use = split(g, &by_rows);
    if (own_kernel(g))
        st = run_own(g, use, by_rows);
    else
        run(g, use, by_rows, NULL, NULL, NULL);
    mf_prof_end_gemm(&span, g);
    return st;
}
