/* test_custom_gradient.c — mode/custom_gradient.c, mf.custom_gradient's
 * choice between the modes: eagerly with no tape recording nothing is
 * attached; under a tape the function is recorded from the inputs (and the
 * values of the Variables f read) to a fresh Identity of y; in a graph an
 * Identity node carries it (freed with the graph), and a Variable f read
 * that is not an input is refused, naming it. The function is released on
 * every path. */
#include <math.h>
#include <string.h>

#include "testutil.h"

#include "eager/eager.h"
#include "graph/gradients.h"
#include "graph/graph.h"
#include "mode/mode.h"
#include "train/train.h"

typedef struct Fn {
    MfTapeFunction base;
    int freed;
    int ninputs;   /* as the last backward saw them */
} Fn;

/* din[i] = 10 * dy for every input. */
static MfStatus times_ten(MfTapeFunction *f, int nout, MfTensor *const *dout, int nin,
                          MfTensor *const *in, MfTensor **din)
{
    (void)nout;
    (void)in;
    ((Fn *)f)->ninputs = nin;
    MfTensor *ten = mf_tensor_scalar(dout[0]->dtype, 10.0);
    MfStatus st = MF_OK;
    for (int i = 0; i < nin && st == MF_OK; i++)
        st = mf_binary(MF_OP_MUL, dout[0], ten, &din[i]);
    mf_tensor_release(ten);
    return st;
}

static void count_free(MfTapeFunction *f)
{
    ((Fn *)f)->freed++;
}

static Fn new_fn(void)
{
    return (Fn){{.refcount = 1, .name = "custom_gradient", .backward = times_ten,
                 .free = count_free}, 0, 0};
}

static MfTensor *square(MfTensor *x)
{
    MfTensor *y = NULL;
    assert_int_equal(mf_binary(MF_OP_MUL, x, x, &y), MF_OK);
    return y;
}

static void test_eager_without_tape(void **state)
{
    (void)state;
    Fn fn = new_fn();
    MfTensor *x = mf_tensor_scalar(MF_FLOAT32, 3.0), *out = x;
    MfCustomScope s = mf_custom_gradient_begin();
    assert_null(s.g);
    MfTensor *y = square(x);
    assert_null(mf_tape_custom_end(s.reads, 0, NULL));
    assert_int_equal(mf_custom_gradient_attach(&s, &fn.base, 1, &x, 0, NULL, y, &out), MF_OK);
    assert_null(out);   /* y stays */
    assert_int_equal(fn.freed, 1);
    mf_tensor_release(y);
    mf_tensor_release(x);
}

static void test_eager_under_tape(void **state)
{
    (void)state;
    Fn fn = new_fn();
    MfVariable *v = mf_variable_new(mf_tensor_scalar(MF_FLOAT32, 2.0), "w", true);
    mf_tensor_release(v->value);   /* the variable holds the only reference */
    MfTensor *x = mf_tensor_scalar(MF_FLOAT32, 3.0), *out = NULL, *g[2] = {NULL, NULL};
    MfTape *t = mf_tape_new(true, true);
    assert_int_equal(mf_tape_watch(t, x), MF_OK);
    MfCustomScope s = mf_custom_gradient_begin();
    MfTensor *y = square(x);
    mf_variable_read(v);   /* f reads w (the value is borrowed) */
    MfVariable *read[2] = {NULL, NULL};
    assert_int_equal(mf_tape_custom_end_all(s.reads, 0, NULL, read, 2), 1);
    assert_ptr_equal(read[0], v);
    assert_int_equal(mf_custom_gradient_attach(&s, &fn.base, 1, &x, 1, read, y, &out), MF_OK);
    mf_variable_release(read[0]);
    assert_non_null(out);
    assert_true(out != y);
    assert_values(out, (double[]){9.0}, 1, 1e-6);
    assert_int_equal(fn.freed, 0);   /* the tape holds it */
    MfTapeSource src[2] = {{x, NULL}, {NULL, v}};
    assert_int_equal(mf_tape_gradient(t, out, 2, src, NULL, false, g), MF_OK);
    assert_int_equal(fn.ninputs, 2);   /* x, then w's value */
    assert_values(g[0], (double[]){10.0}, 1, 1e-6);   /* not 2x */
    assert_values(g[1], (double[]){10.0}, 1, 1e-6);
    mf_tape_release(t);
    assert_int_equal(fn.freed, 1);
    mf_tensor_release(g[0]);
    mf_tensor_release(g[1]);
    mf_tensor_release(out);
    mf_tensor_release(y);
    mf_tensor_release(x);
    mf_variable_release(v);
}

static void test_graph_node(void **state)
{
    (void)state;
    Fn fn = new_fn();
    MfGraph *g = mf_graph_new();
    MfTensor *x = NULL, *out = NULL, *gx = NULL, *r = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 0, NULL, "x", &x), MF_OK);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfCustomScope s = mf_custom_gradient_begin();
    assert_ptr_equal(s.g, g);
    MfTensor *y = square(x);
    assert_null(mf_tape_custom_end(s.reads, 0, NULL));
    assert_int_equal(mf_custom_gradient_attach(&s, &fn.base, 1, &x, 0, NULL, y, &out), MF_OK);
    mf_graph_pop_default();
    assert_non_null(out->node);
    assert_int_equal(mf_graph_gradients(g, 1, &out, 1, &x, NULL, &gx), MF_OK);
    MfSession *sess = mf_session_new(g);
    MfTensor *feed = mf_tensor_scalar(MF_FLOAT32, 3.0);
    assert_int_equal(mf_session_run(sess, 1, &gx, 0, NULL, 1, &x, &feed, NULL, &r, NULL), MF_OK);
    assert_values(r, (double[]){10.0}, 1, 1e-6);
    mf_session_free(sess);
    mf_tensor_release(feed);
    mf_tensor_release(r);
    mf_tensor_release(gx);
    mf_tensor_release(out);
    mf_tensor_release(y);
    mf_tensor_release(x);
    assert_int_equal(fn.freed, 0);
    mf_graph_release(g);
    assert_int_equal(fn.freed, 1);   /* with the graph */
}

static void test_graph_refuses_variables(void **state)
{
    (void)state;
    Fn fn = new_fn();
    MfVariable *v = mf_variable_new(mf_tensor_scalar(MF_FLOAT32, 2.0), "w", true);
    mf_tensor_release(v->value);
    MfGraph *g = mf_graph_new();
    MfTensor *x = NULL, *out = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 0, NULL, "x", &x), MF_OK);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfCustomScope s = mf_custom_gradient_begin();
    MfTensor *y = square(x);
    assert_null(mf_tape_custom_end(s.reads, 0, NULL));
    assert_int_equal(mf_custom_gradient_attach(&s, &fn.base, 1, &x, 1, &v, y, &out), MF_EARG);
    mf_graph_pop_default();
    assert_error_contains("custom_gradient: f reads the trainable variable 'w', which is not "
                          "one of its inputs; in a graph pass the variable to f as an argument");
    mf_err_clear();
    assert_null(out);
    assert_int_equal(fn.freed, 1);
    mf_tensor_release(y);
    mf_tensor_release(x);
    mf_graph_release(g);
    mf_variable_release(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_eager_without_tape),
        TEST(test_eager_under_tape),
        TEST(test_graph_node),
        TEST(test_graph_refuses_variables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
