/* parallel.c — a small worker pool for mf_parallel_for (see parallel.h).
 *
 * One job at a time: the caller publishes (fn, ctx, n, chunk), then the
 * claim word (chunk count << 32 | a bit per chunk taken), bumps
 * 'generation' and broadcasts. Chunk k is worker k's and chunk 0 the
 * caller's: a worker runs its own chunk if it is still free, the caller
 * runs its own and then any chunk left, and each counts its chunk done;
 * the caller then waits for the count. A worker that has not reached a
 * core by the time the caller is free finds its chunk taken: the job never
 * waits for a thread that is not running (on a busy or oversubscribed
 * machine a worker may sit behind the caller on the caller's own core).
 *
 * Fixed owners because then, with the workers on time, each thread gets
 * the same part of the range in every job, and a chain of ops over the same
 * tensors finds its part in its core's cache. When every thread took the
 * next free chunk, a spinning worker often took chunk 0 before the caller,
 * the halves of a 2-thread job swapped cores and each was fetched from the
 * other core's cache: on 2 threads and 131k floats an abs took 12.7 us
 * instead of 7.2, an add 11.4 instead of 9.3, an exp 20.2 instead of 17.4
 * (Intel Xeon, Ice Lake, 2-vCPU KVM guest).
 *
 * A training step is a chain of short parallel loops and GEMMs (tens of
 * microseconds each). Sleeping on a condition variable right after each
 * would make every loop pay a futex wake-up (16-30 us measured in this KVM
 * guest, against 0.3 us for a spinning worker), so both sides first spin
 * briefly (SPIN_ROUNDS pauses, about 100 us), yielding now and then in case
 * the other side waits for this core, and only then sleep.
 *
 * The workers are kept off the cpu the caller runs on (keep_workers_off). */
#define _GNU_SOURCE /* sched_getcpu, cpu_set_t, pthread_setaffinity_np */
#include "parallel.h"

#include "alloc.h"

#include <cblas.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>

#define MAX_THREADS 16
#define SPIN_ROUNDS 4000
#define YIELD_EVERY 64 /* pauses between two sched_yield calls while spinning */
/* Jobs between two reads of the caller's allowed cpus while it stays on one
 * cpu (a read is a system call, ~0.6 us in this KVM guest). */
#define AFFINITY_EVERY 256

/* OpenBLAS's thread shutdown, the one its own fork handler calls: weak, so a
 * build of OpenBLAS without it (serial) leaves it null. */
extern int blas_thread_shutdown_(void) __attribute__((weak));

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;
static int nworkers;                /* started so far (under 'lock') */
static pthread_t workers[MAX_THREADS - 1];
static _Atomic uint64_t generation; /* bumped per job, after the job is written */
static _Atomic uint64_t claims;     /* chunks << 32 | a bit per chunk taken */
static atomic_int pending;          /* chunks of the current job not yet done */
static atomic_int job_threads;      /* threads that ran a chunk of the current job */
static bool running;                /* a job is in flight (nested calls run serially) */
static int last_threads = 1;
static atomic_bool one_chunk_each;

static struct {
    MfParallelFn fn;
    void *ctx;
    int64_t n, chunk;
    uint64_t id; /* its generation, for job_threads' count */
} job;

/* The last job this thread counted itself in (job_threads): the caller
 * may run several chunks of a job. */
static _Thread_local uint64_t counted_job;

/* The chunk this thread owns in every job: 0 for the caller, k for worker k. */
static _Thread_local uint32_t own_chunk;

/* True while this thread runs a chunk: a call from inside it (an
 * elementwise piece whose kernel splits again, elementwise_split.c) runs
 * inline at once. It would find 'running' set anyway, but only under the
 * mutex, which both threads of a 2-thread job then take within a
 * microsecond of each other; a contended glibc mutex sleeps in futex. */
static _Thread_local bool in_chunk;

/* Where the workers may run (under 'lock'): the caller's cpu they were kept
 * off (-1: not yet), the set they were given, jobs since it was checked. */
static int kept_off = -1;
static cpu_set_t workers_set;
static unsigned placed_jobs;

static pthread_once_t settled = PTHREAD_ONCE_INIT;
static int thread_count = 1; /* the setting (mf.set_num_threads) */

static void cpu_relax(int round)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (round % YIELD_EVERY == YIELD_EVERY - 1)
        sched_yield(); /* the other side may be waiting behind us on this core */
}

/* OpenBLAS single-threaded, its spinning threads joined (they come back at the
 * next threaded call or openblas_set_num_threads). */
static void stop_blas_threads(void)
{
    openblas_set_num_threads(1);
    if (blas_thread_shutdown_)
        blas_thread_shutdown_();
}

/* Takes the thread count from OpenBLAS (its environment variables) once. */
static void settle(void)
{
    int t = openblas_get_num_threads();
    thread_count = t < 1 ? 1 : t;
    stop_blas_threads();
}

int mf_parallel_threads(void)
{
    pthread_once(&settled, settle);
    return thread_count > MAX_THREADS ? MAX_THREADS : thread_count;
}

MfStatus mf_parallel_set_threads(int64_t threads)
{
    if (threads < 1 || threads > 4096)
        return mf_err_set(MF_EARG, "set_num_threads: expected an integer from 1 to 4096, "
                          "got %lld", (long long)threads);
    pthread_once(&settled, settle);
    thread_count = (int)threads;
    return MF_OK;
}

int mf_parallel_last_threads(void)
{
    return last_threads;
}

void mf_parallel_set_one_chunk_each(bool on)
{
    atomic_store(&one_chunk_each, on);
}

void mf_parallel_blas_threads(bool on)
{
    pthread_once(&settled, settle);
    if (!on)
        stop_blas_threads();
    else if (mf_parallel_blas_buffers("BLAS threads", thread_count) == MF_OK)
        openblas_set_num_threads(thread_count);
    else
        mf_err_clear(); /* the call runs on one thread, in the caller's buffer */
}

/* ---- OpenBLAS's work buffers ---------------------------------------------------------
 * OpenBLAS 0.3.21 as Debian 12 builds it (driver/others/memory.c without
 * USE_TLS) gives every level-3 call, on whichever thread, a work buffer
 * (BUFFER_SIZE, 128 MiB of address space) from one table of slots: a slot is
 * mapped on its first use and kept, marked free, after the call; each of its
 * own threads holds one for its life. When the mapping fails,
 * blas_memory_alloc retries for ever: the first GEMM of a process whose
 * memory was used up (ulimit -v, strict overcommit) spun there, deaf to
 * Ctrl-C, as did a GEMM split over two threads when only one slot was
 * mapped. So the slots that may be in use at once are mapped ahead, while
 * memory is there: at start-up (main.c) for the thread count, and again
 * before a call that could use more. A trial mapping of their size, unmapped
 * at once, comes first: when it fails the call is refused as out of memory
 * (a collection may then free enough), and OpenBLAS is never asked to map
 * what it could not. Weak symbols: another BLAS leaves them null, and
 * nothing is reserved. */
extern void *blas_memory_alloc(int procpos) __attribute__((weak));
extern void blas_memory_free(void *buffer) __attribute__((weak));

#define BLAS_BUFFER_BYTES (((size_t)128 << 20) + ((size_t)64 << 10)) /* BUFFER_SIZE + slack */
#define BLAS_MAX_SLOTS 64                                            /* OpenBLAS's MAX_THREADS */

static pthread_mutex_t reserve_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int reserved_slots; /* slots known to be mapped */

/* Maps OpenBLAS's slots up to 'n' (reserve_lock held): takes 'n' buffers at
 * once, so each is a slot of its own, and gives them back. */
static MfStatus reserve_slots(const char *op, int n)
{
    size_t bytes = (size_t)(n - atomic_load(&reserved_slots)) * BLAS_BUFFER_BYTES;
    void *trial = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (trial == MAP_FAILED)
        return mf_err_set(MF_ENOMEM, "%s: out of memory for OpenBLAS's work buffers (%d "
                          "thread%s, 128 MiB of address space each)", op, n, n == 1 ? "" : "s");
    munmap(trial, bytes);
    void *held[BLAS_MAX_SLOTS];
    for (int i = 0; i < n; i++)
        held[i] = blas_memory_alloc(0);
    for (int i = n; i-- > 0;)
        blas_memory_free(held[i]);
    atomic_store(&reserved_slots, n);
    return MF_OK;
}

MfStatus mf_parallel_blas_buffers(const char *op, int calls)
{
    if (calls > BLAS_MAX_SLOTS)
        calls = BLAS_MAX_SLOTS;
    if (calls <= atomic_load_explicit(&reserved_slots, memory_order_acquire) ||
        !blas_memory_alloc || !blas_memory_free)
        return MF_OK;
    pthread_mutex_lock(&reserve_lock);
    MfStatus st = calls <= atomic_load(&reserved_slots) ? MF_OK : reserve_slots(op, calls);
    pthread_mutex_unlock(&reserve_lock);
    return st;
}

MfStatus mf_parallel_reserve_blas(void)
{
    pthread_once(&settled, settle);
    return mf_parallel_blas_buffers("start-up", thread_count);
}

/* Claims chunk 'want' of the current job, or the first free one when
 * 'want' is negative; false when it is taken (or none is left). */
static bool claim_chunk(int want, uint32_t *chunk)
{
    uint64_t c = atomic_load_explicit(&claims, memory_order_acquire);
    for (;;) {
        uint32_t chunks = (uint32_t)(c >> 32), taken = (uint32_t)c;
        uint32_t free = (uint32_t)(((uint64_t)1 << chunks) - 1) & ~taken;
        if (want >= 0)
            free &= (uint32_t)1 << want;
        if (!free)
            return false;
        *chunk = (uint32_t)__builtin_ctz(free);
        if (atomic_compare_exchange_weak_explicit(&claims, &c, c | (uint64_t)1 << *chunk,
                                                  memory_order_acq_rel, memory_order_acquire))
            return true;
    }
}

/* Runs chunk 'chunk' of the current job, claimed by this thread. */
static void run_chunk(uint32_t chunk)
{
    /* job is the claimed chunk's: written before 'claims' was published */
    if (counted_job != job.id) {
        atomic_fetch_add_explicit(&job_threads, 1, memory_order_relaxed);
        counted_job = job.id;
    }
    int64_t b = (int64_t)chunk * job.chunk, e = b + job.chunk < job.n ? b + job.chunk : job.n;
    if (b < e) {
        in_chunk = true;
        job.fn(job.ctx, b, e);
        in_chunk = false;
    }
    if (atomic_fetch_sub_explicit(&pending, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_lock(&lock); /* the caller may be about to sleep */
        pthread_cond_signal(&finished);
        pthread_mutex_unlock(&lock);
    }
}

/* The generation after 'seen': spins a while, then sleeps on 'wake'. */
static uint64_t next_job(uint64_t seen)
{
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        uint64_t g = atomic_load_explicit(&generation, memory_order_acquire);
        if (g != seen)
            return g;
        cpu_relax(i);
    }
    pthread_mutex_lock(&lock);
    while (atomic_load(&generation) == seen)
        pthread_cond_wait(&wake, &lock);
    pthread_mutex_unlock(&lock);
    return atomic_load(&generation);
}

static void *worker(void *arg)
{
    own_chunk = (uint32_t)(uintptr_t)arg;
    uint64_t seen = 0;
    /* Ctrl-C belongs to the thread running Lua (the REPL's handler sets a
     * hook there), never to a worker. */
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (;;) {
        seen = next_job(seen);
        uint32_t chunk;
        if (claim_chunk((int)own_chunk, &chunk)) /* else the caller took it */
            run_chunk(chunk);
    }
    return NULL;
}

/* Keeps the workers off the caller's cpu (lock held). Why: measured in this
 * 2-vCPU KVM guest (kernel 6.18), the scheduler now and then puts the worker
 * on the caller's cpu (woken there while the other cpu ran some other task
 * for a moment) and then leaves both threads there, time-sliced, for tens of
 * milliseconds while the other cpu idles: both chunks of a job then run one
 * after the other, and whole passes of bench/conv.sh ran at 1-thread speed
 * or slower. Only the workers are restricted, never the caller (the user's
 * thread): to the caller's own allowed cpus minus the one it is on, or to
 * that one cpu when it is the only one allowed (taskset, a 1-cpu machine),
 * so they follow the caller when it moves. Checked at each job by a cpu
 * query (a few ns); the allowed set is read again when the caller's cpu
 * changed, and every AFFINITY_EVERY jobs in case the user restricted it. */
static void keep_workers_off(void)
{
    int cpu = sched_getcpu();
    if (cpu < 0 || (cpu == kept_off && ++placed_jobs % AFFINITY_EVERY != 0))
        return;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return;
    if (CPU_COUNT(&allowed) > 1)
        CPU_CLR(cpu, &allowed);
    if (cpu != kept_off || !CPU_EQUAL(&allowed, &workers_set))
        for (int i = 0; i < nworkers; i++)
            pthread_setaffinity_np(workers[i], sizeof allowed, &allowed);
    kept_off = cpu;
    workers_set = allowed;
}

/* Starts workers up to 'want' (lock held); returns how many exist. */
static int ensure_workers(int want)
{
    while (nworkers < want) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &attr, worker, (void *)(uintptr_t)(nworkers + 1));
        pthread_attr_destroy(&attr);
        if (rc != 0)
            break; /* run with what we have */
        workers[nworkers++] = t;
        kept_off = -1; /* place the new one at the next job */
    }
    return nworkers;
}

void mf_parallel_for(int64_t n, int64_t min_chunk, MfParallelFn fn, void *ctx)
{
    mf_parallel_for_threads(mf_parallel_threads(), n, min_chunk, fn, ctx);
}

/* Waits until every chunk of the job is done. */
static void wait_chunks(void)
{
    for (int i = 0; i < SPIN_ROUNDS && atomic_load_explicit(&pending, memory_order_acquire) > 0;
         i++)
        cpu_relax(i);
    pthread_mutex_lock(&lock);
    while (atomic_load(&pending) > 0)
        pthread_cond_wait(&finished, &lock);
    pthread_mutex_unlock(&lock);
}

void mf_parallel_for_threads(int threads, int64_t n, int64_t min_chunk, MfParallelFn fn,
                             void *ctx)
{
    pthread_once(&settled, settle);
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (min_chunk < 1)
        min_chunk = 1;
    if (n / min_chunk < threads)
        threads = (int)(n / min_chunk);
    if (threads <= 1 || in_chunk) { /* one thread, or a call from a chunk: no lock */
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
        fn(ctx, 0, n);
        return;
    }
    running = true;
    mf_alloc_shared(true); /* chunks may allocate scratch at once */
    keep_workers_off();
    job.fn = fn;
    job.ctx = ctx;
    job.n = n;
    job.chunk = (n + threads - 1) / threads;
    job.id = atomic_load(&generation) + 1; /* the generation it is published as */
    int chunks = (int)((n + job.chunk - 1) / job.chunk);
    atomic_store(&pending, chunks);
    atomic_store(&job_threads, 0);
    atomic_store_explicit(&claims, (uint64_t)chunks << 32, memory_order_release);
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
    uint32_t chunk;
    bool once = atomic_load_explicit(&one_chunk_each, memory_order_relaxed);
    for (bool ran = false; !(once && ran) && claim_chunk(ran ? -1 : 0, &chunk); ran = true)
        run_chunk(chunk); /* its own, then any a worker has not taken yet */
    wait_chunks();
    last_threads = atomic_load(&job_threads);
    mf_alloc_shared(false);
    pthread_mutex_lock(&lock);
    running = false;
    pthread_mutex_unlock(&lock);
}
