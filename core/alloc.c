/* alloc.c — caching allocator (see alloc.h).
 *
 * Size classes: 64 bytes and up, four classes per power of two (so at most
 * 25% is wasted). Each class keeps a singly linked free list threaded through
 * the blocks themselves. Single-threaded, like the rest of the engine,
 * except while a job of the worker pool runs: kernels allocate scratch
 * inside their chunks (softmax along a middle axis, per block), so from
 * 'mf_alloc_shared(true)' to 'mf_alloc_shared(false)' (core/parallel.c
 * brackets every split job) each call takes a mutex. Outside jobs the
 * check is one relaxed atomic load.
 *
 * Large blocks are "coloured": each starts at a different multiple of 64
 * bytes past its system allocation. The system hands out big blocks page-
 * aligned, so without this every buffer of an elementwise op starts at the
 * same offset within a 4 KiB page, and the CPU mistakes a load from one
 * buffer for a dependency on a store to another (4K aliasing): an Adam step
 * over four 1M-float buffers took 0.45 ms instead of 0.29 ms.
 *
 * Blocks of HUGE_MIN_BYTES and more are also asked to be backed by 2 MiB
 * pages (madvise MADV_HUGEPAGE, as NumPy does for its arrays of 4 MiB and
 * up): with 4 KiB pages an op over 4M floats walks 8192 pages of its input
 * and output, a TLB miss and a page walk every 4 KiB. Measured here (AMD
 * EPYC, Zen 3, THP "madvise"): abs and add over 4M floats 10-20% faster,
 * on 1 thread and on 2. Where the kernel has no transparent huge pages the
 * advice fails and the block is used as it is. */
#define _GNU_SOURCE /* madvise, MADV_HUGEPAGE */
#include "alloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MIN_SHIFT 6            /* smallest class: 64 bytes */
#define NCLASSES 240           /* enough for blocks up to 2^65 */
#define ALIGNMENT 64
#define COLOUR_MIN_BYTES ((size_t)64 << 10) /* smaller blocks: too short to alias */
#define COLOURS 64                          /* offsets of 64, 128, ..., 4096 bytes */
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_MIN_BYTES ((size_t)4 << 20) /* smaller ones: a huge page would be mostly slack */

/* Sanitizer builds define MF_ALLOC_NO_CACHE so that every block really goes
 * back to the system and a use after free is caught. */
#ifdef MF_ALLOC_NO_CACHE
#define CACHING 0
#else
#define CACHING 1
#endif

typedef struct FreeBlock {
    struct FreeBlock *next;
    size_t class_bytes; /* so that 'mf_alloc_trim' knows how to free it */
} FreeBlock;

static FreeBlock *free_lists[NCLASSES];
static size_t bytes_in_use;
static size_t bytes_in_use_peak;
static size_t bytes_cached;
static int64_t fail_countdown;
static int64_t alloc_count;
static unsigned next_colour;
static atomic_int shared_jobs;  /* > 0: other threads may allocate */
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

void mf_alloc_shared(bool on)
{
    atomic_fetch_add(&shared_jobs, on ? 1 : -1);
}

/* Takes the lock while other threads may allocate; returns whether it did. */
static bool lock_if_shared(void)
{
    if (atomic_load_explicit(&shared_jobs, memory_order_relaxed) == 0)
        return false;
    pthread_mutex_lock(&shared_lock);
    return true;
}

static void unlock_if(bool locked)
{
    if (locked)
        pthread_mutex_unlock(&shared_lock);
}

/* Maps a request to its class index and the class's block size. */
static int size_class(size_t nbytes, size_t *class_bytes)
{
    /* Tensor headers and small buffers: 64-byte granules, checked first
     * because they are what small eager ops allocate. */
    if (nbytes > 64 && nbytes <= 128) {
        *class_bytes = 128;
        return 4;
    }
    if (nbytes > 128 && nbytes <= 256) {
        size_t k = (nbytes + 63) / 64; /* 3 or 4 */
        *class_bytes = k * 64;
        return (int)k + 3;
    }
    if (nbytes <= ((size_t)1 << MIN_SHIFT)) {
        *class_bytes = (size_t)1 << MIN_SHIFT;
        return 0;
    }
    int shift = 63 - __builtin_clzll((unsigned long long)(nbytes - 1));
    /* nbytes lies in (2^shift, 2^(shift+1)]; split that range in four. */
    size_t base = (size_t)1 << shift;
    size_t quarter = base >> 2;
    /* a shift, not a division: this runs twice per tensor of every op */
    size_t step = (nbytes - base + quarter - 1) >> (shift - 2); /* 1..4 */
    *class_bytes = base + step * quarter;
    if (*class_bytes % ALIGNMENT)
        *class_bytes += ALIGNMENT - *class_bytes % ALIGNMENT;
    return (shift - MIN_SHIFT) * 4 + (int)step;
}

/* A block of 'class_bytes' from the system. A large one starts 'shift' bytes
 * into its allocation, and the word before it keeps the allocation's start. */
static void *system_alloc(size_t class_bytes)
{
    if (class_bytes < COLOUR_MIN_BYTES)
        return aligned_alloc(ALIGNMENT, class_bytes);
    /* 17 is odd, so the 64 colours all come up before one repeats; consecutive
     * blocks land about a quarter page apart */
    size_t shift = ALIGNMENT * (1 + next_colour++ * 17 % COLOURS);
    char *start;
    if (class_bytes >= HUGE_MIN_BYTES) {
        /* the advice covers the whole huge pages from the start: the last
         * few KiB stay in small pages, so a slack never costs a 2 MiB page
         * (posix_memalign: aligned_alloc wants a multiple of the alignment) */
        void *p;
        start = posix_memalign(&p, HUGE_PAGE, class_bytes + shift) == 0 ? p : NULL;
        if (start) /* advice: a refusal changes nothing */
            madvise(start, (class_bytes + shift) & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);
    } else {
        start = aligned_alloc(ALIGNMENT, class_bytes + shift);
    }
    if (!start)
        return NULL;
    void **block = (void **)(start + shift);
    block[-1] = start;
    return block;
}

static void system_free(void *block, size_t class_bytes)
{
    if (class_bytes < COLOUR_MIN_BYTES)
        free(block);
    else
        free(((void **)block)[-1]);
}

/* The reclaim hook (mf_alloc_set_reclaim), the thread it may run on, and
 * a guard: a failed allocation inside the hook does not call it again. */
static void (*reclaim_hook)(void);
static pthread_t reclaim_thread;
static bool in_reclaim;

void mf_alloc_set_reclaim(void (*hook)(void))
{
    reclaim_hook = hook;
    reclaim_thread = pthread_self();
}

static void trim(void);

/* The system refused 'class_bytes': the cache goes back first, then the
 * hook frees what it can (a full Lua collection), each followed by a retry.
 * The hook does not run inside a pool job ('locked'): its finalizers would
 * free blocks under the lock this call holds. */
static void *alloc_short(size_t class_bytes, bool locked)
{
    void *b = NULL;
    if (bytes_cached > 0) {
        trim();
        b = system_alloc(class_bytes);
    }
    if (!b && !locked && reclaim_hook && !in_reclaim &&
        pthread_equal(pthread_self(), reclaim_thread)) {
        in_reclaim = true;
        reclaim_hook();
        in_reclaim = false;
        trim();
        b = system_alloc(class_bytes);
    }
    return b;
}

static void *alloc_block(size_t nbytes, bool locked)
{
    alloc_count++;
    if (fail_countdown > 0 && --fail_countdown == 0)
        return NULL;
    if (nbytes > ((size_t)1 << 46))
        return NULL; /* beyond any machine: do not let the class math overflow */
    size_t class_bytes;
    int c = size_class(nbytes, &class_bytes);
    FreeBlock *b = CACHING ? free_lists[c] : NULL;
    if (b) {
        free_lists[c] = b->next;
        bytes_cached -= class_bytes;
    } else {
        b = system_alloc(class_bytes);
        if (!b)
            b = alloc_short(class_bytes, locked);
        if (!b)
            return NULL;
    }
    bytes_in_use += class_bytes;
    if (bytes_in_use > bytes_in_use_peak)
        bytes_in_use_peak = bytes_in_use;
    return b;
}

void *mf_alloc(size_t nbytes)
{
    bool locked = lock_if_shared();
    void *b = alloc_block(nbytes, locked);
    unlock_if(locked);
    return b;
}

void *mf_alloc_zeroed(size_t nbytes)
{
    void *p = mf_alloc(nbytes);
    if (p)
        memset(p, 0, nbytes);
    return p;
}

static void dealloc_block(void *p, size_t nbytes)
{
    size_t class_bytes;
    int c = size_class(nbytes, &class_bytes);
    bytes_in_use -= class_bytes;
    if (!CACHING || bytes_cached + class_bytes > MF_ALLOC_CACHE_CAP) {
        system_free(p, class_bytes);
        return;
    }
    FreeBlock *b = p;
    b->class_bytes = class_bytes;
    b->next = free_lists[c];
    free_lists[c] = b;
    bytes_cached += class_bytes;
}

void mf_dealloc(void *p, size_t nbytes)
{
    if (!p)
        return;
    bool locked = lock_if_shared();
    dealloc_block(p, nbytes);
    unlock_if(locked);
}

/* ---- malloc-style blocks: a header before the block keeps its size ---- */

#define HEADER 16   /* keeps the block aligned as malloc's (max_align_t) */

void *mf_malloc(size_t nbytes)
{
    if (nbytes > SIZE_MAX - HEADER)
        return NULL;
    char *b = mf_alloc(nbytes + HEADER);
    if (!b)
        return NULL;
    *(size_t *)b = nbytes;
    return b + HEADER;
}

void *mf_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    void *p = mf_malloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void mf_free(void *p)
{
    if (!p)
        return;
    char *b = (char *)p - HEADER;
    mf_dealloc(b, *(size_t *)b + HEADER);
}

void *mf_realloc(void *p, size_t nbytes)
{
    if (!p)
        return mf_malloc(nbytes);
    size_t old = *(size_t *)((char *)p - HEADER);
    void *q = mf_malloc(nbytes);
    if (!q)
        return NULL;
    memcpy(q, p, old < nbytes ? old : nbytes);
    mf_free(p);
    return q;
}

char *mf_strdup(const char *s)
{
    size_t len = strlen(s) + 1;
    char *p = mf_malloc(len);
    if (p)
        memcpy(p, s, len);
    return p;
}

size_t mf_alloc_in_use(void)
{
    return bytes_in_use;
}

/* The host sees only small boxes, so a dead tensor's buffer waits for a
 * collection, due when the engine holds 'collect_low' (the lowest use since
 * the last full collection) plus the larger of COLLECT_SLACK and that amount
 * again. A small slack keeps a loop's temporaries cycling through a few warm
 * buffers instead of many cold ones (page faults and cache misses: with 8 MiB,
 * a loop of 131k-element adds cycled through 16 buffers, beyond L2, at twice
 * the CPU time of one that reuses its buffer); it is relative to the live set
 * so that a script holding much data is not collected after every op. The
 * low mark, not only the live set at the last collection: after a large
 * phase whose tensors were freed (closed, or by refcount), twice that old
 * live set would let garbage pile up far past what the loop needs. The Lua
 * face answers with a young collection, which frees the temporaries of a
 * loop cheaply, and a full one when that is not enough (lmf_gc_pressure). */
#define COLLECT_SLACK ((size_t)2 << 20)
static size_t collect_low;

bool mf_alloc_collect_due(void)
{
    if (bytes_in_use < collect_low)
        collect_low = bytes_in_use;
    return bytes_in_use >= collect_low + (collect_low > COLLECT_SLACK ? collect_low
                                                                      : COLLECT_SLACK);
}

void mf_alloc_collected(void)
{
    collect_low = bytes_in_use;
}

size_t mf_alloc_peak(void)
{
    return bytes_in_use_peak;
}

void mf_alloc_reset_peak(void)
{
    bytes_in_use_peak = bytes_in_use;
}

size_t mf_alloc_cached(void)
{
    return bytes_cached;
}

static void trim(void)
{
    for (int c = 0; c < NCLASSES; c++) {
        while (free_lists[c]) {
            FreeBlock *b = free_lists[c];
            free_lists[c] = b->next;
            system_free(b, b->class_bytes);
        }
    }
    bytes_cached = 0;
}

void mf_alloc_trim(void)
{
    bool locked = lock_if_shared();
    trim();
    unlock_if(locked);
}

void mf_alloc_fail_at(int64_t n)
{
    fail_countdown = n > 0 ? n : 0;
}

int64_t mf_alloc_count(void)
{
    return alloc_count;
}
