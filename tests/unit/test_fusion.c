/* test_fusion.c — fused nodes (graph/fusion.h) give the bits the nodes give
 * one by one.
 *   - random chains of elementwise ops (unary and binary, reading earlier
 *     values and broadcast inputs), float32 and float64, some ended by a
 *     reduction, on shapes that take several blocks and a partial one: the
 *     fused run's result is memcmp-equal to the unfused run's, and the run
 *     did fuse (the schedule shows a Fused node); large groups share their
 *     blocks over the worker pool, with the same bits on 1, 2 and 3 threads;
 *   - what the pass leaves out: a value read outside the chain, a node in a
 *     control dependency, a value of a smaller shape;
 *   - runs that cannot use blocks (shapes known only when fed) fall back to
 *     the nodes one by one, with the same values and the same errors;
 *   - fetching or feeding an inner value runs that group unfused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/ops/reduce.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "graph/fusion.h"
#include "graph/graph.h"

static uint64_t rng_state;

static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

static MfTensor *random_tensor(MfDType dt, int rank, const int64_t *shape)
{
    MfTensor *t = mf_tensor_new(dt, rank, shape);
    assert_non_null(t);
    for (int64_t i = 0; i < mf_tensor_numel(t); i++)
        mf_tensor_set(t, i, ((double)(rnd() % 4001) - 2000.0) / 1000.0);
    return t;
}

static const MfOpId unary_ops[] = {MF_OP_TANH, MF_OP_SIGMOID, MF_OP_ERF, MF_OP_NEG,
                                   MF_OP_SQUARE, MF_OP_ABS, MF_OP_SIN, MF_OP_SOFTPLUS,
                                   MF_OP_RELU, MF_OP_EXP, MF_OP_ATAN, MF_OP_SQRT};
static const MfOpId binary_ops[] = {MF_OP_ADD, MF_OP_SUB, MF_OP_MUL, MF_OP_DIV, MF_OP_MAXIMUM,
                                    MF_OP_MINIMUM};

/* A graph: placeholders x (the full shape) and b (a broadcast shape), and a
 * chain of 'len' ops over them, maybe ended by a reduction; '*y' its end. */
typedef struct Chain {
    MfGraph *g;
    MfTensor *x, *b, *y, *xv, *bv;
} Chain;

static MfTensor *chain_step(MfTensor **vals, int n, MfTensor *b)
{
    MfTensor *out = NULL;
    if (rnd() % 2) {
        MfOpId op = unary_ops[rnd() % MF_COUNTOF(unary_ops)];
        MfTensor *a = vals[n - 1];
        if (op == MF_OP_EXP || op == MF_OP_SQRT)   /* keep values bounded (NaN is fine too) */
            assert_int_equal(mf_unary(MF_OP_TANH, a, &a), MF_OK);
        else
            mf_tensor_retain(a);
        assert_int_equal(mf_unary(op, a, &out), MF_OK);
        mf_tensor_release(a);
        return out;
    }
    MfOpId op = binary_ops[rnd() % MF_COUNTOF(binary_ops)];
    MfTensor *other = rnd() % 3 == 0 ? b : vals[rnd() % n];
    bool swap = rnd() % 2;
    assert_int_equal(mf_binary(op, swap ? other : vals[n - 1], swap ? vals[n - 1] : other, &out),
                     MF_OK);
    return out;
}

static void build_chain(Chain *c, MfDType dt, bool reduce, int64_t n0)
{
    /* n0 = 5: 21450 elements, 6 blocks of 31 rows of 130, one partial */
    const int64_t full[3] = {n0, 33, 130};
    int64_t bshapes[4][3] = {{130}, {33, 1}, {n0, 1, 1}, {1}};
    int bk = (int)(rnd() % 4), brank = bk == 0 ? 1 : bk == 1 ? 2 : bk == 2 ? 3 : 1;
    c->g = mf_graph_new();
    assert_non_null(c->g);
    assert_int_equal(mf_graph_placeholder(c->g, dt, 3, full, "x", &c->x), MF_OK);
    assert_int_equal(mf_graph_placeholder(c->g, dt, brank, bshapes[bk], "b", &c->b), MF_OK);
    c->xv = random_tensor(dt, 3, full);
    c->bv = random_tensor(dt, brank, bshapes[bk]);
    MfTensor *vals[16] = {c->x};
    mf_tensor_retain(c->x);
    int len = 2 + (int)(rnd() % 10), n = 1;
    assert_int_equal(mf_graph_push_default(c->g), MF_OK);
    for (; n <= len; n++)
        vals[n] = chain_step(vals, n, c->b);
    if (reduce) {
        int64_t axes[2] = {rnd() % 2, 2};   /* distinct axes */
        assert_int_equal(mf_reduce(rnd() % 2 ? MF_OP_SUM : MF_OP_MEAN, vals[n - 1], axes,
                                   1 + (int)(rnd() % 2), rnd() % 2, &vals[n]),
                         MF_OK);
        n++;
    }
    mf_graph_pop_default();
    c->y = vals[n - 1];
    for (int i = 0; i < n - 1; i++)
        mf_tensor_release(vals[i]);
}

static void chain_free(Chain *c)
{
    mf_tensor_release(c->x);
    mf_tensor_release(c->b);
    mf_tensor_release(c->y);
    mf_tensor_release(c->xv);
    mf_tensor_release(c->bv);
    mf_graph_release(c->g);
}

/* Runs 'c' (fusion on or off for its graph); '*fused' counts Fused steps. */
static MfTensor *run_chain(Chain *c, bool fusion, int *fused)
{
    MfTensor *keys[2] = {c->x, c->b}, *vals[2] = {c->xv, c->bv}, *res = NULL;
    MfSchedule *sched = NULL;
    MfExecOptions opt = {true, NULL, NULL};
    assert_int_equal(mf_graph_set_fusion(c->g, fusion), MF_OK);
    assert_int_equal(mf_exec_run(c->g, 1, &c->y, 0, NULL, 2, keys, vals, &opt, &res, &sched),
                     MF_OK);
    *fused = 0;
    for (int i = 0; i < sched->nsteps; i++)
        *fused += sched->steps[i].op && strncmp(sched->steps[i].op, "Fused[", 6) == 0;
    mf_schedule_free(sched);
    return res;
}

static void assert_same_bits(const MfTensor *a, const MfTensor *b)
{
    assert_int_equal(a->dtype, b->dtype);
    assert_true(mf_shape_equal_t(a, b));
    assert_true(mf_tensor_is_contiguous(a) && mf_tensor_is_contiguous(b));
    assert_memory_equal(mf_tensor_data(a), mf_tensor_data(b),
                        (size_t)mf_tensor_numel(a) * mf_dtype_size(a->dtype));
}

static void check_random_chains(MfDType dt, bool reduce)
{
    int ran_fused = 0;
    for (int seed = 1; seed <= 40; seed++) {
        rng_state = (uint64_t)seed * 7919u + (uint64_t)dt * 31u + reduce;
        Chain c;
        build_chain(&c, dt, reduce, 5);
        int fused_on, fused_off;
        MfTensor *with = run_chain(&c, true, &fused_on);
        MfTensor *without = run_chain(&c, false, &fused_off);
        assert_int_equal(fused_off, 0);
        ran_fused += fused_on > 0;
        assert_same_bits(with, without);
        mf_tensor_release(with);
        mf_tensor_release(without);
        chain_free(&c);
    }
    assert_true(ran_fused >= 30);   /* most chains have two nodes or more to fuse */
}

static void test_random_chains_float32(void **state)
{
    (void)state;
    check_random_chains(MF_FLOAT32, false);
}

static void test_random_chains_float64(void **state)
{
    (void)state;
    check_random_chains(MF_FLOAT64, false);
}

static void test_random_chains_reduced_float32(void **state)
{
    (void)state;
    check_random_chains(MF_FLOAT32, true);
}

static void test_random_chains_reduced_float64(void **state)
{
    (void)state;
    check_random_chains(MF_FLOAT64, true);
}

/* A group of 66,000 elements shares its blocks over the pool: 1, 2 and 3
 * threads (each taking one part) give the unfused bits. */
static void test_threads_same_bits(void **state)
{
    (void)state;
    int threads = mf_parallel_threads();
    mf_parallel_set_one_chunk_each(true);
    for (int seed = 1; seed <= 6; seed++) {
        rng_state = (uint64_t)seed * 104729u;
        Chain c;
        build_chain(&c, seed % 2 ? MF_FLOAT32 : MF_FLOAT64, seed > 3, 16);
        int fused;
        MfTensor *without = run_chain(&c, false, &fused);
        for (int t = 1; t <= 3; t++) {
            assert_int_equal(mf_parallel_set_threads(t), MF_OK);
            MfTensor *with = run_chain(&c, true, &fused);
            assert_true(fused >= 1);
            if (seed <= 3 && t > 1)   /* no reduction after it: its split was the last */
                assert_int_equal(mf_parallel_last_threads(), t);
            assert_same_bits(with, without);
            mf_tensor_release(with);
        }
        mf_tensor_release(without);
        chain_free(&c);
    }
    mf_parallel_set_one_chunk_each(false);
    assert_int_equal(mf_parallel_set_threads(threads), MF_OK);
}

/* ---- what the pass groups -------------------------------------------------- */

static MfTensor *un(MfOpId op, MfTensor *a)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_unary(op, a, &out), MF_OK);
    return out;
}

static MfTensor *bin(MfOpId op, MfTensor *a, MfTensor *b)
{
    MfTensor *out = NULL;
    assert_int_equal(mf_binary(op, a, b, &out), MF_OK);
    return out;
}

static int group_of(MfGraph *g, const MfTensor *t)
{
    const MfFusionPlan *plan;
    assert_int_equal(mf_fusion_plan_any(g, &plan), MF_OK);
    return plan->group_of[((const MfNode *)t->node)->index];
}

/* tanh(x) feeds a matmul too: it is not a member; a value of a smaller
 * shape (a reduction's input apart) stays out; a node with a control input
 * may only end a group: (t + mm) * 2 is one group, exp(..) + small, sin, cos
 * another. */
static void test_pass_groups(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    MfTensor *x, *v;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 2, (int64_t[]){4, 4}, "x", &x), MF_OK);
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 1, (int64_t[]){4}, "v", &v), MF_OK);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfTensor *t = un(MF_OP_TANH, x), *mm = NULL;
    assert_int_equal(mf_op1(MF_OP_MATMUL, 2, (MfTensor *[]){t, x}, NULL, &mm), MF_OK);
    MfTensor *s = bin(MF_OP_ADD, t, mm);             /* t read outside: not a member */
    MfTensor *two = mf_tensor_scalar(MF_FLOAT32, 2);
    MfTensor *m = bin(MF_OP_MUL, s, two), *e = un(MF_OP_EXP, m);
    MfTensor *small = un(MF_OP_NEG, v), *w = bin(MF_OP_ADD, e, small);  /* (4) into (4,4) */
    MfTensor *c = un(MF_OP_SIN, w);
    assert_int_equal(mf_graph_add_control(m->node, small->node), MF_OK);
    MfTensor *d = un(MF_OP_COS, c);
    mf_graph_pop_default();
    assert_int_equal(group_of(g, t), -1);
    assert_int_equal(group_of(g, small), -1);
    assert_true(group_of(g, s) >= 0);
    assert_int_equal(group_of(g, m), group_of(g, s));
    assert_true(group_of(g, e) >= 0 && group_of(g, e) != group_of(g, s));
    assert_int_equal(group_of(g, w), group_of(g, e));
    assert_int_equal(group_of(g, c), group_of(g, e));
    assert_int_equal(group_of(g, d), group_of(g, e));
    const MfFusionPlan *plan;
    assert_int_equal(mf_fusion_plan_any(g, &plan), MF_OK);
    assert_int_equal(plan->ngroups, 2);
    assert_string_equal(plan->groups[0].label, "Fused[AddV2, Mul]");
    assert_string_equal(plan->groups[1].label, "Fused[Exp, AddV2, Sin, Cos]");
    assert_int_equal(plan->groups[1].ninputs, 2);   /* m and small */
    /* a control edge added to a member later remakes the plan: sin leaves */
    assert_int_equal(mf_graph_add_control(d->node, c->node), MF_OK);
    assert_int_equal(mf_fusion_plan_any(g, &plan), MF_OK);
    assert_int_equal(plan->ngroups, 2);
    assert_string_equal(plan->groups[1].label, "Fused[Exp, AddV2, Sin]");
    MfTensor *all[] = {x, v, t, mm, s, two, m, e, small, w, c, d};
    for (size_t i = 0; i < MF_COUNTOF(all); i++)
        mf_tensor_release(all[i]);
    mf_graph_release(g);
}

/* A member may wait for what its group's last node waits for (nodes made
 * under one control dependency, as AdamW's finite check: x * 0 into a Sum):
 * a group of two, and its run gives the nodes' own bits after the control
 * input has run. A member waiting for a node the root does not wait for
 * stays out (test_pass_groups' m). */
static void test_shared_control_inputs_fuse(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    MfTensor *x, *before;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 2, (int64_t[]){3, 5}, "x", &x), MF_OK);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    before = un(MF_OP_NEG, x);
    MfTensor *half = mf_tensor_scalar(MF_FLOAT32, 0.5), *m = bin(MF_OP_MUL, x, half), *sum = NULL;
    MfAttrs a = mf_attrs_default();
    a.all_axes = true;
    assert_int_equal(mf_op1(MF_OP_SUM, 1, &m, &a, &sum), MF_OK);
    mf_graph_pop_default();
    assert_int_equal(mf_graph_add_control(m->node, before->node), MF_OK);
    assert_int_equal(mf_graph_add_control(sum->node, before->node), MF_OK);
    assert_true(group_of(g, m) >= 0);
    assert_int_equal(group_of(g, m), group_of(g, sum));
    const MfFusionPlan *plan;
    assert_int_equal(mf_fusion_plan_any(g, &plan), MF_OK);
    assert_int_equal(plan->ngroups, 1);
    assert_string_equal(plan->groups[0].label, "Fused[Mul, Sum]");
    MfTensor *xv = mf_tensor_new(MF_FLOAT32, 2, (int64_t[]){3, 5});
    float *p = mf_tensor_data(xv);
    for (int i = 0; i < 15; i++)
        p[i] = (float)i - 4.5f;
    MfTensor *out = NULL;
    MfSchedule *sched = NULL;
    MfExecOptions opt = {true, NULL, NULL};
    assert_int_equal(mf_exec_run(g, 1, &sum, 0, NULL, 1, &x, &xv, &opt, &out, &sched), MF_OK);
    assert_true(*(float *)mf_tensor_data(out) == 0.5f * (105 - 67.5f)); /* exact: halves */
    /* the group runs as one step, after the control input */
    int at_before = -1, at_group = -1, fused = 0;
    for (int i = 0; i < sched->nsteps; i++) {
        const MfSchedStep *st = &sched->steps[i];
        at_before = st->node == ((const MfNode *)before->node)->index ? i : at_before;
        at_group = st->node == ((const MfNode *)sum->node)->index ? i : at_group;
        fused += st->op && strcmp(st->op, "Fused[Mul, Sum]") == 0;
        assert_int_not_equal(st->node, ((const MfNode *)m->node)->index);
    }
    assert_int_equal(fused, 1);
    assert_true(at_before >= 0 && at_group > at_before);
    mf_schedule_free(sched);
    MfTensor *all[] = {x, before, half, m, sum, xv, out};
    for (size_t i = 0; i < MF_COUNTOF(all); i++)
        mf_tensor_release(all[i]);
    mf_graph_release(g);
}

/* ---- a reduction of every element, streamed ---------------------------------- */

/* Runs y = op(exp(x * 0.001)) over every axis of x (how: 0 no axes, 1 every
 * axis listed, 2 listed with keepdims) with fusion off, then on with 1, 2,
 * 3 and 16 threads (one part each): the same bits. The fused run streams
 * the blocks into the leaves of the reduction (graph/fusion_run.c), so its
 * peak of engine memory stays under half the elementwise result's size
 * (checked on up to 3 threads when that is 1 MiB or more: the result
 * written out would be all of it). */
static void check_streamed(MfDType dt, int rank, const int64_t *shape, MfOpId op, int how,
                           bool nan)
{
    MfGraph *g = mf_graph_new();
    MfTensor *x, *y = NULL;
    assert_int_equal(mf_graph_placeholder(g, dt, rank, shape, "x", &x), MF_OK);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfTensor *c = mf_tensor_scalar(dt, 0.001), *m = bin(MF_OP_MUL, x, c), *e = un(MF_OP_EXP, m);
    MfAttrs a = mf_attrs_default();
    a.all_axes = how == 0;
    a.keepdims = how == 2;
    a.naxes = how == 0 ? 0 : rank;
    for (int d = 0; d < a.naxes; d++)
        a.axes[d] = rank - 1 - d; /* listed last first */
    assert_int_equal(mf_op1(op, 1, &e, &a, &y), MF_OK);
    mf_graph_pop_default();
    MfTensor *xv = random_tensor(dt, rank, shape), *without = NULL;
    if (nan)
        mf_tensor_set(xv, mf_tensor_numel(xv) / 3, (double)NAN);
    assert_int_equal(mf_graph_set_fusion(g, false), MF_OK);
    assert_int_equal(mf_exec_run(g, 1, &y, 0, NULL, 1, &x, &xv, NULL, &without, NULL), MF_OK);
    assert_int_equal(mf_graph_set_fusion(g, true), MF_OK);
    size_t bytes = (size_t)mf_tensor_numel(xv) * mf_dtype_size(dt);
    int threads = mf_parallel_threads();
    mf_parallel_set_one_chunk_each(true);
    for (int t = 1; t <= 16; t = t == 3 ? 16 : t + 1) {
        assert_int_equal(mf_parallel_set_threads(t), MF_OK);
        MfTensor *with = NULL;
        MfSchedule *sched = NULL;
        MfExecOptions opt = {true, NULL, NULL};
        size_t before = mf_alloc_in_use();
        mf_alloc_reset_peak();
        assert_int_equal(mf_exec_run(g, 1, &y, 0, NULL, 1, &x, &xv, &opt, &with, &sched),
                         MF_OK);
        size_t peak = mf_alloc_peak() - before;
        int fused = 0;
        for (int i = 0; i < sched->nsteps; i++)
            fused += sched->steps[i].op && strncmp(sched->steps[i].op, "Fused[", 6) == 0;
        mf_schedule_free(sched);
        assert_int_equal(fused, 1);
        if (bytes >= (1 << 20) && t <= 3) /* 16 parts' blocks take more */
            assert_true(peak < bytes / 2);
        assert_same_bits(with, without);
        mf_tensor_release(with);
    }
    mf_parallel_set_one_chunk_each(false);
    assert_int_equal(mf_parallel_set_threads(threads), MF_OK);
    MfTensor *all[] = {x, c, m, e, y, xv, without};
    for (size_t i = 0; i < MF_COUNTOF(all); i++)
        mf_tensor_release(all[i]);
    mf_graph_release(g);
}

/* Every reduction kind, float32 and float64, on shapes whose blocks cut the
 * leaves anywhere: blocks of 31 rows of 130 (16 x 33 x 130), of 4096 and of
 * 1 element (9 x 1 x 4097, an axis of 1), of 4000 (300 x 1000, 2.4 MB in
 * float64: the memory check), a row shorter than a leaf (1 x 700), and a
 * NaN for max and min; with 16 threads a part is shorter than a leaf. */
static void test_reduction_of_every_element_streams(void **state)
{
    (void)state;
    static const MfOpId ops[] = {MF_OP_SUM, MF_OP_MEAN, MF_OP_MAX, MF_OP_MIN, MF_OP_PROD};
    static const int64_t shapes[][3] = {{16, 33, 130}, {9, 1, 4097}, {300, 1000}, {1, 700}};
    static const int ranks[] = {3, 3, 2, 2};
    for (int dt = 0; dt < 2; dt++)
        for (size_t s = 0; s < MF_COUNTOF(shapes); s++)
            for (size_t o = 0; o < MF_COUNTOF(ops); o++)
                check_streamed(dt ? MF_FLOAT64 : MF_FLOAT32, ranks[s], shapes[s], ops[o],
                               (int)((s + o) % 3), false);
    check_streamed(MF_FLOAT32, 3, shapes[0], MF_OP_MAX, 0, true);
    check_streamed(MF_FLOAT32, 3, shapes[1], MF_OP_MIN, 1, true);
    check_streamed(MF_FLOAT64, 2, shapes[2], MF_OP_MAX, 2, true);
}

/* ---- a reduction over the leading dims, streamed ------------------------------ */

/* Runs y = op(exp(x * 0.001) * w) over x's first 'nred' dims ('w' the last
 * dim's weights, broadcast: the layer-norm weight's gradient is such a sum)
 * with fusion off, then on with 1, 2, 3 and 16 threads: the same bits. The
 * fused run folds the blocks into the column accumulators as they come
 * (graph/fusion_run.c), so, when 'streamed', its peak of engine memory stays
 * under half the elementwise result's size (it is 1 MiB or more). */
static void check_columns(MfDType dt, int rank, const int64_t *shape, int nred, MfOpId op,
                          bool keepdims, bool streamed)
{
    MfGraph *g = mf_graph_new();
    MfTensor *x, *y = NULL;
    assert_int_equal(mf_graph_placeholder(g, dt, rank, shape, "x", &x), MF_OK);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfTensor *w = random_tensor(dt, 1, shape + rank - 1), *c = mf_tensor_scalar(dt, 0.001);
    MfTensor *m = bin(MF_OP_MUL, x, c), *e = un(MF_OP_EXP, m), *p = bin(MF_OP_MUL, e, w);
    MfAttrs a = mf_attrs_default();
    a.keepdims = keepdims;
    a.naxes = nred;
    for (int d = 0; d < nred; d++)
        a.axes[d] = d;
    assert_int_equal(mf_op1(op, 1, &p, &a, &y), MF_OK);
    mf_graph_pop_default();
    MfTensor *xv = random_tensor(dt, rank, shape), *without = NULL;
    assert_int_equal(mf_graph_set_fusion(g, false), MF_OK);
    assert_int_equal(mf_exec_run(g, 1, &y, 0, NULL, 1, &x, &xv, NULL, &without, NULL), MF_OK);
    assert_int_equal(mf_graph_set_fusion(g, true), MF_OK);
    size_t bytes = (size_t)mf_tensor_numel(xv) * mf_dtype_size(dt);
    int threads = mf_parallel_threads();
    for (int t = 1; t <= 16; t = t == 3 ? 16 : t + 1) {
        assert_int_equal(mf_parallel_set_threads(t), MF_OK);
        MfTensor *with = NULL;
        size_t before = mf_alloc_in_use();
        mf_alloc_reset_peak();
        assert_int_equal(mf_exec_run(g, 1, &y, 0, NULL, 1, &x, &xv, NULL, &with, NULL), MF_OK);
        size_t peak = mf_alloc_peak() - before;
        if (streamed)
            assert_true(peak < bytes / 2);
        assert_same_bits(with, without);
        mf_tensor_release(with);
    }
    assert_int_equal(mf_parallel_set_threads(threads), MF_OK);
    MfTensor *all[] = {x, w, c, m, e, p, y, xv, without};
    for (size_t i = 0; i < MF_COUNTOF(all); i++)
        mf_tensor_release(all[i]);
    mf_graph_release(g);
}

/* Sum over the leading dims of (B, T, C) as the layer-norm weight's
 * gradient is (12 x 64 x 128: blocks of 32 whole rows); blocks of 111 rows
 * of 33 columns (5 x 37 x 33: the groups of 8 rows cut by every block, 32
 * columns in vectors and one alone); a dim of 1 among the reduced ones; 7
 * rows (one short group); blocks of 2 rows of 1500 (40 x 30 x 50 over the
 * first); 2 MiB of float64 and 1 MiB of float32 (the memory check); every
 * kind, keepdims; and blocks that cut a row (3 x 5000), which the columns
 * cannot take: the result is written, with the same bits. */
static void test_reduction_over_leading_dims_streams(void **state)
{
    (void)state;
    static const MfOpId ops[] = {MF_OP_SUM, MF_OP_MEAN, MF_OP_MAX, MF_OP_MIN, MF_OP_PROD};
    static const int64_t s1[] = {12, 64, 128}, s2[] = {5, 37, 33}, s3[] = {6, 1, 50, 70};
    static const int64_t s4[] = {7, 300}, s5[] = {512, 512}, s6[] = {40, 30, 50};
    static const int64_t s7[] = {3, 5000};
    for (int dt = 0; dt < 2; dt++)
        for (size_t o = 0; o < MF_COUNTOF(ops); o++) {
            MfDType t = dt ? MF_FLOAT64 : MF_FLOAT32;
            check_columns(t, 3, s1, 2, ops[o], o % 2, false);
            check_columns(t, 3, s2, 2, ops[o], o % 2 == 0, false);
            check_columns(t, 4, s3, 3, ops[o], false, false);
            check_columns(t, 2, s4, 1, ops[o], true, false);
        }
    check_columns(MF_FLOAT32, 3, s1, 2, MF_OP_SUM, false, false);
    check_columns(MF_FLOAT64, 2, s5, 1, MF_OP_SUM, false, true);
    check_columns(MF_FLOAT32, 2, s5, 1, MF_OP_MEAN, true, true);
    check_columns(MF_FLOAT32, 3, s6, 1, MF_OP_SUM, false, false);
    check_columns(MF_FLOAT32, 2, s7, 1, MF_OP_SUM, false, false);
}

/* ---- runs that cannot use blocks, and inner values fetched or fed ----------- */

/* Placeholders of any shape: tanh(a) * b is a group, whose blocks need
 * both values of one shape. a (1) and b (5): the nodes run one by one and
 * give the unfused bits; a (3) and b (4): the error is the unfused one. */
static void test_fallback_same_values_and_errors(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    MfTensor *a, *b;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT64, 1, (int64_t[]){-1}, "a", &a), MF_OK);
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT64, 1, (int64_t[]){-1}, "b", &b), MF_OK);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfTensor *t = un(MF_OP_TANH, a), *y = bin(MF_OP_MUL, t, b);
    mf_graph_pop_default();
    assert_true(group_of(g, t) >= 0);
    MfTensor *keys[2] = {a, b};
    MfTensor *av = random_tensor(MF_FLOAT64, 1, (int64_t[]){1});
    MfTensor *bv = random_tensor(MF_FLOAT64, 1, (int64_t[]){5});
    MfTensor *vals[2] = {av, bv}, *with = NULL, *without = NULL;
    assert_int_equal(mf_exec_run(g, 1, &y, 0, NULL, 2, keys, vals, NULL, &with, NULL), MF_OK);
    assert_int_equal(mf_graph_set_fusion(g, false), MF_OK);
    assert_int_equal(mf_exec_run(g, 1, &y, 0, NULL, 2, keys, vals, NULL, &without, NULL),
                     MF_OK);
    assert_same_bits(with, without);
    mf_tensor_release(with);
    mf_tensor_release(without);
    mf_tensor_release(av);
    av = random_tensor(MF_FLOAT64, 1, (int64_t[]){3});
    vals[0] = av;
    char msg[512];
    assert_int_equal(mf_exec_run(g, 1, &y, 0, NULL, 2, keys, vals, NULL, &with, NULL),
                     MF_ESHAPE);
    snprintf(msg, sizeof msg, "%s", mf_err_msg());
    mf_err_clear();
    assert_int_equal(mf_graph_set_fusion(g, true), MF_OK);
    assert_int_equal(mf_exec_run(g, 1, &y, 0, NULL, 2, keys, vals, NULL, &with, NULL),
                     MF_ESHAPE);
    assert_string_equal(mf_err_msg(), msg);
    MfTensor *all[] = {a, b, t, y, av, bv};
    for (size_t i = 0; i < MF_COUNTOF(all); i++)
        mf_tensor_release(all[i]);
    mf_graph_release(g);
}

/* exp(sin(x) + 1): fetching sin(x) with the end, or feeding it, gives the
 * values the unfused graph gives. */
static void test_inner_value_fetched_or_fed(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    MfTensor *x;
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 1, (int64_t[]){3}, "x", &x), MF_OK);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfTensor *one = mf_tensor_scalar(MF_FLOAT32, 1);
    MfTensor *s = un(MF_OP_SIN, x), *p = bin(MF_OP_ADD, s, one), *y = un(MF_OP_EXP, p);
    mf_graph_pop_default();
    MfTensor *xv = make_tensor(MF_FLOAT32, 1, (int64_t[]){3}, (double[]){0, 1, 2});
    MfTensor *fetch[2] = {y, s}, *res[2] = {NULL, NULL};
    assert_int_equal(mf_exec_run(g, 2, fetch, 0, NULL, 1, &x, &xv, NULL, res, NULL), MF_OK);
    MfTensor *es = un(MF_OP_SIN, xv), *ep = bin(MF_OP_ADD, es, one), *ey = un(MF_OP_EXP, ep);
    assert_same_bits(res[1], es);
    assert_same_bits(res[0], ey);
    mf_tensor_release(res[0]);
    mf_tensor_release(res[1]);
    MfTensor *sv = make_tensor(MF_FLOAT32, 1, (int64_t[]){3}, (double[]){0, 0, 1});
    assert_int_equal(mf_exec_run(g, 1, &y, 0, NULL, 1, &s, &sv, NULL, res, NULL), MF_OK);
    MfTensor *fp = bin(MF_OP_ADD, sv, one), *fy = un(MF_OP_EXP, fp);
    assert_same_bits(res[0], fy);
    mf_tensor_release(res[0]);
    MfTensor *all[] = {x, one, s, p, y, xv, sv, es, ep, ey, fp, fy};
    for (size_t i = 0; i < MF_COUNTOF(all); i++)
        mf_tensor_release(all[i]);
    mf_graph_release(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_random_chains_float32),
        TEST(test_random_chains_float64),
        TEST(test_random_chains_reduced_float32),
        TEST(test_reduction_of_every_element_streams),
        TEST(test_reduction_over_leading_dims_streams),
        TEST(test_random_chains_reduced_float64),
        TEST(test_threads_same_bits),
        TEST(test_pass_groups),
        TEST(test_shared_control_inputs_fuse),
        TEST(test_fallback_same_values_and_errors),
        TEST(test_inner_value_fetched_or_fed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
