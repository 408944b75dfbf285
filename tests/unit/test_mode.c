/* test_mode.c — eager or graph, decided in one place (mode/variables.c,
 * mode/train.c) and the GradientTape window on a graph being built
 * (mode/tape_window.c): Variables, assigns, reads and constants run now
 * with no graph and become nodes while one is built or given a symbolic
 * operand; apply_gradients and the global step follow the same rule; a
 * tape inside a graph gives symbolic gradients over the nodes built while
 * it recorded. Every test releases what it made. */
#include "testutil.h"

#include "core/variable.h"
#include "eager/eager.h"
#include "graph/graph.h"
#include "mode/mode.h"
#include "train/train.h"

static MfTensor *vec(double a, double b)
{
    return make_tensor(MF_FLOAT32, 1, (int64_t[]){2}, (double[]){a, b});
}

static MfTensor *run1(MfGraph *g, MfTensor *fetch, MfTensor *ph, MfTensor *feed)
{
    MfSession *s = mf_session_new(g);
    MfTensor *out = NULL;
    assert_int_equal(mf_session_run(s, 1, &fetch, 0, NULL, ph ? 1 : 0, &ph, &feed, NULL, &out,
                                    NULL), MF_OK);
    mf_session_free(s);
    return out;
}

static void test_eager_without_a_graph(void **state)
{
    (void)state;
    assert_null(mf_mode_graph());
    MfTensor *init = vec(1, 2), *one = vec(1, 1), *out = NULL;
    MfVariable *v;
    MfNode *node;
    MfVariable *d;
    assert_int_equal(mf_mode_variable(init, MF_FLOAT64, "d", true, &d, &node), MF_OK);
    assert_int_equal(d->value->dtype, MF_FLOAT64);   /* the dtype option: a cast */
    assert_values(d->value, (double[]){1, 2}, 2, 0);
    mf_variable_release(d);
    assert_int_equal(mf_mode_variable(init, -1, "w", true, &v, &node), MF_OK);
    assert_null(node);
    assert_non_null(v);
    assert_null(mf_mode_variable_node(v));
    assert_true(mf_mode_variable_here(v));
    assert_int_equal(mf_mode_assign(v, MF_ASSIGN_ADD, one, &out), MF_OK);
    assert_null(out);                                   /* done now */
    assert_values(v->value, (double[]){2, 3}, 2, 0);
    assert_int_equal(mf_mode_assign(v, MF_ASSIGN_SUB, one, &out), MF_OK);
    assert_int_equal(mf_mode_assign(v, MF_ASSIGN_SET, one, &out), MF_OK);
    assert_values(v->value, (double[]){1, 1}, 2, 0);
    assert_int_equal(mf_mode_read(v, &out), MF_OK);
    assert_ptr_equal(out, v->value);                    /* a snapshot, retained */
    mf_tensor_release(out);
    assert_int_equal(mf_mode_constant(init, "c", &out), MF_OK);
    assert_ptr_equal(out, init);
    mf_tensor_release(out);
    mf_variable_release(v);
    mf_tensor_release(init);
    mf_tensor_release(one);
    assert_int_equal(mf_variable_live_count(), 0);
}

static void test_nodes_while_a_graph_is_built(void **state)
{
    (void)state;
    MfTensor *init = vec(1, 2), *one = vec(1, 1), *c = NULL, *asg = NULL, *rd = NULL;
    MfVariable *eager = mf_variable_new(init, "acc", true), *v;
    MfGraph *g = mf_graph_new();
    MfNode *node;
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_ptr_equal(mf_mode_graph(), g);
    assert_false(mf_mode_variable_here(eager));         /* not this graph's */
    assert_int_equal(mf_mode_variable(init, -1, "w", true, &v, &node), MF_OK);
    assert_null(v);
    assert_string_equal(mf_node_op_name(node), "VariableV2");
    assert_string_equal(node->name, "w");
    assert_int_equal(mf_mode_variable(init, -1, "a:b", true, &v, &node), MF_EARG);
    assert_error_contains("Variable:");
    assert_int_equal(mf_mode_constant(one, "k", &c), MF_OK);
    assert_string_equal(mf_node_op_name(c->node), "Const");
    /* an eager variable is captured: its assign writes it when the graph runs */
    assert_int_equal(mf_mode_assign(eager, MF_ASSIGN_ADD, c, &asg), MF_OK);
    assert_string_equal(mf_node_op_name(asg->node), "AssignAdd");
    assert_int_equal(mf_mode_read(eager, &rd), MF_OK);
    assert_ptr_equal(rd->node, asg->node);              /* reads after it see it */
    mf_graph_pop_default();
    assert_null(mf_mode_graph());
    assert_values(eager->value, (double[]){1, 2}, 2, 0); /* nothing ran yet */
    MfTensor *res = run1(g, asg, NULL, NULL);
    assert_values(res, (double[]){2, 3}, 2, 0);
    assert_values(eager->value, (double[]){2, 3}, 2, 0);
    mf_tensor_release(res);
    mf_tensor_release(rd);
    mf_tensor_release(asg);
    mf_tensor_release(c);
    mf_graph_release(g);
    mf_variable_release(eager);
    mf_tensor_release(init);
    mf_tensor_release(one);
    assert_int_equal(mf_variable_live_count(), 0);
}

/* With no graph the default, a symbolic operand still decides: its graph. */
static void test_symbolic_operand_picks_its_graph(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    MfTensor *x = NULL, *asg = NULL, *init = vec(5, 6), *feed = vec(1, 2);
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 1, (int64_t[]){2}, "x", &x), MF_OK);
    assert_ptr_equal(mf_mode_graph_of(x), g);
    assert_null(mf_mode_graph_of(init));
    MfVariable *eager = mf_variable_new(init, "acc", true), *v;
    MfNode *node;
    assert_int_equal(mf_mode_variable(x, -1, "from_x", true, &v, &node), MF_OK);
    assert_null(v);
    assert_ptr_equal(node->graph, g);
    assert_int_equal(mf_mode_assign(eager, MF_ASSIGN_SET, x, &asg), MF_OK);
    assert_string_equal(mf_node_op_name(asg->node), "Assign");
    MfTensor *res = run1(g, asg, x, feed);
    assert_values(eager->value, (double[]){1, 2}, 2, 0);
    mf_tensor_release(res);
    /* a graph Variable handle assigns through its node, no default needed */
    MfVariable *h = mf_train_graph_handle(node);
    MfTensor *asg2 = NULL;
    assert_ptr_equal(mf_mode_variable_node(h), node);
    assert_int_equal(mf_mode_assign(h, MF_ASSIGN_ADD, init, &asg2), MF_OK);
    assert_ptr_equal(mf_tensor_graph(asg2), g);
    assert_int_equal(mf_mode_read(h, &res), MF_OK);
    assert_string_equal(mf_node_op_name(res->node), "ReadVariableOp");
    mf_tensor_release(res);
    mf_tensor_release(asg2);
    mf_variable_release(h);
    mf_tensor_release(asg);
    mf_tensor_release(x);
    mf_graph_release(g);
    mf_variable_release(eager);
    mf_tensor_release(init);
    mf_tensor_release(feed);
    assert_int_equal(mf_variable_live_count(), 0);
}

static void test_assign_needs_a_value(void **state)
{
    (void)state;
    MfVariable *v = mf_variable_new(NULL, "empty", true);
    MfTensor *one = vec(1, 1), *out = NULL;
    assert_int_equal(mf_mode_assign(v, MF_ASSIGN_SET, one, &out), MF_EARG);
    assert_error_contains("assign: variable 'empty' has no value yet");
    assert_int_equal(mf_mode_read(v, &out), MF_EARG);
    assert_error_contains("read_value: variable 'empty' has no value yet");
    assert_null(out);
    mf_variable_release(v);
    mf_tensor_release(one);
}

static void test_global_step_eager_and_graph(void **state)
{
    (void)state;
    MfVariable *a, *b, *gs;
    assert_null(mf_train_eager_global_step());
    assert_int_equal(mf_train_global_step(&a), MF_OK);
    assert_int_equal(mf_train_global_step(&b), MF_OK);
    assert_ptr_equal(a, b);                             /* one per process */
    assert_string_equal(a->name, "global_step");
    assert_false(a->trainable);
    assert_int_equal(a->value->dtype, MF_INT64);
    MfTensor *five = mf_tensor_scalar(MF_INT64, 5);
    assert_int_equal(mf_variable_assign_value(a, five), MF_OK);
    mf_variable_release(b);
    mf_train_global_step_forget();                      /* its owner closed it */
    assert_int_equal(mf_train_global_step(&b), MF_OK);
    assert_ptr_not_equal(a, b);
    assert_values(b->value, (double[]){0}, 1, 0);       /* a fresh one at 0 */
    assert_values(a->value, (double[]){5}, 1, 0);
    mf_variable_release(a);
    mf_variable_release(b);
    MfGraph *g = mf_graph_new();
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_int_equal(mf_train_global_step(&gs), MF_OK);
    assert_non_null(mf_mode_variable_node(gs));
    assert_string_equal(mf_mode_variable_node(gs)->name, "global_step");
    mf_graph_pop_default();
    mf_variable_release(gs);
    mf_graph_release(g);
    mf_train_global_step_forget();
    mf_tensor_release(five);
    assert_int_equal(mf_variable_live_count(), 0);
}

static void test_apply_gradients_where_it_belongs(void **state)
{
    (void)state;
    MfTensor *init = vec(1, 2), *grad = vec(10, 20);
    MfVariable *v = mf_variable_new(init, "w", true);
    MfOptConfig cfg = mf_opt_config_default(MF_OPT_SGD, 0.1);
    MfOptimizer *o = mf_optimizer_new(&cfg);
    MfGradVar pair = {grad, v, NULL};
    MfNode *op = NULL;
    assert_int_equal(mf_train_apply_gradients(o, 1, &pair, NULL, NULL, &op), MF_OK);
    assert_null(op);                                    /* eager: done */
    assert_values(v->value, (double[]){0, 0}, 2, 1e-6);
    MfGraph *g = mf_graph_new();
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_int_equal(mf_train_apply_gradients(o, 1, &pair, NULL, NULL, &op), MF_OK);
    mf_graph_pop_default();
    assert_non_null(op);                                /* traced: a train op */
    assert_ptr_equal(op->graph, g);
    assert_values(v->value, (double[]){0, 0}, 2, 1e-6);
    MfSession *s = mf_session_new(g);
    assert_int_equal(mf_session_run(s, 0, NULL, 1, &op, 0, NULL, NULL, NULL, NULL, NULL), MF_OK);
    mf_session_free(s);
    assert_values(v->value, (double[]){-1, -2}, 2, 1e-6);
    mf_graph_release(g);
    mf_optimizer_release(o);
    mf_variable_release(v);
    mf_tensor_release(init);
    mf_tensor_release(grad);
    assert_int_equal(mf_variable_live_count(), 0);
}

/* y = x * x built in 'g' with a tape made before it: dy/dx = 2x. */
static void test_tape_window_symbolic_gradient(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    MfTensor *x = NULL, *y = NULL, *y2 = NULL, *grad = NULL, *feed = vec(3, -1);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 1, (int64_t[]){2}, "x", &x), MF_OK);
    MfTape *t = mf_tape_new(false, true);
    MfTapeWindow w;
    mf_tape_window_open(&w);
    assert_ptr_equal(w.g, g);
    assert_int_equal(w.lo, mf_graph_nnodes(g));
    assert_int_equal(mf_binary(MF_OP_MUL, x, x, &y), MF_OK);
    mf_tape_window_stop(&w, t);
    assert_int_equal(w.hi, mf_graph_nnodes(g));
    assert_int_equal(mf_binary(MF_OP_ADD, y, y, &y2), MF_OK);  /* after the stop */
    mf_graph_pop_default();
    MfTapeSource src = {x, NULL};
    assert_int_equal(mf_tape_window_gradients(&w, t, 1, &y, 1, &src, NULL, false, &grad),
                     MF_OK);
    assert_non_null(grad->node);
    MfTensor *res = run1(g, grad, x, feed);
    assert_values(res, (double[]){6, -2}, 2, 0);
    mf_tensor_release(res);
    mf_tensor_release(grad);
    /* a non-persistent tape answers once */
    assert_int_equal(mf_tape_window_gradients(&w, t, 1, &y, 1, &src, NULL, false, &grad),
                     MF_EARG);
    assert_error_contains("a non-persistent GradientTape can only be used once");
    assert_null(grad);
    mf_tape_window_reset(&w, t);
    assert_false(w.asked);
    /* y2 was built after the stop: outside the window, unconnected (zeros asked) */
    assert_int_equal(mf_tape_window_gradients(&w, t, 1, &y2, 1, &src, NULL, true, &grad),
                     MF_OK);
    res = run1(g, grad, x, feed);
    assert_values(res, (double[]){0, 0}, 2, 0);
    mf_tensor_release(res);
    mf_tensor_release(grad);
    mf_tape_release(t);
    mf_tensor_release(y2);
    mf_tensor_release(y);
    mf_tensor_release(x);
    mf_tensor_release(feed);
    mf_graph_release(g);
}

/* Two symbolic targets: their gradients add up; concrete targets go to
 * the tape itself. */
static void test_tape_window_targets(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    MfTensor *x = NULL, *y[2] = {NULL, NULL}, *grad = NULL, *feed = vec(3, -1);
    MfTape *t = mf_tape_new(true, true);
    MfTapeWindow w;
    mf_tape_window_open(&w);                            /* before the graph: all of it */
    assert_null(w.g);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 1, (int64_t[]){2}, "x", &x), MF_OK);
    assert_int_equal(mf_binary(MF_OP_MUL, x, x, &y[0]), MF_OK);
    assert_int_equal(mf_binary(MF_OP_ADD, x, x, &y[1]), MF_OK);
    mf_graph_pop_default();
    MfTapeSource src = {x, NULL};
    assert_int_equal(mf_tape_window_gradients(&w, t, 2, y, 1, &src, NULL, false, &grad), MF_OK);
    MfTensor *res = run1(g, grad, x, feed);
    assert_values(res, (double[]){8, 0}, 2, 0);         /* 2x + 2 */
    mf_tensor_release(res);
    mf_tensor_release(grad);
    /* one output gradient goes with one target */
    assert_int_equal(mf_tape_window_gradients(&w, t, 2, y, 1, &src, feed, false, &grad),
                     MF_EARG);
    assert_null(grad);
    assert_error_contains("gradient: output_gradients goes with one target, got 2 targets");
    mf_err_clear();
    mf_tape_release(t);
    /* eager targets: the tape's own gradient */
    MfTensor *a = vec(3, -1), *b = NULL;
    t = mf_tape_new(false, true);
    mf_tape_window_open(&w);
    assert_int_equal(mf_tape_watch(t, a), MF_OK);
    assert_int_equal(mf_binary(MF_OP_MUL, a, a, &b), MF_OK);
    src.tensor = a;
    assert_int_equal(mf_tape_window_gradients(&w, t, 1, &b, 1, &src, NULL, false, &grad), MF_OK);
    assert_null(grad->node);
    assert_values(grad, (double[]){6, -2}, 2, 0);
    mf_tensor_release(grad);
    mf_tape_release(t);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(y[0]);
    mf_tensor_release(y[1]);
    mf_tensor_release(x);
    mf_tensor_release(feed);
    mf_graph_release(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_eager_without_a_graph),
        TEST(test_nodes_while_a_graph_is_built),
        TEST(test_symbolic_operand_picks_its_graph),
        TEST(test_assign_needs_a_value),
        TEST(test_global_step_eager_and_graph),
        TEST(test_apply_gradients_where_it_belongs),
        TEST(test_tape_window_symbolic_gradient),
        TEST(test_tape_window_targets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
