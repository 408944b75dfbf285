/* test_graph_custom_grad.c — mf_graph_custom_gradient (graph/gradients.h)
 * from C: the gradient walk calls the node's function with the symbolic
 * output gradient instead of walking into what f built; the function is
 * freed with the graph; a dropped one, a failing one and a badly shaped
 * result fail naming custom_gradient; a trainable variable f reads that is
 * not an input is refused. */
#include <stdlib.h>

#include "testutil.h"

#include "graph/gradients.h"
#include "graph/graph.h"

typedef struct Scale {
    MfNodeGrad base;
    double k;           /* dx = dy * k */
    bool fail;          /* backward fails */
    bool wrong_shape;   /* backward returns a (2,) tensor */
    int *freed;
    MfNodeInput in[2];
} Scale;

static MfStatus scale_backward(MfNodeGrad *f, int noutputs, MfTensor *const *dout, int ninputs,
                               MfTensor *const *inputs, MfTensor **din)
{
    Scale *s = (Scale *)f;
    assert_int_equal(noutputs, 1);
    assert_non_null(dout[0]->node);   /* symbolic: the graph is being built */
    assert_non_null(inputs[0]->node);
    if (s->fail)
        return mf_err_set(MF_EARG, "custom_gradient: the gradient function failed: test");
    if (s->wrong_shape) {
        din[0] = make_tensor(MF_FLOAT32, 1, (int64_t[]){2}, (double[]){1, 2});
        return MF_OK;
    }
    MfTensor *k = mf_tensor_scalar(MF_FLOAT32, s->k);
    MfStatus st = mf_binary(MF_OP_MUL, dout[0], k, &din[0]);
    mf_tensor_release(k);
    for (int i = 1; i < ninputs; i++)
        din[i] = NULL;
    return st;
}

static void scale_drop(MfNodeGrad *f)
{
    (void)f;
}

static void scale_free(MfNodeGrad *f)
{
    Scale *s = (Scale *)f;
    (*s->freed)++;
    free(s);
}

static Scale *new_scale(double k, int *freed)
{
    Scale *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->k = k;
    s->freed = freed;
    s->base = (MfNodeGrad){.name = "custom_gradient", .ninputs = 1, .inputs = s->in,
                           .backward = scale_backward, .drop = scale_drop, .free = scale_free};
    return s;
}

/* y = cg(x) = x * x with dx = 100 dy; returns the marked output. */
static MfTensor *build(MfGraph *g, MfTensor *x, Scale *s)
{
    MfTensor *sq = NULL, *out = NULL;
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_int_equal(mf_binary(MF_OP_MUL, x, x, &sq), MF_OK);
    assert_int_equal(mf_graph_custom_gradient(-1, 1, &x, sq, &s->base, &out), MF_OK);
    mf_graph_pop_default();
    mf_tensor_release(sq);
    return out;
}

static double run_grad(MfGraph *g, MfTensor *x, MfTensor *gx, double at)
{
    MfSession *s = mf_session_new(g);
    MfTensor *feed = mf_tensor_scalar(MF_FLOAT32, at), *r = NULL;
    assert_int_equal(mf_session_run(s, 1, &gx, 0, NULL, 1, &x, &feed, NULL, &r, NULL), MF_OK);
    double v = mf_tensor_get(r, 0);
    mf_tensor_release(r);
    mf_tensor_release(feed);
    mf_session_free(s);
    return v;
}

static void test_gradient_is_the_functions(void **state)
{
    (void)state;
    int freed = 0;
    MfGraph *g = mf_graph_new();
    MfTensor *x = NULL, *gx = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 0, NULL, "x", &x), MF_OK);
    MfTensor *y = build(g, x, new_scale(100, &freed));
    /* z = 3 y + x: dz/dx = 3 * 100 + 1, not 3 * 2x + 1 */
    MfTensor *three = mf_tensor_scalar(MF_FLOAT32, 3), *y3 = NULL, *z = NULL;
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_int_equal(mf_binary(MF_OP_MUL, y, three, &y3), MF_OK);
    assert_int_equal(mf_binary(MF_OP_ADD, y3, x, &z), MF_OK);
    mf_graph_pop_default();
    assert_int_equal(mf_graph_gradients(g, 1, &z, 1, &x, NULL, &gx), MF_OK);
    assert_true(fabs(run_grad(g, x, gx, 3.0) - 301.0) < 1e-5);
    mf_tensor_release(gx);
    mf_tensor_release(three);
    mf_tensor_release(y3);
    mf_tensor_release(z);
    mf_tensor_release(y);
    mf_tensor_release(x);
    assert_int_equal(freed, 0);
    mf_graph_release(g);
    assert_int_equal(freed, 1);   /* freed with the graph */
}

static void test_errors_name_custom_gradient(void **state)
{
    (void)state;
    int freed = 0;
    MfGraph *g = mf_graph_new();
    MfTensor *x = NULL, *gx = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 0, NULL, "x", &x), MF_OK);
    Scale *s = new_scale(2, &freed);
    MfTensor *y = build(g, x, s);
    s->fail = true;
    assert_int_equal(mf_graph_gradients(g, 1, &y, 1, &x, NULL, &gx), MF_EARG);
    assert_non_null(strstr(mf_err_msg(), "custom_gradient: the gradient function failed"));
    assert_null(gx);
    mf_err_clear();
    s->fail = false;
    s->wrong_shape = true;
    assert_int_equal(mf_graph_gradients(g, 1, &y, 1, &x, NULL, &gx), MF_EARG);
    assert_non_null(strstr(mf_err_msg(), "custom_gradient 'custom_gradient/identity': the "
                           "gradient function returned shape (2,) (float32) for input 1, "
                           "expected () (float32)"));
    mf_err_clear();
    mf_graph_drop_custom_gradients(g);
    assert_int_equal(mf_graph_gradients(g, 1, &y, 1, &x, NULL, &gx), MF_EARG);
    assert_non_null(strstr(mf_err_msg(), "its gradient function was released"));
    mf_tensor_release(y);
    mf_tensor_release(x);
    mf_graph_release(g);
    assert_int_equal(freed, 1);
}

static void test_foreign_variable_refused(void **state)
{
    (void)state;
    int freed = 0;
    MfGraph *g = mf_graph_new();
    MfTensor *x = NULL, *xw = NULL, *out = NULL;
    MfTensor *init = mf_tensor_scalar(MF_FLOAT32, 2);
    MfNode *var = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 0, NULL, "x", &x), MF_OK);
    assert_int_equal(mf_graph_variable(g, init, "w", true, &var), MF_OK);
    MfTensor *w = mf_graph_output(var, 0);
    int first = mf_graph_nnodes(g);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_int_equal(mf_binary(MF_OP_MUL, x, w, &xw), MF_OK);
    MfStatus st = mf_graph_custom_gradient(first, 1, &x, xw, &new_scale(1, &freed)->base, &out);
    mf_graph_pop_default();
    assert_int_equal(st, MF_EARG);
    assert_non_null(strstr(mf_err_msg(), "custom_gradient: f reads the trainable variable 'w', "
                           "which is not one of its inputs"));
    assert_null(out);
    assert_int_equal(freed, 1);   /* freed on failure */
    mf_tensor_release(xw);
    mf_tensor_release(w);
    mf_tensor_release(init);
    mf_tensor_release(x);
    mf_graph_release(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_gradient_is_the_functions),
        TEST(test_errors_name_custom_gradient),
        TEST(test_foreign_variable_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
