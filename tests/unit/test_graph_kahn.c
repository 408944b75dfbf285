/* test_graph_kahn.c — properties of the in-degree executor on random graphs,
 * beyond test_graph.c's random DAGs:
 *   - cycles: a random DAG with one control edge closing a loop fails with a
 *     message naming a real cycle (each name runs after the one before it:
 *     a data or control edge, and the last name is the first), and nothing
 *     is returned;
 *   - feeds: feeding random inner tensors cuts their producers off: a node
 *     runs exactly when a fetch needs it through unfed edges, once, after
 *     its unfed inputs and its control inputs; values match an eager
 *     re-computation. */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "graph/graph.h"

#define MAXN 64

static MfTensor *sym_add(MfTensor *a, MfTensor *b)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_binary(MF_OP_ADD, a, b, &out), MF_OK);
    return out;
}

/* A random DAG of adds over 't[0..n)': t[0], t[1] constants, each later one
 * the sum of two earlier ones, a quarter of them with a control input. */
static int random_dag(MfGraph *g, MfTensor **t)
{
    int n = 20 + rand() % (MAXN - 20);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    t[0] = mf_tensor_scalar(MF_FLOAT64, 1);
    t[1] = mf_tensor_scalar(MF_FLOAT64, 2);
    for (int i = 2; i < n; i++) {
        t[i] = sym_add(t[rand() % i], t[rand() % i]);
        if (rand() % 4 == 0 && i > 2)
            assert_int_equal(mf_graph_add_control(t[i]->node, t[2 + rand() % (i - 2)]->node),
                             MF_OK);
    }
    mf_graph_pop_default();
    return n;
}

/* True when node 'b' has 'a' as a data or control input. */
static bool has_edge(const MfNode *a, const MfNode *b)
{
    for (int k = 0; k < b->ninputs; k++)
        if (b->inputs[k].node == a->index)
            return true;
    for (int k = 0; k < b->ncontrol; k++)
        if (b->control[k] == a->index)
            return true;
    return false;
}

/* True when node 'to' depends on node 'from' (data or control edges,
 * transitively); 'seen' has a byte per node, zeroed by the caller. */
static bool depends_from(MfGraph *g, int from, int to, unsigned char *seen)
{
    if (from == to)
        return true;
    if (seen[to])
        return false;
    seen[to] = 1;
    const MfNode *n = mf_graph_node(g, to);
    for (int k = 0; k < n->ninputs; k++)
        if (depends_from(g, from, n->inputs[k].node, seen))
            return true;
    for (int k = 0; k < n->ncontrol; k++)
        if (depends_from(g, from, n->control[k], seen))
            return true;
    return false;
}

static bool depends(MfGraph *g, int from, int to)
{
    unsigned char seen[MAXN * 4] = {0};
    assert_true(mf_graph_nnodes(g) <= MAXN * 4);
    return depends_from(g, from, to, seen);
}

/* Checks that the message names a cycle "a -> b -> ... -> a" of real edges. */
static void check_cycle_message(MfGraph *g, const char *msg)
{
    const char *p = strstr(msg, "dependencies): ");
    assert_non_null(p);
    p += strlen("dependencies): ");
    const char *end = strchr(p, ';');
    assert_non_null(end);
    char names[2048];
    size_t len = (size_t)(end - p);
    assert_true(len < sizeof names);
    memcpy(names, p, len);
    names[len] = '\0';
    const MfNode *first = NULL, *prev = NULL;
    int count = 0;
    for (char *tok = strtok(names, " ->"); tok; tok = strtok(NULL, " ->")) {
        const MfNode *cur = mf_graph_find(g, tok);
        assert_non_null(cur);
        if (prev && !has_edge(prev, cur)) {
            print_error("'%s' -> '%s' is not an edge in: %s\n", prev->name, cur->name, msg);
            fail();
        }
        if (!first)
            first = cur;
        prev = cur;
        count++;
    }
    assert_true(count >= 2);
    assert_ptr_equal(prev, first);
}

static void cycle_once(unsigned seed)
{
    srand(seed);
    MfGraph *g = mf_graph_new();
    MfTensor *t[MAXN];
    int n = random_dag(g, t);
    /* Close a loop: a node 'a' waits on a node 'b' that depends on 'a'. */
    int b = n - 1, a = 2 + rand() % (n - 2);
    while (a < b && !depends(g, ((MfNode *)t[a]->node)->index, ((MfNode *)t[b]->node)->index))
        a++; /* at worst a == b: the node waits on itself */
    assert_int_equal(mf_graph_add_control(t[a]->node, t[b]->node), MF_OK);
    MfTensor *res = NULL;
    assert_int_equal(mf_exec_run(g, 1, &t[b], 0, NULL, 0, NULL, NULL, NULL, &res, NULL),
                     MF_EARG);
    assert_null(res);
    check_cycle_message(g, mf_err_msg());
    mf_err_clear();
    for (int i = 0; i < n; i++)
        mf_tensor_release(t[i]);
    mf_graph_release(g);
}

static void test_random_cycles_named(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 40; seed++)
        cycle_once(seed);
}

/* ---- feeds cut edges ------------------------------------------------------------ */

typedef struct Order {
    int pos[MAXN * 4];
    int count[MAXN * 4];
    int n;
} Order;

static void on_node(void *ctx, const MfNode *n)
{
    Order *o = ctx;
    o->pos[n->index] = o->n++;
    o->count[n->index]++;
}

/* Marks what the fetch needs through unfed edges ('fed' per node index). */
static void mark_needed(MfGraph *g, int i, const bool *fed, bool *need)
{
    if (need[i])
        return;
    need[i] = true;
    const MfNode *n = mf_graph_node(g, i);
    for (int k = 0; k < n->ninputs; k++)
        if (!fed[n->inputs[k].node])
            mark_needed(g, n->inputs[k].node, fed, need);
    for (int k = 0; k < n->ncontrol; k++)
        mark_needed(g, n->control[k], fed, need);
}

/* The value of node i recomputed, with fed values in place ('memo' per
 * node, NAN until known). */
static double value_of(MfGraph *g, int i, const bool *fed, const double *fedval, double *memo)
{
    const MfNode *n = mf_graph_node(g, i);
    if (fed[i])
        return fedval[i];
    if (!isnan(memo[i]))
        return memo[i];
    if (n->kind == MF_NODE_CONST)
        memo[i] = mf_tensor_get(n->value, 0);
    else
        memo[i] = value_of(g, n->inputs[0].node, fed, fedval, memo) +
                  value_of(g, n->inputs[1].node, fed, fedval, memo);
    return memo[i];
}

static void check_feed_order(MfGraph *g, const Order *o, const bool *need, const bool *fed)
{
    for (int i = 0; i < mf_graph_nnodes(g); i++) {
        const MfNode *n = mf_graph_node(g, i);
        assert_int_equal(o->count[i], need[i] ? 1 : 0);
        if (!need[i])
            continue;
        for (int k = 0; k < n->ninputs; k++)
            if (!fed[n->inputs[k].node])
                assert_true(o->pos[n->inputs[k].node] < o->pos[i]);
        for (int k = 0; k < n->ncontrol; k++)
            assert_true(o->pos[n->control[k]] < o->pos[i]);
    }
}

static void feeds_once(unsigned seed)
{
    srand(seed);
    MfGraph *g = mf_graph_new();
    MfTensor *t[MAXN], *fedt[8], *vals[8], *res = NULL;
    int n = random_dag(g, t), nfeed = 1 + rand() % 4;
    bool fed[MAXN * 4] = {false}, need[MAXN * 4] = {false};
    double fedval[MAXN * 4] = {0};
    for (int k = 0; k < nfeed; k++) {
        int i = 2 + rand() % (n - 3);
        while (fed[((MfNode *)t[i]->node)->index])
            i = 2 + (i - 1) % (n - 3);
        fedt[k] = t[i];
        fed[((MfNode *)t[i]->node)->index] = true;
        fedval[((MfNode *)t[i]->node)->index] = 100.0 * (k + 1);
        vals[k] = mf_tensor_scalar(MF_FLOAT64, 100.0 * (k + 1));
    }
    int top = ((MfNode *)t[n - 1]->node)->index;
    mark_needed(g, top, fed, need);
    Order o;
    memset(&o, 0, sizeof o);
    MfExecOptions opt = {false, on_node, &o};
    assert_int_equal(mf_exec_run(g, 1, &t[n - 1], 0, NULL, nfeed, fedt, vals, &opt, &res, NULL),
                     MF_OK);
    check_feed_order(g, &o, need, fed);
    double memo[MAXN * 4];
    for (int i = 0; i < MAXN * 4; i++)
        memo[i] = DNAN;
    assert_true(mf_tensor_get(res, 0) == value_of(g, top, fed, fedval, memo));
    mf_tensor_release(res);
    for (int k = 0; k < nfeed; k++)
        mf_tensor_release(vals[k]);
    for (int i = 0; i < n; i++)
        mf_tensor_release(t[i]);
    mf_graph_release(g);
}

static void test_random_feeds_cut_edges(void **state)
{
    (void)state;
    for (unsigned seed = 100; seed < 160; seed++)
        feeds_once(seed);
}

int main(void)
{
    /* These tests are about the executor's order over single nodes (their
     * graphs are chains of adds); fused nodes have test_fusion.c. */
    mf_fusion_set_enabled(false);
    const struct CMUnitTest tests[] = {
        TEST(test_random_cycles_named),
        TEST(test_random_feeds_cut_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
