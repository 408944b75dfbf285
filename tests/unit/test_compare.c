/* test_compare.c — comparisons, logic, float classes, SelectV2 and Cast:
 * values, broadcasting, strided inputs, every dtype, and each error path. */
#include "core/ops/compare.h"
#include "testutil.h"

static MfTensor *run2(MfOpId op, MfTensor *a, MfTensor *b)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_binary(op, a, b, &out), MF_OK);
    assert_int_equal(out->dtype, MF_BOOL);
    return out;
}

static MfTensor *run1(MfOpId op, MfTensor *a)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_unary(op, a, &out), MF_OK);
    assert_int_equal(out->dtype, MF_BOOL);
    return out;
}

static MfTensor *cast(MfTensor *x, MfDType dt)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_cast(x, dt, &out), MF_OK);
    assert_int_equal(out->dtype, dt);
    return out;
}

static void release_all(MfTensor **ts, int n)
{
    for (int i = 0; i < n; i++)
        mf_tensor_release(ts[i]);
}

/* Each comparison, in each numeric dtype, on the same pair of inputs. */
static void test_comparisons_all_dtypes(void **state)
{
    (void)state;
    int64_t s[1] = {4};
    static const MfOpId ops[6] = {MF_OP_EQUAL, MF_OP_NOT_EQUAL, MF_OP_LESS,
                                  MF_OP_LESS_EQUAL, MF_OP_GREATER, MF_OP_GREATER_EQUAL};
    static const double expect[6][4] = {
        {0, 1, 0, 1}, {1, 0, 1, 0}, {1, 0, 0, 0}, {1, 1, 0, 1}, {0, 0, 1, 0}, {0, 1, 1, 1},
    };
    for (MfDType dt = MF_FLOAT32; dt <= MF_INT64; dt++) {
        MfTensor *a = make_tensor(dt, 1, s, (double[]){1, 2, 3, -4});
        MfTensor *b = make_tensor(dt, 1, s, (double[]){2, 2, -3, -4});
        for (int k = 0; k < 6; k++) {
            MfTensor *r = run2(ops[k], a, b);
            assert_values(r, expect[k], 4, 0);
            mf_tensor_release(r);
        }
        release_all((MfTensor *[]){a, b}, 2);
    }
}

static void test_compare_broadcast_and_scalar(void **state)
{
    (void)state;
    int64_t sa[2] = {3, 1}, sb[1] = {2};
    MfTensor *a = make_tensor(MF_INT32, 2, sa, (double[]){1, 2, 3});
    MfTensor *b = make_tensor(MF_INT32, 1, sb, (double[]){2, 1});
    MfTensor *r = run2(MF_OP_GREATER, a, b);
    assert_int_equal(r->rank, 2);
    assert_int_equal(r->shape[0], 3);
    assert_int_equal(r->shape[1], 2);
    assert_values(r, (double[]){0, 0, 0, 1, 1, 1}, 6, 0);
    MfTensor *two = mf_tensor_scalar(MF_INT32, 2);
    MfTensor *r2 = run2(MF_OP_EQUAL, two, a);
    assert_values(r2, (double[]){0, 1, 0}, 3, 0);
    release_all((MfTensor *[]){a, b, r, two, r2}, 5);
}

/* A transposed (non-contiguous) view compared with a contiguous tensor. */
static void test_compare_strided(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3}, ts[2] = {3, 2}, tstr[2] = {1, 3};
    MfTensor *a = make_tensor(MF_FLOAT64, 2, s, (double[]){1, 2, 3, 4, 5, 6});
    MfTensor *at = mf_tensor_view(a, 2, ts, tstr, 0); /* [[1,4],[2,5],[3,6]] */
    MfTensor *b = make_tensor(MF_FLOAT64, 2, ts, (double[]){1, 5, 2, 5, 0, 6});
    MfTensor *r = run2(MF_OP_LESS_EQUAL, at, b);
    assert_values(r, (double[]){1, 1, 1, 1, 0, 1}, 6, 0);
    release_all((MfTensor *[]){a, at, b, r}, 4);
}

static void test_nan_comparisons_and_bool_equality(void **state)
{
    (void)state;
    int64_t s[1] = {2};
    MfTensor *a = make_tensor(MF_FLOAT32, 1, s, (double[]){DNAN, 1});
    MfTensor *eq = run2(MF_OP_EQUAL, a, a), *ne = run2(MF_OP_NOT_EQUAL, a, a);
    assert_values(eq, (double[]){0, 1}, 2, 0);
    assert_values(ne, (double[]){1, 0}, 2, 0);
    MfTensor *p = make_tensor(MF_BOOL, 1, s, (double[]){1, 0});
    MfTensor *q = make_tensor(MF_BOOL, 1, s, (double[]){1, 1});
    MfTensor *pq = run2(MF_OP_EQUAL, p, q);
    assert_values(pq, (double[]){1, 0}, 2, 0);
    release_all((MfTensor *[]){a, eq, ne, p, q, pq}, 6);
}

static void test_logic(void **state)
{
    (void)state;
    int64_t sa[2] = {2, 1}, sb[1] = {2};
    MfTensor *a = make_tensor(MF_BOOL, 2, sa, (double[]){1, 0});
    MfTensor *b = make_tensor(MF_BOOL, 1, sb, (double[]){1, 0});
    MfTensor *land = run2(MF_OP_LOGICAL_AND, a, b), *lor = run2(MF_OP_LOGICAL_OR, a, b);
    assert_values(land, (double[]){1, 0, 0, 0}, 4, 0);
    assert_values(lor, (double[]){1, 1, 1, 0}, 4, 0);
    MfTensor *lnot = run1(MF_OP_LOGICAL_NOT, land);
    assert_values(lnot, (double[]){0, 1, 1, 1}, 4, 0);
    release_all((MfTensor *[]){a, b, land, lor, lnot}, 5);
}

static void test_float_classes(void **state)
{
    (void)state;
    int64_t s[1] = {4};
    for (MfDType dt = MF_FLOAT32; dt <= MF_FLOAT64; dt++) {
        MfTensor *x = make_tensor(dt, 1, s, (double[]){1, DNAN, DINF, -DINF});
        MfTensor *n = run1(MF_OP_IS_NAN, x), *i = run1(MF_OP_IS_INF, x);
        MfTensor *f = run1(MF_OP_IS_FINITE, x);
        assert_values(n, (double[]){0, 1, 0, 0}, 4, 0);
        assert_values(i, (double[]){0, 0, 1, 1}, 4, 0);
        assert_values(f, (double[]){1, 0, 0, 0}, 4, 0);
        release_all((MfTensor *[]){x, n, i, f}, 4);
    }
}

static void test_where_broadcast(void **state)
{
    (void)state;
    int64_t sc[2] = {2, 1}, sx[1] = {3};
    MfTensor *cond = make_tensor(MF_BOOL, 2, sc, (double[]){1, 0});
    MfTensor *x = make_tensor(MF_INT64, 1, sx, (double[]){1, 2, 3});
    MfTensor *y = make_tensor(MF_INT64, 0, NULL, (double[]){-1});
    MfTensor *r = NULL;
    assert_int_equal(mf_where(cond, x, y, &r), MF_OK);
    assert_int_equal(r->dtype, MF_INT64);
    assert_int_equal(r->rank, 2);
    assert_int_equal(r->shape[0], 2);
    assert_int_equal(r->shape[1], 3);
    assert_values(r, (double[]){1, 2, 3, -1, -1, -1}, 6, 0);
    release_all((MfTensor *[]){cond, x, y, r}, 4);
}

/* Contiguous same-shape path, each element size (1, 4 and 8 bytes), and a
 * strided condition. */
static void test_where_dtypes_and_strided(void **state)
{
    (void)state;
    int64_t s[1] = {3}, s2[2] = {3, 2}, one[1] = {3}, st[1] = {2};
    MfTensor *cbase = make_tensor(MF_BOOL, 2, s2, (double[]){1, 0, 0, 0, 1, 0});
    MfTensor *cond = mf_tensor_view(cbase, 1, one, st, 0); /* column 1: {1, 0, 1} */
    for (MfDType dt = MF_FLOAT32; dt <= MF_BOOL; dt++) {
        MfTensor *x = make_tensor(dt, 1, s, (double[]){1, 1, 1});
        MfTensor *y = make_tensor(dt, 1, s, (double[]){0, 0, 0});
        MfTensor *r = NULL;
        assert_int_equal(mf_where(cond, x, y, &r), MF_OK);
        assert_int_equal(r->dtype, dt);
        assert_values(r, (double[]){1, 0, 1}, 3, 0);
        release_all((MfTensor *[]){x, y, r}, 3);
    }
    release_all((MfTensor *[]){cbase, cond}, 2);
}

static void test_cast_float_to_int(void **state)
{
    (void)state;
    int64_t s[1] = {7};
    MfTensor *x =
        make_tensor(MF_FLOAT32, 1, s, (double[]){2.7, -2.7, 0.5, -0.5, DNAN, 1e10, -1e10});
    MfTensor *i32 = cast(x, MF_INT32), *i64 = cast(x, MF_INT64);
    assert_values(i32, (double[]){2, -2, 0, 0, 0, 2147483647.0, -2147483648.0}, 7, 0);
    assert_values(i64, (double[]){2, -2, 0, 0, 0, 1e10, -1e10}, 7, 0);
    MfTensor *b = cast(x, MF_BOOL);
    assert_values(b, (double[]){1, 1, 1, 1, 1, 1, 1}, 7, 0);
    release_all((MfTensor *[]){x, i32, i64, b}, 4);
}

static void test_cast_between_ints_and_floats(void **state)
{
    (void)state;
    int64_t s[1] = {3};
    MfTensor *big = make_tensor(MF_INT64, 1, s, (double[]){4294967301.0, -1, 0});
    MfTensor *w = cast(big, MF_INT32);  /* 2^32 + 5 wraps to 5 */
    assert_values(w, (double[]){5, -1, 0}, 3, 0);
    MfTensor *f = cast(w, MF_FLOAT64), *bo = cast(w, MF_BOOL);
    assert_values(f, (double[]){5, -1, 0}, 3, 0);
    assert_values(bo, (double[]){1, 1, 0}, 3, 0);
    MfTensor *back = cast(bo, MF_FLOAT32), *i = cast(bo, MF_INT64);
    assert_values(back, (double[]){1, 1, 0}, 3, 0);
    assert_values(i, (double[]){1, 1, 0}, 3, 0);
    MfTensor *d = make_tensor(MF_FLOAT64, 1, s, (double[]){0.1, 1e30, -3});
    MfTensor *ff = cast(d, MF_FLOAT32), *same = cast(d, MF_FLOAT64);
    assert_values(ff, (double[]){(double)0.1f, (double)1e30f, -3}, 3, 0);
    assert_values(same, (double[]){0.1, 1e30, -3}, 3, 0);
    release_all((MfTensor *[]){big, w, f, bo, back, i, d, ff, same}, 9);
}

/* Cast of a transposed view keeps the view's logical order. */
static void test_cast_strided(void **state)
{
    (void)state;
    int64_t s[2] = {2, 2}, tstr[2] = {1, 2};
    MfTensor *a = make_tensor(MF_INT32, 2, s, (double[]){1, 2, 3, 4});
    MfTensor *at = mf_tensor_view(a, 2, s, tstr, 0);
    MfTensor *r = cast(at, MF_FLOAT32);
    assert_values(r, (double[]){1, 3, 2, 4}, 4, 0);
    release_all((MfTensor *[]){a, at, r}, 3);
}

static void test_compare_errors(void **state)
{
    (void)state;
    int64_t s2[1] = {2}, s3[1] = {3};
    MfTensor *f2 = make_tensor(MF_FLOAT32, 1, s2, (double[]){1, 2});
    MfTensor *f3 = make_tensor(MF_FLOAT32, 1, s3, (double[]){1, 2, 3});
    MfTensor *i2 = make_tensor(MF_INT32, 1, s2, (double[]){1, 2});
    MfTensor *b2 = make_tensor(MF_BOOL, 1, s2, (double[]){1, 0});
    MfTensor *out = NULL;
    assert_int_equal(mf_binary(MF_OP_LESS, f2, f3, &out), MF_ESHAPE);
    assert_null(out);
    assert_error_contains("less: shapes (2,) and (3,) do not broadcast");
    assert_int_equal(mf_binary(MF_OP_EQUAL, f2, i2, &out), MF_EDTYPE);
    assert_error_contains("equal: dtypes differ: float32 and int32");
    assert_int_equal(mf_binary(MF_OP_GREATER, b2, b2, &out), MF_EDTYPE);
    assert_error_contains("greater: expected a numeric dtype (float32, float64, int32, int64, "
                          "uint8), got bool");
    assert_int_equal(mf_binary(MF_OP_LOGICAL_AND, b2, f2, &out), MF_EDTYPE);
    assert_error_contains("logical_and: expected bool inputs, got float32");
    assert_int_equal(mf_unary(MF_OP_LOGICAL_NOT, i2, &out), MF_EDTYPE);
    assert_error_contains("logical_not: expected bool inputs, got int32");
    assert_int_equal(mf_unary(MF_OP_IS_NAN, i2, &out), MF_EDTYPE);
    assert_error_contains("is_nan: expected a float dtype (float32 or float64), got int32");
    assert_null(out);
    release_all((MfTensor *[]){f2, f3, i2, b2}, 4);
}

static void test_where_and_cast_errors(void **state)
{
    (void)state;
    int64_t s2[1] = {2}, s3[1] = {3}, s4[1] = {4};
    MfTensor *c2 = make_tensor(MF_BOOL, 1, s2, (double[]){1, 0});
    MfTensor *f2 = make_tensor(MF_FLOAT32, 1, s2, (double[]){1, 2});
    MfTensor *f3 = make_tensor(MF_FLOAT32, 1, s3, (double[]){1, 2, 3});
    MfTensor *f4 = make_tensor(MF_FLOAT32, 1, s4, (double[]){1, 2, 3, 4});
    MfTensor *i2 = make_tensor(MF_INT32, 1, s2, (double[]){1, 2});
    MfTensor *out = NULL;
    assert_int_equal(mf_where(f2, f2, f2, &out), MF_EDTYPE);
    assert_error_contains("where: condition must be bool, got float32");
    assert_int_equal(mf_where(c2, f2, i2, &out), MF_EDTYPE);
    assert_error_contains("where: dtypes differ: float32 and int32");
    assert_int_equal(mf_where(c2, f3, f4, &out), MF_ESHAPE);
    assert_error_contains("where: shapes of condition (2,), x (3,) and y (4,) do not broadcast");
    assert_int_equal(mf_cast(f2, (MfDType)17, &out), MF_EARG);
    assert_error_contains("cast: unknown target dtype 17");
    assert_null(out);
    release_all((MfTensor *[]){c2, f2, f3, f4, i2}, 5);
}

/* Graph-mode inference: unknown dims (-1) propagate through broadcasting. */
static void test_infer_unknown_dims(void **state)
{
    (void)state;
    int64_t su[2] = {-1, 3}, sk[2] = {4, 1}, sc[1] = {3};
    MfTensor *u = mf_tensor_symbolic(MF_FLOAT32, 2, su, NULL, 0);
    MfTensor *k = mf_tensor_symbolic(MF_FLOAT32, 2, sk, NULL, 0);
    MfTensor *cnd = mf_tensor_symbolic(MF_BOOL, 1, sc, NULL, 0);
    MfTensor *in[3] = {cnd, u, k};
    MfAttrs attrs = mf_attrs_default();
    MfOpCall c = {.op = MF_OP_SELECT, .ninputs = 3, .inputs = in, .attrs = &attrs};
    assert_int_equal(mf_op_table[MF_OP_SELECT]->infer(&c), MF_OK);
    assert_int_equal(c.out[0].rank, 2);
    assert_int_equal(c.out[0].shape[0], 4);
    assert_int_equal(c.out[0].shape[1], 3);
    MfOpCall c2 = {.op = MF_OP_LESS, .ninputs = 2, .inputs = in + 1, .attrs = &attrs};
    assert_int_equal(mf_op_table[MF_OP_LESS]->infer(&c2), MF_OK);
    assert_int_equal(c2.out[0].dtype, MF_BOOL);
    assert_int_equal(c2.out[0].shape[0], 4);
    release_all((MfTensor *[]){u, k, cnd}, 3);
}

static void test_flags(void **state)
{
    (void)state;
    assert_true(mf_op_table[MF_OP_EQUAL]->flags & MF_OP_NONDIFF);
    assert_true(mf_op_table[MF_OP_LOGICAL_NOT]->flags & MF_OP_NONDIFF);
    assert_true(mf_op_table[MF_OP_IS_FINITE]->flags & MF_OP_NONDIFF);
    assert_false(mf_op_table[MF_OP_SELECT]->flags & MF_OP_NONDIFF);
    assert_false(mf_op_table[MF_OP_CAST]->flags & MF_OP_NONDIFF);
    assert_int_equal(mf_op_find("SelectV2"), MF_OP_SELECT);
    assert_int_equal(mf_op_find("Cast"), MF_OP_CAST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_comparisons_all_dtypes),
        TEST(test_compare_broadcast_and_scalar),
        TEST(test_compare_strided),
        TEST(test_nan_comparisons_and_bool_equality),
        TEST(test_logic),
        TEST(test_float_classes),
        TEST(test_where_broadcast),
        TEST(test_where_dtypes_and_strided),
        TEST(test_cast_float_to_int),
        TEST(test_cast_between_ints_and_floats),
        TEST(test_cast_strided),
        TEST(test_compare_errors),
        TEST(test_where_and_cast_errors),
        TEST(test_infer_unknown_dims),
        TEST(test_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
