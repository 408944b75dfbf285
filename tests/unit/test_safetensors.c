/* test_safetensors.c — the safetensors checkpoint layer (core/io): round trips
 * of every dtype (rank 0, empty, strided views), the exact bytes written,
 * metadata, determinism, argument errors, the atomic write (a simulated
 * failure after the temporary file, a failing rename) and every corrupt-file
 * error of the reader. Files live in a fresh directory under /tmp. */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/io/safetensors.h"

static char dir[64];
static char pathbuf[256];

static const char *tpath(const char *name)
{
    snprintf(pathbuf, sizeof pathbuf, "%s/%s", dir, name);
    return pathbuf;
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mf_st_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            char p[512];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (remove(p) != 0)
                rmdir(p);
        }
    if (d)
        closedir(d);
    return rmdir(dir);
}

/* How many files in the test directory have ".tmp." in their name. */
static int temp_files(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    return n;
}

/* Writes the raw bytes of a file: the 8-byte length 'hlen', 'hbytes' bytes
 * of 'header', then 'data'. */
static void write_raw(const char *path, uint64_t hlen, const char *header, size_t hbytes,
                      const void *data, size_t ndata)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (int b = 0; b < 8; b++)
        fputc((int)((hlen >> (8 * b)) & 0xff), f);
    fwrite(header, 1, hbytes, f);
    if (ndata)
        fwrite(data, 1, ndata, f);
    fclose(f);
}

/* A file with a correct length prefix for 'header'. */
static void write_st(const char *path, const char *header, const void *data, size_t ndata)
{
    write_raw(path, strlen(header), header, strlen(header), data, ndata);
}

/* Reads 'path' expecting failure 'code' with 'part' in the message. */
static void expect_load_error(const char *path, MfStatus code, const char *part)
{
    int n = 7;
    char **names = (char **)1;
    MfTensor **ts = (MfTensor **)1;
    assert_int_equal(mf_safetensors_read(path, &n, &names, &ts), code);
    assert_int_equal(n, 0);
    assert_null(names);
    assert_null(ts);
    assert_error_contains(part);
}

static void assert_same(const MfTensor *got, const MfTensor *want)
{
    assert_int_equal(got->dtype, want->dtype);
    assert_int_equal(got->rank, want->rank);
    for (int d = 0; d < want->rank; d++)
        assert_int_equal(got->shape[d], want->shape[d]);
    assert_true(mf_tensor_is_contiguous(got));
    for (int64_t i = 0; i < mf_tensor_numel(want); i++) {
        if (mf_dtype_is_float(want->dtype))
            assert_true(mf_tensor_get(got, i) == mf_tensor_get(want, i));
        else
            assert_int_equal(mf_tensor_get_int(got, i), mf_tensor_get_int(want, i));
    }
}

static void test_round_trip_all_dtypes(void **state)
{
    (void)state;
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s03[2] = {0, 3}, s0[1] = {0};
    double f[6] = {1.5, -2, 3.25, 1e30, -0.0, 7};
    double i32[3] = {-2147483648.0, 0, 2147483647.0};
    double b[3] = {1, 0, 1};
    MfTensor *in[7] = {
        make_tensor(MF_FLOAT32, 2, s23, f),
        mf_tensor_scalar(MF_FLOAT64, 0.1),
        make_tensor(MF_INT32, 1, s3, i32),
        mf_tensor_new(MF_INT64, 1, s3),
        make_tensor(MF_BOOL, 1, s3, b),
        mf_tensor_new(MF_FLOAT32, 2, s03),
        mf_tensor_new(MF_INT64, 1, s0),
    };
    int64_t *big = mf_tensor_data(in[3]);
    big[0] = INT64_MIN;
    big[1] = ((int64_t)1 << 53) + 1;
    big[2] = -5;
    const char *names[7] = {"w", "lr", "i32", "step", "mask", "empty", "none"};
    assert_int_equal(mf_safetensors_write(tpath("all.st"), 7, names, in, NULL), MF_OK);
    int n;
    char **rn;
    MfTensor **rt;
    assert_int_equal(mf_safetensors_read(tpath("all.st"), &n, &rn, &rt), MF_OK);
    assert_int_equal(n, 7);
    const char *sorted[7] = {"empty", "i32", "lr", "mask", "none", "step", "w"};
    const int which[7] = {5, 2, 1, 4, 6, 3, 0};
    for (int i = 0; i < 7; i++) {
        assert_string_equal(rn[i], sorted[i]);
        assert_same(rt[i], in[which[i]]);
    }
    assert_int_equal(rt[2]->rank, 0);
    mf_safetensors_free(n, rn, rt);
    for (int i = 0; i < 7; i++)
        mf_tensor_release(in[i]);
    assert_int_equal(temp_files(), 0);
}

static void test_strided_views(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3};
    double v[6] = {1, 2, 3, 4, 5, 6};
    MfTensor *base = make_tensor(MF_FLOAT64, 2, s, v);
    int64_t ts[2] = {3, 2}, tst[2] = {1, 3};
    MfTensor *tr = mf_tensor_view(base, 2, ts, tst, 0);       /* transpose */
    int64_t cs[1] = {2}, cst[1] = {3};
    MfTensor *col = mf_tensor_view(base, 1, cs, cst, 2);      /* column 3 */
    MfTensor *in[2] = {tr, col};
    const char *names[2] = {"t", "c"};
    assert_int_equal(mf_safetensors_write(tpath("views.st"), 2, names, in, NULL), MF_OK);
    int n;
    char **rn;
    MfTensor **rt;
    assert_int_equal(mf_safetensors_read(tpath("views.st"), &n, &rn, &rt), MF_OK);
    assert_int_equal(n, 2);
    double want_c[2] = {3, 6}, want_t[6] = {1, 4, 2, 5, 3, 6};
    assert_values(rt[0], want_c, 2, 0);
    assert_values(rt[1], want_t, 6, 0);
    assert_int_equal(rt[1]->shape[0], 3);
    mf_safetensors_free(n, rn, rt);
    mf_tensor_release(col);
    mf_tensor_release(tr);
    mf_tensor_release(base);
}

static unsigned char *slurp(const char *path, long *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)*size + 1);
    assert_int_equal(fread(buf, 1, (size_t)*size, f), (size_t)*size);
    buf[*size] = 0;
    fclose(f);
    return buf;
}

/* The exact bytes: length prefix, padded header with sorted keys, data
 * ordered by element size (aligned), little-endian values. */
static void test_exact_bytes(void **state)
{
    (void)state;
    int64_t s1[1] = {1}, s2[1] = {2};
    double one[1] = {1}, two[2] = {1, 0};
    MfTensor *in[2] = {make_tensor(MF_BOOL, 1, s2, two), make_tensor(MF_FLOAT64, 1, s1, one)};
    const char *names[2] = {"a", "b"};
    const char *meta[] = {"k", "v", NULL};
    assert_int_equal(mf_safetensors_write(tpath("exact.st"), 2, names, in, meta), MF_OK);
    long size;
    unsigned char *buf = slurp(tpath("exact.st"), &size);
    const char *json = "{\"__metadata__\":{\"k\":\"v\"},"
                       "\"a\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[8,10]},"
                       "\"b\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}";
    size_t jl = strlen(json), hl = (jl + 7) / 8 * 8;
    uint64_t hlen = 0;
    for (int b = 0; b < 8; b++)
        hlen |= (uint64_t)buf[b] << (8 * b);
    assert_int_equal(hlen, hl);
    assert_int_equal(size, (long)(8 + hl + 10));
    assert_memory_equal(buf + 8, json, jl);
    for (size_t i = jl; i < hl; i++)
        assert_int_equal(buf[8 + i], ' ');
    const unsigned char le_one[8] = {0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
    assert_memory_equal(buf + 8 + hl, le_one, 8);
    assert_int_equal(buf[8 + hl + 8], 1);
    assert_int_equal(buf[8 + hl + 9], 0);
    free(buf);
    mf_tensor_release(in[0]);
    mf_tensor_release(in[1]);
}

static void test_deterministic_and_metadata(void **state)
{
    (void)state;
    int64_t s[1] = {2};
    double v[2] = {3, 4};
    MfTensor *x = make_tensor(MF_INT32, 1, s, v), *y = mf_tensor_scalar(MF_FLOAT32, 2);
    MfTensor *in1[2] = {x, y}, *in2[2] = {y, x};
    const char *n1[2] = {"x", "y"}, *n2[2] = {"y", "x"};
    const char *m1[] = {"step", "10", "format", "pt", NULL}, *m2[] = {"format", "pt", "step",
                                                                   "10", NULL};
    assert_int_equal(mf_safetensors_write(tpath("d1.st"), 2, n1, in1, m1), MF_OK);
    assert_int_equal(mf_safetensors_write(tpath("d2.st"), 2, n2, in2, m2), MF_OK);
    long a, b;
    unsigned char *fa = slurp(tpath("d1.st"), &a), *fb = slurp(tpath("d2.st"), &b);
    assert_int_equal(a, b);
    assert_memory_equal(fa, fb, (size_t)a);
    free(fa);
    free(fb);
    int n;
    char **rn, **meta;
    MfTensor **rt;
    assert_int_equal(mf_safetensors_read_meta(tpath("d1.st"), &n, &rn, &rt, &meta), MF_OK);
    assert_string_equal(meta[0], "format");
    assert_string_equal(meta[1], "pt");
    assert_string_equal(meta[2], "step");
    assert_string_equal(meta[3], "10");
    assert_null(meta[4]);
    mf_safetensors_free(n, rn, rt);
    mf_safetensors_free_metadata(meta);
    const char *none[1] = {NULL};
    assert_int_equal(mf_safetensors_write(tpath("d1.st"), 0, NULL, NULL, none), MF_OK);
    assert_int_equal(mf_safetensors_read_meta(tpath("d1.st"), &n, &rn, &rt, &meta), MF_OK);
    assert_int_equal(n, 0);
    assert_null(meta[0]);
    mf_safetensors_free(n, rn, rt);
    mf_safetensors_free_metadata(meta);
    mf_tensor_release(x);
    mf_tensor_release(y);
}

static void test_write_argument_errors(void **state)
{
    (void)state;
    MfTensor *x = mf_tensor_scalar(MF_FLOAT32, 1);
    int64_t s[1] = {3};
    MfTensor *sym = mf_tensor_symbolic(MF_FLOAT32, 1, s, NULL, 0);
    MfTensor *two[2] = {x, x};
    const char *dup[2] = {"a", "a"}, *empty[1] = {""}, *reserved[1] = {"__metadata__"};
    const char *p = tpath("args.st");
    assert_int_equal(mf_safetensors_write(p, 2, dup, two, NULL), MF_EARG);
    assert_error_contains("save: the name 'a' is given twice; names must be unique");
    assert_int_equal(mf_safetensors_write(p, 1, empty, two, NULL), MF_EARG);
    assert_error_contains("tensor 1 has no name");
    assert_int_equal(mf_safetensors_write(p, 1, reserved, two, NULL), MF_EARG);
    assert_error_contains("'__metadata__' is reserved");
    MfTensor *s1[1] = {sym};
    assert_int_equal(mf_safetensors_write(p, 1, dup, s1, NULL), MF_EARG);
    assert_error_contains("'a' is a graph (symbolic) tensor");
    const char *odd[] = {"k", NULL}, *mdup[] = {"k", "1", "k", "2", NULL};
    assert_int_equal(mf_safetensors_write(p, 1, dup, two, odd), MF_EARG);
    assert_error_contains("metadata key 'k' has no value");
    assert_int_equal(mf_safetensors_write(p, 1, dup, two, mdup), MF_EARG);
    assert_error_contains("metadata key 'k' is given twice");
    assert_int_equal(mf_safetensors_write(tpath("no/such/dir.st"), 1, dup, two, NULL), MF_EIO);
    assert_error_contains("cannot create the temporary file");
    assert_int_equal(access(p, F_OK), -1);
    assert_int_equal(temp_files(), 0);
    mf_tensor_release(sym);
    mf_tensor_release(x);
}

/* A failure after the temporary file is complete leaves the old file. */
static void test_interrupted_save(void **state)
{
    (void)state;
    const char *names[1] = {"w"};
    MfTensor *v1 = mf_tensor_scalar(MF_FLOAT32, 1), *v2 = mf_tensor_scalar(MF_FLOAT32, 2);
    char p[256];
    snprintf(p, sizeof p, "%s", tpath("ckpt.st"));
    assert_int_equal(mf_safetensors_write(p, 1, names, &v1, NULL), MF_OK);
    mf_ckpt_fail_after_write = 1;
    MfStatus st = mf_safetensors_write(p, 1, names, &v2, NULL);
    mf_ckpt_fail_after_write = 0;
    assert_int_equal(st, MF_EIO);
    assert_error_contains("simulated failure after writing the temporary file");
    assert_int_equal(temp_files(), 0);
    int n;
    char **rn;
    MfTensor **rt;
    assert_int_equal(mf_safetensors_read(p, &n, &rn, &rt), MF_OK);
    assert_int_equal(n, 1);
    assert_true(mf_tensor_get(rt[0], 0) == 1.0);
    mf_safetensors_free(n, rn, rt);
    /* A directory as the target: refused before anything is written. */
    snprintf(p, sizeof p, "%s", tpath("adir"));
    assert_int_equal(mkdir(p, 0700), 0);
    char inner[300];
    snprintf(inner, sizeof inner, "%s/x.st", p);
    assert_int_equal(mf_safetensors_write(inner, 1, names, &v1, NULL), MF_OK);
    assert_int_equal(mf_safetensors_write(p, 1, names, &v2, NULL), MF_EIO);
    assert_error_contains("not a regular file");
    assert_int_equal(temp_files(), 0);
    assert_int_equal(access(inner, F_OK), 0);
    expect_load_error(p, MF_EIO, "not a regular file");
    assert_int_equal(remove(inner), 0);
    mf_tensor_release(v1);
    mf_tensor_release(v2);
}

static void test_file_level_errors(void **state)
{
    (void)state;
    expect_load_error(tpath("missing.st"), MF_EIO, "load: cannot open the file: No such file");
    const char *p = tpath("bad.st");
    FILE *f = fopen(p, "wb");
    fwrite("abcde", 1, 5, f);
    fclose(f);
    expect_load_error(p, MF_EIO, "file too short: 5 bytes");
    write_raw(p, 1000, "{}", 2, NULL, 0);
    expect_load_error(p, MF_EIO, "header length 1000 goes beyond the end of the file (2 bytes");
    write_raw(p, UINT64_MAX, "{}", 2, NULL, 0);
    expect_load_error(p, MF_EIO, "goes beyond the end of the file");
    write_st(p, "{\"w\": {\"dtype\": \"F32\",", NULL, 0);
    expect_load_error(p, MF_EIO, "the header is not valid JSON");
    write_st(p, "{} x", NULL, 0);
    expect_load_error(p, MF_EIO, "the header is not valid JSON");
    write_st(p, "", NULL, 0);
    expect_load_error(p, MF_EIO, "the header is not valid JSON");
    write_raw(p, 4, "{}\0 ", 4, NULL, 0);
    expect_load_error(p, MF_EIO, "not valid JSON (a NUL byte");
    write_st(p, "[1, 2]", NULL, 0);
    expect_load_error(p, MF_EIO, "the header is JSON but not an object");
    write_st(p, "{}  ", NULL, 0);
    int n;
    char **rn;
    MfTensor **rt;
    assert_int_equal(mf_safetensors_read(p, &n, &rn, &rt), MF_OK);
    assert_int_equal(n, 0);
    mf_safetensors_free(n, rn, rt);
}

static void test_entry_errors(void **state)
{
    (void)state;
    const char *p = tpath("entry.st");
    float four[4] = {1, 2, 3, 4};
    write_st(p, "{\"w\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[0,4]}}", four, 4);
    expect_load_error(p, MF_EDTYPE, "load: tensor 'w' has dtype I16; moonflow reads F32, F64, "
                      "F16, BF16, I32, I64, U8, BOOL");
    write_st(p, "{\"w\":{\"dtype\":\"U16\",\"shape\":[2],\"data_offsets\":[0,4]}}", four, 4);
    expect_load_error(p, MF_EDTYPE, "tensor 'w' has dtype U16");
    write_st(p, "{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", four, 4);
    expect_load_error(p, MF_EIO, "tensor 'w' has no \"dtype\" string");
    write_st(p, "{\"w\":[1]}", NULL, 0);
    expect_load_error(p, MF_EIO, "tensor 'w': expected an object");
    write_st(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":4,\"data_offsets\":[0,16]}}", four, 16);
    expect_load_error(p, MF_EIO, "tensor 'w' has no \"shape\" array");
    write_st(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", four, 4);
    expect_load_error(p, MF_EIO, "shape entries must be non-negative integers");
    write_st(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", four, 4);
    expect_load_error(p, MF_EIO, "shape entries must be non-negative integers");
    write_st(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],"
                "\"data_offsets\":[0,4]}}", four, 4);
    expect_load_error(p, MF_EIO, "tensor 'w' has 9 dims; moonflow tensors have at most 8");
    write_st(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", four, 4);
    expect_load_error(p, MF_EIO, "\"data_offsets\" must be two non-negative integers");
    write_st(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", four, 4);
    expect_load_error(p, MF_EIO, "data_offsets [4, 0] end before they begin");
    write_st(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,12]}}", four, 12);
    expect_load_error(p, MF_EIO,
                      "tensor 'w': shape (2,) of F32 needs 8 bytes but data_offsets [0, 12] "
                      "span 12");
    write_st(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],"
                "\"data_offsets\":[0,4]}}", four, 4);
    expect_load_error(p, MF_EIO,
                      "tensor 'w': shape (4294967296,4294967296,4294967296) is too large");
    write_st(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", four, 8);
    expect_load_error(p, MF_EIO, "tensor name 'w' appears twice");
    write_st(p, "{\"__metadata__\":{\"k\":1}}", NULL, 0);
    expect_load_error(p, MF_EIO, "\"__metadata__\" entry 'k' is not a string");
    write_st(p, "{\"__metadata__\":[]}", NULL, 0);
    expect_load_error(p, MF_EIO, "\"__metadata__\" must be an object of strings");
    unsigned char bools[2] = {1, 2};
    write_st(p, "{\"b\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[0,2]}}", bools, 2);
    expect_load_error(p, MF_EIO, "BOOL tensor 'b' holds byte 2 at element 2; expected 0 or 1");
}

static void test_layout_errors(void **state)
{
    (void)state;
    const char *p = tpath("layout.st");
    float data[6] = {1, 2, 3, 4, 5, 6};
    write_st(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", data, 12);
    expect_load_error(p, MF_EIO, "tensors 'a' and 'b' overlap: data_offsets [0, 8] and [4, 12]");
    write_st(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", data, 12);
    expect_load_error(p, MF_EIO, "a gap of 4 bytes before tensor 'b'");
    write_st(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", data, 8);
    expect_load_error(p, MF_EIO, "a gap of 4 bytes before tensor 'a'");
    write_st(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]}}", data, 10);
    expect_load_error(p, MF_EIO, "truncated data: tensor 'a' ends at byte 12 of the data "
                                 "section, which holds 10 bytes");
    write_st(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[1000000,1000004]}}",
             data, 8);
    expect_load_error(p, MF_EIO, "a gap of 999996 bytes before tensor 'b'");
    write_st(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", data, 6);
    expect_load_error(p, MF_EIO, "trailing garbage: 2 bytes after the last tensor's data");
    write_st(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                "\"c\":{\"dtype\":\"I32\",\"shape\":[0],\"data_offsets\":[4,4]}}", data, 4);
    int n;
    char **rn;
    MfTensor **rt;
    assert_int_equal(mf_safetensors_read(p, &n, &rn, &rt), MF_OK);
    assert_int_equal(n, 3);
    assert_true(mf_tensor_get(rt[1], 0) == 1.0);
    assert_int_equal(rt[2]->dtype, MF_INT32);
    mf_safetensors_free(n, rn, rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_round_trip_all_dtypes), TEST(test_strided_views),
        TEST(test_exact_bytes),           TEST(test_deterministic_and_metadata),
        TEST(test_write_argument_errors), TEST(test_interrupted_save),
        TEST(test_file_level_errors),     TEST(test_entry_errors),
        TEST(test_layout_errors),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
