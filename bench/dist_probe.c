/* dist_probe.c — what this machine and Open MPI allow for the MLP step's
 * allreduce, measured without moonflow (bench/dist.sh builds it with mpicc
 * when it is installed and runs it with 1 and 2 processes, one core each).
 *
 * The MLP (784-256-10, batch 64) reduces 814 kB of float32 gradients, 803 kB
 * of them the first layer's dW1 = x^T dh (784x64 by 64x256), which the
 * backward pass computes last. Timed, each a median over REPS repetitions
 * started together (a barrier before each), in microseconds:
 *   gemm        dW1 alone (one thread: OPENBLAS_NUM_THREADS=1)
 *   copy, add   the local work any 2-process allreduce of 814 kB implies at
 *               least: a copy (memcpy) and a sum (a += b) of 814 kB
 *   allreduce   MPI_Allreduce of 814 kB (sum, separate buffers)
 *   iallreduce  MPI_Iallreduce + MPI_Wait of 814 kB
 *   gemm+ar     dW1, then its allreduce (what the step does today)
 *   chunks C    dW1 computed in C blocks of rows, each block's
 *               MPI_Iallreduce started as soon as the block is computed and
 *               MPI_Test between blocks, all waited for at the end: does
 *               pipelining the allreduce inside the GEMM hide anything?
 * Prints "probe NAME SIZE MEDIAN_US MIN_US" lines from rank 0. */
#include <cblas.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { IN = 784, B = 64, OUT = 256, REPS = 201, MAXC = 16 };

static float *x, *dh, *dw, *red, *other;
static int rank, size;

static int cmp(const void *a, const void *b)
{
    double d = *(const double *)a - *(const double *)b;
    return (d > 0) - (d < 0);
}

static void report(const char *name, double *t)
{
    qsort(t, REPS, sizeof *t, cmp);
    if (rank == 0)
        printf("probe %s %d %.1f %.1f\n", name, size, t[REPS / 2] * 1e6, t[0] * 1e6);
}

/* Rows [r0, r1) of dW1 = x^T dh: x is (B, IN), dh (B, OUT), dw (IN, OUT). */
static void gemm_rows(int r0, int r1)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r1 - r0, OUT, B, 1.0f, x + r0, IN, dh,
                OUT, 0.0f, dw + (size_t)r0 * OUT, OUT);
}

static void chunked(int c)
{
    MPI_Request req[MAXC];
    int rows = (IN + c - 1) / c;
    for (int k = 0; k < c; k++) {
        int r0 = k * rows, r1 = r0 + rows < IN ? r0 + rows : IN;
        gemm_rows(r0, r1);
        MPI_Iallreduce(dw + (size_t)r0 * OUT, red + (size_t)r0 * OUT, (r1 - r0) * OUT, MPI_FLOAT,
                       MPI_SUM, MPI_COMM_WORLD, &req[k]);
        int flag;
        MPI_Testall(k + 1, req, &flag, MPI_STATUSES_IGNORE);
    }
    MPI_Waitall(c, req, MPI_STATUSES_IGNORE);
}

/* Runs 'what' REPS times (after 20 warm-up runs) and reports it. */
#define TIME(name, what)                                        \
    do {                                                        \
        double t[REPS];                                         \
        for (int r = -20; r < REPS; r++) {                      \
            MPI_Barrier(MPI_COMM_WORLD);                        \
            double t0 = MPI_Wtime();                            \
            what;                                               \
            if (r >= 0)                                         \
                t[r] = MPI_Wtime() - t0;                        \
        }                                                       \
        report(name, t);                                        \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t n = (size_t)IN * OUT;
    x = malloc(sizeof *x * IN * B);
    dh = malloc(sizeof *dh * B * OUT);
    dw = malloc(sizeof *dw * n);
    red = malloc(sizeof *red * n);
    other = malloc(sizeof *other * n);
    if (!x || !dh || !dw || !red || !other)
        return 1;
    for (size_t i = 0; i < (size_t)IN * B; i++)
        x[i] = (float)((i * 7 + (size_t)rank) % 13) / 13.0f;
    for (size_t i = 0; i < (size_t)B * OUT; i++)
        dh[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    for (size_t i = 0; i < n; i++)
        other[i] = (float)i;
    MPI_Request rq;
    TIME("gemm", gemm_rows(0, IN));
    TIME("copy", memcpy(red, other, n * sizeof *red));
    TIME("add", for (size_t i = 0; i < n; i++) red[i] += other[i]);
    if (size > 1) {
        TIME("allreduce", MPI_Allreduce(dw, red, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
        TIME("iallreduce", MPI_Iallreduce(dw, red, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                          &rq);
             MPI_Wait(&rq, MPI_STATUS_IGNORE));
        TIME("gemm+ar", gemm_rows(0, IN);
             MPI_Allreduce(dw, red, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
        const int cs[] = {2, 4, 8, 16};
        for (int k = 0; k < 4; k++) {
            char name[32];
            snprintf(name, sizeof name, "chunks%d", cs[k]);
            TIME(name, chunked(cs[k]));
        }
    }
    free(x);
    free(dh);
    free(dw);
    free(red);
    free(other);
    MPI_Finalize();
    return 0;
}
