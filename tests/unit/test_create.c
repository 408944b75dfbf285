/* test_create.c — creation helpers: fill (every dtype, exact int64), eye,
 * range (float and integer, directions, wide int64 spans), linspace, and
 * each error path's status and message, including absurd sizes and
 * out-of-memory. */
#include "testutil.h"

#include "core/alloc.h"
#include "core/create.h"

static void test_fill_dtypes(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3};
    MfDType dts[5] = {MF_FLOAT32, MF_FLOAT64, MF_INT32, MF_INT64, MF_BOOL};
    double expect[5] = {2.5, 2.5, 2, 2, 1};
    for (int k = 0; k < 5; k++) {
        MfTensor *t = NULL;
        assert_int_equal(mf_create_fill("fill", dts[k], 2, s, 2.5, &t), MF_OK);
        assert_int_equal(t->dtype, dts[k]);
        assert_int_equal(t->rank, 2);
        double e[6] = {expect[k], expect[k], expect[k], expect[k], expect[k], expect[k]};
        assert_values(t, e, 6, 0);
        mf_tensor_release(t);
    }
}

static void test_fill_int_exact_and_scalar(void **state)
{
    (void)state;
    int64_t s[1] = {3};
    int64_t big = ((int64_t)1 << 53) + 1;
    MfTensor *t = NULL, *z = NULL, *b = NULL;
    assert_int_equal(mf_create_fill_int("fill", MF_INT64, 1, s, big, &t), MF_OK);
    for (int i = 0; i < 3; i++)
        assert_true(mf_tensor_get_int(t, i) == big);
    assert_int_equal(mf_create_fill_int("zeros", MF_FLOAT32, 0, NULL, 0, &z), MF_OK);
    assert_int_equal(z->rank, 0);
    assert_values(z, (double[]){0}, 1, 0);
    assert_int_equal(mf_create_fill_int("ones", MF_BOOL, 1, s, 1, &b), MF_OK);
    assert_values(b, (double[]){1, 1, 1}, 3, 0);
    mf_tensor_release(t);
    mf_tensor_release(z);
    mf_tensor_release(b);
}

static void test_fill_errors(void **state)
{
    (void)state;
    int64_t big[2] = {1000000, 1000000}, neg[2] = {2, -1};
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    int64_t huge[3] = {1 << 30, 1 << 30, 1 << 30}; /* the product overflows int64 */
    MfTensor *t = NULL;
    assert_int_equal(mf_create_fill("zeros", MF_FLOAT32, 2, big, 0, &t), MF_ENOMEM);
    assert_null(t);
    assert_error_contains("zeros: shape (1000000,1000000) of float32 is too large");
    assert_int_equal(mf_create_fill("ones", MF_FLOAT64, 3, huge, 1, &t), MF_ENOMEM);
    assert_error_contains("ones: shape (1073741824,1073741824,1073741824) of float64 is too");
    assert_int_equal(mf_create_fill("fill", MF_INT32, 2, neg, 1, &t), MF_ESHAPE);
    assert_error_contains("fill: dimensions must be >= 0, got -1 for dimension 2");
    assert_int_equal(mf_create_fill("zeros", MF_INT32, 9, nine, 1, &t), MF_ESHAPE);
    assert_error_contains("zeros: rank must be 0..8, got 9");
    /* A zero dim makes an empty tensor however large the others are. */
    int64_t empty[2] = {0, (int64_t)1 << 50};
    assert_int_equal(mf_create_fill("zeros", MF_FLOAT32, 2, empty, 0, &t), MF_OK);
    assert_int_equal(mf_tensor_numel(t), 0);
    mf_tensor_release(t);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    int64_t s[1] = {4};
    MfTensor *t = NULL;
    /* A fresh tensor is one allocation (header, storage and data). */
    for (int64_t k = 1; k <= 1; k++) {
        mf_alloc_fail_at(k);
        assert_int_equal(mf_create_fill("ones", MF_FLOAT32, 1, s, 1, &t), MF_ENOMEM);
        mf_alloc_fail_at(0);
        assert_null(t);
        assert_error_contains("ones: tensor: out of memory");
    }
    mf_alloc_fail_at(1);
    assert_int_equal(mf_create_range_int(MF_INT32, 0, 4, 1, &t), MF_ENOMEM);
    mf_alloc_fail_at(0);
    assert_error_contains("range: ");
    assert_null(t);
}

static void test_eye(void **state)
{
    (void)state;
    MfTensor *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    assert_int_equal(mf_create_eye(MF_FLOAT32, 2, 3, &a), MF_OK);
    assert_values(a, (double[]){1, 0, 0, 0, 1, 0}, 6, 0);
    assert_int_equal(mf_create_eye(MF_INT64, 3, 2, &b), MF_OK);
    assert_int_equal(b->dtype, MF_INT64);
    assert_values(b, (double[]){1, 0, 0, 1, 0, 0}, 6, 0);
    assert_int_equal(mf_create_eye(MF_BOOL, 2, 2, &c), MF_OK);
    assert_values(c, (double[]){1, 0, 0, 1}, 4, 0);
    assert_int_equal(mf_create_eye(MF_FLOAT64, 0, 0, &d), MF_OK);
    assert_int_equal(mf_tensor_numel(d), 0);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(c);
    mf_tensor_release(d);
    assert_int_equal(mf_create_eye(MF_FLOAT32, -1, 2, &a), MF_ESHAPE);
    assert_error_contains("eye: sizes must be >= 0, got -1 x 2");
}

static void test_range_float(void **state)
{
    (void)state;
    MfTensor *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    assert_int_equal(mf_create_range(MF_FLOAT32, 1, 2, 0.25, &a), MF_OK);
    assert_values(a, (double[]){1, 1.25, 1.5, 1.75}, 4, 0);
    assert_int_equal(mf_create_range(MF_FLOAT64, 0, 1, 0.1, &b), MF_OK);
    assert_int_equal(mf_tensor_numel(b), 10);
    assert_values(b, (double[]){0, .1, .2, .3, .4, .5, .6, .7, .8, .9}, 10, 1e-12);
    assert_int_equal(mf_create_range(MF_FLOAT32, 3, 0, -1.5, &c), MF_OK);
    assert_values(c, (double[]){3, 1.5}, 2, 0);
    assert_int_equal(mf_create_range(MF_FLOAT32, 0, 3, -1, &d), MF_OK);
    assert_int_equal(d->rank, 1);
    assert_int_equal(d->shape[0], 0);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(c);
    mf_tensor_release(d);
}

static void test_range_int(void **state)
{
    (void)state;
    MfTensor *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    assert_int_equal(mf_create_range_int(MF_INT32, 0, 10, 3, &a), MF_OK);
    assert_int_equal(a->dtype, MF_INT32);
    assert_values(a, (double[]){0, 3, 6, 9}, 4, 0);
    assert_int_equal(mf_create_range_int(MF_INT64, 5, 0, -2, &b), MF_OK);
    assert_values(b, (double[]){5, 3, 1}, 3, 0);
    assert_int_equal(mf_create_range_int(MF_INT32, 5, 5, 1, &c), MF_OK);
    assert_int_equal(mf_tensor_numel(c), 0);
    /* The widest span: computed without signed overflow. */
    assert_int_equal(mf_create_range_int(MF_INT64, INT64_MIN, INT64_MAX, INT64_MAX, &d), MF_OK);
    assert_int_equal(mf_tensor_numel(d), 3);
    assert_true(mf_tensor_get_int(d, 0) == INT64_MIN);
    assert_true(mf_tensor_get_int(d, 1) == -1);
    assert_true(mf_tensor_get_int(d, 2) == INT64_MAX - 1);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(c);
    mf_tensor_release(d);
}

static void test_range_errors(void **state)
{
    (void)state;
    MfTensor *t = NULL;
    assert_int_equal(mf_create_range(MF_FLOAT32, 0, 1, 0, &t), MF_EARG);
    assert_null(t);
    assert_error_contains("range: delta must not be 0");
    assert_int_equal(mf_create_range_int(MF_INT32, 0, 1, 0, &t), MF_EARG);
    assert_error_contains("range: delta must not be 0");
    assert_int_equal(mf_create_range(MF_FLOAT64, 0, DINF, 1, &t), MF_EARG);
    assert_error_contains("range: start, limit and delta must be finite");
    assert_int_equal(mf_create_range(MF_FLOAT32, 0, 1e300, 1, &t), MF_ENOMEM);
    assert_error_contains("range: 1e+300 elements are too many");
    assert_int_equal(mf_create_range(MF_FLOAT32, 0, 1e12, 1, &t), MF_ENOMEM);
    assert_error_contains("range: shape (1000000000000,) of float32 is too large");
    assert_int_equal(mf_create_range_int(MF_INT32, 0, 3000000000LL, 1, &t), MF_EARG);
    assert_error_contains("does not fit int32 (pass {dtype = \"int64\"})");
    assert_int_equal(mf_create_range(MF_INT32, 0, 1, 1, &t), MF_EDTYPE);
    assert_error_contains("range: expected a float dtype here, got int32");
    assert_int_equal(mf_create_range_int(MF_BOOL, 0, 1, 1, &t), MF_EDTYPE);
    assert_error_contains("range: expected an integer dtype here, got bool");
    assert_null(t);
}

static void test_linspace(void **state)
{
    (void)state;
    MfTensor *a = NULL, *b = NULL, *c = NULL;
    assert_int_equal(mf_create_linspace(MF_FLOAT32, 0, 1, 5, &a), MF_OK);
    assert_values(a, (double[]){0, 0.25, 0.5, 0.75, 1}, 5, 0);
    assert_int_equal(mf_create_linspace(MF_FLOAT64, 0.1, 0.7, 7, &b), MF_OK);
    assert_true(mf_tensor_get(b, 6) == 0.7); /* the end point exactly */
    assert_values(b, (double[]){.1, .2, .3, .4, .5, .6, .7}, 7, 1e-15);
    assert_int_equal(mf_create_linspace(MF_FLOAT32, 3, 9, 1, &c), MF_OK);
    assert_values(c, (double[]){3}, 1, 0);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(c);
    assert_int_equal(mf_create_linspace(MF_FLOAT32, 0, 1, 0, &a), MF_EARG);
    assert_error_contains("linspace: n must be >= 1, got 0");
    assert_int_equal(mf_create_linspace(MF_INT32, 0, 1, 3, &a), MF_EDTYPE);
    assert_error_contains("linspace: expected float32 or float64, got int32");
    assert_null(a);
}

/* mf.range's dtype rule: integers give int32, otherwise float32; an asked
 * integer dtype needs integral values; 2^53 + 1 stays exact when given as
 * an integer; bool is refused. */
static void test_range_of(void **state)
{
    (void)state;
    MfTensor *t = NULL;
    assert_int_equal(mf_create_range_of(3, (double[]){1, 4, 1}, (int64_t[]){1, 4, 1}, true, -1,
                                        &t),
                     MF_OK);
    assert_int_equal(t->dtype, MF_INT32);
    assert_values(t, (double[]){1, 2, 3}, 3, 0);
    mf_tensor_release(t);
    /* tf.range's forms: (limit) and (start, limit) */
    assert_int_equal(mf_create_range_of(1, (double[]){3, 0, 0}, (int64_t[]){3, 0, 0}, true, -1,
                                        &t),
                     MF_OK);
    assert_values(t, (double[]){0, 1, 2}, 3, 0);
    mf_tensor_release(t);
    assert_int_equal(mf_create_range_of(2, (double[]){-1.5, 1, 0}, (int64_t[]){0, 0, 0}, false,
                                        -1, &t),
                     MF_OK);
    assert_values(t, (double[]){-1.5, -0.5, 0.5}, 3, 0);
    mf_tensor_release(t);
    assert_int_equal(mf_create_range_of(3, (double[]){0.5, 2, 1}, (int64_t[]){0, 0, 0}, false, -1,
                                        &t),
                     MF_OK);
    assert_int_equal(t->dtype, MF_FLOAT32);
    assert_values(t, (double[]){0.5, 1.5}, 2, 0);
    mf_tensor_release(t);
    assert_int_equal(mf_create_range_of(3, (double[]){1, 3, 1}, (int64_t[]){0, 0, 0}, false,
                                        MF_INT64, &t),
                     MF_OK);   /* 1.0, 3.0: integral floats are fine */
    assert_values(t, (double[]){1, 2}, 2, 0);
    mf_tensor_release(t);
    int64_t big = ((int64_t)1 << 53) + 1;
    assert_int_equal(mf_create_range_of(3, (double[]){(double)big, (double)big + 1, 1},
                                        (int64_t[]){big, big + 1, 1}, true, MF_INT64, &t),
                     MF_OK);
    assert_true(((int64_t *)mf_tensor_data(t))[0] == big);
    mf_tensor_release(t);
    assert_int_equal(mf_create_range_of(3, (double[]){1.5, 3, 1}, (int64_t[]){0, 0, 0}, false,
                                        MF_INT32, &t),
                     MF_EARG);
    assert_error_contains("range: dtype int32 needs integer start, limit and delta, got 1.5");
    assert_null(t);
    assert_int_equal(mf_create_range_of(3, (double[]){0, 3, 1}, (int64_t[]){0, 3, 1}, true, MF_BOOL,
                                        &t),
                     MF_EDTYPE);
    assert_error_contains("range: dtype bool is not a number type");
}

/* mf.constant(data, {dtype, shape}): the data as a view of the shape. */
static void test_reshaped_and_eye_sizes(void **state)
{
    (void)state;
    MfTensor *d = make_tensor(MF_FLOAT32, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4}), *t = NULL;
    assert_int_equal(mf_create_constant(d, -1, 2, (int64_t[]){2, 2}, &t), MF_OK);
    assert_int_equal(t->rank, 2);
    assert_values(t, (double[]){1, 2, 3, 4}, 4, 0);
    mf_tensor_release(t);
    assert_int_equal(mf_create_constant(d, MF_FLOAT32, -1, NULL, &t), MF_OK);
    assert_ptr_equal(t, d);   /* no shape: the data itself */
    mf_tensor_release(t);
    assert_int_equal(mf_create_constant(d, -1, 2, (int64_t[]){3, 1}, &t), MF_ESHAPE);
    assert_error_contains("constant: data has 4 element(s) (shape (4,)) but shape (3,1) needs 3");
    assert_null(t);
    assert_int_equal(mf_create_constant(d, MF_INT32, -1, NULL, &t), MF_EDTYPE);
    assert_error_contains("constant: data has dtype float32 but dtype int32 was asked (convert "
                          "with mf.cast)");
    assert_null(t);
    mf_tensor_release(d);
}

/* mf.fill's value rules (mf_create_fill_scalar): the dtype a value picks,
 * booleans only for bool, whole numbers only for integer dtypes, ranges. */
static void test_fill_scalar(void **state)
{
    (void)state;
    const int64_t two[] = {2};
    MfTensor *t = NULL;
    MfScalar num = {.x = 2.5, .dtype = -1};
    assert_int_equal(mf_create_fill_scalar("fill", -1, &num, 1, two, &t), MF_OK);
    assert_int_equal(t->dtype, MF_FLOAT32);
    assert_values(t, (double[]){2.5, 2.5}, 2, 0);
    mf_tensor_release(t);
    MfScalar yes = {.is_bool = true, .is_int = true, .i = 1, .dtype = -1};
    assert_int_equal(mf_create_fill_scalar("fill", -1, &yes, 1, two, &t), MF_OK);
    assert_int_equal(t->dtype, MF_BOOL);
    mf_tensor_release(t);
    MfScalar elem = {.is_int = true, .i = 7, .x = 7, .dtype = MF_INT32};   /* a tensor's */
    assert_int_equal(mf_create_fill_scalar("fill", -1, &elem, 1, two, &t), MF_OK);
    assert_int_equal(t->dtype, MF_INT32);
    mf_tensor_release(t);
    MfScalar whole = {.x = 3.0, .dtype = -1};
    assert_int_equal(mf_create_fill_scalar("fill", MF_INT64, &whole, 1, two, &t), MF_OK);
    assert_int_equal(mf_tensor_get_int(t, 1), 3);
    mf_tensor_release(t);
    assert_int_equal(mf_create_fill_scalar("fill", MF_INT32, &num, 1, two, &t), MF_EARG);
    assert_null(t);
    assert_error_contains("fill: the value for an integer dtype must be an integer, got 2.5");
    MfScalar huge = {.x = 1e300, .dtype = -1};
    assert_int_equal(mf_create_fill_scalar("fill", MF_INT64, &huge, 1, two, &t), MF_EARG);
    assert_error_contains("must be an integer, got 1e+300");
    assert_int_equal(mf_create_fill_scalar("fill", MF_FLOAT32, &yes, 1, two, &t), MF_EARG);
    assert_error_contains("fill: a boolean value does not fit dtype float32");
    assert_int_equal(mf_create_fill_scalar("fill", MF_BOOL, &num, 1, two, &t), MF_EARG);
    assert_error_contains("fill: a number value does not fit dtype bool");
    MfScalar big = {.is_int = true, .i = 3000000000LL, .dtype = -1};
    assert_int_equal(mf_create_fill_scalar("fill", MF_INT32, &big, 1, two, &t), MF_EARG);
    assert_error_contains("fill: the value 3000000000 does not fit int32");
}

/* zeros_like / ones_like: concrete for a known shape. */
static void test_like(void **state)
{
    (void)state;
    MfTensor *x = mf_tensor_new(MF_FLOAT64, 2, (const int64_t[]){2, 3}), *t = NULL;
    assert_non_null(x);
    assert_int_equal(mf_create_like("ones_like", x, MF_INT32, 1, &t), MF_OK);
    assert_int_equal(t->rank, 2);
    assert_int_equal(t->shape[1], 3);
    assert_int_equal(t->dtype, MF_INT32);
    assert_int_equal(mf_tensor_get_int(t, 5), 1);
    assert_non_null(t->storage);
    mf_tensor_release(t);
    assert_int_equal(mf_create_like("ones_like", x, MF_BOOL, 1, &t), MF_OK);
    assert_int_equal(mf_tensor_get_int(t, 0), 1);
    mf_tensor_release(t);
    mf_tensor_release(x);
}

/* fill's value given as a one-element tensor, and a shape given as a tensor. */
static void test_scalar_and_shape_of(void **state)
{
    (void)state;
    MfScalar v;
    MfTensor *b = mf_tensor_scalar(MF_BOOL, 1), *f = mf_tensor_scalar(MF_FLOAT64, 2.5);
    assert_int_equal(mf_create_scalar_of("fill", b, &v), MF_OK);
    assert_true(v.is_bool && v.is_int && v.i == 1 && v.dtype == MF_BOOL);
    assert_int_equal(mf_create_scalar_of("fill", f, &v), MF_OK);
    assert_true(!v.is_bool && !v.is_int && v.x == 2.5 && v.dtype == MF_FLOAT64);
    int64_t s2[1] = {2}, shape[MF_MAX_RANK];
    MfTensor *two = make_tensor(MF_INT64, 1, s2, (double[]){3, 0});
    assert_int_equal(mf_create_scalar_of("constant", two, &v), MF_EARG);
    assert_error_contains("constant: value must be a number, a boolean or a one-element tensor");
    int rank = -1;
    assert_int_equal(mf_create_shape_of("zeros", two, shape, &rank), MF_OK);
    assert_int_equal(rank, 2);
    assert_true(shape[0] == 3 && shape[1] == 0);
    assert_int_equal(mf_create_shape_of("zeros", f, shape, &rank), MF_EARG);
    assert_error_contains("zeros: a shape tensor must be a 1-D int32/int64 tensor of at most 8");
    MfTensor *neg = make_tensor(MF_INT32, 1, s2, (double[]){1, -1});
    assert_int_equal(mf_create_shape_of("ones", neg, shape, &rank), MF_EARG);
    assert_error_contains("ones: shape entry 2 must be >= 0, got -1");
    mf_tensor_release(neg);
    mf_tensor_release(two);
    mf_tensor_release(f);
    mf_tensor_release(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_fill_dtypes),
        TEST(test_fill_int_exact_and_scalar),
        TEST(test_fill_errors),
        TEST(test_out_of_memory),
        TEST(test_eye),
        TEST(test_range_float),
        TEST(test_range_int),
        TEST(test_range_errors),
        TEST(test_range_of),
        TEST(test_reshaped_and_eye_sizes),
        TEST(test_linspace),
        TEST(test_fill_scalar),
        TEST(test_like),
        TEST(test_scalar_and_shape_of),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
