/* test_alloc_sweep.c — every allocation of one training step may fail.
 *
 * The allocator hook (mf_alloc_fail_at) fails the N-th engine allocation
 * from now. Each test sweeps N over every allocation of one step — an
 * eager step (a 3-5-2 MLP forward under a tape, the tape gradient, an Adam
 * apply that makes its slots) and a graph step (a session run fetching the
 * loss and running the SGD assigns built by mf_graph_gradients) — until the
 * step no longer reaches the N-th allocation. Each failure must come back
 * as MF_ENOMEM with "out of memory" in the message, leave no tensor alive
 * once the model is freed (teardown; LSan in `make check` sees the rest),
 * and leave the engine working: a fresh step right after gives exactly the
 * values of the reference step. A third test sweeps one apply_gradients of
 * each optimizer (first apply and a later one, with a global_step): a
 * failed apply must leave every variable, slot, beta power and the step
 * bit-identical, and the same apply retried must give the reference. A
 * fourth sweeps a graph's whole life (building, mf_graph_gradients, the
 * initializer, the session and its runs): graph memory comes from the
 * engine allocator, so each of its allocations fails once too, and after
 * each failure the engine holds exactly the bytes it held before. */
#include "testutil.h"

#include "core/alloc.h"
#include "core/ops/reduce.h"
#include "core/variable.h"
#include "graph/gradients.h"
#include "graph/graph.h"
#include "train/train.h"

#define NIN 3
#define NHID 5
#define NOUT 2
#define BATCH 4

/* Deterministic, varied values: v(i) in [-1, 1). */
static double val(int salt, int i)
{
    return (double)((i * 37 + salt * 11) % 23) / 11.5 - 1.0;
}

static MfTensor *filled(int salt, int rank, const int64_t *shape)
{
    double v[64];
    int64_t n = mf_shape_numel(rank, shape);
    for (int64_t i = 0; i < n; i++)
        v[i] = val(salt, (int)i);
    return make_tensor(MF_FLOAT32, rank, shape, v);
}

static const int64_t X_SHAPE[2] = {BATCH, NIN}, Y_SHAPE[2] = {BATCH, NOUT};
static const int64_t W1_SHAPE[2] = {NIN, NHID}, B1_SHAPE[1] = {NHID};
static const int64_t W2_SHAPE[2] = {NHID, NOUT}, B2_SHAPE[1] = {NOUT};

/* ---- the model: forward written with ops, shared by both modes ------------- */

/* loss = sum((relu(x W1 + b1) W2 + b2 - y)^2); any of w1, b1, w2, b2 may be
 * symbolic (graph) or an eager Variable's value. '*loss' owned. */
static MfStatus forward(MfTensor *x, MfTensor *y, MfTensor *const *p, MfTensor **loss)
{
    MfTensor *t[7] = {NULL};
    MfStatus st = mf_binary(MF_OP_MATMUL, x, p[0], &t[0]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_ADD, t[0], p[1], &t[1]);
    if (st == MF_OK)
        st = mf_unary(MF_OP_RELU, t[1], &t[2]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_MATMUL, t[2], p[2], &t[3]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_ADD, t[3], p[3], &t[4]);
    if (st == MF_OK)
        st = mf_binary(MF_OP_SUB, t[4], y, &t[5]);
    if (st == MF_OK)
        st = mf_unary(MF_OP_SQUARE, t[5], &t[6]);
    if (st == MF_OK)
        st = mf_reduce(MF_OP_SUM, t[6], NULL, 0, false, loss);
    for (int i = 0; i < 7; i++)
        mf_tensor_release(t[i]);
    return st;
}

/* ---- eager ------------------------------------------------------------------ */

typedef struct Eager {
    MfTensor *x, *y;
    MfVariable *v[4];
    MfOptimizer *opt;
} Eager;

static void eager_new(Eager *m)
{
    const int64_t *shapes[4] = {W1_SHAPE, B1_SHAPE, W2_SHAPE, B2_SHAPE};
    const int ranks[4] = {2, 1, 2, 1};
    m->x = filled(1, 2, X_SHAPE);
    m->y = filled(2, 2, Y_SHAPE);
    for (int i = 0; i < 4; i++) {
        MfTensor *init = filled(3 + i, ranks[i], shapes[i]);
        m->v[i] = mf_variable_new(init, NULL, true);
        assert_non_null(m->v[i]);
        mf_tensor_release(init);
    }
    MfOptConfig cfg = mf_opt_config_default(MF_OPT_ADAM, 0.01);
    m->opt = mf_optimizer_new(&cfg);
    assert_non_null(m->opt);
}

static void eager_free(Eager *m)
{
    mf_optimizer_release(m->opt);
    for (int i = 0; i < 4; i++)
        mf_variable_release(m->v[i]);
    mf_tensor_release(m->x);
    mf_tensor_release(m->y);
}

static MfStatus eager_loss(void *ctx, MfTensor **loss)
{
    Eager *m = ctx;
    MfTensor *p[4];
    for (int i = 0; i < 4; i++)
        p[i] = mf_variable_read(m->v[i]);
    return forward(m->x, m->y, p, loss);
}

/* One training step: loss under a tape, gradients, Adam apply. '*loss' is
 * the loss value (NAN when the step failed). */
static MfStatus eager_step(Eager *m, double *loss)
{
    MfTensor *l = NULL;
    MfGradVar *pairs = NULL;
    int n = 0;
    *loss = (double)NAN;
    MfStatus st = mf_train_compute_gradients(eager_loss, m, 4, m->v, &l, &pairs, &n);
    if (st == MF_OK)
        st = mf_optimizer_apply(m->opt, n, pairs, NULL, NULL);
    if (st == MF_OK)
        *loss = mf_tensor_get(l, 0);
    mf_grad_vars_free(pairs, n);
    mf_tensor_release(l);
    return st;
}

/* The values of every variable after a step, flattened. */
static int eager_values(Eager *m, double *out)
{
    int k = 0;
    for (int i = 0; i < 4; i++) {
        MfTensor *t = mf_variable_read(m->v[i]);
        for (int64_t j = 0; j < mf_tensor_numel(t); j++)
            out[k++] = mf_tensor_get(t, j);
    }
    return k;
}

/* A failed step reported MF_ENOMEM and said "out of memory". */
static void expect_oom(MfStatus st, int64_t n)
{
    if (st != MF_ENOMEM || !strstr(mf_err_msg(), "out of memory")) {
        print_error("allocation %lld: status %d, message '%s'\n", (long long)n, (int)st,
                    mf_err_msg());
        fail();
    }
    mf_err_clear();
}

static void test_eager_step_sweep(void **state)
{
    (void)state;
    Eager ref;
    double ref_loss, ref_vals[64];
    eager_new(&ref);    /* a warm-up step: first-use allocations are not per step */
    assert_int_equal(eager_step(&ref, &ref_loss), MF_OK);
    eager_free(&ref);
    eager_new(&ref);
    int64_t before = mf_alloc_count();
    assert_int_equal(eager_step(&ref, &ref_loss), MF_OK);
    int64_t total = mf_alloc_count() - before;
    int nvals = eager_values(&ref, ref_vals);
    eager_free(&ref);
    assert_true(total > 20);

    int64_t failures = 0;
    for (int64_t n = 1;; n++) {
        Eager m;
        double loss, vals[64];
        eager_new(&m);
        mf_alloc_fail_at(n);
        MfStatus st = eager_step(&m, &loss);
        mf_alloc_fail_at(0);
        eager_free(&m);
        if (st == MF_OK)
            break;       /* the step made fewer than n allocations */
        expect_oom(st, n);
        failures++;
        assert_int_equal(mf_tensor_live_count(), 0);
        /* the engine still trains, to the same values */
        eager_new(&m);
        assert_int_equal(eager_step(&m, &loss), MF_OK);
        assert_int_equal(eager_values(&m, vals), nvals);
        for (int i = 0; i < nvals; i++)
            assert_true(vals[i] == ref_vals[i]);
        assert_true(loss == ref_loss);
        eager_free(&m);
    }
    print_message("eager step: %lld allocations, each failed once\n", (long long)failures);
    assert_int_equal(failures, total);
}

/* ---- an all-or-nothing apply_gradients ------------------------------------- */

/* Every value one eager apply may write: the variables, their slots, the
 * beta powers and global_step, as raw bytes (bit-identical comparisons). */
typedef struct Snapshot {
    int n;
    size_t bytes[16];
    unsigned char data[16][256];
    bool present[16];
} Snapshot;

static void snap_one(Snapshot *s, const MfVariable *v)
{
    int k = s->n++;
    assert_true(k < 16);
    s->present[k] = v != NULL;
    s->bytes[k] = 0;
    if (!v)
        return;
    const MfTensor *t = v->value;
    s->bytes[k] = (size_t)mf_tensor_numel(t) * mf_dtype_size(t->dtype);
    assert_true(s->bytes[k] <= sizeof s->data[k] && mf_tensor_is_contiguous(t));
    memcpy(s->data[k], mf_tensor_data(t), s->bytes[k]);
}

static void snapshot(Eager *m, MfVariable *gs, Snapshot *s)
{
    const char *names[2];
    int nslots = mf_optimizer_slot_names(m->opt, names);
    s->n = 0;
    for (int i = 0; i < 4; i++) {
        snap_one(s, m->v[i]);
        for (int k = 0; k < nslots; k++) {
            MfVariable *slot = NULL;
            assert_int_equal(mf_optimizer_get_slot(m->opt, m->v[i], names[k], &slot), MF_OK);
            snap_one(s, slot);
        }
    }
    snap_one(s, mf_optimizer_nonslot(m->opt, "beta1_power"));
    snap_one(s, mf_optimizer_nonslot(m->opt, "beta2_power"));
    snap_one(s, gs);
}

static void expect_same(const Snapshot *a, const Snapshot *b, int64_t n)
{
    assert_int_equal(a->n, b->n);
    for (int k = 0; k < a->n; k++) {
        if (a->present[k] != b->present[k] || a->bytes[k] != b->bytes[k] ||
            memcmp(a->data[k], b->data[k], a->bytes[k]) != 0) {
            print_error("allocation %lld: value %d changed by a failed apply\n", (long long)n, k);
            fail();
        }
    }
}

static const char *kind_name(MfOptKind kind)
{
    static const char *const names[] = {"GradientDescent", "Momentum", "Adagrad", "RMSProp",
                                        "Adam", "Lion"};
    _Static_assert(MF_COUNTOF(names) == MF_OPT_NKINDS, "one name per MfOptKind");
    return names[kind];
}

static void eager_new_kind(Eager *m, MfOptKind kind)
{
    eager_new(m);
    mf_optimizer_release(m->opt);
    MfOptConfig cfg = mf_opt_config_default(kind, 0.01);
    cfg.momentum = 0.9;
    m->opt = mf_optimizer_new(&cfg);
    assert_non_null(m->opt);
}

static MfVariable *new_step(void)
{
    MfTensor *zero = mf_tensor_scalar(MF_INT64, 0);
    MfVariable *gs = mf_variable_new(zero, "global_step", false);
    mf_tensor_release(zero);
    assert_non_null(gs);
    return gs;
}

/* 'steps' applies (the last one under test) on a fresh model; the first
 * steps - 1 succeed. Returns the last status; '*before' is the state just
 * before the last apply, '*after' just after it. */
static MfStatus run_applies(MfOptKind kind, int steps, int64_t fail_at, Snapshot *before,
                            Snapshot *after, int64_t *nallocs)
{
    Eager m;
    eager_new_kind(&m, kind);
    MfVariable *gs = new_step();
    MfStatus st = MF_OK;
    for (int s = 1; s <= steps; s++) {
        MfTensor *l = NULL;
        MfGradVar *pairs = NULL;
        int n = 0;
        assert_int_equal(mf_train_compute_gradients(eager_loss, &m, 4, m.v, &l, &pairs, &n),
                         MF_OK);
        if (s == steps) {
            snapshot(&m, gs, before);
            int64_t count = mf_alloc_count();
            mf_alloc_fail_at(fail_at);
            st = mf_optimizer_apply(m.opt, n, pairs, NULL, gs);
            mf_alloc_fail_at(0);
            *nallocs = mf_alloc_count() - count;
            snapshot(&m, gs, after);
            if (st != MF_OK) {
                /* nothing changed, and the same step, retried, succeeds */
                expect_oom(st, fail_at);
                expect_same(after, before, fail_at);
                assert_int_equal(mf_optimizer_apply(m.opt, n, pairs, NULL, gs), MF_OK);
                snapshot(&m, gs, after);
            }
        } else {
            assert_int_equal(mf_optimizer_apply(m.opt, n, pairs, NULL, gs), MF_OK);
        }
        mf_grad_vars_free(pairs, n);
        mf_tensor_release(l);
    }
    mf_variable_release(gs);
    eager_free(&m);
    return st;
}

/* For every optimizer, the first apply (which makes the slots) and a later
 * one: each allocation fails once; the failed apply leaves every variable,
 * slot, beta power and global_step bit-identical (slots made by the failed
 * apply are dropped again), and the retried apply gives the reference. */
static void test_apply_all_or_nothing(void **state)
{
    (void)state;
    for (MfOptKind kind = MF_OPT_SGD; kind < MF_OPT_NKINDS; kind++) {
        for (int steps = 1; steps <= 2; steps++) {
            Snapshot ref_before, ref_after, before, after;
            int64_t total = 0, used = 0, failures = 0;
            assert_int_equal(run_applies(kind, steps, 0, &ref_before, &ref_after, &total),
                             MF_OK);
            for (int64_t n = 1; n <= total + 1; n++) {
                MfStatus st = run_applies(kind, steps, n, &before, &after, &used);
                expect_same(&before, &ref_before, n);
                expect_same(&after, &ref_after, n);
                failures += st != MF_OK;
                assert_int_equal(mf_tensor_live_count(), 0);
            }
            assert_true(total > 0);
            assert_int_equal(failures, total);
            assert_int_equal(mf_tensor_live_count(), 0);
            print_message("%s apply %d: %lld allocations, each failed once, nothing changed\n",
                          kind_name(kind), steps, (long long)total);
        }
    }
}

/* ---- graph ------------------------------------------------------------------ */

typedef struct GraphModel {
    MfGraph *g;
    MfSession *s;
    MfTensor *x_ph, *x, *loss;
    MfNode *vars[4], *init;
    MfTensor *updates[4];      /* the assign nodes' outputs */
} GraphModel;

static void graph_build(GraphModel *m)
{
    const int64_t *shapes[4] = {W1_SHAPE, B1_SHAPE, W2_SHAPE, B2_SHAPE};
    const int ranks[4] = {2, 1, 2, 1};
    m->g = mf_graph_new();
    assert_non_null(m->g);
    assert_int_equal(mf_graph_push_default(m->g), MF_OK);
    assert_int_equal(mf_graph_placeholder(m->g, MF_FLOAT32, 2, X_SHAPE, "x", &m->x_ph), MF_OK);
    MfTensor *y = filled(2, 2, Y_SHAPE), *p[4], *grads[4] = {NULL};
    for (int i = 0; i < 4; i++) {
        MfTensor *init = filled(3 + i, ranks[i], shapes[i]);
        assert_int_equal(mf_graph_variable(m->g, init, NULL, true, &m->vars[i]), MF_OK);
        mf_tensor_release(init);
        p[i] = mf_graph_output(m->vars[i], 0);
    }
    assert_int_equal(forward(m->x_ph, y, p, &m->loss), MF_OK);
    assert_int_equal(mf_graph_gradients(m->g, 1, &m->loss, 4, p, NULL, grads), MF_OK);
    MfTensor *lr = make_tensor(MF_FLOAT32, 0, NULL, (double[]){0.05});
    for (int i = 0; i < 4; i++) {
        MfTensor *step = NULL;
        assert_int_equal(mf_binary(MF_OP_MUL, grads[i], lr, &step), MF_OK);
        assert_int_equal(mf_graph_assign(m->vars[i], MF_ASSIGN_SUB, step, &m->updates[i]),
                         MF_OK);
        mf_tensor_release(step);
        mf_tensor_release(grads[i]);
        mf_tensor_release(p[i]);
    }
    mf_tensor_release(lr);
    mf_tensor_release(y);
    assert_int_equal(mf_graph_variables_initializer(m->g, 0, NULL, NULL, &m->init), MF_OK);
    mf_graph_pop_default();
    m->x = filled(1, 2, X_SHAPE);
    m->s = mf_session_new(m->g);
    assert_non_null(m->s);
}

static void graph_free(GraphModel *m)
{
    mf_session_free(m->s);
    for (int i = 0; i < 4; i++)
        mf_tensor_release(m->updates[i]);
    mf_tensor_release(m->loss);
    mf_tensor_release(m->x_ph);
    mf_tensor_release(m->x);
    mf_graph_release(m->g);
}

static void graph_init(GraphModel *m)
{
    assert_int_equal(mf_session_run(m->s, 0, NULL, 1, &m->init, 0, NULL, NULL, NULL, NULL,
                                    NULL), MF_OK);
}

/* One graph step: fetches the loss and the updated variables (running the
 * assigns); '*out' (5 owned values) on success. */
static MfStatus graph_step(GraphModel *m, MfTensor **out)
{
    MfTensor *fetch[5] = {m->loss, m->updates[0], m->updates[1], m->updates[2], m->updates[3]};
    for (int i = 0; i < 5; i++)
        out[i] = NULL;
    return mf_session_run(m->s, 5, fetch, 0, NULL, 1, &m->x_ph, &m->x, NULL, out, NULL);
}

static void release_all(MfTensor **t, int n)
{
    for (int i = 0; i < n; i++)
        mf_tensor_release(t[i]);
}

static void test_graph_step_sweep(void **state)
{
    (void)state;
    GraphModel m;
    graph_build(&m);
    graph_init(&m);
    MfTensor *ref[5];
    int64_t before = mf_alloc_count();
    assert_int_equal(graph_step(&m, ref), MF_OK);
    int64_t total = mf_alloc_count() - before;
    assert_true(total > 10);

    int64_t failures = 0;
    for (int64_t n = 1;; n++) {
        MfTensor *out[5];
        graph_init(&m);
        mf_alloc_fail_at(n);
        MfStatus st = graph_step(&m, out);
        mf_alloc_fail_at(0);
        if (st == MF_OK) {
            release_all(out, 5);
            break;
        }
        expect_oom(st, n);
        for (int i = 0; i < 5; i++)
            assert_null(out[i]);
        failures++;
        graph_init(&m);
        assert_int_equal(graph_step(&m, out), MF_OK);
        for (int i = 0; i < 5; i++) {
            double expect[64];
            int64_t k = mf_tensor_numel(ref[i]);
            for (int64_t j = 0; j < k; j++)
                expect[j] = mf_tensor_get(ref[i], j);
            assert_values(out[i], expect, k, 0);
        }
        release_all(out, 5);
    }
    print_message("graph step: %lld allocations, each failed once\n", (long long)failures);
    assert_int_equal(failures, total);
    release_all(ref, 5);
    graph_free(&m);
}

/* ---- a graph's whole life: build, gradients, initializer, session, runs ------ */

/* The concrete values the model is built from, made before a sweep starts. */
typedef struct BuildInputs {
    MfTensor *init[4], *y, *lr, *x;
} BuildInputs;

static void inputs_new(BuildInputs *in)
{
    const int64_t *shapes[4] = {W1_SHAPE, B1_SHAPE, W2_SHAPE, B2_SHAPE};
    const int ranks[4] = {2, 1, 2, 1};
    for (int i = 0; i < 4; i++)
        in->init[i] = filled(3 + i, ranks[i], shapes[i]);
    in->y = filled(2, 2, Y_SHAPE);
    in->lr = make_tensor(MF_FLOAT32, 0, NULL, (double[]){0.05});
    in->x = filled(1, 2, X_SHAPE);
}

static void inputs_free(BuildInputs *in)
{
    release_all(in->init, 4);
    mf_tensor_release(in->y);
    mf_tensor_release(in->lr);
    mf_tensor_release(in->x);
}

/* The SGD updates of 'vars': var -= lr * grad, their outputs in 'updates'. */
static MfStatus add_updates(MfNode **vars, MfTensor **grads, MfTensor *lr, MfTensor **updates)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < 4 && st == MF_OK; i++) {
        MfTensor *step = NULL;
        st = mf_binary(MF_OP_MUL, grads[i], lr, &step);
        if (st == MF_OK)
            st = mf_graph_assign(vars[i], MF_ASSIGN_SUB, step, &updates[i]);
        mf_tensor_release(step);
    }
    return st;
}

/* The graph of graph_build, every step allowed to fail (no assert): the
 * graph, its placeholder and variables, the forward ops, mf_graph_gradients,
 * the updates, the initializer and the session. 'm' zeroed first; on failure
 * what was made stays in 'm' for graph_free. */
static MfStatus graph_try_build(GraphModel *m, const BuildInputs *in)
{
    memset(m, 0, sizeof *m);
    MfTensor *p[4] = {NULL}, *grads[4] = {NULL};
    if (!(m->g = mf_graph_new()))
        return MF_ENOMEM;
    MfStatus st = mf_graph_push_default(m->g);
    if (st != MF_OK)
        return st;
    st = mf_graph_placeholder(m->g, MF_FLOAT32, 2, X_SHAPE, "x", &m->x_ph);
    for (int i = 0; i < 4 && st == MF_OK; i++) {
        st = mf_graph_variable(m->g, in->init[i], NULL, true, &m->vars[i]);
        if (st == MF_OK && !(p[i] = mf_graph_output(m->vars[i], 0)))
            st = MF_ENOMEM;
    }
    if (st == MF_OK)
        st = forward(m->x_ph, in->y, p, &m->loss);
    if (st == MF_OK)
        st = mf_graph_gradients(m->g, 1, &m->loss, 4, p, NULL, grads);
    if (st == MF_OK)
        st = add_updates(m->vars, grads, in->lr, m->updates);
    if (st == MF_OK)
        st = mf_graph_variables_initializer(m->g, 0, NULL, NULL, &m->init);
    mf_graph_pop_default();
    release_all(p, 4);
    release_all(grads, 4);
    if (st == MF_OK && !(m->s = mf_session_new(m->g)))
        st = MF_ENOMEM;
    return st;
}

/* Builds, initialises and runs one step: the step's 5 values in 'out'. */
static MfStatus graph_life(const BuildInputs *in, MfTensor **out)
{
    GraphModel m;
    for (int i = 0; i < 5; i++)
        out[i] = NULL;
    MfStatus st = graph_try_build(&m, in);
    m.x = in->x;
    mf_tensor_retain(m.x);
    if (st == MF_OK)
        st = mf_session_run(m.s, 0, NULL, 1, &m.init, 0, NULL, NULL, NULL, NULL, NULL);
    if (st == MF_OK)
        st = graph_step(&m, out);
    graph_free(&m);
    return st;
}

/* Every allocation of a graph's life fails once: building (names, nodes,
 * edges, control lists, Const nodes), mf_graph_gradients (its tables and
 * the backward nodes), the initializer, the session and the executor's
 * tables in both runs. Each failure is MF_ENOMEM "out of memory", and once
 * everything is freed the engine holds exactly the bytes it held before
 * (mf_alloc_in_use: graph memory is counted since it comes from the engine
 * allocator) and no tensor; the sweep ends with a life that succeeds and
 * gives the reference values. */
static void test_graph_build_sweep(void **state)
{
    (void)state;
    BuildInputs in;
    inputs_new(&in);
    MfTensor *ref[5], *out[5];
    assert_int_equal(graph_life(&in, ref), MF_OK);   /* also warms lazy global state */
    size_t base = mf_alloc_in_use();
    int64_t before = mf_alloc_count();
    assert_int_equal(graph_life(&in, out), MF_OK);
    int64_t total = mf_alloc_count() - before;
    release_all(out, 5);
    assert_int_equal(mf_alloc_in_use(), base);
    int64_t n = 1;
    for (;; n++) {
        mf_alloc_fail_at(n);
        MfStatus st = graph_life(&in, out);
        mf_alloc_fail_at(0);
        if (st == MF_OK)
            break;
        expect_oom(st, n);
        for (int i = 0; i < 5; i++)
            assert_null(out[i]);
        if (mf_alloc_in_use() != base) {
            print_error("allocation %lld: %zu bytes held after the failed life, %zu before\n",
                        (long long)n, mf_alloc_in_use(), base);
            fail();
        }
    }
    print_message("graph life: %lld allocations, each failed once\n", (long long)n - 1);
    assert_int_equal(n - 1, total);
    for (int i = 0; i < 5; i++) {
        double expect[64];
        int64_t k = mf_tensor_numel(ref[i]);
        for (int64_t j = 0; j < k; j++)
            expect[j] = mf_tensor_get(ref[i], j);
        assert_values(out[i], expect, k, 0);
    }
    release_all(out, 5);
    release_all(ref, 5);
    inputs_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_eager_step_sweep),
        TEST(test_graph_step_sweep),
        TEST(test_graph_build_sweep),
        TEST(test_apply_all_or_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
