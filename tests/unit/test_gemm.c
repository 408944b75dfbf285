/* test_gemm.c — mf_gemm's two float32 kernels.
 *
 * The own kernel (core/gemm_f32.c) against a float64 reference: every M, N
 * and K from 1 to 40 and some larger odd shapes, the four transposes,
 * leading dimensions wider than the rows, alpha and beta, beta = 0 over
 * NaN, K = 0; the error bound is the classic one for a sum of K products,
 * |C - ref| <= (K + 2) u (|alpha| sum_k |A(i,k) B(k,j)| + |beta C|) with
 * u = 2^-24. Its result split over two threads, by rows or by columns, is
 * the one-thread result bit for bit, and so is its AVX-512 path (32-column
 * tiles of zmm vectors) to its AVX2 path (MF_SIMD, mf_simd_set_level).
 *
 * OpenBLAS (MF_GEMM=blas) with beta = 0 (a fresh output): core/gemm.c
 * zeroes C itself (memset) and lets BLAS add with beta = 1. The result must
 * be OpenBLAS's own beta = 0 result bit for bit on one thread, whatever C
 * held before (NaN, Inf); split over two threads (by rows, or by columns: a
 * column share is a block of C with ldc > its width) every share is zeroed
 * (the split itself is not bitwise: each share is its own BLAS call, see
 * test_parallel.c); the columns of C outside the block (ldc > N) are left as
 * they were. */
#include <cblas.h>
#include <stdlib.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/gemm.h"
#include "core/ops/vecmath.h"
#include "core/parallel.h"

static void fill(float *p, int64_t n, uint32_t seed)
{
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)((double)(seed >> 8) / (double)(1u << 23) - 1.0);
    }
}

/* C (M x ldc, garbage: NaN, Inf, values) = op(A) op(B) through mf_gemm
 * against cblas_sgemm with beta = 0 on the same garbage. */
static void check(int threads, bool ta, bool tb, int64_t M, int64_t N, int64_t K, int64_t pad)
{
    int64_t ldc = N + pad;
    float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(K * N));
    float *C = malloc(sizeof(float) * (size_t)(M * ldc));
    float *E = malloc(sizeof(float) * (size_t)(M * ldc));
    assert_true(A && B && C && E);
    fill(A, M * K, 3);
    fill(B, K * N, 4);
    for (int64_t i = 0; i < M * ldc; i++)
        C[i] = i % 3 == 0 ? NAN : i % 3 == 1 ? -INFINITY : (float)i;
    memcpy(E, C, sizeof(float) * (size_t)(M * ldc));
    openblas_set_num_threads(1); /* the reference is one unsplit call, as mf_gemm's on one thread */
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)M, (int)N, (int)K, 1.0f, A, ta ? (int)M : (int)K, B, tb ? (int)K : (int)N,
                0.0f, E, (int)ldc);
    assert_int_equal(mf_parallel_set_threads(threads), MF_OK);
    mf_gemm_set_kernel(MF_GEMM_BLAS);
    MfGemm g = {.op = "test", .dtype = MF_FLOAT32, .trans_a = ta, .trans_b = tb, .M = M, .N = N,
                .K = K, .alpha = 1.0, .beta = 0.0, .A = A, .lda = ta ? M : K, .B = B,
                .ldb = tb ? K : N, .C = C, .ldc = ldc};
    assert_int_equal(mf_gemm(&g), MF_OK);
    assert_int_equal(mf_parallel_set_threads(1), MF_OK);
    mf_gemm_set_kernel(MF_GEMM_AUTO);
    int64_t differ = 0;
    for (int64_t i = 0; i < M * ldc; i++) {
        bool pad_col = i % ldc >= N; /* left as it was: compare bits (NaN included) */
        if (threads == 1 || pad_col)
            differ += memcmp(&C[i], &E[i], sizeof(float)) != 0;
        else /* a share of rows or columns rounds as its own call */
            differ += !(fabsf(C[i] - E[i]) <= 1e-5f * (1 + fabsf(E[i])));
    }
    assert_int_equal(differ, 0);
    free(A);
    free(B);
    free(C);
    free(E);
}

static void test_fresh_output_is_blas_beta_zero(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 2; threads++) {
        check(threads, false, false, 300, 128, 200, 0);  /* split by rows */
        check(threads, true, false, 256, 129, 300, 7);   /* rows, padded C */
        check(threads, false, true, 40, 700, 512, 5);    /* wide and short: columns */
        check(threads, true, true, 33, 17, 9, 3);        /* small, one call */
    }
}

/* One product for the own kernel: op(A) is M x K, op(B) K x N, each
 * matrix with 'pad' more columns than it needs. */
typedef struct Case {
    bool ta, tb;
    int64_t M, N, K, pad;
    double alpha, beta;
} Case;

typedef struct Operands {
    float *A, *B, *C;
    int64_t lda, ldb, ldc;
} Operands;

static Operands operands(const Case *c, uint32_t seed)
{
    Operands o;
    int64_t arows = c->ta ? c->K : c->M, brows = c->tb ? c->N : c->K;
    o.lda = (c->ta ? c->M : c->K) + c->pad;
    o.ldb = (c->tb ? c->K : c->N) + c->pad;
    o.ldc = c->N + c->pad;
    o.A = malloc(sizeof(float) * (size_t)(arows * o.lda + 1));
    o.B = malloc(sizeof(float) * (size_t)(brows * o.ldb + 1));
    o.C = malloc(sizeof(float) * (size_t)(c->M * o.ldc + 1));
    assert_true(o.A && o.B && o.C);
    fill(o.A, arows * o.lda, seed);
    fill(o.B, brows * o.ldb, seed + 1);
    fill(o.C, c->M * o.ldc, seed + 2);
    if (c->beta == 0) /* never read: NaN in C must not come through */
        for (int64_t i = 0; i < c->M * o.ldc; i++)
            o.C[i] = i % 2 ? NAN : INFINITY;
    return o;
}

static void release(Operands *o)
{
    free(o->A);
    free(o->B);
    free(o->C);
}

static MfGemm gemm_of(const Case *c, const Operands *o)
{
    return (MfGemm){.op = "test", .dtype = MF_FLOAT32, .trans_a = c->ta, .trans_b = c->tb,
                    .M = c->M, .N = c->N, .K = c->K, .alpha = c->alpha, .beta = c->beta,
                    .A = o->A, .lda = o->lda, .B = o->B, .ldb = o->ldb, .C = o->C,
                    .ldc = o->ldc};
}

/* The elements of C (before: C0) outside the bound against the float64
 * reference, and padding columns that changed. */
static int64_t wrong(const Case *c, const Operands *o, const float *C0)
{
    int64_t bad = 0;
    const double u = 0x1p-24;
    for (int64_t i = 0; i < c->M; i++)
        for (int64_t j = 0; j < o->ldc; j++) {
            float got = o->C[i * o->ldc + j], before = C0[i * o->ldc + j];
            if (j >= c->N) {
                bad += memcmp(&got, &before, sizeof got) != 0;
                continue;
            }
            double sum = 0, mag = 0;
            for (int64_t k = 0; k < c->K; k++) {
                double a = c->ta ? o->A[k * o->lda + i] : o->A[i * o->lda + k];
                double b = c->tb ? o->B[j * o->ldb + k] : o->B[k * o->ldb + j];
                sum += a * b;
                mag += fabs(a * b);
            }
            double cb = c->beta == 0 ? 0 : c->beta * (double)before;
            double ref = c->alpha * sum + cb;
            double bound = (double)(c->K + 2) * u * (fabs(c->alpha) * mag + fabs(cb)) + 1e-30;
            bad += !(fabs((double)got - ref) <= bound);
        }
    return bad;
}

static void check_own(const Case *c, uint32_t seed)
{
    Operands o = operands(c, seed);
    size_t bytes = sizeof(float) * (size_t)(c->M * o.ldc);
    float *C0 = malloc(bytes + sizeof(float));
    assert_non_null(C0);
    memcpy(C0, o.C, bytes);
    MfGemm g = gemm_of(c, &o);
    assert_int_equal(mf_gemm(&g), MF_OK);
    int64_t bad = wrong(c, &o, C0);
    if (bad)
        print_error("%c%c M=%lld N=%lld K=%lld pad=%lld alpha=%g beta=%g: %lld wrong\n",
                    c->ta ? 'T' : 'N', c->tb ? 'T' : 'N', (long long)c->M, (long long)c->N,
                    (long long)c->K, (long long)c->pad, c->alpha, c->beta, (long long)bad);
    assert_int_equal(bad, 0);
    free(C0);
    release(&o);
}

/* Every M, N and K from 1 to 40 (the other two from a cycle of sizes
 * around the tile's 6 rows and 16 columns), in the four transposes, with
 * and without padding, over a few alpha and beta. */
static void test_own_kernel_small_shapes(void **state)
{
    (void)state;
    static const int64_t other[] = {1, 5, 6, 7, 15, 16, 17, 33, 40};
    static const double ab[][2] = {{1, 0}, {-0.5, 0}, {1, 1}, {2, -0.75}};
    mf_gemm_set_kernel(MF_GEMM_OWN);
    uint32_t seed = 11;
    for (int64_t n = 1; n <= 40; n++)
        for (int t = 0; t < 4; t++) {
            int64_t x = other[(n + t) % 9], y = other[(2 * n + 3 * t) % 9];
            const double *s = ab[(n + t) % 4];
            bool ta = t & 1, tb = t & 2;
            int64_t pad = n % 3 == 0 ? 0 : n % 5;
            check_own(&(Case){ta, tb, n, x, y, pad, s[0], s[1]}, seed++);
            check_own(&(Case){ta, tb, x, n, y, pad, s[0], s[1]}, seed++);
            check_own(&(Case){ta, tb, x, y, n, pad, s[0], s[1]}, seed++);
        }
    mf_gemm_set_kernel(MF_GEMM_AUTO);
}

/* Larger odd shapes: several row blocks and panels, K past one block of
 * k (256), tall and wide. */
static void test_own_kernel_large_shapes(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {{97, 131, 300}, {301, 17, 513}, {107, 147, 257},
                                        {5, 300, 65}, {200, 3, 1000}, {768, 65, 128}};
    mf_gemm_set_kernel(MF_GEMM_OWN);
    for (int s = 0; s < 6; s++)
        for (int t = 0; t < 4; t++)
            check_own(&(Case){t & 1, t & 2, shapes[s][0], shapes[s][1], shapes[s][2], s % 3,
                              s % 2 ? 1.0 : 0.5, t == 3 ? 0.25 : 0.0},
                      (uint32_t)(100 + 4 * s + t));
    mf_gemm_set_kernel(MF_GEMM_AUTO);
}

/* K = 0: C = beta C, and beta = 0 writes zeros over NaN. */
static void test_own_kernel_empty_sum(void **state)
{
    (void)state;
    mf_gemm_set_kernel(MF_GEMM_OWN);
    for (int b = 0; b < 2; b++) {
        float C[3 * 20];
        for (int i = 0; i < 60; i++)
            C[i] = b ? (float)i : NAN;
        float A[1] = {1}, B[1] = {1};
        MfGemm g = {.op = "test", .dtype = MF_FLOAT32, .M = 3, .N = 17, .K = 0, .alpha = 1,
                    .beta = b ? 0.5 : 0.0, .A = A, .lda = 1, .B = B, .ldb = 17, .C = C,
                    .ldc = 20};
        assert_int_equal(mf_gemm(&g), MF_OK);
        for (int i = 0; i < 60; i++) {
            float want = i % 20 >= 17 ? (b ? (float)i : NAN) : b ? 0.5f * (float)i : 0.0f;
            if (isnan(want))
                assert_true(isnan(C[i]));
            else
                assert_true(C[i] == want);
        }
    }
    mf_gemm_set_kernel(MF_GEMM_AUTO);
}

/* The own kernel's result on two threads (rows split at multiples of 16,
 * which are not multiples of its 6-row tiles; or columns) is the
 * one-thread result bit for bit. */
static void check_split(const Case *c)
{
    Operands o = operands(c, 7);
    size_t bytes = sizeof(float) * (size_t)(c->M * o.ldc);
    float *one = malloc(bytes), *C0 = malloc(bytes);
    assert_true(one && C0);
    memcpy(C0, o.C, bytes);
    MfGemm g = gemm_of(c, &o);
    assert_int_equal(mf_gemm(&g), MF_OK);
    memcpy(one, o.C, bytes);
    memcpy(o.C, C0, bytes);
    assert_int_equal(mf_parallel_set_threads(2), MF_OK);
    assert_int_equal(mf_gemm(&g), MF_OK);
    assert_int_equal(mf_parallel_set_threads(1), MF_OK);
    assert_memory_equal(one, o.C, bytes);
    free(one);
    free(C0);
    release(&o);
}

static void test_own_kernel_split_is_bitwise(void **state)
{
    (void)state;
    mf_gemm_set_kernel(MF_GEMM_OWN);
    for (int t = 0; t < 4; t++) {
        check_split(&(Case){t & 1, t & 2, 300, 128, 200, 3, 1, 0});   /* by rows */
        check_split(&(Case){t & 1, t & 2, 301, 97, 300, 0, 1, 0.5});  /* rows, beta */
        check_split(&(Case){t & 1, t & 2, 40, 700, 512, 5, -1, 0});   /* by columns */
        check_split(&(Case){t & 1, t & 2, 47, 333, 777, 1, 0.5, 1});  /* columns, edges */
    }
    mf_gemm_set_kernel(MF_GEMM_AUTO);
}

/* C from 'level''s tiles (C restored from C0 first). */
static void run_at(MfSimd level, const MfGemm *g, float *C, const float *C0, size_t bytes)
{
    assert_true(mf_simd_set_level(level));
    memcpy(C, C0, bytes);
    assert_int_equal(mf_gemm(g), MF_OK);
}

/* The AVX-512 tiles' result is the AVX2 tiles' bit for bit: the wide
 * tiles, the 16-column and 8-column tiles beside them and every edge. */
static void check_paths(const Case *c, uint32_t seed)
{
    Operands o = operands(c, seed);
    size_t bytes = sizeof(float) * (size_t)(c->M * o.ldc);
    float *avx2 = malloc(bytes + sizeof(float)), *C0 = malloc(bytes + sizeof(float));
    assert_true(avx2 && C0);
    memcpy(C0, o.C, bytes);
    MfGemm g = gemm_of(c, &o);
    run_at(MF_SIMD_AVX2, &g, o.C, C0, bytes);
    memcpy(avx2, o.C, bytes);
    run_at(MF_SIMD_AVX512, &g, o.C, C0, bytes);
    if (memcmp(avx2, o.C, bytes) != 0)
        print_error("%c%c M=%lld N=%lld K=%lld alpha=%g beta=%g: AVX-512 != AVX2\n",
                    c->ta ? 'T' : 'N', c->tb ? 'T' : 'N', (long long)c->M, (long long)c->N,
                    (long long)c->K, c->alpha, c->beta);
    assert_memory_equal(avx2, o.C, bytes);
    free(avx2);
    free(C0);
    release(&o);
}

static void test_own_kernel_avx512_is_avx2_bitwise(void **state)
{
    (void)state;
    MfSimd level = mf_simd_level();
    if (!mf_simd_set_level(MF_SIMD_AVX512) || !mf_simd_set_level(MF_SIMD_AVX2))
        skip(); /* a CPU without both: nothing to compare */
    static const int64_t other[] = {1, 7, 16, 31, 32, 33, 48, 65, 97};
    static const double ab[][2] = {{1, 0}, {-0.5, 0}, {1, 1}, {2, -0.75}};
    mf_gemm_set_kernel(MF_GEMM_OWN);
    uint32_t seed = 21;
    for (int64_t n = 1; n <= 70; n += 3)
        for (int t = 0; t < 4; t++) {
            int64_t x = other[(n + t) % 9], y = other[(2 * n + 3 * t) % 9];
            const double *s = ab[(n + t) % 4];
            int64_t pad = n % 2 ? 0 : 3;
            check_paths(&(Case){t & 1, t & 2, n, x, y, pad, s[0], s[1]}, seed++);
            check_paths(&(Case){t & 1, t & 2, x, n, y, pad, s[0], s[1]}, seed++);
            check_paths(&(Case){t & 1, t & 2, x, y, n, pad, s[0], s[1]}, seed++);
        }
    /* several row blocks (96) and blocks of k (256); two threads by columns */
    for (int t = 0; t < 4; t++) {
        check_paths(&(Case){t & 1, t & 2, 200, 130, 600, 1, 1, t == 2 ? 0.5 : 0}, seed++);
        assert_int_equal(mf_parallel_set_threads(2), MF_OK);
        check_paths(&(Case){t & 1, t & 2, 40, 700, 300, 0, 1, 0}, seed++);
        assert_int_equal(mf_parallel_set_threads(1), MF_OK);
    }
    mf_gemm_set_kernel(MF_GEMM_AUTO);
    assert_true(mf_simd_set_level(level));
}

/* The own kernel's packing buffer refused: a clear out-of-memory error
 * naming the op, and C left as it was. */
static void test_own_kernel_out_of_memory(void **state)
{
    (void)state;
    Case c = {false, true, 50, 40, 30, 0, 1, 0};
    Operands o = operands(&c, 5);
    size_t bytes = sizeof(float) * (size_t)(c.M * o.ldc);
    float *C0 = malloc(bytes);
    assert_non_null(C0);
    memcpy(C0, o.C, bytes);
    MfGemm g = gemm_of(&c, &o);
    g.op = "MatMul";
    mf_gemm_set_kernel(MF_GEMM_OWN);
    mf_alloc_fail_at(1);
    assert_int_equal(mf_gemm(&g), MF_ENOMEM);
    mf_alloc_fail_at(0);
    mf_gemm_set_kernel(MF_GEMM_AUTO);
    assert_non_null(strstr(mf_err_msg(), "MatMul: out of memory"));
    assert_memory_equal(C0, o.C, bytes);
    free(C0);
    release(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_fresh_output_is_blas_beta_zero),
        TEST(test_own_kernel_small_shapes),
        TEST(test_own_kernel_large_shapes),
        TEST(test_own_kernel_empty_sum),
        TEST(test_own_kernel_split_is_bitwise),
        TEST(test_own_kernel_avx512_is_avx2_bitwise),
        TEST(test_own_kernel_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
