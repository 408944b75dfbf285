/* attention_tiles.c — where the attention op's time goes at the char-GPT's
 * shape (issue 28): q, k, v (12 * 4, 64, 32) float32, causal, one thread.
 * Prints the op's forward and its gradient op per call (medians of CPU
 * time: one thread, on a shared machine), and the
 * GEMMs they make, each timed alone on the same tile shapes: by
 * cblas_sgemm (as mf_attn_gemm called it before attention_tile.c: a memset
 * for beta = 0), by the tile kernel on the whole tile, and on a causal
 * diagonal tile's band; with GFLOP/s of the whole tile. The op's own loops
 * (mask, exp, row sums, dS) are the rest. Run:
 *   make build/release/bench/attention_tiles
 *   MOONFLOW_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 build/release/bench/attention_tiles
 * ("op": 2000 forward and backward calls alone, for perf record). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/grad.h"
#include "core/op.h"
#include "core/ops/attention.h"
#include "core/parallel.h"

#define HEADS 48
#define T 64
#define D 32
#define RUNS 15
#define REPS 200

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: the machine is shared */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median over RUNS of the mean time of 'reps' calls of f, in seconds
 * (the minimum with 'best': tiles of a few microseconds, on a busy machine). */
static double time_of(void (*f)(void *), void *ctx, int reps, bool best)
{
    double t[RUNS];
    f(ctx);
    for (int r = 0; r < RUNS; r++) {
        double t0 = now();
        for (int i = 0; i < reps; i++)
            f(ctx);
        t[r] = (now() - t0) / reps;
    }
    qsort(t, RUNS, sizeof *t, cmp);
    return t[best ? 0 : RUNS / 2];
}

static MfTensor *filled(double k)
{
    int64_t shape[3] = {HEADS, T, D};
    MfTensor *t = mf_tensor_new(MF_FLOAT32, 3, shape);
    float *p = mf_tensor_data(t);
    for (int64_t i = 0; i < mf_tensor_numel(t); i++)
        p[i] = (float)(((i * 37 + 11) % 101) / 101.0 - 0.5) * (float)k;
    return t;
}

typedef struct Gemm {
    const char *what;
    bool ta, tb;
    int m, n, k;
    double beta;
    AttnBandKind band;   /* the causal band of a diagonal tile (i0 = j0) */
    int way;             /* 0: cblas_sgemm, 1: mf_attn_gemm full, 2: with the band */
    float a[128 * 128], b[128 * 128], c[128 * 128];
} Gemm;

/* As mf_attn_gemm called BLAS: a memset for beta = 0. */
static void run_gemm(void *ctx)
{
    Gemm *g = ctx;
    int lda = g->ta ? g->m : g->k, ldb = g->tb ? g->k : g->n;
    if (g->way > 0) {
        AttnBand band = {g->way == 2 ? g->band : ATTN_BAND_FULL, 0};
        mf_attn_gemm(MF_FLOAT32, g->ta, g->tb, g->m, g->n, g->k, 0.5, g->a, lda, g->b, ldb,
                     g->beta, g->c, g->n, band);
        return;
    }
    if (g->beta == 0)
        memset(g->c, 0, sizeof(float) * (size_t)(g->m * g->n));
    cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans,
                g->tb ? CblasTrans : CblasNoTrans, g->m, g->n, g->k, 0.5f, g->a, lda, g->b,
                ldb, 1, g->c, g->n);
}

typedef struct OpRun {
    MfTensor *in[3], *outs[MF_MAX_OUTPUTS], *dy[MF_MAX_OUTPUTS];
    MfAttrs a;
    int nout;
} OpRun;

static void release_all(MfTensor **t, int n)
{
    for (int i = 0; i < n; i++) {
        mf_tensor_release(t[i]);
        t[i] = NULL;
    }
}

static void run_forward(void *ctx)
{
    OpRun *o = ctx;
    MfTensor *outs[MF_MAX_OUTPUTS] = {NULL};
    int n = 0;
    if (mf_op_call(MF_OP_ATTENTION, 3, o->in, &o->a, outs, &n) != MF_OK)
        abort();
    release_all(outs, MF_MAX_OUTPUTS);
}

static void run_backward(void *ctx)
{
    OpRun *o = ctx;
    MfOpCall call = {.op = MF_OP_ATTENTION, .ninputs = 3, .inputs = o->in, .attrs = &o->a,
                     .noutputs = o->nout};
    MfGradCall g = {.call = &call, .outputs = o->outs, .doutputs = o->dy};
    MfTensor *d[MF_MAX_OUTPUTS] = {NULL};
    if (mf_grad_call(&g, d) != MF_OK)
        abort();
    release_all(d, MF_MAX_OUTPUTS);
}

int main(int argc, char **argv)
{
    mf_parallel_set_threads(1);
    OpRun o = {.in = {filled(1), filled(2), filled(1)}, .a = mf_attrs_default()};
    o.a.causal = true;
    o.dy[0] = filled(1.5);
    if (mf_op_call(MF_OP_ATTENTION, 3, o.in, &o.a, o.outs, &o.nout) != MF_OK)
        return 1;
    if (argc > 1 && strcmp(argv[1], "op") == 0) {   /* the op alone, for perf record */
        for (int i = 0; i < 2000; i++) {
            run_forward(&o);
            run_backward(&o);
        }
        return 0;
    }
    double fwd = time_of(run_forward, &o, REPS / 10, false);
    double bwd = time_of(run_backward, &o, REPS / 10, false);
    printf("(%d, %d, %d) causal float32, 1 thread, median of %d\n", HEADS, T, D, RUNS);
    printf("%-44s %9.1f us\n", "forward op (all heads)", fwd * 1e6);
    printf("%-44s %9.1f us\n", "gradient op (all heads)", bwd * 1e6);
    /* The tiles each (batch, head) makes at T = 64: one 64 x 64 tile. */
    static Gemm g[] = {
        {.what = "fwd  S = q k^T       NT 64x64x32",
         .ta = false, .tb = true, .m = T, .n = T, .k = D, .beta = 0, .band = ATTN_BAND_COLS},
        {.what = "fwd  o += P v        NN 64x32x64",
         .ta = false, .tb = false, .m = T, .n = D, .k = T, .beta = 1, .band = ATTN_BAND_KEND},
        {.what = "bwd  dP = dout v^T   NT 64x64x32",
         .ta = false, .tb = true, .m = T, .n = T, .k = D, .beta = 0, .band = ATTN_BAND_COLS},
        {.what = "bwd  dv += P^T dout  TN 64x32x64",
         .ta = true, .tb = false, .m = T, .n = D, .k = T, .beta = 1, .band = ATTN_BAND_KSTART},
        {.what = "bwd  dq += dS k      NN 64x32x64",
         .ta = false, .tb = false, .m = T, .n = D, .k = T, .beta = 1, .band = ATTN_BAND_KEND},
    };
    /* how many of each per head: forward S, P v; backward S, dP, dv, dk (as dv), dq */
    static const int fwd_uses[] = {1, 1, 0, 0, 0}, bwd_uses[] = {1, 0, 1, 2, 1};
    static const char *ways[] = {"cblas_sgemm", "tile kernel", "tile, causal"};
    printf("per call, us, best (GFLOP/s, full tile)   %-18s %-18s %-18s\n", ways[0], ways[1],
           ways[2]);
    double per_fwd[3] = {0}, per_bwd[3] = {0};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        for (int e = 0; e < 128 * 128; e++)
            g[i].a[e] = g[i].b[e] = (float)((e * 37 % 101) / 101.0 - 0.5);
        printf("%-42s", g[i].what);
        for (int w = 0; w < 3; w++) {
            g[i].way = w;
            double t = time_of(run_gemm, &g[i], REPS, true);
            printf(" %7.2f (%5.1f)    ", t * 1e6, 2.0 * g[i].m * g[i].n * g[i].k / t * 1e-9);
            per_fwd[w] += fwd_uses[i] * t;
            per_bwd[w] += bwd_uses[i] * t;
        }
        printf("\n");
    }
    for (int w = 0; w < 3; w++)
        printf("GEMMs x %d heads, %-14s forward %7.1f us (%3.0f%% of the op), backward %7.1f "
               "us (%3.0f%%)\n", HEADS, ways[w], per_fwd[w] * HEADS * 1e6,
               100 * per_fwd[w] * HEADS / fwd, per_bwd[w] * HEADS * 1e6,
               100 * per_bwd[w] * HEADS / bwd);
    release_all(o.outs, MF_MAX_OUTPUTS);
    release_all(o.dy, MF_MAX_OUTPUTS);
    release_all(o.in, 3);
    return 0;
}
