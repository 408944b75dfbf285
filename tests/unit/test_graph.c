/* test_graph.c — graph mode: building (names, scopes, constants,
 * placeholders, infer with unknown dims), the in-degree executor (Kahn-order
 * properties on random DAGs, pruning, feeds, schedules, cycles, Ctrl-C,
 * releasing intermediates) and its error messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "graph/graph.h"
#include "testutil.h"

static MfGraph *enter(void)
{
    MfGraph *g = mf_graph_new();
    assert_non_null(g);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    return g;
}

static void leave(MfGraph *g)
{
    mf_graph_pop_default();
    mf_graph_release(g);
}

static MfTensor *sym_add(MfTensor *a, MfTensor *b)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_binary(MF_OP_ADD, a, b, &out), MF_OK);
    assert_non_null(out->node);
    return out;
}

static const char *node_name(const MfTensor *t)
{
    return ((const MfNode *)t->node)->name;
}

static MfTensor *run1(MfGraph *g, MfTensor *fetch, int nfeed, MfTensor *const *fed,
                      MfTensor *const *feeds)
{
    MfTensor *out = NULL;
    MfStatus st = mf_exec_run(g, 1, &fetch, 0, NULL, nfeed, fed, feeds, NULL, &out, NULL);
    if (st != MF_OK)
        print_error("run failed: %s\n", mf_err_msg());
    assert_int_equal(st, MF_OK);
    return out;
}

static void test_names_constants_placeholders(void **state)
{
    (void)state;
    MfGraph *g = enter();
    MfTensor *x, *one = mf_tensor_scalar(MF_FLOAT32, 1);
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 2, (int64_t[]){-1, 3}, "x", &x), MF_OK);
    MfTensor *a = sym_add(x, one);
    MfTensor *b = sym_add(a, one);
    int mark;
    assert_int_equal(mf_graph_push_scope(g, "layer1", &mark), MF_OK);
    MfTensor *c = sym_add(b, b);
    mf_graph_pop_scope(g, mark);
    assert_string_equal(node_name(x), "x");
    assert_string_equal(node_name(a), "add");
    assert_string_equal(node_name(b), "add_1");
    assert_string_equal(node_name(c), "layer1/add");
    assert_string_equal(mf_graph_node(g, 1)->name, "Const");
    assert_int_equal(mf_graph_nnodes(g), 5); /* 'one' is one Const node */
    assert_int_equal(c->shape[0], -1);
    assert_int_equal(c->shape[1], 3);
    char buf[64];
    assert_string_equal(mf_graph_tensor_name(c, buf, sizeof buf), "layer1/add:0");
    MfTensor *found = mf_graph_get_tensor(g, "add_1:0", "get_tensor");
    assert_ptr_equal(found->node, b->node);
    assert_null(mf_graph_get_tensor(g, "nope:0", "get_tensor"));
    assert_error_contains("get_tensor: no tensor 'nope:0' in the graph");
    MfTensor *v = make_tensor(MF_FLOAT32, 2, (int64_t[]){1, 3}, (double[]){1, 2, 3});
    MfTensor *r = run1(g, c, 1, &x, &v);
    assert_values(r, (double[]){6, 8, 10}, 3, 0);
    MfTensor *all[] = {one, x, a, b, c, found, v, r};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        mf_tensor_release(all[i]);
    leave(g);
}

/* A graph outlives its default stack while a symbolic tensor holds it. */
static void test_tensors_keep_graph_alive(void **state)
{
    (void)state;
    MfGraph *g = enter();
    MfTensor *two = mf_tensor_scalar(MF_FLOAT64, 2), *k, *y = NULL;
    assert_int_equal(mf_graph_constant(g, two, "two", &k), MF_OK);
    assert_int_equal(mf_unary(MF_OP_SQUARE, k, &y), MF_OK);
    leave(g);
    MfTensor *r = run1(mf_tensor_graph(y), y, 0, NULL, NULL);
    assert_values(r, (double[]){4}, 1, 0);
    MfTensor *all[] = {two, k, y, r};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        mf_tensor_release(all[i]);
}

/* ---- Kahn-order properties on random DAGs --------------------------------- */

typedef struct Order {
    int pos[256];
    int count[256];
    int n;
} Order;

static void on_node(void *ctx, const MfNode *n)
{
    Order *o = ctx;
    o->pos[n->index] = o->n++;
    o->count[n->index]++;
}

static void mark_ancestors(MfGraph *g, int i, bool *anc)
{
    if (anc[i])
        return;
    anc[i] = true;
    const MfNode *n = mf_graph_node(g, i);
    for (int k = 0; k < n->ninputs; k++)
        mark_ancestors(g, n->inputs[k].node, anc);
    for (int k = 0; k < n->ncontrol; k++)
        mark_ancestors(g, n->control[k], anc);
}

static void check_order(MfGraph *g, const Order *o, const bool *anc)
{
    for (int i = 0; i < mf_graph_nnodes(g); i++) {
        const MfNode *n = mf_graph_node(g, i);
        assert_int_equal(o->count[i], anc[i] ? 1 : 0);
        if (!anc[i])
            continue;
        for (int k = 0; k < n->ninputs; k++)
            assert_true(o->pos[n->inputs[k].node] < o->pos[i]);
        for (int k = 0; k < n->ncontrol; k++)
            assert_true(o->pos[n->control[k]] < o->pos[i]);
    }
}

/* Builds a random DAG of adds over 'nt' tensors (some with control inputs
 * on earlier nodes), fetches two of them and checks the run order. */
static void random_dag_once(unsigned seed)
{
    srand(seed);
    MfGraph *g = enter();
    MfTensor *t[60];
    int nt = 30 + rand() % 30;
    t[0] = mf_tensor_scalar(MF_FLOAT64, 1);
    t[1] = mf_tensor_scalar(MF_FLOAT64, 2);
    for (int i = 2; i < nt; i++) {
        t[i] = sym_add(t[rand() % i], t[rand() % i]);
        if (rand() % 4 == 0 && i > 2) {
            int j = 2 + rand() % (i - 2);
            assert_int_equal(mf_graph_add_control(t[i]->node, t[j]->node), MF_OK);
        }
    }
    MfTensor *fetch[2] = {t[nt - 1], t[2 + rand() % (nt - 2)]};
    bool anc[256] = {false};
    for (int f = 0; f < 2; f++)
        mark_ancestors(g, ((MfNode *)fetch[f]->node)->index, anc);
    Order o;
    memset(&o, 0, sizeof o);
    MfExecOptions opt = {false, on_node, &o};
    MfTensor *res[2];
    assert_int_equal(mf_exec_run(g, 2, fetch, 0, NULL, 0, NULL, NULL, &opt, res, NULL), MF_OK);
    check_order(g, &o, anc);
    mf_tensor_release(res[0]);
    mf_tensor_release(res[1]);
    for (int i = 0; i < nt; i++)
        mf_tensor_release(t[i]);
    leave(g);
}

static void test_random_dags_kahn_order(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 60; seed++)
        random_dag_once(seed);
}

/* Graph results equal the same ops run eagerly. */
static void test_graph_equals_eager(void **state)
{
    (void)state;
    MfTensor *a = make_tensor(MF_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){1, -2, 3, -4, 5, 6});
    MfTensor *b = make_tensor(MF_FLOAT64, 2, (int64_t[]){3, 2}, (double[]){1, 2, 3, 4, 5, 6});
    MfTensor *e1 = NULL, *e2 = NULL, *g1 = NULL, *g2 = NULL;
    MfTensor *ab[2] = {a, b};
    assert_int_equal(mf_op1(MF_OP_MATMUL, 2, ab, NULL, &e1), MF_OK);
    assert_int_equal(mf_unary(MF_OP_RELU, e1, &e2), MF_OK);
    MfGraph *g = enter();
    assert_int_equal(mf_op1(MF_OP_MATMUL, 2, ab, NULL, &g1), MF_OK);
    assert_int_equal(mf_unary(MF_OP_RELU, g1, &g2), MF_OK);
    MfTensor *r = run1(g, g2, 0, NULL, NULL);
    assert_int_equal(r->rank, 2);
    double want[4];
    for (int i = 0; i < 4; i++)
        want[i] = mf_tensor_get(e2, i);
    assert_values(r, want, 4, 0);
    MfTensor *all[] = {a, b, e1, e2, g1, g2, r};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        mf_tensor_release(all[i]);
    leave(g);
}

/* ---- schedules, pruning, feeds of inner tensors -------------------------- */

static void test_schedule_and_pruning(void **state)
{
    (void)state;
    MfGraph *g = enter();
    MfTensor *x, *y;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 0, NULL, "x", &x), MF_OK);
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 0, NULL, "y", &y), MF_OK);
    MfTensor *s = sym_add(x, x);        /* add */
    MfTensor *unused = sym_add(y, y);   /* add_1: never needed */
    MfTensor *out = sym_add(s, x);      /* add_2 */
    MfTensor *v = mf_tensor_scalar(MF_FLOAT32, 3), *res;
    MfSchedule *sched;
    MfExecOptions opt = {true, NULL, NULL};
    assert_int_equal(mf_exec_run(g, 1, &out, 0, NULL, 1, &x, &v, &opt, &res, &sched), MF_OK);
    assert_values(res, (double[]){9}, 1, 0);
    /* x is fed: only add and add_2 run; add_2 waits on add (in-degree 1:
     * its edge from x is fed away). */
    assert_int_equal(sched->nsteps, 2);
    assert_string_equal(mf_graph_node(g, sched->steps[0].node)->name, "add");
    assert_int_equal(sched->steps[0].indegree, 0);
    assert_int_equal(sched->steps[0].nready, 1);
    assert_int_equal(sched->steps[0].ready[0], ((MfNode *)out->node)->index);
    assert_int_equal(sched->steps[1].indegree, 1);
    mf_schedule_free(sched);
    mf_tensor_release(res);
    /* Feeding an inner tensor replaces it: its producers do not run. */
    MfTensor *ten = mf_tensor_scalar(MF_FLOAT32, 10);
    MfTensor *fed[2] = {s, x}, *vals[2] = {ten, v};
    assert_int_equal(mf_exec_run(g, 1, &out, 0, NULL, 2, fed, vals, NULL, &res, NULL), MF_OK);
    assert_values(res, (double[]){13}, 1, 0);
    MfTensor *all[] = {x, y, s, unused, out, v, res, ten};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        mf_tensor_release(all[i]);
    leave(g);
}

/* ---- memory: intermediates die after their last consumer ----------------- */

static int64_t peak_live;

static void track_live(void *ctx, const MfNode *n)
{
    (void)ctx;
    (void)n;
    if (mf_tensor_live_count() > peak_live)
        peak_live = mf_tensor_live_count();
}

static void test_intermediates_released(void **state)
{
    (void)state;
    MfGraph *g = enter();
    MfTensor *x, *t[101];
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 1, (int64_t[]){1000}, "x", &x), MF_OK);
    t[0] = x;
    mf_tensor_retain(x);
    for (int i = 1; i <= 100; i++)
        t[i] = sym_add(t[i - 1], x);
    MfTensor *v = mf_tensor_zeros(MF_FLOAT32, 1, (int64_t[]){1000}), *res;
    int64_t before = mf_tensor_live_count();
    peak_live = 0;
    MfExecOptions opt = {false, track_live, NULL};
    assert_int_equal(mf_exec_run(g, 1, &t[100], 0, NULL, 1, &x, &v, &opt, &res, NULL), MF_OK);
    /* At most the value being consumed and the one just made. */
    assert_true(peak_live - before <= 2);
    assert_int_equal(mf_tensor_live_count(), before + 1);
    assert_int_equal(mf_tensor_numel(res), 1000);
    assert_true(mf_tensor_get(res, 999) == 0);
    mf_tensor_release(res);
    mf_tensor_release(v);
    mf_tensor_release(x);
    for (int i = 0; i <= 100; i++)
        mf_tensor_release(t[i]);
    leave(g);
}

/* ---- errors ------------------------------------------------------------------ */

static void test_cycle_named(void **state)
{
    (void)state;
    MfGraph *g = enter();
    MfTensor *one = mf_tensor_scalar(MF_FLOAT32, 1);
    MfTensor *a = sym_add(one, one), *b = sym_add(a, one), *c = sym_add(b, one), *res;
    assert_int_equal(mf_graph_add_control(a->node, c->node), MF_OK);
    assert_int_equal(mf_exec_run(g, 1, &c, 0, NULL, 0, NULL, NULL, NULL, &res, NULL), MF_EARG);
    assert_null(res);
    assert_error_contains("cycle (through control dependencies): add -> add_1 -> add_2 -> add;"
                          " 3 of 4 needed nodes could not run");
    MfTensor *all[] = {one, a, b, c};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        mf_tensor_release(all[i]);
    leave(g);
}

static void test_feed_errors(void **state)
{
    (void)state;
    MfGraph *g = enter();
    MfTensor *x, *res;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 2, (int64_t[]){-1, 3}, "x", &x), MF_OK);
    MfTensor *y = sym_add(x, x);
    assert_int_equal(mf_exec_run(g, 1, &y, 0, NULL, 0, NULL, NULL, NULL, &res, NULL), MF_EARG);
    assert_error_contains("placeholder 'x' (dtype float32, shape (?,3)) must be fed");
    MfTensor *bad = mf_tensor_zeros(MF_FLOAT32, 2, (int64_t[]){2, 4});
    assert_int_equal(mf_exec_run(g, 1, &y, 0, NULL, 1, &x, &bad, NULL, &res, NULL), MF_ESHAPE);
    assert_error_contains("the value fed to placeholder 'x:0' has shape (2,4), expected (?,3)");
    MfTensor *ints = mf_tensor_zeros(MF_INT32, 2, (int64_t[]){2, 3});
    assert_int_equal(mf_exec_run(g, 1, &y, 0, NULL, 1, &x, &ints, NULL, &res, NULL), MF_EDTYPE);
    assert_error_contains("has dtype int32, expected float32");
    assert_int_equal(mf_exec_run(g, 1, &bad, 0, NULL, 0, NULL, NULL, NULL, &res, NULL), MF_EARG);
    assert_error_contains("run: fetch 1 is not a graph tensor");
    MfGraph *h = mf_graph_new();
    MfTensor *z;
    assert_int_equal(mf_graph_placeholder(h, MF_FLOAT32, 0, NULL, "z", &z), MF_OK);
    assert_int_equal(mf_exec_run(g, 1, &z, 0, NULL, 0, NULL, NULL, NULL, &res, NULL), MF_EARG);
    assert_error_contains("run: fetch 1 ('z:0') is a tensor of another graph");
    MfTensor *w = NULL;
    assert_int_equal(mf_binary(MF_OP_ADD, x, z, &w), MF_EARG);
    assert_error_contains("add: input 2 ('z') is a tensor of another graph");
    MfTensor *all[] = {x, y, bad, ints, z};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        mf_tensor_release(all[i]);
    mf_graph_release(h);
    leave(g);
}

static void test_op_error_names_node(void **state)
{
    (void)state;
    MfGraph *g = enter();
    MfTensor *x, *res, *m = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 2, (int64_t[]){-1, -1}, "x", &x), MF_OK);
    MfTensor *xx[2] = {x, x};
    assert_int_equal(mf_op1(MF_OP_MATMUL, 2, xx, NULL, &m), MF_OK);
    MfTensor *v = mf_tensor_zeros(MF_FLOAT32, 2, (int64_t[]){2, 3});
    assert_int_equal(mf_exec_run(g, 1, &m, 0, NULL, 1, &x, &v, NULL, &res, NULL), MF_ESHAPE);
    assert_error_contains("run: node 'matmul' (MatMul): matmul:");
    mf_tensor_release(x);
    mf_tensor_release(m);
    mf_tensor_release(v);
    leave(g);
}

static void interrupt_after_first(void *ctx, const MfNode *n)
{
    (void)ctx;
    (void)n;
    mf_interrupted = 1;
}

static void test_interrupt_stops_cleanly(void **state)
{
    (void)state;
    MfGraph *g = enter();
    MfTensor *one = mf_tensor_scalar(MF_FLOAT32, 1);
    MfTensor *a = sym_add(one, one), *b = sym_add(a, one), *res;
    MfExecOptions opt = {false, interrupt_after_first, NULL};
    assert_int_equal(mf_exec_run(g, 1, &b, 0, NULL, 0, NULL, NULL, &opt, &res, NULL), MF_EINTR);
    mf_interrupted = 0;
    assert_error_contains("interrupted (Ctrl-C) before node");
    MfTensor *all[] = {one, a, b};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        mf_tensor_release(all[i]);
    leave(g);
}

static void test_session_and_group(void **state)
{
    (void)state;
    MfGraph *g = enter();
    MfTensor *one = mf_tensor_scalar(MF_FLOAT32, 1);
    MfTensor *a = sym_add(one, one), *res;
    MfNode *grp, *an = a->node;
    assert_int_equal(mf_graph_group(g, 1, &an, NULL, &grp), MF_OK);
    assert_string_equal(mf_node_op_name(grp), "NoOp");
    MfSession *s = mf_session_new(g);
    assert_int_equal(mf_session_run(s, 0, NULL, 1, &grp, 0, NULL, NULL, NULL, NULL, NULL), MF_OK);
    assert_int_equal(mf_session_run(s, 1, &a, 0, NULL, 0, NULL, NULL, NULL, &res, NULL), MF_OK);
    assert_values(res, (double[]){2}, 1, 0);
    mf_tensor_release(res);
    mf_session_close(s);
    assert_int_equal(mf_session_run(s, 1, &a, 0, NULL, 0, NULL, NULL, NULL, &res, NULL), MF_EARG);
    assert_error_contains("the session is closed");
    mf_session_free(s);
    mf_tensor_release(one);
    mf_tensor_release(a);
    leave(g);
}

/* print(g)'s and to_dot's text come from graph/listing.c and graph/dot.c:
 * attributes from the op schema, control inputs as '^name' after ';' (a
 * small Const's values come first); every allocation of the text may fail (MF_ENOMEM,
 * nothing leaked). */
static void test_listing_and_dot(void **state)
{
    (void)state;
    MfGraph *g = enter();
    MfTensor *x, *m = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 2, (int64_t[]){2, 3}, "x", &x), MF_OK);
    MfAttrs at = mf_attrs_default();
    at.transpose_b = true;
    MfTensor *xx[2] = {x, x};
    assert_int_equal(mf_op1(MF_OP_MATMUL, 2, xx, &at, &m), MF_OK);
    MfTensor *two = mf_tensor_scalar(MF_FLOAT32, 2), *a = sym_add(m, two);
    assert_int_equal(mf_graph_add_control(a->node, mf_graph_find(g, "x")), MF_OK);
    /* a Const's values are its inputs: its control inputs come after them
     * ("Const(2; ^x)"), not run into them ("Const(^x2)", issue #27) */
    assert_int_equal(mf_graph_add_control(mf_graph_find(g, "Const"), mf_graph_find(g, "x")),
                     MF_OK);
    MfStrBuf b = {0};
    assert_int_equal(mf_graph_listing(g, &b), MF_OK);
    assert_string_equal(b.data, "mf.Graph with 4 nodes\n"
                        "  x = Placeholder() -> float32 (2,3)\n"
                        "  matmul = MatMul[transpose_b](x:0, x:0) -> float32 (2,2)\n"
                        "  Const = Const(2; ^x) -> float32 ()\n"
                        "  add = AddV2(matmul:0, Const:0; ^x) -> float32 (2,2)");
    mf_strbuf_free(&b);
    const MfPrintOptions popt = MF_PRINT_DEFAULTS;
    assert_int_equal(mf_graph_format_tensor(m, &popt, &b), MF_OK);
    assert_string_equal(b.data, "<mf.Tensor 'matmul:0' shape=(2,2) dtype=float32 op=MatMul>");
    mf_strbuf_free(&b);
    assert_int_equal(mf_graph_format_tensor(two, &popt, &b), MF_OK);
    assert_string_equal(b.data, "2.\nshape=(), dtype=float32");
    mf_strbuf_free(&b);
    char attrs[64];
    assert_string_equal(mf_node_attrs_text(m->node, attrs, sizeof attrs), "transpose_b");
    assert_int_equal(mf_graph_dot(g, &b), MF_OK);
    assert_non_null(strstr(b.data, "n1 [shape=box, label=\"matmul\\nMatMul[transpose_b]\\n"
                           "float32 (2,2)\"];"));
    assert_non_null(strstr(b.data, "  n0 -> n3 [style=dashed];\n"));
    mf_strbuf_free(&b);
    MfStatus st = MF_ENOMEM;
    for (int64_t k = 1; st != MF_OK; k++) {
        size_t before = mf_alloc_in_use();
        mf_alloc_fail_at(k);
        st = k % 2 ? mf_graph_listing(g, &b) : mf_graph_dot(g, &b);
        mf_alloc_fail_at(0);
        if (st != MF_OK) {
            assert_int_equal(st, MF_ENOMEM);
            assert_error_contains("out of memory");
            mf_err_clear();
        }
        mf_strbuf_free(&b);
        assert_int_equal(mf_alloc_in_use(), before);
    }
    MfTensor *all[] = {x, m, two, a};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        mf_tensor_release(all[i]);
    leave(g);
}

int main(void)
{
    /* These tests are about the executor's order over single nodes (their
     * graphs are chains of adds); fused nodes have test_fusion.c. */
    mf_fusion_set_enabled(false);
    const struct CMUnitTest tests[] = {
        TEST(test_names_constants_placeholders),
        TEST(test_tensors_keep_graph_alive),
        TEST(test_random_dags_kahn_order),
        TEST(test_graph_equals_eager),
        TEST(test_schedule_and_pruning),
        TEST(test_intermediates_released),
        TEST(test_cycle_named),
        TEST(test_feed_errors),
        TEST(test_op_error_names_node),
        TEST(test_interrupt_stops_cleanly),
        TEST(test_session_and_group),
        TEST(test_listing_and_dot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
