/* test_shape_ops.c — shape ops (ConcatV2, Pack, Slice, GatherV2, ReverseV2,
 * Tile, Pad, BroadcastTo, OneHot, Identity, StopGradient, Size, Rank, Shape)
 * and the composites split, unstack, one_hot: values against hand-computed
 * results, strided (view) inputs, unknown dims in inference, every error
 * path's status and message, and out-of-memory paths without leaks. */
#include "testutil.h"

#include "core/alloc.h"
#include "core/ops/shape_ops.h"

static const double M23[6] = {1, 2, 3, 4, 5, 6};

static MfTensor *m23(MfDType dt)
{
    return make_tensor(dt, 2, (int64_t[]){2, 3}, M23);
}

/* The transpose of 't' (2-D) as a strided view. */
static MfTensor *transposed(MfTensor *t)
{
    MfTensor *v = mf_tensor_view(t, 2, (int64_t[]){t->shape[1], t->shape[0]},
                                 (int64_t[]){t->strides[1], t->strides[0]}, t->offset);
    assert_non_null(v);
    return v;
}

static MfTensor *run(MfOpId op, int n, MfTensor *const *in, const MfAttrs *a)
{
    MfTensor *out = NULL;
    MfStatus st = mf_op1(op, n, in, a, &out);
    if (st != MF_OK)
        print_error("unexpected error: %s\n", mf_err_msg());
    assert_int_equal(st, MF_OK);
    return out;
}

static void expect_error(MfOpId op, int n, MfTensor *const *in, const MfAttrs *a, MfStatus code,
                         const char *part)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_op1(op, n, in, a, &out), code);
    assert_null(out);
    assert_error_contains(part);
}

static void assert_shape(const MfTensor *t, int rank, const int64_t *shape)
{
    assert_int_equal(t->rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(t->shape[i], shape[i]);
}

static void release(int n, MfTensor **ts)
{
    for (int i = 0; i < n; i++)
        mf_tensor_release(ts[i]);
}

static void test_concat(void **state)
{
    (void)state;
    MfTensor *a = m23(MF_FLOAT32), *t = transposed(a);
    MfAttrs at = mf_attrs_default();
    MfTensor *in[2] = {a, a};
    MfTensor *r0 = run(MF_OP_CONCAT, 2, in, &at);
    assert_shape(r0, 2, (int64_t[]){4, 3});
    assert_values(r0, (double[]){1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, 12, 0);
    at.axis = -1;
    MfTensor *r1 = run(MF_OP_CONCAT, 2, in, &at);
    assert_values(r1, (double[]){1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, 12, 0);
    in[0] = t; /* strided (3,2) view and a contiguous (3,2) */
    MfTensor *c = mf_tensor_clone(t);
    in[1] = c;
    at.axis = 1;
    MfTensor *r2 = run(MF_OP_CONCAT, 2, in, &at);
    assert_values(r2, (double[]){1, 4, 1, 4, 2, 5, 2, 5, 3, 6, 3, 6}, 12, 0);
    MfTensor *all[] = {a, t, c, r0, r1, r2};
    release(6, all);
}

static void test_concat_errors(void **state)
{
    (void)state;
    MfTensor *a = m23(MF_FLOAT32), *i = m23(MF_INT32), *t = transposed(a);
    MfTensor *s = mf_tensor_scalar(MF_FLOAT32, 1);
    MfAttrs at = mf_attrs_default();
    expect_error(MF_OP_CONCAT, 3, (MfTensor *[]){a, a, i}, &at, MF_EDTYPE,
                 "concat: list entry 3 has dtype int32 but entry 1 has float32");
    expect_error(MF_OP_CONCAT, 2, (MfTensor *[]){a, t}, &at, MF_ESHAPE,
                 "concat: list entry 2 has shape (3,2) but entry 1 has (2,3) (dims must match "
                 "except along axis 1)");
    at.axis = 2;
    expect_error(MF_OP_CONCAT, 1, &a, &at, MF_EARG,
                 "concat: axis 3 out of range for rank 2 (axes are 1-based");
    expect_error(MF_OP_CONCAT, 1, &s, &at, MF_ESHAPE, "scalars cannot be concatenated");
    MfTensor *out = NULL;
    assert_int_equal(mf_op1(MF_OP_CONCAT, 0, NULL, &at, &out), MF_EARG);
    assert_error_contains("expected 1 input(s), got 0");
    MfTensor *all[] = {a, i, t, s};
    release(4, all);
}

static void test_stack(void **state)
{
    (void)state;
    int64_t s2[1] = {2};
    MfTensor *x = make_tensor(MF_INT64, 1, s2, (double[]){1, 2});
    MfTensor *y = make_tensor(MF_INT64, 1, s2, (double[]){3, 4});
    MfTensor *z = make_tensor(MF_INT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    MfAttrs at = mf_attrs_default();
    MfTensor *r0 = run(MF_OP_STACK, 2, (MfTensor *[]){x, y}, &at);
    assert_shape(r0, 2, (int64_t[]){2, 2});
    assert_values(r0, (double[]){1, 2, 3, 4}, 4, 0);
    at.axis = 1;
    MfTensor *r1 = run(MF_OP_STACK, 2, (MfTensor *[]){x, y}, &at);
    assert_values(r1, (double[]){1, 3, 2, 4}, 4, 0);
    expect_error(MF_OP_STACK, 2, (MfTensor *[]){x, z}, &at, MF_ESHAPE,
                 "stack: list entry 2 has shape (3,) but entry 1 has (2,) (all entries must "
                 "have the same shape)");
    at.axis = 2;
    expect_error(MF_OP_STACK, 1, &x, &at, MF_EARG, "stack: axis 3 out of range for rank 2");
    MfTensor *all[] = {x, y, z, r0, r1};
    release(5, all);
}

static MfAttrs slice_attrs(int rank, const int64_t *begin, const int64_t *size)
{
    MfAttrs at = mf_attrs_default();
    at.nints = 2 * rank;
    for (int d = 0; d < rank; d++) {
        at.ints[d] = begin[d];
        at.ints[rank + d] = size[d];
    }
    return at;
}

static void test_slice(void **state)
{
    (void)state;
    MfTensor *a = m23(MF_FLOAT64), *t = transposed(a);
    MfAttrs at = slice_attrs(2, (int64_t[]){0, 1}, (int64_t[]){-1, 2});
    MfTensor *s = run(MF_OP_SLICE, 1, &a, &at);
    assert_ptr_equal(s->storage, a->storage); /* a view */
    assert_shape(s, 2, (int64_t[]){2, 2});
    assert_values(s, (double[]){2, 3, 5, 6}, 4, 0);
    at = slice_attrs(2, (int64_t[]){1, 1}, (int64_t[]){2, 1});
    MfTensor *st = run(MF_OP_SLICE, 1, &t, &at); /* rows 2..3 of the transpose, column 2 */
    assert_values(st, (double[]){5, 6}, 2, 0);
    at = slice_attrs(2, (int64_t[]){2, 0}, (int64_t[]){-1, -1});
    MfTensor *e = run(MF_OP_SLICE, 1, &a, &at);
    assert_shape(e, 2, (int64_t[]){0, 3});
    at = slice_attrs(2, (int64_t[]){0, 3}, (int64_t[]){1, 1});
    expect_error(MF_OP_SLICE, 1, &a, &at, MF_EARG,
                 "slice: begin 4 out of range for axis 2 of size 3 (begin is 1-based: 1..3)");
    at = slice_attrs(2, (int64_t[]){0, 1}, (int64_t[]){1, 3});
    expect_error(MF_OP_SLICE, 1, &a, &at, MF_EARG, "slice: begin 2 with size 3 runs past the "
                 "end of axis 2 of size 3 (at most 2 elements from there)");
    at = slice_attrs(2, (int64_t[]){0, 0}, (int64_t[]){-2, 1});
    expect_error(MF_OP_SLICE, 1, &a, &at, MF_EARG, "slice: size -2 for axis 1 must be >= 0");
    at.nints = 2;
    expect_error(MF_OP_SLICE, 1, &a, &at, MF_EARG, "expected begin and size with 2 entries");
    MfTensor *all[] = {a, t, s, st, e};
    release(5, all);
}

static void test_gather(void **state)
{
    (void)state;
    MfTensor *a = m23(MF_FLOAT32), *t = transposed(a);
    MfTensor *ix = make_tensor(MF_INT32, 2, (int64_t[]){2, 2}, (double[]){2, 0, 1, 1});
    MfAttrs at = mf_attrs_default();
    at.axis = 1;
    MfTensor *g = run(MF_OP_GATHER, 2, (MfTensor *[]){a, ix}, &at);
    assert_shape(g, 3, (int64_t[]){2, 2, 2});
    assert_values(g, (double[]){3, 1, 2, 2, 6, 4, 5, 5}, 8, 0);
    MfTensor *i1 = make_tensor(MF_INT64, 1, (int64_t[]){3}, (double[]){1, 1, 0});
    at.axis = 0;
    MfTensor *gt = run(MF_OP_GATHER, 2, (MfTensor *[]){t, i1}, &at); /* rows of the transpose */
    assert_values(gt, (double[]){2, 5, 2, 5, 1, 4}, 6, 0);
    MfTensor *bad = make_tensor(MF_INT64, 1, (int64_t[]){2}, (double[]){0, 3});
    expect_error(MF_OP_GATHER, 2, (MfTensor *[]){t, bad}, &at, MF_EARG,
                 "gather: index 4 out of range for axis 1 of size 3 (indices are 1-based: 1..3)");
    expect_error(MF_OP_GATHER, 2, (MfTensor *[]){a, a}, &at, MF_EDTYPE,
                 "gather: expected int32 or int64 indices");
    at.axis = 2;
    expect_error(MF_OP_GATHER, 2, (MfTensor *[]){a, i1}, &at, MF_EARG, "axis 3 out of range");
    MfTensor *all[] = {a, t, ix, g, i1, gt, bad};
    release(7, all);
}

static void test_reverse_tile(void **state)
{
    (void)state;
    MfTensor *a = m23(MF_INT32), *t = transposed(a);
    MfAttrs at = mf_attrs_default();
    at.naxes = 2;
    at.axes[0] = 0;
    at.axes[1] = -1;
    MfTensor *r = run(MF_OP_REVERSE, 1, &a, &at);
    assert_values(r, (double[]){6, 5, 4, 3, 2, 1}, 6, 0);
    at.naxes = 1;
    MfTensor *rt = run(MF_OP_REVERSE, 1, &t, &at); /* (3,2) view, rows reversed */
    assert_values(rt, (double[]){3, 6, 2, 5, 1, 4}, 6, 0);
    at.naxes = 2;
    at.axes[1] = 0;
    expect_error(MF_OP_REVERSE, 1, &a, &at, MF_EARG, "reverse: axis 1 is listed twice");
    MfAttrs tl = mf_attrs_default();
    tl.nints = 2;
    tl.ints[0] = 2;
    tl.ints[1] = 2;
    MfTensor *tt = run(MF_OP_TILE, 1, &t, &tl);
    assert_shape(tt, 2, (int64_t[]){6, 4});
    assert_values(tt, (double[]){1, 4, 1, 4, 2, 5, 2, 5, 3, 6, 3, 6,
                                 1, 4, 1, 4, 2, 5, 2, 5, 3, 6, 3, 6}, 24, 0);
    tl.ints[1] = -1;
    expect_error(MF_OP_TILE, 1, &a, &tl, MF_EARG,
                 "tile: multiples must be >= 0, got -1 for axis 2");
    tl.nints = 1;
    expect_error(MF_OP_TILE, 1, &a, &tl, MF_EARG,
                 "tile: expected 2 multiples (one per axis), got 1");
    MfTensor *all[] = {a, t, r, rt, tt};
    release(5, all);
}

static void test_pad_broadcast(void **state)
{
    (void)state;
    MfTensor *a = m23(MF_FLOAT64), *t = transposed(a);
    MfAttrs at = mf_attrs_default();
    at.nints = 4;
    at.ints[0] = 1; /* one row before, one column after */
    at.ints[3] = 1;
    at.scalar[0] = -1;
    MfTensor *p = run(MF_OP_PAD, 1, &t, &at);
    assert_shape(p, 2, (int64_t[]){4, 3});
    assert_values(p, (double[]){-1, -1, -1, 1, 4, -1, 2, 5, -1, 3, 6, -1}, 12, 0);
    at.ints[1] = -2;
    expect_error(MF_OP_PAD, 1, &a, &at, MF_EARG,
                 "pad: paddings must be >= 0, got {1, -2} for axis 1");
    MfTensor *col = make_tensor(MF_FLOAT64, 2, (int64_t[]){3, 1}, (double[]){1, 2, 3});
    MfAttrs bt = mf_attrs_default();
    bt.nints = 3;
    bt.ints[0] = 2;
    bt.ints[1] = 3;
    bt.ints[2] = 2;
    MfTensor *b = run(MF_OP_BROADCAST_TO, 1, &col, &bt);
    assert_shape(b, 3, (int64_t[]){2, 3, 2});
    assert_values(b, (double[]){1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}, 12, 0);
    expect_error(MF_OP_BROADCAST_TO, 1, &a, &bt, MF_ESHAPE,
                 "broadcast_to: cannot broadcast shape (2,3) to (2,3,2)");
    MfTensor *all[] = {a, t, p, col, b};
    release(5, all);
}

static void test_one_hot(void **state)
{
    (void)state;
    MfTensor *ix = make_tensor(MF_INT64, 1, (int64_t[]){3}, (double[]){0, 2, 1}), *o = NULL;
    assert_int_equal(mf_one_hot(ix, 3, &o), MF_OK);
    assert_int_equal(o->dtype, MF_FLOAT32);
    assert_shape(o, 2, (int64_t[]){3, 3});
    assert_values(o, (double[]){1, 0, 0, 0, 0, 1, 0, 1, 0}, 9, 0);
    MfAttrs at = mf_attrs_default();
    at.n = 4;
    at.dtype = MF_INT32;
    at.scalar[0] = 5;
    at.scalar[1] = -1;
    MfTensor *oi = run(MF_OP_ONE_HOT, 1, &ix, &at);
    assert_int_equal(oi->dtype, MF_INT32);
    assert_values(oi, (double[]){5, -1, -1, -1, -1, -1, 5, -1, -1, 5, -1, -1}, 12, 0);
    at.n = 2;
    expect_error(MF_OP_ONE_HOT, 1, &ix, &at, MF_EARG,
                 "one_hot: label 3 out of range (classes are 1-based: 1..2)");
    at.n = -1;
    expect_error(MF_OP_ONE_HOT, 1, &ix, &at, MF_EARG, "one_hot: depth must be >= 0, got -1");
    assert_true(mf_op_table[MF_OP_ONE_HOT]->flags & MF_OP_NONDIFF);
    MfTensor *all[] = {ix, o, oi};
    release(3, all);
}

static void test_identity_and_queries(void **state)
{
    (void)state;
    MfTensor *a = m23(MF_BOOL), *t = transposed(a), *id = NULL, *sg = NULL;
    assert_int_equal(mf_unary(MF_OP_IDENTITY, t, &id), MF_OK);
    assert_int_equal(mf_unary(MF_OP_STOP_GRADIENT, t, &sg), MF_OK);
    assert_ptr_equal(id->storage, a->storage);
    assert_values(sg, (double[]){1, 1, 1, 1, 1, 1}, 6, 0);
    assert_shape(sg, 2, (int64_t[]){3, 2});
    assert_true(mf_op_table[MF_OP_STOP_GRADIENT]->flags & MF_OP_NONDIFF);
    assert_false(mf_op_table[MF_OP_IDENTITY]->flags & MF_OP_NONDIFF);
    MfTensor *sz = NULL, *rk = NULL, *sh = NULL;
    assert_int_equal(mf_unary(MF_OP_SIZE, t, &sz), MF_OK);
    assert_int_equal(mf_unary(MF_OP_RANK, t, &rk), MF_OK);
    assert_int_equal(mf_unary(MF_OP_SHAPE, t, &sh), MF_OK);
    assert_int_equal(sz->dtype, MF_INT32);
    assert_int_equal(sh->dtype, MF_INT32);
    assert_values(sz, (double[]){6}, 1, 0);
    assert_values(rk, (double[]){2}, 1, 0);
    assert_values(sh, (double[]){3, 2}, 2, 0);
    MfTensor *all[] = {a, t, id, sg, sz, rk, sh};
    release(7, all);
}

static void test_split_unstack(void **state)
{
    (void)state;
    MfTensor *a = m23(MF_FLOAT32), *parts[3] = {NULL, NULL, NULL};
    assert_int_equal(mf_split(a, 1, 3, NULL, parts), MF_OK);
    for (int i = 0; i < 3; i++)
        assert_values(parts[i], (double[]){1.0 + i, 4.0 + i}, 2, 0);
    release(3, parts);
    assert_int_equal(mf_split(a, -1, 2, (int64_t[]){-1, 1}, parts), MF_OK);
    assert_values(parts[0], (double[]){1, 2, 4, 5}, 4, 0);
    assert_values(parts[1], (double[]){3, 6}, 2, 0);
    release(2, parts);
    assert_int_equal(mf_split(a, 1, 2, NULL, parts), MF_EARG);
    assert_error_contains("split: 2 parts do not evenly divide axis 2 of size 3");
    assert_int_equal(mf_split(a, 1, 2, (int64_t[]){1, 1}, parts), MF_ESHAPE);
    assert_error_contains("split: sizes add up to 2 but axis 2 has size 3");
    assert_int_equal(mf_split(a, 1, 2, (int64_t[]){-1, -1}, parts), MF_EARG);
    assert_error_contains("at most one -1");
    assert_int_equal(mf_split(a, 2, 1, NULL, parts), MF_EARG);
    assert_error_contains("split: axis 3 out of range for rank 2");
    assert_int_equal(mf_unstack(a, 1, parts), MF_OK);
    assert_shape(parts[2], 1, (int64_t[]){2});
    assert_values(parts[2], (double[]){3, 6}, 2, 0);
    release(3, parts);
    MfTensor *s = mf_tensor_scalar(MF_FLOAT32, 1);
    assert_int_equal(mf_unstack(s, 0, parts), MF_EARG);
    assert_error_contains("unstack: a scalar (rank 0)");
    mf_tensor_release(s);
    mf_tensor_release(a);
}

/* Inference keeps unknown dims (-1) of symbolic inputs unknown. */
static void test_infer_unknown_dims(void **state)
{
    (void)state;
    MfTensor *x = mf_tensor_symbolic(MF_FLOAT32, 2, (int64_t[]){-1, 3}, NULL, 0);
    MfTensor *y = mf_tensor_symbolic(MF_FLOAT32, 2, (int64_t[]){2, -1}, NULL, 0);
    MfAttrs at = mf_attrs_default();
    MfOpCall c = {.op = MF_OP_CONCAT, .ninputs = 2, .inputs = (MfTensor *[]){x, y}, .attrs = &at};
    assert_int_equal(mf_op_table[MF_OP_CONCAT]->infer(&c), MF_OK);
    assert_int_equal(c.out[0].shape[0], -1);
    assert_int_equal(c.out[0].shape[1], 3);
    MfAttrs tl = mf_attrs_default();
    tl.nints = 2;
    tl.ints[0] = 2;
    tl.ints[1] = 2;
    MfOpCall ct = {.op = MF_OP_TILE, .ninputs = 1, .inputs = &x, .attrs = &tl};
    assert_int_equal(mf_op_table[MF_OP_TILE]->infer(&ct), MF_OK);
    assert_int_equal(ct.out[0].shape[0], -1);
    assert_int_equal(ct.out[0].shape[1], 6);
    MfAttrs sl = slice_attrs(2, (int64_t[]){1, 0}, (int64_t[]){-1, 2});
    MfOpCall cs = {.op = MF_OP_SLICE, .ninputs = 1, .inputs = &x, .attrs = &sl};
    assert_int_equal(mf_op_table[MF_OP_SLICE]->infer(&cs), MF_OK);
    assert_int_equal(cs.out[0].shape[0], -1);
    assert_int_equal(cs.out[0].shape[1], 2);
    mf_tensor_release(x);
    mf_tensor_release(y);
}

/* Failing each allocation in turn reports MF_ENOMEM and leaks nothing. */
static void test_out_of_memory(void **state)
{
    (void)state;
    MfTensor *a = m23(MF_FLOAT32), *parts[3];
    MfAttrs at = mf_attrs_default();
    int failures = 0;
    for (int k = 1; k < 50; k++) {
        mf_alloc_fail_at(k);
        MfStatus st = mf_unstack(a, 1, parts);
        mf_alloc_fail_at(0);
        if (st == MF_OK) {
            release(3, parts);
            break;
        }
        assert_int_equal(st, MF_ENOMEM);
        mf_err_clear();
        failures++;
    }
    assert_true(failures > 0);
    mf_alloc_fail_at(1);
    MfTensor *out = NULL;
    assert_int_equal(mf_op1(MF_OP_CONCAT, 2, (MfTensor *[]){a, a}, &at, &out), MF_ENOMEM);
    mf_alloc_fail_at(0);
    assert_null(out);
    mf_err_clear();
    assert_int_equal(mf_tensor_live_count(), 1);
    mf_tensor_release(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_concat),          TEST(test_concat_errors),
        TEST(test_stack),           TEST(test_slice),
        TEST(test_gather),          TEST(test_reverse_tile),
        TEST(test_pad_broadcast),   TEST(test_one_hot),
        TEST(test_identity_and_queries), TEST(test_split_unstack),
        TEST(test_infer_unknown_dims), TEST(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
