/* test_gemm.c — mf_gemm's beta = 0 (a fresh output): core/gemm.c zeroes C
 * itself (memset) and lets BLAS add with beta = 1. The result must be
 * OpenBLAS's own beta = 0 result bit for bit on one thread, whatever C held
 * before (NaN, Inf); split over two threads (by rows, or by columns: a
 * column share is a block of C with ldc > its width) every share is zeroed
 * (the split itself is not bitwise: each share is its own BLAS call, see
 * test_parallel.c); the columns of C outside the block (ldc > N) are left as
 * they were. */
#include <cblas.h>
#include <stdlib.h>

#include "testutil.h"

#include "core/gemm.h"
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
    MfGemm g = {.op = "test", .dtype = MF_FLOAT32, .trans_a = ta, .trans_b = tb, .M = M, .N = N,
                .K = K, .alpha = 1.0, .beta = 0.0, .A = A, .lda = ta ? M : K, .B = B,
                .ldb = tb ? K : N, .C = C, .ldc = ldc};
    assert_int_equal(mf_gemm(&g), MF_OK);
    assert_int_equal(mf_parallel_set_threads(1), MF_OK);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_fresh_output_is_blas_beta_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
