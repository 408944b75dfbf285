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
 *   peercopy    the other process writes 814 kB into an MPI-3 shared
 *               window, a barrier, and this one copies it out (memcpy): the
 *               copy in and the core-to-core copy, no MPI protocol; 'shmar' a hand-written allreduce over that window
 *               (copy in, each process sums its 1/p of the elements over
 *               every process's copy, then copies the others' sums): what
 *               an allreduce could cost here without Open MPI's protocol.
 * Prints "probe NAME SIZE MEDIAN_US MIN_US" lines from rank 0. */
#include <cblas.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { IN = 784, B = 64, OUT = 256, REPS = 201, MAXC = 16 };

static float *x, *dh, *dw, *red, *other;
static int rank, size;
static float *win_base[64];   /* each process's shared window (peer pointers) */
static MPI_Win win;

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

/* The others' window with MPI_Win_shared_query; false when unavailable. */
static int shared_window(size_t n)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nsize;
    MPI_Comm_size(node, &nsize);
    if (nsize != size || size > 64)
        return 0;
    float *mine;
    if (MPI_Win_allocate_shared((MPI_Aint)(n * sizeof(float)), sizeof(float), MPI_INFO_NULL, node,
                                &mine, &win) != MPI_SUCCESS)
        return 0;
    for (int r = 0; r < size; r++) {
        MPI_Aint bytes;
        int unit;
        MPI_Win_shared_query(win, r, &bytes, &unit, &win_base[r]);
    }
    memset(mine, 0, n * sizeof(float));
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    return 1;
}

/* Writes, then a barrier that makes them visible to the others. */
static void fence(void)
{
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
}

static void shm_allreduce(const float *in, float *out, size_t n)
{
    memcpy(win_base[rank], in, n * sizeof *in);
    fence();
    size_t per = (n + (size_t)size - 1) / (size_t)size;
    size_t lo = per * (size_t)rank, hi = lo + per < n ? lo + per : n;
    float *acc = out;
    for (size_t i = lo; i < hi; i++)
        acc[i] = win_base[0][i];
    for (int r = 1; r < size; r++)
        for (size_t i = lo; i < hi; i++)
            acc[i] += win_base[r][i];
    fence();
    memcpy(win_base[rank] + lo, acc + lo, (hi - lo) * sizeof *acc);   /* publish my sums */
    fence();
    for (int r = 0; r < size; r++) {
        size_t a = per * (size_t)r, b = a + per < n ? a + per : n;
        if (r != rank)
            memcpy(out + a, win_base[r] + a, (b - a) * sizeof *out);
    }
    fence();   /* nobody overwrites a window before everyone has read it */
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
        if (shared_window(n)) {
            /* the owner rewrites its window first: the copy reads the other core's cache */
            TIME("peercopy", memcpy(win_base[rank], other, n * sizeof *red); fence();
                 memcpy(red, win_base[(rank + 1) % size], n * sizeof *red));
            TIME("shmar", shm_allreduce(dw, red, n));
            MPI_Win_unlock_all(win);
            MPI_Win_free(&win);
        }
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
