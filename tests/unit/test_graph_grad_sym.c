/* test_graph_grad.c — symbolic gradients (graph/gradients.c) equal tape
 * gradients (eager/) for every differentiable op, in float64.
 *
 * Each case of graph_cases.h whose op has a gradient runs eagerly on a tape:
 * y = sum over float outputs k of reduce_sum(out_k * w_k), with fixed random
 * weights w_k, and the tape gives dy/dx for every float64 input. The same
 * ops are then built in a graph over placeholders, mf_graph_gradients adds
 * the backward nodes, and the executor runs them with the same inputs fed.
 * Both modes call the same gradient functions and kernels in the same
 * order, so the gradients must agree bit for bit.
 *
 * The walk runs three times: placeholders with the inputs' shapes,
 * placeholders whose dims are all unknown (-1), and the first input with an
 * unknown batch dim; then the backward graph must take shapes at run time.
 * An op whose gradient cannot do that must refuse with a message naming the
 * node and the op; the common ops (elementwise with broadcasting,
 * reductions, reshapes, matmul, ...) must not refuse.
 * Also: with no graph given, mf_graph_gradients works in the ys' graph and
 * refuses eager ys outside any graph. */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "core/grad.h"
#include "eager/eager.h"
#include "graph/gradients.h"
#include "graph/graph.h"
#include "graph_cases.h"

/* Placeholders with the inputs' shapes, with every dim unknown, or with
 * only the first (batch) dim of the first input unknown (rank 2 or more:
 * a batch of inputs, the other inputs weights of known shapes). */
typedef enum Mode { KNOWN_SHAPES, UNKNOWN_DIMS, UNKNOWN_BATCH } Mode;

static const char *mode_name[] = {"placeholders", "placeholders with unknown dims",
                                  "placeholders with an unknown batch dim"};

static const char *op_name(MfOpId op)
{
    return mf_op_table[op]->name;
}

static MfTensor *rand_like(const MfTensor *t, uint64_t seed)
{
    gn_rng_state = seed;
    MfTensor *r = mf_tensor_new(MF_FLOAT64, t->rank, t->shape);
    assert_non_null(r);
    double *p = mf_tensor_data(r);
    for (int64_t i = 0; i < mf_tensor_numel(r); i++)
        p[i] = gn_rnd(-1, 1);
    return r;
}

/* y = sum_k reduce_sum(outs[k] * w[k]) over the float64 outputs; the ops
 * run eagerly or build nodes, as the dispatcher decides. 'w' receives the
 * weights (owned; shaped like the eager outputs 'like'). */
static MfTensor *objective(MfTensor *const *outs, MfTensor *const *like, int nout, MfTensor **w)
{
    MfTensor *y = NULL;
    MfAttrs all = mf_attrs_default();
    all.all_axes = true;
    for (int k = 0; k < nout; k++) {
        if (outs[k]->dtype != MF_FLOAT64)
            continue;
        if (!w[k])
            w[k] = rand_like(like[k], 500 + (uint64_t)k);
        MfTensor *prod = NULL, *s = NULL, *sum = NULL;
        assert_int_equal(mf_binary(MF_OP_MUL, outs[k], w[k], &prod), MF_OK);
        assert_int_equal(mf_op1(MF_OP_SUM, 1, &prod, &all, &s), MF_OK);
        mf_tensor_release(prod);
        if (!y) {
            y = s;
            continue;
        }
        assert_int_equal(mf_binary(MF_OP_ADD, y, s, &sum), MF_OK);
        mf_tensor_release(y);
        mf_tensor_release(s);
        y = sum;
    }
    return y;
}

/* Tape gradients of the objective for every float64 input (owned, NULL
 * where unconnected or not float). Returns false when no output is float. */
static bool tape_grads(const GradCase *gc, GnInputs *in, MfTensor **w, MfTensor **grads)
{
    MfTape *tape = mf_tape_new(false, false);
    assert_non_null(tape);
    for (int i = 0; i < in->n; i++)
        assert_int_equal(mf_tape_watch(tape, in->t[i]), MF_OK);
    MfTensor *outs[MF_MAX_OUTPUTS] = {NULL};
    int nout = 0;
    assert_int_equal(mf_op_call(gc->op, in->n, in->t, &in->attrs, outs, &nout), MF_OK);
    MfTensor *y = objective(outs, outs, nout, w);
    MfTapeSource src[GC_MAX_INPUTS];
    for (int i = 0; i < in->n; i++)
        src[i] = (MfTapeSource){.tensor = in->t[i], .variable = NULL};
    if (y && mf_tape_gradient(tape, y, in->n, src, NULL, false, grads) != MF_OK) {
        print_error("%s (%s): tape gradient failed: %s\n", op_name(gc->op), gc->label,
                    mf_err_msg());
        fail();
    }
    mf_tape_release(tape);
    mf_tensor_release(y);
    gn_release_n(outs, MF_MAX_OUTPUTS);
    for (int i = 0; i < in->n; i++)
        if (in->t[i]->dtype != MF_FLOAT64) {
            mf_tensor_release(grads[i]);
            grads[i] = NULL;
        }
    return y != NULL;
}

/* A placeholder like input 'i' ('t'), its dims unknown as 'mode' says. */
static MfTensor *placeholder_like(MfGraph *g, const MfTensor *t, int i, Mode mode)
{
    int64_t shape[MF_MAX_RANK];
    for (int d = 0; d < t->rank; d++)
        shape[d] = mode == UNKNOWN_DIMS ||
                           (mode == UNKNOWN_BATCH && i == 0 && d == 0 && t->rank >= 2)
                       ? -1
                       : t->shape[d];
    MfTensor *p = NULL;
    assert_int_equal(mf_graph_placeholder(g, t->dtype, t->rank, shape, NULL, &p), MF_OK);
    return p;
}

/* Builds op, objective and gradients into 'g'; '*sym' receives the
 * symbolic gradients (owned). Returns the status of mf_graph_gradients. */
static MfStatus build(const GradCase *gc, MfGraph *g, GnInputs *in, MfTensor **ph,
                      MfTensor **w, MfTensor *const *like, MfTensor **sym)
{
    MfTensor *outs[MF_MAX_OUTPUTS] = {NULL};
    int nout = 0;
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_int_equal(mf_op_call(gc->op, in->n, ph, &in->attrs, outs, &nout), MF_OK);
    MfTensor *y = objective(outs, like, nout, w);
    mf_graph_pop_default();
    MfStatus st = mf_graph_gradients(g, 1, &y, in->n, ph, NULL, sym);
    mf_tensor_release(y);
    gn_release_n(outs, MF_MAX_OUTPUTS);
    return st;
}

/* Graph gradients for the case (fresh inputs 'in'): 'grads' receives the
 * run values (owned, NULL where the graph gives none). Returns the status
 * of building (the message pending on failure). */
static MfStatus graph_grads(const GradCase *gc, GnInputs *in, Mode mode, MfTensor **w,
                            MfTensor *const *like, MfTensor **grads)
{
    MfGraph *g = mf_graph_new();
    assert_non_null(g);
    MfTensor *ph[GC_MAX_INPUTS] = {NULL}, *sym[GC_MAX_INPUTS] = {NULL};
    for (int i = 0; i < in->n; i++)
        ph[i] = placeholder_like(g, in->t[i], i, mode);
    MfStatus st = build(gc, g, in, ph, w, like, sym);
    MfTensor *fetch[GC_MAX_INPUTS], *vals[GC_MAX_INPUTS];
    int nf = 0, at[GC_MAX_INPUTS];
    for (int i = 0; st == MF_OK && i < in->n; i++)
        if (sym[i]) {
            at[nf] = i;
            fetch[nf++] = sym[i];
        }
    if (st == MF_OK && nf) {
        MfStatus rs = mf_exec_run(g, nf, fetch, 0, NULL, in->n, ph, in->t, NULL, vals, NULL);
        if (rs != MF_OK) {
            /* reported as a difference: no gradient where the tape has one */
            print_error("%s (%s): running the gradient graph failed: %s\n", op_name(gc->op),
                        gc->label, mf_err_msg());
            mf_err_clear();
        }
        for (int k = 0; rs == MF_OK && k < nf; k++)
            grads[at[k]] = vals[k];
    }
    gn_release_n(sym, in->n);
    gn_release_n(ph, in->n);
    mf_graph_release(g);
    return st;
}

static int compare_grads(const GradCase *gc, Mode mode, int n, MfTensor **tape, MfTensor **graph)
{
    for (int i = 0; i < n; i++) {
        if (!tape[i] && !graph[i])
            continue;
        if (!tape[i] || !graph[i]) {
            print_error("%s (%s) over %s: input %d has a gradient only in %s mode\n",
                        op_name(gc->op), gc->label, mode_name[mode], i,
                        tape[i] ? "eager" : "graph");
            return 1;
        }
        if (!gn_same_bits(tape[i], graph[i])) {
            print_error("%s (%s) over %s: the gradient of input %d differs from the tape's\n",
                        op_name(gc->op), gc->label, mode_name[mode], i);
            return 1;
        }
    }
    return 0;
}

/* Ops whose gradients must work with unknown dims. */
static bool must_take_unknown_dims(MfOpId op)
{
    static const MfOpId ops[] = {
        MF_OP_ADD, MF_OP_SUB, MF_OP_MUL, MF_OP_DIV, MF_OP_POW, MF_OP_MAXIMUM, MF_OP_MINIMUM,
        MF_OP_MOD, MF_OP_SUM, MF_OP_MEAN, MF_OP_MAX, MF_OP_MIN, MF_OP_MATMUL, MF_OP_RESHAPE,
        MF_OP_EXPAND_DIMS, MF_OP_TRANSPOSE, MF_OP_IDENTITY, MF_OP_SELECT,
        MF_OP_CAST, MF_OP_BIAS_ADD, MF_OP_SOFTMAX, MF_OP_LOG_SOFTMAX, MF_OP_BROADCAST_TO,
        MF_OP_PROD, MF_OP_BATCH_MATMUL, MF_OP_SOFTMAX_XENT, MF_OP_SPARSE_SOFTMAX_XENT,
        MF_OP_MAX_POOL, MF_OP_AVG_POOL, MF_OP_REVERSE, MF_OP_CUMSUM, MF_OP_CUMPROD,
        MF_OP_TOP_K, MF_OP_SORT, MF_OP_GATHER_ALONG_AXIS, MF_OP_SCATTER_ALONG_AXIS,
        MF_OP_GATHER_ND, MF_OP_SCATTER_ND, MF_OP_SCATTER_ND_LIKE, MF_OP_MATRIX_BAND_PART,
        MF_OP_TRILU, MF_OP_GELU, MF_OP_GELU_GRAD, MF_OP_SILU_GRAD, MF_OP_ATTENTION,
        MF_OP_SIGMOID_GRAD, MF_OP_TANH_GRAD,
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i] == op)
            return true;
    return (mf_op_table[op]->flags & MF_OP_SIMPLE) != 0;
}

/* A refusal must name the op; returns 1 (and reports) when it does not,
 * or when the op is one that must work. */
static int check_refusal(const GradCase *gc, Mode mode, int *refused)
{
    const char *msg = mf_err_msg();
    int bad = 0;
    if (must_take_unknown_dims(gc->op) || !strstr(msg, op_name(gc->op))) {
        print_error("%s (%s) over %s: gradients failed: %s\n", op_name(gc->op), gc->label,
                    mode_name[mode], msg);
        bad = 1;
    } else {
        (*refused)++;
        if (getenv("MF_TEST_VERBOSE"))
            print_message("refused: %s (%s) over %s: %s\n", op_name(gc->op), gc->label,
                          mode_name[mode], msg);
    }
    mf_err_clear();
    return bad;
}

static int check_case(const GradCase *gc, uint64_t seed, Mode mode, int *refused)
{
    GnInputs ein, gin;
    gn_inputs(gc, seed, &ein);
    gn_inputs(gc, seed, &gin);
    MfTensor *w[MF_MAX_OUTPUTS] = {NULL}, *like[MF_MAX_OUTPUTS] = {NULL};
    MfTensor *tg[GC_MAX_INPUTS] = {NULL}, *gg[GC_MAX_INPUTS] = {NULL};
    int bad = 0, nout = 0;
    if (tape_grads(gc, &ein, w, tg)) {
        /* the weights' shapes come from the eager outputs */
        assert_int_equal(mf_op_call(gc->op, ein.n, ein.t, &ein.attrs, like, &nout), MF_OK);
        if (graph_grads(gc, &gin, mode, w, like, gg) != MF_OK)
            bad = mode != KNOWN_SHAPES ? check_refusal(gc, mode, refused) : 1;
        else
            bad = compare_grads(gc, mode, ein.n, tg, gg);
        if (bad && mode == KNOWN_SHAPES && mf_err_msg()[0]) {
            print_error("%s (%s): %s\n", op_name(gc->op), gc->label, mf_err_msg());
            mf_err_clear();
        }
    }
    gn_release_n(w, MF_MAX_OUTPUTS);
    gn_release_n(like, MF_MAX_OUTPUTS);
    gn_release_n(tg, ein.n);
    gn_release_n(gg, gin.n);
    gn_release_n(ein.t, ein.n);
    gn_release_n(gin.t, gin.n);
    return bad;
}

static void walk_cases(Mode mode)
{
    int bad = 0, total = 0, refused = 0;
    for (size_t t = 0; t < N_CASE_TABLES; t++)
        for (size_t i = 0; i < case_tables[t].n; i++) {
            const GradCase *gc = &case_tables[t].cases[i];
            if (!gc->label || !mf_op_differentiable(gc->op))
                continue;
            /* the tuple length of GatherNd / ScatterNd must be known to build
             * them at all (test_graph_ops checks they refuse) */
            if (mode == UNKNOWN_DIMS && (gc->op == MF_OP_GATHER_ND ||
                                         gc->op == MF_OP_SCATTER_ND ||
                                         gc->op == MF_OP_SCATTER_ND_LIKE ||
                                         gc->op == MF_OP_TENSOR_SCATTER_UPDATE ||
                                         gc->op == MF_OP_TENSOR_SCATTER_ADD ||
                                         gc->op == MF_OP_TENSOR_SCATTER_SUB))
                continue;
            bad += check_case(gc, 9000 + 100 * t + i, mode, &refused);
            total++;
        }
    if (refused)
        print_message("over %s: %d of %d cases refuse (with a message naming the op)\n",
                      mode_name[mode], refused, total);
    if (bad) {
        print_error("%d of %d cases: symbolic and tape gradients differ\n", bad, total);
        fail();
    }
}

static void test_symbolic_equals_tape(void **state)
{
    (void)state;
    walk_cases(KNOWN_SHAPES);
}

static void test_symbolic_equals_tape_unknown_dims(void **state)
{
    (void)state;
    walk_cases(UNKNOWN_DIMS);
}

static void test_symbolic_equals_tape_unknown_batch(void **state)
{
    (void)state;
    walk_cases(UNKNOWN_BATCH);
}

/* Every differentiable op is reached by the walk. */
static void test_every_differentiable_op_walked(void **state)
{
    (void)state;
    int missing = 0;
    for (int op = 0; op < MF_NOPS; op++)
        if (mf_op_differentiable((MfOpId)op) && !gn_has_case((MfOpId)op)) {
            print_error("differentiable op %s has no case\n", op_name((MfOpId)op));
            missing++;
        }
    assert_int_equal(missing, 0);
}

/* No graph given: the ys' graph; eager ys with no default graph refused. */
static void test_graph_of_the_ys(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    MfTensor *x = NULL, *y = NULL, *gx = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT64, 0, NULL, "x", &x), MF_OK);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    assert_int_equal(mf_binary(MF_OP_MUL, x, x, &y), MF_OK);
    mf_graph_pop_default();
    assert_int_equal(mf_graph_gradients(NULL, 1, &y, 1, &x, NULL, &gx), MF_OK);
    assert_ptr_equal(mf_tensor_graph(gx), g);
    mf_tensor_release(gx);
    MfTensor *e = mf_tensor_scalar(MF_FLOAT64, 2.0);
    gx = e;
    assert_int_equal(mf_graph_gradients(NULL, 1, &e, 1, &e, NULL, &gx), MF_EARG);
    assert_null(gx);
    assert_error_contains("gradients: ys must be graph tensors (build them inside "
                          "g:as_default); for eager gradients use mf.GradientTape");
    mf_err_clear();
    mf_tensor_release(e);
    mf_tensor_release(y);
    mf_tensor_release(x);
    mf_graph_release(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_every_differentiable_op_walked),
        TEST(test_symbolic_equals_tape),
        TEST(test_symbolic_equals_tape_unknown_dims),
        TEST(test_symbolic_equals_tape_unknown_batch),
        TEST(test_graph_of_the_ys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
