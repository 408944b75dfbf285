/* parallel.c — a small worker pool for mf_parallel_for (see parallel.h).
 *
 * One job at a time: the caller publishes (fn, ctx, n, chunks), bumps
 * 'generation' and broadcasts; worker w runs chunk w + 1 and counts itself
 * done; the caller runs chunk 0 and waits for the count.
 *
 * A training step is a chain of short parallel loops and GEMMs (tens of
 * microseconds each). Sleeping on a condition variable right after each
 * would make every loop pay a futex wake-up, which in a VM costs as much as
 * the loop, so both sides first spin briefly (SPIN_ROUNDS pauses, about
 * 100 us) and only then sleep. Since mf_gemm keeps OpenBLAS
 * single-threaded, nothing else of ours wants the other cores meanwhile. */
#include "parallel.h"

#include <cblas.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#define MAX_THREADS 16
#define SPIN_ROUNDS 4000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;
static int nworkers;                /* started so far (under 'lock') */
static _Atomic uint64_t generation; /* bumped per job, after 'job' is written */
static atomic_int pending;          /* worker chunks of the current job not yet done */
static bool running;                /* a job is in flight (nested calls run serially) */

static struct {
    MfParallelFn fn;
    void *ctx;
    int64_t n, chunk;
} job;
static atomic_int job_chunks; /* threads used by the job of the current generation */

static void run_chunk(int c)
{
    int64_t b = (int64_t)c * job.chunk, e = b + job.chunk < job.n ? b + job.chunk : job.n;
    if (b < e)
        job.fn(job.ctx, b, e);
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* The generation after 'seen': spins a while, then sleeps on 'wake'. */
static uint64_t next_job(uint64_t seen)
{
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        uint64_t g = atomic_load_explicit(&generation, memory_order_acquire);
        if (g != seen)
            return g;
        cpu_relax();
    }
    pthread_mutex_lock(&lock);
    while (atomic_load(&generation) == seen)
        pthread_cond_wait(&wake, &lock);
    pthread_mutex_unlock(&lock);
    return atomic_load(&generation);
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg; /* runs chunk id + 1 */
    uint64_t seen = 0;
    /* Ctrl-C belongs to the thread running Lua (the REPL's handler sets a
     * hook there), never to a worker. */
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (;;) {
        seen = next_job(seen);
        /* A job that does not need this worker does not wait for it either:
         * the next one may be published meanwhile, so 'chunks' only counts
         * when the generation is still the one just seen. */
        int chunks = atomic_load(&job_chunks);
        if (atomic_load(&generation) != seen || id + 1 >= chunks)
            continue; /* not needed for this job (or a newer one is out) */
        run_chunk(id + 1);
        if (atomic_fetch_sub(&pending, 1) == 1) {
            pthread_mutex_lock(&lock); /* the caller may be about to sleep */
            pthread_cond_signal(&finished);
            pthread_mutex_unlock(&lock);
        }
    }
    return NULL;
}

/* Starts workers up to 'want' (lock held); returns how many exist. */
static int ensure_workers(int want)
{
    while (nworkers < want) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &attr, worker, (void *)(intptr_t)nworkers);
        pthread_attr_destroy(&attr);
        if (rc != 0)
            break; /* run with what we have */
        nworkers++;
    }
    return nworkers;
}

int mf_parallel_threads(void)
{
    int t = openblas_get_num_threads();
    return t < 1 ? 1 : t > MAX_THREADS ? MAX_THREADS : t;
}

void mf_parallel_for(int64_t n, int64_t min_chunk, MfParallelFn fn, void *ctx)
{
    mf_parallel_for_threads(mf_parallel_threads(), n, min_chunk, fn, ctx);
}

void mf_parallel_for_threads(int threads, int64_t n, int64_t min_chunk, MfParallelFn fn,
                             void *ctx)
{
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (min_chunk < 1)
        min_chunk = 1;
    if (n / min_chunk < threads)
        threads = (int)(n / min_chunk);
    if (threads <= 1) { /* the common small case: no lock, no wake-up */
        if (n > 0)
            fn(ctx, 0, n);
        return;
    }
    pthread_mutex_lock(&lock);
    if (!running) {
        int have = ensure_workers(threads - 1);
        if (have + 1 < threads)
            threads = have + 1;
    }
    if (threads <= 1 || running) {
        pthread_mutex_unlock(&lock);
        if (n > 0)
            fn(ctx, 0, n);
        return;
    }
    running = true;
    job.fn = fn;
    job.ctx = ctx;
    job.n = n;
    atomic_store(&job_chunks, threads);
    job.chunk = (n + threads - 1) / threads;
    atomic_store(&pending, threads - 1);
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
    run_chunk(0);
    for (int i = 0; i < SPIN_ROUNDS && atomic_load_explicit(&pending, memory_order_acquire) > 0;
         i++)
        cpu_relax();
    pthread_mutex_lock(&lock);
    while (atomic_load(&pending) > 0)
        pthread_cond_wait(&finished, &lock);
    running = false;
    pthread_mutex_unlock(&lock);
}
