/* test_alloc.c — the caching allocator: alignment, reuse, accounting, trim,
 * and the colouring of large blocks (they must not all start at the same
 * offset within a page, see core/alloc.c). */
#include "testutil.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/parallel.h"

#define LARGE ((size_t)4 << 20)

static void test_blocks_are_aligned_and_writable(void **state)
{
    (void)state;
    size_t sizes[] = {1, 63, 64, 65, 200, 4096, 70000, LARGE};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        unsigned char *p = mf_alloc(sizes[i]);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 64, 0);
        memset(p, 0xab, sizes[i]);
        assert_int_equal(p[sizes[i] - 1], 0xab);
        mf_dealloc(p, sizes[i]);
    }
}

/* Four large buffers made one after another, as an optimizer makes a
 * variable's slots: no two start at the same offset within a 4 KiB page. */
static void test_large_blocks_start_at_different_page_offsets(void **state)
{
    (void)state;
    void *p[4];
    for (int i = 0; i < 4; i++)
        p[i] = mf_alloc(LARGE + (size_t)i * 1000 * 1000); /* fresh classes: not cached */
    for (int i = 0; i < 4; i++) {
        assert_non_null(p[i]);
        for (int j = 0; j < i; j++)
            assert_int_not_equal((uintptr_t)p[i] % 4096, (uintptr_t)p[j] % 4096);
    }
    for (int i = 0; i < 4; i++)
        mf_dealloc(p[i], LARGE + (size_t)i * 1000 * 1000);
}

/* The VmFlags line of the mapping that holds 'p' (/proc/self/smaps), or ""
 * when there is none. */
static void mapping_flags(const void *p, char *flags, size_t size)
{
    flags[0] = '\0';
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    char line[512];
    bool inside = false;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(flags, size, "%s", line + 8);
            break;
        }
    }
    fclose(f);
}

/* A block of 4 MiB or more is advised to the kernel for 2 MiB pages (core/
 * alloc.c: TLB misses of 4M-float ops): its mapping carries the "hg" flag,
 * from its first byte to its last page (which may be a small one). Skipped
 * where the kernel has no transparent huge pages. */
static void test_large_blocks_are_advised_for_huge_pages(void **state)
{
    (void)state;
    struct stat st;
    if (stat("/sys/kernel/mm/transparent_hugepage/enabled", &st) != 0)
        skip();
    size_t sizes[] = {LARGE, (size_t)16 << 20, ((size_t)16 << 20) + 300};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        char *p = mf_alloc(sizes[i]);
        assert_non_null(p);
        char first[512], last[512];
        mapping_flags(p, first, sizeof first);
        mapping_flags(p + sizes[i] - 4096 - 1, last, sizeof last);
        mf_dealloc(p, sizes[i]); /* before a failure, which would leave it in use */
        if (!strstr(first, " hg") || !strstr(last, " hg"))
            fail_msg("block of %zu bytes: VmFlags %s, last page's %s (expected hg)", sizes[i],
                     first, last);
    }
    mf_alloc_trim();
}

static void test_freed_block_is_reused_and_counted(void **state)
{
    (void)state;
    size_t in_use = mf_alloc_in_use();
    void *p = mf_alloc(LARGE);
    assert_non_null(p);
    assert_true(mf_alloc_in_use() >= in_use + LARGE);
    mf_dealloc(p, LARGE);
    assert_int_equal(mf_alloc_in_use(), in_use);
    void *q = mf_alloc(LARGE - 100); /* same class */
#ifndef MF_ALLOC_NO_CACHE
    assert_ptr_equal(p, q);
#endif
    mf_dealloc(q, LARGE - 100);
    mf_alloc_trim();
    assert_int_equal(mf_alloc_cached(), 0);
}

static void test_failure_hook_fails_the_nth_allocation(void **state)
{
    (void)state;
    mf_alloc_fail_at(2);
    void *a = mf_alloc(LARGE);
    void *b = mf_alloc(LARGE);
    void *c = mf_alloc(LARGE);
    assert_non_null(a);
    assert_null(b);
    assert_non_null(c);
    mf_dealloc(a, LARGE);
    mf_dealloc(c, LARGE);
    mf_alloc_trim();
}

/* The collection policy: due at the low mark plus max(2 MiB, the low mark);
 * the low mark follows use down, and a collection resets it. */
static void test_collect_due(void **state)
{
    (void)state;
    const size_t kib = (size_t)1 << 10;
    mf_alloc_collected();
    void *a = mf_alloc(1536 * kib);
    assert_false(mf_alloc_collect_due());   /* within the 2 MiB slack */
    void *b = mf_alloc(768 * kib);
    assert_true(mf_alloc_collect_due());
    mf_alloc_collected();                     /* 2.25 MiB live: the low mark */
    mf_dealloc(a, 1536 * kib);
    assert_false(mf_alloc_collect_due());   /* 0.75 MiB: the low mark follows */
    a = mf_alloc(1536 * kib);
    assert_false(mf_alloc_collect_due());
    void *c = mf_alloc(768 * kib);            /* 3 MiB >= 0.75 + 2 (not 2.25 + 2.25) */
    assert_true(mf_alloc_collect_due());
    mf_dealloc(c, 768 * kib);
    mf_dealloc(b, 768 * kib);
    mf_dealloc(a, 1536 * kib);
    mf_alloc_trim();
}

/* Kernels allocate scratch inside their chunks (softmax along a middle
 * axis does, per block): two threads allocating and freeing at once must
 * neither share a block nor lose a count. */
#define ROUNDS 100000

static void allocate_in_chunk(void *ctx, int64_t begin, int64_t end)
{
    int *bad = ctx;
    static const size_t sizes[] = {64, 100, 256, 1000, 4096, 70000};
    for (int64_t k = begin; k < end; k++)
        for (int r = 0; r < ROUNDS; r++) {
            size_t n = sizes[(r + k) % 6];
            unsigned char *p = mf_alloc(n);
            if (!p) {
                bad[k] = 1;
                return;
            }
            p[0] = p[n - 1] = (unsigned char)(k + 1);
            if (p[0] != (unsigned char)(k + 1) || p[n - 1] != (unsigned char)(k + 1))
                bad[k] = 1;
            mf_dealloc(p, n);
        }
}

static void test_chunks_of_a_parallel_job_may_allocate(void **state)
{
    (void)state;
    assert_int_equal(mf_parallel_set_threads(2), MF_OK);
    mf_parallel_set_one_chunk_each(true);
    size_t in_use = mf_alloc_in_use();
    int bad[2] = {0, 0};
    mf_parallel_for(2, 1, allocate_in_chunk, bad);
    int threads = mf_parallel_last_threads();
    mf_parallel_set_one_chunk_each(false);
    assert_int_equal(threads, 2);
    assert_int_equal(bad[0] + bad[1], 0);
    assert_int_equal(mf_alloc_in_use(), in_use);
    mf_alloc_trim();
    assert_int_equal(mf_alloc_cached(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_blocks_are_aligned_and_writable),
        TEST(test_large_blocks_start_at_different_page_offsets),
        TEST(test_large_blocks_are_advised_for_huge_pages),
        TEST(test_freed_block_is_reused_and_counted),
        TEST(test_failure_hook_fails_the_nth_allocation),
        TEST(test_collect_due),
        TEST(test_chunks_of_a_parallel_job_may_allocate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
