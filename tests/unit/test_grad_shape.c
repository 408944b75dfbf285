/* test_grad_shape.c — the gradients of the linear algebra, view and shape
 * ops, and the op UnsortedSegmentSum:
 *   - for every case of grad_cases_shape.h (whose values test_grad.c checks
 *     against central differences), each gradient has its input's shape and
 *     dtype, and integer inputs get none;
 *   - exact values of some gradients (matmul's, gather's repeated indices,
 *     tile's sums), their shapes, and that index inputs get no gradient;
 *   - UnsortedSegmentSum's values, dtypes, strided inputs and errors;
 *   - the non-differentiable ops of the family are marked so;
 *   - every gradient, failing each allocation in turn, reports MF_ENOMEM
 *     and leaks nothing. */
#include <stdlib.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/grad.h"
#include "core/shape.h"
#include "core/ops/linalg.h"
#include "core/ops/scatter.h"
#include "core/ops/view.h"
#include "grad_cases_shape.h"

static uint64_t rng_state = 12345;

static double uniform(double lo, double hi)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (double)(rng_state >> 11) / 9007199254740992.0;
}

static MfTensor *random_tensor(MfDType dt, int rank, const int64_t *shape, double lo, double hi)
{
    MfTensor *t = mf_tensor_zeros(dt, rank, shape);
    assert_non_null(t);
    if (dt == MF_FLOAT64)
        for (int64_t i = 0; i < mf_tensor_numel(t); i++)
            ((double *)mf_tensor_data(t))[i] = uniform(lo, hi);
    return t;
}

/* Each gradient has its input's shape and dtype; integer inputs get none. */
static void check_grad_shapes(const GradCase *gc, MfTensor **in, MfTensor **d)
{
    for (int i = 0; i < gc->ninputs; i++) {
        if (gc->dtype[i] != MF_FLOAT64) {
            assert_null(d[i]);
            continue;
        }
        assert_non_null(d[i]);
        if (!mf_shape_equal_t(d[i], in[i]) || d[i]->dtype != MF_FLOAT64) {
            print_error("%s: gradient %d has the wrong shape or dtype\n", gc->label, i + 1);
            fail();
        }
    }
}

static void check_case(const GradCase *gc)
{
    MfTensor *in[GC_MAX_INPUTS] = {NULL}, *d[GC_MAX_INPUTS] = {NULL}, *y = NULL;
    MfAttrs a = mf_attrs_default();
    if (gc->attrs)
        gc->attrs(&a);
    for (int i = 0; i < gc->ninputs; i++) {
        in[i] = random_tensor(gc->dtype[i], gc->rank[i], gc->shape[i], gc->lo, gc->hi);
        if (gc->values)
            gc->values(i, in[i]);
    }
    assert_int_equal(mf_op1(gc->op, gc->ninputs, in, &a, &y), MF_OK);
    MfTensor *w = random_tensor(MF_FLOAT64, y->rank, y->shape, -1, 1);
    MfOpCall call = {.op = gc->op, .ninputs = gc->ninputs, .inputs = in, .attrs = &a,
                     .noutputs = 1};
    MfGradCall g = {.call = &call, .outputs = &y, .doutputs = &w};
    assert_true(mf_op_differentiable(gc->op));
    if (mf_grad_call(&g, d) != MF_OK) {
        print_error("%s: %s\n", gc->label, mf_err_msg());
        fail();
    }
    check_grad_shapes(gc, in, d);
    for (int i = 0; i < gc->ninputs; i++) {
        mf_tensor_release(in[i]);
        mf_tensor_release(d[i]);
    }
    mf_tensor_release(y);
    mf_tensor_release(w);
}

static void test_case_gradient_shapes(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_CASES_SHAPE; k++)
        check_case(&cases_shape[k]);
}

static void test_nondiff_ops(void **state)
{
    (void)state;
    const MfOpId ops[] = {MF_OP_STOP_GRADIENT, MF_OP_ONE_HOT, MF_OP_SIZE, MF_OP_RANK,
                          MF_OP_SHAPE};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        assert_false(mf_op_differentiable(ops[i]));
        assert_null(mf_op_table[ops[i]]->backward);
    }
}

/* Runs the gradient of 'op' with one output gradient 'dy'; fills 'd'. */
static void run_grad(MfOpId op, int n, MfTensor **in, const MfAttrs *a, MfTensor *dy,
                     MfTensor **d)
{
    MfTensor *y = NULL;
    assert_int_equal(mf_op1(op, n, in, a, &y), MF_OK);
    MfOpCall call = {.op = op, .ninputs = n, .inputs = in, .attrs = a, .noutputs = 1};
    MfGradCall g = {.call = &call, .outputs = &y, .doutputs = &dy};
    assert_int_equal(mf_grad_call(&g, d), MF_OK);
    mf_tensor_release(y);
}

/* y = a b, a (1,2), b (2,2): da = dy b^T, db = a^T dy. */
static void test_matmul_exact(void **state)
{
    (void)state;
    const int64_t sa[2] = {1, 2}, sb[2] = {2, 2};
    MfTensor *a = make_tensor(MF_FLOAT64, 2, sa, (const double[]){1, 2});
    MfTensor *b = make_tensor(MF_FLOAT64, 2, sb, (const double[]){3, 4, 5, 6});
    MfTensor *dy = make_tensor(MF_FLOAT64, 2, sa, (const double[]){1, -1});
    MfTensor *in[2] = {a, b}, *d[2] = {NULL, NULL};
    MfAttrs attrs = mf_attrs_default();
    run_grad(MF_OP_MATMUL, 2, in, &attrs, dy, d);
    assert_values(d[0], (const double[]){3 - 4, 5 - 6}, 2, 0);
    assert_values(d[1], (const double[]){1, -1, 2, -2}, 4, 0);
    for (int i = 0; i < 2; i++)
        mf_tensor_release(d[i]);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(dy);
}

/* A (2,3) matrix times a batch of 4: its gradient sums the 4 batches. */
static void test_batch_matmul_broadcast_sums(void **state)
{
    (void)state;
    const int64_t sa[2] = {2, 3}, sb[3] = {4, 3, 1}, sy[3] = {4, 2, 1};
    MfTensor *a = mf_tensor_zeros(MF_FLOAT32, 2, sa);
    MfTensor *b = make_tensor(MF_FLOAT32, 3, sb,
                              (const double[]){1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1});
    MfTensor *dy = make_tensor(MF_FLOAT32, 3, sy, (const double[]){1, 1, 1, 1, 1, 1, 1, 1});
    MfTensor *in[2] = {a, b}, *d[2] = {NULL, NULL};
    MfAttrs attrs = mf_attrs_default();
    run_grad(MF_OP_BATCH_MATMUL, 2, in, &attrs, dy, d);
    assert_int_equal(d[0]->rank, 2);
    assert_int_equal(d[0]->dtype, MF_FLOAT32);
    assert_values(d[0], (const double[]){2, 2, 2, 2, 2, 2}, 6, 0);
    assert_int_equal(d[1]->rank, 3);
    assert_values(d[1], (const double[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 12, 0);
    for (int i = 0; i < 2; i++)
        mf_tensor_release(d[i]);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(dy);
}

/* gather rows {1, 1, 0} of a (3,2) matrix: row 1 gets two gradients. */
static void test_gather_repeated_exact(void **state)
{
    (void)state;
    const int64_t sp[2] = {3, 2}, si[1] = {3};
    MfTensor *p = mf_tensor_zeros(MF_FLOAT64, 2, sp);
    MfTensor *ix = make_tensor(MF_INT32, 1, si, (const double[]){1, 1, 0});
    MfTensor *dy = make_tensor(MF_FLOAT64, 2, sp, (const double[]){1, 2, 10, 20, 100, 200});
    MfTensor *in[2] = {p, ix}, *d[2] = {NULL, NULL};
    MfAttrs attrs = mf_attrs_default();
    run_grad(MF_OP_GATHER, 2, in, &attrs, dy, d);
    assert_values(d[0], (const double[]){100, 200, 11, 22, 0, 0}, 6, 0);
    assert_null(d[1]);
    mf_tensor_release(d[0]);
    mf_tensor_release(p);
    mf_tensor_release(ix);
    mf_tensor_release(dy);
}

/* tile (1,2) by (3,2): each element sums its 6 copies. */
static void test_tile_exact(void **state)
{
    (void)state;
    const int64_t sx[2] = {1, 2}, sy[2] = {3, 4};
    MfTensor *x = mf_tensor_zeros(MF_FLOAT64, 2, sx);
    MfTensor *dy = make_tensor(MF_FLOAT64, 2, sy,
                               (const double[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    MfTensor *d[1] = {NULL};
    MfAttrs attrs = mf_attrs_default();
    attrs.nints = 2;
    attrs.ints[0] = 3;
    attrs.ints[1] = 2;
    run_grad(MF_OP_TILE, 1, &x, &attrs, dy, d);
    assert_values(d[0], (const double[]){1 + 3 + 5 + 7 + 9 + 11, 2 + 4 + 6 + 8 + 10 + 12}, 2, 0);
    mf_tensor_release(d[0]);
    mf_tensor_release(x);
    mf_tensor_release(dy);
}

/* trace of an int matrix: the gradient keeps the dtype. */
static void test_trace_int(void **state)
{
    (void)state;
    const int64_t sx[2] = {2, 3};
    MfTensor *x = mf_tensor_zeros(MF_INT32, 2, sx);
    MfTensor *dy = mf_tensor_scalar(MF_INT32, 5);
    MfTensor *d[1] = {NULL};
    MfAttrs attrs = mf_attrs_default();
    run_grad(MF_OP_TRACE, 1, &x, &attrs, dy, d);
    assert_int_equal(d[0]->dtype, MF_INT32);
    assert_values(d[0], (const double[]){5, 0, 0, 0, 5, 0}, 6, 0);
    mf_tensor_release(d[0]);
    mf_tensor_release(x);
    mf_tensor_release(dy);
}

/* ---- UnsortedSegmentSum ------------------------------------------------- */

static void test_segment_sum_values(void **state)
{
    (void)state;
    const MfDType dts[4] = {MF_FLOAT32, MF_FLOAT64, MF_INT32, MF_INT64};
    const int64_t sd[2] = {4, 2}, si[1] = {4};
    for (int k = 0; k < 4; k++) {
        MfTensor *data = make_tensor(dts[k], 2, sd, (const double[]){1, 2, 3, 4, 5, 6, 7, 8});
        MfTensor *ids = make_tensor(k % 2 ? MF_INT32 : MF_INT64, 1, si,
                                    (const double[]){2, 0, 2, 1});
        MfTensor *out = NULL;
        assert_int_equal(mf_unsorted_segment_sum(data, ids, 4, &out), MF_OK);
        assert_int_equal(out->dtype, dts[k]);
        assert_int_equal(out->rank, 2);
        assert_int_equal(out->shape[0], 4);
        assert_values(out, (const double[]){3, 4, 7, 8, 6, 8, 0, 0}, 8, 0);
        mf_tensor_release(out);
        mf_tensor_release(data);
        mf_tensor_release(ids);
    }
}

/* A transposed (strided) data input, 2-d ids, an empty segment count. */
static void test_segment_sum_strided(void **state)
{
    (void)state;
    const int64_t sd[2] = {3, 2}, si[2] = {2, 3};
    MfTensor *base = make_tensor(MF_FLOAT64, 2, sd, (const double[]){1, 2, 3, 4, 5, 6});
    MfTensor *data = NULL, *out = NULL;
    assert_int_equal(mf_transpose(base, NULL, 0, &data), MF_OK); /* (2,3): 1 3 5 / 2 4 6 */
    MfTensor *ids = make_tensor(MF_INT64, 2, si, (const double[]){0, 1, 0, 1, 1, 0});
    assert_int_equal(mf_unsorted_segment_sum(data, ids, 2, &out), MF_OK);
    assert_int_equal(out->rank, 1);
    assert_values(out, (const double[]){1 + 5 + 6, 3 + 2 + 4}, 2, 0);
    mf_tensor_release(out);
    const int64_t s0[1] = {0};
    MfTensor *none = mf_tensor_zeros(MF_INT64, 1, s0), *empty = mf_tensor_zeros(MF_FLOAT64, 1,
                                                                              s0);
    assert_int_equal(mf_unsorted_segment_sum(empty, none, 3, &out), MF_OK);
    assert_values(out, (const double[]){0, 0, 0}, 3, 0);
    mf_tensor_release(out);
    mf_tensor_release(none);
    mf_tensor_release(empty);
    mf_tensor_release(base);
    mf_tensor_release(data);
    mf_tensor_release(ids);
}

static void test_segment_sum_errors(void **state)
{
    (void)state;
    const int64_t sd[2] = {3, 2}, si[1] = {3}, sbad[1] = {2};
    MfTensor *data = mf_tensor_zeros(MF_FLOAT32, 2, sd);
    MfTensor *ids = make_tensor(MF_INT32, 1, si, (const double[]){0, 5, 1});
    MfTensor *short_ids = mf_tensor_zeros(MF_INT32, 1, sbad);
    MfTensor *fids = mf_tensor_zeros(MF_FLOAT32, 1, si);
    MfTensor *bools = mf_tensor_zeros(MF_BOOL, 2, sd);
    MfTensor *out = NULL;
    assert_int_equal(mf_unsorted_segment_sum(data, ids, 3, &out), MF_EARG);
    assert_null(out);
    assert_error_contains("unsorted_segment_sum: segment id 6 out of range for 3 segments "
                          "(ids are 1-based: 1..3)");
    assert_int_equal(mf_unsorted_segment_sum(data, short_ids, 3, &out), MF_ESHAPE);
    assert_error_contains("the ids' shape (2,) must be a leading part of the data's shape "
                          "(3,2)");
    assert_int_equal(mf_unsorted_segment_sum(data, fids, 3, &out), MF_EDTYPE);
    assert_error_contains("int32 or int64 segment ids");
    assert_int_equal(mf_unsorted_segment_sum(bools, short_ids, 3, &out), MF_EDTYPE);
    assert_error_contains("unsorted_segment_sum");
    assert_int_equal(mf_unsorted_segment_sum(data, short_ids, -1, &out), MF_ESHAPE);
    mf_err_clear();
    MfTensor *ok_ids = mf_tensor_zeros(MF_INT32, 1, si);
    assert_int_equal(mf_unsorted_segment_sum(data, ok_ids, -1, &out), MF_EARG);
    assert_error_contains("the number of segments must be >= 0, got -1");
    mf_tensor_release(ok_ids);
    mf_tensor_release(data);
    mf_tensor_release(ids);
    mf_tensor_release(short_ids);
    mf_tensor_release(fids);
    mf_tensor_release(bools);
}

/* Runs the case's gradient with allocation 'n' failing; true when it got
 * through (the allocations ran out before 'n'). */
static bool grad_with_failure(const GradCase *gc, MfTensor **in, const MfAttrs *a, int64_t n)
{
    MfTensor *y = NULL, *d[GC_MAX_INPUTS] = {NULL};
    assert_int_equal(mf_op1(gc->op, gc->ninputs, in, a, &y), MF_OK);
    MfTensor *w = random_tensor(MF_FLOAT64, y->rank, y->shape, -1, 1);
    MfOpCall call = {.op = gc->op, .ninputs = gc->ninputs, .inputs = in, .attrs = a,
                     .noutputs = 1};
    MfGradCall g = {.call = &call, .outputs = &y, .doutputs = &w};
    mf_alloc_fail_at(n);
    MfStatus st = mf_grad_call(&g, d);
    mf_alloc_fail_at(0);
    for (int i = 0; i < gc->ninputs; i++) {
        if (st != MF_OK)
            assert_null(d[i]);
        mf_tensor_release(d[i]);
    }
    if (st != MF_OK) {
        assert_int_equal(st, MF_ENOMEM);
        mf_err_clear();
    }
    mf_tensor_release(y);
    mf_tensor_release(w);
    return st == MF_OK;
}

static void test_out_of_memory(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_CASES_SHAPE; k++) {
        const GradCase *gc = &cases_shape[k];
        MfTensor *in[GC_MAX_INPUTS] = {NULL};
        MfAttrs a = mf_attrs_default();
        if (gc->attrs)
            gc->attrs(&a);
        for (int i = 0; i < gc->ninputs; i++) {
            in[i] = random_tensor(gc->dtype[i], gc->rank[i], gc->shape[i], gc->lo, gc->hi);
            if (gc->values)
                gc->values(i, in[i]);
        }
        int64_t n = 1;
        while (!grad_with_failure(gc, in, &a, n) && n < 100)
            n++;
        assert_true(n < 100);
        for (int i = 0; i < gc->ninputs; i++)
            mf_tensor_release(in[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_case_gradient_shapes),
        TEST(test_nondiff_ops),
        TEST(test_matmul_exact),
        TEST(test_batch_matmul_broadcast_sums),
        TEST(test_gather_repeated_exact),
        TEST(test_tile_exact),
        TEST(test_trace_int),
        TEST(test_segment_sum_values),
        TEST(test_segment_sum_strided),
        TEST(test_segment_sum_errors),
        TEST(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
