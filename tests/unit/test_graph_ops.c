/* test_graph_ops.c — graph mode gives eager mode's results, bit for bit,
 * for every op of the table (core/oplist.h).
 *
 * Each case of graph_cases.h (the gradcheck cases plus cases for the ops
 * without a gradient) runs its op eagerly, then as a node of a fresh graph
 * run by the in-degree executor, three ways: over placeholders with the
 * inputs' shapes, over placeholders whose dims are all unknown (-1), and
 * over Const nodes. Graph nodes call the same kernels, so the outputs must
 * have the same dtype, shape and bytes, and inputs the same bytes after the
 * run (each run gets fresh inputs of the same values). A walk of the op
 * table fails for any op without a case. Random ops: the same seed gives the
 * same values in both modes and in every run. The training ops (Apply*)
 * update their first inputs in place: they run over graph Variables in a
 * session (same output and same variable values as eager mode), and must
 * refuse placeholders and constants, naming the node. */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "graph/graph.h"
#include "graph_cases.h"

typedef enum Mode { KNOWN_SHAPES, UNKNOWN_DIMS, CONSTANTS } Mode;

static const char *mode_name[] = {"placeholders", "placeholders with unknown dims", "constants"};

/* Ops that write into their first 'inplace' inputs (the training ops): in
 * a graph those must be Variables; over placeholders and Const nodes they
 * refuse. */
static bool updates_inputs(MfOpId op)
{
    return mf_op_table[op]->inplace > 0;
}

static const char *op_name(MfOpId op)
{
    return mf_op_table[op]->name;
}

/* A placeholder like 't', its dims unknown (-1) when 'unknown'. */
static MfTensor *placeholder_like(MfGraph *g, const MfTensor *t, bool unknown)
{
    int64_t shape[MF_MAX_RANK];
    for (int d = 0; d < t->rank; d++)
        shape[d] = unknown ? -1 : t->shape[d];
    MfTensor *p = NULL;
    assert_int_equal(mf_graph_placeholder(g, t->dtype, t->rank, shape, NULL, &p), MF_OK);
    return p;
}

/* Builds the case's op into a fresh graph and runs it; on success 'res'
 * holds the owned values of every output and the count is returned; on
 * failure (building or running) returns -1 with the message pending. */
static int graph_run(const GradCase *gc, GnInputs *in, Mode mode, MfTensor **res)
{
    MfGraph *g = mf_graph_new();
    assert_non_null(g);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfTensor *ph[GC_MAX_INPUTS] = {NULL}, *outs[MF_MAX_OUTPUTS] = {NULL};
    for (int i = 0; i < in->n; i++) {
        if (mode == CONSTANTS) {
            mf_tensor_retain(in->t[i]);
            ph[i] = in->t[i];
        } else {
            ph[i] = placeholder_like(g, in->t[i], mode == UNKNOWN_DIMS);
        }
    }
    int nout = 0;
    MfStatus st = mf_op_call(gc->op, in->n, ph, &in->attrs, outs, &nout);
    mf_graph_pop_default();
    for (int k = 0; st == MF_OK && k < nout; k++)
        assert_non_null(outs[k]->node);
    if (st == MF_OK)
        st = mf_exec_run(g, nout, outs, 0, NULL, mode == CONSTANTS ? 0 : in->n, ph, in->t, NULL,
                         res, NULL);
    gn_release_n(outs, MF_MAX_OUTPUTS);
    gn_release_n(ph, in->n);
    mf_graph_release(g);
    return st == MF_OK ? nout : -1;
}

/* An op that writes into its inputs must refuse to run over placeholders
 * or Const nodes, naming the node; returns 1 (and reports) when it does not. */
static int check_refuses(const GradCase *gc, uint64_t seed, Mode mode, const char *why)
{
    GnInputs in;
    MfTensor *graph[MF_MAX_OUTPUTS] = {NULL};
    gn_inputs(gc, seed, &in);
    int ng = graph_run(gc, &in, mode, graph), bad = 0;
    const char *msg = mf_err_msg();
    bool named = strstr(msg, op_name(gc->op)) || strstr(msg, mf_op_table[gc->op]->api);
    if (ng >= 0 || !strstr(msg, why) || !named) {
        print_error("%s (%s) over %s: expected a refusal, got '%s'\n", op_name(gc->op),
                    gc->label, mode_name[mode], ng >= 0 ? "success" : msg);
        bad = 1;
    }
    mf_err_clear();
    gn_release_n(graph, MF_MAX_OUTPUTS);
    gn_release_n(in.t, in.n);
    return bad;
}

/* Compares the graph's values with the eager ones: the outputs, and the
 * inputs after the run (ops that update inputs in place must update them
 * alike). Returns 1 (and reports) on a difference. */
static int compare_runs(const GradCase *gc, Mode mode, MfTensor **eager, int ne, MfTensor **graph,
                        int ng, const GnInputs *ein, const GnInputs *gin)
{
    const char *what = mode_name[mode];
    if (ng != ne) {
        print_error("%s (%s) over %s: %d outputs in graph mode, %d eagerly\n", op_name(gc->op),
                    gc->label, what, ng, ne);
        return 1;
    }
    for (int k = 0; k < ne; k++)
        if (!gn_same_bits(eager[k], graph[k])) {
            print_error("%s (%s) over %s: output %d differs from eager mode\n",
                        op_name(gc->op), gc->label, what, k);
            return 1;
        }
    for (int i = 0; i < ein->n; i++)
        if (!gn_same_bits(ein->t[i], gin->t[i])) {
            print_error("%s (%s) over %s: input %d after the run differs from eager mode\n",
                        op_name(gc->op), gc->label, what, i);
            return 1;
        }
    return 0;
}

/* The training ops over graph Variables (the updated inputs) and
 * placeholders (the others), in a session: output and the variables' values
 * after the run must equal the eager op's. Returns 1 (and reports) when not. */
static int check_over_variables(const GradCase *gc, uint64_t seed)
{
    GnInputs ein, gin;
    gn_inputs(gc, seed, &ein);
    gn_inputs(gc, seed, &gin);
    MfTensor *eager[MF_MAX_OUTPUTS] = {NULL}, *out[MF_MAX_OUTPUTS] = {NULL}, *res = NULL;
    MfTensor *sym[GC_MAX_INPUTS] = {NULL}, *fed[GC_MAX_INPUTS], *vals[GC_MAX_INPUTS];
    MfNode *var[GC_MAX_INPUTS] = {NULL}, *init = NULL;
    int ne = 0, nfeed = 0, nv = mf_op_table[gc->op]->inplace, bad = 0;
    assert_int_equal(mf_op_call(gc->op, ein.n, ein.t, &ein.attrs, eager, &ne), MF_OK);
    MfGraph *g = mf_graph_new();
    for (int i = 0; i < gin.n; i++) {
        if (i < nv) {
            assert_int_equal(mf_graph_variable(g, gin.t[i], NULL, true, &var[i]), MF_OK);
            sym[i] = mf_graph_output(var[i], 0);
        } else {
            sym[i] = placeholder_like(g, gin.t[i], false);
            fed[nfeed] = sym[i];
            vals[nfeed++] = gin.t[i];
        }
    }
    assert_int_equal(mf_graph_variables_initializer(g, nv, var, NULL, &init), MF_OK);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_int_equal(mf_op_call(gc->op, gin.n, sym, &gin.attrs, out, &ne), MF_OK);
    mf_graph_pop_default();
    MfSession *s = mf_session_new(g);
    assert_int_equal(mf_session_run(s, 0, NULL, 1, &init, 0, NULL, NULL, NULL, NULL, NULL),
                     MF_OK);
    if (mf_session_run(s, 1, out, 0, NULL, nfeed, fed, vals, NULL, &res, NULL) != MF_OK) {
        print_error("%s (%s) over variables: %s\n", op_name(gc->op), gc->label, mf_err_msg());
        mf_err_clear();
        bad = 1;
    }
    bad = bad || !gn_same_bits(res, eager[0]);
    for (int i = 0; !bad && i < nv; i++) {
        MfTensor *now = NULL;
        assert_int_equal(mf_session_variable_value(s, var[i], &now), MF_OK);
        bad = !gn_same_bits(now, ein.t[i]);
        mf_tensor_release(now);
    }
    if (bad)
        print_error("%s (%s) over variables: differs from eager mode\n", op_name(gc->op),
                    gc->label);
    mf_session_free(s);
    mf_tensor_release(res);
    gn_release_n(out, MF_MAX_OUTPUTS);
    gn_release_n(eager, MF_MAX_OUTPUTS);
    gn_release_n(sym, gin.n);
    gn_release_n(ein.t, ein.n);
    gn_release_n(gin.t, gin.n);
    mf_graph_release(g);
    return bad;
}

/* Runs one case eagerly and in a graph, each on fresh inputs of the same
 * values; returns 1 (and reports) when they differ. */
static int check_case(const GradCase *gc, uint64_t seed, Mode mode)
{
    if (updates_inputs(gc->op))
        return mode == KNOWN_SHAPES ? check_over_variables(gc, seed)
                                    : check_refuses(gc, seed, mode, "updated in place");
    /* the output's rank is the length of Fill's shape input: it must be known */
    if (gc->op == MF_OP_FILL && mode == UNKNOWN_DIMS)
        return check_refuses(gc, seed, mode, "of known length");
    /* so is GatherNd's / ScatterNd's tuple length (the last dim of indices) */
    if ((gc->op == MF_OP_GATHER_ND || gc->op == MF_OP_SCATTER_ND ||
         gc->op == MF_OP_SCATTER_ND_LIKE || gc->op == MF_OP_TENSOR_SCATTER_UPDATE ||
         gc->op == MF_OP_TENSOR_SCATTER_ADD || gc->op == MF_OP_TENSOR_SCATTER_SUB) &&
        mode == UNKNOWN_DIMS)
        return check_refuses(gc, seed, mode, "(the tuple length) must be known");
    GnInputs ein, gin;
    gn_inputs(gc, seed, &ein);
    gn_inputs(gc, seed, &gin);
    MfTensor *eager[MF_MAX_OUTPUTS] = {NULL}, *graph[MF_MAX_OUTPUTS] = {NULL};
    int ne = 0, bad;
    if (mf_op_call(gc->op, ein.n, ein.t, &ein.attrs, eager, &ne) != MF_OK) {
        print_error("%s (%s): eager run failed: %s\n", op_name(gc->op), gc->label, mf_err_msg());
        fail();
    }
    int ng = graph_run(gc, &gin, mode, graph);
    if (ng < 0) {
        print_error("%s (%s) over %s: graph failed: %s\n", op_name(gc->op), gc->label,
                    mode_name[mode], mf_err_msg());
        mf_err_clear();
        bad = 1;
    } else {
        bad = compare_runs(gc, mode, eager, ne, graph, ng, &ein, &gin);
    }
    gn_release_n(eager, MF_MAX_OUTPUTS);
    gn_release_n(graph, MF_MAX_OUTPUTS);
    gn_release_n(ein.t, ein.n);
    gn_release_n(gin.t, gin.n);
    return bad;
}

static void walk_cases(Mode mode)
{
    int bad = 0, total = 0;
    for (size_t t = 0; t < N_CASE_TABLES; t++)
        for (size_t i = 0; i < case_tables[t].n; i++) {
            const GradCase *gc = &case_tables[t].cases[i];
            if (!gc->label)
                continue;
            bad += check_case(gc, 7000 + 100 * t + i, mode);
            total++;
        }
    if (bad) {
        print_error("%d of %d cases differ between graph and eager mode\n", bad, total);
        fail();
    }
}

static void test_graph_equals_eager_placeholders(void **state)
{
    (void)state;
    walk_cases(KNOWN_SHAPES);
}

static void test_graph_equals_eager_unknown_dims(void **state)
{
    (void)state;
    walk_cases(UNKNOWN_DIMS);
}

static void test_graph_equals_eager_constants(void **state)
{
    (void)state;
    walk_cases(CONSTANTS);
}

static void test_every_op_has_a_case(void **state)
{
    (void)state;
    int missing = 0;
    for (int op = 0; op < MF_NOPS; op++) {
        if (gn_has_case((MfOpId)op))
            continue;
        print_error("op %s (%s) has no case in graph_cases.h or grad_cases_*.h\n",
                    mf_op_table[op]->name, mf_op_table[op]->api);
        missing++;
    }
    assert_int_equal(missing, 0);
}

/* Random ops in a graph: the first run of the node equals the eager op
 * (the seed is an attribute), the next run draws fresh values (the node
 * counts its runs, core/rng.h); another seed differs. */
static void test_random_same_seed_same_values(void **state)
{
    (void)state;
    const MfOpId ops[] = {MF_OP_RANDOM_NORMAL, MF_OP_TRUNCATED_NORMAL, MF_OP_RANDOM_UNIFORM};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        MfAttrs a = mf_attrs_default();
        gn_random_f64(&a);
        MfTensor *eager = NULL, *node = NULL, *r1 = NULL, *r2 = NULL, *other = NULL;
        assert_int_equal(mf_op1(ops[k], 0, NULL, &a, &eager), MF_OK);
        MfGraph *g = mf_graph_new();
        assert_int_equal(mf_graph_push_default(g), MF_OK);
        assert_int_equal(mf_op1(ops[k], 0, NULL, &a, &node), MF_OK);
        mf_graph_pop_default();
        assert_int_equal(mf_exec_run(g, 1, &node, 0, NULL, 0, NULL, NULL, NULL, &r1, NULL), MF_OK);
        assert_int_equal(mf_exec_run(g, 1, &node, 0, NULL, 0, NULL, NULL, NULL, &r2, NULL), MF_OK);
        assert_false(gn_same_bits(r1, r2));
        assert_true(gn_same_bits(r1, eager));
        a.seed++;
        assert_int_equal(mf_op1(ops[k], 0, NULL, &a, &other), MF_OK);
        assert_false(gn_same_bits(other, eager));
        MfTensor *all[] = {eager, node, r1, r2, other};
        gn_release_n(all, 5);
        mf_graph_release(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_every_op_has_a_case),
        TEST(test_graph_equals_eager_placeholders),
        TEST(test_graph_equals_eager_constants),
        TEST(test_graph_equals_eager_unknown_dims),
        TEST(test_random_same_seed_same_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
