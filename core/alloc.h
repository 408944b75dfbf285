/* alloc.h — the engine's one allocator: a caching allocator with size classes.
 *
 * Every engine allocation (tensor headers, storages, buffers, graph nodes)
 * goes through 'mf_alloc' / 'mf_dealloc'. Freed blocks are kept in per-class
 * free lists and reused, because on these machines the first touch of fresh
 * memory costs about 1.5 us per 4 KiB page. The cache is bounded
 * (MF_ALLOC_CACHE_CAP bytes); past that, blocks go back to the system.
 *
 * A test hook fails the Nth allocation, so out-of-memory paths can be tested. */
#ifndef MF_ALLOC_H
#define MF_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MF_ALLOC_CACHE_CAP ((size_t)1 << 30)

/* Returns a 64-byte aligned block of at least 'nbytes', or NULL (no message
 * is set: the caller knows what it was allocating and reports it). When the
 * system refuses, the cache is trimmed and the request tried again, then
 * the reclaim hook runs (on its own thread only) and it is tried again. */
void *mf_alloc(size_t nbytes);

/* Same as mf_alloc, with the bytes set to zero. */
void *mf_alloc_zeroed(size_t nbytes);

/* Returns a block from 'mf_alloc'; 'nbytes' must be the size asked for. */
void mf_dealloc(void *p, size_t nbytes);

/* malloc-style blocks for the engine's bookkeeping (graph nodes, names,
 * executor tables, profiler labels): each keeps its size in a 16-byte
 * header, so 'mf_free' needs none. They come from 'mf_alloc', so they count
 * in 'mf_alloc_in_use' and fail under 'mf_alloc_fail_at' like tensors do.
 * Each returns NULL when memory runs out (no message is set) and is aligned
 * for any type, as malloc's blocks are. 'mf_calloc' zeroes and refuses a
 * 'count * size' that overflows; 'mf_realloc' of NULL allocates, and on
 * failure leaves 'p' as it was; 'mf_free' of NULL does nothing. */
void *mf_malloc(size_t nbytes);
void *mf_calloc(size_t count, size_t size);
void *mf_realloc(void *p, size_t nbytes);
void mf_free(void *p);
char *mf_strdup(const char *s);

/* Bytes handed out and not yet returned (what the engine holds live). */
size_t mf_alloc_in_use(void);

/* The highest 'mf_alloc_in_use' since the start or the last reset
 * (tests check that graph runs keep the live set small). */
size_t mf_alloc_peak(void);
void mf_alloc_reset_peak(void);

/* Bytes sitting in the free lists, ready for reuse. */
size_t mf_alloc_cached(void);

/* Returns every cached block to the system. */
void mf_alloc_trim(void);

/* When a host whose garbage collector frees tensors (the Lua face) should
 * collect: 'mf_alloc_collect_due' is asked after each new tensor (it tracks
 * the lowest 'mf_alloc_in_use' seen), true once the engine holds that low
 * mark plus the larger of 2 MiB and the low mark again; 'mf_alloc_collected'
 * is told after a full collection (the live set left is the new low mark). */
bool mf_alloc_collect_due(void);
void mf_alloc_collected(void);

/* Sets the function a failed allocation calls to free memory before it
 * retries (the Lua layer runs a full collection, whose finalizers release
 * the tensors Lua no longer holds); it runs only on the calling thread.
 * NULL: none. */
void mf_alloc_set_reclaim(void (*hook)(void));

/* Brackets a job of the worker pool (core/parallel.c): while one runs,
 * 'mf_alloc', 'mf_dealloc' and 'mf_alloc_trim' may be called from its
 * threads at once (they take a mutex). Nests. The counters ('in_use',
 * 'cached', the low mark) are read by the calling thread between jobs. */
void mf_alloc_shared(bool on);

/* Test hook: the 'n'-th allocation from now fails (1 = the next one);
 * 0 turns the hook off. */
void mf_alloc_fail_at(int64_t n);

/* Allocations made since the process started (for sweeping 'mf_alloc_fail_at'). */
int64_t mf_alloc_count(void);

#endif
