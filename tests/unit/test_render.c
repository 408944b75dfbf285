/* test_render.c — a graph's picture on disk (graph/render.c) and the
 * whole-file write under it (core/io/write_file.c): the DOT file holds
 * mf_graph_dot's text; a write that fails leaves no file and names the
 * caller, the path and the reason; render says "not installed" only when
 * no 'dot' is on $PATH, and with Graphviz present writes the picture.
 * The safe-write rules: a FIFO refused, the mode kept, a write error seen
 * at commit, the pending list a signal handler empties, and the reaping of
 * a killed writer's temporary file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/io/write_file.h"
#include "graph/graph.h"
#include "testutil.h"

/* The whole content of 'path' (malloc'd), or NULL when it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = malloc(1 << 16);
    *len = fread(s, 1, (1 << 16) - 1, f);
    s[*len] = '\0';
    fclose(f);
    return s;
}

static void test_write_file_atomic(void **state)
{
    (void)state;
    char path[] = "/tmp/mf_write_file_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(mf_write_file_atomic("t", path, "abc\0def", 7), MF_OK);
    size_t len = 0;
    char *s = slurp(path, &len);
    assert_int_equal(len, 7);
    assert_memory_equal(s, "abc\0def", 7);
    free(s);
    remove(path);
    assert_int_equal(mf_write_file_atomic("plot", "/nonexistent-dir/x.svg", "a", 1), MF_EIO);
    assert_error_contains("plot: cannot write '/nonexistent-dir/x.svg': No such file or "
                          "directory");
}

/* A fresh directory for one test (static; removed by the caller). */
static const char *fresh_dir(void)
{
    static char dir[] = "/tmp/mf_safe_write_XXXXXX";
    memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
    assert_non_null(mkdtemp(dir));
    return dir;
}

static void test_safe_write_rules(void **state)
{
    (void)state;
    const char *dir = fresh_dir();
    char path[128], other[160];
    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(mf_write_file_atomic("t", path, "a", 1), MF_EIO);
    assert_error_contains("': it exists and is not a regular file");
    remove(path);
    /* the mode of the replaced file is kept */
    snprintf(path, sizeof path, "%s/ro", dir);
    assert_int_equal(mf_write_file_atomic("t", path, "a", 1), MF_OK);
    assert_int_equal(chmod(path, 0444), 0);
    assert_int_equal(mf_write_file_atomic("t", path, "bb", 2), MF_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0444);
    assert_int_equal(st.st_size, 2);
    /* a write that fails when the FILE is flushed (a 1-byte file size
     * limit, as a full disk) fails the commit; the old file stays */
    MfSafeWrite w;
    assert_int_equal(mf_safe_write_begin(&w, "t", path), MF_OK);
    snprintf(other, sizeof other, "%s", w.tmp);
    fputs("ccc", w.f);
    struct rlimit old, one;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    one = old;
    one.rlim_cur = 1;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &one), 0);
    MfStatus st2 = mf_safe_write_commit(&w);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    assert_int_equal(st2, MF_EIO);
    assert_error_contains("File too large (writing the temporary file '");
    assert_int_equal(access(other, F_OK), -1);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 2);
    /* the pending list: what a SIGTERM handler removes */
    assert_int_equal(mf_safe_write_begin(&w, "t", path), MF_OK);
    assert_int_equal(access(w.tmp, F_OK), 0);
    mf_write_file_remove_pending();
    assert_int_equal(access(w.tmp, F_OK), -1);
    mf_safe_write_abort(&w);
    /* a killed writer's file (its pid has ended) is reaped by the next write */
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    assert_true(child > 0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    snprintf(other, sizeof other, "%s.tmp.%ld.AbC123", path, (long)child);
    FILE *f = fopen(other, "w");
    assert_non_null(f);
    fclose(f);
    mf_write_file_reap(path);
    assert_int_equal(access(other, F_OK), -1);
    remove(path);
    assert_int_equal(rmdir(dir), 0);   /* nothing else left */
}

static void test_write_dot_and_render(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    assert_non_null(g);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfTensor *x = NULL, *y = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 1, (int64_t[]){3}, "x", &x), MF_OK);
    assert_int_equal(mf_binary(MF_OP_MUL, x, x, &y), MF_OK);
    char path[] = "/tmp/mf_render_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(mf_graph_write_dot(g, path), MF_OK);
    MfStrBuf want = {0};
    assert_int_equal(mf_graph_dot(g, &want), MF_OK);
    size_t len = 0;
    char *got = slurp(path, &len);
    assert_string_equal(got, want.data);
    free(got);
    mf_strbuf_free(&want);
    remove(path);
    assert_int_equal(mf_graph_write_dot(g, "/nonexistent-dir/g.dot"), MF_EIO);
    assert_error_contains("write_dot: cannot write '/nonexistent-dir/g.dot'");
    mf_err_clear();

    char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    setenv("PATH", "/nonexistent-dir", 1);   /* no 'dot' anywhere */
    assert_int_equal(mf_graph_render(g, "/tmp/never.png"), MF_EIO);
    assert_error_contains("render: Graphviz 'dot' is not installed");
    if (old) {
        setenv("PATH", old, 1);
        free(old);
    }
    mf_err_clear();
    char png[64];
    snprintf(png, sizeof png, "%s.png", path);
    MfStatus st = mf_graph_render(g, png);
    if (st == MF_OK) {   /* Graphviz is installed: a real PNG, and no .dot left */
        got = slurp(png, &len);
        assert_true(len > 8 && memcmp(got, "\x89PNG", 4) == 0);
        free(got);
        char src[80];
        snprintf(src, sizeof src, "%s.dot", png);
        assert_null(fopen(src, "r"));
        remove(png);
    } else {
        assert_error_contains("render: Graphviz 'dot' is not installed");
    }
    mf_tensor_release(x);
    mf_tensor_release(y);
    mf_graph_pop_default();
    mf_graph_release(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_write_file_atomic),
        TEST(test_safe_write_rules),
        TEST(test_write_dot_and_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
