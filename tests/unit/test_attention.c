/* test_attention.c — the memory of ScaledDotProductAttention and its
 * gradient op (core/ops/attention.c, attention_grad.c): with T = 2048 keys
 * a (T, T) score matrix would be 16 MiB per head; the allocator's peak
 * (core/alloc.h, 'mf_alloc_peak') above what the call started with and its
 * outputs stays under 1 MiB (the tiles of scores: 64 x 256 floats per
 * thread forward, two 64 x 64 tiles and a row of T backward), causal or
 * not, on one thread and on two. The figure is printed (bench/attention.sh
 * quotes this test). Values are checked by tests/lua/test_attention.lua.
 * Also: the gradients have the same bits on 1 and 2 threads; heads cut
 * from one product are read in place, and the output and the gradients are
 * written in the product's layout; the tile products and the op's results
 * have the same bits on the AVX-512 and the AVX2 register blocks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/grad.h"
#include "core/ops/attention.h"
#include "core/ops/vecmath.h"
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

/* q, k, v of 'heads' batches with t rows, and a float mask (t, t). */
static MfTensor *filled(int rank, const int64_t *shape, double k)
{
    MfTensor *t = mf_tensor_new(MF_FLOAT32, rank, shape);
    assert_non_null(t);
    float *p = mf_tensor_data(t);
    for (int64_t i = 0; i < mf_tensor_numel(t); i++)
        p[i] = (float)(((i * 37 + 11) % 101) / 101.0 - 0.5) * (float)k;
    return t;
}

/* The gradients dq, dk, dv, dmask of one call on 'threads' threads. */
static void gradients(int threads, int64_t heads, int64_t t, bool causal, double rate,
                      MfTensor **dq)
{
    assert_int_equal(mf_parallel_set_threads(threads), MF_OK);
    int64_t shape[3] = {heads, t, D}, mshape[2] = {t, t};
    MfTensor *in[4] = {filled(3, shape, 1), filled(3, shape, 2), filled(3, shape, 1),
                       filled(2, mshape, 0.5)};
    MfAttrs a = mf_attrs_default();
    a.causal = causal;
    a.scalar[1] = rate;
    a.seed = 5;
    MfTensor *outs[MF_MAX_OUTPUTS] = {NULL}, *dy[MF_MAX_OUTPUTS] = {filled(3, shape, 1.5)};
    int nout = 0;
    assert_int_equal(mf_op_call(MF_OP_ATTENTION, 4, in, &a, outs, &nout), MF_OK);
    MfOpCall call = {.op = MF_OP_ATTENTION, .ninputs = 4, .inputs = in, .attrs = &a,
                     .noutputs = nout};
    MfGradCall g = {.call = &call, .outputs = outs, .doutputs = dy};
    assert_int_equal(mf_grad_call(&g, dq), MF_OK);
    for (int i = 0; i < MF_MAX_OUTPUTS; i++) {
        mf_tensor_release(outs[i]);
        mf_tensor_release(dy[i]);
    }
    for (int i = 0; i < 4; i++)
        mf_tensor_release(in[i]);
}

/* The backward pass splits one head's keys over the pool (and adds the
 * partial dq in a fixed order): the same bits on 1 and 2 threads, for one
 * head or three, causal or not, with dropout. */
static void test_backward_same_bits_on_1_and_2_threads(void **state)
{
    (void)state;
    int threads = mf_parallel_threads();
    const int64_t heads[] = {1, 1, 3, 1};
    const int64_t rows[] = {300, 130, 200, 257};
    const double rates[] = {0, 0, 0, 0.3};
    for (int c = 0; c < 4; c++)
        for (int causal = 0; causal <= 1; causal++) {
            MfTensor *one[MF_MAX_OUTPUTS] = {NULL}, *two[MF_MAX_OUTPUTS] = {NULL};
            gradients(1, heads[c], rows[c], causal, rates[c], one);
            gradients(2, heads[c], rows[c], causal, rates[c], two);
            for (int i = 0; i < 4; i++) {
                assert_non_null(one[i]);
                assert_int_equal(mf_tensor_numel(one[i]), mf_tensor_numel(two[i]));
                assert_memory_equal(mf_tensor_data(one[i]), mf_tensor_data(two[i]),
                                    (size_t)mf_tensor_numel(one[i]) * 4);
            }
            for (int i = 0; i < MF_MAX_OUTPUTS; i++) {
                mf_tensor_release(one[i]);
                mf_tensor_release(two[i]);
            }
        }
    assert_int_equal(mf_parallel_set_threads(threads), MF_OK);
}

/* mf_attn_tile_gemm's C on the current MF_SIMD level: every shape of
 * rows and columns around the register blocks (4 rows; 8, 16 and 32
 * columns), both layouts of A and B, with and without C, each band. */
static float *tile_products(int64_t *n)
{
    static const int64_t ms[] = {1, 3, 4, 7, 8, 64, 67}, ns[] = {8, 13, 16, 32, 40, 48, 64, 72};
    static const int64_t ks[] = {1, 5, 32, 64};
    enum { PER = 72 * 72 };
    const size_t count = 7 * 8 * 4 * 4 * 2 * 4;
    float *out = malloc(count * PER * sizeof(float)), *a = malloc(72 * 72 * sizeof(float));
    float *b = malloc(72 * 72 * sizeof(float));
    assert_non_null(out);
    for (int i = 0; i < 72 * 72; i++) {
        a[i] = (float)(((i * 37 + 11) % 101) / 101.0 - 0.5);
        b[i] = (float)(((i * 53 + 7) % 89) / 89.0 - 0.5);
    }
    const AttnBand bands[] = {{ATTN_BAND_FULL, 0}, {ATTN_BAND_COLS, 3},
                              {ATTN_BAND_KEND, 1}, {ATTN_BAND_KSTART, -2}};
    float *c = out;
    for (int im = 0; im < 7; im++)
        for (int in = 0; in < 8; in++)
            for (int ik = 0; ik < 4; ik++)
                for (int t = 0; t < 4; t++)
                    for (int acc = 0; acc <= 1; acc++)
                        for (int bd = 0; bd < 4; bd++, c += PER) {
                            int64_t M = ms[im], N = ns[in], K = ks[ik];
                            bool ta = t & 1, tb = t & 2;
                            for (int i = 0; i < PER; i++)
                                c[i] = (float)(i % 7) * 0.25f;
                            mf_attn_tile_gemm(ta, tb, M, N, K, 0.5f, a, ta ? M : K, b,
                                              tb ? K : N, acc, c, N, bands[bd]);
                        }
    free(a);
    free(b);
    *n = (int64_t)(count * PER);
    return out;
}

/* The register blocks of 4 x 32 (AVX-512) and 4 x 16 (AVX2) give the same
 * bits: each element one FMA chain in k order on both paths, the tile
 * products directly and through the op and its gradient. */
static void test_tiles_same_bits_avx512_and_avx2(void **state)
{
    (void)state;
    MfSimd level = mf_simd_level();
    if (!mf_simd_set_level(MF_SIMD_AVX512) || !mf_simd_set_level(MF_SIMD_AVX2))
        skip(); /* a CPU without both: nothing to compare */
    int64_t n = 0;
    assert_true(mf_simd_set_level(MF_SIMD_AVX512));
    float *wide = tile_products(&n);
    assert_true(mf_simd_set_level(MF_SIMD_AVX2));
    float *narrow = tile_products(&n);
    assert_memory_equal(wide, narrow, (size_t)n * sizeof(float));
    free(wide);
    free(narrow);
    int threads = mf_parallel_threads();
    for (int causal = 0; causal <= 1; causal++) {
        MfTensor *w[MF_MAX_OUTPUTS] = {NULL}, *v[MF_MAX_OUTPUTS] = {NULL};
        assert_true(mf_simd_set_level(MF_SIMD_AVX512));
        gradients(1, 2, 203, causal, 0, w);
        assert_true(mf_simd_set_level(MF_SIMD_AVX2));
        gradients(1, 2, 203, causal, 0, v);
        for (int i = 0; i < 3; i++)
            assert_memory_equal(mf_tensor_data(w[i]), mf_tensor_data(v[i]),
                                (size_t)mf_tensor_numel(w[i]) * 4);
        for (int i = 0; i < MF_MAX_OUTPUTS; i++) {
            mf_tensor_release(w[i]);
            mf_tensor_release(v[i]);
        }
    }
    assert_true(mf_simd_set_level(level));
    assert_int_equal(mf_parallel_set_threads(threads), MF_OK);
}

/* One head's backward runs on 2 threads: the gradient op's last pool job
 * (each thread one chunk) ran on 2, after a job on 3 (so a job that did
 * not split would leave 3). */
static void test_one_head_backward_uses_two_threads(void **state)
{
    (void)state;
    int threads = mf_parallel_threads();
    int64_t shape[3] = {1, 300, D}, lshape[2] = {1, 300};
    MfTensor *in[7] = {filled(3, shape, 1), filled(3, shape, 2), filled(3, shape, 1), NULL,
                       NULL, filled(3, shape, 1.5), filled(2, lshape, 0)};
    MfAttrs a = mf_attrs_default();
    a.causal = true;
    MfTensor *outs[MF_MAX_OUTPUTS] = {NULL}, *grads[MF_MAX_OUTPUTS] = {NULL};
    mf_parallel_set_one_chunk_each(true);
    assert_int_equal(mf_parallel_set_threads(3), MF_OK);
    assert_int_equal(mf_op_call(MF_OP_ATTENTION, 3, in, &a, outs, NULL), MF_OK);
    assert_int_equal(mf_parallel_last_threads(), 3);   /* 5 blocks of query rows */
    in[3] = outs[0];
    in[4] = outs[1];
    assert_int_equal(mf_parallel_set_threads(2), MF_OK);
    assert_int_equal(mf_op_call(MF_OP_ATTENTION_GRAD, 7, in, &a, grads, NULL), MF_OK);
    assert_int_equal(mf_parallel_last_threads(), 2);
    mf_parallel_set_one_chunk_each(false);
    assert_int_equal(mf_parallel_set_threads(threads), MF_OK);
    for (int i = 0; i < MF_MAX_OUTPUTS; i++) {
        mf_tensor_release(outs[i]);
        mf_tensor_release(grads[i]);
    }
    for (int i = 0; i < 7; i++)
        if (i != 3 && i != 4)
            mf_tensor_release(in[i]);
}

/* Heads of one (T, n * HEADS, D) product, as a model cuts q, k, v: the
 * view (HEADS, T, D) of its columns [at * HEADS * D, ...), rows apart by
 * n * HEADS * D. */
static MfTensor *heads_of(MfTensor *product, int n, int at)
{
    int64_t shape[3] = {HEADS, T, D}, strides[3] = {D, n * HEADS * D, 1};
    return mf_tensor_view(product, 3, shape, strides, (int64_t)at * HEADS * D);
}

/* (HEADS, T, D) heads back to (T, HEADS, D): a view. */
static MfTensor *unheads(MfTensor *h)
{
    int64_t shape[3] = {h->shape[1], h->shape[0], h->shape[2]};
    int64_t strides[3] = {h->strides[1], h->strides[0], h->strides[2]};
    return mf_tensor_view(h, 3, shape, strides, h->offset);
}

/* 'a' and 'b' hold the same values bit for bit ('n' bytes), whatever their layouts. */
static void assert_same_values(MfTensor *a, MfTensor *b, size_t n)
{
    MfTensor *ca = mf_tensor_contiguous(a), *cb = mf_tensor_contiguous(b);
    assert_non_null(ca);
    assert_non_null(cb);
    assert_memory_equal(mf_tensor_data(ca), mf_tensor_data(cb), n);
    mf_tensor_release(ca);
    mf_tensor_release(cb);
}

static MfTensor *product_of(int n, double k)
{
    int64_t shape[3] = {T, n * HEADS, D};
    return filled(3, shape, k);
}

/* The forward outputs and the gradients of q, k, v (the extra peaks in
 * 'fwd', 'bwd'). */
static void run_both(MfTensor **in, MfTensor *dy, MfTensor **outs, MfTensor **grads,
                     size_t *fwd, size_t *bwd)
{
    MfAttrs a = mf_attrs_default();
    a.causal = true;
    int nout = 0;
    size_t before = mf_alloc_in_use();
    mf_alloc_reset_peak();
    assert_int_equal(mf_op_call(MF_OP_ATTENTION, 3, in, &a, outs, &nout), MF_OK);
    *fwd = mf_alloc_peak() - before - bytes(outs, nout);
    MfTensor *dys[MF_MAX_OUTPUTS] = {dy, NULL};
    MfOpCall call = {.op = MF_OP_ATTENTION, .ninputs = 3, .inputs = in, .attrs = &a,
                     .noutputs = nout};
    MfGradCall g = {.call = &call, .outputs = outs, .doutputs = dys};
    before = mf_alloc_in_use();
    mf_alloc_reset_peak();
    assert_int_equal(mf_grad_call(&g, grads), MF_OK);
    *bwd = mf_alloc_peak() - before - bytes(grads, 3);
}

/* q, k, v as heads of one product and dout as heads of the next layer's
 * gradient are read where they are: no copy of them (each 512 KiB) in
 * either pass, and the same bits as from contiguous copies. The output is
 * written in the product's layout (T, HEADS, D) and dq, dk, dv as thirds of
 * one block laid out as the product, whose concat is then a view of it: no
 * transposed copy of the output, no ConcatV2 copy of the gradients. */
static void test_heads_of_a_product_read_in_place(void **state)
{
    (void)state;
    int threads = mf_parallel_threads();
    assert_int_equal(mf_parallel_set_threads(1), MF_OK);
    MfTensor *qkv = product_of(3, 1), *dy_all = product_of(1, 1.5);
    MfTensor *views[4] = {heads_of(qkv, 3, 0), heads_of(qkv, 3, 1), heads_of(qkv, 3, 2),
                          heads_of(dy_all, 1, 0)};
    MfTensor *copies[4];
    for (int i = 0; i < 4; i++)
        copies[i] = mf_tensor_contiguous(views[i]);
    MfTensor *out[2][MF_MAX_OUTPUTS] = {{NULL}}, *grads[2][MF_MAX_OUTPUTS] = {{NULL}};
    size_t fwd, bwd, fwd_copies, bwd_copies, one_copy = (size_t)HEADS * T * D * 4;
    run_both(views, views[3], out[0], grads[0], &fwd, &bwd);
    run_both(copies, copies[3], out[1], grads[1], &fwd_copies, &bwd_copies);
    printf("  heads of one product (T=%d, %d heads, d=%d): extra peak forward %.1f KiB, "
           "backward %.1f KiB (a copy of q: %.0f KiB)\n", T, HEADS, D, fwd / 1024.0,
           bwd / 1024.0, one_copy / 1024.0);
    assert_true(fwd < one_copy && bwd < one_copy);
    for (int i = 0; i < 4; i++) {
        MfTensor *a = i == 0 ? out[0][0] : grads[0][i - 1];
        MfTensor *b = i == 0 ? out[1][0] : grads[1][i - 1];
        assert_same_values(a, b, one_copy);
    }
    /* the output in the product's layout: its transpose (T, HEADS, D) is
     * contiguous, so merging the heads after it is a view */
    MfTensor *o = out[0][0];
    assert_true(o->strides[0] == D && o->strides[1] == HEADS * D && o->strides[2] == 1);
    /* dq, dk, dv the thirds of one block laid out as the product */
    for (int i = 0; i < 3; i++) {
        MfTensor *g = grads[0][i];
        assert_ptr_equal(g->storage, grads[0][0]->storage);
        assert_true(g->offset - grads[0][0]->offset == (int64_t)i * HEADS * D);
        assert_true(g->strides[0] == D && g->strides[1] == 3 * HEADS * D && g->strides[2] == 1);
    }
    /* so their concat, as the product's gradient, is that block: no copy */
    MfTensor *back[3], *joined = NULL, *expect = NULL;
    for (int i = 0; i < 3; i++)
        back[i] = unheads(grads[1][i]);
    MfAttrs cat = mf_attrs_default();
    cat.axis = 1;
    assert_int_equal(mf_op1(MF_OP_CONCAT, 3, back, &cat, &expect), MF_OK);
    for (int i = 0; i < 3; i++) {
        mf_tensor_release(back[i]);
        back[i] = unheads(grads[0][i]);
    }
    size_t before = mf_alloc_in_use();
    mf_alloc_reset_peak();
    assert_int_equal(mf_op1(MF_OP_CONCAT, 3, back, &cat, &joined), MF_OK);
    assert_true(mf_alloc_peak() - before < 4096);   /* a header, no data */
    assert_ptr_equal(joined->storage, grads[0][0]->storage);
    assert_true(mf_tensor_is_contiguous(joined));
    assert_same_values(joined, expect, 3 * one_copy);
    for (int i = 0; i < 3; i++)
        mf_tensor_release(back[i]);
    mf_tensor_release(joined);
    mf_tensor_release(expect);
    for (int i = 0; i < MF_MAX_OUTPUTS; i++)
        for (int w = 0; w < 2; w++) {
            mf_tensor_release(out[w][i]);
            mf_tensor_release(grads[w][i]);
        }
    for (int i = 0; i < 4; i++) {
        mf_tensor_release(views[i]);
        mf_tensor_release(copies[i]);
    }
    mf_tensor_release(qkv);
    mf_tensor_release(dy_all);
    assert_int_equal(mf_parallel_set_threads(threads), MF_OK);
}

/* Blocks of 'n' tensors of 'shape' filled with NaN and freed: the
 * allocator's cache hands them to the next allocations of that size. */
static void poison(int n, const int64_t *shape)
{
    MfTensor *t[4];
    for (int i = 0; i < n; i++) {
        t[i] = mf_tensor_new(MF_FLOAT32, 3, shape);
        assert_non_null(t[i]);
        float *p = mf_tensor_data(t[i]);
        for (int64_t e = 0; e < mf_tensor_numel(t[i]); e++)
            p[e] = NAN;
    }
    for (int i = 0; i < n; i++)
        mf_tensor_release(t[i]);
}

/* The gradient op writes dq, dk, dv without zeroing them first: the first
 * tile to reach a row writes it. Rows no tile reaches must still be zeros:
 * keys after every query (causal, Tk > Tq), and dq's rows before a key
 * group's first key (one head: two groups). Fresh blocks hold NaN. */
static void test_rows_no_tile_reaches_are_zeros(void **state)
{
    (void)state;
    int64_t tq = 100, tk = 200;
    int64_t qs[3] = {1, tq, D}, ks[3] = {1, tk, D}, ls[2] = {1, tq};
    MfTensor *in[7] = {filled(3, qs, 1), filled(3, ks, 2), filled(3, ks, 1), NULL, NULL,
                       filled(3, qs, 1.5), filled(2, ls, 0)};
    MfAttrs a = mf_attrs_default();
    a.causal = true;
    MfTensor *outs[MF_MAX_OUTPUTS] = {NULL}, *grads[MF_MAX_OUTPUTS] = {NULL};
    assert_int_equal(mf_op_call(MF_OP_ATTENTION, 3, in, &a, outs, NULL), MF_OK);
    in[3] = outs[0];
    in[4] = outs[1];
    poison(2, qs);   /* dq and the second group's partial */
    poison(2, ks);   /* dk and dv */
    assert_int_equal(mf_op_call(MF_OP_ATTENTION_GRAD, 7, in, &a, grads, NULL), MF_OK);
    for (int g = 0; g < 3; g++) {
        const float *x = mf_tensor_data(grads[g]);
        int64_t rows = g == 0 ? tq : tk;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < D; c++) {
                assert_true(isfinite(x[r * D + c]));
                if (g > 0 && r >= tq)   /* no query sees key r */
                    assert_true(x[r * D + c] == 0);
            }
    }
    for (int i = 0; i < MF_MAX_OUTPUTS; i++) {
        mf_tensor_release(outs[i]);
        mf_tensor_release(grads[i]);
    }
    for (int i = 0; i < 7; i++)
        if (i != 3 && i != 4)
            mf_tensor_release(in[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_extra_memory_is_tiles_not_scores),
        TEST(test_backward_same_bits_on_1_and_2_threads),
        TEST(test_one_head_backward_uses_two_threads),
        TEST(test_heads_of_a_product_read_in_place),
        TEST(test_rows_no_tile_reaches_are_zeros),
        TEST(test_tiles_same_bits_avx512_and_avx2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
