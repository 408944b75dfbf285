/* test_graph_train_oom.c — a graph-mode train op is all-or-nothing under
 * out-of-memory, as eager apply_gradients is (test_alloc_sweep.c).
 *
 * For each optimizer, a graph with three trainable variables (w, b, v), a
 * fed placeholder and a global step gets its train op; one
 * sess:run(train_op) is swept with mf_alloc_fail_at(n) over every
 * allocation it makes, for the first step after the initializer (which
 * copies the initial values' buffers) and for a later one. After each
 * failed run every variable of the graph (the three, their slots, Adam's
 * beta powers, global_step) must hold exactly the bytes it held before,
 * the error must say "out of memory" and name the node and op, and the
 * same run retried must give the values of a run that never failed. The
 * sweep counts the failures that came after an Apply node had its turn
 * (the case the executor's staged writes exist for, graph/exec.c) and
 * requires some for each optimizer. */
#include "testutil.h"

#include "core/alloc.h"
#include "core/ops/reduce.h"
#include "core/variable.h"
#include "graph/graph.h"
#include "train/train.h"

#define MAXVARS 16
#define MAXBYTES 64

static const int64_t X_SHAPE[2] = {4, 2}, W_SHAPE[2] = {2, 3}, B_SHAPE[1] = {3};

typedef struct Model {
    MfGraph *g;
    MfSession *s;
    MfTensor *x_ph, *x, *loss;
    MfVariable *h[3], *gs;
    MfOptimizer *opt;
    MfNode *train, *init;
} Model;

/* loss = sum(square(x w + b) * v): every variable gets a gradient, w's and
 * b's through the matmul (so an Apply node can run while others wait). */
static void build(Model *m, MfOptKind kind)
{
    memset(m, 0, sizeof *m);
    m->g = mf_graph_new();
    assert_non_null(m->g);
    assert_int_equal(mf_graph_push_default(m->g), MF_OK);
    assert_int_equal(mf_graph_placeholder(m->g, MF_FLOAT32, 2, X_SHAPE, "x", &m->x_ph), MF_OK);
    MfTensor *init[3] = {
        make_tensor(MF_FLOAT32, 2, W_SHAPE, (double[]){0.5, -0.25, 0.75, -0.5, 0.125, 0.25}),
        make_tensor(MF_FLOAT32, 1, B_SHAPE, (double[]){0.1, -0.2, 0.3}),
        make_tensor(MF_FLOAT32, 1, B_SHAPE, (double[]){1.5, -0.5, 0.25}),
    };
    const char *names[3] = {"w", "b", "v"};
    for (int i = 0; i < 3; i++) {
        MfNode *node;
        assert_int_equal(mf_graph_variable(m->g, init[i], names[i], true, &node), MF_OK);
        mf_tensor_release(init[i]);
        m->h[i] = mf_train_graph_handle(node);
        assert_non_null(m->h[i]);
    }
    MfTensor *t[4] = {NULL};
    assert_int_equal(mf_binary(MF_OP_MATMUL, m->x_ph, m->h[0]->value, &t[0]), MF_OK);
    assert_int_equal(mf_binary(MF_OP_ADD, t[0], m->h[1]->value, &t[1]), MF_OK);
    assert_int_equal(mf_unary(MF_OP_SQUARE, t[1], &t[2]), MF_OK);
    assert_int_equal(mf_binary(MF_OP_MUL, t[2], m->h[2]->value, &t[3]), MF_OK);
    assert_int_equal(mf_reduce(MF_OP_SUM, t[3], NULL, 0, false, &m->loss), MF_OK);
    for (int i = 0; i < 4; i++)
        mf_tensor_release(t[i]);
    assert_int_equal(mf_train_graph_global_step(m->g, &m->gs), MF_OK);
    MfOptConfig cfg = mf_opt_config_default(kind, 0.05);
    cfg.momentum = 0.9;
    m->opt = mf_optimizer_new(&cfg);
    assert_non_null(m->opt);
    MfGradVar *pairs = NULL;
    int n = 0;
    assert_int_equal(mf_train_compute_gradients_graph(m->loss, 0, NULL, &pairs, &n), MF_OK);
    assert_int_equal(n, 3);
    assert_int_equal(mf_optimizer_apply_graph(m->opt, n, pairs, NULL, m->gs, &m->train), MF_OK);
    mf_grad_vars_free(pairs, n);
    assert_int_equal(mf_graph_variables_initializer(m->g, 0, NULL, NULL, &m->init), MF_OK);
    mf_graph_pop_default();
    m->x = make_tensor(MF_FLOAT32, 2, X_SHAPE, (double[]){1, -2, 0.5, 3, -1, 0.25, 2, -0.75});
    m->s = mf_session_new(m->g);
    assert_non_null(m->s);
}

static void destroy(Model *m)
{
    mf_session_free(m->s);
    mf_optimizer_release(m->opt);
    for (int i = 0; i < 3; i++)
        mf_variable_release(m->h[i]);
    mf_variable_release(m->gs);
    mf_tensor_release(m->loss);
    mf_tensor_release(m->x_ph);
    mf_tensor_release(m->x);
    mf_graph_release(m->g);
}

/* Counts the Apply nodes that had their turn in a run. */
static void count_apply(void *ctx, const MfNode *n)
{
    if (strncmp(mf_node_op_name(n), "Apply", 5) == 0)
        ++*(int *)ctx;
}

static MfStatus train(Model *m, int *applies)
{
    *applies = 0;
    MfExecOptions opt = {.schedule = false, .on_node = count_apply, .ctx = applies};
    return mf_session_run(m->s, 0, NULL, 1, &m->train, 1, &m->x_ph, &m->x, &opt, NULL, NULL);
}

/* Re-initialises every variable, then runs 'steps' - 1 successful steps. */
static void restart(Model *m, int steps)
{
    int applies;
    assert_int_equal(mf_session_run(m->s, 0, NULL, 1, &m->init, 0, NULL, NULL, NULL, NULL, NULL),
                     MF_OK);
    for (int i = 1; i < steps; i++)
        assert_int_equal(train(m, &applies), MF_OK);
}

/* The bytes of every variable of the graph (slots, powers and step too). */
typedef struct Snapshot {
    int n;
    size_t bytes[MAXVARS];
    unsigned char data[MAXVARS][MAXBYTES];
} Snapshot;

static void snapshot(Model *m, Snapshot *s)
{
    MfNode *vars[MAXVARS];
    s->n = mf_graph_variables(m->g, false, vars, MAXVARS);
    assert_true(s->n <= MAXVARS);
    for (int i = 0; i < s->n; i++) {
        const MfTensor *t = mf_varstore_get(mf_session_vars(m->s), vars[i]->index);
        assert_non_null(t);
        assert_true(mf_tensor_is_contiguous(t));
        s->bytes[i] = (size_t)mf_tensor_numel(t) * mf_dtype_size(t->dtype);
        assert_true(s->bytes[i] <= MAXBYTES);
        memcpy(s->data[i], mf_tensor_data(t), s->bytes[i]);
    }
}

static void expect_same(const Snapshot *a, const Snapshot *b, const char *what, int64_t n)
{
    assert_int_equal(a->n, b->n);
    for (int i = 0; i < a->n; i++)
        if (a->bytes[i] != b->bytes[i] || memcmp(a->data[i], b->data[i], a->bytes[i]) != 0) {
            print_error("allocation %lld: variable %d differs from %s\n", (long long)n, i, what);
            fail();
        }
}

/* The failure is reported as out of memory, naming the node and its op
 * (or the run itself, for the executor's own tables, made before any node). */
static void expect_oom(MfStatus st, int64_t n)
{
    const char *msg = mf_err_msg();
    bool names_node = strncmp(msg, "run: node '", 11) == 0 && strstr(msg, "' (");
    if (st != MF_ENOMEM || !strstr(msg, "out of memory") ||
        !(names_node || strncmp(msg, "run: out of memory", 18) == 0)) {
        print_error("allocation %lld: status %d, message '%s'\n", (long long)n, (int)st, msg);
        fail();
    }
    mf_err_clear();
}

static const char *kind_name(MfOptKind kind)
{
    static const char *const names[] = {"GradientDescent", "Momentum", "Adagrad", "RMSProp",
                                        "Adam", "Lion"};
    _Static_assert(MF_COUNTOF(names) == MF_OPT_NKINDS, "one name per MfOptKind");
    return names[kind];
}

/* Sweeps the 'steps'-th run of the train op of optimizer 'kind'. */
static void sweep(MfOptKind kind, int steps)
{
    Model m;
    build(&m, kind);
    Snapshot before, after, ref;
    int applies;
    restart(&m, steps);
    snapshot(&m, &before);
    int64_t count = mf_alloc_count();
    assert_int_equal(train(&m, &applies), MF_OK);
    int64_t total = mf_alloc_count() - count;
    assert_int_equal(applies, 3);
    snapshot(&m, &ref);
    assert_true(total > 10);

    int64_t failures = 0, late = 0;
    for (int64_t n = 1;; n++) {
        restart(&m, steps);
        snapshot(&m, &after);
        expect_same(&after, &before, "the state before the run", n);
        mf_alloc_fail_at(n);
        MfStatus st = train(&m, &applies);
        mf_alloc_fail_at(0);
        snapshot(&m, &after);
        if (st == MF_OK) {
            expect_same(&after, &ref, "the reference run", n);
            break; /* the run made fewer than n allocations */
        }
        expect_oom(st, n);
        expect_same(&after, &before, "the state before the failed run", n);
        failures++;
        late += applies > 0;
        /* the same run, retried, gives the reference values */
        assert_int_equal(train(&m, &applies), MF_OK);
        snapshot(&m, &after);
        expect_same(&after, &ref, "the reference run", n);
    }
    print_message("%s step %d: %lld allocations, each failed once (%lld after an Apply node), "
                  "no variable changed\n", kind_name(kind), steps, (long long)failures,
                  (long long)late);
    assert_int_equal(failures, total);
    assert_true(late > 0);
    destroy(&m);
    assert_int_equal(mf_tensor_live_count(), 0);
}

static void test_train_op_all_or_nothing(void **state)
{
    (void)state;
    for (MfOptKind kind = MF_OPT_SGD; kind < MF_OPT_NKINDS; kind++)
        for (int steps = 1; steps <= 2; steps++)
            sweep(kind, steps);
}

/* Ctrl-C after the first Apply node had its turn: the run stops with
 * MF_EINTR and, the writes being staged, no variable changed. */
static void interrupt_after_apply(void *ctx, const MfNode *n)
{
    count_apply(ctx, n);
    if (*(int *)ctx == 1)
        mf_interrupted = 1;
}

static void test_interrupt_changes_nothing(void **state)
{
    (void)state;
    Model m;
    build(&m, MF_OPT_ADAM);
    restart(&m, 2);
    Snapshot before, after;
    snapshot(&m, &before);
    int applies = 0;
    MfExecOptions opt = {.schedule = false, .on_node = interrupt_after_apply, .ctx = &applies};
    MfStatus st = mf_session_run(m.s, 0, NULL, 1, &m.train, 1, &m.x_ph, &m.x, &opt, NULL, NULL);
    mf_interrupted = 0;
    assert_int_equal(st, MF_EINTR);
    assert_int_equal(applies, 1);
    mf_err_clear();
    snapshot(&m, &after);
    expect_same(&after, &before, "the state before the interrupted run", 0);
    destroy(&m);
}

/* An Apply node's output fetched, and consumed by a node of the same run
 * (which commits the staged writes first): both see the updated variable,
 * the value a plain run of the train op gives. */
static void test_apply_output_seen_updated(void **state)
{
    (void)state;
    Model m;
    build(&m, MF_OPT_SGD);
    MfNode *apply = mf_graph_find(m.g, "GradientDescent/update_w/apply_gradient_descent");
    assert_non_null(apply);
    MfTensor *fetch[2] = {mf_graph_output(apply, 0), NULL}, *got[2] = {NULL, NULL};
    assert_int_equal(mf_graph_push_default(m.g), MF_OK);
    assert_int_equal(mf_unary(MF_OP_NEG, fetch[0], &fetch[1]), MF_OK);
    mf_graph_pop_default();
    restart(&m, 1);
    assert_int_equal(mf_session_run(m.s, 2, fetch, 0, NULL, 1, &m.x_ph, &m.x, NULL, got, NULL),
                     MF_OK);
    /* the reference: the train op in a fresh session, then w */
    MfSession *ref = mf_session_new(m.g);
    MfTensor *w = NULL;
    int applies;
    assert_int_equal(mf_session_run(ref, 0, NULL, 1, &m.init, 0, NULL, NULL, NULL, NULL, NULL),
                     MF_OK);
    MfSession *keep = m.s;
    m.s = ref;
    assert_int_equal(train(&m, &applies), MF_OK);
    m.s = keep;
    assert_int_equal(mf_session_run(ref, 1, &m.h[0]->value, 0, NULL, 0, NULL, NULL, NULL, &w,
                                    NULL), MF_OK);
    double expect[6], neg[6];
    for (int i = 0; i < 6; i++) {
        expect[i] = mf_tensor_get(w, i);
        neg[i] = -expect[i];
    }
    assert_false(expect[0] == 0.5); /* it moved */
    assert_values(got[0], expect, 6, 0);
    assert_values(got[1], neg, 6, 0);
    for (int i = 0; i < 2; i++) {
        mf_tensor_release(got[i]);
        mf_tensor_release(fetch[i]);
    }
    mf_tensor_release(w);
    mf_session_free(ref);
    destroy(&m);
}

/* One buffer given twice to an in-place op is refused before anything is
 * written, naming the op and the variable. */
static void test_same_buffer_twice(void **state)
{
    (void)state;
    Model m;
    build(&m, MF_OPT_SGD);
    MfTensor *lr = make_tensor(MF_FLOAT32, 0, NULL, (double[]){0.5});
    MfTensor *mom = make_tensor(MF_FLOAT32, 0, NULL, (double[]){0.9});
    MfTensor *g = make_tensor(MF_FLOAT32, 2, W_SHAPE, (double[]){1, 1, 1, 1, 1, 1});
    MfTensor *in[5] = {m.h[0]->value, m.h[0]->value, lr, g, mom}, *out = NULL;
    assert_int_equal(mf_graph_push_default(m.g), MF_OK);
    assert_int_equal(mf_op1(MF_OP_APPLY_MOMENTUM, 5, in, NULL, &out), MF_OK);
    mf_graph_pop_default();
    restart(&m, 1);
    Snapshot before, after;
    snapshot(&m, &before);
    MfNode *node = out->node;
    MfStatus st = mf_session_run(m.s, 0, NULL, 1, &node, 0, NULL, NULL, NULL, NULL, NULL);
    assert_int_equal(st, MF_EARG);
    assert_error_contains("apply_momentum: inputs 1 and 2 are the same variable ('w')");
    snapshot(&m, &after);
    expect_same(&after, &before, "the state before the refused run", 0);
    mf_tensor_release(out);
    mf_tensor_release(lr);
    mf_tensor_release(mom);
    mf_tensor_release(g);
    destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_train_op_all_or_nothing),
        TEST(test_interrupt_changes_nothing),
        TEST(test_apply_output_seen_updated),
        TEST(test_same_buffer_twice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
