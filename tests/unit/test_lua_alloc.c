/* test_lua_alloc.c — repl/lua_alloc.c, the allocator of moonflow's Lua state:
 * release builds keep small blocks on free lists; sanitizer builds
 * (MF_ALLOC_NO_CACHE) must not, or AddressSanitizer cannot see a Lua object
 * of 256 bytes or less used after the collector freed it (issue #35 M5).
 * The allocator is one static-free file of repl/ without lua.h, so the test
 * compiles it in rather than linking the whole face. */
#include "testutil.h"

#include "repl/lua_alloc.c"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#ifdef UNDER_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* Sizes of Lua objects the collector frees: short strings, tables, boxes. */
static const size_t small_sizes[] = {1, 24, 40, 56, 128, 256};

#ifdef MF_ALLOC_NO_CACHE
/* A freed small block goes back to the system at once. */
static void test_small_blocks_are_not_kept(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof small_sizes / sizeof *small_sizes; i++) {
        char *p = lmf_lua_alloc(NULL, NULL, 0, small_sizes[i]);
        assert_non_null(p);
        memset(p, 1, small_sizes[i]);
        lmf_lua_alloc(NULL, p, small_sizes[i], 0);
        assert_null(free_lists[class_of(small_sizes[i])]);
#ifdef UNDER_ASAN
        assert_true(__asan_address_is_poisoned(p));
#endif
    }
}
#else
/* The release build's free lists: a freed block of a class comes back. */
static void test_small_blocks_are_reused(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof small_sizes / sizeof *small_sizes; i++) {
        void *p = lmf_lua_alloc(NULL, NULL, 0, small_sizes[i]);
        assert_non_null(p);
        lmf_lua_alloc(NULL, p, small_sizes[i], 0);
        void *q = lmf_lua_alloc(NULL, NULL, 0, small_sizes[i]);
        assert_ptr_equal(p, q);
        lmf_lua_alloc(NULL, q, small_sizes[i], 0);
    }
}
#endif

/* Growing and shrinking across the small limit keeps the contents. */
static void test_realloc_keeps_contents(void **state)
{
    (void)state;
    char *p = lmf_lua_alloc(NULL, NULL, 0, 10);
    assert_non_null(p);
    memcpy(p, "moonflow!", 10);
    p = lmf_lua_alloc(NULL, p, 10, 1000);
    assert_non_null(p);
    assert_string_equal(p, "moonflow!");
    p = lmf_lua_alloc(NULL, p, 1000, 20);
    assert_non_null(p);
    assert_string_equal(p, "moonflow!");
    assert_null(lmf_lua_alloc(NULL, p, 20, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#ifdef MF_ALLOC_NO_CACHE
        TEST(test_small_blocks_are_not_kept),
#else
        TEST(test_small_blocks_are_reused),
#endif
        TEST(test_realloc_keeps_contents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
