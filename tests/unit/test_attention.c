/* test_attention.c — the memory of ScaledDotProductAttention and its
 * gradient op (core/ops/attention.c, attention_grad.c): with T = 2048 keys
 * a (T, T) score matrix would be 16 MiB per head; the allocator's peak
 * (core/alloc.h, 'mf_alloc_peak') above what the call started with and its
 * outputs stays under 1 MiB (the tiles of scores: 64 x 256 floats per
 * thread forward, two 64 x 64 tiles and a row of T backward), causal or
 * not, on one thread and on two. The figure is printed (bench/attention.sh
 * quotes this test). Values are checked by tests/lua/test_attention.lua. */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/grad.h"
#include "core/parallel.h"

#define T 2048
#define D 32
#define HEADS 2
#define LIMIT ((size_t)1 << 20)

static MfTensor *ramp(int64_t rows, double k)
{
    int64_t shape[3] = {HEADS, rows, D};
    MfTensor *t = mf_tensor_new(MF_FLOAT32, 3, shape);
    assert_non_null(t);
    float *p = mf_tensor_data(t);
    for (int64_t i = 0; i < mf_tensor_numel(t); i++)
        p[i] = (float)(((i * 37 + 11) % 101) / 101.0 - 0.5) * (float)k;
    return t;
}

static size_t bytes(MfTensor *const *t, int n)
{
    size_t s = 0;
    for (int i = 0; i < n; i++)
        s += t[i] ? (size_t)mf_tensor_numel(t[i]) * mf_dtype_size(t[i]->dtype) : 0;
    return s;
}

/* The extra peak of the forward op and of its gradient. */
static void measure(bool causal, size_t *fwd, size_t *bwd)
{
    MfTensor *in[3] = {ramp(T, 1), ramp(T, 2), ramp(T, 1)};
    MfAttrs a = mf_attrs_default();
    a.causal = causal;
    MfTensor *outs[MF_MAX_OUTPUTS] = {NULL}, *dq[MF_MAX_OUTPUTS] = {NULL};
    int nout = 0;
    size_t before = mf_alloc_in_use();
    mf_alloc_reset_peak();
    assert_int_equal(mf_op_call(MF_OP_ATTENTION, 3, in, &a, outs, &nout), MF_OK);
    *fwd = mf_alloc_peak() - before - bytes(outs, nout);
    MfTensor *dy[MF_MAX_OUTPUTS] = {ramp(T, 1), NULL};
    MfOpCall call = {.op = MF_OP_ATTENTION, .ninputs = 3, .inputs = in, .attrs = &a,
                     .noutputs = nout};
    MfGradCall g = {.call = &call, .outputs = outs, .doutputs = dy};
    before = mf_alloc_in_use();
    mf_alloc_reset_peak();
    assert_int_equal(mf_grad_call(&g, dq), MF_OK);
    *bwd = mf_alloc_peak() - before - bytes(dq, 3);
    for (int i = 0; i < MF_MAX_OUTPUTS; i++) {
        mf_tensor_release(outs[i]);
        mf_tensor_release(dq[i]);
        mf_tensor_release(dy[i]);
    }
    for (int i = 0; i < 3; i++)
        mf_tensor_release(in[i]);
}

static void test_extra_memory_is_tiles_not_scores(void **state)
{
    (void)state;
    int threads = mf_parallel_threads();
    for (int th = 1; th <= 2; th++) {
        assert_int_equal(mf_parallel_set_threads(th), MF_OK);
        for (int causal = 0; causal <= 1; causal++) {
            size_t fwd, bwd;
            measure(causal, &fwd, &bwd);
            printf("  T=%d, %d heads, d=%d, %s, %d thread%s: extra peak forward %.1f KiB, "
                   "backward %.1f KiB (a (T, T) float32 score matrix: %.0f KiB per head)\n",
                   T, HEADS, D, causal ? "causal" : "full", th, th > 1 ? "s" : "",
                   fwd / 1024.0, bwd / 1024.0, (double)T * T * 4 / 1024);
            assert_true(fwd < LIMIT);
            assert_true(bwd < LIMIT);
        }
    }
    assert_int_equal(mf_parallel_set_threads(threads), MF_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_extra_memory_is_tiles_not_scores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
