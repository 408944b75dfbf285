/* test_binary.c — elementwise binary ops: values, broadcasting, dtypes, errors. */
#include <string.h>

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

/* A tensor of 'rank'/'shape' whose elements repeat 'row' (the broadcast
 * written out), in row's dtype. */
static MfTensor *expand_row(const MfTensor *row, int rank, const int64_t *shape)
{
    MfTensor *t = mf_tensor_new(row->dtype, rank, shape);
    assert_non_null(t);
    size_t es = mf_dtype_size(row->dtype);
    int64_t n = mf_tensor_numel(row);
    for (int64_t i = 0; i < mf_tensor_numel(t); i++)
        memcpy((char *)mf_tensor_data(t) + i * es, (const char *)mf_tensor_data(row) + (i % n) * es,
               es);
    return t;
}

/* The ops and dtypes the broadcast layouts are checked in: the operand
 * order of sub, div, pow and less shows a swap. */
static const MfOpId layout_ops[] = {MF_OP_SUB, MF_OP_DIV, MF_OP_POW, MF_OP_MAXIMUM,
                                    MF_OP_MINIMUM, MF_OP_LESS};
static const MfDType layout_dtypes[] = {MF_FLOAT32, MF_FLOAT64, MF_INT32};
enum { NLAYOUT_OPS = 6, NLAYOUT_DTYPES = 3 };

static bool layout_case_skipped(MfDType dt, MfOpId op)
{
    /* integer division by zero, negative powers */
    return dt == MF_INT32 && (op == MF_OP_DIV || op == MF_OP_POW);
}

/* op(full, part) (op(part, full) when 'part_first') has the bits of the same
 * op on 'wide', part written out to full's shape. Releases all three. */
static void assert_same_as_written_out(MfOpId op, MfTensor *full, MfTensor *part, MfTensor *wide,
                                       bool part_first)
{
    MfTensor *got = part_first ? run2(op, part, full) : run2(op, full, part);
    MfTensor *want = part_first ? run2(op, wide, full) : run2(op, full, wide);
    int64_t n = mf_tensor_numel(full);
    assert_int_equal(got->dtype, want->dtype);
    assert_int_equal(mf_tensor_numel(got), n);
    assert_memory_equal(mf_tensor_data(got), mf_tensor_data(want),
                        (size_t)n * mf_dtype_size(got->dtype));
    mf_tensor_release(full);
    mf_tensor_release(part);
    mf_tensor_release(wide);
    mf_tensor_release(got);
    mf_tensor_release(want);
}

static const int64_t layout_shape[3] = {5, 3, 7};

/* 105 values of both signs for a tensor of layout_shape */
static void layout_values(double *v)
{
    for (int i = 0; i < 105; i++)
        v[i] = (i * 37 % 101) / 10.0 - 5;
}

/* A contiguous row broadcast over the leading dims takes a loop of its own
 * (binary_rows.h): on either side, with or without leading dims of 1, for
 * arithmetic and comparisons in several dtypes, its bits are those of the
 * same op on the broadcast written out. */
static void test_row_broadcast_matches_written_out(void **state)
{
    (void)state;
    static const int64_t row_shapes[][3] = {{7}, {3, 7}, {1, 3, 7}, {1, 1, 7}};
    static const int row_ranks[] = {1, 2, 3, 3};
    double fv[105], rv[21];
    layout_values(fv);
    for (int i = 0; i < 21; i++)
        rv[i] = (i * 13 % 23) / 4.0 + 0.5;
    for (int d = 0; d < NLAYOUT_DTYPES; d++)
        for (int r = 0; r < 4; r++)
            for (int o = 0; o < NLAYOUT_OPS; o++)
                for (int side = 0; side < 2; side++) {
                    if (layout_case_skipped(layout_dtypes[d], layout_ops[o]))
                        continue;
                    MfTensor *full = make_tensor(layout_dtypes[d], 3, layout_shape, fv);
                    MfTensor *row = make_tensor(layout_dtypes[d], row_ranks[r], row_shapes[r], rv);
                    MfTensor *wide = expand_row(row, 3, layout_shape);
                    assert_same_as_written_out(layout_ops[o], full, row, wide, side);
                }
}

/* 'value' (one element) stretched to 'shape' as BroadcastTo does it: a
 * view with every stride 0. Releases 'value' (the view holds its storage). */
static MfTensor *stride0_view(MfTensor *value, int rank, const int64_t *shape)
{
    MfAttrs a = mf_attrs_default();
    a.nints = rank;
    for (int i = 0; i < rank; i++)
        a.ints[i] = shape[i];
    MfTensor *out[MF_MAX_OUTPUTS] = {NULL};
    int nout = 0;
    assert_int_equal(mf_op_call(MF_OP_BROADCAST_TO, 1, &value, &a, out, &nout), MF_OK);
    for (int i = 0; i < rank; i++)
        assert_int_equal(out[0]->strides[i], 0);
    mf_tensor_release(value);
    return out[0];
}

/* One value against a contiguous tensor takes a loop of its own
 * (binary_rows.h): as a rank-0 tensor, a (1), a (1, 1, 1) or a stride-0
 * view of the full shape, on either side, its bits are those of the same
 * op on the value written out. */
static void test_scalar_broadcast_matches_written_out(void **state)
{
    (void)state;
    static const int64_t ones[3] = {1, 1, 1};
    static const int value_ranks[] = {0, 1, 3, 0};
    double fv[105];
    layout_values(fv);
    for (int d = 0; d < NLAYOUT_DTYPES; d++)
        for (int r = 0; r < 4; r++)
            for (int o = 0; o < NLAYOUT_OPS; o++)
                for (int side = 0; side < 2; side++) {
                    if (layout_case_skipped(layout_dtypes[d], layout_ops[o]))
                        continue;
                    MfTensor *full = make_tensor(layout_dtypes[d], 3, layout_shape, fv);
                    MfTensor *value =
                        make_tensor(layout_dtypes[d], value_ranks[r], ones, (double[]){2.5});
                    MfTensor *wide = expand_row(value, 3, layout_shape);
                    if (r == 3) /* the stride-0 view of the full shape */
                        value = stride0_view(value, 3, layout_shape);
                    assert_same_as_written_out(layout_ops[o], full, value, wide, side);
                }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_add_same_shape),
        TEST(test_broadcast_row_and_column),
        TEST(test_int_floor_division_and_mod),
        TEST(test_errors),
        TEST(test_row_broadcast_matches_written_out),
        TEST(test_scalar_broadcast_matches_written_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
