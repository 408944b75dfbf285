/* test_parallel.c — mf_parallel_for (core/parallel.c) and the kernels that
 * share their work among the BLAS threads (make test runs with 1 thread, so
 * these are the only tests of the split paths). moonflow's own kernels must
 * give exactly the results of 1 thread. A GEMM split over threads need not:
 * OpenBLAS picks its kernel path by the size of each piece, and its AVX2
 * (Haswell, Zen) kernels sum a narrower piece in another order than the
 * whole. Those results must agree within the rounding bound of a K-term dot
 * product, 2 * K * u * (|A||B|)_ij, where |A||B| is the same kernel run on
 * the inputs' absolute values (every kernel here is bilinear in them). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_* and gettid */
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "testutil.h"

#include "core/ops/compare.h"
#include "core/ops/conv.h"
#include "core/ops/linalg.h"
#include "core/ops/nn.h"
#include "core/ops/pool.h"
#include "core/ops/reduce.h"
#include "core/ops/view.h"
#include "core/parallel.h"

static int64_t *hits;

static void mark(void *ctx, int64_t b, int64_t e)
{
    (void)ctx;
    for (int64_t i = b; i < e; i++)
        hits[i]++;
}

/* A call from inside a chunk runs serially instead of waiting for itself. */
static void nested(void *ctx, int64_t b, int64_t e)
{
    (void)ctx;
    mf_parallel_for(e - b, 1, mark, NULL);
    (void)b;
}

/* Chunk 0 waits for chunk 1 to start: only a second thread running at the
 * same time can start it, so chunk 0 sees it only if the pool really runs
 * two threads at once. The wait gives up after ~20 s (a hang, not a
 * timing: the test then fails instead of blocking make test). */
static atomic_int chunk1_started;
static _Atomic(pthread_t) chunk_thread[2];

static void rendezvous(void *ctx, int64_t b, int64_t e)
{
    bool *met = ctx;
    (void)e;
    atomic_store(&chunk_thread[b], pthread_self());
    if (b == 1) {
        atomic_store(&chunk1_started, 1);
        return;
    }
    for (int i = 0; i < 20000 && !atomic_load(&chunk1_started); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    *met = atomic_load(&chunk1_started) == 1;
}

static void test_two_threads_run_at_once(void **state)
{
    (void)state;
    mf_parallel_set_threads(2);
    for (int each = 0; each <= 1; each++) {
        mf_parallel_set_one_chunk_each(each);
        for (int rep = 0; rep < 20; rep++) {
            bool met = false;
            atomic_store(&chunk1_started, 0);
            mf_parallel_for(2, 1, rendezvous, &met);
            assert_true(met);
            assert_false(pthread_equal(atomic_load(&chunk_thread[0]),
                                       atomic_load(&chunk_thread[1])));
            assert_int_equal(mf_parallel_last_threads(), 2);
        }
    }
    mf_parallel_set_one_chunk_each(false);
    mf_parallel_set_threads(1);
}

/* A worker still claiming from one job can take a chunk of the next:
 * mf_parallel_last_threads counted it only for the first job (so a job run
 * by two threads read as 1, about once in 3000 jobs). Many quick jobs in a
 * row, each needing both threads (chunk 0 waits for chunk 1 to start),
 * must each count 2. The wait yields the cpu, and gives up (fails) rather
 * than hang if chunk 1 never starts. */
static atomic_int quick_started;

static void quick_rendezvous(void *ctx, int64_t b, int64_t e)
{
    bool *met = ctx;
    (void)e;
    if (b == 1) {
        atomic_store(&quick_started, 1);
        return;
    }
    for (long i = 0; i < 100000000 && !atomic_load(&quick_started); i++)
        sched_yield();
    *met = atomic_load(&quick_started) == 1;
}

static void test_each_job_counts_its_threads(void **state)
{
    (void)state;
    mf_parallel_set_threads(2);
    int miscounted = 0;
    for (int rep = 0; rep < 50000; rep++) {
        bool met = false;
        atomic_store(&quick_started, 0);
        mf_parallel_for(2, 1, quick_rendezvous, &met);
        assert_true(met);
        miscounted += mf_parallel_last_threads() != 2;
    }
    assert_int_equal(miscounted, 0);
    mf_parallel_set_threads(1);
}

/* Chunk k of a job is worker k's, chunk 0 the caller's (parallel.c): with
 * the workers on time each thread gets the same part of the range in every
 * job, so a chain of ops finds its part in its core's cache. Chunk 0 waits
 * for chunks 1 and 2 to start, so all three threads take part; before,
 * a spinning worker took chunk 0 in 5-25% of 2-thread jobs. */
static atomic_int owners_started;
static _Atomic(pthread_t) owner_of[3];

static void owners_rendezvous(void *ctx, int64_t b, int64_t e)
{
    bool *met = ctx;
    (void)e;
    atomic_store(&owner_of[b], pthread_self());
    if (b > 0) {
        atomic_fetch_add(&owners_started, 1);
        return;
    }
    for (long i = 0; i < 100000000 && atomic_load(&owners_started) < 2; i++)
        sched_yield();
    *met = atomic_load(&owners_started) == 2;
}

static void test_each_thread_keeps_its_chunk(void **state)
{
    (void)state;
    mf_parallel_set_threads(3);
    pthread_t first[3];
    int moved = 0;
    for (int rep = 0; rep < 5000; rep++) {
        bool met = false;
        atomic_store(&owners_started, 0);
        mf_parallel_for(3, 1, owners_rendezvous, &met);
        assert_true(met);
        for (int k = 0; k < 3; k++) {
            pthread_t t = atomic_load(&owner_of[k]);
            if (rep == 0)
                first[k] = t;
            moved += !pthread_equal(t, first[k]);
        }
    }
    assert_true(pthread_equal(first[0], pthread_self()));
    assert_false(pthread_equal(first[1], first[2]));
    assert_int_equal(moved, 0);
    mf_parallel_set_threads(1);
}

/* With one chunk each, a worker that woke for a 2-chunk job and found none
 * left may claim its first chunk in the next job; it must not then take a
 * second (a 3-chunk job ran on 2 threads in CI). 2- and 3-chunk jobs in
 * turn: each 3-chunk job counts 3. */
static void spin_a_little(void *ctx, int64_t b, int64_t e)
{
    (void)ctx;
    volatile double s = 0;
    for (int64_t i = b * 1000; i < e * 1000; i++)
        s += (double)i;
}

static void test_one_chunk_each_after_a_smaller_job(void **state)
{
    (void)state;
    mf_parallel_set_threads(3);
    mf_parallel_set_one_chunk_each(true);
    int miscounted = 0;
    for (int rep = 0; rep < 20000; rep++) {
        mf_parallel_for(2, 1, spin_a_little, NULL);
        mf_parallel_for(3, 1, spin_a_little, NULL);
        miscounted += mf_parallel_last_threads() != 3;
    }
    mf_parallel_set_one_chunk_each(false);
    mf_parallel_set_threads(1);
    assert_int_equal(miscounted, 0);
}

static void test_every_index_once(void **state)
{
    (void)state;
    mf_parallel_set_threads(2);
    assert_int_equal(mf_parallel_threads(), 2);
    int64_t sizes[] = {0, 1, 7, 100, 4097};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int64_t n = sizes[s];
        hits = calloc((size_t)n + 1, sizeof *hits);
        assert_non_null(hits);
        for (int rep = 0; rep < 50; rep++)
            mf_parallel_for(n, 1, mark, NULL);
        for (int64_t i = 0; i < n; i++)
            assert_int_equal(hits[i], 50);
        free(hits);
    }
    hits = calloc(64, sizeof *hits);
    mf_parallel_for(64, 1, nested, NULL); /* each chunk marks [0, its length) */
    assert_int_equal(hits[0], 2);
    free(hits);
    mf_parallel_set_threads(1);
}

/* Each chunk notes the thread id and the cpu that ran it. */
static _Atomic pid_t chunk_tid[2];
static atomic_int chunk_cpu[2];

static void note_tid(void *ctx, int64_t b, int64_t e)
{
    (void)ctx;
    for (int64_t i = b; i < e; i++) {
        atomic_store(&chunk_tid[i], gettid());
        atomic_store(&chunk_cpu[i], sched_getcpu());
        hits[i]++;
    }
}

/* Runs a 2-chunk job, one chunk per thread; returns the worker's thread id
 * and sets *caller_cpu to the cpu the caller ran its chunk on. */
static pid_t two_chunk_job(int *caller_cpu)
{
    hits[0] = hits[1] = 0;
    mf_parallel_for(2, 1, note_tid, NULL);
    assert_int_equal(hits[0], 1);
    assert_int_equal(hits[1], 1);
    assert_int_equal(mf_parallel_last_threads(), 2);
    pid_t self = gettid(), a = atomic_load(&chunk_tid[0]), b = atomic_load(&chunk_tid[1]);
    assert_true(a == self || b == self);
    assert_true(a != b);
    *caller_cpu = atomic_load(&chunk_cpu[a == self ? 0 : 1]);
    return a == self ? b : a;
}

/* The pool keeps its worker off the caller's cpu (core/parallel.c,
 * keep_workers_off) and never restricts the caller: with several allowed
 * cpus the worker may run on all of them but the one the caller was on
 * (checked when the caller stayed on one cpu around the job: it is not
 * pinned). When the caller may use one cpu only (taskset), the worker gets
 * that cpu and the job still runs on two threads, every chunk once. On a
 * 1-cpu machine only the second case runs. */
static void test_worker_kept_off_callers_cpu(void **state)
{
    (void)state;
    cpu_set_t all, got;
    assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
    hits = calloc(2, sizeof *hits);
    assert_non_null(hits);
    mf_parallel_set_threads(2);
    mf_parallel_set_one_chunk_each(true);
    int checked = 0;
    for (int rep = 0; rep < 200 && CPU_COUNT(&all) > 1; rep++) {
        int before = sched_getcpu(), during;
        pid_t worker = two_chunk_job(&during);
        int after = sched_getcpu();
        assert_int_equal(sched_getaffinity(worker, sizeof got, &got), 0);
        assert_int_equal(CPU_COUNT(&got), CPU_COUNT(&all) - 1);
        cpu_set_t both;
        CPU_AND(&both, &got, &all);
        assert_true(CPU_EQUAL(&both, &got)); /* within the allowed cpus */
        if (before == during && during == after) {
            assert_false(CPU_ISSET(during, &got));
            checked++;
        }
        assert_int_equal(sched_getaffinity(0, sizeof got, &got), 0); /* ours untouched */
        assert_true(CPU_EQUAL(&got, &all));
    }
    assert_true(CPU_COUNT(&all) == 1 || checked > 0);
    int first = -1, last = -1, during;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            first = first < 0 ? c : first;
            last = c;
        }
    cpu_set_t one;
    if (first != last) { /* the caller then moves from 'first' to 'last': the pool sees it */
        CPU_ZERO(&one);
        CPU_SET(first, &one);
        assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
        two_chunk_job(&during);
    }
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    for (int rep = 0; rep < 5; rep++) {
        pid_t worker = two_chunk_job(&during);
        assert_int_equal(sched_getaffinity(worker, sizeof got, &got), 0);
        assert_true(CPU_EQUAL(&got, &one));
    }
    assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
    mf_parallel_set_one_chunk_each(false);
    mf_parallel_set_threads(1);
    free(hits);
}

/* A float32 tensor of 'shape' with values in [-1, 1) from a fixed LCG. */
static MfTensor *noise(int rank, const int64_t *shape, uint32_t seed)
{
    MfTensor *t = mf_tensor_new(MF_FLOAT32, rank, shape);
    assert_non_null(t);
    float *p = mf_tensor_data(t);
    for (int64_t i = 0; i < mf_tensor_numel(t); i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)(seed >> 8) / (float)(1u << 23) - 1.0f;
    }
    return t;
}

/* Bitwise equality; on a difference, releases both before failing so the
 * teardown reports the difference, not leaked tensors. */
static void assert_same_and_release(MfTensor *a, MfTensor *b)
{
    bool same = mf_tensor_numel(a) == mf_tensor_numel(b)
                && memcmp(mf_tensor_data(a), mf_tensor_data(b),
                          (size_t)mf_tensor_numel(a) * mf_dtype_size(a->dtype)) == 0;
    mf_tensor_release(a);
    mf_tensor_release(b);
    assert_true(same);
}

/* Runs 'k' (which makes '*out' from the inputs) with 1 and with 2 threads. */
typedef MfStatus (*Kernel)(MfTensor **in, MfTensor **out);

static void run_threads(Kernel k, MfTensor **in, int threads, MfTensor **out)
{
    mf_parallel_set_threads(threads);
    MfStatus st = k(in, out);
    mf_parallel_set_threads(1);
    assert_int_equal(st, MF_OK);
}

/* moonflow's own kernels: 2 threads give exactly the bits of 1. */
static void check_split(Kernel k, MfTensor **in)
{
    MfTensor *one = NULL, *two = NULL;
    run_threads(k, in, 1, &one);
    run_threads(k, in, 2, &two);
    assert_same_and_release(one, two);
}

/* A copy of 't' with every element replaced by its absolute value. */
static MfTensor *abs_of(const MfTensor *t)
{
    MfTensor *a = mf_tensor_new(t->dtype, t->rank, t->shape);
    assert_non_null(a);
    for (int64_t i = 0; i < mf_tensor_numel(t); i++) {
        if (t->dtype == MF_FLOAT64)
            ((double *)mf_tensor_data(a))[i] = fabs(((const double *)mf_tensor_data(t))[i]);
        else
            ((float *)mf_tensor_data(a))[i] = fabsf(((const float *)mf_tensor_data(t))[i]);
    }
    return a;
}

/* Kernels that sum 'terms' products per output element through OpenBLAS:
 * 1 and 2 threads agree within 2 * terms * u * (|A||B|)_ij. The count of
 * elements outside the bound is returned so that everything is released
 * before the assert. */
static int64_t outside_gemm_bound(Kernel k, MfTensor **in, int nin, int64_t terms)
{
    MfTensor *one = NULL, *two = NULL, *mag = NULL, *abs_in[3] = {NULL, NULL, NULL};
    run_threads(k, in, 1, &one);
    run_threads(k, in, 2, &two);
    for (int i = 0; i < nin; i++)
        abs_in[i] = in[i] ? abs_of(in[i]) : NULL;
    run_threads(k, abs_in, 1, &mag);
    double u = one->dtype == MF_FLOAT64 ? 0x1p-53 : 0x1p-24;
    int64_t bad = 0;
    for (int64_t i = 0; i < mf_tensor_numel(one); i++) {
        double bound = 2.0 * (double)terms * u * mf_tensor_get(mag, i) * (1.0 + 1e-6);
        if (!(fabs(mf_tensor_get(one, i) - mf_tensor_get(two, i)) <= bound)) {
            if (bad++ < 5)
                print_error("element %lld: 1 thread %.9g, 2 threads %.9g, bound %.3g\n",
                            (long long)i, mf_tensor_get(one, i), mf_tensor_get(two, i), bound);
        }
    }
    for (int i = 0; i < nin; i++)
        mf_tensor_release(abs_in[i]);
    mf_tensor_release(one);
    mf_tensor_release(two);
    mf_tensor_release(mag);
    return bad;
}

static void check_gemm_split(Kernel k, MfTensor **in, int nin, int64_t terms)
{
    assert_int_equal(outside_gemm_bound(k, in, nin, terms), 0);
}

/* BiasAdd's gradient: the sum over N, H, W per channel (columns split). */
static MfStatus channel_sum(MfTensor **in, MfTensor **out)
{
    return mf_reduce(MF_OP_SUM, in[0], (int64_t[]){0, 1, 2}, 3, false, out);
}

static MfStatus relu(MfTensor **in, MfTensor **out)
{
    return mf_unary(MF_OP_RELU, in[0], out);
}

static MfStatus relu_grad(MfTensor **in, MfTensor **out)
{
    return mf_relu_backprop(in[0], in[1], out);
}

/* MaxPoolGrad of 2x2 / 2 (windows tile the input) and 3x3 / 2 SAME (they
 * overlap); inputs x, y = max_pool(x), dy. */
static int64_t pool_k, pool_s;

/* A pk x pk window, stride ps, SAME: the pooling ops' attributes. */
static MfAttrs pool_attrs(void)
{
    MfAttrs a = mf_attrs_default();
    for (int i = 0; i < 4; i++)
        a.ksize[i] = a.strides[i] = 1;
    a.ksize[1] = a.ksize[2] = pool_k;
    a.strides[1] = a.strides[2] = pool_s;
    a.padding = 1;
    return a;
}

static MfStatus max_pool_grad(MfTensor **in, MfTensor **out)
{
    MfAttrs a = pool_attrs();
    return mf_op1(MF_OP_MAX_POOL_GRAD, 3, in, &a, out);
}

static MfStatus max_pool(MfTensor **in, MfTensor **out)
{
    MfAttrs a = pool_attrs();
    return mf_op1(MF_OP_MAX_POOL, 1, in, &a, out);
}

static MfStatus conv(MfTensor **in, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    a.padding = 1;
    return mf_conv2d(in[0], in[1], &a, false, out);
}

/* in[0] is x (8,32,32,16), in[1] the filter (3,3,16,8), in[2] dy (8,32,32,8) */
static MfStatus conv_input(MfTensor **in, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    a.padding = 1;
    return mf_conv2d_backprop_input(in[0]->shape, in[1], in[2], &a, false, out);
}

/* in[0] is x (8,32,32,16), in[2] dy (8,32,32,8): dW (3,3,16,8) */
static MfStatus conv_filter(MfTensor **in, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    a.padding = 1;
    return mf_conv2d_backprop_filter(in[0], (int64_t[]){3, 3, 16, 8}, in[2], &a, false, out);
}

/* A reduction (reduce_walk.c) with these parameters; no axes: all. */
static MfOpId red_op;
static int red_naxes;
static int64_t red_axes[3];

static MfStatus reduction(MfTensor **in, MfTensor **out)
{
    return mf_reduce(red_op, in[0], red_naxes ? red_axes : NULL, red_naxes, false, out);
}

/* 'k' on 2 and 3 threads, each taking one chunk: the bits of 1 thread, and
 * the work really was split (the reductions below are all large; a split
 * keeps 64k elements a thread, so a few may use only 2 of 3). */
static void check_split_123(Kernel k, MfTensor **in)
{
    MfTensor *one = NULL;
    run_threads(k, in, 1, &one);
    mf_parallel_set_one_chunk_each(true);
    for (int threads = 2; threads <= 3; threads++) {
        MfTensor *more = NULL, *again = mf_tensor_clone(one);
        assert_non_null(again);
        run_threads(k, in, threads, &more);
        int ran_on = mf_parallel_last_threads();
        assert_same_and_release(again, more);
        assert_in_range(ran_on, 2, threads);
    }
    mf_parallel_set_one_chunk_each(false);
    mf_tensor_release(one);
}

/* Every kind of reduction over first, middle, last, several and all axes,
 * of contiguous and transposed float32, float64 and int32 inputs: 1, 2 and
 * 3 threads give the same bits. (*) All the axes of the transposed input,
 * whose dims do not merge into one row, run on one thread. */
static void test_reductions_match_one_thread(void **state)
{
    (void)state;
    static const int64_t axes[][3] = {{0}, {1}, {2}, {0, 1}, {1, 2}, {0, 2}};
    static const int naxes[] = {1, 1, 1, 2, 2, 2, 0};
    static const MfOpId ops[] = {MF_OP_SUM, MF_OP_MEAN, MF_OP_MAX, MF_OP_MIN, MF_OP_PROD};
    MfTensor *x = noise(3, (int64_t[]){40, 64, 96}, 4), *xt = NULL, *in[1];
    assert_int_equal(mf_transpose(x, (int64_t[]){2, 0, 1}, 3, &xt), MF_OK);
    MfTensor *inputs[4] = {x, xt, NULL, NULL};
    assert_int_equal(mf_cast(x, MF_FLOAT64, &inputs[2]), MF_OK);
    inputs[3] = mf_tensor_new(MF_INT32, x->rank, x->shape);
    assert_non_null(inputs[3]);
    for (int64_t i = 0; i < mf_tensor_numel(x); i++) /* -1000 .. 999 */
        ((int32_t *)mf_tensor_data(inputs[3]))[i] = (int32_t)(mf_tensor_get(x, i) * 1000);
    for (int t = 0; t < 4; t++)
        for (int o = 0; o < 5; o++)
            for (int a = 0; a < 7 - (t == 1); a++) { /* (*) */
                red_op = ops[o];
                red_naxes = naxes[a];
                memcpy(red_axes, axes[a < 6 ? a : 0], sizeof red_axes);
                in[0] = inputs[t];
                check_split_123(reduction, in);
            }
    for (int t = 0; t < 4; t++)
        mf_tensor_release(inputs[t]);
    /* one long row, every element into one: the subtrees of its sum split */
    in[0] = noise(1, (int64_t[]){(1 << 20) + 37}, 5);
    for (int o = 0; o < 5; o++) {
        red_op = ops[o];
        red_naxes = 0;
        check_split_123(reduction, in);
    }
    mf_tensor_release(in[0]);
}

/* Reductions whose outputs are walked in tiles of the outermost kept axis
 * (reduce_walk.c, walk_tiles: each piece sets, folds and writes out its own
 * accumulators): tiles of several indices that end inside a piece (96 and
 * 41 outputs an index), rows (one output an index), columns (the kept axis
 * last: one tile a piece), and one index a tile (2100 outputs an index);
 * (8, 64, 256) over its middle axis is split by the first axis on 2
 * threads (4 indices a thread) and by its columns on 3. Sums, means, max
 * and prod, float32, float64 and int32: 1, 2 and 3 threads give the same
 * bits. */
static void test_reduction_tiles_match_one_thread(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {{70, 3, 2100}, {300, 7, 96}, {130, 41, 41},
                                        {2000, 90, 1}, {45, 4000, 1}, {8, 64, 256},
                                        {12, 50, 300}};
    static const int64_t axes[] = {1, 1, 1, 1, 0, 1, 1};
    static const MfOpId ops[] = {MF_OP_SUM, MF_OP_MEAN, MF_OP_MAX, MF_OP_PROD};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int rank = shapes[s][2] == 1 ? 2 : 3;
        MfTensor *x = noise(rank, shapes[s], 8), *in[3] = {x, NULL, NULL};
        assert_int_equal(mf_cast(x, MF_FLOAT64, &in[1]), MF_OK);
        in[2] = mf_tensor_new(MF_INT32, x->rank, x->shape);
        assert_non_null(in[2]);
        for (int64_t i = 0; i < mf_tensor_numel(x); i++) /* -2 .. 2 */
            ((int32_t *)mf_tensor_data(in[2]))[i] = (int32_t)(mf_tensor_get(x, i) * 3);
        for (int t = 0; t < 3; t++)
            for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
                red_op = ops[o];
                red_naxes = 1;
                red_axes[0] = axes[s];
                check_split_123(reduction, &in[t]);
            }
        for (int t = 0; t < 3; t++)
            mf_tensor_release(in[t]);
    }
}

static MfStatus softmax_rows(MfTensor **in, MfTensor **out)
{
    return mf_softmax(in[0], -1, out);
}

static MfStatus log_softmax_grad_rows(MfTensor **in, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    a.axis = -1;
    return mf_op1(MF_OP_LOG_SOFTMAX_GRAD, 2, in, &a, out);
}

/* The other row ops of softmax.c and layer_norm.c ('row_op', its second
 * input the second of 'in' when it takes two). */
static MfOpId row_op;

static MfStatus row_op_rows(MfTensor **in, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    a.axis = -1;
    a.scalar[0] = 1e-5; /* layer norm's epsilon */
    int arity = row_op == MF_OP_LOG_SOFTMAX || row_op == MF_OP_LAYER_NORM ? 1 : 2;
    return mf_op1(row_op, arity, in, &a, out);
}

/* Softmax's rows, layer norm's and their gradient ops' rows split over
 * threads (softmax.c, layer_norm.c): the same bits on 1, 2 and 3 threads,
 * for rows of 1024 and of the char-GPT's 64 and 65 (a tail). */
static void test_softmax_matches_one_thread(void **state)
{
    (void)state;
    static const MfOpId ops[] = {MF_OP_LOG_SOFTMAX, MF_OP_SOFTMAX_GRAD, MF_OP_LAYER_NORM,
                                 MF_OP_LAYER_NORM_GRAD};
    static const int64_t shapes[][2] = {{256, 1024}, {4096, 64}, {2048, 65}};
    for (int k = 0; k < 3; k++) {
        MfTensor *in[2] = {noise(2, shapes[k], 11), noise(2, shapes[k], 12)};
        check_split_123(softmax_rows, in);
        check_split_123(log_softmax_grad_rows, in);
        for (int o = 0; o < 4; o++) {
            row_op = ops[o];
            check_split_123(row_op_rows, in);
        }
        mf_tensor_release(in[0]);
        mf_tensor_release(in[1]);
    }
}

/* mf_gemm splits by rows of C, or by columns when C is wide and short. */
static bool mm_ta, mm_tb;

static MfStatus matmul(MfTensor **in, MfTensor **out)
{
    return mf_matmul(in[0], in[1], mm_ta, mm_tb, out);
}

/* float64 noise: DGEMM's kernels have their own edge blocks. */
static MfTensor *noise64(int rank, const int64_t *shape, uint32_t seed)
{
    MfTensor *t = mf_tensor_new(MF_FLOAT64, rank, shape);
    assert_non_null(t);
    double *p = mf_tensor_data(t);
    for (int64_t i = 0; i < mf_tensor_numel(t); i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (double)(seed >> 8) / (double)(1u << 23) - 1.0;
    }
    return t;
}

static void test_gemm_split_matches_one_thread(void **state)
{
    (void)state;
    MfTensor *d[2] = {noise64(2, (int64_t[]){600, 100}, 5),
                      noise64(2, (int64_t[]){100, 1000}, 6)};
    mm_ta = mm_tb = false; /* columns split at 496 of 1000 */
    int64_t bad = outside_gemm_bound(matmul, d, 2, 100);
    mf_tensor_release(d[0]);
    mf_tensor_release(d[1]);
    assert_int_equal(bad, 0);
    int64_t shapes[4][2][2] = {{{300, 256}, {256, 64}}, {{256, 24}, {256, 640}},
                               {{40, 512}, {600, 512}}, {{512, 300}, {512, 70}}};
    for (int i = 0; i < 4; i++) {
        mm_ta = i == 1 || i == 3;
        mm_tb = i == 2;
        MfTensor *in[2] = {noise(2, shapes[i][0], 7), noise(2, shapes[i][1], 8)};
        int64_t terms = mm_ta ? shapes[i][0][0] : shapes[i][0][1];
        bad = outside_gemm_bound(matmul, in, 2, terms);
        mf_tensor_release(in[0]);
        mf_tensor_release(in[1]);
        assert_int_equal(bad, 0);
    }
}

static MfStatus bias_add(MfTensor **in, MfTensor **out)
{
    return mf_bias_add(in[0], in[2], false, out);
}

static void test_kernels_match_one_thread(void **state)
{
    (void)state;
    int64_t s[4] = {8, 32, 32, 16};
    MfTensor *in[3] = {noise(4, s, 1), noise(4, s, 2), NULL};
    check_split(relu_grad, in);
    check_split(relu, in);
    MfTensor *wide[1] = {noise(4, (int64_t[]){4, 16, 16, 80}, 9)};
    check_split(channel_sum, wide);
    mf_tensor_release(wide[0]);
    mf_tensor_release(in[1]);
    int64_t ks[2][2] = {{2, 2}, {3, 2}};
    for (int c = 0; c < 2; c++) {
        pool_k = ks[c][0];
        pool_s = ks[c][1];
        int64_t ys[4] = {8, 16, 16, 16};
        MfAttrs a = mf_attrs_default();
        for (int i = 0; i < 4; i++)
            a.ksize[i] = a.strides[i] = 1;
        a.ksize[1] = a.ksize[2] = pool_k;
        a.strides[1] = a.strides[2] = pool_s;
        a.padding = 1;
        assert_int_equal(mf_op1(MF_OP_MAX_POOL, 1, in, &a, &in[1]), MF_OK);
        in[2] = noise(4, ys, 3);
        check_split(max_pool, in);
        check_split(max_pool_grad, in);
        mf_tensor_release(in[1]);
        mf_tensor_release(in[2]);
    }
    int64_t ws[4] = {3, 3, 16, 8}, ys[4] = {8, 32, 32, 8};
    in[1] = noise(4, ws, 4);
    /* terms per output element: the GEMM's K (col2im adds the 9 taps once more) */
    check_gemm_split(conv, in, 2, 3 * 3 * 16);
    in[2] = noise(4, ys, 5);
    check_gemm_split(conv_input, in, 3, 3 * 3 * 8 + 9);
    check_gemm_split(conv_filter, in, 3, 8 * 32 * 32);
    mf_tensor_release(in[2]);
    in[2] = noise(1, (int64_t[]){16}, 6);
    check_split(bias_add, in);
    mf_tensor_release(in[0]);
    mf_tensor_release(in[1]);
    mf_tensor_release(in[2]);
}

/* One call of 'op' on 'in' with t threads, each running one chunk; with
 * more than one, asserts that all t ran a piece. */
static MfTensor *run_elementwise(MfOpId op, int n, MfTensor **in, int t)
{
    MfTensor *out = NULL;
    mf_parallel_set_one_chunk_each(t > 1);
    mf_parallel_set_threads(t);
    MfStatus st = mf_op1(op, n, in, NULL, &out);
    int used = mf_parallel_last_threads();
    mf_parallel_set_threads(1);
    mf_parallel_set_one_chunk_each(false);
    assert_int_equal(st, MF_OK);
    if (t > 1)
        assert_int_equal(used, t);
    return out;
}

/* 3 threads, then 2 (so that a call which did not split cannot pass on
 * the count left by the one before), give the bits of 1. */
static void check_elementwise_split(MfOpId op, int n, MfTensor **in)
{
    MfTensor *one = run_elementwise(op, n, in, 1);
    for (int t = 3; t >= 2; t--) {
        mf_tensor_retain(one);
        assert_same_and_release(one, run_elementwise(op, n, in, t));
    }
    mf_tensor_release(one);
}

/* The elementwise ops (MF_OP_ELEMENTWISE) split large float calls over the
 * pool, cut along the output's first long axis: 2 and 3 threads give the
 * bits of 1, in float32 and float64, NaN included, for same-shaped
 * operands, a broadcast row, column and scalar, a leading axis of 1, and a
 * transposed (strided) input. */
static void test_elementwise_split_matches_one_thread(void **state)
{
    (void)state;
    static const MfOpId binary[] = {MF_OP_ADD, MF_OP_SUB, MF_OP_MUL, MF_OP_DIV, MF_OP_MAXIMUM,
                                    MF_OP_MINIMUM, MF_OP_MOD, MF_OP_POW, MF_OP_ATAN2};
    static const MfOpId unary[] = {MF_OP_NEG, MF_OP_ABS, MF_OP_SIGN, MF_OP_SQUARE, MF_OP_SQRT,
                                   MF_OP_EXP, MF_OP_LOG, MF_OP_TANH, MF_OP_SIGMOID,
                                   MF_OP_SOFTPLUS, MF_OP_FLOOR, MF_OP_CEIL, MF_OP_ROUND,
                                   MF_OP_ERF, MF_OP_EXPM1, MF_OP_TAN, MF_OP_ASINH,
                                   MF_OP_RECIPROCAL};
    int64_t s[2] = {333, 1001}, row[1] = {1001}, col[2] = {333, 1}, wide[2] = {1, 333333};
    for (int d = 0; d < 2; d++) {
        MfTensor *(*make)(int, const int64_t *, uint32_t) = d ? noise64 : noise;
        MfTensor *a = make(2, s, 1), *b = make(2, s, 2), *r = make(1, row, 3);
        MfTensor *c = make(2, col, 4), *k = make(0, NULL, 5), *w = make(2, wide, 6);
        MfTensor *w1 = make(1, wide + 1, 7), *at = NULL;
        if (d)
            ((double *)mf_tensor_data(b))[70000] = (double)NAN;
        else
            ((float *)mf_tensor_data(a))[7] = NAN;
        assert_int_equal(mf_transpose(a, NULL, 0, &at), MF_OK);
        MfTensor *pairs[][2] = {{a, b}, {a, r}, {c, a}, {a, k}, {k, b}, {w, w1}};
        for (size_t o = 0; o < sizeof binary / sizeof binary[0]; o++)
            for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
                check_elementwise_split(binary[o], 2, pairs[p]);
        for (size_t o = 0; o < sizeof unary / sizeof unary[0]; o++) {
            check_elementwise_split(unary[o], 1, &b);
            check_elementwise_split(unary[o], 1, &at);
        }
        MfTensor *all[] = {a, b, r, c, k, w, w1, at};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            mf_tensor_release(all[i]);
    }
}

/* Fused batch norm, forward and gradient: every output (the statistics and
 * the parameter gradients too, sums of blocks added in block order) has the
 * same bits on 1 and 2 threads, in float32 and float64. */
static void batch_norm_outputs(MfTensor **in, int threads, MfTensor **outs)
{
    MfAttrs a = mf_attrs_default();
    a.scalar[0] = 1e-3;
    MfTensor *y[MF_MAX_OUTPUTS], *d[MF_MAX_OUTPUTS]; /* mf_op_call fills MF_MAX_OUTPUTS */
    mf_parallel_set_threads(threads);
    MfStatus st = mf_op_call(MF_OP_FUSED_BATCH_NORM, 3, in, &a, y, NULL);
    MfTensor *g[5] = {in[3], in[0], in[1], y[1], y[2]};
    if (st == MF_OK)
        st = mf_op_call(MF_OP_FUSED_BATCH_NORM_GRAD, 5, g, &a, d, NULL);
    mf_parallel_set_threads(1);
    assert_int_equal(st, MF_OK);
    memcpy(outs, y, 3 * sizeof *outs);
    memcpy(outs + 3, d, 3 * sizeof *outs);
}

static void test_batch_norm_matches_one_thread(void **state)
{
    (void)state;
    for (int f64 = 0; f64 <= 1; f64++) {
        int64_t s[4] = {8, 32, 32, 24}, c[1] = {24};
        MfTensor *(*make)(int, const int64_t *, uint32_t) = f64 ? noise64 : noise;
        MfTensor *in[4] = {make(4, s, 11), make(1, c, 12), make(1, c, 13), make(4, s, 14)};
        /* mf_op_call clears MF_MAX_OUTPUTS slots from outs + 3 */
        MfTensor *one[3 + MF_MAX_OUTPUTS], *two[3 + MF_MAX_OUTPUTS];
        batch_norm_outputs(in, 1, one);
        batch_norm_outputs(in, 2, two);
        for (int i = 0; i < 6; i++)
            assert_same_and_release(one[i], two[i]);
        for (int i = 0; i < 4; i++)
            mf_tensor_release(in[i]);
    }
}

/* mf.set_num_threads' range is the pool's: 1..4096, a refused count
 * changes nothing (a Lua integer comes in whole, 2^32 + 2 is not 2). */
static void test_set_threads_range(void **state)
{
    (void)state;
    assert_int_equal(mf_parallel_set_threads(2), MF_OK);
    assert_int_equal(mf_parallel_threads(), 2);
    int64_t bad[] = {0, -1, 4097, (INT64_C(1) << 32) + 2};
    const char *said[] = {"got 0", "got -1", "got 4097", "got 4294967298"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(mf_parallel_set_threads(bad[i]), MF_EARG);
        assert_non_null(strstr(mf_err_msg(), "set_num_threads: expected an integer from 1 to "
                                             "4096, got "));
        assert_error_contains(said[i]);
        assert_int_equal(mf_parallel_threads(), 2);
    }
    assert_int_equal(mf_parallel_set_threads(4096), MF_OK);
    assert_int_equal(mf_parallel_threads(), 16); /* the pool's own cap */
    assert_int_equal(mf_parallel_set_threads(1), MF_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_every_index_once),
        TEST(test_set_threads_range),
        TEST(test_two_threads_run_at_once),
        TEST(test_each_job_counts_its_threads),
        TEST(test_each_thread_keeps_its_chunk),
        TEST(test_one_chunk_each_after_a_smaller_job),
        TEST(test_worker_kept_off_callers_cpu),
        TEST(test_kernels_match_one_thread),
        TEST(test_reductions_match_one_thread),
        TEST(test_reduction_tiles_match_one_thread),
        TEST(test_softmax_matches_one_thread),
        TEST(test_gemm_split_matches_one_thread),
        TEST(test_batch_norm_matches_one_thread),
        TEST(test_elementwise_split_matches_one_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
