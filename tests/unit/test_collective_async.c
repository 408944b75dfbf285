/* test_collective_async.c — the nonblocking allreduce pair
 * (MPIAllreduceStart / MPIAllreduceWait, core/ops/collective.c) and how the
 * graph executor runs it (graph/exec.c), with a fake transport standing in
 * for MPI: it sums two copies of the input (a world of two identical
 * processes) and says a request is done only after a few tests. Checked:
 * the values; the start runs as soon as it is ready, ahead of other ready
 * nodes, the wait only when nothing else is ready; the transport is tested
 * between nodes meanwhile; a start with nothing else ready reduces at once
 * (blocking); nothing is left pending after a run, also when it fails (the
 * run's error message kept); eager calls. */
#include "testutil.h"

#include "core/alloc.h"
#include "core/collective.h"
#include "graph/graph.h"

typedef struct FakeReq {
    const MfTensor *in;
    MfTensor *out;
    int tests;
} FakeReq;

typedef struct Fake {
    int starts, tests, waits;
    int interrupt_at_start;   /* set mf_interrupted when starting */
} Fake;

static Fake fake;

static void sum_of_two(const MfTensor *in, MfTensor *out)
{
    for (int64_t i = 0; i < mf_tensor_numel(out); i++)
        ((double *)mf_tensor_data(out))[i] = 2 * mf_tensor_get(in, i);
}

static MfStatus fake_allreduce(void *self, const MfTensor *in, MfTensor *out, MfReduceOp op,
                               uint64_t sig)
{
    (void)self, (void)op, (void)sig;
    sum_of_two(in, out);
    return MF_OK;
}

static MfStatus fake_start(void *self, const MfTensor *in, MfTensor *out, MfReduceOp op,
                           uint64_t sig, void **req)
{
    (void)self, (void)op, (void)sig;
    FakeReq *r = mf_malloc(sizeof *r);
    if (!r)
        return MF_ENOMEM;
    *r = (FakeReq){in, out, 0};
    *req = r;
    fake.starts++;
    if (fake.interrupt_at_start)
        mf_interrupted = 1;
    return MF_OK;
}

static MfStatus fake_test(void *self, void *req, bool *done)
{
    (void)self;
    FakeReq *r = req;
    fake.tests++;
    *done = ++r->tests >= 3;
    return MF_OK;
}

static MfStatus fake_wait(void *self, void *req)
{
    (void)self;
    FakeReq *r = req;
    sum_of_two(r->in, r->out);   /* the result appears only now */
    fake.waits++;
    mf_free(r);
    return MF_OK;
}

static const MfCollective transport = {fake_allreduce, fake_start, fake_test, fake_wait, NULL, NULL};

static int setup(void **state)
{
    memset(&fake, 0, sizeof fake);
    mf_collective_set(&transport);
    return setup_engine(state);
}

static int teardown(void **state)
{
    mf_collective_set(NULL);
    mf_interrupted = 0;
    if (mf_collective_pending() != 0) {
        print_error("%d allreduces still pending\n", mf_collective_pending());
        return -1;
    }
    return teardown_engine(state);
}

#define CTEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

static MfTensor *unary(MfOpId op, MfTensor *x)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_op1(op, 1, &x, NULL, &out), MF_OK);
    return out;
}

/* y = wait(start(3 x)) + wait(start(sin(cos(sin(x))))), x a (3,) float64
 * placeholder: two buckets, as a backward pass has them; the chain (a
 * gradient still to compute) can run while the first one's allreduce is
 * under way, the second one starts with nothing left to overlap. */
enum { NPARTS = 8 };
typedef struct Net {
    MfGraph *g;
    MfTensor *x, *y, *parts[NPARTS];
} Net;

static void build(Net *n)
{
    n->g = mf_graph_new();
    assert_non_null(n->g);
    assert_int_equal(mf_graph_push_default(n->g), MF_OK);
    int64_t shape[1] = {3};
    assert_int_equal(mf_graph_placeholder(n->g, MF_FLOAT64, 1, shape, "x", &n->x), MF_OK);
    MfTensor *three = mf_tensor_scalar(MF_FLOAT64, 3);
    MfTensor *t = NULL;
    assert_int_equal(mf_binary(MF_OP_MUL, n->x, three, &t), MF_OK);
    mf_tensor_release(three);
    MfAttrs a = mf_attrs_default();
    a.reduce_op = MF_REDUCE_SUM;
    n->parts[0] = t;
    assert_int_equal(mf_op1(MF_OP_ALLREDUCE_START, 1, &n->parts[0], &a, &n->parts[1]), MF_OK);
    assert_int_equal(mf_op1(MF_OP_ALLREDUCE_WAIT, 1, &n->parts[1], &a, &n->parts[2]), MF_OK);
    n->parts[3] = unary(MF_OP_SIN, n->x);
    n->parts[4] = unary(MF_OP_COS, n->parts[3]);
    n->parts[5] = unary(MF_OP_SIN, n->parts[4]);
    assert_int_equal(mf_op1(MF_OP_ALLREDUCE_START, 1, &n->parts[5], &a, &n->parts[6]), MF_OK);
    assert_int_equal(mf_op1(MF_OP_ALLREDUCE_WAIT, 1, &n->parts[6], &a, &n->parts[7]), MF_OK);
    assert_int_equal(mf_binary(MF_OP_ADD, n->parts[2], n->parts[7], &n->y), MF_OK);
    mf_graph_pop_default();
}

static void unbuild(Net *n)
{
    mf_tensor_release(n->x);
    mf_tensor_release(n->y);
    for (int i = 0; i < NPARTS; i++)
        mf_tensor_release(n->parts[i]);
    mf_graph_release(n->g);
}

/* The step of the first ('last': the last) node of op 'op'. */
static int step_of(const MfGraph *g, const MfSchedule *s, const char *op, bool last)
{
    int at = -1;
    for (int i = 0; i < s->nsteps; i++)
        if (strcmp(mf_node_op_name(mf_graph_node(g, s->steps[i].node)), op) == 0 &&
            (last || at < 0))
            at = i;
    if (at < 0)
        fail_msg("no %s in the schedule", op);
    return at;
}

static void test_graph_overlap(void **state)
{
    (void)state;
    Net n;
    build(&n);
    const double xs[3] = {0.5, -1, 2};
    int64_t shape[1] = {3};
    MfTensor *xv = make_tensor(MF_FLOAT64, 1, shape, xs);
    MfExecOptions opt = {.schedule = true};
    MfTensor *y = NULL;
    MfSchedule *sched = NULL;
    assert_int_equal(mf_exec_run(n.g, 1, &n.y, 0, NULL, 1, &n.x, &xv, &opt, &y, &sched), MF_OK);
    double want[3];
    for (int i = 0; i < 3; i++)
        want[i] = 2 * 3 * xs[i] + 2 * sin(cos(sin(xs[i])));
    assert_values(y, want, 3, 1e-15);
    /* the first start ahead of the chain (its Sin was queued before it),
     * the waits after it */
    int first_start = step_of(n.g, sched, "MPIAllreduceStart", false);
    assert_true(first_start < step_of(n.g, sched, "Sin", false));
    int last_sin = step_of(n.g, sched, "Sin", true);
    assert_true(step_of(n.g, sched, "MPIAllreduceWait", false) > last_sin);
    assert_int_equal(step_of(n.g, sched, "AddV2", false), sched->nsteps - 1);
    /* the first tested between the nodes until done (3 tests) and waited
     * for; the second, with nothing left to overlap, reduced at once */
    assert_int_equal(fake.starts, 1);
    assert_int_equal(fake.tests, 3);
    assert_int_equal(fake.waits, 1);
    assert_int_equal(mf_collective_pending(), 0);
    mf_schedule_free(sched);
    mf_tensor_release(y);
    mf_tensor_release(xv);
    unbuild(&n);
}

/* A start with no other node ready has nothing to overlap: it reduces at
 * once through the blocking call (no request), and the wait passes its
 * result on. */
static void test_start_alone_is_immediate(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    assert_non_null(g);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    int64_t shape[1] = {2};
    MfTensor *x = NULL, *going = NULL, *y = NULL, *out = NULL;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT64, 1, shape, "x", &x), MF_OK);
    MfAttrs a = mf_attrs_default();
    assert_int_equal(mf_op1(MF_OP_ALLREDUCE_START, 1, &x, &a, &going), MF_OK);
    assert_int_equal(mf_op1(MF_OP_ALLREDUCE_WAIT, 1, &going, &a, &y), MF_OK);
    mf_graph_pop_default();
    const double xs[2] = {1, 2.5}, want[2] = {2, 5};
    MfTensor *xv = make_tensor(MF_FLOAT64, 1, shape, xs);
    assert_int_equal(mf_exec_run(g, 1, &y, 0, NULL, 1, &x, &xv, NULL, &out, NULL), MF_OK);
    assert_values(out, want, 2, 0);
    assert_int_equal(fake.starts, 0);
    assert_int_equal(fake.waits, 0);
    MfTensor *all[] = {x, going, y, out, xv};
    for (int i = 0; i < 5; i++)
        mf_tensor_release(all[i]);
    mf_graph_release(g);
}

/* A run that fails while an allreduce is under way completes it before
 * returning, and keeps its own error. */
static void test_failed_run_waits(void **state)
{
    (void)state;
    Net n;
    build(&n);
    int64_t shape[1] = {3};
    const double xs[3] = {1, 2, 3};
    MfTensor *xv = make_tensor(MF_FLOAT64, 1, shape, xs);
    MfTensor *y = NULL;
    fake.interrupt_at_start = 1;
    assert_int_equal(mf_exec_run(n.g, 1, &n.y, 0, NULL, 1, &n.x, &xv, NULL, &y, NULL),
                     MF_EINTR);
    assert_null(y);
    assert_non_null(strstr(mf_err_msg(), "interrupted"));
    assert_int_equal(fake.starts, 1);
    assert_int_equal(fake.waits, 1);
    assert_int_equal(mf_collective_pending(), 0);
    mf_tensor_release(xv);
    unbuild(&n);
}

/* Eager: the start returns at once, the wait gives the result; a wait on
 * a tensor no allreduce writes gives it back. Without a nonblocking
 * transport the start is the blocking reduction. */
static void test_eager(void **state)
{
    (void)state;
    int64_t shape[1] = {2};
    const double xs[2] = {1.5, -4};
    MfTensor *x = make_tensor(MF_FLOAT64, 1, shape, xs);
    MfAttrs a = mf_attrs_default();
    MfTensor *going = NULL, *sum = NULL, *same = NULL;
    assert_int_equal(mf_op1(MF_OP_ALLREDUCE_START, 1, &x, &a, &going), MF_OK);
    assert_int_equal(mf_collective_pending(), 1);
    assert_int_equal(mf_op1(MF_OP_ALLREDUCE_WAIT, 1, &going, &a, &sum), MF_OK);
    assert_int_equal(mf_collective_pending(), 0);
    const double want[2] = {3, -8};
    assert_values(sum, want, 2, 0);
    assert_int_equal(mf_op1(MF_OP_ALLREDUCE_WAIT, 1, &x, &a, &same), MF_OK);
    assert_values(same, xs, 2, 0);
    MfTensor *all[] = {going, sum, same};
    for (int i = 0; i < 3; i++)
        mf_tensor_release(all[i]);
    const MfCollective blocking = {fake_allreduce, NULL, NULL, NULL, NULL, NULL};
    mf_collective_set(&blocking);
    assert_int_equal(mf_op1(MF_OP_ALLREDUCE_START, 1, &x, &a, &going), MF_OK);
    assert_int_equal(mf_collective_pending(), 0);
    assert_values(going, want, 2, 0);
    mf_tensor_release(going);
    mf_tensor_release(x);
    mf_collective_set(&transport);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CTEST(test_graph_overlap),
        CTEST(test_start_alone_is_immediate),
        CTEST(test_failed_run_waits),
        CTEST(test_eager),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
