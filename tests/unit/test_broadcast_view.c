/* test_broadcast_view.c — BroadcastTo is a view (stride 0 along the
 * stretched axes, as PyTorch's expand), and every op reads such a view as it
 * reads the same values written out:
 *  - BroadcastTo and BroadcastToLike share their input's storage;
 *  - the walk: every gradient case of the grad_cases_*.h files (float64,
 *    and float32 where the op takes it) runs with one float input, and
 *    its backward with the output gradient, given as a stride-0 view (a
 *    row repeated along the first long axis) and as a contiguous copy of
 *    that view: the outputs and input gradients have the same bits (or
 *    both calls fail with the same status);
 *  - the ops a Sum's gradient feeds in the bench's *_grad rows (Mul,
 *    SigmoidGrad, TanhGrad, GeluGrad, SiluGrad, ...) at sizes the pool
 *    splits, on 1 and 2 threads, with a broadcast scalar and a broadcast
 *    column as the gradient.
 * A kernel that read a non-contiguous input through its data pointer as if
 * it were contiguous, or split one over threads by its storage, fails here. */
#include <stdio.h>

#include "testutil.h"

#include "core/grad.h"
#include "core/ops/compare.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "case_lists.h"

/* ---- BroadcastTo is a view ------------------------------------------------------ */

static void test_broadcast_to_is_a_view(void **state)
{
    (void)state;
    MfTensor *col = make_tensor(MF_FLOAT32, 2, (int64_t[]){3, 1}, (double[]){1, 2, 3});
    MfAttrs a = mf_attrs_default();
    a.nints = 3;
    a.ints[0] = 2, a.ints[1] = 3, a.ints[2] = 4;
    MfTensor *out[MF_MAX_OUTPUTS] = {NULL};
    int nout = 0;
    assert_int_equal(mf_op_call(MF_OP_BROADCAST_TO, 1, &col, &a, out, &nout), MF_OK);
    assert_ptr_equal(out[0]->storage, col->storage);
    assert_int_equal(out[0]->strides[0], 0);
    assert_int_equal(out[0]->strides[1], 1);
    assert_int_equal(out[0]->strides[2], 0);
    for (int64_t i = 0; i < 24; i++)
        assert_true(mf_tensor_get(out[0], i) == (double)(i / 4 % 3 + 1));
    /* the run-time form (graph mode with unknown dims) is the same view */
    MfTensor *like = mf_tensor_zeros(MF_FLOAT32, 3, (int64_t[]){2, 3, 4});
    MfTensor *in2[2] = {col, like}, *out2[MF_MAX_OUTPUTS] = {NULL};
    MfAttrs none = mf_attrs_default();
    assert_int_equal(mf_op_call(MF_OP_BROADCAST_TO_LIKE, 2, in2, &none, out2, &nout), MF_OK);
    assert_ptr_equal(out2[0]->storage, col->storage);
    assert_int_equal(out2[0]->strides[2], 0);
    mf_tensor_release(out2[0]);
    mf_tensor_release(like);
    mf_tensor_release(out[0]);
    mf_tensor_release(col);
}

/* ---- comparing results ---------------------------------------------------------- */

/* True when a and b have the same dtype, shape and element bits. */
static bool same_bits(MfTensor *a, MfTensor *b)
{
    if (!a || !b)
        return a == b;
    if (a->dtype != b->dtype || !mf_shape_equal(a->rank, a->shape, b->rank, b->shape))
        return false;
    MfTensor *ca = mf_tensor_contiguous(a), *cb = mf_tensor_contiguous(b);
    assert_non_null(ca);
    assert_non_null(cb);
    size_t n = (size_t)mf_tensor_numel(a) * mf_dtype_size(a->dtype);
    bool same = n == 0 || memcmp(mf_tensor_data(ca), mf_tensor_data(cb), n) == 0;
    mf_tensor_release(ca);
    mf_tensor_release(cb);
    return same;
}

/* 't' with its first axis longer than 1 read with stride 0: that axis's
 * first row repeated (a view, owned); NULL when 't' has no such axis. */
static MfTensor *repeated_view(const MfTensor *t)
{
    int axis = 0;
    while (axis < t->rank && t->shape[axis] <= 1)
        axis++;
    if (axis == t->rank)
        return NULL;
    int64_t strides[MF_MAX_RANK];
    memcpy(strides, t->strides, sizeof strides);
    strides[axis] = 0;
    MfTensor *v = mf_tensor_view(t, t->rank, t->shape, strides, t->offset);
    assert_non_null(v);
    return v;
}

static bool is_float(const MfTensor *t)
{
    return t->dtype == MF_FLOAT32 || t->dtype == MF_FLOAT64;
}

/* ---- the walk over the gradient cases ------------------------------------------- */

typedef struct Run {
    MfStatus st;
    int nout, nin;
    MfTensor *outs[MF_MAX_OUTPUTS];
    MfTensor *din[GC_MAX_INPUTS];
} Run;

static void run_release(Run *r)
{
    gn_release_n(r->outs, MF_MAX_OUTPUTS);
    gn_release_n(r->din, GC_MAX_INPUTS);
    mf_err_clear();
}

/* The op on 'in', then its gradient with output gradients from 'dy_of'
 * (called per float output: a tensor of ones-like values shaped as it,
 * owned by the caller of run_case). */
static void run_case(const GradCase *gc, MfTensor **in, int n, const MfAttrs *attrs,
                     bool view_dy, Run *r)
{
    memset(r, 0, sizeof *r);
    MfAttrs a = *attrs;
    r->st = mf_op_call(gc->op, n, in, &a, r->outs, &r->nout);
    if (r->st != MF_OK)
        return;
    MfTensor *dys[MF_MAX_OUTPUTS] = {0};
    for (int k = 0; k < r->nout; k++) {
        MfTensor *o = r->outs[k];
        if (!is_float(o))
            continue;
        MfTensor *w = mf_tensor_new(o->dtype, o->rank, o->shape);
        assert_non_null(w);
        for (int64_t i = 0; i < mf_tensor_numel(w); i++)
            mf_tensor_set(w, i, 0.25 + 0.125 * (double)(i % 7));
        MfTensor *v = repeated_view(w);
        if (v && !view_dy) {
            dys[k] = mf_tensor_clone(v);
            mf_tensor_release(v);
        } else {
            dys[k] = v ? v : (mf_tensor_retain(w), w);
        }
        mf_tensor_release(w);
    }
    MfOpCall call = {.op = gc->op, .ninputs = n, .inputs = in, .attrs = &a,
                     .noutputs = r->nout};
    MfGradCall g = {.call = &call, .outputs = r->outs, .doutputs = dys};
    r->nin = n;
    r->st = mf_grad_call(&g, r->din);
    gn_release_n(dys, MF_MAX_OUTPUTS);
}

/* Both runs failed alike, or produced the same bits. */
static bool runs_agree(const Run *a, const Run *b)
{
    if (a->st != b->st || a->nout != b->nout)
        return false;
    for (int k = 0; k < a->nout; k++)
        if (!same_bits(a->outs[k], b->outs[k]))
            return false;
    for (int i = 0; i < a->nin; i++)
        if (!same_bits(a->din[i], b->din[i]))
            return false;
    return true;
}

/* The case's inputs in 'dt' (float inputs cast; others as they are). */
static bool cast_inputs(GnInputs *in, MfDType dt)
{
    for (int i = 0; i < in->n; i++) {
        if (in->t[i]->dtype != MF_FLOAT64 || dt == MF_FLOAT64)
            continue;
        MfTensor *c = NULL;
        if (mf_cast(in->t[i], dt, &c) != MF_OK) {
            mf_err_clear();
            return false;
        }
        mf_tensor_release(in->t[i]);
        in->t[i] = c;
    }
    return true;
}

/* Input 'which' (or, with which < 0, the output gradient) as a stride-0
 * view against its contiguous copy; returns 1 on a mismatch. */
static int check_variant(const GradCase *gc, GnInputs *in, int which, MfDType dt)
{
    MfTensor *view_in[GC_MAX_INPUTS], *copy_in[GC_MAX_INPUTS];
    MfTensor *v = which >= 0 ? repeated_view(in->t[which]) : NULL;
    if (which >= 0 && !v)
        return 0;
    for (int i = 0; i < in->n; i++)
        view_in[i] = copy_in[i] = in->t[i];
    MfTensor *c = v ? mf_tensor_clone(v) : NULL;
    if (v) {
        view_in[which] = v;
        copy_in[which] = c;
    }
    Run rv, rc;
    run_case(gc, view_in, in->n, &in->attrs, which < 0, &rv);
    run_case(gc, copy_in, in->n, &in->attrs, false, &rc);
    int bad = !runs_agree(&rv, &rc);
    if (bad)
        print_error("%s (%s), %s, %s%d as a stride-0 view: differs from its contiguous copy "
                    "(status %d vs %d)\n", mf_op_table[gc->op]->name, gc->label,
                    mf_dtype_name(dt), which < 0 ? "output gradient" : "input ",
                    which < 0 ? 0 : which + 1, (int)rv.st, (int)rc.st);
    run_release(&rv);
    run_release(&rc);
    mf_tensor_release(v);
    mf_tensor_release(c);
    return bad;
}

static int check_case(const GradCase *gc, uint64_t seed, MfDType dt)
{
    GnInputs in;
    gn_inputs(gc, seed, &in);
    int bad = 0;
    if (cast_inputs(&in, dt)) {
        for (int i = 0; i < in.n; i++)
            if (is_float(in.t[i]))
                bad += check_variant(gc, &in, i, dt);
        bad += check_variant(gc, &in, -1, dt);
    }
    gn_release_n(in.t, in.n);
    return bad;
}

static void test_every_case_reads_stride0_views(void **state)
{
    (void)state;
    int bad = 0, cases = 0;
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
        for (size_t i = 0; i < lists[l].n; i++) {
            const GradCase *gc = &lists[l].cases[i];
            if (!gc->label)
                continue;
            bad += check_case(gc, 7000 + i, MF_FLOAT64);
            bad += check_case(gc, 7000 + i, MF_FLOAT32);
            cases++;
        }
    assert_true(cases > 100);
    if (bad) {
        print_error("%d case(s) read a stride-0 view differently\n", bad);
        fail();
    }
}

/* ---- the bench's gradient consumers at split sizes ------------------------------ */

/* op(dy, y) with dy a broadcast of 'src' (a scalar or a column) against its
 * contiguous copy, on 'threads' threads. */
static void check_large(MfOpId op, MfDType dt, const int64_t *src_shape, int threads)
{
    const int64_t shape[2] = {300, 257}; /* 77,100 elements: the pool splits it */
    MfTensor *src = mf_tensor_new(dt, 2, src_shape);
    MfTensor *y = mf_tensor_new(dt, 2, shape);
    assert_non_null(src);
    assert_non_null(y);
    for (int64_t i = 0; i < mf_tensor_numel(src); i++)
        mf_tensor_set(src, i, 0.75 - 0.01 * (double)i);
    for (int64_t i = 0; i < mf_tensor_numel(y); i++)
        mf_tensor_set(y, i, -0.9 + 1.8 * (double)(i % 1013) / 1013.0);
    MfAttrs a = mf_attrs_default();
    a.nints = 2;
    a.ints[0] = shape[0], a.ints[1] = shape[1];
    MfTensor *dy[MF_MAX_OUTPUTS] = {NULL};
    int nout = 0;
    assert_int_equal(mf_op_call(MF_OP_BROADCAST_TO, 1, &src, &a, dy, &nout), MF_OK);
    MfTensor *dyc = mf_tensor_clone(dy[0]);
    assert_int_equal(mf_parallel_set_threads(threads), MF_OK);
    MfTensor *in_v[2] = {dy[0], y}, *in_c[2] = {dyc, y}, *ov[MF_MAX_OUTPUTS] = {NULL};
    MfTensor *oc[MF_MAX_OUTPUTS] = {NULL};
    MfAttrs none = mf_attrs_default();
    assert_int_equal(mf_op_call(op, 2, in_v, &none, ov, &nout), MF_OK);
    assert_int_equal(mf_op_call(op, 2, in_c, &none, oc, &nout), MF_OK);
    if (!same_bits(ov[0], oc[0])) {
        print_error("%s %s, dy broadcast from (%lld, %lld), %d threads: differs from the "
                    "contiguous dy\n", mf_op_table[op]->name, mf_dtype_name(dt),
                    (long long)src_shape[0], (long long)src_shape[1], threads);
        fail();
    }
    mf_tensor_release(ov[0]);
    mf_tensor_release(oc[0]);
    mf_tensor_release(dyc);
    mf_tensor_release(dy[0]);
    mf_tensor_release(y);
    mf_tensor_release(src);
}

static void test_gradient_consumers_at_split_sizes(void **state)
{
    (void)state;
    const MfOpId ops[] = {MF_OP_MUL, MF_OP_ADD, MF_OP_DIV, MF_OP_SIGMOID_GRAD,
                          MF_OP_TANH_GRAD, MF_OP_GELU_GRAD, MF_OP_SILU_GRAD};
    const int64_t scalar[2] = {1, 1}, column[2] = {300, 1}, row[2] = {1, 257};
    const MfDType dts[] = {MF_FLOAT32, MF_FLOAT64};
    int before = mf_parallel_threads();
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (int d = 0; d < 2; d++)
            for (int threads = 1; threads <= 2; threads++) {
                check_large(ops[o], dts[d], scalar, threads);
                check_large(ops[o], dts[d], column, threads);
                check_large(ops[o], dts[d], row, threads);
            }
    assert_int_equal(mf_parallel_set_threads(before), MF_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_broadcast_to_is_a_view),
        TEST(test_every_case_reads_stride0_views),
        TEST(test_gradient_consumers_at_split_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
