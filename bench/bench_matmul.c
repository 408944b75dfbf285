/* bench_matmul.c — a 1024^3 SGEMM through moonflow's dispatcher against
 * cblas_sgemm called directly on the same buffers. Prints the median of
 * several runs of each and the ratio, and which OpenBLAS kernels run. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/op.h"

#define N 1024
#define RUNS 9

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static MfTensor *random_matrix(void)
{
    int64_t shape[2] = {N, N};
    MfTensor *t = mf_tensor_new(MF_FLOAT32, 2, shape);
    float *p = mf_tensor_data(t);
    for (int64_t i = 0; i < (int64_t)N * N; i++)
        p[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    return t;
}

int main(void)
{
    MfTensor *a = random_matrix(), *b = random_matrix();
    int64_t shape[2] = {N, N};
    MfTensor *c = mf_tensor_new(MF_FLOAT32, 2, shape);
    double direct[RUNS], viamf[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t0 = now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f,
                    mf_tensor_data(a), N, mf_tensor_data(b), N, 0.0f, mf_tensor_data(c), N);
        direct[r] = now() - t0;
        MfTensor *out = NULL;
        t0 = now();
        if (mf_binary(MF_OP_MATMUL, a, b, &out) != MF_OK) {
            fprintf(stderr, "matmul failed: %s\n", mf_err_msg());
            return 1;
        }
        viamf[r] = now() - t0;
        mf_tensor_release(out);
    }
    double d = median(direct, RUNS), m = median(viamf, RUNS);
    double gflop = 2.0 * N * N * N * 1e-9;
    printf("matmul 1024^3 float32: cblas_sgemm %.2f ms (%.1f GFLOP/s), mf.matmul %.2f ms "
           "(%.1f GFLOP/s), mf/direct = %.3f\n",
           d * 1e3, gflop / d, m * 1e3, gflop / m, m / d);
    printf("OpenBLAS core: %s, threads: %d, OPENBLAS_CORETYPE=%s\n", openblas_get_corename(),
           openblas_get_num_threads(), getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE")
                                                                   : "(unset)");
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(c);
    return 0;
}
