/* test_fuzz_regress.c — replays every kept file-fuzzer input through the
 * same checks the fuzzers apply (tests/fuzz/fuzz_one.h): the seed corpora in
 * tests/fuzz/corpus/<format>/ and the inputs that once failed, kept in
 * tests/fuzz/regress/<format>/. Run from the repository root (make test). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#define FUZZ_FAIL(msg) fail_msg("%s (input %s)", (msg), current_input)
static const char *current_input = "";
#include "tests/fuzz/fuzz_one.h"

typedef void (*FuzzOne)(const uint8_t *data, size_t size);

/* Reads the whole file at 'path' into a malloc'ed buffer. */
static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *buf = NULL;
    size_t cap = 0;
    *size = 0;
    for (;;) {
        if (*size == cap) {
            cap = cap ? cap * 2 : 4096;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        size_t k = fread(buf + *size, 1, cap - *size, f);
        *size += k;
        if (k == 0)
            break;
    }
    fclose(f);
    return buf;
}

/* Runs 'one' on every regular file of 'dir'; returns how many. */
static int replay_dir(const char *dir, FuzzOne one)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t size;
        uint8_t *data = slurp(path, &size);
        current_input = path;
        one(data, size);
        free(data);
        mf_err_clear();
        count++;
    }
    closedir(d);
    return count;
}

static void replay(const char *format, FuzzOne one, int min_inputs)
{
    char dir[128];
    snprintf(dir, sizeof dir, "tests/fuzz/corpus/%s", format);
    int n = replay_dir(dir, one);
    snprintf(dir, sizeof dir, "tests/fuzz/regress/%s", format);
    n += replay_dir(dir, one);
    /* the directories are found (the test runs from the repository root) */
    assert_true(n >= min_inputs);
}

static void test_replay_csv(void **state)
{
    (void)state;
    replay("csv", fuzz_one_csv, 3);
}

static void test_replay_idx(void **state)
{
    (void)state;
    replay("idx", fuzz_one_idx, 3);
}

static void test_replay_safetensors(void **state)
{
    (void)state;
    replay("safetensors", fuzz_one_safetensors, 3);
}

/* The IDX header of a 17-byte file claims 2^33 int32 values (32 GB, under
 * the 1 TB cap): the reader must fail as truncated without allocating them
 * (found by fuzz_idx, which ran out of memory on it). */
static void test_idx_huge_dims_short_file(void **state)
{
    (void)state;
    static const uint8_t file[] = {0, 0, 0x0c, 2, 0, 0x10, 0, 0, 0, 0, 0x20, 0, 1, 2, 3, 4};
    const char *path = fuzz_path("idx-huge");
    fuzz_write(path, file, sizeof file, 0);
    MfTensor *t = (MfTensor *)1;
    assert_int_equal(mf_read_idx(path, &t), MF_EARG);
    assert_null(t);
    assert_error_contains("is truncated: dims (1048576,8192) need 34359738368 data bytes");
    unlink(path);
}

/* Dims (4278190082, 134217728, 0) hold no element, yet their partial product
 * is over the cap: the refusal must name read_idx (found by fuzz_idx). */
static void test_idx_huge_dims_with_zero(void **state)
{
    (void)state;
    static const uint8_t file[] = {0, 0, 0x0c, 3, 0xff, 0, 0, 2, 8, 0, 0, 0, 0, 0, 0, 0};
    const char *path = fuzz_path("idx-zero");
    fuzz_write(path, file, sizeof file, 0);
    MfTensor *t = NULL;
    assert_int_not_equal(mf_read_idx(path, &t), MF_OK);
    assert_null(t);
    assert_error_contains("read_idx: ");
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_replay_csv),
        TEST(test_replay_idx),
        TEST(test_replay_safetensors),
        TEST(test_idx_huge_dims_short_file),
        TEST(test_idx_huge_dims_with_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
