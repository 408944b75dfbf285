/* test_kernel_random.c — seeded random differential tests of the kernels
 * this session rewrote, against naive loops written here from the
 * definitions:
 *  - MaxPool, AvgPool, MaxPoolGrad (general and tiling kernels),
 *    AvgPoolGrad and MaxPoolGradGrad on random NHWC geometries: non-square
 *    windows and strides, SAME / VALID, windows that tile the input, values
 *    drawn from a few integers (ties), -0 / +0 and NaN, float32 and float64,
 *    transposed (non-contiguous) inputs, and more than 512 channels (the
 *    routing's heap scratch instead of its stack);
 *  - Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter on random
 *    geometries weighted towards one input channel and filter rows around
 *    im2col's 64-byte inline-copy threshold, with strides, dilations,
 *    SAME / VALID;
 *  - ksize, strides and dilations up to INT64_MAX (no overflow);
 *  - the allocator under mixed sizes across the small, class and coloured
 *    (>= 64 KiB) ranges: every block 64-byte aligned, no two live blocks
 *    overlap (each keeps its fill pattern until freed), the in-use count
 *    returns to where it started.
 * MF_KERNEL_RANDOM_ROUNDS multiplies the number of cases (default 1: about
 * 1 s in a release build); MF_KERNEL_RANDOM_SEED changes the seed. A failure
 * prints the case, which reproduces with the same seed. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/ops/conv.h"
#include "core/ops/pool.h"
#include "core/ops/view.h"

static uint64_t rng_state;

static uint64_t next_u64(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return rng_state >> 17;
}

/* Uniform in [lo, hi]. */
static int64_t rnd_int(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(next_u64() % (uint64_t)(hi - lo + 1));
}

static double rnd_unit(void)
{
    return (double)(next_u64() & ((1u << 30) - 1)) / (double)(1u << 30) * 2.0 - 1.0;
}

static int rounds(void)
{
    const char *s = getenv("MF_KERNEL_RANDOM_ROUNDS");
    int r = s ? atoi(s) : 1;
    return r > 0 ? r : 1;
}

static void seed_rng(uint64_t salt)
{
    const char *s = getenv("MF_KERNEL_RANDOM_SEED");
    rng_state = (s ? strtoull(s, NULL, 10) : 20261121u) ^ salt;
}

/* TensorFlow's output size and leading pad along one axis. */
static void tf_axis(int same, int64_t in, int64_t k, int64_t s, int64_t *out, int64_t *pad)
{
    if (same) {
        *out = (in + s - 1) / s;
        int64_t total = (*out - 1) * s + k - in;
        *pad = total > 0 ? total / 2 : 0;
    } else {
        *out = (in - k) / s + 1;
        *pad = 0;
    }
}

static double *alloc_doubles(int64_t n)
{
    double *v = calloc((size_t)(n > 0 ? n : 1), sizeof *v);
    assert_non_null(v);
    return v;
}

/* Elementwise equality, NaN equal to NaN, within 'tol' relative to the
 * larger of 1 and |want|; -0 and +0 compare equal (a max's sign of zero
 * is the first maximum's, checked through the gradients instead). */
static void expect_close(const MfTensor *t, const double *want, int64_t n, double tol,
                         const char *what, const char *cfg)
{
    assert_int_equal(mf_tensor_numel(t), n);
    for (int64_t i = 0; i < n; i++) {
        double got = mf_tensor_get(t, i);
        if (isnan(want[i]) && isnan(got))
            continue;
        if (!(fabs(got - want[i]) <= tol * fmax(1, fabs(want[i]))))
            fail_msg("%s differs at %lld: got %.17g, want %.17g (%s)", what, (long long)i,
                     got, want[i], cfg);
    }
}

/* ---- pooling ------------------------------------------------------------------------ */

typedef struct PoolCase {
    int64_t n, h, w, c, kh, kw, sh, sw;
    int same, transposed;
    MfDType dt;
} PoolCase;

/* Index of x[b, i, j, ch] in an NHWC array of the given sizes. */
static int64_t nhwc(int64_t b, int64_t i, int64_t j, int64_t ch, int64_t h, int64_t w, int64_t c)
{
    return ((b * h + i) * w + j) * c + ch;
}

typedef struct PoolRef {
    int64_t oh, ow, nx, ny;
    double *ymax, *yavg, *dxmax, *dxavg, *ddy; /* ddy: MaxPoolGradGrad of ddx */
} PoolRef;

/* The loops: the maximum is the first element of the window (row-major),
 * replaced by any later element strictly greater (so a NaN counts only as
 * the first element, and ties go to the first); the gradient goes to it. */
static void pool_ref(const PoolCase *p, const double *x, const double *dy, const double *ddx,
                     PoolRef *r)
{
    int64_t pt, pl;
    tf_axis(p->same, p->h, p->kh, p->sh, &r->oh, &pt);
    tf_axis(p->same, p->w, p->kw, p->sw, &r->ow, &pl);
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t i = 0; i < r->oh; i++)
            for (int64_t j = 0; j < r->ow; j++)
                for (int64_t ch = 0; ch < p->c; ch++) {
                    int64_t at = -1, cnt = 0;
                    double best = 0, sum = 0;
                    for (int64_t a = 0; a < p->kh; a++)
                        for (int64_t q = 0; q < p->kw; q++) {
                            int64_t hi = i * p->sh - pt + a, wj = j * p->sw - pl + q;
                            if (hi < 0 || hi >= p->h || wj < 0 || wj >= p->w)
                                continue;
                            int64_t xi = nhwc(b, hi, wj, ch, p->h, p->w, p->c);
                            /* NaN propagates: the first NaN is the maximum */
                            bool nan_first = x[xi] != x[xi] && best == best;
                            if (at < 0 || x[xi] > best || nan_first)
                                best = x[xi], at = xi;
                            sum += x[xi];
                            cnt++;
                        }
                    int64_t o = nhwc(b, i, j, ch, r->oh, r->ow, p->c);
                    r->ymax[o] = best;
                    r->yavg[o] = sum / (double)cnt;
                    r->dxmax[at] += dy[o];
                    r->ddy[o] = ddx[at];
                    for (int64_t a = 0; a < p->kh; a++)
                        for (int64_t q = 0; q < p->kw; q++) {
                            int64_t hi = i * p->sh - pt + a, wj = j * p->sw - pl + q;
                            if (hi >= 0 && hi < p->h && wj >= 0 && wj < p->w)
                                r->dxavg[nhwc(b, hi, wj, ch, p->h, p->w, p->c)] +=
                                    dy[o] / (double)cnt;
                        }
                }
}

/* Values with many ties: a few integers, signed zeros, now and then a NaN. */
static double pool_value(int nan_rate)
{
    int64_t k = rnd_int(0, 99);
    if (k < nan_rate)
        return DNAN;
    if (k < 15)
        return k % 2 ? -0.0 : 0.0;
    return (double)rnd_int(-3, 3);
}

/* The input tensor of 'p' holding 'x' (logical NHWC order): contiguous, or
 * a transposed view of an NWHC tensor. */
static MfTensor *pool_input(const PoolCase *p, const double *x)
{
    int64_t xs[4] = {p->n, p->h, p->w, p->c};
    if (!p->transposed)
        return make_tensor(p->dt, 4, xs, x);
    int64_t ts[4] = {p->n, p->w, p->h, p->c}, nx = mf_shape_numel(4, xs);
    double *v = alloc_doubles(nx);
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t i = 0; i < p->h; i++)
            for (int64_t j = 0; j < p->w; j++)
                for (int64_t ch = 0; ch < p->c; ch++)
                    v[nhwc(b, j, i, ch, p->w, p->h, p->c)] = x[nhwc(b, i, j, ch, p->h, p->w,
                                                                    p->c)];
    MfTensor *base = make_tensor(p->dt, 4, ts, v), *view = NULL;
    assert_int_equal(mf_transpose(base, (int64_t[]){0, 2, 1, 3}, 4, &view), MF_OK);
    mf_tensor_release(base);
    free(v);
    return view;
}

static MfTensor *run_op(MfOpId op, int n, MfTensor **in, const MfAttrs *a, const char *cfg)
{
    MfTensor *out = NULL;
    if (mf_op1(op, n, in, a, &out) != MF_OK)
        fail_msg("op %d failed: %s (%s)", (int)op, mf_err_msg(), cfg);
    return out;
}

/* Runs the five pooling ops on case 'p' and compares them with the loops;
 * MaxPool, MaxPoolGrad and MaxPoolGradGrad exactly (a gradient at the wrong
 * element of a tie, -0 / +0 included, shows as a misplaced value). */
static void check_pool_case(const PoolCase *p)
{
    char cfg[200];
    snprintf(cfg, sizeof cfg, "n%lld %lldx%lldx%lld k%lldx%lld s%lldx%lld %s%s %s",
             (long long)p->n, (long long)p->h, (long long)p->w, (long long)p->c,
             (long long)p->kh, (long long)p->kw, (long long)p->sh, (long long)p->sw,
             p->same ? "SAME" : "VALID", p->transposed ? " transposed" : "",
             mf_dtype_name(p->dt));
    PoolRef r;
    int64_t pt, pl;
    tf_axis(p->same, p->h, p->kh, p->sh, &r.oh, &pt);
    tf_axis(p->same, p->w, p->kw, p->sw, &r.ow, &pl);
    r.nx = p->n * p->h * p->w * p->c;
    r.ny = p->n * r.oh * r.ow * p->c;
    double *x = alloc_doubles(r.nx), *dy = alloc_doubles(r.ny), *ddx = alloc_doubles(r.nx);
    int nan_rate = rnd_int(0, 2) == 0 ? 4 : 0;
    for (int64_t i = 0; i < r.nx; i++)
        x[i] = pool_value(nan_rate), ddx[i] = (double)i;
    for (int64_t i = 0; i < r.ny; i++)
        dy[i] = (double)rnd_int(1, 8); /* exact sums in float32 */
    r.ymax = alloc_doubles(r.ny), r.yavg = alloc_doubles(r.ny), r.ddy = alloc_doubles(r.ny);
    r.dxmax = alloc_doubles(r.nx), r.dxavg = alloc_doubles(r.nx);
    pool_ref(p, x, dy, ddx, &r);

    int64_t ys[4] = {p->n, r.oh, r.ow, p->c}, xs[4] = {p->n, p->h, p->w, p->c};
    MfTensor *xt = pool_input(p, x), *dyt = make_tensor(p->dt, 4, ys, dy);
    MfTensor *ddxt = make_tensor(p->dt, 4, xs, ddx), *mx = NULL, *av = NULL;
    int64_t ks[4] = {1, p->kh, p->kw, 1}, ss[4] = {1, p->sh, p->sw, 1};
    assert_int_equal(mf_max_pool(xt, ks, ss, p->same, &mx), MF_OK);
    assert_int_equal(mf_avg_pool(xt, ks, ss, p->same, &av), MF_OK);
    double tol = p->dt == MF_FLOAT32 ? 1e-6 : 1e-14;
    expect_close(mx, r.ymax, r.ny, 0, "MaxPool", cfg);
    expect_close(av, r.yavg, r.ny, tol, "AvgPool", cfg);
    MfAttrs a = mf_attrs_default();
    memcpy(a.ksize, ks, sizeof ks);
    memcpy(a.strides, ss, sizeof ss);
    a.padding = p->same;
    MfTensor *gm = run_op(MF_OP_MAX_POOL_GRAD, 3, (MfTensor *[]){xt, mx, dyt}, &a, cfg);
    MfTensor *ga = run_op(MF_OP_AVG_POOL_GRAD, 2, (MfTensor *[]){xt, dyt}, &a, cfg);
    MfTensor *gg = run_op(MF_OP_MAX_POOL_GRAD_GRAD, 3, (MfTensor *[]){xt, mx, ddxt}, &a, cfg);
    expect_close(gm, r.dxmax, r.nx, 0, "MaxPoolGrad", cfg);
    expect_close(ga, r.dxavg, r.nx, tol, "AvgPoolGrad", cfg);
    if (p->dt == MF_FLOAT64 || r.nx < (1 << 24)) /* ddx = index: exact in float32 */
        expect_close(gg, r.ddy, r.ny, 0, "MaxPoolGradGrad", cfg);
    MfTensor *all[] = {xt, dyt, ddxt, mx, av, gm, ga, gg};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mf_tensor_release(all[i]);
    free(x), free(dy), free(ddx), free(r.ymax), free(r.yavg), free(r.ddy), free(r.dxmax);
    free(r.dxavg);
}

/* A random pooling case; one in four tiles the input exactly, one in
 * twenty has more than 512 channels. */
static PoolCase random_pool_case(void)
{
    PoolCase p = {.n = rnd_int(1, 3), .c = rnd_int(1, 7), .kh = rnd_int(1, 4),
                  .kw = rnd_int(1, 4), .sh = rnd_int(1, 4), .sw = rnd_int(1, 4),
                  .same = (int)rnd_int(0, 1), .transposed = rnd_int(0, 3) == 0,
                  .dt = rnd_int(0, 1) ? MF_FLOAT64 : MF_FLOAT32};
    p.h = rnd_int(1, 9), p.w = rnd_int(1, 9);
    if (rnd_int(0, 3) == 0) { /* tiling: ksize == strides, sizes multiples */
        p.sh = p.kh, p.sw = p.kw, p.same = (int)rnd_int(0, 1);
        p.h = p.kh * rnd_int(1, 3), p.w = p.kw * rnd_int(1, 3);
    }
    if (rnd_int(0, 19) == 0)
        p.c = rnd_int(513, 530), p.n = rnd_int(1, 2), p.h = rnd_int(1, 4), p.w = rnd_int(1, 4);
    if (!p.same && p.kh > p.h)
        p.kh = p.h;
    if (!p.same && p.kw > p.w)
        p.kw = p.w;
    return p;
}

static void test_pool_random(void **state)
{
    (void)state;
    seed_rng(1);
    int cases = 400 * rounds();
    for (int i = 0; i < cases; i++) {
        PoolCase p = random_pool_case();
        check_pool_case(&p);
    }
    print_message("%d pooling cases\n", cases);
}

/* ---- convolution --------------------------------------------------------------------- */

typedef struct ConvCase {
    int64_t N, H, W, C, kh, kw, O, sh, sw, dh, dw;
    int same;
    MfDType dt;
} ConvCase;

static void conv_geom(const ConvCase *c, int64_t *Ho, int64_t *Wo, int64_t *pt, int64_t *pl)
{
    tf_axis(c->same, c->H, (c->kh - 1) * c->dh + 1, c->sh, Ho, pt);
    tf_axis(c->same, c->W, (c->kw - 1) * c->dw + 1, c->sw, Wo, pl);
}

/* Largest |got - want| over the largest |want| (at least 1). */
static double rel_err(const MfTensor *t, const double *want, int64_t n)
{
    double worst = 0, scale = 1;
    for (int64_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(want[i]));
    for (int64_t i = 0; i < n; i++)
        worst = fmax(worst, fabs(mf_tensor_get(t, i) - want[i]));
    return worst / scale;
}

static void expect_conv(const MfTensor *t, const double *want, int64_t n, double tol,
                        const char *what, const char *cfg)
{
    double e = rel_err(t, want, n);
    if (!(e <= tol))
        fail_msg("%s differs from the loops by %g (%s)", what, e, cfg);
}

static void check_conv_case(const ConvCase *c)
{
    int64_t Ho, Wo, pt, pl;
    conv_geom(c, &Ho, &Wo, &pt, &pl);
    int64_t xs[4] = {c->N, c->H, c->W, c->C}, ws[4] = {c->kh, c->kw, c->C, c->O};
    int64_t ys[4] = {c->N, Ho, Wo, c->O};
    int64_t nx = mf_shape_numel(4, xs), nw = mf_shape_numel(4, ws), ny = mf_shape_numel(4, ys);
    double *xv = alloc_doubles(nx), *wv = alloc_doubles(nw), *dyv = alloc_doubles(ny);
    double *y = alloc_doubles(ny), *dx = alloc_doubles(nx), *dw = alloc_doubles(nw);
    for (int64_t i = 0; i < nx; i++)
        xv[i] = rnd_unit();
    for (int64_t i = 0; i < nw; i++)
        wv[i] = rnd_unit();
    for (int64_t i = 0; i < ny; i++)
        dyv[i] = rnd_unit();
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t oh = 0; oh < Ho; oh++)
            for (int64_t ow = 0; ow < Wo; ow++)
                for (int64_t i = 0; i < c->kh; i++)
                    for (int64_t j = 0; j < c->kw; j++) {
                        int64_t ih = oh * c->sh - pt + i * c->dh, iw = ow * c->sw - pl + j * c->dw;
                        if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W)
                            continue;
                        for (int64_t ch = 0; ch < c->C; ch++)
                            for (int64_t o = 0; o < c->O; o++) {
                                int64_t xi = nhwc(n, ih, iw, ch, c->H, c->W, c->C);
                                int64_t wi = ((i * c->kw + j) * c->C + ch) * c->O + o;
                                int64_t yi = nhwc(n, oh, ow, o, Ho, Wo, c->O);
                                y[yi] += xv[xi] * wv[wi];
                                dx[xi] += dyv[yi] * wv[wi];
                                dw[wi] += xv[xi] * dyv[yi];
                            }
                    }
    char cfg[200];
    snprintf(cfg, sizeof cfg, "N%lld %lldx%lldx%lld k%lldx%lld O%lld s%lld,%lld d%lld,%lld %s %s",
             (long long)c->N, (long long)c->H, (long long)c->W, (long long)c->C,
             (long long)c->kh, (long long)c->kw, (long long)c->O, (long long)c->sh,
             (long long)c->sw, (long long)c->dh, (long long)c->dw, c->same ? "SAME" : "VALID",
             mf_dtype_name(c->dt));
    MfTensor *x = make_tensor(c->dt, 4, xs, xv), *w = make_tensor(c->dt, 4, ws, wv);
    MfTensor *dyt = make_tensor(c->dt, 4, ys, dyv);
    MfAttrs a = mf_attrs_default();
    memcpy(a.strides, (int64_t[]){1, c->sh, c->sw, 1}, 4 * sizeof(int64_t));
    memcpy(a.dilations, (int64_t[]){1, c->dh, c->dw, 1}, 4 * sizeof(int64_t));
    a.padding = c->same;
    double tol = c->dt == MF_FLOAT32 ? 1e-5 : 1e-12;
    MfTensor *out = run_op(MF_OP_CONV2D, 2, (MfTensor *[]){x, w}, &a, cfg);
    expect_conv(out, y, ny, tol, "Conv2D", cfg);
    mf_tensor_release(out);
    a.nints = 4;
    memcpy(a.ints, xs, sizeof xs);
    out = run_op(MF_OP_CONV2D_BACKPROP_INPUT, 2, (MfTensor *[]){w, dyt}, &a, cfg);
    expect_conv(out, dx, nx, tol, "Conv2DBackpropInput", cfg);
    mf_tensor_release(out);
    memcpy(a.ints, ws, sizeof ws);
    out = run_op(MF_OP_CONV2D_BACKPROP_FILTER, 2, (MfTensor *[]){x, dyt}, &a, cfg);
    expect_conv(out, dw, nw, tol * 4, "Conv2DBackpropFilter", cfg);
    mf_tensor_release(out);
    mf_tensor_release(x), mf_tensor_release(w), mf_tensor_release(dyt);
    free(xv), free(wv), free(dyv), free(y), free(dx), free(dw);
}

/* Half the cases have one input channel; filter rows of kw*C elements run
 * from one element to past 64 bytes (im2col's inline-copy bound). */
static ConvCase random_conv_case(void)
{
    ConvCase c = {.N = rnd_int(1, 2), .C = rnd_int(0, 1) ? 1 : rnd_int(2, 5),
                  .kh = rnd_int(1, 4), .O = rnd_int(1, 4), .sh = rnd_int(1, 3),
                  .sw = rnd_int(1, 3), .dh = rnd_int(0, 2) ? 1 : rnd_int(2, 3),
                  .dw = rnd_int(0, 2) ? 1 : rnd_int(2, 3), .same = (int)rnd_int(0, 1),
                  .dt = rnd_int(0, 1) ? MF_FLOAT64 : MF_FLOAT32};
    c.kw = c.C == 1 && rnd_int(0, 1) ? rnd_int(12, 20) : rnd_int(1, 5);
    c.H = rnd_int(1, 12), c.W = rnd_int(1, 24);
    if (!c.same) { /* VALID needs the dilated filter inside the input */
        if ((c.kh - 1) * c.dh + 1 > c.H)
            c.H = (c.kh - 1) * c.dh + 1 + rnd_int(0, 3);
        if ((c.kw - 1) * c.dw + 1 > c.W)
            c.W = (c.kw - 1) * c.dw + 1 + rnd_int(0, 3);
    }
    return c;
}

static void test_conv_random(void **state)
{
    (void)state;
    seed_rng(2);
    int cases = 250 * rounds();
    for (int i = 0; i < cases; i++) {
        ConvCase c = random_conv_case();
        check_conv_case(&c);
    }
    print_message("%d convolution cases\n", cases);
}

/* ksize, strides and dilations up to INT64_MAX: TensorFlow's SAME sizes
 * computed without overflow (UBSan found in + s - 1 and (k - 1) * d + 1
 * overflowing), and a dilated span that does not fit refused. */
static void test_huge_windows(void **state)
{
    (void)state;
    const int64_t M = INT64_MAX;
    double xv[9] = {1, 5, 2, 7, 3, 4, 0, 6, 8}, dyv[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    MfTensor *x = make_tensor(MF_FLOAT64, 4, (int64_t[]){1, 3, 3, 1}, xv), *y = NULL;
    /* a window of M covers the whole image from every position: each output is 8 */
    int64_t kbig[4] = {1, M, M, 1}, s1[4] = {1, 1, 1, 1}, sbig[4] = {1, M, M, 1};
    assert_int_equal(mf_max_pool(x, kbig, s1, 1, &y), MF_OK);
    assert_values(y, (double[]){8, 8, 8, 8, 8, 8, 8, 8, 8}, 9, 0);
    MfTensor *dy = make_tensor(MF_FLOAT64, 4, (int64_t[]){1, 3, 3, 1}, dyv), *dx = NULL;
    MfAttrs a = mf_attrs_default();
    memcpy(a.ksize, kbig, sizeof kbig);
    memcpy(a.strides, s1, sizeof s1);
    a.padding = 1;
    assert_int_equal(mf_op1(MF_OP_MAX_POOL_GRAD, 3, (MfTensor *[]){x, y, dy}, &a, &dx), MF_OK);
    assert_values(dx, (double[]){0, 0, 0, 0, 0, 0, 0, 0, 9}, 9, 0);
    mf_tensor_release(y), mf_tensor_release(dx), mf_tensor_release(dy);
    /* strides of M: one window, at the top left, padded by SAME's rule */
    assert_int_equal(mf_avg_pool(x, (int64_t[]){1, 2, 2, 1}, sbig, 1, &y), MF_OK);
    assert_values(y, (double[]){(1 + 5 + 7 + 3) / 4.0}, 1, 1e-15);
    mf_tensor_release(y);
    MfTensor *w = make_tensor(MF_FLOAT64, 4, (int64_t[]){2, 2, 1, 1}, dyv);
    a = mf_attrs_default();
    memcpy(a.strides, sbig, sizeof sbig);
    a.padding = 1;
    assert_int_equal(mf_op1(MF_OP_CONV2D, 2, (MfTensor *[]){x, w}, &a, &y), MF_OK);
    assert_values(y, (double[]){16}, 1, 0);
    mf_tensor_release(y);
    memcpy(a.strides, s1, sizeof s1);
    memcpy(a.dilations, (int64_t[]){1, M, 1, 1}, sizeof a.dilations);
    assert_int_equal(mf_op1(MF_OP_CONV2D, 2, (MfTensor *[]){x, w}, &a, &y), MF_ESHAPE);
    assert_error_contains("conv2d: the filter (2 x 2) with dilations {9223372036854775807, 1} "
                          "is too large");
    mf_tensor_release(w), mf_tensor_release(x);
}

/* ---- allocator ----------------------------------------------------------------------- */

#define LIVE_MAX 64

typedef struct Block {
    unsigned char *p;
    size_t n;
    unsigned char tag;
} Block;

/* Sizes spread over every range: below 64 bytes, the 64-byte granules,
 * the quarter-power classes, and coloured blocks of 64 KiB and more. */
static size_t random_size(void)
{
    switch (rnd_int(0, 3)) {
    case 0: return (size_t)rnd_int(0, 300);
    case 1: return (size_t)rnd_int(301, 65535);
    case 2: return (size_t)rnd_int(65536, 70000);
    default: return (size_t)rnd_int(70001, 600000);
    }
}

static void expect_intact(const Block *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->p[i] != (unsigned char)(b->tag + i % 7))
            fail_msg("block of %zu bytes at %p: byte %zu overwritten", b->n, (void *)b->p, i);
}

static void test_alloc_mixed_sizes(void **state)
{
    (void)state;
    seed_rng(3);
    Block live[LIVE_MAX] = {0};
    size_t base = mf_alloc_in_use();
    int steps = 6000 * rounds(), nlive = 0;
    for (int s = 0; s < steps; s++) {
        int k = (int)rnd_int(0, LIVE_MAX - 1);
        Block *b = &live[k];
        if (b->p) { /* free it, after checking no other block wrote into it */
            expect_intact(b);
            mf_dealloc(b->p, b->n);
            b->p = NULL;
            nlive--;
            continue;
        }
        b->n = random_size();
        b->p = mf_alloc(b->n);
        assert_non_null(b->p);
        assert_int_equal((uintptr_t)b->p % 64, 0);
        b->tag = (unsigned char)s;
        for (size_t i = 0; i < b->n; i++)
            b->p[i] = (unsigned char)(b->tag + i % 7);
        nlive++;
        if (s % 500 == 0)
            mf_alloc_trim(); /* cached blocks go back to the system mid-walk */
    }
    for (int k = 0; k < LIVE_MAX; k++)
        if (live[k].p) {
            expect_intact(&live[k]);
            mf_dealloc(live[k].p, live[k].n);
            nlive--;
        }
    assert_int_equal(nlive, 0);
    assert_int_equal(mf_alloc_in_use(), base);
    mf_alloc_trim();
    assert_int_equal(mf_alloc_cached(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_pool_random),
        TEST(test_conv_random),
        TEST(test_huge_windows),
        TEST(test_alloc_mixed_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
