/* test_render.c — a graph's picture on disk (graph/render.c) and the
 * whole-file write under it (core/io/write_file.c): the DOT file holds
 * mf_graph_dot's text; a write that fails leaves no file and names the
 * caller, the path and the reason; render says "not installed" only when
 * no 'dot' is on $PATH, and with Graphviz present writes the picture. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
        TEST(test_write_dot_and_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
