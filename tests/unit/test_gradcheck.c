/* test_gradcheck.c — the one gradient check (eager/gradcheck.c) on its
 * own: a right gradient passes, a wrong one (stop_gradient hiding half of
 * x * x) is reported element by element with both derivatives, weights
 * select and scale outputs, integer inputs are passed through unchecked,
 * stop_after bounds the reports, and f's errors, symbolic outputs and
 * float64 views are errors. The inputs come back unchanged. */
#include "testutil.h"

#include "eager/eager.h"
#include "graph/graph.h"

typedef struct Fn {
    bool stop;            /* x * stop_gradient(x): half the true gradient */
    bool fail;            /* f reports an error */
    MfTensor *symbolic;   /* returned as the output when set */
    int calls;
} Fn;

/* y0 = x0 * x0 (or x0 * stop_gradient(x0)); y1 = x0 + x0 when two inputs
 * (the second, an int tensor, only counted). */
static MfStatus square(void *ctx, int n, MfTensor *const *in, int *nout, MfTensor **outs)
{
    Fn *f = ctx;
    f->calls++;
    if (f->fail)
        return mf_err_set(MF_EARG, "square: asked to fail");
    if (f->symbolic) {
        mf_tensor_retain(f->symbolic);
        outs[0] = f->symbolic;
        *nout = 1;
        return MF_OK;
    }
    MfTensor *b = in[0];
    if (f->stop)
        assert_int_equal(mf_op1(MF_OP_STOP_GRADIENT, 1, &in[0], NULL, &b), MF_OK);
    assert_int_equal(mf_binary(MF_OP_MUL, in[0], b, &outs[0]), MF_OK);
    if (f->stop)
        mf_tensor_release(b);
    *nout = 1;
    if (n > 1) {
        assert_int_equal(mf_binary(MF_OP_ADD, in[0], in[0], &outs[1]), MF_OK);
        *nout = 2;
    }
    return MF_OK;
}

typedef struct Reports {
    int n;
    MfGradcheckMismatch last;
} Reports;

static void keep(void *ctx, const MfGradcheckMismatch *m)
{
    Reports *r = ctx;
    r->n++;
    r->last = *m;
}

static MfTensor *x3(void)
{
    return make_tensor(MF_FLOAT64, 1, (int64_t[]){3}, (double[]){0.5, -1, 2});
}

static void test_right_gradient_passes(void **state)
{
    (void)state;
    MfTensor *x = x3();
    Fn f = {0};
    int bad = -1;
    MfGradcheckOptions o = mf_gradcheck_defaults();
    assert_int_equal(mf_gradcheck(square, &f, 1, &x, &o, &bad), MF_OK);
    assert_int_equal(bad, 0);
    assert_int_equal(f.calls, 1 + 2 * 3);   /* once under the tape, twice per element */
    assert_values(x, (double[]){0.5, -1, 2}, 3, 0);
    mf_tensor_release(x);
}

static void test_wrong_gradient_is_reported(void **state)
{
    (void)state;
    MfTensor *x = x3();
    Fn f = {.stop = true};
    Reports r = {0};
    int bad = 0;
    MfGradcheckOptions o = mf_gradcheck_defaults();
    o.report = keep;
    o.report_ctx = &r;
    assert_int_equal(mf_gradcheck(square, &f, 1, &x, &o, &bad), MF_OK);
    assert_int_equal(bad, 1);                /* stops at the first by default */
    assert_int_equal(r.last.input, 0);
    assert_int_equal(r.last.index, 0);
    assert_true(fabs(r.last.analytic - 0.5) < 1e-12);   /* x, not 2x */
    assert_true(fabs(r.last.numeric - 1.0) < 1e-6);
    assert_true(fabs(r.last.x - 0.5) < 1e-15);
    o.stop_after = 0;                        /* every element */
    r.n = 0;
    assert_int_equal(mf_gradcheck(square, &f, 1, &x, &o, &bad), MF_OK);
    assert_int_equal(bad, 3);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.last.index, 2);
    /* a tolerance wide enough lets it pass: the rule is atol + rtol * |numeric| */
    o.rtol = 0.6;
    assert_int_equal(mf_gradcheck(square, &f, 1, &x, &o, &bad), MF_OK);
    assert_int_equal(bad, 0);
    assert_values(x, (double[]){0.5, -1, 2}, 3, 0);
    mf_tensor_release(x);
}

/* The face's report: 1-based input and index (row-major in the input's
 * shape), and the float64 copy the check perturbs. */
static void test_message_and_input(void **state)
{
    (void)state;
    MfTensor *m = make_tensor(MF_FLOAT32, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6});
    MfGradcheckMismatch bad = {.input = 1, .index = 4, .x = 5, .analytic = 0.5, .numeric = 0.25};
    char buf[200];
    assert_string_equal(mf_gradcheck_message(&bad, m, buf, sizeof buf),
                        "gradcheck: input 2, index {2,2}: analytic 0.5, numeric 0.25, "
                        "difference 0.25");
    MfTensor *t = mf_tensor_view(m, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0);   /* m^T */
    MfTensor *x = mf_gradcheck_input(t);
    assert_non_null(x);
    assert_int_equal(x->dtype, MF_FLOAT64);
    assert_values(x, (double[]){1, 4, 2, 5, 3, 6}, 6, 0);
    assert_ptr_not_equal(x->storage, m->storage);
    mf_tensor_release(x);
    mf_tensor_release(t);
    MfGraph *g = mf_graph_new();
    MfTensor *ph = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT64, 1, (int64_t[]){3}, "p", &ph), MF_OK);
    assert_null(mf_gradcheck_input(ph));
    assert_error_contains("gradcheck: an input is a symbolic (graph) tensor");
    mf_tensor_release(ph);
    mf_graph_release(g);
    mf_tensor_release(m);
}

/* Weights pick outputs: only y1 = 2x with weights (1, 2, 3) counts. */
static void test_weights_and_integer_inputs(void **state)
{
    (void)state;
    MfTensor *in[2] = {x3(), make_tensor(MF_INT32, 1, (int64_t[]){2}, (double[]){7, 8})};
    MfTensor *w1 = make_tensor(MF_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    MfTensor *w[MF_GRADCHECK_MAX_OUTPUTS] = {NULL, w1};
    Fn f = {.stop = true};                  /* y0 is wrong but left out */
    int bad = -1;
    MfGradcheckOptions o = mf_gradcheck_defaults();
    o.weights = w;
    o.stop_after = 0;
    assert_int_equal(mf_gradcheck(square, &f, 2, in, &o, &bad), MF_OK);
    assert_int_equal(bad, 0);
    assert_int_equal(f.calls, 1 + 2 * 3);   /* the int input is not perturbed */
    w[0] = w1;                              /* now y0 counts too: its gradient is wrong */
    assert_int_equal(mf_gradcheck(square, &f, 2, in, &o, &bad), MF_OK);
    assert_int_equal(bad, 3);
    mf_tensor_release(w1);
    mf_tensor_release(in[0]);
    mf_tensor_release(in[1]);
}

static void test_errors(void **state)
{
    (void)state;
    MfTensor *x = x3();
    Fn f = {.fail = true};
    int bad = 0;
    MfGradcheckOptions o = mf_gradcheck_defaults();
    assert_int_equal(mf_gradcheck(square, &f, 1, &x, &o, &bad), MF_EARG);
    assert_error_contains("square: asked to fail");
    MfGraph *g = mf_graph_new();
    MfTensor *ph = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT64, 1, (int64_t[]){3}, "p", &ph), MF_OK);
    f = (Fn){.symbolic = ph};
    assert_int_equal(mf_gradcheck(square, &f, 1, &x, &o, &bad), MF_EARG);
    assert_error_contains("gradcheck: f returned a symbolic (graph) tensor");
    MfTensor *m = make_tensor(MF_FLOAT64, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4});
    MfTensor *t = mf_tensor_view(m, 2, (int64_t[]){2, 2}, (int64_t[]){1, 2}, 0);
    assert_non_null(t);
    f = (Fn){0};
    assert_int_equal(mf_gradcheck(square, &f, 1, &t, &o, &bad), MF_EARG);
    assert_error_contains("gradcheck: input 1 is a float64 view");
    assert_int_equal(f.calls, 0);
    mf_tensor_release(t);
    mf_tensor_release(m);
    mf_tensor_release(ph);
    mf_graph_release(g);
    mf_tensor_release(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_right_gradient_passes),
        TEST(test_wrong_gradient_is_reported),
        TEST(test_message_and_input),
        TEST(test_weights_and_integer_inputs),
        TEST(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
