/* test_graph_var.c — graph variables from C (graph/variables.c, session.c,
 * trace.c): VariableV2 nodes and their initializers, values per session,
 * assign nodes, the collections, the uninitialised-variable error, eager
 * variables captured by reference with their assigns in program order, and
 * an MfTrace built and called twice. Every test releases what it made
 * (tensors and variables). */
#include "testutil.h"

#include "core/variable.h"
#include "graph/gradients.h"
#include "graph/graph.h"

static MfTensor *vec(double a, double b)
{
    return make_tensor(MF_FLOAT32, 1, (int64_t[]){2}, (double[]){a, b});
}

/* Runs one fetch in 's' and returns the value (owned). */
static MfTensor *run1(MfSession *s, MfTensor *fetch)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_session_run(s, 1, &fetch, 0, NULL, 0, NULL, NULL, NULL, &out, NULL),
                     MF_OK);
    return out;
}

static void run_op(MfSession *s, MfNode *op)
{
    assert_int_equal(mf_session_run(s, 0, NULL, 1, &op, 0, NULL, NULL, NULL, NULL, NULL), MF_OK);
}

static void expect_run(MfSession *s, MfTensor *fetch, double a, double b)
{
    MfTensor *v = run1(s, fetch);
    assert_values(v, (double[]){a, b}, 2, 0);
    mf_tensor_release(v);
}

static void test_variables_live_in_sessions(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    MfTensor *init_val = vec(1, 2), *one = vec(1, 1), *add = NULL, *read = NULL;
    MfNode *w, *init;
    assert_int_equal(mf_graph_variable(g, init_val, "w", true, &w), MF_OK);
    assert_int_equal(w->kind, MF_NODE_VARIABLE);
    assert_string_equal(mf_node_op_name(w), "VariableV2");
    assert_string_equal(mf_graph_node(g, w->ref)->name, "w/Assign");
    assert_int_equal(mf_graph_assign(w, MF_ASSIGN_ADD, one, &add), MF_OK);
    assert_string_equal(mf_node_op_name(add->node), "AssignAdd");
    assert_int_equal(mf_graph_variables_initializer(g, 0, NULL, NULL, &init), MF_OK);
    assert_string_equal(init->name, "init");
    MfTensor *wt = mf_graph_output(w, 0);
    MfSession *s1 = mf_session_new(g), *s2 = mf_session_new(g);

    MfTensor *out = NULL;
    assert_int_equal(mf_session_run(s1, 1, &wt, 0, NULL, 0, NULL, NULL, NULL, &out, NULL),
                     MF_EARG);
    assert_null(out);
    assert_error_contains("variable 'w' is not initialised in this session: run "
                          "mf.global_variables_initializer() first");

    run_op(s1, init);
    run_op(s2, init);
    expect_run(s1, add, 2, 3);
    expect_run(s1, add, 3, 4);
    expect_run(s1, wt, 3, 4);
    expect_run(s2, wt, 1, 2);

    /* a read node ordered after the assign by a control edge */
    assert_int_equal(mf_graph_read(w, &read), MF_OK);
    assert_int_equal(mf_graph_add_control(read->node, add->node), MF_OK);
    expect_run(s2, read, 2, 3);

    /* the store from C: read, set (checked) */
    assert_int_equal(mf_session_variable_value(s2, w, &out), MF_OK);
    assert_values(out, (double[]){2, 3}, 2, 0);
    mf_tensor_release(out);
    MfTensor *bad = make_tensor(MF_FLOAT32, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    assert_int_equal(mf_session_set_variable(s2, w, bad), MF_ESHAPE);
    assert_error_contains("variable 'w' has shape (2,) float32, got (3,) float32");
    assert_int_equal(mf_session_set_variable(s2, w, one), MF_OK);
    expect_run(s2, wt, 1, 1);

    /* without a session a variable has nowhere to live */
    assert_int_equal(mf_exec_run(g, 1, &wt, 0, NULL, 0, NULL, NULL, NULL, &out, NULL), MF_EARG);
    assert_error_contains("needs a session");

    mf_tensor_release(bad);
    mf_session_free(s1);
    mf_session_free(s2);
    mf_tensor_release(wt);
    mf_tensor_release(read);
    mf_tensor_release(add);
    mf_tensor_release(one);
    mf_tensor_release(init_val);
    mf_graph_release(g);
}

static void test_collections_and_checks(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    MfTensor *a = vec(0, 0), *three = make_tensor(MF_FLOAT32, 1, (int64_t[]){3},
                                                  (double[]){1, 2, 3}), *out = NULL;
    MfNode *v1, *v2, *v3, *list[4];
    assert_int_equal(mf_graph_variable(g, a, NULL, true, &v1), MF_OK);
    assert_int_equal(mf_graph_variable(g, a, NULL, false, &v2), MF_OK);
    assert_int_equal(mf_graph_variable(g, a, "b", true, &v3), MF_OK);
    assert_string_equal(v1->name, "Variable");
    assert_string_equal(v2->name, "Variable_1");
    assert_int_equal(mf_graph_variables(g, false, list, 4), 3);
    assert_int_equal(mf_graph_variables(g, true, list, 4), 2);
    assert_ptr_equal(list[0], v1);
    assert_ptr_equal(list[1], v3);
    assert_int_equal(mf_graph_assign(v3, MF_ASSIGN_SET, three, &out), MF_ESHAPE);
    assert_error_contains("assign: variable 'b' has shape (2,) float32, got (3,) float32");
    assert_null(out);
    MfNode *c = mf_graph_node(g, v1->ref - 1);   /* the initial value's Const */
    assert_int_equal(mf_graph_assign(c, MF_ASSIGN_SET, a, &out), MF_EARG);
    assert_error_contains("is not a variable");
    mf_tensor_release(a);
    mf_tensor_release(three);
    mf_graph_release(g);
}

static void test_captured_eager_variable(void **state)
{
    (void)state;
    MfTensor *init = vec(1, 2), *x = vec(10, 10);
    MfVariable *v = mf_variable_new(init, "acc", true);
    MfGraph *g = mf_graph_new();
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfTensor *before = NULL, *after = NULL, *assign = NULL, *cur;
    /* reading an eager variable while a graph is built gives its capture */
    cur = mf_variable_read(v);
    assert_non_null(cur->node);
    assert_string_equal(mf_node_op_name(cur->node), "ReadVariableOp");
    assert_int_equal(mf_binary(MF_OP_MUL, cur, x, &before), MF_OK);
    assert_int_equal(mf_graph_assign_captured(g, v, MF_ASSIGN_ADD, x, &assign), MF_OK);
    cur = mf_variable_read(v);                   /* now: the assign's output */
    assert_ptr_equal(cur->node, assign->node);
    assert_int_equal(mf_binary(MF_OP_MUL, cur, x, &after), MF_OK);
    mf_graph_pop_default();
    assert_int_equal(mf_graph_captured_assigns(g, NULL, 0), 1);

    MfSession *s = mf_session_new(g);
    MfTensor *fetch[2] = {before, after}, *res[2];
    MfNode *target = assign->node;
    assert_int_equal(mf_session_run(s, 2, fetch, 1, &target, 0, NULL, NULL, NULL, res, NULL),
                     MF_OK);
    assert_values(res[0], (double[]){10, 20}, 2, 0);
    assert_values(res[1], (double[]){110, 120}, 2, 0);
    assert_values(v->value, (double[]){11, 12}, 2, 0);   /* updated by reference */
    mf_tensor_release(res[0]);
    mf_tensor_release(res[1]);
    /* outside the graph the variable reads as its value again */
    assert_null(mf_variable_read(v)->node);

    mf_session_free(s);
    mf_tensor_release(before);
    mf_tensor_release(after);
    mf_tensor_release(assign);
    mf_graph_release(g);
    mf_variable_release(v);
    mf_tensor_release(init);
    mf_tensor_release(x);
    assert_int_equal(mf_variable_live_count(), 0);
}

static void test_trace_runs_graph_each_call(void **state)
{
    (void)state;
    MfTensor *init = vec(0, 0), *ex = vec(0, 0);
    MfVariable *v = mf_variable_new(init, "total", true);
    MfTrace *tr = mf_trace_new();
    assert_non_null(tr);
    assert_int_equal(mf_graph_push_default(mf_trace_graph(tr)), MF_OK);
    MfTensor *ph = NULL, *sum = NULL, *assign = NULL;
    assert_int_equal(mf_trace_add_arg(tr, ex, "x", &ph), MF_OK);
    assert_int_equal(mf_graph_assign_captured(mf_trace_graph(tr), v, MF_ASSIGN_ADD, ph,
                                              &assign), MF_OK);
    assert_int_equal(mf_binary(MF_OP_ADD, mf_variable_read(v), ph, &sum), MF_OK);
    assert_int_equal(mf_trace_finish(tr, 1, &sum), MF_OK);
    mf_graph_pop_default();
    assert_int_equal(mf_trace_nresults(tr), 1);
    for (int call = 1; call <= 2; call++) {
        MfTensor *arg = vec(call, 1), *res = NULL;
        assert_int_equal(mf_trace_call(tr, 1, &arg, &res), MF_OK);
        /* call 1: total = (1,1), result (2,2); call 2: total = (3,2), result (5,3) */
        assert_values(res, call == 1 ? (double[]){2, 2} : (double[]){5, 3}, 2, 0);
        mf_tensor_release(res);
        mf_tensor_release(arg);
    }
    MfTensor *res = NULL;
    assert_int_equal(mf_trace_call(tr, 0, NULL, &res), MF_EARG);
    assert_error_contains("takes 1 tensor argument, got 0");
    assert_values(v->value, (double[]){3, 2}, 2, 0);
    mf_tensor_release(ph);
    mf_tensor_release(sum);
    mf_tensor_release(assign);
    mf_trace_free(tr);
    mf_variable_release(v);
    mf_tensor_release(init);
    mf_tensor_release(ex);
    assert_int_equal(mf_variable_live_count(), 0);
}

/* v:initialized_value(): w's initial value reads v; the initializers run
 * in either order; a read's gradient reaches the variable. */
static void test_initialized_value_and_read_gradient(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    MfTensor *v0 = vec(1, 2), *iv = NULL, *twice = NULL, *two = vec(2, 2), *rd = NULL;
    MfTensor *sq = NULL, *grad = NULL;
    MfNode *v, *w, *init;
    assert_int_equal(mf_graph_variable(g, v0, "v", true, &v), MF_OK);
    assert_int_equal(mf_graph_initialized_value(v, &iv), MF_OK);
    assert_string_equal(((MfNode *)iv->node)->name, "v/initialized_value");
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_int_equal(mf_binary(MF_OP_MUL, iv, two, &twice), MF_OK);
    assert_int_equal(mf_graph_variable(g, twice, "w", true, &w), MF_OK);
    /* w's initializer first: v's initial value is used */
    MfNode *order[2] = {w, v};
    assert_int_equal(mf_graph_variables_initializer(g, 2, order, NULL, &init), MF_OK);
    assert_int_equal(mf_graph_read(v, &rd), MF_OK);
    assert_int_equal(mf_binary(MF_OP_MUL, rd, rd, &sq), MF_OK);
    mf_graph_pop_default();
    MfTensor *vt = mf_graph_output(v, 0), *wt = mf_graph_output(w, 0);
    assert_int_equal(mf_graph_gradients(g, 1, &sq, 1, &vt, NULL, &grad), MF_OK);
    MfSession *s = mf_session_new(g);
    run_op(s, init);
    expect_run(s, wt, 2, 4);
    expect_run(s, vt, 1, 2);
    expect_run(s, grad, 2, 4);    /* d(v*v)/dv through the read */
    mf_session_free(s);
    mf_tensor_release(vt);
    mf_tensor_release(wt);
    mf_tensor_release(grad);
    mf_tensor_release(sq);
    mf_tensor_release(rd);
    mf_tensor_release(twice);
    mf_tensor_release(two);
    mf_tensor_release(iv);
    mf_tensor_release(v0);
    mf_graph_release(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_variables_live_in_sessions),
        TEST(test_collections_and_checks),
        TEST(test_captured_eager_variable),
        TEST(test_trace_runs_graph_each_call),
        TEST(test_initialized_value_and_read_gradient),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
