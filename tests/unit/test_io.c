/* test_io.c — core/io readers: mf_read_csv (header, columns, dtypes, every
 * error path with its line and column) and mf_read_idx (each type code,
 * plain and gzip, every validation error), and the step and scalar value a
 * summary takes as a tensor. Files are written to /tmp. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "core/alloc.h"
#include "core/io/events.h"
#include "core/io/io.h"
#include "graph/graph.h"
#include "testutil.h"

static char tmp_path[64];

/* Writes 'n' bytes to a fresh temporary file; returns its path (static). */
static const char *write_tmp(const void *bytes, size_t n)
{
    strcpy(tmp_path, "/tmp/mf_test_io_XXXXXX");
    int fd = mkstemp(tmp_path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bytes, n), (ssize_t)n);
    close(fd);
    return tmp_path;
}

static const char *write_text(const char *text)
{
    return write_tmp(text, strlen(text));
}

static const char *write_gzip(const void *bytes, size_t n)
{
    strcpy(tmp_path, "/tmp/mf_test_io_XXXXXX");
    int fd = mkstemp(tmp_path);
    assert_true(fd >= 0);
    gzFile gz = gzdopen(fd, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, bytes, (unsigned)n), (int)n);
    assert_int_equal(gzclose(gz), Z_OK);
    return tmp_path;
}

static MfCsvOptions csv_opts(int header, MfDType dt)
{
    return (MfCsvOptions){.header = header, .dtype = dt};
}

static MfTensor *csv_ok(const char *text, const MfCsvOptions *opt)
{
    MfTensor *t = NULL;
    const char *path = write_text(text);
    MfStatus st = mf_read_csv(path, opt, &t);
    unlink(path);
    if (st != MF_OK)
        print_error("%s\n", mf_err_msg());
    assert_int_equal(st, MF_OK);
    assert_int_equal(t->rank, 2);
    return t;
}

static void csv_fails(const char *text, const MfCsvOptions *opt, MfStatus code,
                      const char *part)
{
    MfTensor *t = (MfTensor *)1;
    const char *path = write_text(text);
    assert_int_equal(mf_read_csv(path, opt, &t), code);
    unlink(path);
    assert_null(t);
    assert_error_contains(part);
}

static void test_csv_header_auto(void **state)
{
    (void)state;
    MfCsvOptions o = csv_opts(-1, MF_FLOAT32);
    MfTensor *t = csv_ok("\xEF\xBB\xBFx, y\n1,2\n\n 3 ,\"4\"\r\n", &o);
    assert_int_equal(t->shape[0], 2);
    assert_int_equal(t->shape[1], 2);
    assert_values(t, (double[]){1, 2, 3, 4}, 4, 0);
    mf_tensor_release(t);
    t = csv_ok("1,2\n3,4", &o); /* no header, no final newline */
    assert_values(t, (double[]){1, 2, 3, 4}, 4, 0);
    mf_tensor_release(t);
    o.header = 1;
    t = csv_ok("1,2\n3,4\n", &o);
    assert_values(t, (double[]){3, 4}, 2, 0);
    mf_tensor_release(t);
}

static void test_csv_columns_and_dtypes(void **state)
{
    (void)state;
    MfCsvColumn cols[3] = {{3, NULL}, {0, "a"}, {0, "q\"d"}};
    MfCsvOptions o = {.header = -1, .columns = cols, .ncolumns = 3, .dtype = MF_INT64};
    MfTensor *t = csv_ok("a,name,c,\"q\"\"d\"\n1,x,9000000000,4\n-2,y,3,5\n", &o);
    assert_int_equal(t->dtype, MF_INT64);
    assert_int_equal(t->shape[1], 3);
    assert_int_equal(mf_tensor_get_int(t, 0), 9000000000LL);
    assert_values(t, (double[]){9000000000.0, 1, 4, 3, -2, 5}, 6, 0);
    mf_tensor_release(t);
    MfCsvOptions f = csv_opts(0, MF_FLOAT64);
    t = csv_ok("0.1,nan,-1e3\n", &f);
    assert_values(t, (double[]){0.1, DNAN, -1000}, 3, 0);
    mf_tensor_release(t);
    f.dtype = MF_INT32;
    t = csv_ok("7,-8\n", &f);
    assert_int_equal(t->dtype, MF_INT32);
    assert_values(t, (double[]){7, -8}, 2, 0);
    mf_tensor_release(t);
}

static void test_csv_parse_errors(void **state)
{
    (void)state;
    MfCsvOptions o = csv_opts(-1, MF_FLOAT32);
    csv_fails("a,b\n1,2\n3,zz\n", &o, MF_EARG, ":3: column 2: expected a float32 number, got 'zz'");
    csv_fails("1,2\n3\n", &o, MF_EARG, ":2: expected 2 fields (as on the first line), got 1");
    csv_fails("1,2\n3,4,5\n", &o, MF_EARG, ":2: expected 2 fields");
    csv_fails("1,2\n3,\n", &o, MF_EARG, ":2: column 2: empty field (expected float32)");
    csv_fails("1,\"2\n", &o, MF_EARG, ":1: column 2: unterminated quote");
    csv_fails("1,\"2\" 3\n", &o, MF_EARG, ":1: column 2: text after the closing quote");
    csv_fails("", &o, MF_EARG, "is empty");
    csv_fails(" \r\n\n", &o, MF_EARG, "is empty");
    csv_fails("a,b\n\n", &o, MF_EARG, "has no data rows");
    MfCsvOptions i32 = csv_opts(0, MF_INT32);
    csv_fails("1,3000000000\n", &i32, MF_EARG,
              ":1: column 2: '3000000000' is out of the int32 range (use dtype = \"int64\")");
    MfCsvOptions f32 = csv_opts(0, MF_FLOAT32);
    csv_fails("1,0x10\n", &f32, MF_EARG, ":1: column 2: expected a float32 number, got '0x10'");
    csv_fails("1,,3\n4,5,6\n", &o, MF_EARG, ":1: column 2: empty field"); /* not a header */
    csv_fails("1.5\n", &i32, MF_EARG, "got '1.5'");
}

static void test_csv_option_errors(void **state)
{
    (void)state;
    MfCsvColumn by_index[1] = {{3, NULL}}, by_name[1] = {{0, "zz"}};
    MfCsvOptions o = {.header = -1, .columns = by_index, .ncolumns = 1, .dtype = MF_FLOAT32};
    csv_fails("a,b\n1,2\n", &o, MF_EARG, "column 3 out of range");
    csv_fails("a,b\n1,2\n", &o, MF_EARG, "(columns are 1-based: 1..2)");
    /* the number as given, at both ends of int64 too (not cut to an int) */
    int64_t bad[] = {0, -1, INT64_MIN, (INT64_C(1) << 32) + 1};
    const char *said[] = {"column 0 out", "column -1 out", "column -9223372036854775808 out",
                          "column 4294967297 out"};
    for (int i = 0; i < 4; i++) {
        by_index[0].number = bad[i];
        csv_fails("a,b\n1,2\n", &o, MF_EARG, said[i]);
    }
    o.columns = by_name;
    csv_fails("a,b\n1,2\n", &o, MF_EARG, "has no column named 'zz'");
    o.header = 0;
    csv_fails("a,b\n1,2\n", &o, MF_EARG, "column 'zz' is selected by name, but header = false");
    MfCsvOptions b = csv_opts(-1, MF_BOOL);
    MfTensor *t = NULL;
    assert_int_equal(mf_read_csv("/tmp/unused.csv", &b, &t), MF_EARG);
    assert_error_contains("dtype must be float32, float64, int32 or int64, got bool");
    MfCsvOptions f = csv_opts(-1, MF_FLOAT32);
    assert_int_equal(mf_read_csv("/nonexistent/dir/x.csv", &f, &t), MF_EIO);
    assert_null(t);
    assert_error_contains("read_csv: cannot open '/nonexistent/dir/x.csv': No such file");
    assert_int_equal(mf_read_csv("/", &f, &t), MF_EIO);
    assert_error_contains("read_csv: cannot read '/': Is a directory");
}

static void test_csv_out_of_memory(void **state)
{
    (void)state;
    MfCsvOptions o = csv_opts(-1, MF_FLOAT32);
    const char *path = write_text("1,2\n3,4\n");
    MfTensor *t = NULL;
    mf_alloc_fail_at(1);
    MfStatus st = mf_read_csv(path, &o, &t);
    mf_alloc_fail_at(0);
    unlink(path);
    assert_int_equal(st, MF_ENOMEM);
    assert_null(t);
    mf_err_clear();
}

/* An IDX header for 'type' with 'rank' dims, followed by 'payload'. */
static size_t idx_file(unsigned char *buf, int type, int rank, const uint32_t *dims,
                       const void *payload, size_t n)
{
    size_t k = 0;
    buf[k++] = 0;
    buf[k++] = 0;
    buf[k++] = (unsigned char)type;
    buf[k++] = (unsigned char)rank;
    for (int d = 0; d < rank; d++)
        for (int s = 24; s >= 0; s -= 8)
            buf[k++] = (unsigned char)(dims[d] >> s);
    if (n)
        memcpy(buf + k, payload, n);
    return k + n;
}

static MfTensor *idx_ok(const unsigned char *bytes, size_t n, bool gzip)
{
    MfTensor *t = NULL;
    const char *path = gzip ? write_gzip(bytes, n) : write_tmp(bytes, n);
    MfStatus st = mf_read_idx(path, &t);
    unlink(path);
    if (st != MF_OK)
        print_error("%s\n", mf_err_msg());
    assert_int_equal(st, MF_OK);
    return t;
}

static void idx_fails(const unsigned char *bytes, size_t n, bool gzip, const char *part)
{
    MfTensor *t = (MfTensor *)1;
    const char *path = gzip ? write_gzip(bytes, n) : write_tmp(bytes, n);
    assert_int_not_equal(mf_read_idx(path, &t), MF_OK);
    unlink(path);
    assert_null(t);
    assert_error_contains(part);
}

static void test_idx_ubyte_plain_and_gzip(void **state)
{
    (void)state;
    unsigned char buf[64];
    const unsigned char px[6] = {0, 7, 128, 255, 1, 2};
    size_t n = idx_file(buf, 0x08, 2, (uint32_t[]){3, 2}, px, 6);
    for (int gz = 0; gz < 2; gz++) {
        MfTensor *t = idx_ok(buf, n, gz);
        assert_int_equal(t->dtype, MF_UINT8);
        assert_int_equal(t->rank, 2);
        assert_int_equal(t->shape[0], 3);
        assert_int_equal(t->shape[1], 2);
        assert_values(t, (double[]){0, 7, 128, 255, 1, 2}, 6, 0);
        mf_tensor_release(t);
    }
}

static void test_idx_types(void **state)
{
    (void)state;
    unsigned char buf[64];
    const unsigned char sb[2] = {0xFF, 0x05}, sh[4] = {0xFE, 0xD4, 0x00, 0x07},
                        in[4] = {0xFF, 0xFE, 0xEE, 0x90}, fl[4] = {0x3F, 0xC0, 0, 0},
                        db[8] = {0x3F, 0xB9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9A};
    struct { int type; const unsigned char *p; size_t n; int64_t len; MfDType dt; double v0; }
        cases[] = {{0x09, sb, 2, 2, MF_INT32, -1}, {0x0B, sh, 4, 2, MF_INT32, -300},
                   {0x0C, in, 4, 1, MF_INT32, -70000}, {0x0D, fl, 4, 1, MF_FLOAT32, 1.5},
                   {0x0E, db, 8, 1, MF_FLOAT64, 0.1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = idx_file(buf, cases[i].type, 1, (uint32_t[]){(uint32_t)cases[i].len},
                            cases[i].p, cases[i].n);
        MfTensor *t = idx_ok(buf, n, i % 2);
        assert_int_equal(t->dtype, cases[i].dt);
        assert_int_equal(t->shape[0], cases[i].len);
        assert_true(mf_tensor_get(t, 0) == cases[i].v0);
        mf_tensor_release(t);
    }
}

static void test_idx_errors(void **state)
{
    (void)state;
    unsigned char buf[64];
    const unsigned char px[4] = {1, 2, 3, 4};
    size_t n = idx_file(buf, 0x08, 2, (uint32_t[]){2, 2}, px, 4);
    idx_fails(buf, n - 1, false, "is truncated: dims (2,2) need 4 data bytes, the file has 3");
    idx_fails(buf, n - 1, true, "is truncated");
    buf[n] = 9;
    idx_fails(buf, n + 1, false, "has trailing bytes after the 4 data bytes");
    idx_fails(buf, n + 1, true, "has trailing bytes");
    idx_fails(buf, 6, false, "the header ends inside its 2 dimensions");
    idx_fails(buf, 2, false, "is too short");
    idx_fails(buf, 0, false, "is empty");
    idx_fails((const unsigned char *)"\x1f\x8b garbage", 10, false, "cannot read");
    idx_fails((const unsigned char *)"\x01\x02\x08\x01", 4, false,
              "is not an IDX file: magic number 0x01020801");
    idx_fails((const unsigned char *)"\0\0\x0a\x01", 4, false, "unknown IDX type code 0x0a");
    idx_fails((const unsigned char *)"\0\0\x08\x09", 4, false, "9 dimensions in the header");
    idx_fails((const unsigned char *)"\0\0\x08\x00", 4, false, "0 dimensions in the header");
    n = idx_file(buf, 0x0E, 3, (uint32_t[]){0xFFFFFFFF, 0xFFFFFFFF, 4}, NULL, 0);
    idx_fails(buf, n, false, "in the header are too large");
    MfTensor *t = NULL;
    assert_int_equal(mf_read_idx("/nonexistent/t.idx", &t), MF_EIO);
    assert_error_contains("read_idx: cannot open '/nonexistent/t.idx': No such file");
    assert_int_equal(mf_read_idx("/", &t), MF_EIO);
    assert_error_contains("read_idx: cannot read '/'");
}

static void test_idx_out_of_memory(void **state)
{
    (void)state;
    unsigned char buf[64];
    const unsigned char px[4] = {1, 2, 3, 4};
    size_t n = idx_file(buf, 0x08, 1, (uint32_t[]){4}, px, 4);
    const char *path = write_tmp(buf, n);
    MfTensor *t = NULL;
    mf_alloc_fail_at(1);
    MfStatus st = mf_read_idx(path, &t);
    mf_alloc_fail_at(0);
    unlink(path);
    assert_int_equal(st, MF_ENOMEM);
    assert_null(t);
    mf_err_clear();
}

/* A summary's step and scalar value given as tensors: one element, an
 * integer dtype for the step, a value (not a graph tensor). */
static void test_summary_values(void **state)
{
    (void)state;
    MfTensor *step = mf_tensor_scalar(MF_INT64, 7), *x = mf_tensor_scalar(MF_FLOAT32, 0.5);
    int64_t s = 0;
    double v = 0;
    assert_int_equal(mf_event_step_of("scalar", step, "?", &s), MF_OK);
    assert_int_equal(s, 7);
    assert_int_equal(mf_event_step_of("histogram", x, "?", &s), MF_EARG);
    assert_error_contains("histogram: step must be an integer or a one-element integer tensor "
                          "(e.g. mf.train.global_step()), got float32");
    assert_int_equal(mf_event_step_of("scalar", NULL, "string", &s), MF_EARG);
    assert_error_contains("got string");
    assert_int_equal(mf_event_value_of(x, "?", &v), MF_OK);
    assert_true(v == 0.5);
    MfTensor *b = mf_tensor_scalar(MF_BOOL, 1);
    assert_int_equal(mf_event_value_of(b, "?", &v), MF_EARG);
    assert_error_contains("scalar: value must be a number or a one-element numeric tensor, got "
                          "a tensor of another size or dtype");
    MfGraph *g = mf_graph_new();
    MfTensor *sym = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_INT64, 0, NULL, "step", &sym), MF_OK);
    assert_int_equal(mf_event_step_of("scalar", sym, "?", &s), MF_EARG);
    assert_error_contains("got a symbolic tensor");
    assert_int_equal(mf_event_value_of(sym, "?", &v), MF_EARG);
    assert_error_contains("got a symbolic tensor (sess:run it first)");
    MfTensor *all[] = {step, x, b, sym};
    for (int i = 0; i < 4; i++)
        mf_tensor_release(all[i]);
    mf_graph_release(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_csv_header_auto),          TEST(test_csv_columns_and_dtypes),
        TEST(test_csv_parse_errors),         TEST(test_csv_option_errors),
        TEST(test_csv_out_of_memory),        TEST(test_idx_ubyte_plain_and_gzip),
        TEST(test_idx_types),                TEST(test_idx_errors),
        TEST(test_idx_out_of_memory),        TEST(test_summary_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
