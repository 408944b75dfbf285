/* test_tape.c — the gradient tape (eager/): recording only what depends on
 * watched tensors, gradient values, persistent and non-persistent tapes,
 * unconnected sources, output gradients, nesting (second derivatives),
 * custom functions, suspension, Variables, 'explain' and the records list;
 * the walk's hooks (a source's gradient handed over as soon as it is final).
 * Teardown checks that no tensor, variable or tape is left alive and that
 * the recorder is unregistered. */
#include "testutil.h"

#include "core/ops/reduce.h"
#include "core/variable.h"
#include "eager/eager.h"
#include "graph/graph.h"

static int tape_teardown(void **state)
{
    if (mf_tape_live_count() != 0 || mf_variable_live_count() != 0 || mf_op_recorder()) {
        print_error("tapes %lld, variables %lld alive; recorder %s\n",
                    (long long)mf_tape_live_count(), (long long)mf_variable_live_count(),
                    mf_op_recorder() ? "still registered" : "off");
        return -1;
    }
    return teardown_engine(state);
}

#define TTEST(fn) cmocka_unit_test_setup_teardown(fn, setup_engine, tape_teardown)

static MfTensor *scalar(double v)
{
    return mf_tensor_scalar(MF_FLOAT64, v);
}

static MfTensor *mul(MfTensor *a, MfTensor *b)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_binary(MF_OP_MUL, a, b, &out), MF_OK);
    return out;
}

static MfTapeSource src(MfTensor *t)
{
    MfTapeSource s = {t, NULL};
    return s;
}

/* What the hooks saw: the sources in the order handed over, their
 * gradients, and the calls between records. */
typedef struct Seen {
    int order[8], n, between;
    MfTensor *grads[8];
    int fail_at;   /* 'ready' fails on this call (1-based; 0: never) */
} Seen;

static MfStatus seen_ready(void *ctx, int source, MfTensor *grad)
{
    Seen *s = ctx;
    s->grads[source] = grad;
    s->order[s->n++] = source;
    return s->n == s->fail_at ? mf_err_set(MF_EARG, "hook failed") : MF_OK;
}

static MfStatus seen_between(void *ctx)
{
    ((Seen *)ctx)->between++;
    return MF_OK;
}

static void test_gradient_hooks(void **state)
{
    (void)state;
    for (int fail = 0; fail <= 1; fail++) {
        MfTensor *a = scalar(2.0), *b = scalar(3.0), *c = scalar(5.0), *d = scalar(7.0);
        MfTape *t = mf_tape_new(false, true);
        MfTensor *in[4] = {a, b, c, d};
        for (int i = 0; i < 4; i++)
            assert_int_equal(mf_tape_watch(t, in[i]), MF_OK);
        MfTensor *h = mul(a, b), *y = mul(h, c);   /* records: a*b, then h*c */
        MfTapeSource s[4] = {src(a), src(b), src(c), src(d)};
        MfTensor *g[4] = {NULL, NULL, NULL, NULL};
        Seen seen = {.fail_at = fail ? 2 : 0};
        MfTapeHooks hooks = {seen_ready, seen_between, &seen};
        MfStatus st = mf_tape_gradient_hooked(t, y, 4, s, &hooks, g);
        if (fail) {   /* the walk ends with the hook's error, nothing returned */
            assert_int_equal(st, MF_EARG);
            assert_string_equal(mf_err_msg(), "hook failed");
            assert_int_equal(seen.n, 2);
            for (int i = 0; i < 4; i++)
                assert_null(g[i]);
        } else {
            /* c is final after the last record (h*c), a and b after the first,
             * d (read by none) at the end, without a gradient */
            assert_int_equal(st, MF_OK);
            assert_int_equal(seen.n, 4);
            int want[4] = {2, 0, 1, 3};
            for (int i = 0; i < 4; i++) {
                assert_int_equal(seen.order[i], want[i]);
                assert_ptr_equal(seen.grads[i], g[i]);
            }
            assert_int_equal(seen.between, 1);   /* between the 2 records, not after */
            assert_values(g[0], (double[]){15.0}, 1, 0);
            assert_values(g[1], (double[]){10.0}, 1, 0);
            assert_values(g[2], (double[]){6.0}, 1, 0);
            assert_null(g[3]);
        }
        for (int i = 0; i < 4; i++) {
            mf_tensor_release(g[i]);
            mf_tensor_release(in[i]);
        }
        mf_tensor_release(h);
        mf_tensor_release(y);
        mf_tape_release(t);
    }
}

static void test_watch_and_gradient(void **state)
{
    (void)state;
    MfTensor *x = scalar(3.0), *c = scalar(5.0);
    MfTape *t = mf_tape_new(false, true);
    assert_non_null(mf_op_recorder());
    assert_int_equal(mf_tape_watch(t, x), MF_OK);
    MfTensor *unrelated = mul(c, c);
    MfTensor *x2 = mul(x, x), *y = mul(x2, x);
    assert_int_equal(mf_tape_count(t), 2); /* c*c was not recorded */
    MfTapeSource s = src(x);
    MfTensor *g = NULL;
    assert_int_equal(mf_tape_gradient(t, y, 1, &s, NULL, false, &g), MF_OK);
    assert_values(g, (double[]){27.0}, 1, 1e-12);
    assert_false(mf_tape_recording(t));
    assert_int_equal(mf_tape_count(t), 0);
    MfTensor *g2 = NULL;
    assert_int_equal(mf_tape_gradient(t, y, 1, &s, NULL, false, &g2), MF_EARG);
    assert_error_contains("a non-persistent GradientTape can only be used once");
    mf_tape_release(t);
    assert_null(mf_op_recorder());
    mf_tensor_release(g);
    mf_tensor_release(y);
    mf_tensor_release(x2);
    mf_tensor_release(unrelated);
    mf_tensor_release(x);
    mf_tensor_release(c);
}

static void test_unconnected_and_output_gradient(void **state)
{
    (void)state;
    int64_t n = 3;
    MfTensor *x = make_tensor(MF_FLOAT64, 1, &n, (double[]){1, 2, 3});
    MfTensor *u = make_tensor(MF_FLOAT64, 1, &n, (double[]){1, 1, 1});
    MfTensor *w = make_tensor(MF_FLOAT64, 1, &n, (double[]){1, 0, 2});
    MfTape *t = mf_tape_new(true, true);
    mf_tape_watch(t, x);
    mf_tape_watch(t, u);
    MfTensor *y = mul(x, x);
    MfTapeSource s[2] = {src(x), src(u)};
    MfTensor *g[2];
    assert_int_equal(mf_tape_gradient(t, y, 2, s, NULL, false, g), MF_OK);
    assert_values(g[0], (double[]){2, 4, 6}, 3, 1e-12);
    assert_null(g[1]);
    mf_tensor_release(g[0]);
    assert_int_equal(mf_tape_gradient(t, y, 2, s, w, true, g), MF_OK);
    assert_values(g[0], (double[]){2, 0, 12}, 3, 1e-12);
    assert_values(g[1], (double[]){0, 0, 0}, 3, 0);
    mf_tensor_release(g[0]);
    mf_tensor_release(g[1]);
    MfTensor *bad = scalar(1.0);
    assert_int_equal(mf_tape_gradient(t, y, 2, s, bad, false, g), MF_EARG);
    assert_error_contains("output_gradients has shape () (float64) but the target has shape (3,)");
    assert_null(g[0]);
    mf_tape_release(t);
    mf_tensor_release(bad);
    mf_tensor_release(y);
    mf_tensor_release(x);
    mf_tensor_release(u);
    mf_tensor_release(w);
}

static void test_nested_second_derivative(void **state)
{
    (void)state;
    MfTensor *x = scalar(2.0);
    MfTape *outer = mf_tape_new(false, true), *inner = mf_tape_new(false, true);
    mf_tape_watch(outer, x);
    mf_tape_watch(inner, x);
    MfTensor *x2 = mul(x, x), *y = mul(x2, x);
    MfTapeSource s = src(x);
    MfTensor *dy = NULL, *d2y = NULL;
    assert_int_equal(mf_tape_gradient(inner, y, 1, &s, NULL, false, &dy), MF_OK);
    assert_values(dy, (double[]){12.0}, 1, 1e-12);
    assert_true(mf_tape_count(outer) > 2); /* the outer tape recorded the backward ops */
    assert_int_equal(mf_tape_gradient(outer, dy, 1, &s, NULL, false, &d2y), MF_OK);
    assert_values(d2y, (double[]){12.0}, 1, 1e-12);
    mf_tape_release(inner);
    mf_tape_release(outer);
    mf_tensor_release(d2y);
    mf_tensor_release(dy);
    mf_tensor_release(y);
    mf_tensor_release(x2);
    mf_tensor_release(x);
}

static int freed_functions;

static MfStatus times_ten(MfTapeFunction *f, int nout, MfTensor *const *dout, int nin,
                          MfTensor *const *in, MfTensor **din)
{
    (void)f;
    (void)nout;
    (void)nin;
    (void)in;
    MfTensor *ten = scalar(10.0);
    MfStatus st = mf_binary(MF_OP_MUL, dout[0], ten, &din[0]);
    mf_tensor_release(ten);
    return st;
}

static void free_function(MfTapeFunction *f)
{
    (void)f;
    freed_functions++;
}

static void test_custom_function_and_suspend(void **state)
{
    (void)state;
    MfTapeFunction fn = {.refcount = 1, .name = "custom_gradient", .backward = times_ten,
                         .free = free_function};
    MfTensor *x = scalar(3.0);
    MfTape *t = mf_tape_new(true, true);
    mf_tape_watch(t, x);
    mf_tape_suspend();
    assert_false(mf_tape_any_recording());
    MfTensor *y = mul(x, x);
    mf_tape_resume();
    assert_int_equal(mf_tape_count(t), 0);
    assert_int_equal(mf_tape_record_function(&fn, 1, &x, 1, &y), MF_OK);
    mf_tape_function_release(&fn);
    assert_int_equal(freed_functions, 0);
    MfTapeEntry e = mf_tape_entry(t, 0);
    assert_string_equal(e.name, "custom_gradient");
    assert_ptr_equal(e.outputs[0], y);
    MfTapeSource s = src(x);
    MfTensor *g = NULL;
    assert_int_equal(mf_tape_gradient(t, y, 1, &s, NULL, false, &g), MF_OK);
    assert_values(g, (double[]){10.0}, 1, 1e-12);
    mf_tape_release(t);
    assert_int_equal(freed_functions, 1);
    mf_tensor_release(g);
    mf_tensor_release(y);
    mf_tensor_release(x);
}

static void test_variables(void **state)
{
    (void)state;
    MfVariable *v = mf_variable_new(scalar(3.0), "v", true);
    mf_tensor_release(v->value); /* the variable holds the only reference now */
    MfVariable *frozen = mf_variable_new(scalar(2.0), "frozen", false);
    mf_tensor_release(frozen->value);
    MfTape *t = mf_tape_new(false, true);
    MfTensor *a = mf_variable_read(v), *b = mf_variable_read(frozen);
    MfTensor *y = mul(a, a), *z = mul(y, b);
    MfTapeSource s[2] = {{NULL, v}, {NULL, frozen}};
    char buf[256];
    mf_tape_explain(t, z, &s[1], buf, sizeof buf);
    assert_non_null(strstr(buf, "'frozen' is not trainable"));
    MfTensor *g[2];
    assert_int_equal(mf_tape_gradient(t, z, 2, s, NULL, false, g), MF_OK);
    assert_values(g[0], (double[]){12.0}, 1, 1e-12);
    assert_null(g[1]);
    mf_tape_release(t);
    mf_tensor_release(g[0]);
    mf_tensor_release(z);
    mf_tensor_release(y);
    mf_variable_release(v);
    mf_variable_release(frozen);
}

/* mf.grad's pieces: watching a Variable and a tensor in one call, and no
 * gradient for an integer source even when one was computed. */
static void test_watch_sources_and_integer_grads(void **state)
{
    (void)state;
    MfVariable *v = mf_variable_new(scalar(3.0), "v", true);
    mf_tensor_release(v->value);
    MfTensor *x = scalar(2.0), *k = mf_tensor_scalar(MF_INT64, 4);
    MfTape *t = mf_tape_new(false, false);   /* watches nothing by itself */
    MfTapeSource s[3] = {{NULL, v}, {x, NULL}, {k, NULL}};
    assert_int_equal(mf_tape_watch_sources(t, 3, s), MF_OK);
    MfTensor *a = mf_variable_read(v), *y = mul(a, x);
    MfTensor *g[3] = {NULL, NULL, NULL};
    assert_int_equal(mf_tape_gradient(t, y, 2, s, NULL, false, g), MF_OK);
    assert_values(g[0], (double[]){2.0}, 1, 1e-12);
    assert_values(g[1], (double[]){3.0}, 1, 1e-12);
    g[2] = mf_tensor_scalar(MF_INT64, 0);   /* as a graph's gradient may give one */
    mf_tape_drop_integer_grads(3, s, g);
    assert_non_null(g[0]);
    assert_non_null(g[1]);
    assert_null(g[2]);
    for (int i = 0; i < 2; i++)
        mf_tensor_release(g[i]);
    mf_tape_release(t);
    mf_tensor_release(y);   /* 'a' is borrowed from v */
    mf_tensor_release(x);
    mf_tensor_release(k);
    mf_variable_release(v);
}

static void explain(MfTape *t, MfTensor *target, MfTensor *source, const char *part)
{
    char buf[512];
    MfTapeSource s = src(source);
    mf_tape_explain(t, target, &s, buf, sizeof buf);
    if (!strstr(buf, part)) {
        print_error("explain said '%s', expected '%s'\n", buf, part);
        fail();
    }
}

/* mf_tape_variables: creation order, whatever the order of the reads. */
static void test_variables_in_creation_order(void **state)
{
    (void)state;
    MfVariable *vs[3];
    for (int i = 0; i < 3; i++) {
        vs[i] = mf_variable_new(scalar(i + 1.0), "v", true);
        mf_tensor_release(vs[i]->value);
    }
    MfTape *t = mf_tape_new(false, true);
    for (int i = 2; i >= 0; i--)
        mf_variable_read(vs[i]);   /* borrowed */
    MfVariable *out[3] = {NULL, NULL, NULL};
    assert_int_equal(mf_tape_variables(t, NULL, 0), 3);
    assert_int_equal(mf_tape_variables(t, out, 3), 3);
    for (int i = 0; i < 3; i++)
        assert_ptr_equal(out[i], vs[i]);
    mf_tape_release(t);
    for (int i = 0; i < 3; i++)
        mf_variable_release(vs[i]);
}

/* jacobian: values; the walk's errors named "jacobian: gradient: ..."; a
 * symbolic target refused. */
static void test_jacobian_errors(void **state)
{
    (void)state;
    MfTensor *x = make_tensor(MF_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 2}), *j = NULL;
    MfTape *t = mf_tape_new(false, true);
    assert_int_equal(mf_tape_watch(t, x), MF_OK);
    MfTensor *y = mul(x, x);
    MfTapeSource s = src(x);
    assert_int_equal(mf_tape_jacobian(t, y, &s, false, &j), MF_OK);
    assert_values(j, (double[]){2, 0, 0, 4}, 4, 1e-12);
    mf_tensor_release(j);
    assert_int_equal(mf_tape_batch_jacobian(t, y, &s, false, &j), MF_EARG);
    assert_null(j);
    assert_error_contains("batch_jacobian: gradient: a non-persistent GradientTape can only be "
                          "used once");
    mf_err_clear();
    MfGraph *g = mf_graph_new();
    MfTensor *p = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT64, 0, NULL, "p", &p), MF_OK);
    assert_int_equal(mf_tape_jacobian(t, p, &s, false, &j), MF_EARG);
    assert_error_contains("jacobian: the target is a graph tensor: its rows are symbolic "
                          "gradients (mf_tape_window_jacobians)");
    mf_err_clear();
    mf_tensor_release(p);
    mf_graph_release(g);
    mf_tape_release(t);
    mf_tensor_release(y);
    mf_tensor_release(x);
}

/* batch_jacobian takes [batch, ...] tensors of rank at least 2 (TensorFlow:
 * with_rank_at_least(2)); rank 1 was taken and gave the diagonal. */
static void test_batch_jacobian_ranks(void **state)
{
    (void)state;
    MfTensor *x = make_tensor(MF_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 2}), *j = NULL;
    MfTensor *x2 = make_tensor(MF_FLOAT64, 2, (int64_t[]){2, 1}, (double[]){1, 2});
    MfTape *t = mf_tape_new(true, true);
    assert_int_equal(mf_tape_watch(t, x), MF_OK);
    assert_int_equal(mf_tape_watch(t, x2), MF_OK);
    MfTensor *y = mul(x, x), *y2 = mul(x2, x2);
    MfTapeSource s = src(x), s2 = src(x2);
    MfTensor *targets[3] = {y, y2, y};
    MfTapeSource *sources[3] = {&s, &s, &s2};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(mf_tape_batch_jacobian(t, targets[i], sources[i], false, &j),
                         MF_ESHAPE);
        assert_null(j);
        assert_error_contains("batch_jacobian: target and source must have rank at least 2 "
                              "([batch, ...])");
        mf_err_clear();
    }
    assert_int_equal(mf_tape_batch_jacobian(t, y2, &s2, false, &j), MF_OK);
    assert_values(j, (double[]){2, 4}, 2, 1e-12);
    mf_tensor_release(j);
    mf_tape_release(t);
    MfTensor *all[] = {x, x2, y, y2};
    for (int i = 0; i < 4; i++)
        mf_tensor_release(all[i]);
}

static void test_explain(void **state)
{
    (void)state;
    int64_t n = 2;
    MfTensor *x = make_tensor(MF_FLOAT64, 1, &n, (double[]){1, 2});
    MfTensor *o = make_tensor(MF_FLOAT64, 1, &n, (double[]){3, 4});
    MfTape *t = mf_tape_new(true, true);
    mf_tape_watch(t, x);
    mf_tape_watch(t, o);
    MfTensor *y = mul(x, x), *oo = mul(o, o), *sg = NULL, *am = NULL, *late = NULL;
    assert_int_equal(mf_unary(MF_OP_STOP_GRADIENT, y, &sg), MF_OK);
    assert_int_equal(mf_argreduce(MF_OP_ARGMAX, y, 0, &am), MF_OK);
    MfTensor *unwatched = scalar(1.0);
    explain(t, y, x, "connected");
    explain(t, y, unwatched, "not watched");
    explain(t, sg, x, "stop_gradient");
    explain(t, am, x, "non-differentiable op 'argmax' (ArgMax");
    explain(t, oo, x, "never used");
    mf_tape_stop(t);
    late = mul(y, x);
    explain(t, late, x, "the tape was stopped");
    assert_int_equal(mf_tape_count(t), 4);
    assert_string_equal(mf_tape_entry(t, 3).name, "ArgMax");
    mf_tape_release(t);
    MfTensor *all[] = {x, o, y, oo, sg, am, late, unwatched};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        mf_tensor_release(all[i]);
}

/* print(tape)'s text comes from eager/listing.c: records with attributes,
 * inputs named as the tape names them, shapes aligned. */
static void test_listing(void **state)
{
    (void)state;
    MfTensor *x = scalar(3.0), *c = scalar(5.0), *s = NULL;
    MfTape *t = mf_tape_new(true, true);
    assert_int_equal(mf_tape_watch(t, x), MF_OK);
    MfTensor *y = mul(x, c);
    assert_int_equal(mf_reduce(MF_OP_SUM, y, NULL, 0, true, &s), MF_OK);
    mf_tape_stop(t);
    MfStrBuf b = {0};
    assert_int_equal(mf_tape_listing(t, &b), MF_OK);
    assert_string_equal(b.data, "<GradientTape persistent, stopped, 2 records>\n"
                        "    1  t1 = Mul(watched, 5)        (), () -> ()\n"
                        "    2  t2 = Sum[keepdims](t1)      () -> ()");
    mf_strbuf_free(&b);
    mf_tape_release(t);
    mf_tensor_release(s);
    mf_tensor_release(y);
    mf_tensor_release(x);
    mf_tensor_release(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_listing),
        TTEST(test_watch_and_gradient), TTEST(test_gradient_hooks),
        TTEST(test_unconnected_and_output_gradient),
        TTEST(test_nested_second_derivative),
        TTEST(test_custom_function_and_suspend),
        TTEST(test_variables), TTEST(test_watch_sources_and_integer_grads),
        TTEST(test_explain), TTEST(test_variables_in_creation_order),
        TTEST(test_jacobian_errors),
        TTEST(test_batch_jacobian_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
