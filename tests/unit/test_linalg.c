/* test_linalg.c — MatMul, BatchMatMulV2, Trace, tensordot and the view ops
 * (Transpose, Reshape, ExpandDims, Squeeze): values against naive loops,
 * strided and transposed inputs, broadcasting of batches, unknown dims in
 * shape inference, costs, out-of-memory paths and every error message. */
#include <stdlib.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/ops/linalg.h"
#include "core/ops/view.h"

/* A tensor of 'dt' and 'shape' with small integer values (exact in every
 * dtype), different for each 'seed'. */
static MfTensor *filled(MfDType dt, int rank, const int64_t *shape, int seed)
{
    int64_t n = mf_shape_numel(rank, shape);
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)(((i + 1) * 37 + seed * 11) % 17) - 8;
    MfTensor *t = make_tensor(dt, rank, shape, v);
    free(v);
    return t;
}

/* Element (b, i, j) of a rank-2 or rank-3 tensor, with batch broadcasting. */
static double at3(const MfTensor *t, int64_t b, int64_t i, int64_t j)
{
    int r = t->rank;
    int64_t off = t->offset + i * t->strides[r - 2] + j * t->strides[r - 1];
    if (r == 3 && t->shape[0] > 1)
        off += b * t->strides[0];
    MfTensor v = *t; /* read one element through a rank-0 header */
    v.rank = 0;
    v.offset = off;
    return mf_tensor_get(&v, 0);
}

/* Naive triple loop: the expected op(a) x op(b), row-major, into 'out'. */
static void naive_matmul(const MfTensor *a, const MfTensor *b, bool ta, bool tb, int64_t nb,
                         int64_t M, int64_t N, int64_t K, double *out)
{
    for (int64_t k = 0; k < nb; k++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0;
                for (int64_t p = 0; p < K; p++)
                    s += (ta ? at3(a, k, p, i) : at3(a, k, i, p)) *
                         (tb ? at3(b, k, j, p) : at3(b, k, p, j));
                out[(k * M + i) * N + j] = s;
            }
}

/* Runs mf_matmul and checks shape and values against the naive loop. */
static void check_matmul(MfTensor *a, MfTensor *b, bool ta, bool tb)
{
    MfTensor *c = NULL;
    assert_int_equal(mf_matmul(a, b, ta, tb, &c), MF_OK);
    int r = c->rank;
    int64_t nb = r == 3 ? c->shape[0] : 1, M = c->shape[r - 2], N = c->shape[r - 1];
    int64_t K = a->shape[a->rank - (ta ? 2 : 1)];
    assert_int_equal(c->dtype, a->dtype);
    assert_int_equal(M, a->shape[a->rank - (ta ? 1 : 2)]);
    assert_int_equal(N, b->shape[b->rank - (tb ? 2 : 1)]);
    double *want = malloc(sizeof(double) * (size_t)(nb * M * N + 1));
    naive_matmul(a, b, ta, tb, nb, M, N, K, want);
    assert_values(c, want, nb * M * N, 1e-9);
    free(want);
    mf_tensor_release(c);
}

/* op(a) has shape m x k, op(b) k x n; stores a and b as the flags say. */
static void matmul_case(MfDType dt, int64_t m, int64_t n, int64_t k, bool ta, bool tb)
{
    int64_t sa[2] = {ta ? k : m, ta ? m : k}, sb[2] = {tb ? n : k, tb ? k : n};
    MfTensor *a = filled(dt, 2, sa, 1), *b = filled(dt, 2, sb, 2);
    check_matmul(a, b, ta, tb);
    mf_tensor_release(a);
    mf_tensor_release(b);
}

static void test_matmul_shapes_transposes_dtypes(void **state)
{
    (void)state;
    static const int64_t sizes[][3] = {{2, 3, 4}, {1, 1, 1}, {1, 5, 3}, {7, 1, 2},
                                       {3, 4, 1}, {33, 17, 130}, {5, 600, 9}};
    static const MfDType dts[] = {MF_FLOAT32, MF_FLOAT64, MF_INT32, MF_INT64};
    for (size_t d = 0; d < 4; d++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int t = 0; t < 4; t++)
                matmul_case(dts[d], sizes[s][0], sizes[s][1], sizes[s][2], t & 1, t & 2);
}

static void test_matmul_hand_computed(void **state)
{
    (void)state;
    int64_t sa[2] = {2, 3}, sb[2] = {3, 2};
    MfTensor *a = make_tensor(MF_FLOAT32, 2, sa, (double[]){1, 2, 3, 4, 5, 6});
    MfTensor *b = make_tensor(MF_FLOAT32, 2, sb, (double[]){1, 2, 3, 4, 5, 6});
    MfTensor *c = NULL;
    assert_int_equal(mf_matmul(a, b, false, false, &c), MF_OK);
    assert_values(c, (double[]){22, 28, 49, 64}, 4, 0);
    mf_tensor_release(c);
    assert_int_equal(mf_matmul(a, a, false, true, &c), MF_OK);
    assert_values(c, (double[]){14, 32, 32, 77}, 4, 0);
    mf_tensor_release(c);
    mf_tensor_release(a);
    mf_tensor_release(b);
}

/* Transposed views (column-major for BLAS), views with a row stride wider
 * than the row, and views with no unit stride (copied before BLAS). */
static void test_matmul_strided_inputs(void **state)
{
    (void)state;
    static const MfDType dts[] = {MF_FLOAT32, MF_FLOAT64, MF_INT32, MF_INT64};
    for (size_t d = 0; d < 4; d++) {
        int64_t sbig[2] = {6, 8}, sb[2] = {4, 3};
        MfTensor *big = filled(dts[d], 2, sbig, 3), *b = filled(dts[d], 2, sb, 4);
        MfTensor *bt = NULL;
        assert_int_equal(mf_transpose(b, NULL, 0, &bt), MF_OK); /* 3 x 4, column-major */
        int64_t vs[2] = {3, 4}, rows[2] = {8, 1}, every2[2] = {16, 2};
        MfTensor *wide = mf_tensor_view(big, 2, vs, rows, 1);    /* row stride 8 */
        MfTensor *skip = mf_tensor_view(big, 2, vs, every2, 0);  /* no unit stride */
        MfTensor *wt = NULL;
        assert_int_equal(mf_transpose(wide, NULL, 0, &wt), MF_OK); /* 4 x 3, ld 8 */
        check_matmul(wide, b, false, false);
        check_matmul(wide, bt, false, true);
        check_matmul(bt, wide, false, true);
        check_matmul(bt, b, false, false);
        check_matmul(wt, wide, false, false);
        check_matmul(wt, b, true, false);
        check_matmul(skip, bt, false, true);
        for (int t = 0; t < 2; t++) {
            check_matmul(skip, skip, t, !t);
            check_matmul(bt, bt, t, !t);
            check_matmul(wt, skip, !t, !t);
        }
        mf_tensor_release(wt);
        mf_tensor_release(wide);
        mf_tensor_release(skip);
        mf_tensor_release(bt);
        mf_tensor_release(big);
        mf_tensor_release(b);
    }
}

/* Allocations one mf_matmul makes (output header and storage, plus copies). */
static int64_t matmul_allocs(MfTensor *a, MfTensor *b, bool ta, bool tb)
{
    MfTensor *c = NULL;
    int64_t before = mf_alloc_count();
    assert_int_equal(mf_matmul(a, b, ta, tb, &c), MF_OK);
    int64_t n = mf_alloc_count() - before;
    mf_tensor_release(c);
    return n;
}

/* A transposed contiguous matrix goes to BLAS as it is (its transpose
 * folded into the flag); a layout without unit stride is copied first. */
static void test_matmul_transposed_view_not_copied(void **state)
{
    (void)state;
    int64_t s[2] = {4, 4}, vs[2] = {2, 2}, st[2] = {8, 2};
    MfTensor *a = filled(MF_FLOAT32, 2, s, 1), *at = NULL;
    assert_int_equal(mf_transpose(a, NULL, 0, &at), MF_OK);
    MfTensor *skip = mf_tensor_view(a, 2, vs, st, 0);
    int64_t plain = matmul_allocs(a, a, false, false);
    assert_int_equal(matmul_allocs(at, a, false, false), plain);
    assert_int_equal(matmul_allocs(a, at, true, true), plain);
    assert_true(matmul_allocs(skip, skip, false, false) > plain);
    mf_tensor_release(skip);
    mf_tensor_release(at);
    mf_tensor_release(a);
}

static void test_batch_matmul_and_broadcast(void **state)
{
    (void)state;
    static const int64_t shapes[][2][3] = {
        {{3, 2, 4}, {3, 4, 5}}, {{1, 2, 4}, {3, 4, 5}}, {{3, 2, 4}, {1, 4, 5}},
        {{2, 0, 4}, {2, 4, 5}}, {{2, 3, 0}, {2, 0, 5}},
    };
    static const MfDType dts[] = {MF_FLOAT32, MF_FLOAT64, MF_INT32, MF_INT64};
    for (size_t d = 0; d < 4; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            MfTensor *a = filled(dts[d], 3, shapes[s][0], 5);
            MfTensor *b = filled(dts[d], 3, shapes[s][1], 6);
            MfTensor *bt = NULL;
            check_matmul(a, b, false, false);
            int64_t perm[3] = {0, 2, 1};
            assert_int_equal(mf_transpose(b, perm, 3, &bt), MF_OK);
            check_matmul(a, bt, false, true);
            mf_tensor_release(bt);
            mf_tensor_release(a);
            mf_tensor_release(b);
        }
}

/* A rank-2 operand is one matrix for every batch, on either side. */
static void test_batch_matmul_rank2_operand(void **state)
{
    (void)state;
    int64_t s3[3] = {4, 2, 3}, s2[2] = {3, 5}, s2b[2] = {6, 2};
    MfTensor *a = filled(MF_FLOAT32, 3, s3, 1), *b = filled(MF_FLOAT32, 2, s2, 2);
    MfTensor *c2 = filled(MF_FLOAT32, 2, s2b, 3), *c = NULL;
    check_matmul(a, b, false, false);
    check_matmul(c2, a, false, false);
    assert_int_equal(mf_matmul(a, b, false, false, &c), MF_OK);
    assert_int_equal(c->rank, 3);
    assert_int_equal(c->shape[0], 4);
    mf_tensor_release(c);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(c2);
}

static void test_matmul_empty(void **state)
{
    (void)state;
    int64_t sa[2] = {2, 0}, sb[2] = {0, 3}, sz[2] = {0, 4}, s4[2] = {4, 3};
    MfTensor *a = mf_tensor_new(MF_FLOAT32, 2, sa), *b = mf_tensor_new(MF_FLOAT32, 2, sb);
    MfTensor *z = mf_tensor_new(MF_INT32, 2, sz), *w = filled(MF_INT32, 2, s4, 1), *c = NULL;
    assert_int_equal(mf_matmul(a, b, false, false, &c), MF_OK);
    assert_int_equal(c->shape[0], 2);
    assert_int_equal(c->shape[1], 3);
    assert_values(c, (double[]){0, 0, 0, 0, 0, 0}, 6, 0);
    mf_tensor_release(c);
    assert_int_equal(mf_matmul(z, w, false, false, &c), MF_OK);
    assert_int_equal(c->shape[0], 0);
    assert_int_equal(c->shape[1], 3);
    mf_tensor_release(c);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(z);
    mf_tensor_release(w);
}

/* Integer products wrap instead of overflowing (undefined behaviour). */
static void test_matmul_int_wraps(void **state)
{
    (void)state;
    int64_t s[2] = {1, 1};
    MfTensor *a = make_tensor(MF_INT32, 2, s, (double[]){65536}), *c = NULL;
    assert_int_equal(mf_matmul(a, a, false, false, &c), MF_OK);
    assert_values(c, (double[]){0}, 1, 0);
    mf_tensor_release(c);
    mf_tensor_release(a);
}

static void expect_matmul_error(MfTensor *a, MfTensor *b, bool ta, bool tb, MfStatus code,
                                const char *msg)
{
    MfTensor *c = (MfTensor *)&c;
    assert_int_equal(mf_matmul(a, b, ta, tb, &c), code);
    assert_null(c);
    assert_error_contains(msg);
}

static void test_matmul_errors(void **state)
{
    (void)state;
    int64_t s23[2] = {2, 3}, s45[2] = {4, 5}, s3[1] = {3}, s4d[4] = {1, 1, 2, 3};
    int64_t b1[3] = {2, 3, 4}, b2[3] = {3, 4, 5};
    MfTensor *a = filled(MF_FLOAT32, 2, s23, 1), *b = filled(MF_FLOAT32, 2, s45, 1);
    MfTensor *v = filled(MF_FLOAT32, 1, s3, 1), *r4 = filled(MF_FLOAT32, 4, s4d, 1);
    MfTensor *i = filled(MF_INT32, 2, s45, 1), *bo = filled(MF_BOOL, 2, s23, 1);
    MfTensor *x = filled(MF_FLOAT32, 3, b1, 1), *y = filled(MF_FLOAT32, 3, b2, 1);
    expect_matmul_error(a, b, false, false, MF_ESHAPE,
                        "matmul: inner dimensions differ: (2,3) x (4,5)");
    expect_matmul_error(a, b, true, true, MF_ESHAPE,
                        "matmul: inner dimensions differ: (2,3) x (4,5) with transpose_a and "
                        "transpose_b (2 vs 5)");
    expect_matmul_error(a, a, false, false, MF_ESHAPE, "(2,3) x (2,3)");
    expect_matmul_error(a, b, false, true, MF_ESHAPE, "with transpose_b (3 vs 5)");
    expect_matmul_error(v, a, false, false, MF_ESHAPE,
                        "matmul: inner dimensions differ: (1,3) x (2,3) (a vector (rank 1) is "
                        "a row on the left, a column on the right)");
    expect_matmul_error(a, v, false, true, MF_EARG,
                        "matmul: transpose_b needs a matrix, got a vector of shape (3,)");
    expect_matmul_error(r4, a, false, false, MF_ESHAPE,
                        "matmul: inner dimensions differ: (1,1,2,3) x (2,3)");
    MfTensor *s0 = filled(MF_FLOAT32, 0, s3, 2);
    expect_matmul_error(s0, a, false, false, MF_ESHAPE,
                        "matmul: expected vectors, matrices or batches of matrices (rank 1 or "
                        "more), got shapes () and (2,3) (ranks 0 and 2)");
    mf_tensor_release(s0);
    expect_matmul_error(a, i, false, false, MF_EDTYPE, "matmul: dtypes differ: float32 and int32");
    expect_matmul_error(bo, bo, false, true, MF_EDTYPE, "matmul: expected a numeric dtype");
    expect_matmul_error(x, y, false, false, MF_ESHAPE,
                        "matmul: batch dimensions differ: (2,3,4) x (3,4,5) (batch sizes 2 and 3 "
                        "do not broadcast)");
    MfTensor *in[2] = {x, y}, *c = NULL;
    assert_int_equal(mf_op1(MF_OP_MATMUL, 2, in, NULL, &c), MF_ESHAPE);
    assert_error_contains("matmul: expected two matrices (rank 2)");
    in[0] = v;
    assert_int_equal(mf_op1(MF_OP_BATCH_MATMUL, 2, in, NULL, &c), MF_ESHAPE);
    assert_error_contains("matmul: expected matrices or batches of matrices (rank 2 or more), "
                          "got shapes (3,) and (3,4,5)");
    MfTensor *all[] = {a, b, v, r4, i, bo, x, y};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        mf_tensor_release(all[k]);
}

/* Runs an op's 'infer' on symbolic inputs (no graph needed). */
static MfStatus infer(MfOpId op, int n, MfTensor *const *in, const MfAttrs *a, MfOpCall *c)
{
    static const MfAttrs none;
    *c = (MfOpCall){.op = op, .ninputs = n, .inputs = in, .attrs = a ? a : &none};
    return mf_op_table[op]->infer(c);
}

static void assert_spec(const MfOpCall *c, int rank, const int64_t *shape)
{
    assert_int_equal(c->noutputs, 1);
    assert_int_equal(c->out[0].rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(c->out[0].shape[i], shape[i]);
}

static void test_infer_unknown_dims(void **state)
{
    (void)state;
    int64_t sa[2] = {-1, 3}, sb[2] = {3, -1}, s3[3] = {-1, 2, 3}, s1[3] = {1, 3, 4};
    MfTensor *a = mf_tensor_symbolic(MF_FLOAT32, 2, sa, NULL, 0);
    MfTensor *b = mf_tensor_symbolic(MF_FLOAT32, 2, sb, NULL, 0);
    MfTensor *x = mf_tensor_symbolic(MF_FLOAT32, 3, s3, NULL, 0);
    MfTensor *y = mf_tensor_symbolic(MF_FLOAT32, 3, s1, NULL, 0);
    MfOpCall c;
    MfAttrs at = mf_attrs_default();
    assert_int_equal(infer(MF_OP_MATMUL, 2, (MfTensor *[]){a, b}, NULL, &c), MF_OK);
    assert_spec(&c, 2, (int64_t[]){-1, -1});
    at.transpose_a = at.transpose_b = true;
    assert_int_equal(infer(MF_OP_MATMUL, 2, (MfTensor *[]){b, a}, &at, &c), MF_OK);
    assert_spec(&c, 2, (int64_t[]){-1, -1});
    assert_int_equal(infer(MF_OP_BATCH_MATMUL, 2, (MfTensor *[]){x, y}, NULL, &c), MF_OK);
    assert_spec(&c, 3, (int64_t[]){-1, 2, 4});
    at = mf_attrs_default();
    at.nints = 2;
    at.ints[0] = -1;
    at.ints[1] = 6;
    assert_int_equal(infer(MF_OP_RESHAPE, 1, &x, &at, &c), MF_OK);
    assert_spec(&c, 2, (int64_t[]){-1, 6});
    assert_int_equal(infer(MF_OP_SQUEEZE, 1, &y, NULL, &c), MF_OK);
    assert_spec(&c, 2, (int64_t[]){3, 4});
    assert_int_equal(infer(MF_OP_SQUEEZE, 1, &x, NULL, &c), MF_OK);
    assert_spec(&c, 3, (int64_t[]){-1, 2, 3});
    assert_int_equal(infer(MF_OP_TRANSPOSE, 1, &x, NULL, &c), MF_OK);
    assert_spec(&c, 3, (int64_t[]){3, 2, -1});
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(x);
    mf_tensor_release(y);
}

static void test_matmul_cost(void **state)
{
    (void)state;
    int64_t sa[3] = {2, 3, 4}, sb[3] = {2, 4, 5};
    MfTensor *a = filled(MF_FLOAT32, 3, sa, 1), *b = filled(MF_FLOAT32, 3, sb, 1);
    MfOpCall c;
    assert_int_equal(infer(MF_OP_BATCH_MATMUL, 2, (MfTensor *[]){a, b}, NULL, &c), MF_OK);
    MfCost cost = mf_op_table[MF_OP_BATCH_MATMUL]->cost(&c);
    assert_true(cost.flops == 2.0 * 2 * 3 * 5 * 4);
    assert_true(cost.bytes == 4.0 * (24 + 40 + 30));
    mf_tensor_release(a);
    mf_tensor_release(b);
}

/* ---- view ops --------------------------------------------------------------- */

static void test_transpose(void **state)
{
    (void)state;
    int64_t s[3] = {2, 3, 4};
    MfTensor *t = filled(MF_INT64, 3, s, 1), *r = NULL, *p = NULL;
    assert_int_equal(mf_transpose(t, NULL, 0, &r), MF_OK);
    assert_int_equal(mf_transpose(t, (int64_t[]){1, -1, 0}, 3, &p), MF_OK);
    assert_ptr_equal(r->storage, t->storage);
    assert_int_equal(r->shape[0], 4);
    assert_int_equal(r->shape[2], 2);
    assert_int_equal(p->shape[0], 3);
    assert_int_equal(p->shape[1], 4);
    for (int64_t i = 0; i < 2; i++)
        for (int64_t j = 0; j < 3; j++)
            for (int64_t k = 0; k < 4; k++) {
                assert_true(mf_tensor_get(r, (k * 3 + j) * 2 + i) ==
                            mf_tensor_get(t, (i * 3 + j) * 4 + k));
                assert_true(mf_tensor_get(p, (j * 4 + k) * 2 + i) ==
                            mf_tensor_get(t, (i * 3 + j) * 4 + k));
            }
    mf_tensor_release(r);
    assert_int_equal(mf_transpose(t, (int64_t[]){0, 0, 1}, 3, &r), MF_EARG);
    assert_null(r);
    assert_error_contains("transpose: axis 1 appears twice in perm");
    assert_int_equal(mf_transpose(t, (int64_t[]){0, 1}, 2, &r), MF_EARG);
    assert_error_contains("transpose: perm has 2 entries but the tensor has rank 3 "
                          "(shape (2,3,4))");
    assert_int_equal(mf_transpose(t, (int64_t[]){0, 1, 5}, 3, &r), MF_EARG);
    assert_error_contains("perm entry 3 is 6, out of range for rank 3 (axes are 1-based: 1..3)");
    mf_tensor_release(t);
    mf_tensor_release(p);
}

static void test_reshape(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3};
    MfTensor *t = make_tensor(MF_FLOAT32, 2, s, (double[]){1, 2, 3, 4, 5, 6});
    MfTensor *r = NULL, *tt = NULL, *f = NULL;
    assert_int_equal(mf_reshape(t, 2, (int64_t[]){3, -1}, &r), MF_OK);
    assert_ptr_equal(r->storage, t->storage); /* contiguous: a view */
    assert_int_equal(r->shape[1], 2);
    assert_values(r, (double[]){1, 2, 3, 4, 5, 6}, 6, 0);
    assert_int_equal(mf_transpose(t, NULL, 0, &tt), MF_OK);
    assert_int_equal(mf_reshape(tt, 1, (int64_t[]){-1}, &f), MF_OK);
    assert_ptr_not_equal(f->storage, t->storage); /* strided: a copy, in row-major order */
    assert_int_equal(f->shape[0], 6);
    assert_values(f, (double[]){1, 4, 2, 5, 3, 6}, 6, 0);
    mf_tensor_release(f);
    assert_int_equal(mf_reshape(r, 0, NULL, &f), MF_ESHAPE);
    assert_error_contains("reshape: cannot reshape a tensor of shape (3,2) (6 elements) into "
                          "shape () (1 element)");
    assert_int_equal(mf_reshape(t, 2, (int64_t[]){4, -1}, &f), MF_ESHAPE);
    assert_error_contains("into shape (4,-1): 6 is not a multiple of 4");
    assert_int_equal(mf_reshape(t, 2, (int64_t[]){-1, -1}, &f), MF_ESHAPE);
    assert_error_contains("reshape: only one dimension can be -1 (inferred), got shape (-1,-1)");
    assert_int_equal(mf_reshape(t, 2, (int64_t[]){0, -1}, &f), MF_ESHAPE);
    assert_error_contains("cannot infer the -1 in shape (0,-1)");
    assert_int_equal(mf_reshape(t, 1, (int64_t[]){-3}, &f), MF_ESHAPE);
    assert_error_contains("dimensions must be >= 0 or -1");
    assert_int_equal(mf_reshape(t, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 6}, &f), MF_ESHAPE);
    assert_error_contains("at most 8");
    assert_null(f);
    mf_tensor_release(t);
    mf_tensor_release(r);
    mf_tensor_release(tt);
}

static void test_expand_dims_and_squeeze(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3};
    MfTensor *t = make_tensor(MF_FLOAT64, 2, s, (double[]){1, 2, 3, 4, 5, 6});
    MfTensor *e0 = NULL, *e2 = NULL, *em = NULL, *q = NULL, *q1 = NULL;
    assert_int_equal(mf_expand_dims(t, 0, &e0), MF_OK);
    assert_int_equal(mf_expand_dims(t, 2, &e2), MF_OK);
    assert_int_equal(mf_expand_dims(e2, -2, &em), MF_OK); /* (2,3,1,1) */
    assert_int_equal(e0->rank, 3);
    assert_int_equal(e0->shape[0], 1);
    assert_int_equal(e0->shape[1], 2);
    assert_int_equal(e2->shape[2], 1);
    assert_int_equal(em->rank, 4);
    assert_true(mf_tensor_is_contiguous(e0) && mf_tensor_is_contiguous(em));
    assert_values(em, (double[]){1, 2, 3, 4, 5, 6}, 6, 0);
    assert_int_equal(mf_squeeze(em, NULL, 0, &q), MF_OK);
    assert_int_equal(q->rank, 2);
    assert_int_equal(mf_squeeze(em, (int64_t[]){-1}, 1, &q1), MF_OK);
    assert_int_equal(q1->rank, 3);
    assert_int_equal(q1->shape[2], 1);
    assert_values(q1, (double[]){1, 2, 3, 4, 5, 6}, 6, 0);
    MfTensor *bad = NULL;
    assert_int_equal(mf_squeeze(em, (int64_t[]){1}, 1, &bad), MF_ESHAPE);
    assert_error_contains("squeeze: cannot squeeze axis 2 of size 3 (shape (2,3,1,1)): only axes "
                          "of size 1 can be removed");
    assert_int_equal(mf_squeeze(em, (int64_t[]){2, -2}, 2, &bad), MF_EARG);
    assert_error_contains("squeeze: axis 3 is listed twice");
    assert_int_equal(mf_squeeze(em, (int64_t[]){7}, 1, &bad), MF_EARG);
    assert_error_contains("squeeze: axis 8 out of range for rank 4 (axes are 1-based: 1..4)");
    assert_int_equal(mf_expand_dims(t, 5, &bad), MF_EARG);
    assert_error_contains("expand_dims: axis 6 out of range for rank 2 (axes are 1-based: 1..3)");
    assert_null(bad);
    MfTensor *all[] = {t, e0, e2, em, q, q1};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        mf_tensor_release(all[k]);
}

static void test_expand_dims_max_rank(void **state)
{
    (void)state;
    int64_t s[8] = {1, 1, 1, 1, 1, 1, 1, 2};
    MfTensor *t = filled(MF_FLOAT32, 8, s, 1), *e = NULL;
    assert_int_equal(mf_expand_dims(t, 0, &e), MF_EARG);
    assert_error_contains("expand_dims: the result would have rank 9, at most 8 is supported");
    mf_tensor_release(t);
}

/* ---- trace and tensordot ------------------------------------------------------ */

static void test_trace(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3}, s3[1] = {3};
    MfTensor *f = make_tensor(MF_FLOAT32, 2, s, (double[]){1, 2, 3, 4, 5, 6});
    MfTensor *i = make_tensor(MF_INT64, 2, s, (double[]){1, 2, 3, 4, 5, 6});
    MfTensor *v = filled(MF_FLOAT32, 1, s3, 1), *b = filled(MF_BOOL, 2, s, 1);
    MfTensor *ft = NULL, *r = NULL;
    assert_int_equal(mf_trace(f, &r), MF_OK);
    assert_int_equal(r->rank, 0);
    assert_values(r, (double[]){6}, 1, 0);
    mf_tensor_release(r);
    assert_int_equal(mf_transpose(f, NULL, 0, &ft), MF_OK);
    assert_int_equal(mf_trace(ft, &r), MF_OK);
    assert_values(r, (double[]){6}, 1, 0);
    mf_tensor_release(r);
    assert_int_equal(mf_trace(i, &r), MF_OK);
    assert_int_equal(r->dtype, MF_INT64);
    assert_values(r, (double[]){6}, 1, 0);
    mf_tensor_release(r);
    assert_int_equal(mf_trace(v, &r), MF_ESHAPE);
    assert_error_contains("trace: expected a matrix (rank 2), got shape (3,) (rank 1)");
    assert_int_equal(mf_trace(b, &r), MF_EDTYPE);
    assert_error_contains("trace: expected a numeric dtype");
    MfTensor *all[] = {f, i, v, b, ft};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        mf_tensor_release(all[k]);
}

/* a (2,3,4) and b (4,3,5) contracted over a's axes {2,3} and b's {2,1}
 * (1-based), against a naive sum. */
static void test_tensordot_pairs(void **state)
{
    (void)state;
    int64_t sa[3] = {2, 3, 4}, sb[3] = {4, 3, 5};
    MfTensor *a = filled(MF_FLOAT64, 3, sa, 1), *b = filled(MF_FLOAT64, 3, sb, 2), *c = NULL;
    assert_int_equal(mf_tensordot(a, b, 2, (int64_t[]){1, -1}, (int64_t[]){1, 0}, &c), MF_OK);
    assert_int_equal(c->rank, 2);
    assert_int_equal(c->shape[0], 2);
    assert_int_equal(c->shape[1], 5);
    double want[10];
    for (int i = 0; i < 2; i++)
        for (int n = 0; n < 5; n++) {
            double s = 0;
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < 4; k++)
                    s += mf_tensor_get(a, (i * 3 + j) * 4 + k) *
                         mf_tensor_get(b, (k * 3 + j) * 5 + n);
            want[i * 5 + n] = s;
        }
    assert_values(c, want, 10, 1e-9);
    mf_tensor_release(c);
    mf_tensor_release(a);
    mf_tensor_release(b);
}

static void test_tensordot_n(void **state)
{
    (void)state;
    int64_t sa[2] = {2, 3}, sb[2] = {3, 2}, sv[1] = {2};
    MfTensor *a = make_tensor(MF_INT32, 2, sa, (double[]){1, 2, 3, 4, 5, 6});
    MfTensor *b = make_tensor(MF_INT32, 2, sb, (double[]){1, 2, 3, 4, 5, 6});
    MfTensor *v = make_tensor(MF_INT32, 1, sv, (double[]){1, 2}), *c = NULL;
    assert_int_equal(mf_tensordot_n(a, b, 1, &c), MF_OK);
    assert_values(c, (double[]){22, 28, 49, 64}, 4, 0);
    mf_tensor_release(c);
    assert_int_equal(mf_tensordot_n(v, v, 0, &c), MF_OK); /* outer product */
    assert_int_equal(c->rank, 2);
    assert_values(c, (double[]){1, 2, 2, 4}, 4, 0);
    mf_tensor_release(c);
    assert_int_equal(mf_tensordot_n(a, a, 2, &c), MF_OK);
    assert_int_equal(c->rank, 0);
    assert_values(c, (double[]){91}, 1, 0);
    mf_tensor_release(c);
    assert_int_equal(mf_tensordot_n(a, v, 2, &c), MF_EARG);
    assert_error_contains("tensordot: axes = 2, but a has rank 2 and b has rank 1 "
                          "(it must be 0..1)");
    /* N as Lua gives it: 2^32 + 1 is not 1 */
    assert_int_equal(mf_tensordot_n(a, a, (INT64_C(1) << 32) + 1, &c), MF_EARG);
    assert_error_contains("tensordot: axes = 4294967297, but a has rank 2");
    assert_int_equal(mf_tensordot_n(a, a, -1, &c), MF_EARG);
    assert_error_contains("tensordot: axes = -1, but");
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(v);
}

static void test_tensordot_errors(void **state)
{
    (void)state;
    int64_t sa[2] = {2, 3}, sb[2] = {4, 2};
    MfTensor *a = filled(MF_FLOAT32, 2, sa, 1), *b = filled(MF_FLOAT32, 2, sb, 1);
    MfTensor *i = filled(MF_INT32, 2, sb, 1), *bo = filled(MF_BOOL, 2, sb, 1), *c = NULL;
    assert_int_equal(mf_tensordot(a, b, 1, (int64_t[]){1}, (int64_t[]){0}, &c), MF_ESHAPE);
    assert_error_contains("tensordot: axis 2 of a has size 3 but axis 1 of b has size 4 (shapes "
                          "(2,3) and (4,2))");
    assert_int_equal(mf_tensordot(a, b, 1, (int64_t[]){2}, (int64_t[]){0}, &c), MF_EARG);
    assert_error_contains("tensordot: axis 3 out of range for a of rank 2 (axes are 1-based");
    assert_int_equal(mf_tensordot(a, b, 1, (int64_t[]){0}, (int64_t[]){-3}, &c), MF_EARG);
    assert_error_contains("axis -3 out of range for b of rank 2");
    assert_int_equal(mf_tensordot(a, a, 2, (int64_t[]){0, 0}, (int64_t[]){0, 1}, &c), MF_EARG);
    assert_error_contains("tensordot: axis 1 of a is listed twice");
    assert_int_equal(mf_tensordot(a, i, 0, NULL, NULL, &c), MF_EDTYPE);
    assert_error_contains("tensordot: dtypes differ: float32 and int32");
    assert_int_equal(mf_tensordot(bo, bo, 0, NULL, NULL, &c), MF_EDTYPE);
    assert_error_contains("tensordot: expected a numeric dtype");
    assert_int_equal(mf_tensordot(a, b, 3, (int64_t[]){0, 1, 2}, (int64_t[]){0, 1, 2}, &c),
                     MF_EARG);
    assert_error_contains("tensordot: 3 axis pair(s) given, but a has rank 2 and b has rank 2");
    int64_t s5[5] = {1, 1, 1, 1, 2};
    MfTensor *big = filled(MF_FLOAT32, 5, s5, 1);
    assert_int_equal(mf_tensordot_n(big, big, 0, &c), MF_ESHAPE);
    assert_error_contains("tensordot: the result would have rank 10, at most 8");
    assert_null(c);
    MfTensor *all[] = {a, b, i, bo, big};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        mf_tensor_release(all[k]);
}

/* Failing each allocation in turn: every path reports MF_ENOMEM and leaks
 * nothing (teardown checks the live count). */
static void test_out_of_memory(void **state)
{
    (void)state;
    int64_t sa[3] = {2, 3, 4}, sb[3] = {4, 3, 5}, sm[2] = {3, 4};
    MfTensor *a = filled(MF_FLOAT32, 3, sa, 1), *b = filled(MF_FLOAT32, 3, sb, 2);
    MfTensor *m = filled(MF_FLOAT32, 2, sm, 3), *skip = NULL;
    int64_t vs[2] = {2, 2}, st[2] = {8, 2};
    skip = mf_tensor_view(m, 2, vs, st, 0); /* forces a copy before BLAS */
    for (int which = 0; which < 2; which++) {
        MfStatus s = MF_ENOMEM;
        for (int64_t n = 1; s == MF_ENOMEM && n < 50; n++) {
            MfTensor *c = NULL;
            mf_alloc_fail_at(n);
            s = which == 0
                    ? mf_tensordot(a, b, 2, (int64_t[]){1, 2}, (int64_t[]){1, 0}, &c)
                    : mf_matmul(skip, skip, false, false, &c);
            mf_alloc_fail_at(0);
            if (s == MF_ENOMEM) {
                assert_null(c);
                mf_err_clear();
            }
            mf_tensor_release(c);
        }
        assert_int_equal(s, MF_OK);
    }
    mf_tensor_release(skip);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_matmul_shapes_transposes_dtypes),
        TEST(test_matmul_hand_computed),
        TEST(test_matmul_strided_inputs),
        TEST(test_matmul_transposed_view_not_copied),
        TEST(test_batch_matmul_and_broadcast),
        TEST(test_batch_matmul_rank2_operand),
        TEST(test_matmul_empty),
        TEST(test_matmul_int_wraps),
        TEST(test_matmul_errors),
        TEST(test_infer_unknown_dims),
        TEST(test_matmul_cost),
        TEST(test_transpose),
        TEST(test_reshape),
        TEST(test_expand_dims_and_squeeze),
        TEST(test_expand_dims_max_rank),
        TEST(test_trace),
        TEST(test_tensordot_pairs),
        TEST(test_tensordot_n),
        TEST(test_tensordot_errors),
        TEST(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
