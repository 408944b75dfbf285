/* test_binary.c — elementwise binary ops: values, broadcasting, dtypes, errors. */
#include "testutil.h"

static MfTensor *run2(MfOpId op, MfTensor *a, MfTensor *b)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_binary(op, a, b, &out), MF_OK);
    return out;
}

static void test_add_same_shape(void **state)
{
    (void)state;
    int64_t s[2] = {2, 2};
    MfTensor *a = make_tensor(MF_FLOAT32, 2, s, (double[]){1, 2, 3, 4});
    MfTensor *b = make_tensor(MF_FLOAT32, 2, s, (double[]){10, 20, 30, 40});
    MfTensor *c = run2(MF_OP_ADD, a, b);
    assert_values(c, (double[]){11, 22, 33, 44}, 4, 0);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(c);
}

static void test_broadcast_row_and_column(void **state)
{
    (void)state;
    int64_t sa[2] = {3, 1}, sb[1] = {2};
    MfTensor *a = make_tensor(MF_FLOAT64, 2, sa, (double[]){1, 2, 3});
    MfTensor *b = make_tensor(MF_FLOAT64, 1, sb, (double[]){10, 20});
    MfTensor *c = run2(MF_OP_MUL, a, b);
    assert_int_equal(c->rank, 2);
    assert_int_equal(c->shape[0], 3);
    assert_int_equal(c->shape[1], 2);
    assert_values(c, (double[]){10, 20, 20, 40, 30, 60}, 6, 0);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(c);
}

static void test_int_floor_division_and_mod(void **state)
{
    (void)state;
    int64_t s[1] = {4};
    MfTensor *a = make_tensor(MF_INT32, 1, s, (double[]){7, -7, 7, -7});
    MfTensor *b = make_tensor(MF_INT32, 1, s, (double[]){2, 2, -2, -2});
    MfTensor *q = run2(MF_OP_DIV, a, b), *r = run2(MF_OP_MOD, a, b);
    assert_values(q, (double[]){3, -4, -4, 3}, 4, 0);
    assert_values(r, (double[]){1, 1, -1, -1}, 4, 0);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(q);
    mf_tensor_release(r);
}

static void test_errors(void **state)
{
    (void)state;
    int64_t s2[1] = {2}, s3[1] = {3};
    MfTensor *a = make_tensor(MF_FLOAT32, 1, s2, (double[]){1, 2});
    MfTensor *b = make_tensor(MF_FLOAT32, 1, s3, (double[]){1, 2, 3});
    MfTensor *i = make_tensor(MF_INT32, 1, s2, (double[]){1, 0});
    MfTensor *out = NULL;
    assert_int_equal(mf_binary(MF_OP_ADD, a, b, &out), MF_ESHAPE);
    assert_null(out);
    assert_error_contains("add: shapes (2,) and (3,) do not broadcast");
    assert_int_equal(mf_binary(MF_OP_ADD, a, i, &out), MF_EDTYPE);
    assert_error_contains("dtypes differ: float32 and int32");
    assert_int_equal(mf_binary(MF_OP_DIV, i, i, &out), MF_EARG);
    assert_error_contains("integer division by zero");
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(i);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_add_same_shape),
        TEST(test_broadcast_row_and_column),
        TEST(test_int_floor_division_and_mod),
        TEST(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
