/* test_format.c — NumPy-style printing (core/format.c): exact strings for
 * every dtype, float modes, summarising, wrapping, views, symbolic tensors,
 * and the out-of-memory path. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

#include "core/alloc.h"
#include "present/format.h"

static const MfPrintOptions defaults = MF_PRINT_DEFAULTS;

static void expect_tensor(const MfTensor *t, const MfPrintOptions *o, const char *want)
{
    MfStrBuf b = {0};
    assert_int_equal(mf_format_tensor(t, o, &b), MF_OK);
    assert_string_equal(b.data, want);
    mf_strbuf_free(&b);
}

static void expect_values(const MfTensor *t, const MfPrintOptions *o, const char *want)
{
    MfStrBuf b = {0};
    assert_int_equal(mf_format_values(t, o, &b), MF_OK);
    assert_string_equal(b.data, want);
    mf_strbuf_free(&b);
}

/* Makes a tensor of 'dt' from 'values', checks its values block, releases it. */
static void expect(MfDType dt, int rank, const int64_t *shape, const double *values,
                   const MfPrintOptions *o, const char *want)
{
    MfTensor *t = make_tensor(dt, rank, shape, values);
    expect_values(t, o, want);
    mf_tensor_release(t);
}

static void test_whole_floats_and_shape_line(void **state)
{
    (void)state;
    int64_t s[2] = {2, 2};
    MfTensor *t = make_tensor(MF_FLOAT32, 2, s, (double[]){1, 2, 3, 4});
    expect_tensor(t, &defaults, "[[1. 2.]\n [3. 4.]]\nshape=(2,2), dtype=float32");
    mf_tensor_release(t);
    int64_t s1[1] = {3};
    t = make_tensor(MF_FLOAT64, 1, s1, (double[]){1, 2, 3});
    expect_tensor(t, &defaults, "[1. 2. 3.]\nshape=(3,), dtype=float64");
    mf_tensor_release(t);
}

static void test_positional_floats(void **state)
{
    (void)state;
    int64_t s3[1] = {3}, s2[1] = {2};
    expect(MF_FLOAT32, 1, s3, (double[]){1.5, -2.25, 3}, &defaults, "[ 1.5  -2.25  3.  ]");
    expect(MF_FLOAT32, 1, s2, (double[]){0.1, 0.2}, &defaults, "[0.1 0.2]");
    expect(MF_FLOAT32, 1, s2, (double[]){1.0 / 3, 2.0 / 3}, &defaults, "[0.3333 0.6667]");
    expect(MF_FLOAT64, 1, s2, (double[]){123.456789, -0.5}, &defaults, "[123.4568  -0.5   ]");
    expect(MF_FLOAT32, 1, s2, (double[]){0.99999, 2}, &defaults, "[1. 2.]");
    expect(MF_FLOAT32, 1, s2, (double[]){-0.0, 1}, &defaults, "[-0.  1.]");
    expect(MF_FLOAT64, 1, s2, (double[]){1, 1000}, &defaults, "[   1. 1000.]");
    MfPrintOptions p2 = defaults;
    p2.precision = 2;
    expect(MF_FLOAT64, 1, s2, (double[]){1.0 / 3, 2.5}, &p2, "[0.33 2.5 ]");
    p2.precision = 0;
    expect(MF_FLOAT64, 1, s2, (double[]){1.4, 2.6}, &p2, "[1. 3.]");
}

static void test_scientific(void **state)
{
    (void)state;
    int64_t s2[1] = {2}, s3[1] = {3};
    expect(MF_FLOAT32, 1, s2, (double[]){1e-5, 1}, &defaults, "[1.e-05 1.e+00]");
    expect(MF_FLOAT32, 1, s2, (double[]){1.5e-5, 1}, &defaults, "[1.5e-05 1.0e+00]");
    expect(MF_FLOAT64, 1, s2, (double[]){1e8, 1}, &defaults, "[1.e+08 1.e+00]");
    expect(MF_FLOAT64, 1, s2, (double[]){1, 1001}, &defaults, "[1.000e+00 1.001e+03]");
    expect(MF_FLOAT64, 1, s2, (double[]){1e100, 1}, &defaults, "[1.e+100 1.e+000]");
    expect(MF_FLOAT64, 1, s3, (double[]){-1.23456e-7, 0, 5e9}, &defaults,
           "[-1.2346e-07  0.0000e+00  5.0000e+09]");
    expect(MF_FLOAT32, 1, s2, (double[]){0, 1e-5}, &defaults, "[0.e+00 1.e-05]");
}

static void test_nan_and_inf(void **state)
{
    (void)state;
    int64_t s3[1] = {3}, s2[1] = {2};
    expect(MF_FLOAT32, 1, s3, (double[]){DNAN, 1, -DINF}, &defaults, "[ nan   1. -inf]");
    expect(MF_FLOAT32, 1, s2, (double[]){DNAN, -DINF}, &defaults, "[ nan -inf]");
    expect(MF_FLOAT64, 1, s2, (double[]){DINF, 0.25}, &defaults, "[ inf 0.25]");
    expect(MF_FLOAT64, 1, s2, (double[]){DNAN, 1e-6}, &defaults, "[   nan 1.e-06]");
}

static void test_ints_and_bools(void **state)
{
    (void)state;
    int64_t s3[1] = {3}, s22[2] = {2, 2};
    expect(MF_INT32, 1, s3, (double[]){1, -20, 300}, &defaults, "[  1 -20 300]");
    expect(MF_BOOL, 2, s22, (double[]){1, 0, 0, 1}, &defaults, "[[ true false]\n [false  true]]");
    expect(MF_BOOL, 1, s3, (double[]){1, 1, 1}, &defaults, "[true true true]");
    int64_t big[2] = {INT64_MAX, INT64_MIN}, s2[1] = {2};
    MfTensor *t = mf_tensor_from_data(MF_INT64, 1, s2, big);
    expect_tensor(t, &defaults,
                  "[ 9223372036854775807 -9223372036854775808]\nshape=(2,), dtype=int64");
    mf_tensor_release(t);
}

static void test_rank0_and_empty(void **state)
{
    (void)state;
    MfTensor *t = mf_tensor_scalar(MF_FLOAT32, 3.5);
    expect_tensor(t, &defaults, "3.5\nshape=(), dtype=float32");
    mf_tensor_release(t);
    t = mf_tensor_scalar(MF_INT64, -7);
    expect_tensor(t, &defaults, "-7\nshape=(), dtype=int64");
    mf_tensor_release(t);
    t = mf_tensor_scalar(MF_BOOL, 0);
    expect_values(t, &defaults, "false");
    mf_tensor_release(t);
    int64_t s03[2] = {0, 3}, s20[2] = {2, 0};
    t = mf_tensor_new(MF_FLOAT32, 2, s03);
    expect_tensor(t, &defaults, "[]\nshape=(0,3), dtype=float32");
    mf_tensor_release(t);
    t = mf_tensor_new(MF_INT32, 2, s20);
    expect_values(t, &defaults, "[]");
    mf_tensor_release(t);
}

static void test_rank3_blocks(void **state)
{
    (void)state;
    int64_t s[3] = {2, 2, 2};
    expect(MF_INT32, 3, s, (double[]){0, 1, 2, 3, 4, 5, 6, 7}, &defaults,
           "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
}

static MfTensor *iota(MfDType dt, int rank, const int64_t *shape)
{
    MfTensor *t = mf_tensor_new(dt, rank, shape);
    assert_non_null(t);
    int64_t n = mf_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        if (dt == MF_INT32)
            ((int32_t *)t->storage->data)[i] = (int32_t)i;
        else
            ((float *)t->storage->data)[i] = (float)i;
    }
    return t;
}

static void test_summarise(void **state)
{
    (void)state;
    MfPrintOptions o = defaults;
    o.threshold = 5;
    o.edgeitems = 2;
    int64_t s1[1] = {10}, s2[2] = {10, 10}, s3[3] = {5, 2, 2};
    MfTensor *t = iota(MF_INT32, 1, s1);
    expect_values(t, &o, "[0 1 ... 8 9]");
    mf_tensor_release(t);
    t = iota(MF_INT32, 2, s2);
    expect_values(t, &o, "[[ 0  1 ...  8  9]\n [10 11 ... 18 19]\n ...\n"
                         " [80 81 ... 88 89]\n [90 91 ... 98 99]]");
    mf_tensor_release(t);
    o.edgeitems = 1;
    t = iota(MF_INT32, 3, s3);
    expect_values(t, &o, "[[[ 0  1]\n  [ 2  3]]\n\n ...\n\n [[16 17]\n  [18 19]]]");
    mf_tensor_release(t);
    int64_t big[1] = {2000};
    t = iota(MF_FLOAT32, 1, big);
    expect_values(t, &defaults,
                  "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]");
    mf_tensor_release(t);
}

static void test_wrap_rows(void **state)
{
    (void)state;
    int64_t s1[1] = {30}, s2[2] = {2, 6};
    MfTensor *t = iota(MF_FLOAT32, 1, s1);
    expect_values(t, &defaults,
                  "[ 0.  1.  2.  3.  4.  5.  6.  7.  8.  9. 10. 11. 12. 13. 14. 15. 16. 17.\n"
                  " 18. 19. 20. 21. 22. 23. 24. 25. 26. 27. 28. 29.]");
    mf_tensor_release(t);
    MfPrintOptions o = defaults;
    o.linewidth = 20;
    t = iota(MF_INT32, 2, s2);
    expect_values(t, &o, "[[ 0  1  2  3  4\n   5]\n [ 6  7  8  9 10\n  11]]");
    mf_tensor_release(t);
    o.linewidth = 1;
    int64_t s3[1] = {3};
    t = iota(MF_INT32, 1, s3);
    expect_values(t, &o, "[0\n 1\n 2]");
    mf_tensor_release(t);
}

static void test_strided_view(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3};
    MfTensor *t = make_tensor(MF_FLOAT32, 2, s, (double[]){1, 2, 3, 4, 5, 6});
    int64_t ts[2] = {3, 2}, tst[2] = {1, 3};
    MfTensor *v = mf_tensor_view(t, 2, ts, tst, 0);
    assert_non_null(v);
    expect_tensor(v, &defaults, "[[1. 4.]\n [2. 5.]\n [3. 6.]]\nshape=(3,2), dtype=float32");
    mf_tensor_release(v);
    int64_t cs[1] = {2}, cst[1] = {3};
    v = mf_tensor_view(t, 1, cs, cst, 2);
    expect_values(v, &defaults, "[3. 6.]");
    mf_tensor_release(v);
    mf_tensor_release(t);
}

static void test_symbolic(void **state)
{
    (void)state;
    int64_t s[2] = {-1, 3};
    MfTensor *t = mf_tensor_symbolic(MF_FLOAT32, 2, s, NULL, 0);
    assert_non_null(t);
    expect_tensor(t, &defaults, "<symbolic mf.Tensor shape=(?,3), dtype=float32>");
    MfStrBuf b = {0};
    assert_int_equal(mf_format_values(t, &defaults, &b), MF_EARG);
    assert_error_contains("print: a symbolic tensor has no values");
    mf_strbuf_free(&b);
    mf_tensor_release(t);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    int64_t s[1] = {4};
    MfTensor *t = make_tensor(MF_FLOAT32, 1, s, (double[]){1, 2, 3, 4});
    MfStrBuf b = {0};
    mf_alloc_fail_at(1);
    assert_int_equal(mf_format_tensor(t, &defaults, &b), MF_ENOMEM);
    mf_alloc_fail_at(0);
    assert_error_contains("print: out of memory");
    mf_strbuf_free(&b);
    assert_null(b.data);
    mf_tensor_release(t);
}

/* mf.set_printoptions' rule: ranges, math.huge for threshold only, messages. */
static void test_print_option_set(void **state)
{
    (void)state;
    MfPrintOptions o = defaults;
    assert_int_equal(mf_print_option_set(&o, "precision", true, 17, 17, "17"), MF_OK);
    assert_int_equal(o.precision, 17);
    assert_int_equal(mf_print_option_set(&o, "threshold", false, 0, HUGE_VAL, "inf"), MF_OK);
    assert_true(o.threshold == INT64_MAX);
    assert_int_equal(mf_print_option_set(&o, "linewidth", true, 1, 1, "1"), MF_OK);
    assert_int_equal(o.linewidth, 1);
    assert_int_equal(mf_print_option_set(&o, "edgeitems", true, 0, 0, "0"), MF_EARG);
    assert_error_contains("set_printoptions: edgeitems must be an integer from 1 to 1000000, "
                          "got 0");
    assert_int_equal(mf_print_option_set(&o, "precision", false, 0, 2.5, "2.5"), MF_EARG);
    assert_error_contains("precision must be an integer from 0 to 17, got 2.5");
    assert_int_equal(mf_print_option_set(&o, "edgeitems", false, 0, HUGE_VAL, "inf"), MF_EARG);
    assert_error_contains("edgeitems must be an integer from 1 to 1000000, got inf");
    assert_int_equal(mf_print_option_set(&o, "threshold", true, -5, -5, "-5"), MF_EARG);
    assert_error_contains("threshold must be an integer >= 0 (or math.huge), got -5");
    assert_int_equal(mf_print_option_set(&o, "linewidth", false, 0, NAN, "string"), MF_EARG);
    assert_error_contains("linewidth must be an integer from 1 to 1000000, got string");
    assert_int_equal(o.edgeitems, 3);   /* refused values change nothing */
    assert_string_equal(mf_print_option_names[2], "edgeitems");
    assert_null(mf_print_option_names[4]);
    assert_true(mf_print_option_get(&o, 0) == 17 && mf_print_option_get(&o, 3) == 1);
    assert_true(mf_print_option_get(&o, 1) == INT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_whole_floats_and_shape_line),
        TEST(test_positional_floats),
        TEST(test_scientific),
        TEST(test_nan_and_inf),
        TEST(test_ints_and_bools),
        TEST(test_rank0_and_empty),
        TEST(test_rank3_blocks),
        TEST(test_summarise),
        TEST(test_wrap_rows),
        TEST(test_strided_view),
        TEST(test_symbolic),
        TEST(test_out_of_memory),
        TEST(test_print_option_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
