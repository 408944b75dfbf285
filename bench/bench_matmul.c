/* bench_matmul.c — a 1024^3 SGEMM through moonflow's dispatcher against
 * cblas_sgemm called directly on the same buffers. Prints the median of
 * several runs of each and the ratio, and which OpenBLAS kernels run.
 * Then the float32 GEMMs of one char-GPT training step (bench/char_gpt.lua)
 * through mf_gemm, with the own kernel (core/gemm_f32.c; on a CPU with
 * AVX-512 also with its AVX2 tiles, MF_SIMD=avx2) and with OpenBLAS
 * (MF_GEMM_BLAS: memset, then cblas_sgemm with beta = 1), alternating in
 * rounds so all see the same load, each going first (on the colder
 * operands) in turn: medians per shape and of the step's sum (each
 * product on its own buffers, as in the step). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/gemm.h"
#include "core/op.h"
#include "core/ops/vecmath.h"
#include "core/parallel.h"

#define SIZE 1024
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
    int64_t shape[2] = {SIZE, SIZE};
    MfTensor *t = mf_tensor_new(MF_FLOAT32, 2, shape);
    float *p = mf_tensor_data(t);
    for (int64_t i = 0; i < (int64_t)SIZE * SIZE; i++)
        p[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    return t;
}

/* One GEMM of the step: op(A) is m x k, op(B) k x n; 'count' of them. */
typedef struct Shape {
    bool ta, tb;
    int m, n, k, count;
} Shape;

/* The char-GPT step's products (B*T = 768 rows, C = 128, 4 layers, vocab
 * 65): forward x W^T (NT), then dX = dY W (NN) and dW = dY^T X (TN). */
static const Shape step_shapes[] = {
    {false, true, 768, 384, 128, 4},  {false, true, 768, 128, 128, 4},
    {false, true, 768, 512, 128, 4},  {false, true, 768, 128, 512, 4},
    {false, true, 768, 65, 128, 1},   {false, false, 768, 128, 65, 1},
    {true, false, 65, 128, 768, 1},   {false, false, 768, 512, 128, 4},
    {true, false, 128, 512, 768, 4},  {false, false, 768, 128, 512, 4},
    {true, false, 512, 128, 768, 4},  {false, false, 768, 128, 128, 4},
    {true, false, 128, 128, 768, 4},  {false, false, 768, 128, 384, 4},
    {true, false, 384, 128, 768, 4},
};
#define NSHAPES (int)(sizeof step_shapes / sizeof *step_shapes)
#define STEP_ROUNDS 16

static float *random_floats(int64_t n)
{
    float *p = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; p && i < n; i++)
        p[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    return p;
}

/* The kernels compared: the own kernel at the best instruction set, its
 * AVX2 tiles, OpenBLAS. */
enum { OWN, OWN_AVX2, BLAS, NVARIANTS };

/* Seconds for the 'count' products of shape 's' through variant 'v'. */
static double time_shape(const Shape *s, float **a, float **b, float **c, int v, MfSimd best)
{
    mf_gemm_set_kernel(v == BLAS ? MF_GEMM_BLAS : MF_GEMM_OWN);
    mf_simd_set_level(v == OWN_AVX2 ? MF_SIMD_AVX2 : best);
    double t0 = now();
    for (int i = 0; i < s->count; i++) {
        MfGemm g = {.op = "bench", .dtype = MF_FLOAT32, .trans_a = s->ta, .trans_b = s->tb,
                    .M = s->m, .N = s->n, .K = s->k, .alpha = 1, .beta = 0, .A = a[i],
                    .lda = s->ta ? s->m : s->k, .B = b[i], .ldb = s->tb ? s->k : s->n,
                    .C = c[i], .ldc = s->n};
        if (mf_gemm(&g) != MF_OK) {
            fprintf(stderr, "mf_gemm failed: %s\n", mf_err_msg());
            exit(1);
        }
    }
    return now() - t0;
}

static void step_gemms(void)
{
    static float *a[NSHAPES][4], *b[NSHAPES][4], *c[NSHAPES][4];
    static double t[NVARIANTS][NSHAPES][STEP_ROUNDS];
    double sum[NVARIANTS][STEP_ROUNDS] = {{0}};
    MfSimd best = mf_simd_level();
    /* the AVX2 tiles apart only when the CPU has more */
    int nv = best == MF_SIMD_AVX512 ? NVARIANTS : 2, order[NVARIANTS] = {OWN, BLAS, OWN_AVX2};
    for (int s = 0; s < NSHAPES; s++)
        for (int i = 0; i < step_shapes[s].count; i++) {
            const Shape *sh = &step_shapes[s];
            a[s][i] = random_floats((int64_t)sh->m * sh->k);
            b[s][i] = random_floats((int64_t)sh->k * sh->n);
            c[s][i] = random_floats((int64_t)sh->m * sh->n);
        }
    for (int r = 0; r < STEP_ROUNDS; r++)
        for (int s = 0; s < NSHAPES; s++)
            /* the first finds colder operands: each goes first in turn */
            for (int i = 0; i < nv; i++) {
                int v = order[(r + i) % nv];
                t[v][s][r] = time_shape(&step_shapes[s], a[s], b[s], c[s], v, best);
                sum[v][r] += t[v][s][r];
            }
    mf_gemm_set_kernel(MF_GEMM_AUTO);
    mf_simd_set_level(best);
    printf("char-GPT step GEMMs (ms per product, median of %d rounds; threads %d; own: %s):\n",
           STEP_ROUNDS, mf_parallel_threads(), mf_simd_name(best));
    for (int s = 0; s < NSHAPES; s++) {
        const Shape *sh = &step_shapes[s];
        double o = median(t[OWN][s], STEP_ROUNDS) / sh->count,
               bl = median(t[BLAS][s], STEP_ROUNDS) / sh->count,
               gflop = 2e-9 * sh->m * sh->n * sh->k;
        printf("  %c%c M=%3d N=%3d K=%3d x%d: own %.3f ms (%.1f GFLOP/s), OpenBLAS %.3f ms "
               "(%.1f GFLOP/s), own/blas = %.3f",
               sh->ta ? 'T' : 'N', sh->tb ? 'T' : 'N', sh->m, sh->n, sh->k, sh->count, o * 1e3,
               gflop / o, bl * 1e3, gflop / bl, o / bl);
        if (nv == NVARIANTS) {
            double o2 = median(t[OWN_AVX2][s], STEP_ROUNDS) / sh->count;
            printf("; own avx2 %.3f ms, own/avx2 = %.3f", o2 * 1e3, o / o2);
        }
        printf("\n");
    }
    double o = median(sum[OWN], STEP_ROUNDS), bl = median(sum[BLAS], STEP_ROUNDS);
    printf("  step sum: own %.2f ms, OpenBLAS %.2f ms, own/blas = %.3f", o * 1e3, bl * 1e3,
           o / bl);
    if (nv == NVARIANTS)
        printf("; own avx2 %.2f ms", median(sum[OWN_AVX2], STEP_ROUNDS) * 1e3);
    printf("\n");
}

int main(void)
{
    MfTensor *a = random_matrix(), *b = random_matrix();
    int64_t shape[2] = {SIZE, SIZE};
    MfTensor *c = mf_tensor_new(MF_FLOAT32, 2, shape);
    double direct[RUNS], viamf[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t0 = now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, SIZE, SIZE, SIZE, 1.0f,
                    mf_tensor_data(a), SIZE, mf_tensor_data(b), SIZE, 0.0f, mf_tensor_data(c), SIZE);
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
    double gflop = 2.0 * SIZE * SIZE * SIZE * 1e-9;
    printf("matmul 1024^3 float32: cblas_sgemm %.2f ms (%.1f GFLOP/s), mf.matmul %.2f ms "
           "(%.1f GFLOP/s), mf/direct = %.3f\n",
           d * 1e3, gflop / d, m * 1e3, gflop / m, m / d);
    printf("OpenBLAS core: %s, threads: %d, OPENBLAS_CORETYPE=%s\n", openblas_get_corename(),
           openblas_get_num_threads(), getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE")
                                                                   : "(unset)");
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(c);
    step_gemms();
    return 0;
}
