/* parallel.h — splitting an elementwise-style kernel across the machine's
 * threads.
 *
 * With more than one thread the memory-bound kernels of a training step
 * (im2col, ReLU gradient, pooling gradient, ...) would otherwise run on one
 * core while the others idle. 'mf_parallel_for' cuts an index range into one
 * contiguous chunk per thread and hands them to a small pool of worker
 * threads (created on first use; between calls they spin briefly, then
 * sleep on a condition variable); the calling thread takes chunks too, and
 * runs any chunk no worker has taken by the time it is free (a worker that
 * is not on a core yet costs nothing). mf_gemm (core/gemm.c) splits large
 * GEMMs over the same pool.
 *
 * The pool owns the thread count: OPENBLAS_NUM_THREADS (or
 * MOONFLOW_NUM_THREADS, mf.set_num_threads) at start, read from OpenBLAS
 * once; OpenBLAS itself is then kept single-threaded and its own worker
 * threads are stopped, because they spin (sched_yield) for ~0.1 s after
 * their creation and after each threaded call: on a 2-core machine such a
 * thread holds one core and puts our worker on the caller's core.
 *
 * The workers are kept off the cpu the caller is on (restricted to the
 * caller's allowed cpus minus that one, or to it when it is the only one);
 * the caller itself is never restricted. Without it the scheduler at times
 * left worker and caller time-sliced on one cpu for tens of milliseconds
 * while the other idled (parallel.c, keep_workers_off).
 *
 * Ranges too small to pay for a wake-up, a failed thread creation, or a
 * call from inside a chunk run serially: the chunks are the same whoever
 * runs them, and the result never depends on the split. Chunks must write
 * disjoint memory. Called from the engine's (single) calling thread only. */
#ifndef MF_PARALLEL_H
#define MF_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

/* Processes indices [begin, end) of the caller's range. */
typedef void (*MfParallelFn)(void *ctx, int64_t begin, int64_t end);

/* Runs 'fn' over [0, n): one chunk per thread, each at least 'min_chunk'
 * indices long (fewer threads when 'n' is small). Returns when all chunks
 * are done. */
void mf_parallel_for(int64_t n, int64_t min_chunk, MfParallelFn fn, void *ctx);

/* The same with an explicit thread count (at most 16). */
void mf_parallel_for_threads(int threads, int64_t n, int64_t min_chunk, MfParallelFn fn,
                             void *ctx);

/* The number of threads mf_parallel_for would use for a large range. */
int mf_parallel_threads(void);

/* Sets it (the pool uses at most 16); MF_EARG ("set_num_threads: expected
 * an integer from 1 to 4096, got N") outside 1..4096, nothing changed. */
MfStatus mf_parallel_set_threads(int64_t threads);

/* How many threads ran chunks of the last range that was split over the
 * pool (the caller counts as one). */
int mf_parallel_last_threads(void);

/* For tests: the caller runs only its own chunk of a job (normally it also
 * runs any chunk a worker has not taken yet; a worker only ever runs its
 * own), so a job of k chunks runs on k threads. */
void mf_parallel_set_one_chunk_each(bool on);

/* OpenBLAS's own threads for a threaded BLAS or LAPACK call (true: as many
 * as ours, when their work buffers can be mapped; else it stays on one
 * thread), then stopped again (false). */
void mf_parallel_blas_threads(bool on);

/* Makes sure OpenBLAS's work buffers for 'calls' level-3 BLAS or LAPACK
 * calls running at once are mapped (see parallel.c: OpenBLAS spins for ever
 * when it cannot map one). Call before any BLAS call, with the number of
 * threads that will make one. MF_ENOMEM ("OP: out of memory for OpenBLAS's
 * work buffers ...") when they cannot be mapped now. */
MfStatus mf_parallel_blas_buffers(const char *op, int calls);

/* mf_parallel_blas_buffers for every thread: at start-up, before the
 * user's work can use up the memory. */
MfStatus mf_parallel_reserve_blas(void);

#endif
