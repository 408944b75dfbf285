/* test_session_fetch.c — what the graph and session faces ask the engine: a
 * fetch given by name (an operation without outputs runs for its effect,
 * any other name is a tensor, unknown names fail naming the caller), a
 * schedule printed as a table (fed rows first, aligned columns, the ready
 * queue joined), the default graph a building function needs, the names
 * of a node's data inputs, a fed value's conversion, and a whole sess:run
 * request (fetches and feeds by tensor or name, results, schedule rows). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "testutil.h"

static void test_fetch_by_name(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    assert_non_null(g);
    MfTensor *x, *t;
    MfNode *op, *init;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 0, NULL, "x", &x), MF_OK);
    assert_int_equal(mf_graph_group(g, 1, (MfNode *const[]){x->node}, "init", &init), MF_OK);

    /* a node without outputs: the operation itself */
    assert_int_equal(mf_session_fetch_name(g, "init", "run", &t, &op), MF_OK);
    assert_ptr_equal(op, init);
    assert_null(t);

    /* a node with outputs: "x" is "x:0" */
    assert_int_equal(mf_session_fetch_name(g, "x", "run", &t, &op), MF_OK);
    assert_null(op);
    assert_ptr_equal(t->node, x->node);
    mf_tensor_release(t);
    assert_int_equal(mf_session_fetch_name(g, "x:0", "run", &t, &op), MF_OK);
    assert_ptr_equal(t->node, x->node);
    mf_tensor_release(t);

    /* "init:0" asks for an output the operation does not have */
    assert_int_equal(mf_session_fetch_name(g, "init:0", "run", &t, &op), MF_EARG);
    assert_null(t);
    assert_null(op);
    assert_non_null(strstr(mf_err_msg(), "run: no tensor 'init:0'"));
    mf_err_clear();
    assert_int_equal(mf_session_fetch_name(g, "nope", "fetch", &t, &op), MF_EARG);
    assert_non_null(strstr(mf_err_msg(), "fetch: no tensor 'nope'"));
    mf_err_clear();

    mf_tensor_release(x);
    mf_graph_release(g);
}

/* The faces' building functions need a default graph and say how to make
 * one; g:nodes() names data inputs "node:index". */
static void test_default_and_input_names(void **state)
{
    (void)state;
    assert_null(mf_graph_default_for("placeholder"));
    assert_non_null(strstr(mf_err_msg(), "placeholder: no graph is being built; call it "
                                         "inside g:as_default("));
    mf_err_clear();
    assert_null(mf_graph_given_or_default(NULL, "global_variables"));
    assert_non_null(strstr(mf_err_msg(), "global_variables: no graph is being built; call it "
                                         "inside g:as_default(function() ... end), or pass "
                                         "the graph: global_variables(g)"));
    mf_err_clear();
    MfGraph *g = mf_graph_new();
    assert_non_null(g);
    assert_ptr_equal(mf_graph_given_or_default(g, "global_variables"), g);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_ptr_equal(mf_graph_default_for("group"), g);
    assert_ptr_equal(mf_graph_given_or_default(NULL, "global_variables"), g);
    MfTensor *x, *y, *sum;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 0, NULL, "x", &x), MF_OK);
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 0, NULL, "y", &y), MF_OK);
    assert_int_equal(mf_binary(MF_OP_ADD, y, x, &sum), MF_OK);
    char name[MF_INPUT_NAME_CAP];
    const MfNode *add = sum->node;
    assert_string_equal(mf_node_input_name(add, 0, name, sizeof name), "y:0");
    assert_string_equal(mf_node_input_name(add, 1, name, sizeof name), "x:0");
    mf_graph_pop_default();
    mf_tensor_release(sum);
    mf_tensor_release(x);
    mf_tensor_release(y);
    mf_graph_release(g);
}

/* Data fed to a placeholder takes its dtype; a tensor is fed as it is. */
static void test_feed_value(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    assert_non_null(g);
    MfTensor *x, *out;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 1, (int64_t[]){2}, "x", &x), MF_OK);
    const int64_t data[2] = {3, -4};
    MfTensor *v = mf_tensor_from_data(MF_INT64, 1, (int64_t[]){2}, data);
    assert_non_null(v);
    assert_int_equal(mf_session_feed_value(x, v, true, &out), MF_OK);
    assert_int_equal(out->dtype, MF_FLOAT32);
    assert_true(mf_tensor_get(out, 0) == 3.0 && mf_tensor_get(out, 1) == -4.0);
    mf_tensor_release(out);
    assert_int_equal(mf_session_feed_value(x, v, false, &out), MF_OK);
    assert_ptr_equal(out, v);   /* the executor says the dtype is wrong */
    mf_tensor_release(out);
    MfTensor *f = mf_tensor_zeros(MF_FLOAT32, 1, (int64_t[]){2});
    assert_int_equal(mf_session_feed_value(x, f, true, &out), MF_OK);
    assert_ptr_equal(out, f);
    mf_tensor_release(out);
    mf_tensor_release(f);
    mf_tensor_release(v);
    mf_tensor_release(x);
    mf_graph_release(g);
}

/* The text's line 'i' (0-based), copied into 'buf'. */
static const char *line_of(const char *text, int i, char *buf, size_t cap)
{
    for (; i > 0 && text; i--)
        text = strchr(text, '\n') ? strchr(text, '\n') + 1 : NULL;
    assert_non_null(text);
    size_t n = strcspn(text, "\n");
    assert_true(n < cap);
    memcpy(buf, text, n);
    buf[n] = '\0';
    return buf;
}

static void test_schedule_text(void **state)
{
    (void)state;
    const char *ready2[] = {"add", "multiply"};
    MfSchedRow steps[] = {
        {"Const", "Const", 0, 0, NULL},
        {"Const_1", "Const", 0, 2, ready2},
        {"a_rather_long_scope_name/relu_of_something", "Relu", 1, 0, NULL},
        {NULL, NULL, 2, 0, NULL},
    };
    MfSchedRow fed[] = {{"x", "Placeholder", 0, 0, NULL}};
    MfStrBuf b = {0};
    assert_int_equal(mf_schedule_text(steps, 4, fed, 1, &b), MF_OK);
    char l[512];
    /* the name column is as wide as the longest name (42 > 22) */
    const char *name = "a_rather_long_scope_name/relu_of_something";
    int w = (int)strlen(name);
    char want[512];
    snprintf(want, sizeof want, "step  %-*s  %-16s  indegree  ready queue after it ran", w,
             "node", "op");
    assert_string_equal(line_of(b.data, 0, l, sizeof l), want);
    snprintf(want, sizeof want, "   -  %-*s  %-16s  fed, not run (a value given to run: not "
             "counted)", w, "x", "Placeholder");
    assert_string_equal(line_of(b.data, 1, l, sizeof l), want);
    snprintf(want, sizeof want, "   2  %-*s  %-16s         0  add, multiply", w, "Const_1",
             "Const");
    assert_string_equal(line_of(b.data, 3, l, sizeof l), want);
    snprintf(want, sizeof want, "   4  %-*s  %-16s         2  ", w, "?", "?");
    assert_string_equal(line_of(b.data, 5, l, sizeof l), want);
    mf_strbuf_free(&b);

    /* no steps, no fed rows: the header at its minimum widths */
    assert_int_equal(mf_schedule_text(NULL, 0, NULL, 0, &b), MF_OK);
    snprintf(want, sizeof want, "step  %-22s  %-16s  indegree  ready queue after it ran",
             "node", "op");
    assert_string_equal(b.data, want);
    mf_strbuf_free(&b);
}

/* One sess:run as a request: a tensor fetched as a tensor and by name, an
 * operation, a feed by tensor and one by name (plain data cast to the key's
 * dtype), the results in fetch order and the schedule's rows; then the
 * refused keys, and a key left without a value freed with the request. */
static void test_run_request(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    MfTensor *x, *y, *sum = NULL;
    MfNode *init;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 0, NULL, "x", &x), MF_OK);
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 0, NULL, "y", &y), MF_OK);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_int_equal(mf_binary(MF_OP_ADD, x, y, &sum), MF_OK);
    mf_graph_pop_default();
    assert_int_equal(mf_graph_group(g, 1, (MfNode *const[]){sum->node}, "init", &init), MF_OK);
    MfSession *s = mf_session_new(g);
    MfRunRequest *r = mf_run_request_new(s);
    const MfTensor *key;
    assert_int_equal(mf_run_request_fetch(r, sum), MF_OK);
    assert_int_equal(mf_run_request_fetch_name(r, "init"), MF_OK);
    assert_int_equal(mf_run_request_fetch_name(r, "x:0"), MF_OK);
    assert_int_equal(mf_run_request_feed_key(r, x, NULL, &key), MF_OK);
    assert_ptr_equal(key, x);
    MfTensor *two = mf_tensor_scalar(MF_FLOAT32, 2), *three = mf_tensor_scalar(MF_INT64, 3);
    assert_int_equal(mf_run_request_feed_value(r, two, false), MF_OK);
    assert_int_equal(mf_run_request_feed_key(r, NULL, "y", &key), MF_OK);
    assert_ptr_equal(key->node, y->node);
    assert_int_equal(mf_run_request_feed_value(r, three, true), MF_OK);
    assert_int_equal(mf_run_request_run(r, true), MF_OK);
    assert_int_equal(mf_run_request_nfetch(r), 3);
    MfTensor *v = mf_run_request_result(r, 0);
    assert_true(mf_tensor_get(v, 0) == 5.0);
    mf_tensor_release(v);
    assert_null(mf_run_request_result(r, 1));   /* an operation has no value */
    v = mf_run_request_result(r, 2);
    assert_true(mf_tensor_get(v, 0) == 2.0);
    mf_tensor_release(v);
    const MfSchedRow *steps, *fed;
    int nfed, nsteps = mf_run_request_schedule(r, &steps, &fed, &nfed);
    assert_int_equal(nsteps, 2);
    assert_string_equal(steps[0].name, "add");
    assert_string_equal(steps[0].op, "AddV2");
    assert_int_equal(steps[1].indegree, 1);
    assert_string_equal(steps[1].name, "init");
    assert_int_equal(nfed, 2);
    assert_string_equal(fed[1].name, "y");
    assert_string_equal(fed[1].op, "Placeholder");
    mf_run_request_free(r);

    r = mf_run_request_new(s);
    assert_int_equal(mf_run_request_feed_key(r, two, NULL, &key), MF_EARG);
    assert_error_contains("run: feed keys must be graph tensors (placeholders) or tensor names, "
                          "got a tensor with values");
    assert_int_equal(mf_run_request_feed_key(r, NULL, "nope", &key), MF_EARG);
    assert_error_contains("run: no tensor 'nope'");
    assert_int_equal(mf_run_request_feed_key(r, x, NULL, &key), MF_OK);
    assert_int_equal(mf_run_request_run(r, false), MF_OK);   /* nothing fetched, nothing fed */
    assert_int_equal(mf_run_request_schedule(r, &steps, &fed, &nfed), 0);
    mf_run_request_free(r);
    MfTensor *all[] = {x, y, sum, two, three};
    for (int i = 0; i < 5; i++)
        mf_tensor_release(all[i]);
    mf_session_free(s);
    mf_graph_release(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fetch_by_name, setup_engine, teardown_engine),
        cmocka_unit_test_setup_teardown(test_schedule_text, setup_engine, teardown_engine),
        cmocka_unit_test_setup_teardown(test_default_and_input_names, setup_engine,
                                        teardown_engine),
        cmocka_unit_test_setup_teardown(test_feed_value, setup_engine, teardown_engine),
        cmocka_unit_test_setup_teardown(test_run_request, setup_engine, teardown_engine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
