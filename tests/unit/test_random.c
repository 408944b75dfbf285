/* test_random.c — the counter-based generator, the seed rule and the random
 * ops: known-answer vectors, reproducibility, statistics, ranges, shuffle
 * permutations (also of strided views), errors and out-of-memory paths;
 * graph nodes of random ops: fresh values on every run, the same sequence
 * in a fresh graph or random context (a session), the first run equal to
 * eager mode. */
#include "testutil.h"

#include "core/alloc.h"
#include "core/ops/random.h"
#include "core/rng.h"
#include "graph/graph.h"

static void test_philox_known_answers(void **state)
{
    (void)state;
    /* Random123's kat_vectors for philox4x32_10. */
    static const uint32_t ctr[3][4] = {{0, 0, 0, 0},
                                       {~0u, ~0u, ~0u, ~0u},
                                       {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}};
    static const uint32_t key[3][2] = {{0, 0}, {~0u, ~0u}, {0xa4093822, 0x299f31d0}};
    static const uint32_t want[3][4] = {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
                                        {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
                                        {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
    for (int i = 0; i < 3; i++) {
        uint32_t out[4];
        mf_philox4x32(ctr[i], key[i], out);
        for (int j = 0; j < 4; j++)
            assert_int_equal(out[j], want[i][j]);
    }
}

static void test_seed_rule(void **state)
{
    (void)state;
    mf_rng_set_global_seed(42);
    assert_true(mf_rng_has_global_seed());
    uint64_t a1 = mf_rng_op_seed(false, 0), a2 = mf_rng_op_seed(false, 0);
    uint64_t e1 = mf_rng_op_seed(true, 7);
    mf_rng_set_global_seed(42); /* resets the counter */
    assert_true(mf_rng_op_seed(true, 7) == e1); /* explicit: independent of the counter */
    assert_true(mf_rng_op_seed(false, 0) == a1);
    assert_true(mf_rng_op_seed(false, 0) == a2);
    assert_true(a1 != a2);
    assert_true(e1 != mf_rng_op_seed(true, 8));
    mf_rng_set_global_seed(43);
    assert_true(mf_rng_op_seed(true, 7) != e1);
    assert_true(mf_rng_op_seed(false, 0) != a1);
    mf_rng_clear_global_seed();
    assert_false(mf_rng_has_global_seed());
    uint64_t d = mf_rng_op_seed(true, 7);
    mf_rng_set_global_seed(MF_RNG_DEFAULT_GLOBAL_SEED);
    assert_true(mf_rng_op_seed(true, 7) == d);
    mf_rng_clear_global_seed();
    assert_true(mf_rng_op_seed(false, 0) != mf_rng_op_seed(false, 0));
}

static int same_values(const MfTensor *a, const MfTensor *b)
{
    if (a->dtype != b->dtype || mf_tensor_numel(a) != mf_tensor_numel(b))
        return 0;
    return memcmp(mf_tensor_data(a), mf_tensor_data(b),
                  (size_t)mf_tensor_numel(a) * mf_dtype_size(a->dtype)) == 0;
}

typedef MfStatus (*Gen)(int, const int64_t *, MfDType, double, double, uint64_t, MfTensor **);

/* Same seed: identical; other seed: different; a prefix of a longer
 * tensor: identical (element i depends only on (seed, i)). */
static void check_reproducible(Gen gen, MfDType dt, double a, double b)
{
    int64_t s[2] = {3, 5}, longer = 40;
    MfTensor *x = NULL, *y = NULL, *z = NULL, *w = NULL;
    assert_int_equal(gen(2, s, dt, a, b, 1234, &x), MF_OK);
    assert_int_equal(gen(2, s, dt, a, b, 1234, &y), MF_OK);
    assert_int_equal(gen(2, s, dt, a, b, 1235, &z), MF_OK);
    assert_int_equal(gen(1, &longer, dt, a, b, 1234, &w), MF_OK);
    assert_true(same_values(x, y));
    assert_false(same_values(x, z));
    assert_int_equal(x->rank, 2);
    assert_int_equal(x->shape[1], 5);
    assert_int_equal(x->dtype, dt);
    for (int64_t i = 0; i < 15; i++)
        assert_true(mf_tensor_get(x, i) == mf_tensor_get(w, i));
    mf_tensor_release(x);
    mf_tensor_release(y);
    mf_tensor_release(z);
    mf_tensor_release(w);
}

static void test_reproducible(void **state)
{
    (void)state;
    check_reproducible(mf_random_normal, MF_FLOAT32, 0, 1);
    check_reproducible(mf_random_normal, MF_FLOAT64, 1, 2);
    check_reproducible(mf_random_truncated_normal, MF_FLOAT32, 0, 1);
    check_reproducible(mf_random_uniform, MF_FLOAT32, -1, 1);
    check_reproducible(mf_random_uniform, MF_FLOAT64, 0, 1);
    check_reproducible(mf_random_uniform, MF_INT32, -5, 1000);
    check_reproducible(mf_random_uniform, MF_INT64, 0, 1e12);
}

static void moments(const MfTensor *t, double *mean, double *sd, double *lo, double *hi)
{
    int64_t n = mf_tensor_numel(t);
    double s = 0, s2 = 0;
    *lo = DINF;
    *hi = -DINF;
    for (int64_t i = 0; i < n; i++) {
        double v = mf_tensor_get(t, i);
        s += v;
        s2 += v * v;
        *lo = v < *lo ? v : *lo;
        *hi = v > *hi ? v : *hi;
    }
    *mean = s / (double)n;
    *sd = sqrt(s2 / (double)n - *mean * *mean);
}

static void test_normal_statistics(void **state)
{
    (void)state;
    int64_t n = 100001; /* odd: the last pair is cut */
    MfTensor *t = NULL;
    double mean, sd, lo, hi;
    assert_int_equal(mf_random_normal(1, &n, MF_FLOAT64, 2.0, 3.0, 99, &t), MF_OK);
    moments(t, &mean, &sd, &lo, &hi);
    /* standard errors: 3/sqrt(1e5) ~ 0.0095 for the mean, ~0.0067 for sd */
    assert_true(fabs(mean - 2.0) < 0.05);
    assert_true(fabs(sd - 3.0) < 0.05);
    assert_true(lo < 2.0 - 3 * 3.0 && hi > 2.0 + 3 * 3.0);
    mf_tensor_release(t);
    assert_int_equal(mf_random_normal(1, &n, MF_FLOAT32, 0.0, 1.0, 5, &t), MF_OK);
    moments(t, &mean, &sd, &lo, &hi);
    assert_true(fabs(mean) < 0.02 && fabs(sd - 1.0) < 0.02);
    mf_tensor_release(t);
}

static void test_truncated_normal_range(void **state)
{
    (void)state;
    int64_t n = 100000;
    MfTensor *t = NULL;
    double mean, sd, lo, hi;
    assert_int_equal(mf_random_truncated_normal(1, &n, MF_FLOAT32, 1.0, 0.5, 3, &t), MF_OK);
    moments(t, &mean, &sd, &lo, &hi);
    assert_true(lo >= 1.0 - 2 * 0.5 - 1e-6 && hi <= 1.0 + 2 * 0.5 + 1e-6);
    assert_true(fabs(mean - 1.0) < 0.02);
    /* sd of N(0,1) truncated to [-2, 2] is 0.8796 */
    assert_true(fabs(sd - 0.5 * 0.8796) < 0.01);
    mf_tensor_release(t);
}

static void test_uniform_float_range(void **state)
{
    (void)state;
    int64_t n = 100003;
    MfTensor *t = NULL;
    double mean, sd, lo, hi;
    assert_int_equal(mf_random_uniform(1, &n, MF_FLOAT32, -1.0, 3.0, 11, &t), MF_OK);
    moments(t, &mean, &sd, &lo, &hi);
    assert_true(lo >= -1.0 && hi < 3.0);
    assert_true(fabs(mean - 1.0) < 0.03);
    assert_true(fabs(sd - 4.0 / sqrt(12.0)) < 0.02);
    mf_tensor_release(t);
    assert_int_equal(mf_random_uniform(1, &n, MF_FLOAT64, 0.0, 0.0, 11, &t), MF_OK);
    moments(t, &mean, &sd, &lo, &hi);
    assert_true(lo == 0.0 && hi == 0.0);
    mf_tensor_release(t);
}

static void test_uniform_int_range(void **state)
{
    (void)state;
    int64_t n = 10000;
    int counts[7] = {0};
    MfTensor *t = NULL;
    assert_int_equal(mf_random_uniform(1, &n, MF_INT32, -3, 4, 8, &t), MF_OK);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = mf_tensor_get_int(t, i);
        assert_true(v >= -3 && v < 4);
        counts[v + 3]++;
    }
    for (int k = 0; k < 7; k++)
        assert_true(counts[k] > 1200 && counts[k] < 1650); /* ~1429 each */
    mf_tensor_release(t);
    /* The widest int64 span (2^64 values) must not divide by zero. */
    assert_int_equal(mf_random_uniform(1, &n, MF_INT64, -9223372036854775808.0,
                                       9223372036854775808.0, 8, &t), MF_OK);
    int negatives = 0;
    for (int64_t i = 0; i < n; i++)
        negatives += mf_tensor_get_int(t, i) < 0;
    assert_true(negatives > 4500 && negatives < 5500);
    mf_tensor_release(t);
}

/* Every output row equals a distinct input row. */
static void assert_row_permutation(const MfTensor *in, const MfTensor *out)
{
    int64_t rows = in->shape[0], cols = mf_tensor_numel(in) / rows;
    int used[64] = {0};
    for (int64_t i = 0; i < rows; i++) {
        int64_t match = -1;
        for (int64_t r = 0; r < rows && match < 0; r++) {
            int eq = !used[r];
            for (int64_t j = 0; j < cols && eq; j++)
                eq = mf_tensor_get(out, i * cols + j) == mf_tensor_get(in, r * cols + j);
            match = eq ? r : -1;
        }
        assert_true(match >= 0);
        used[match] = 1;
    }
}

static void test_shuffle_permutes(void **state)
{
    (void)state;
    int64_t n = 50;
    double v[50];
    for (int i = 0; i < 50; i++)
        v[i] = i;
    MfTensor *t = make_tensor(MF_INT64, 1, &n, v), *a = NULL, *b = NULL, *c = NULL;
    assert_int_equal(mf_random_shuffle(t, 77, &a), MF_OK);
    assert_int_equal(mf_random_shuffle(t, 77, &b), MF_OK);
    assert_int_equal(mf_random_shuffle(t, 78, &c), MF_OK);
    assert_row_permutation(t, a);
    assert_true(same_values(a, b));
    assert_false(same_values(a, c));
    assert_false(same_values(a, t));
    mf_tensor_release(t);
    mf_tensor_release(a);
    mf_tensor_release(b);
    mf_tensor_release(c);
}

static void test_shuffle_strided_and_small(void **state)
{
    (void)state;
    int64_t s[2] = {3, 6}, ts[2] = {6, 3}, tstrides[2] = {1, 6};
    double v[18];
    for (int i = 0; i < 18; i++)
        v[i] = i;
    MfTensor *base = make_tensor(MF_FLOAT32, 2, s, v);
    MfTensor *tr = mf_tensor_view(base, 2, ts, tstrides, 0); /* the transpose, 6 x 3 */
    MfTensor *out = NULL, *scalar = mf_tensor_scalar(MF_BOOL, 1), *sout = NULL;
    assert_int_equal(mf_random_shuffle(tr, 5, &out), MF_OK);
    assert_int_equal(out->shape[0], 6);
    assert_row_permutation(tr, out);
    assert_int_equal(mf_random_shuffle(scalar, 5, &sout), MF_OK);
    assert_int_equal(sout->rank, 0);
    assert_int_equal(mf_tensor_get_int(sout, 0), 1);
    mf_tensor_release(base);
    mf_tensor_release(tr);
    mf_tensor_release(out);
    mf_tensor_release(scalar);
    mf_tensor_release(sout);
}

static void test_errors(void **state)
{
    (void)state;
    int64_t s[1] = {4}, big[2] = {1000000, 1000000}, nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    MfTensor *t = NULL;
    assert_int_equal(mf_random_normal(1, s, MF_INT32, 0, 1, 1, &t), MF_EDTYPE);
    assert_null(t);
    assert_error_contains("random.normal: expected dtype float32 or float64, got int32");
    assert_int_equal(mf_random_truncated_normal(1, s, MF_FLOAT32, 0, -1, 1, &t), MF_EARG);
    assert_error_contains("random.truncated_normal: mean must be finite and stddev finite");
    assert_int_equal(mf_random_uniform(1, s, MF_INT32, 5, 5, 1, &t), MF_EARG);
    assert_error_contains("random.uniform: expected integer minval < maxval within int32");
    assert_int_equal(mf_random_uniform(1, s, MF_INT64, 0.5, 5, 1, &t), MF_EARG);
    assert_error_contains("got minval 0.5, maxval 5");
    assert_int_equal(mf_random_uniform(1, s, MF_INT32, 0, 3e9, 1, &t), MF_EARG);
    assert_error_contains("within int32");
    assert_int_equal(mf_random_uniform(1, s, MF_FLOAT32, 2, 1, 1, &t), MF_EARG);
    assert_error_contains("random.uniform: expected finite minval <= maxval");
    assert_int_equal(mf_random_uniform(1, s, MF_BOOL, 0, 1, 1, &t), MF_EDTYPE);
    assert_error_contains("random.uniform: expected dtype float32, float64, int32 or int64, "
                          "got bool");
    assert_int_equal(mf_random_normal(2, big, MF_FLOAT32, 0, 1, 1, &t), MF_ENOMEM);
    assert_error_contains("random.normal: shape (1000000,1000000) of float32 is too large");
    assert_int_equal(mf_random_normal(9, nine, MF_FLOAT32, 0, 1, 1, &t), MF_ESHAPE);
    assert_error_contains("random.normal: rank must be 0..8, got 9");
    int64_t neg[1] = {-2};
    assert_int_equal(mf_random_uniform(1, neg, MF_FLOAT32, 0, 1, 1, &t), MF_ESHAPE);
    assert_error_contains("random.uniform: dimensions must be >= 0");
    assert_null(t);
}

/* Failing each allocation in turn must fail cleanly (teardown checks no
 * tensor leaks) and eventually succeed. */
static void test_out_of_memory(void **state)
{
    (void)state;
    int64_t s[2] = {8, 3};
    MfTensor *in = NULL;
    assert_int_equal(mf_random_normal(2, s, MF_FLOAT32, 0, 1, 1, &in), MF_OK);
    int ok = 0;
    for (int64_t k = 1; k <= 64 && !ok; k++) {  /* graph memory counts too */
        MfTensor *out = NULL;
        mf_alloc_fail_at(k);
        MfStatus st = mf_random_shuffle(in, 3, &out);
        mf_alloc_fail_at(0);
        if (st == MF_OK) {
            ok = 1;
            mf_tensor_release(out);
        } else {
            assert_int_equal(st, MF_ENOMEM);
            assert_null(out);
            mf_err_clear();
        }
    }
    assert_true(ok);
    mf_tensor_release(in);
    mf_alloc_fail_at(1);
    assert_int_equal(mf_random_uniform(2, s, MF_FLOAT64, 0, 1, 1, &in), MF_ENOMEM);
    mf_alloc_fail_at(0);
    assert_null(in);
}

static void test_op_table_entries(void **state)
{
    (void)state;
    static const MfOpId ids[] = {MF_OP_RANDOM_NORMAL, MF_OP_RANDOM_UNIFORM,
                                 MF_OP_RANDOM_UNIFORM_INT, MF_OP_TRUNCATED_NORMAL,
                                 MF_OP_RANDOM_SHUFFLE};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        const MfOpDesc *d = mf_op_table[ids[i]];
        assert_true(d->flags & MF_OP_RANDOM);
        assert_true(d->flags & MF_OP_NONDIFF);
        assert_null(d->backward);
        assert_int_equal(mf_op_find(d->name), ids[i]);
    }
    assert_int_equal(mf_op_find("RandomStandardNormal"), MF_OP_RANDOM_NORMAL);
    assert_int_equal(mf_op_table[MF_OP_RANDOM_SHUFFLE]->arity, 1);
    assert_int_equal(mf_op_table[MF_OP_RANDOM_UNIFORM]->arity, 0);
}

/* Run counters: eager (NULL) keeps the seed; a node's run 0 keeps it too,
 * later runs differ; a new context restarts the sequence and the old one
 * continues where it was. */
static void test_run_seed_counts_runs(void **state)
{
    (void)state;
    uint64_t s[6], k;
    assert_int_equal(mf_rng_run_seed("f", 99, NULL, &k), MF_OK);
    assert_true(k == 99);
    MfRngRuns *r = mf_rng_runs_new("f"), *r2 = mf_rng_runs_new("f");
    assert_non_null(r);
    assert_non_null(r2);
    for (int i = 0; i < 6; i++)
        assert_int_equal(mf_rng_run_seed("f", 99, r2, &s[i]), MF_OK);
    assert_true(s[0] == 99);
    for (int i = 0; i < 6; i++)
        for (int j = i + 1; j < 6; j++)
            assert_true(s[i] != s[j]);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(mf_rng_run_seed("f", 99, r, &k), MF_OK);
        assert_true(k == s[i]);
    }
    uint64_t a = mf_rng_context_new(), b = mf_rng_context_new();
    assert_true(a != 0 && b != 0 && a != b);
    uint64_t prev = mf_rng_context_swap(a);
    assert_true(mf_rng_context() == a);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(mf_rng_run_seed("f", 99, r, &k), MF_OK);
        assert_true(k == s[i]);  /* context a starts at run 0 */
    }
    mf_rng_context_swap(b);     /* a third context: the counters grow */
    assert_int_equal(mf_rng_run_seed("f", 99, r, &k), MF_OK);
    assert_true(k == s[0]);
    mf_rng_context_swap(prev);
    assert_int_equal(mf_rng_run_seed("f", 99, r, &k), MF_OK);
    assert_true(k == s[3]);     /* the first context continues */
    mf_rng_runs_free(r);
    mf_rng_runs_free(r2);
    mf_rng_runs_free(NULL);
}

/* Out of memory: making counters, and a context's first run once the room
 * inside the block is used up; both report the function named. */
static void test_run_counters_out_of_memory(void **state)
{
    (void)state;
    mf_alloc_fail_at(1);
    assert_null(mf_rng_runs_new("random.normal"));
    mf_alloc_fail_at(0);
    assert_non_null(strstr(mf_err_msg(), "random.normal"));
    mf_err_clear();
    MfRngRuns *r = mf_rng_runs_new("random.normal");
    uint64_t k, prev = mf_rng_context();
    for (int i = 0; i < 2; i++) {
        mf_rng_context_swap(mf_rng_context_new());
        assert_int_equal(mf_rng_run_seed("random.normal", 5, r, &k), MF_OK);
    }
    mf_rng_context_swap(mf_rng_context_new());
    mf_alloc_fail_at(1);
    assert_int_equal(mf_rng_run_seed("random.normal", 5, r, &k), MF_ENOMEM);
    mf_alloc_fail_at(0);
    assert_non_null(strstr(mf_err_msg(), "random.normal"));
    mf_err_clear();
    assert_int_equal(mf_rng_run_seed("random.normal", 5, r, &k), MF_OK);
    assert_true(k == 5);        /* the failed run did not count */
    mf_rng_context_swap(prev);
    mf_rng_runs_free(r);
}

/* One random op of each kind, as a graph node (built while 'g' is the
 * default graph) or eagerly (g NULL); 'in' is RandomShuffle's input. */
static MfTensor *make_random(MfGraph *g, MfOpId op, MfTensor *in)
{
    MfAttrs a = mf_attrs_default();
    a.nints = 2;
    a.ints[0] = 4;
    a.ints[1] = 6;
    a.dtype = op == MF_OP_RANDOM_UNIFORM_INT ? MF_INT64 : MF_FLOAT32;
    a.scalar[0] = 0;
    a.scalar[1] = op == MF_OP_RANDOM_UNIFORM_INT ? 1000 : 1;
    a.seed = 4242;
    MfTensor *out = NULL;
    if (g)
        assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfStatus st = mf_op1(op, op == MF_OP_RANDOM_SHUFFLE, &in, &a, &out);
    if (g)
        mf_graph_pop_default();
    assert_int_equal(st, MF_OK);
    return out;
}

static MfTensor *run_node(MfGraph *g, MfTensor *node)
{
    MfTensor *r = NULL;
    assert_int_equal(mf_exec_run(g, 1, &node, 0, NULL, 0, NULL, NULL, NULL, &r, NULL), MF_OK);
    return r;
}

/* Each random op in a graph: run 1 equals eager, run 2 differs from it;
 * a fresh graph built alike repeats the sequence (a fresh process), and so
 * does a fresh context (a session) on the same graph; eager calls stay the
 * same. */
static void check_graph_runs(MfOpId op, MfTensor *in)
{
    MfGraph *g = mf_graph_new(), *g2 = mf_graph_new();
    MfTensor *node = make_random(g, op, in), *node2 = make_random(g2, op, in);
    MfTensor *eager = make_random(NULL, op, in), *eager2 = make_random(NULL, op, in);
    MfTensor *r1 = run_node(g, node), *r2 = run_node(g, node);
    MfTensor *f1 = run_node(g2, node2), *f2 = run_node(g2, node2);
    uint64_t prev = mf_rng_context_swap(mf_rng_context_new());
    MfTensor *c1 = run_node(g, node), *c2 = run_node(g, node);
    mf_rng_context_swap(prev);
    MfTensor *r3 = run_node(g, node);
    assert_true(same_values(eager, eager2));
    assert_true(same_values(r1, eager));
    assert_false(same_values(r1, r2));
    assert_false(same_values(r3, r1));
    assert_false(same_values(r3, r2));
    assert_true(same_values(f1, r1) && same_values(f2, r2));
    assert_true(same_values(c1, r1) && same_values(c2, r2));
    MfTensor *all[] = {node, node2, eager, eager2, r1, r2, f1, f2, c1, c2, r3};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mf_tensor_release(all[i]);
    mf_graph_release(g);
    mf_graph_release(g2);
}

static void test_graph_runs_draw_fresh_values(void **state)
{
    (void)state;
    int64_t s[2] = {24, 2};
    MfTensor *in = NULL;
    assert_int_equal(mf_random_normal(2, s, MF_FLOAT32, 0, 1, 1, &in), MF_OK);
    check_graph_runs(MF_OP_RANDOM_NORMAL, NULL);
    check_graph_runs(MF_OP_TRUNCATED_NORMAL, NULL);
    check_graph_runs(MF_OP_RANDOM_UNIFORM, NULL);
    check_graph_runs(MF_OP_RANDOM_UNIFORM_INT, NULL);
    check_graph_runs(MF_OP_RANDOM_SHUFFLE, in);
    mf_tensor_release(in);
}

/* Building a random node (its run counters included) when memory runs out
 * fails with MF_ENOMEM, leaks nothing, and eventually succeeds. */
static void test_graph_build_out_of_memory(void **state)
{
    (void)state;
    int ok = 0;
    for (int64_t k = 1; k <= 64 && !ok; k++) {  /* graph memory counts too */
        MfGraph *g = mf_graph_new();
        MfAttrs a = mf_attrs_default();
        a.scalar[1] = 1;
        MfTensor *out = NULL;
        assert_int_equal(mf_graph_push_default(g), MF_OK);
        mf_alloc_fail_at(k);
        MfStatus st = mf_op1(MF_OP_RANDOM_NORMAL, 0, NULL, &a, &out);
        mf_alloc_fail_at(0);
        mf_graph_pop_default();
        if (st == MF_OK) {
            ok = 1;
            MfTensor *r = run_node(g, out);
            assert_int_equal(r->rank, 0);
            mf_tensor_release(r);
            mf_tensor_release(out);
        } else {
            assert_int_equal(st, MF_ENOMEM);
            assert_null(out);
            mf_err_clear();
        }
        mf_graph_release(g);
    }
    assert_true(ok);
}

/* TensorFlow's maxval=None (NaN): 1 for floats, an error for integers,
 * with a concrete shape and with a shape tensor alike. */
static void test_uniform_default_maxval(void **state)
{
    (void)state;
    int64_t n = 64;
    MfTensor *t = NULL;
    assert_int_equal(mf_random_uniform(1, &n, MF_FLOAT64, 0, (double)NAN, 3, &t), MF_OK);
    for (int64_t i = 0; i < n; i++)
        assert_true(mf_tensor_get(t, i) >= 0 && mf_tensor_get(t, i) < 1);
    mf_tensor_release(t);
    assert_int_equal(mf_random_uniform(1, &n, MF_INT32, 0, (double)NAN, 3, &t), MF_EARG);
    assert_error_contains("random.uniform: maxval is required for integer dtypes (int32)");
    assert_null(t);
    int64_t one = 1;
    MfTensor *shape = make_tensor(MF_INT64, 1, &one, (double[]){4});
    assert_int_equal(mf_random_shaped_by(MF_OP_RANDOM_UNIFORM, shape, MF_INT64, 0, (double)NAN,
                                         3, &t),
                     MF_EARG);
    assert_error_contains("maxval is required");
    assert_int_equal(mf_random_shaped_by(MF_OP_RANDOM_UNIFORM, shape, MF_FLOAT32, 0, (double)NAN,
                                         3, &t),
                     MF_OK);
    assert_int_equal(mf_tensor_numel(t), 4);
    mf_tensor_release(t);
    mf_tensor_release(shape);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_philox_known_answers),
        TEST(test_seed_rule),
        TEST(test_reproducible),
        TEST(test_normal_statistics),
        TEST(test_truncated_normal_range),
        TEST(test_uniform_float_range),
        TEST(test_uniform_int_range),
        TEST(test_shuffle_permutes),
        TEST(test_shuffle_strided_and_small),
        TEST(test_errors),
        TEST(test_out_of_memory),
        TEST(test_op_table_entries),
        TEST(test_run_seed_counts_runs),
        TEST(test_run_counters_out_of_memory),
        TEST(test_graph_runs_draw_fresh_values),
        TEST(test_graph_build_out_of_memory),
        TEST(test_uniform_default_maxval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
