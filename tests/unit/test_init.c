/* test_init.c — the table of named initialisers (core/init.c: mf_init_defs,
 * mf_init_find, mf_init_run, mf_init_constant), which mf.initializers
 * binds: each name's options and defaults, each kind's draw, the dtype and
 * stddev checks, and constant's fill / reshape / cast. The math of variance
 * scaling and orthogonal matrices is tested in test_variable.c. */
#include "testutil.h"

#include "core/init.h"
#include "core/rng.h"

static void test_find_and_options(void **state)
{
    (void)state;
    assert_int_equal(mf_init_ndefs, 13);
    assert_null(mf_init_find("bogus"));
    assert_null(mf_init_find(NULL));
    const MfInitDef *d = mf_init_find("random_uniform");
    assert_non_null(d);
    assert_int_equal(d->kind, MF_INIT_KIND_RANDOM_UNIFORM);
    assert_string_equal(d->keys[0], "minval");
    assert_string_equal(d->keys[2], "seed");
    assert_null(d->keys[3]);
    assert_true(d->dflt[0] == -0.05 && d->dflt[1] == 0.05);
    d = mf_init_find("he_uniform");   /* Keras: VarianceScaling(2, fan_in, uniform) */
    assert_true(d->scale == 2 && d->mode == MF_FAN_IN && d->dist == MF_INIT_UNIFORM);
    d = mf_init_find("glorot_normal");
    assert_true(d->scale == 1 && d->mode == MF_FAN_AVG && d->dist == MF_INIT_TRUNCATED_NORMAL);
    d = mf_init_find("orthogonal");
    assert_string_equal(d->keys[0], "gain");
    assert_true(d->dflt[0] == 1);
    assert_null(mf_init_find("zeros")->keys[0]);
}

static void test_run_fill_and_random(void **state)
{
    (void)state;
    int64_t s[2] = {40, 50};
    MfTensor *t = NULL, *u = NULL;
    assert_int_equal(mf_init_run(mf_init_find("ones"), NULL, 0, 2, s, MF_INT32, &t), MF_OK);
    assert_int_equal(t->dtype, MF_INT32);
    assert_true(mf_tensor_get(t, 1999) == 1);
    mf_tensor_release(t);
    double opt[3] = {2.0, 3.0};   /* random_uniform in [2, 3) */
    const MfInitDef *d = mf_init_find("random_uniform");
    assert_int_equal(mf_init_run(d, opt, 5, 2, s, MF_FLOAT64, &t), MF_OK);
    assert_int_equal(mf_init_run(d, opt, 5, 2, s, MF_FLOAT64, &u), MF_OK);
    for (int64_t i = 0; i < 2000; i++) {
        double x = mf_tensor_get(t, i);
        assert_true(x >= 2 && x < 3);
        assert_true(x == mf_tensor_get(u, i));   /* the same seed, the same values */
    }
    mf_tensor_release(t);
    mf_tensor_release(u);
    double normal[3] = {10.0, 0.5};
    assert_int_equal(mf_init_run(mf_init_find("truncated_normal"), normal, 1, 2, s, MF_FLOAT32,
                                 &t),
                     MF_OK);
    for (int64_t i = 0; i < 2000; i++)
        assert_true(fabs(mf_tensor_get(t, i) - 10) <= 1.0 + 1e-6);   /* within 2 stddev */
    mf_tensor_release(t);
    assert_int_equal(mf_init_run(mf_init_find("lecun_uniform"), NULL, 3, 2, s, MF_FLOAT32, &t),
                     MF_OK);
    double limit = sqrt(3.0 / 40);
    for (int64_t i = 0; i < 2000; i++)
        assert_true(fabs(mf_tensor_get(t, i)) <= limit);
    mf_tensor_release(t);
}

static void test_run_errors(void **state)
{
    (void)state;
    int64_t s[1] = {4};
    MfTensor *t = NULL;
    double bad[3] = {0, -1};
    assert_int_equal(mf_init_run(mf_init_find("random_normal"), bad, 1, 1, s, MF_FLOAT32, &t),
                     MF_EARG);
    assert_error_contains("random_normal: stddev must be >= 0, got -1");
    assert_null(t);
    double ok[3] = {0, 1};
    assert_int_equal(mf_init_run(mf_init_find("random_normal"), ok, 1, 1, s, MF_INT32, &t),
                     MF_EDTYPE);
    assert_error_contains("random_normal: expected a float dtype (float32 or float64), got int32");
    assert_int_equal(mf_init_run(mf_init_find("random_uniform"), ok, 1, 1, s, MF_BOOL, &t),
                     MF_EDTYPE);
    assert_error_contains("random_uniform: expected a float or integer dtype, got bool");
    assert_int_equal(mf_init_run(mf_init_find("random_uniform"), ok, 1, 1, s, MF_INT64, &t),
                     MF_OK);   /* integers in [0, 1): zeros */
    mf_tensor_release(t);
    assert_int_equal(mf_init_run(mf_init_find("constant"), ok, 1, 1, s, MF_FLOAT32, &t),
                     MF_EARG);
}

static void test_constant(void **state)
{
    (void)state;
    int64_t one = 1, four = 4, s22[2] = {2, 2}, s3[1] = {3};
    double v4[4] = {1, 2, 3, 4}, seven = 7;
    MfTensor *scalar = make_tensor(MF_FLOAT32, 1, &one, &seven);
    MfTensor *vec = make_tensor(MF_FLOAT32, 1, &four, v4);
    MfTensor *t = NULL;
    assert_int_equal(mf_init_constant(scalar, 2, s22, MF_INT64, &t), MF_OK);   /* a fill */
    assert_int_equal(t->dtype, MF_INT64);
    assert_values(t, (const double[]){7, 7, 7, 7}, 4, 0);
    mf_tensor_release(t);
    assert_int_equal(mf_init_constant(vec, 2, s22, MF_FLOAT64, &t), MF_OK);   /* reshape, cast */
    assert_int_equal(t->dtype, MF_FLOAT64);
    assert_int_equal(t->rank, 2);
    assert_values(t, v4, 4, 0);
    mf_tensor_release(t);
    assert_int_equal(mf_init_constant(vec, 1, s3, MF_FLOAT32, &t), MF_ESHAPE);
    assert_error_contains("constant: the value has shape (4,) (4 elements), which does not fill "
                          "shape (3,) (3 elements)");
    assert_null(t);
    mf_tensor_release(scalar);
    mf_tensor_release(vec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_find_and_options),
        TEST(test_run_fill_and_random),
        TEST(test_run_errors),
        TEST(test_constant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
