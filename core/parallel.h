/* parallel.h — splitting an elementwise-style kernel across the machine's
 * threads.
 *
 * With more than one thread the memory-bound kernels of a training step
 * (im2col, ReLU gradient, pooling gradient, ...) would otherwise run on one
 * core while the others idle. 'mf_parallel_for' hands contiguous chunks of
 * an index range to a small pool of worker threads (created on first use;
 * between calls they spin briefly, then sleep on a condition variable) and
 * runs the first chunk itself. mf_gemm (core/gemm.c) splits large GEMMs
 * over the same pool and keeps OpenBLAS single-threaded, so OpenBLAS's own
 * spinning workers never compete with ours.
 *
 * The thread count follows OpenBLAS's setting (mf.set_num_threads,
 * OPENBLAS_NUM_THREADS). Ranges too small to pay for a wake-up, a failed
 * thread creation, or a call from inside a chunk run serially: the result
 * never depends on the split. Chunks must write disjoint memory. Called
 * from the engine's (single) calling thread only. */
#ifndef MF_PARALLEL_H
#define MF_PARALLEL_H

#include <stdint.h>

/* Processes indices [begin, end) of the caller's range. */
typedef void (*MfParallelFn)(void *ctx, int64_t begin, int64_t end);

/* Runs 'fn' over [0, n): one chunk per thread, each at least 'min_chunk'
 * indices long (fewer threads when 'n' is small). Returns when all chunks
 * are done. */
void mf_parallel_for(int64_t n, int64_t min_chunk, MfParallelFn fn, void *ctx);

/* The same with an explicit thread count (at most 16), for callers that
 * change OpenBLAS's count around the call (mf_gemm). */
void mf_parallel_for_threads(int threads, int64_t n, int64_t min_chunk, MfParallelFn fn,
                             void *ctx);

/* The number of threads mf_parallel_for would use for a large range. */
int mf_parallel_threads(void);

#endif
