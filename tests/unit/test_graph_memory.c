/* test_graph_memory.c — the executor's peak memory follows the live set.
 *
 * A graph of 100 chained ops on 1000x1000 float32 tensors (4 MB each) is run
 * repeatedly; the allocator's peak (core/alloc.h, 'mf_alloc_peak') during a
 * run stays within a few buffers: the value being consumed, the one being
 * made, and the fetched result, not the 100 buffers the graph computes.
 * Between runs the engine returns to what it held before (plus the result,
 * until it is released), so repeated runs do not grow.
 * 10 runs by default (about a second); MF_TEST_HEAVY=1 runs the full 100. */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "core/alloc.h"
#include "graph/graph.h"

#define SIDE 1000
#define CHAIN 100
#define BUF_BYTES ((size_t)SIDE * SIDE * sizeof(float))
/* What the allocator hands out for one: its size class rounds up by at
 * most a quarter (core/alloc.c). */
#define BLOCK_MAX (BUF_BYTES + BUF_BYTES / 4)

/* The chain: alternately x + 1 and x * 0.5, so values stay bounded. */
static MfTensor *build_chain(MfGraph *g, MfTensor **x)
{
    assert_int_equal(mf_graph_placeholder(g, MF_FLOAT32, 2, (int64_t[]){SIDE, SIDE}, "x", x),
                     MF_OK);
    assert_int_equal(mf_graph_push_default(g), MF_OK);
    MfTensor *one = mf_tensor_scalar(MF_FLOAT32, 1), *half = mf_tensor_scalar(MF_FLOAT32, 0.5);
    MfTensor *cur = *x;
    mf_tensor_retain(cur);
    for (int i = 0; i < CHAIN; i++) {
        MfTensor *next = NULL;
        assert_int_equal(mf_binary(i % 2 ? MF_OP_MUL : MF_OP_ADD, cur, i % 2 ? half : one, &next),
                         MF_OK);
        mf_tensor_release(cur);
        cur = next;
    }
    mf_graph_pop_default();
    mf_tensor_release(one);
    mf_tensor_release(half);
    return cur;
}

static void test_peak_tracks_live_set(void **state)
{
    (void)state;
    MfGraph *g = mf_graph_new();
    assert_non_null(g);
    MfTensor *x = NULL, *y = build_chain(g, &x);
    MfTensor *v = mf_tensor_zeros(MF_FLOAT32, 2, (int64_t[]){SIDE, SIDE});
    assert_non_null(v);
    int runs = getenv("MF_TEST_HEAVY") ? 100 : 10;
    size_t worst = 0, before = mf_alloc_in_use();
    for (int r = 0; r < runs; r++) {
        MfTensor *res = NULL;
        mf_alloc_reset_peak();
        assert_int_equal(mf_exec_run(g, 1, &y, 0, NULL, 1, &x, &v, NULL, &res, NULL), MF_OK);
        size_t peak = mf_alloc_peak() - before;
        if (peak > worst)
            worst = peak;
        /* Holding the result: one buffer (and headers) more than before. */
        assert_true(mf_alloc_in_use() - before < BLOCK_MAX + 65536);
        /* x = 0: ((0 + 1) * 0.5 + 1) * 0.5 ... converges towards 1 */
        assert_true(fabs(mf_tensor_get(res, SIDE * SIDE - 1) - 1.0) < 1e-6);
        mf_tensor_release(res);
        assert_true(mf_alloc_in_use() - before < 65536);
    }
    print_message("peak engine memory over %d runs of %d nodes: %.1f MB = %.2f buffers of "
                  "%.1f MB (the graph computes %d)\n", runs, CHAIN, (double)worst / 1e6,
                  (double)worst / (double)BUF_BYTES, (double)BUF_BYTES / 1e6, CHAIN);
    /* The live set: the input being read and the output being written. */
    assert_true(worst <= 2 * BLOCK_MAX + 65536);
    mf_tensor_release(v);
    mf_tensor_release(x);
    mf_tensor_release(y);
    mf_graph_release(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_peak_tracks_live_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
