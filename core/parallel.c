/* parallel.c — a small worker pool for mf_parallel_for (see parallel.h).
 *
 * One job at a time: the caller publishes (fn, ctx, n, chunks) under the
 * mutex, bumps 'generation' and broadcasts; worker w runs chunk w + 1 and
 * counts itself done; the caller runs chunk 0 and waits for the count.
 * Workers sleep on 'wake' between jobs. */
#include "parallel.h"

#include <cblas.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

#define MAX_THREADS 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;
static int nworkers;            /* started so far */
static uint64_t generation;     /* bumped per job */
static int pending;             /* worker chunks of the current job not yet done */
static bool running;            /* a job is in flight (nested calls run serially) */

static struct {
    MfParallelFn fn;
    void *ctx;
    int64_t n, chunk;
    int chunks;
} job;

static void run_chunk(int c)
{
    int64_t b = (int64_t)c * job.chunk, e = b + job.chunk < job.n ? b + job.chunk : job.n;
    if (b < e)
        job.fn(job.ctx, b, e);
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
    pthread_mutex_lock(&lock);
    for (;;) {
        while (generation == seen)
            pthread_cond_wait(&wake, &lock);
        seen = generation;
        if (id + 1 >= job.chunks)
            continue; /* not needed for this job */
        pthread_mutex_unlock(&lock);
        run_chunk(id + 1);
        pthread_mutex_lock(&lock);
        if (--pending == 0)
            pthread_cond_signal(&finished);
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
    int threads = mf_parallel_threads();
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
    job.chunks = threads;
    job.chunk = (n + threads - 1) / threads;
    pending = threads - 1;
    generation++;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
    run_chunk(0);
    pthread_mutex_lock(&lock);
    while (pending > 0)
        pthread_cond_wait(&finished, &lock);
    running = false;
    pthread_mutex_unlock(&lock);
}
