/* test_conv_algo.c — the three convolution kernels (core/ops/conv.h
 * "Algorithms") against a float64 loop reference on seeded random shapes,
 * paddings and batch sizes, the 'auto' rule, float64 staying on im2col,
 * thread-count independence and the Winograd filter-transform cache.
 *
 * Tolerances come from error bounds, per output element, in units of
 * u = 2^-24 times S = the sum of |products| that element adds up (computed
 * by the reference with absolute values):
 *   im2col and direct sum K products in float32 (K = the terms per element:
 *   kh*kw*Cin forward, kh*kw*Cout for dx, N*Ho*Wo for dw): |error| <=
 *   gamma_K S ~ K u S (Higham's bound for any summation order), and
 *   K + 2 allows the rounding of the operands' conversion;
 *   Winograd F(4x4, 3x3) adds the transforms' rounding, amplified by their
 *   norms: ||A^T||_inf = 19, ||B^T||_inf = 10 per axis (G's rounding is
 *   done in double): the computed tile is the exact one of inputs and
 *   products perturbed by about (K + 12) u relative to |A^T| |.| |B^T|
 *   magnitudes, which are at most (19 * 10)^2 / 16 of S for a 4x4 tile;
 *   we assert (K + 12) * 2^11 u S (the largest ratio seen over these
 *   cases is printed: about 2^7 - 2^9 K u S in practice). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "core/ops/conv.h"
#include "core/parallel.h"
#include "core/profile/profile.h"

static uint64_t rng_state = 20261125u;

static int64_t rnd_int(int64_t lo, int64_t hi)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (int64_t)((rng_state >> 17) % (uint64_t)(hi - lo + 1));
}

static double rnd_unit(void)
{
    return (double)rnd_int(0, (1 << 24) - 1) / (double)(1 << 23) - 1.0;
}

typedef struct Case {
    int64_t N, H, W, C, k, O, s;
    int same;
    MfConvAlgo algo;
    int64_t border;   /* rows and columns of zeros around x and dy (0: none) */
} Case;

typedef struct Ref {
    int64_t Ho, Wo, pt, pl, nx, nw, ny;
    double *x, *w, *dy;          /* inputs (float32-representable) */
    double *y, *dx, *dw;         /* exact results */
    double *sy, *sdx, *sdw;      /* sums of |products| */
} Ref;

static void axis(int same, int64_t in, int64_t k, int64_t s, int64_t *out, int64_t *pad)
{
    *out = same ? (in + s - 1) / s : (in - k) / s + 1;
    int64_t total = (*out - 1) * s + k - in;
    *pad = same && total > 0 ? total / 2 : 0;
}

static double *zeros(int64_t n)
{
    double *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
    assert_non_null(p);
    return p;
}

/* Zeros in the outer 'b' rows and columns of each image of t [N][H][W][C]. */
static void zero_border(double *t, int64_t N, int64_t H, int64_t W, int64_t C, int64_t b)
{
    for (int64_t i = 0; b > 0 && i < N * H * W; i++) {
        int64_t h = i / W % H, w = i % W;
        if (h < b || h >= H - b || w < b || w >= W - b)
            for (int64_t ch = 0; ch < C; ch++)
                t[i * C + ch] = 0;
    }
}

static Ref reference(const Case *c)
{
    Ref r;
    axis(c->same, c->H, c->k, c->s, &r.Ho, &r.pt);
    axis(c->same, c->W, c->k, c->s, &r.Wo, &r.pl);
    r.nx = c->N * c->H * c->W * c->C, r.nw = c->k * c->k * c->C * c->O;
    r.ny = c->N * r.Ho * r.Wo * c->O;
    r.x = zeros(r.nx), r.w = zeros(r.nw), r.dy = zeros(r.ny);
    r.y = zeros(r.ny), r.dx = zeros(r.nx), r.dw = zeros(r.nw);
    r.sy = zeros(r.ny), r.sdx = zeros(r.nx), r.sdw = zeros(r.nw);
    for (int64_t i = 0; i < r.nx; i++)
        r.x[i] = rnd_unit();
    for (int64_t i = 0; i < r.nw; i++)
        r.w[i] = rnd_unit();
    for (int64_t i = 0; i < r.ny; i++)
        r.dy[i] = rnd_unit();
    zero_border(r.x, c->N, c->H, c->W, c->C, c->border);
    zero_border(r.dy, c->N, r.Ho, r.Wo, c->O, c->border);
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t oh = 0; oh < r.Ho; oh++)
            for (int64_t ow = 0; ow < r.Wo; ow++)
                for (int64_t i = 0; i < c->k; i++)
                    for (int64_t j = 0; j < c->k; j++) {
                        int64_t ih = oh * c->s - r.pt + i, iw = ow * c->s - r.pl + j;
                        if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W)
                            continue;
                        for (int64_t ch = 0; ch < c->C; ch++)
                            for (int64_t o = 0; o < c->O; o++) {
                                int64_t xi = ((n * c->H + ih) * c->W + iw) * c->C + ch;
                                int64_t wi = ((i * c->k + j) * c->C + ch) * c->O + o;
                                int64_t yi = ((n * r.Ho + oh) * r.Wo + ow) * c->O + o;
                                r.y[yi] += r.x[xi] * r.w[wi];
                                r.dx[xi] += r.dy[yi] * r.w[wi];
                                r.dw[wi] += r.x[xi] * r.dy[yi];
                                r.sy[yi] += fabs(r.x[xi] * r.w[wi]);
                                r.sdx[xi] += fabs(r.dy[yi] * r.w[wi]);
                                r.sdw[wi] += fabs(r.x[xi] * r.dy[yi]);
                            }
                    }
    return r;
}

static void ref_free(Ref *r)
{
    double *all[] = {r->x, r->w, r->dy, r->y, r->dx, r->dw, r->sy, r->sdx, r->sdw};
    for (int i = 0; i < 9; i++)
        free(all[i]);
}

static double worst_ratio; /* largest |error| / (K u S) seen */

/* Every element of 't' within factor * u * S of the reference; returns the
 * count outside (after printing a few). */
static int64_t outside(const MfTensor *t, const double *want, const double *s, int64_t n,
                       double K, double factor, double u, const char *what, const char *cfg)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double err = fabs(mf_tensor_get(t, i) - want[i]), bound = factor * u * s[i];
        if (s[i] > 0 && err / (K * u * s[i]) > worst_ratio)
            worst_ratio = err / (K * u * s[i]);
        if (!(err <= bound) && bad++ < 3)
            print_error("%s %s: element %lld is %.9g, want %.9g (bound %.3g)\n", what, cfg,
                        (long long)i, mf_tensor_get(t, i), want[i], bound);
    }
    return bad;
}

static MfTensor *tensor(MfDType dt, const int64_t *shape, const double *v)
{
    return make_tensor(dt, 4, shape, v);
}

/* Runs the three passes of case 'c' in dtype 'dt' and checks them. */
static void check_case(const Case *c, MfDType dt)
{
    Ref r = reference(c);
    char cfg[160];
    snprintf(cfg, sizeof cfg, "[%s N%lld %lldx%lldx%lld k%lld O%lld s%lld %s %s]",
             mf_conv_algorithm_names()[c->algo], (long long)c->N, (long long)c->H,
             (long long)c->W, (long long)c->C, (long long)c->k, (long long)c->O,
             (long long)c->s, c->same ? "SAME" : "VALID", mf_dtype_name(dt));
    int64_t xs[4] = {c->N, c->H, c->W, c->C}, ws[4] = {c->k, c->k, c->C, c->O};
    int64_t ys[4] = {c->N, r.Ho, r.Wo, c->O};
    MfTensor *x = tensor(dt, xs, r.x), *w = tensor(dt, ws, r.w), *dy = tensor(dt, ys, r.dy);
    MfAttrs a = mf_attrs_default();
    a.strides[1] = a.strides[2] = c->s;
    a.padding = c->same;
    a.conv_algorithm = (int)c->algo;
    double u = dt == MF_FLOAT32 ? 0x1p-24 : 0x1p-53;
    bool wino = c->algo == MF_CONV_WINOGRAD && dt == MF_FLOAT32;
    double Ks[3] = {(double)(c->k * c->k * c->C), (double)(c->k * c->k * c->O),
                    (double)(c->N * r.Ho * r.Wo)};
    MfTensor *out[3] = {NULL, NULL, NULL};
    assert_int_equal(mf_op1(MF_OP_CONV2D, 2, (MfTensor *[]){x, w}, &a, &out[0]), MF_OK);
    a.nints = 4;
    memcpy(a.ints, xs, sizeof xs);
    assert_int_equal(mf_op1(MF_OP_CONV2D_BACKPROP_INPUT, 2, (MfTensor *[]){w, dy}, &a, &out[1]),
                     MF_OK);
    memcpy(a.ints, ws, sizeof ws);
    assert_int_equal(mf_op1(MF_OP_CONV2D_BACKPROP_FILTER, 2, (MfTensor *[]){x, dy}, &a,
                            &out[2]), MF_OK);
    const double *want[3] = {r.y, r.dx, r.dw}, *mag[3] = {r.sy, r.sdx, r.sdw};
    int64_t n[3] = {r.ny, r.nx, r.nw};
    static const char *const what[3] = {"Conv2D", "Conv2DBackpropInput",
                                        "Conv2DBackpropFilter"};
    int64_t bad = 0;
    for (int p = 0; p < 3; p++) {
        double factor = wino ? (Ks[p] + 12) * 0x1p11 : Ks[p] + 2;
        bad += outside(out[p], want[p], mag[p], n[p], Ks[p], factor, u, what[p], cfg);
        mf_tensor_release(out[p]);
    }
    mf_tensor_release(x), mf_tensor_release(w), mf_tensor_release(dy);
    ref_free(&r);
    assert_int_equal(bad, 0);
}

static Case random_case(MfConvAlgo algo)
{
    Case c = {.N = rnd_int(1, 3), .H = rnd_int(1, 13), .W = rnd_int(1, 13),
              .C = rnd_int(1, 20), .k = 3, .O = rnd_int(1, 40), .s = 1,
              .same = (int)rnd_int(0, 1), .algo = algo};
    if (algo == MF_CONV_DIRECT) { /* any filter and stride; few channels */
        c.C = rnd_int(1, 4);
        c.k = rnd_int(1, 5);
        c.s = rnd_int(1, 3);
        c.O = rnd_int(0, 1) ? 32 * rnd_int(1, 2) : rnd_int(1, 40);
    }
    if (!c.same) { /* VALID needs the filter inside the input */
        c.H = c.H < c.k ? c.k + rnd_int(0, 3) : c.H;
        c.W = c.W < c.k ? c.k + rnd_int(0, 3) : c.W;
    }
    return c;
}

static void test_winograd_random(void **state)
{
    (void)state;
    worst_ratio = 0;
    for (int i = 0; i < 60; i++) {
        Case c = random_case(MF_CONV_WINOGRAD);
        check_case(&c, MF_FLOAT32);
    }
    print_message("winograd: worst |error| = %.0f K u S\n", worst_ratio);
}

/* An output whose whole field is zeros (digits inside their zero border) is
 * an exact 0, as im2col and PyTorch give it: the bound above is 0 there
 * (S = 0). Winograd's transforms left up to ~1e-7 of rounding there, which
 * a ReLU then passed with its gradient (issue #27); dx likewise where dy's
 * field is zero. */
static void test_winograd_exact_zeros(void **state)
{
    (void)state;
    Case digits = {.N = 2, .H = 14, .W = 14, .C = 4, .k = 3, .O = 24, .s = 1, .same = 1,
                   .algo = MF_CONV_WINOGRAD, .border = 4};
    check_case(&digits, MF_FLOAT32);
    for (int i = 0; i < 20; i++) {
        Case c = random_case(MF_CONV_WINOGRAD);
        c.border = rnd_int(1, 3);
        check_case(&c, MF_FLOAT32);
    }
}

static void test_direct_random(void **state)
{
    (void)state;
    worst_ratio = 0;
    for (int i = 0; i < 80; i++) {
        Case c = random_case(MF_CONV_DIRECT);
        check_case(&c, MF_FLOAT32);
    }
    print_message("direct: worst |error| = %.2f K u S\n", worst_ratio);
}

/* The first layers the direct kernel unrolls completely (3x3 on 1 or 3
 * channels, stride 1) and their neighbours, with widths that take every
 * pixel block (8, 4 and single pixels) and both paddings. */
static void test_direct_first_layers(void **state)
{
    (void)state;
    worst_ratio = 0;
    static const int64_t shapes[][4] = { /* C, O, stride, filter size */
        {1, 32, 1, 3}, {3, 32, 1, 3}, {3, 64, 1, 3}, {1, 64, 1, 3}, {1, 32, 2, 3},
        {3, 32, 2, 3}, {2, 32, 1, 3}, {1, 40, 1, 3}, {1, 32, 1, 5}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int same = 0; same <= 1; same++) {
            Case c = {.N = 2, .H = 7 + same, .W = 13 + 2 * same, .C = shapes[i][0],
                      .k = shapes[i][3], .O = shapes[i][1], .s = shapes[i][2], .same = same,
                      .algo = MF_CONV_DIRECT};
            check_case(&c, MF_FLOAT32);
        }
    /* the first layer's backprop-input reads dy in place: every block of 8, 4
     * and 1 pixels at either edge of a row, or both, and images 1 to 3 rows tall */
    static const int64_t widths[] = {2, 3, 4, 5, 8, 9, 12, 16, 28};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        Case c = {.N = 2, .H = 1 + (int64_t)i % 3, .W = widths[i], .C = 1, .k = 3, .O = 32,
                  .s = 1, .same = 1, .algo = MF_CONV_DIRECT};
        check_case(&c, MF_FLOAT32);
    }
    print_message("direct first layers: worst |error| = %.2f K u S\n", worst_ratio);
}

/* float64 never takes a transform: asked for winograd or direct, it runs
 * im2col, within the summation bound of float64 (so exact to DGEMM). */
static void test_float64_stays_im2col(void **state)
{
    (void)state;
    for (int i = 0; i < 20; i++) {
        Case c = random_case(i % 2 ? MF_CONV_WINOGRAD : MF_CONV_DIRECT);
        check_case(&c, MF_FLOAT64);
    }
    MfConvGeom g = {.N = 1, .H = 8, .W = 8, .C = 64, .kh = 3, .kw = 3, .O = 64, .Ho = 8,
                    .Wo = 8, .sh = 1, .sw = 1, .dh = 1, .dw = 1};
    assert_int_equal(mf_conv_choose(&g, MF_FLOAT64, MF_CONV_WINOGRAD), MF_CONV_IM2COL);
    assert_int_equal(mf_conv_choose(&g, MF_FLOAT64, MF_CONV_AUTO), MF_CONV_IM2COL);
}

/* 'auto' is a rule on the shape: the same answer every time, for the
 * documented cases. */
static void test_auto_rule(void **state)
{
    (void)state;
    MfConvGeom g = {.N = 32, .H = 28, .W = 28, .C = 1, .kh = 3, .kw = 3, .O = 32, .Ho = 28,
                    .Wo = 28, .sh = 1, .sw = 1, .dh = 1, .dw = 1};
    for (int rep = 0; rep < 2; rep++) {
        g.C = 1;
        assert_int_equal(mf_conv_choose(&g, MF_FLOAT32, MF_CONV_AUTO), MF_CONV_DIRECT);
        g.C = 4;
        assert_int_equal(mf_conv_choose(&g, MF_FLOAT32, MF_CONV_AUTO), MF_CONV_DIRECT);
        g.C = 32;
        assert_int_equal(mf_conv_choose(&g, MF_FLOAT32, MF_CONV_AUTO), MF_CONV_WINOGRAD);
        g.sh = 2;
        assert_int_equal(mf_conv_choose(&g, MF_FLOAT32, MF_CONV_AUTO), MF_CONV_IM2COL);
        assert_int_equal(mf_conv_choose(&g, MF_FLOAT32, MF_CONV_WINOGRAD), MF_CONV_IM2COL);
        g.sh = 1;
        g.O = 8;
        assert_int_equal(mf_conv_choose(&g, MF_FLOAT32, MF_CONV_AUTO), MF_CONV_IM2COL);
        g.O = 32;
        g.kh = g.kw = 5;
        assert_int_equal(mf_conv_choose(&g, MF_FLOAT32, MF_CONV_AUTO), MF_CONV_IM2COL);
        assert_int_equal(mf_conv_choose(&g, MF_FLOAT32, MF_CONV_DIRECT), MF_CONV_DIRECT);
        g.kh = g.kw = 3;
    }
    /* the process-wide setting applies to calls that ask for auto */
    mf_conv_set_algorithm(MF_CONV_IM2COL);
    assert_int_equal(mf_conv_choose(&g, MF_FLOAT32, MF_CONV_AUTO), MF_CONV_IM2COL);
    assert_int_equal(mf_conv_choose(&g, MF_FLOAT32, MF_CONV_WINOGRAD), MF_CONV_WINOGRAD);
    mf_conv_set_algorithm(MF_CONV_AUTO);
    assert_int_equal(mf_conv_algorithm_parse("winograd"), MF_CONV_WINOGRAD);
    assert_int_equal(mf_conv_algorithm_parse("fft"), -1);
}

/* A float32 tensor of 'shape' from a fixed LCG. */
static MfTensor *noise(const int64_t *shape, uint32_t seed)
{
    MfTensor *t = mf_tensor_new(MF_FLOAT32, 4, shape);
    assert_non_null(t);
    float *p = mf_tensor_data(t);
    for (int64_t i = 0; i < mf_tensor_numel(t); i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)(seed >> 8) / (float)(1u << 23) - 1.0f;
    }
    return t;
}

static bool same_bits(const MfTensor *a, const MfTensor *b)
{
    return memcmp(mf_tensor_data(a), mf_tensor_data(b),
                  (size_t)mf_tensor_numel(a) * sizeof(float)) == 0;
}

/* The direct and Winograd kernels give the same bits on 1 and 2 threads:
 * each output element has one writer, dw's partial sums are added in
 * block order, and Winograd's 36 GEMMs are shared out whole (each one the
 * same single-threaded call as on one thread). Run 1: 1 thread; run 2: 2
 * threads, each running one chunk of a job only, so each pass's split loop
 * must have run on two threads (the pool counts them); run 3: 2 threads as
 * usual (a thread takes any chunk the other has not). */
static void threads_bitwise(MfConvAlgo algo, int64_t C, int64_t O)
{
    MfTensor *x = noise((int64_t[]){8, 30, 30, C}, 1), *w = noise((int64_t[]){3, 3, C, O}, 2);
    MfTensor *dy = noise((int64_t[]){8, 30, 30, O}, 3);
    MfAttrs a = mf_attrs_default();
    a.padding = 1;
    a.conv_algorithm = (int)algo;
    MfTensor *out[3][3];
    int ran_on[3] = {0, 0, 0};
    for (int t = 0; t < 3; t++) {
        mf_parallel_set_threads(t == 0 ? 1 : 2);
        mf_parallel_set_one_chunk_each(t == 1);
        MfAttrs b = a;
        assert_int_equal(mf_op1(MF_OP_CONV2D, 2, (MfTensor *[]){x, w}, &b, &out[t][0]), MF_OK);
        ran_on[0] = t == 1 ? mf_parallel_last_threads() : ran_on[0];
        b.nints = 4;
        memcpy(b.ints, x->shape, 4 * sizeof(int64_t));
        assert_int_equal(mf_op1(MF_OP_CONV2D_BACKPROP_INPUT, 2, (MfTensor *[]){w, dy}, &b,
                                &out[t][1]), MF_OK);
        ran_on[1] = t == 1 ? mf_parallel_last_threads() : ran_on[1];
        memcpy(b.ints, w->shape, 4 * sizeof(int64_t));
        assert_int_equal(mf_op1(MF_OP_CONV2D_BACKPROP_FILTER, 2, (MfTensor *[]){x, dy}, &b,
                                &out[t][2]), MF_OK);
        ran_on[2] = t == 1 ? mf_parallel_last_threads() : ran_on[2];
    }
    mf_parallel_set_threads(1);
    mf_parallel_set_one_chunk_each(false);
    bool same = true;
    for (int p = 0; p < 3; p++) {
        same = same && same_bits(out[0][p], out[1][p]) && same_bits(out[0][p], out[2][p]);
        mf_tensor_release(out[0][p]);
        mf_tensor_release(out[1][p]);
        mf_tensor_release(out[2][p]);
        if (ran_on[p] != 2)
            fail_msg("pass %d of algorithm %d ran on %d thread(s), expected 2", p, (int)algo,
                     ran_on[p]);
    }
    mf_tensor_release(x), mf_tensor_release(w), mf_tensor_release(dy);
    assert_true(same);
}

static void test_threads_bitwise(void **state)
{
    (void)state;
    threads_bitwise(MF_CONV_DIRECT, 1, 32);
    threads_bitwise(MF_CONV_DIRECT, 3, 40);
    threads_bitwise(MF_CONV_WINOGRAD, 16, 32);
}

/* The filter-transform cache keys on the filter's bytes: a filter written
 * in place gets a fresh transform (the result follows the new values). */
static void test_winograd_cache_follows_writes(void **state)
{
    (void)state;
    MfTensor *x = noise((int64_t[]){1, 8, 8, 16}, 4), *w = noise((int64_t[]){3, 3, 16, 16}, 5);
    MfAttrs a = mf_attrs_default();
    a.padding = 1;
    a.conv_algorithm = MF_CONV_WINOGRAD;
    MfTensor *y1 = NULL, *y2 = NULL, *y3 = NULL, *ref = NULL;
    assert_int_equal(mf_op1(MF_OP_CONV2D, 2, (MfTensor *[]){x, w}, &a, &y1), MF_OK);
    ((float *)mf_tensor_data(w))[0] += 1.0f; /* in place, same tensor */
    assert_int_equal(mf_op1(MF_OP_CONV2D, 2, (MfTensor *[]){x, w}, &a, &y2), MF_OK);
    a.conv_algorithm = MF_CONV_IM2COL;
    assert_int_equal(mf_op1(MF_OP_CONV2D, 2, (MfTensor *[]){x, w}, &a, &ref), MF_OK);
    a.conv_algorithm = MF_CONV_WINOGRAD;
    mf_winograd_cache_clear();
    assert_int_equal(mf_op1(MF_OP_CONV2D, 2, (MfTensor *[]){x, w}, &a, &y3), MF_OK);
    bool changed = !same_bits(y1, y2), fresh = same_bits(y2, y3);
    double worst = 0;
    for (int64_t i = 0; i < mf_tensor_numel(ref); i++)
        worst = fmax(worst, fabs(mf_tensor_get(y2, i) - mf_tensor_get(ref, i)));
    mf_tensor_release(y1), mf_tensor_release(y2), mf_tensor_release(y3);
    mf_tensor_release(ref), mf_tensor_release(x), mf_tensor_release(w);
    assert_true(changed);
    assert_true(fresh);
    assert_true(worst < 1e-3);
}

/* A Winograd Conv2D shows the profiler its 36 GEMMs, labelled "winograd",
 * with M = tiles, N = Cout, K = Cin; backprop-input swaps the channels and
 * backprop-filter multiplies V^T (Cin x tiles) by Z (tiles x Cout). */
static void test_winograd_gemms_profiled(void **state)
{
    (void)state;
    int64_t xs[4] = {2, 10, 9, 16}, ws[4] = {3, 3, 16, 24}, ys[4] = {2, 10, 9, 24};
    MfTensor *x = noise(xs, 7), *w = noise(ws, 8), *dy = noise(ys, 9), *o[3] = {0};
    MfAttrs a = mf_attrs_default();
    a.padding = 1;
    a.conv_algorithm = MF_CONV_WINOGRAD;
    mf_prof_start();
    assert_int_equal(mf_conv2d(x, w, &a, false, &o[0]), MF_OK);
    assert_int_equal(mf_conv2d_backprop_input(xs, w, dy, &a, false, &o[1]), MF_OK);
    assert_int_equal(mf_conv2d_backprop_filter(x, ws, dy, &a, false, &o[2]), MF_OK);
    mf_prof_stop();
    int64_t n, tiles = 2 * 3 * 3; /* 10x9 output in 4x4 tiles: 3 x 3 per image */
    const MfProfEvent *e = mf_prof_events(&n);
    static const struct { const char *op; int64_t M, N, K; bool ta; } want[3] = {
        {"Conv2D", 0, 24, 16, false},
        {"Conv2DBackpropInput", 0, 16, 24, false},
        {"Conv2DBackpropFilter", 16, 24, 0, true},
    };
    int count[3] = {0, 0, 0}, wrong = 0;
    for (int64_t i = 0; i < n; i++) {
        if (e[i].kind != MF_PROF_GEMM)
            continue;
        int k = strcmp(e[i].op, "Conv2D") == 0 ? 0
                : strcmp(e[i].op, "Conv2DBackpropInput") == 0 ? 1 : 2;
        count[k]++;
        int64_t M = want[k].M ? want[k].M : tiles, K = want[k].K ? want[k].K : tiles;
        wrong += !e[i].algorithm || strcmp(e[i].algorithm, "winograd") != 0 || e[i].M != M ||
                 e[i].N != want[k].N || e[i].K != K || e[i].trans_a != want[k].ta;
    }
    for (int i = 0; i < 3; i++)
        mf_tensor_release(o[i]);
    mf_tensor_release(x), mf_tensor_release(w), mf_tensor_release(dy);
    assert_int_equal(wrong, 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(count[i], 36);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_winograd_random),
        TEST(test_winograd_exact_zeros),
        TEST(test_direct_random),
        TEST(test_direct_first_layers),
        TEST(test_float64_stays_im2col),
        TEST(test_auto_rule),
        TEST(test_threads_bitwise),
        TEST(test_winograd_cache_follows_writes),
        TEST(test_winograd_gemms_profiled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
