/* test_grad.c — gradient checks: every case of the grad_cases_*.h files
 * runs its op in float64 through the one gradient check (eager/gradcheck.c,
 * which mf.test.gradcheck uses too): a tape's gradient of sum(w * op(x))
 * for a fixed random w, i.e. the op's 'backward', against central finite
 * differences; cases marked 'second_order' also check the gradient of the
 * gradient (the backward's own ops differentiated by the tape). A walk of
 * the op table fails when a differentiable op has no case or no
 * 'backward'. Value tests pin down TensorFlow's conventions where finite
 * differences cannot: ties, zeros, kinks, dtypes without gradients. */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "core/grad.h"
#include "eager/eager.h"
#include "case_inputs.h"
#include "grad_cases.h"
#include "grad_cases_math.h"
#include "grad_cases_shape.h"
#include "grad_cases_nn.h"
#include "grad_cases_conv.h"
#include "grad_cases_more.h"
#include "grad_cases_linalg.h"

#define EPS 1e-6
#define ATOL 1e-6
#define RTOL 1e-5
#define MAX_REPORTS 8

/* ---- inputs ------------------------------------------------------------------- */

/* A float64 tensor shaped like 't' with values in [lo, hi). */
static MfTensor *rand_like(const MfTensor *t, double lo, double hi)
{
    MfTensor *r = mf_tensor_new(MF_FLOAT64, t->rank, t->shape);
    assert_non_null(r);
    double *p = mf_tensor_data(r);
    for (int64_t i = 0; i < mf_tensor_numel(r); i++)
        p[i] = gn_rnd(lo, hi);
    return r;
}

static const char *op_name(MfOpId op)
{
    return mf_op_table[op]->name;
}

/* Runs the case's op; fails the test when it does not run. */
static int forward(const GradCase *gc, GnInputs *in, MfTensor **outs)
{
    int nout = 0;
    MfStatus st = mf_op_call(gc->op, in->n, in->t, &in->attrs, outs, &nout);
    if (st != MF_OK) {
        print_error("%s (%s): forward failed: %s\n", op_name(gc->op), gc->label, mf_err_msg());
        fail();
    }
    return nout;
}

/* Runs the op's gradient with 'doutputs' = w; 'din' receives owned tensors. */
static void backward(const GradCase *gc, GnInputs *in, MfTensor *const *outs, int nout,
                     MfTensor *const *w, MfTensor **din)
{
    MfOpCall call = {.op = gc->op, .ninputs = in->n, .inputs = in->t, .attrs = &in->attrs,
                     .noutputs = nout};
    MfGradCall g = {.call = &call, .outputs = outs, .doutputs = w};
    MfStatus st = mf_grad_call(&g, din);
    if (st != MF_OK) {
        print_error("%s (%s): backward failed: %s\n", op_name(gc->op), gc->label,
                    mf_err_msg());
        fail();
    }
}

/* ---- the functions eager/gradcheck.c checks ---------------------------------------
 * First order: the op itself. Second order: the op's backward with output
 * gradients w, its input gradients weighted by v in the check: the tape
 * differentiates the backward's own ops, giving d<v, grad>/dx. */

typedef struct CaseFn {
    const GradCase *gc;
    GnInputs *in;
    MfTensor *const *w;   /* second order: the output gradients */
    const char *what;
} CaseFn;

static MfStatus op_fn(void *ctx, int n, MfTensor *const *inputs, int *nout, MfTensor **outs)
{
    CaseFn *c = ctx;
    (void)n;
    (void)inputs;   /* the case's own tensors, perturbed in place */
    *nout = forward(c->gc, c->in, outs);
    return MF_OK;
}

static MfStatus backward_fn(void *ctx, int n, MfTensor *const *inputs, int *nout,
                            MfTensor **outs)
{
    CaseFn *c = ctx;
    MfTensor *y[MF_MAX_OUTPUTS];
    (void)inputs;
    int ny = forward(c->gc, c->in, y);
    backward(c->gc, c->in, y, ny, c->w, outs);
    gn_release_n(y, MF_MAX_OUTPUTS);
    *nout = n;
    return MF_OK;
}

static void report(void *ctx, const MfGradcheckMismatch *m)
{
    const CaseFn *c = ctx;
    print_error("%s (%s): %s of input %d, element %lld (x = %.9g): analytic %.12g, "
                "numeric %.12g\n", op_name(c->gc->op), c->gc->label, c->what, m->input + 1,
                (long long)m->index, m->x, m->analytic, m->numeric);
}

/* The shared check with this file's tolerances, reporting up to
 * MAX_REPORTS mismatches; returns how many there were. */
static int check(MfGradcheckFn f, CaseFn *c, MfTensor *const *weights)
{
    MfGradcheckOptions o = {.eps = EPS, .atol = ATOL, .rtol = RTOL, .weights = weights,
                            .report = report, .report_ctx = c, .stop_after = MAX_REPORTS};
    int bad = 0;
    if (mf_gradcheck(f, c, c->in->n, c->in->t, &o, &bad) != MF_OK) {
        print_error("%s (%s): %s check failed: %s\n", op_name(c->gc->op), c->gc->label,
                    c->what, mf_err_msg());
        fail();
    }
    return bad;
}

/* Weights shaped like each float64 output (NULL for the others). */
static void make_weights(MfTensor *const *outs, int nout, MfTensor **w)
{
    for (int k = 0; k < MF_GRADCHECK_MAX_OUTPUTS; k++)
        w[k] = k < nout && outs[k]->dtype == MF_FLOAT64 ? rand_like(outs[k], -1, 1) : NULL;
}

static int check_first(const GradCase *gc, uint64_t seed)
{
    GnInputs in;
    MfTensor *outs[MF_MAX_OUTPUTS], *w[MF_GRADCHECK_MAX_OUTPUTS];
    gn_inputs(gc, seed, &in);
    make_weights(outs, forward(gc, &in, outs), w);
    gn_release_n(outs, MF_MAX_OUTPUTS);
    CaseFn c = {gc, &in, NULL, "gradient"};
    int bad = check(op_fn, &c, w);
    gn_release_n(w, MF_GRADCHECK_MAX_OUTPUTS);
    gn_release_n(in.t, in.n);
    return bad;
}

static int check_second(const GradCase *gc, uint64_t seed)
{
    GnInputs in;
    MfTensor *outs[MF_MAX_OUTPUTS], *w[MF_GRADCHECK_MAX_OUTPUTS];
    MfTensor *v[MF_GRADCHECK_MAX_OUTPUTS] = {0};
    gn_inputs(gc, seed, &in);
    make_weights(outs, forward(gc, &in, outs), w);
    gn_release_n(outs, MF_MAX_OUTPUTS);
    for (int i = 0; i < in.n; i++)
        v[i] = gc->dtype[i] == MF_FLOAT64 ? rand_like(in.t[i], -1, 1) : NULL;
    CaseFn c = {gc, &in, w, "second derivative"};
    int bad = check(backward_fn, &c, v);
    gn_release_n(v, in.n);
    gn_release_n(w, MF_GRADCHECK_MAX_OUTPUTS);
    gn_release_n(in.t, in.n);
    return bad;
}

/* ---- the cases ------------------------------------------------------------------ */

static void run_cases(const GradCase *cases, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (!cases[i].label)
            continue;
        uint64_t seed = 1000 + i;
        bad += check_first(&cases[i], seed);
        if (cases[i].second_order)
            bad += check_second(&cases[i], seed);
    }
    if (bad) {
        print_error("%d gradient mismatches\n", bad);
        fail();
    }
}

static void test_cases_math(void **state)
{
    (void)state;
    run_cases(cases_math, sizeof cases_math / sizeof cases_math[0]);
}

static void test_cases_shape(void **state)
{
    (void)state;
    run_cases(cases_shape, sizeof cases_shape / sizeof cases_shape[0]);
}

static void test_cases_conv(void **state)
{
    (void)state;
    run_cases(cases_conv, sizeof cases_conv / sizeof cases_conv[0]);
}

static void test_cases_nn(void **state)
{
    (void)state;
    run_cases(cases_nn, sizeof cases_nn / sizeof cases_nn[0]);
}

static void test_cases_more(void **state)
{
    (void)state;
    run_cases(cases_more, sizeof cases_more / sizeof cases_more[0]);
}

static void test_cases_linalg(void **state)
{
    (void)state;
    run_cases(cases_linalg, sizeof cases_linalg / sizeof cases_linalg[0]);
}

static bool has_case(MfOpId op, const GradCase *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cases[i].label && cases[i].op == op)
            return true;
    return false;
}

static void test_every_differentiable_op_has_a_case(void **state)
{
    (void)state;
    const size_t nmath = sizeof cases_math / sizeof cases_math[0];
    const size_t nshape = sizeof cases_shape / sizeof cases_shape[0];
    int missing = 0;
    for (int op = 0; op < MF_NOPS; op++) {
        const MfOpDesc *d = mf_op_table[op];
        if (d->flags & MF_OP_NONDIFF)
            continue;
        bool cased = has_case((MfOpId)op, cases_math, nmath) ||
                     has_case((MfOpId)op, cases_shape, nshape) ||
                     has_case((MfOpId)op, cases_conv, sizeof cases_conv / sizeof cases_conv[0]) ||
                     has_case((MfOpId)op, cases_nn, sizeof cases_nn / sizeof cases_nn[0]) ||
                     has_case((MfOpId)op, cases_more, sizeof cases_more / sizeof cases_more[0]) ||
                     has_case((MfOpId)op, cases_linalg,
                              sizeof cases_linalg / sizeof cases_linalg[0]);
        if (cased && d->backward)
            continue;
        print_error("differentiable op %s (%s) lacks:%s%s\n", d->name, d->api,
                    cased ? "" : " a gradcheck case", d->backward ? "" : " a backward");
        missing++;
    }
    if (missing) {
        print_error("%d differentiable ops lack a gradient or a case (mark the others "
                    "MF_OP_NONDIFF)\n", missing);
        fail();
    }
}

/* ---- value tests ---------------------------------------------------------------- */

static MfTensor *vec(MfDType dt, int64_t n, const double *v)
{
    return make_tensor(dt, 1, &n, v);
}

/* Runs 'op' and its gradient with dy = 'dy' (consumed) or, when NULL, ones
 * of the output's dtype; 'din' receives owned gradients. */
static void run_grad(MfOpId op, int n, MfTensor **in, const MfAttrs *a, MfTensor *dy,
                  MfTensor **din)
{
    MfTensor *outs[MF_MAX_OUTPUTS];
    int nout = 0;
    MfAttrs at = a ? *a : mf_attrs_default();
    assert_int_equal(mf_op_call(op, n, in, &at, outs, &nout), MF_OK);
    MfTensor *dys[MF_MAX_OUTPUTS] = {dy};
    if (!dy) {
        dys[0] = mf_tensor_new(MF_FLOAT64, outs[0]->rank, outs[0]->shape);
        assert_non_null(dys[0]);
        for (int64_t i = 0; i < mf_tensor_numel(dys[0]); i++)
            ((double *)mf_tensor_data(dys[0]))[i] = 1;
    }
    MfOpCall call = {.op = op, .ninputs = n, .inputs = in, .attrs = &at, .noutputs = nout};
    MfGradCall g = {.call = &call, .outputs = outs, .doutputs = dys};
    assert_int_equal(mf_grad_call(&g, din), MF_OK);
    mf_tensor_release(dys[0]);
    gn_release_n(outs, MF_MAX_OUTPUTS);
}

static void test_max_min_share_ties(void **state)
{
    (void)state;
    MfAttrs a = mf_attrs_default();
    a.all_axes = true;
    MfTensor *x = vec(MF_FLOAT64, 4, (double[]){1, 3, 3, 2}), *d = NULL;
    run_grad(MF_OP_MAX, 1, &x, &a, NULL, &d);
    assert_values(d, (double[]){0, 0.5, 0.5, 0}, 4, 1e-15);
    mf_tensor_release(d);
    mf_tensor_release(x);
    x = vec(MF_FLOAT64, 3, (double[]){1, 1, 2});
    run_grad(MF_OP_MIN, 1, &x, &a, NULL, &d);
    assert_values(d, (double[]){0.5, 0.5, 0}, 3, 1e-15);
    mf_tensor_release(d);
    mf_tensor_release(x);
}

static void check_prod(const double *x, const double *expect, int64_t n)
{
    MfAttrs a = mf_attrs_default();
    a.all_axes = true;
    MfTensor *t = vec(MF_FLOAT64, n, x), *d = NULL;
    run_grad(MF_OP_PROD, 1, &t, &a, NULL, &d);
    assert_values(d, expect, n, 1e-12);
    mf_tensor_release(d);
    mf_tensor_release(t);
}

static void test_prod_with_zeros(void **state)
{
    (void)state;
    check_prod((double[]){2, 4, 0.5}, (double[]){2, 1, 8}, 3);
    check_prod((double[]){2, 0, 3}, (double[]){0, 6, 0}, 3);
    check_prod((double[]){0, 0, 3}, (double[]){0, 0, 0}, 3);
}

static void test_pow_nonpositive_base(void **state)
{
    (void)state;
    MfTensor *in[2] = {vec(MF_FLOAT64, 3, (double[]){0, -2, 2}),
                       vec(MF_FLOAT64, 3, (double[]){2, 2, 3})};
    MfTensor *d[2] = {0};
    run_grad(MF_OP_POW, 2, in, NULL, NULL, d);
    assert_values(d[0], (double[]){0, -4, 12}, 3, 1e-12);
    assert_values(d[1], (double[]){0, 0, 8 * log(2.0)}, 3, 1e-12);
    gn_release_n(d, 2);
    gn_release_n(in, 2);
    in[0] = vec(MF_INT32, 2, (double[]){2, 3});
    in[1] = vec(MF_INT32, 2, (double[]){0, 2});
    run_grad(MF_OP_POW, 2, in, NULL, vec(MF_INT32, 2, (double[]){1, 1}), d);
    assert_null(d[0]);
    assert_null(d[1]);
    gn_release_n(in, 2);
}

static void test_kinks(void **state)
{
    (void)state;
    MfTensor *x = vec(MF_FLOAT64, 3, (double[]){-1, 0, 2}), *d = NULL;
    run_grad(MF_OP_RELU, 1, &x, NULL, NULL, &d);
    assert_values(d, (double[]){0, 0, 1}, 3, 0);
    mf_tensor_release(d);
    run_grad(MF_OP_ABS, 1, &x, NULL, NULL, &d);
    assert_values(d, (double[]){-1, 0, 1}, 3, 0);
    mf_tensor_release(d);
    mf_tensor_release(x);
    MfTensor *in[2] = {vec(MF_FLOAT64, 2, (double[]){1, 2}), vec(MF_FLOAT64, 2, (double[]){1, 3})};
    MfTensor *dd[2] = {0};
    run_grad(MF_OP_MAXIMUM, 2, in, NULL, NULL, dd);
    assert_values(dd[0], (double[]){1, 0}, 2, 0);
    assert_values(dd[1], (double[]){0, 1}, 2, 0);
    gn_release_n(dd, 2);
    run_grad(MF_OP_MINIMUM, 2, in, NULL, NULL, dd);
    assert_values(dd[0], (double[]){1, 1}, 2, 0);
    assert_values(dd[1], (double[]){0, 0}, 2, 0);
    gn_release_n(dd, 2);
    gn_release_n(in, 2);
}

static void test_cast_gradients(void **state)
{
    (void)state;
    MfAttrs a = mf_attrs_default();
    a.dtype = MF_FLOAT32;
    MfTensor *x = vec(MF_FLOAT64, 2, (double[]){1.5, -2}), *d = NULL;
    run_grad(MF_OP_CAST, 1, &x, &a, vec(MF_FLOAT32, 2, (double[]){3, 4}), &d);
    assert_int_equal(d->dtype, MF_FLOAT64);
    assert_values(d, (double[]){3, 4}, 2, 0);
    mf_tensor_release(d);
    a.dtype = MF_INT32;
    run_grad(MF_OP_CAST, 1, &x, &a, vec(MF_INT32, 2, (double[]){1, 1}), &d);
    assert_null(d);
    mf_tensor_release(x);
    x = vec(MF_INT32, 2, (double[]){1, 2});
    a.dtype = MF_FLOAT64;
    run_grad(MF_OP_CAST, 1, &x, &a, NULL, &d);
    assert_null(d);
    mf_tensor_release(x);
}

static void test_select_condition_gets_none(void **state)
{
    (void)state;
    int64_t s[2] = {2, 2};
    MfTensor *in[3] = {make_tensor(MF_BOOL, 2, s, (double[]){1, 0, 0, 1}),
                       make_tensor(MF_FLOAT64, 2, s, (double[]){1, 2, 3, 4}),
                       vec(MF_FLOAT64, 2, (double[]){5, 6})};
    MfTensor *d[3] = {0};
    run_grad(MF_OP_SELECT, 3, in, NULL, make_tensor(MF_FLOAT64, 2, s, (double[]){1, 2, 3, 4}), d);
    assert_null(d[0]);
    assert_values(d[1], (double[]){1, 0, 0, 4}, 4, 0);
    assert_int_equal(d[2]->rank, 1);
    assert_values(d[2], (double[]){3, 2}, 2, 0);
    gn_release_n(d, 3);
    gn_release_n(in, 3);
}

static void test_nondiff_ops_give_none(void **state)
{
    (void)state;
    MfTensor *in[2] = {vec(MF_FLOAT64, 2, (double[]){1.5, 2}),
                       vec(MF_FLOAT64, 2, (double[]){1, 2})};
    MfTensor *d[2] = {0};
    run_grad(MF_OP_FLOOR, 1, in, NULL, NULL, d);
    assert_null(d[0]);
    run_grad(MF_OP_EQUAL, 2, in, NULL, vec(MF_BOOL, 2, (double[]){1, 1}), d);
    assert_null(d[0]);
    assert_null(d[1]);
    gn_release_n(in, 2);
}

static void check_unbroadcast(MfTensor *g, int rank, const int64_t *shape, const double *expect)
{
    MfTensor *like = mf_tensor_zeros(MF_FLOAT64, rank, shape), *out = NULL;
    assert_int_equal(mf_grad_unbroadcast(g, like, &out), MF_OK);
    assert_int_equal(out->rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(out->shape[i], shape[i]);
    assert_values(out, expect, mf_tensor_numel(out), 1e-15);
    mf_tensor_release(out);
    mf_tensor_release(like);
}

static void test_unbroadcast(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3};
    MfTensor *g = make_tensor(MF_FLOAT64, 2, s, (double[]){1, 2, 3, 4, 5, 6}), *out = NULL;
    check_unbroadcast(g, 1, (int64_t[]){3}, (double[]){5, 7, 9});
    check_unbroadcast(g, 2, (int64_t[]){1, 3}, (double[]){5, 7, 9});
    check_unbroadcast(g, 2, (int64_t[]){2, 1}, (double[]){6, 15});
    check_unbroadcast(g, 0, NULL, (double[]){21});
    check_unbroadcast(g, 2, s, (double[]){1, 2, 3, 4, 5, 6});
    MfTensor *like = mf_tensor_zeros(MF_FLOAT64, 2, s);
    assert_int_equal(mf_grad_unbroadcast(g, like, &out), MF_OK);
    assert_ptr_equal(out, g);
    mf_tensor_release(out);
    mf_tensor_release(like);
    mf_tensor_release(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_cases_math),
        TEST(test_cases_shape),
        TEST(test_cases_nn),
        TEST(test_cases_conv),
        TEST(test_cases_more),
        TEST(test_cases_linalg),
        TEST(test_every_differentiable_op_has_a_case),
        TEST(test_max_min_share_ties),
        TEST(test_prod_with_zeros),
        TEST(test_pow_nonpositive_base),
        TEST(test_kinks),
        TEST(test_cast_gradients),
        TEST(test_select_condition_gets_none),
        TEST(test_nondiff_ops_give_none),
        TEST(test_unbroadcast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
