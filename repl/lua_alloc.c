/* lua_alloc.c — the allocator moonflow gives its Lua state.
 *
 * Each eager op makes a small userdata that lives briefly. Lua's default
 * allocator sends those to malloc/free; here blocks of up to SMALL_MAX bytes
 * come from per-size free lists instead (16-byte classes), which makes a
 * small op measurably cheaper. Larger blocks go to realloc/free as before.
 *
 * Sanitizer builds (MF_ALLOC_NO_CACHE, as core/alloc.c) keep no free lists:
 * every block goes to malloc at its exact size and back to free at once, so
 * AddressSanitizer sees a use after free or an overflow of any Lua object,
 * however small (a string of 20 bytes used after the collector freed it). */
#include "lua_alloc.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

#define SMALL_MAX 256
#define GRAIN 16
#define NCLASSES (SMALL_MAX / GRAIN)
#define KEEP_MAX 65536 /* free blocks kept per class; past that they go to free() */

typedef struct Block {
    struct Block *next;
} Block;

static Block *free_lists[NCLASSES];
static size_t kept[NCLASSES];

static int class_of(size_t n)
{
    return n == 0 ? 0 : (int)((n - 1) / GRAIN);
}

static void small_free(void *p, size_t n)
{
    int c = class_of(n);
    if (kept[c] >= KEEP_MAX) {
        free(p);
        return;
    }
    Block *b = p;
    b->next = free_lists[c];
    free_lists[c] = b;
    kept[c]++;
}

static void *small_alloc(size_t n)
{
    int c = class_of(n);
    Block *b = free_lists[c];
    if (b) {
        free_lists[c] = b->next;
        kept[c]--;
        return b;
    }
    return malloc((size_t)(c + 1) * GRAIN);
}

static void release(void *p, size_t n)
{
    if (n <= SMALL_MAX)
        small_free(p, n);
    else
        free(p);
}

#ifdef MF_ALLOC_NO_CACHE
#define KEEP_SMALL 0
#else
#define KEEP_SMALL 1
#endif

/* realloc(ptr, nsize), or free(ptr) for 0 bytes; on failure the engine's
 * cache of free tensor blocks goes back first. */
static void *system_alloc(void *ptr, size_t nsize)
{
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    void *q = realloc(ptr, nsize);
    if (!q) {
        mf_alloc_trim();
        q = realloc(ptr, nsize);
    }
    return q;
}

void *lmf_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    if (!KEEP_SMALL)
        return system_alloc(ptr, nsize);
    if (ptr == NULL)
        osize = 0; /* Lua passes the object type here, not a size */
    if (nsize == 0) {
        if (ptr)
            release(ptr, osize);
        return NULL;
    }
    if (ptr && osize > SMALL_MAX && nsize > SMALL_MAX)
        return system_alloc(ptr, nsize);
    if (ptr && osize <= SMALL_MAX && nsize <= SMALL_MAX && class_of(osize) == class_of(nsize))
        return ptr;
    void *q = nsize <= SMALL_MAX ? small_alloc(nsize) : malloc(nsize);
    if (!q) {   /* the engine's cache of free tensor blocks goes back first */
        mf_alloc_trim();
        q = malloc(nsize <= SMALL_MAX ? (size_t)(class_of(nsize) + 1) * GRAIN : nsize);
    }
    if (!q)
        return NULL;
    if (ptr) {
        memcpy(q, ptr, osize < nsize ? osize : nsize);
        release(ptr, osize);
    }
    return q;
}
