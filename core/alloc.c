/* alloc.c — caching allocator (see alloc.h).
 *
 * Size classes: 64 bytes and up, four classes per power of two (so at most
 * 25% is wasted). Each class keeps a singly linked free list threaded through
 * the blocks themselves. Single-threaded, like the rest of the engine. */
#include "alloc.h"

#include <stdlib.h>
#include <string.h>

#define MIN_SHIFT 6            /* smallest class: 64 bytes */
#define NCLASSES 240           /* enough for blocks up to 2^65 */
#define ALIGNMENT 64

/* Sanitizer builds define MF_ALLOC_NO_CACHE so that every block really goes
 * back to the system and a use after free is caught. */
#ifdef MF_ALLOC_NO_CACHE
#define CACHING 0
#else
#define CACHING 1
#endif

typedef struct FreeBlock {
    struct FreeBlock *next;
} FreeBlock;

static FreeBlock *free_lists[NCLASSES];
static size_t bytes_in_use;
static size_t bytes_in_use_peak;
static size_t bytes_cached;
static int64_t fail_countdown;
static int64_t alloc_count;

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

void *mf_alloc(size_t nbytes)
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
        b = aligned_alloc(ALIGNMENT, class_bytes);
        if (!b)
            return NULL;
    }
    bytes_in_use += class_bytes;
    if (bytes_in_use > bytes_in_use_peak)
        bytes_in_use_peak = bytes_in_use;
    return b;
}

void *mf_alloc_zeroed(size_t nbytes)
{
    void *p = mf_alloc(nbytes);
    if (p)
        memset(p, 0, nbytes);
    return p;
}

void mf_dealloc(void *p, size_t nbytes)
{
    if (!p)
        return;
    size_t class_bytes;
    int c = size_class(nbytes, &class_bytes);
    bytes_in_use -= class_bytes;
    if (!CACHING || bytes_cached + class_bytes > MF_ALLOC_CACHE_CAP) {
        free(p);
        return;
    }
    FreeBlock *b = p;
    b->next = free_lists[c];
    free_lists[c] = b;
    bytes_cached += class_bytes;
}

size_t mf_alloc_in_use(void)
{
    return bytes_in_use;
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

void mf_alloc_trim(void)
{
    for (int c = 0; c < NCLASSES; c++) {
        while (free_lists[c]) {
            FreeBlock *b = free_lists[c];
            free_lists[c] = b->next;
            free(b);
        }
    }
    bytes_cached = 0;
}

void mf_alloc_fail_at(int64_t n)
{
    fail_countdown = n > 0 ? n : 0;
}

int64_t mf_alloc_count(void)
{
    return alloc_count;
}
