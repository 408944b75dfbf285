/* test_tensor.c — tensors, views, storage sharing, broadcasting helpers, the
 * caching allocator and its failure hook, the error slot. */
#include "core/alloc.h"
#include "core/shape.h"
#include "testutil.h"

static void test_new_is_contiguous_with_row_major_strides(void **state)
{
    (void)state;
    int64_t s[3] = {2, 3, 4};
    MfTensor *t = mf_tensor_new(MF_FLOAT64, 3, s);
    assert_non_null(t);
    assert_int_equal(t->strides[0], 12);
    assert_int_equal(t->strides[1], 4);
    assert_int_equal(t->strides[2], 1);
    assert_int_equal(mf_tensor_numel(t), 24);
    assert_true(mf_tensor_is_contiguous(t));
    mf_tensor_release(t);
}

static void test_view_shares_storage_and_outlives_base(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3};
    MfTensor *t = make_tensor(MF_FLOAT32, 2, s, (double[]){1, 2, 3, 4, 5, 6});
    int64_t ts[2] = {3, 2}, tst[2] = {1, 3};
    MfTensor *v = mf_tensor_view(t, 2, ts, tst, 0); /* the transpose */
    assert_ptr_equal(v->storage, t->storage);
    assert_false(mf_tensor_is_contiguous(v));
    mf_tensor_release(t); /* the view keeps the storage alive */
    assert_values(v, (double[]){1, 4, 2, 5, 3, 6}, 6, 0);
    MfTensor *c = mf_tensor_contiguous(v);
    assert_true(mf_tensor_is_contiguous(c));
    assert_ptr_not_equal(c->storage, v->storage);
    assert_values(c, (double[]){1, 4, 2, 5, 3, 6}, 6, 0);
    mf_tensor_release(v);
    mf_tensor_release(c);
}

static void test_contiguous_of_contiguous_is_the_same_tensor(void **state)
{
    (void)state;
    int64_t s[1] = {3};
    MfTensor *t = make_tensor(MF_INT64, 1, s, (double[]){1, 2, 3});
    MfTensor *c = mf_tensor_contiguous(t);
    assert_ptr_equal(c, t);
    assert_int_equal(t->refcount, 2);
    mf_tensor_release(c);
    mf_tensor_release(t);
}

static void test_scalar_and_int64_exact(void **state)
{
    (void)state;
    MfTensor *t = mf_tensor_scalar(MF_INT64, 0);
    *(int64_t *)t->storage->data = INT64_MAX;
    assert_int_equal(t->rank, 0);
    assert_int_equal(mf_tensor_numel(t), 1);
    assert_true(mf_tensor_get_int(t, 0) == INT64_MAX);
    mf_tensor_release(t);
}

static void test_absurd_and_negative_shapes_are_errors(void **state)
{
    (void)state;
    int64_t huge[2] = {1000000, 1000000}, neg[2] = {2, -3};
    assert_null(mf_tensor_new(MF_FLOAT32, 2, huge));
    assert_error_contains("too large");
    assert_null(mf_tensor_new(MF_FLOAT32, 2, neg));
    assert_error_contains("dimensions must be >= 0, got -3 for dimension 2");
    assert_null(mf_tensor_new(MF_FLOAT32, 9, huge));
    assert_error_contains("rank must be 0..8");
}

static void test_broadcast_shapes(void **state)
{
    (void)state;
    int64_t a[3] = {4, 1, 3}, b[2] = {5, 1}, out[MF_MAX_RANK];
    int r = 0;
    assert_int_equal(mf_broadcast_shapes("t", 3, a, 2, b, &r, out), MF_OK);
    assert_int_equal(r, 3);
    assert_int_equal(out[0], 4);
    assert_int_equal(out[1], 5);
    assert_int_equal(out[2], 3);
    int64_t unknown[2] = {-1, 3}, known[2] = {7, 1};
    assert_int_equal(mf_broadcast_shapes("t", 2, unknown, 2, known, &r, out), MF_OK);
    assert_int_equal(out[0], 7);
    int64_t c[1] = {4};
    assert_int_equal(mf_broadcast_shapes("mul", 3, a, 1, c, &r, out), MF_ESHAPE);
    assert_error_contains("mul: shapes (4,1,3) and (4,) do not broadcast");
}

static void test_allocator_reuses_blocks(void **state)
{
    (void)state;
    void *p = mf_alloc(1000);
    size_t in_use = mf_alloc_in_use();
    mf_dealloc(p, 1000);
    assert_true(mf_alloc_in_use() < in_use);
    void *q = mf_alloc(1000);
#ifndef MF_ALLOC_NO_CACHE
    assert_ptr_equal(p, q); /* the same size class comes back from the free list */
#endif
    assert_int_equal((uintptr_t)q % 64, 0);
    mf_dealloc(q, 1000);
}

/* Every allocation of an op, failed in turn, gives MF_ENOMEM and leaks nothing. */
static void test_allocation_failure_sweep(void **state)
{
    (void)state;
    int64_t s[2] = {3, 4};
    MfTensor *a = make_tensor(MF_FLOAT32, 2, s, (double[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    int64_t live = mf_tensor_live_count();
    for (int n = 1; n < 10; n++) {
        MfTensor *out = NULL;
        mf_alloc_fail_at(n);
        MfStatus st = mf_binary(MF_OP_ADD, a, a, &out);
        mf_alloc_fail_at(0);
        if (st == MF_OK) {
            mf_tensor_release(out);
            break;
        }
        assert_int_equal(st, MF_ENOMEM);
        assert_null(out);
        assert_error_contains("out of memory");
        assert_int_equal(mf_tensor_live_count(), live);
    }
    mf_tensor_release(a);
}

static void test_first_error_message_wins_and_prefix(void **state)
{
    (void)state;
    mf_err_set(MF_EARG, "inner: %d", 1);
    mf_err_set(MF_EARG, "outer");
    mf_err_prefix("node %s", "add_1");
    assert_string_equal(mf_err_msg(), "node add_1: inner: 1");
    /* a message that already begins with the head keeps one */
    mf_err_prefix("node %s", "add_1");
    assert_string_equal(mf_err_msg(), "node add_1: inner: 1");
    mf_err_prefix("node");
    assert_string_equal(mf_err_msg(), "node: node add_1: inner: 1");
    mf_err_clear();
    assert_string_equal(mf_err_msg(), "");
}

/* The face's 1-based axes: both ends, negative ones, one past the end
 * with 'extra', and the messages (the axis as given, not truncated). */
static void test_axis_one_based(void **state)
{
    (void)state;
    int64_t ax = -9;
    assert_int_equal(mf_axis_one_based("sum", 1, 2, 0, &ax), MF_OK);
    assert_int_equal(ax, 0);
    assert_int_equal(mf_axis_one_based("sum", -1, 2, 0, &ax), MF_OK);
    assert_int_equal(ax, 1);
    assert_int_equal(mf_axis_one_based("stack", 3, 2, 1, &ax), MF_OK);
    assert_int_equal(ax, 2);
    assert_int_equal(mf_axis_one_based("sum", 0, 2, 0, &ax), MF_EARG);
    assert_error_contains("sum: axis 0 out of range for rank 2 (axes are 1-based: 1..2, or "
                          "-2..-1)");
    assert_int_equal(mf_axis_one_based("sum", 4294967295LL, 2, 0, &ax), MF_EARG);
    assert_error_contains("axis 4294967295 out of range");
    assert_int_equal(mf_axis_one_based("sum", -3, 2, 0, &ax), MF_EARG);
    assert_error_contains("sum: axis -3 out of range");
    /* the extremes of a Lua integer (the fuzzer's math.maxinteger overflowed n + axis) */
    assert_int_equal(mf_axis_one_based("argmin", INT64_MAX, 2, 0, &ax), MF_EARG);
    assert_error_contains("argmin: axis 9223372036854775807 out of range");
    assert_int_equal(mf_axis_one_based("argmin", INT64_MIN, 2, 0, &ax), MF_EARG);
    assert_error_contains("argmin: axis -9223372036854775808 out of range");
    assert_int_equal(mf_axis_one_based("sum", 1, 0, 0, &ax), MF_EARG);
    assert_error_contains("sum: a scalar has no axes (got axis 1)");
}

/* Writing elements (views too; int64 exactly) and t[i]'s rule. */
static void test_set_and_index(void **state)
{
    (void)state;
    int64_t s[2] = {3, 2};
    MfTensor *t = make_tensor(MF_FLOAT32, 2, s, (double[]){1, 2, 3, 4, 5, 6});
    int64_t k = -7;
    MfTensor *row = NULL;
    assert_int_equal(mf_tensor_index(t, -1, &k, &row), MF_OK);   /* the last row */
    assert_int_equal(k, 2);
    assert_int_equal(row->rank, 1);
    mf_tensor_set(row, 1, 9.5);
    assert_true(mf_tensor_get(t, 5) == 9.5);   /* a view writes its base */
    MfTensor *none = t;
    assert_int_equal(mf_tensor_index(row, 2, &k, &none), MF_OK);
    assert_null(none);                           /* rank 1: the element's position */
    assert_int_equal(k, 1);
    assert_int_equal(mf_tensor_index(t, 0, &k, &none), MF_EARG);
    assert_error_contains("index: index 0 out of range for axis 1 of size 3 (indices are "
                          "1-based: 1..3, or -3..-1)");
    assert_int_equal(mf_tensor_index(t, -4, &k, &none), MF_EARG);
    assert_error_contains("index -4 out of range");
    MfTensor *sc = mf_tensor_scalar(MF_INT64, 0);
    assert_int_equal(mf_tensor_index(sc, 1, &k, &none), MF_EARG);
    assert_error_contains("index: a scalar cannot be indexed (use t:item())");
    assert_int_equal(mf_tensor_check_values(sc, "item", true), MF_OK);
    assert_int_equal(mf_tensor_check_values(t, "item", true), MF_EARG);
    assert_error_contains("item: expected a tensor with one element, got shape (3,2)");
    assert_int_equal(mf_tensor_check_values(t, "totable", false), MF_OK);
    mf_tensor_set_int(sc, 0, INT64_MAX - 1);   /* past 2^53: exact */
    assert_true(mf_tensor_get_int(sc, 0) == INT64_MAX - 1);
    mf_tensor_release(sc);
    mf_tensor_release(row);
    mf_tensor_release(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_new_is_contiguous_with_row_major_strides),
        TEST(test_view_shares_storage_and_outlives_base),
        TEST(test_contiguous_of_contiguous_is_the_same_tensor),
        TEST(test_scalar_and_int64_exact),
        TEST(test_absurd_and_negative_shapes_are_errors),
        TEST(test_broadcast_shapes),
        TEST(test_allocator_reuses_blocks),
        TEST(test_allocation_failure_sweep),
        TEST(test_first_error_message_wins_and_prefix),
        TEST(test_set_and_index),
        TEST(test_axis_one_based),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
