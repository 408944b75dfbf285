/* test_conv.c — Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter
 * against direct loop implementations written here from the definition
 * (y[n,oh,ow,o] = sum x[n, oh*sh - pt + i*dh, ow*sw - pl + j*dw, c] w[i,j,c,o]
 * and its two adjoints), over many shapes, paddings, strides and dilations,
 * in float32 and float64; the 1x1 path, tiled patch buffers (whole images and
 * parts of one), strided inputs, NCHW composites, the profiler's GEMM sizes,
 * and every error. */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "core/ops/conv.h"
#include "core/ops/view.h"
#include "core/profile/profile.h"

/* ---- reference ------------------------------------------------------------------ */

typedef struct Cfg {
    int64_t N, H, W, C, kh, kw, O;
    int64_t sh, sw, dh, dw;
    int same;
} Cfg;

/* TensorFlow's output size and leading pad, written out again. */
static void ref_axis(int same, int64_t in, int64_t k, int64_t s, int64_t d, int64_t *out,
                     int64_t *pad)
{
    int64_t ek = (k - 1) * d + 1;
    if (same) {
        *out = (in + s - 1) / s;
        int64_t total = (*out - 1) * s + ek - in;
        *pad = total > 0 ? total / 2 : 0;
    } else {
        *out = (in - ek + s) / s;
        *pad = 0;
    }
}

typedef struct Ref {
    int64_t Ho, Wo, pt, pl;
} Ref;

static Ref ref_geom(const Cfg *c)
{
    Ref r;
    ref_axis(c->same, c->H, c->kh, c->sh, c->dh, &r.Ho, &r.pt);
    ref_axis(c->same, c->W, c->kw, c->sw, c->dw, &r.Wo, &r.pl);
    return r;
}

/* Calls 'f(xi, wi, yi)' for every (input, filter, output) index triple of
 * a multiply-add of the convolution. */
#define FOR_TAPS(c, r, BODY)                                                              \
    for (int64_t n = 0; n < (c)->N; n++)                                                  \
        for (int64_t oh = 0; oh < (r).Ho; oh++)                                           \
            for (int64_t ow = 0; ow < (r).Wo; ow++)                                       \
                for (int64_t i = 0; i < (c)->kh; i++)                                     \
                    for (int64_t j = 0; j < (c)->kw; j++) {                               \
                        int64_t ih = oh * (c)->sh - (r).pt + i * (c)->dh;                 \
                        int64_t iw = ow * (c)->sw - (r).pl + j * (c)->dw;                 \
                        if (ih < 0 || ih >= (c)->H || iw < 0 || iw >= (c)->W)             \
                            continue;                                                     \
                        for (int64_t ch = 0; ch < (c)->C; ch++)                           \
                            for (int64_t o = 0; o < (c)->O; o++) {                        \
                                int64_t xi = ((n * (c)->H + ih) * (c)->W + iw) * (c)->C + ch; \
                                int64_t wi = ((i * (c)->kw + j) * (c)->C + ch) * (c)->O + o;  \
                                int64_t yi = ((n * (r).Ho + oh) * (r).Wo + ow) * (c)->O + o;  \
                                BODY;                                                     \
                            }                                                             \
                    }

static uint64_t lcg = 12345;

static double rnd(void)
{
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(lcg >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static double *rnd_array(int64_t n)
{
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = rnd();
    return v;
}

static MfAttrs cfg_attrs(const Cfg *c)
{
    MfAttrs a = mf_attrs_default();
    int64_t s[4] = {1, c->sh, c->sw, 1}, d[4] = {1, c->dh, c->dw, 1};
    memcpy(a.strides, s, sizeof s);
    memcpy(a.dilations, d, sizeof d);
    a.padding = c->same;
    return a;
}

/* Largest |got - want| relative to the largest |want| (at least 1). */
static double rel_err(const MfTensor *t, const double *want, int64_t n)
{
    double worst = 0, scale = 1;
    for (int64_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(want[i]));
    for (int64_t i = 0; i < n; i++)
        worst = fmax(worst, fabs(mf_tensor_get(t, i) - want[i]));
    return worst / scale;
}

static void check_shape(const MfTensor *t, int64_t a, int64_t b, int64_t c, int64_t d)
{
    assert_int_equal(t->rank, 4);
    int64_t want[4] = {a, b, c, d};
    for (int i = 0; i < 4; i++)
        assert_int_equal(t->shape[i], want[i]);
}

/* Runs the three ops of 'c' in 'dt' and compares them with the loops. */
static void check_cfg(const Cfg *c, MfDType dt)
{
    Ref r = ref_geom(c);
    int64_t xs[4] = {c->N, c->H, c->W, c->C}, ws[4] = {c->kh, c->kw, c->C, c->O};
    int64_t ys[4] = {c->N, r.Ho, r.Wo, c->O};
    int64_t nx = mf_shape_numel(4, xs), nw = mf_shape_numel(4, ws), ny = mf_shape_numel(4, ys);
    double *xv = rnd_array(nx), *wv = rnd_array(nw), *dyv = rnd_array(ny);
    double *y = calloc((size_t)ny + 1, sizeof *y), *dx = calloc((size_t)nx + 1, sizeof *dx);
    double *dw = calloc((size_t)nw + 1, sizeof *dw);
    FOR_TAPS(c, r, {
        y[yi] += xv[xi] * wv[wi];
        dx[xi] += dyv[yi] * wv[wi];
        dw[wi] += xv[xi] * dyv[yi];
    })
    MfTensor *x = make_tensor(dt, 4, xs, xv), *w = make_tensor(dt, 4, ws, wv);
    MfTensor *dy = make_tensor(dt, 4, ys, dyv), *out = NULL;
    MfAttrs a = cfg_attrs(c);
    double tol = dt == MF_FLOAT32 ? 2e-5 : 1e-12;
    char what[200];
    snprintf(what, sizeof what, "N%lld %lldx%lldx%lld k%lldx%lld O%lld s%lld,%lld d%lld,%lld %s %s",
             (long long)c->N, (long long)c->H, (long long)c->W, (long long)c->C,
             (long long)c->kh, (long long)c->kw, (long long)c->O, (long long)c->sh,
             (long long)c->sw, (long long)c->dh, (long long)c->dw, c->same ? "SAME" : "VALID",
             mf_dtype_name(dt));
    MfTensor *in[2] = {x, w};
    assert_int_equal(mf_op1(MF_OP_CONV2D, 2, in, &a, &out), MF_OK);
    check_shape(out, ys[0], ys[1], ys[2], ys[3]);
    if (rel_err(out, y, ny) > tol)
        fail_msg("Conv2D differs from the loops: %s (%g)", what, rel_err(out, y, ny));
    mf_tensor_release(out);
    a.nints = 4;
    memcpy(a.ints, xs, sizeof xs);
    in[0] = w;
    in[1] = dy;
    assert_int_equal(mf_op1(MF_OP_CONV2D_BACKPROP_INPUT, 2, in, &a, &out), MF_OK);
    check_shape(out, xs[0], xs[1], xs[2], xs[3]);
    if (rel_err(out, dx, nx) > tol)
        fail_msg("Conv2DBackpropInput differs from the loops: %s (%g)", what,
                 rel_err(out, dx, nx));
    mf_tensor_release(out);
    memcpy(a.ints, ws, sizeof ws);
    in[0] = x;
    assert_int_equal(mf_op1(MF_OP_CONV2D_BACKPROP_FILTER, 2, in, &a, &out), MF_OK);
    check_shape(out, ws[0], ws[1], ws[2], ws[3]);
    if (rel_err(out, dw, nw) > tol * 4)
        fail_msg("Conv2DBackpropFilter differs from the loops: %s (%g)", what,
                 rel_err(out, dw, nw));
    mf_tensor_release(out);
    mf_tensor_release(x);
    mf_tensor_release(w);
    mf_tensor_release(dy);
    free(xv), free(wv), free(dyv), free(y), free(dx), free(dw);
}

/* ---- value tests ------------------------------------------------------------------- */

static void test_many_shapes(void **state)
{
    (void)state;
    static const int64_t shapes[][7] = {
        /* N  H  W  C  kh kw O */
        {1, 5, 5, 1, 3, 3, 1}, {2, 7, 6, 3, 3, 2, 4}, {1, 4, 9, 2, 1, 3, 3},
        {3, 8, 8, 4, 5, 5, 2}, {1, 6, 5, 5, 2, 2, 6}, {2, 3, 3, 2, 3, 3, 2},
        {1, 10, 7, 1, 4, 1, 5}, {2, 1, 6, 3, 1, 2, 2},
    };
    static const int64_t windows[][4] = {
        /* sh sw dh dw */
        {1, 1, 1, 1}, {2, 2, 1, 1}, {1, 3, 1, 1}, {3, 2, 1, 1},
        {1, 1, 2, 2}, {1, 1, 2, 1}, {2, 1, 1, 3}, {2, 2, 2, 2},
    };
    int run = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++)
            for (int same = 0; same < 2; same++) {
                const int64_t *v = shapes[s], *q = windows[k];
                Cfg c = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], q[0], q[1], q[2], q[3], same};
                if (!same && ((c.kh - 1) * c.dh + 1 > c.H || (c.kw - 1) * c.dw + 1 > c.W))
                    continue;
                check_cfg(&c, MF_FLOAT64);
                check_cfg(&c, MF_FLOAT32);
                run++;
            }
    print_message("%d configurations, each in float32 and float64\n", run);
    assert_true(run > 90);
}

static void test_pointwise(void **state)
{
    (void)state;
    Cfg a = {2, 5, 4, 3, 1, 1, 4, 1, 1, 1, 1, 0};
    check_cfg(&a, MF_FLOAT32);
    a.same = 1;
    check_cfg(&a, MF_FLOAT64);
    a.dh = a.dw = 3; /* dilation does not matter for a 1x1 filter */
    check_cfg(&a, MF_FLOAT32);
    Cfg b = {2, 5, 5, 3, 1, 1, 2, 2, 2, 1, 1, 1}; /* stride 2: im2col */
    check_cfg(&b, MF_FLOAT64);
}

/* Patch matrices larger than a tile (MF_CONV_TILE_BYTES, at most
 * MF_CONV_PATCH_BYTES): tiles of whole images, then parts of one image. */
static void test_tiled(void **state)
{
    (void)state;
    Cfg whole = {40, 16, 16, 64, 3, 3, 2, 1, 1, 1, 1, 1}; /* 7 images (1792 rows) a tile */
    check_cfg(&whole, MF_FLOAT32);
    Cfg part = {1, 128, 128, 128, 3, 3, 1, 1, 1, 1, 1, 1}; /* 151 MB float64 for one image */
    check_cfg(&part, MF_FLOAT64);
    Cfg strided = {3, 33, 31, 8, 3, 3, 2, 2, 3, 1, 1, 0}; /* strides 2, 3: one tile */
    check_cfg(&strided, MF_FLOAT64);
}

/* Values by hand: a 3x3 input, 2x2 filter of ones, SAME with stride 2 pads
 * only at the bottom/right (pad_total 1: top 0). */
static void test_same_pads_bottom_right(void **state)
{
    (void)state;
    int64_t xs[4] = {1, 3, 3, 1}, ws[4] = {2, 2, 1, 1};
    MfTensor *x = make_tensor(MF_FLOAT32, 4, xs, (double[]){1, 2, 3, 4, 5, 6, 7, 8, 9});
    MfTensor *w = make_tensor(MF_FLOAT32, 4, ws, (double[]){1, 1, 1, 1}), *y = NULL;
    MfAttrs a = mf_attrs_default();
    a.padding = 1;
    a.strides[1] = a.strides[2] = 2;
    MfTensor *in[2] = {x, w};
    assert_int_equal(mf_op1(MF_OP_CONV2D, 2, in, &a, &y), MF_OK);
    check_shape(y, 1, 2, 2, 1);
    assert_values(y, (double[]){12, 9, 15, 9}, 4, 0);
    mf_tensor_release(y);
    mf_tensor_release(x);
    mf_tensor_release(w);
}

/* A strided view as input gives the same as its contiguous copy. */
static void test_strided_input(void **state)
{
    (void)state;
    int64_t s[4] = {2, 3, 5, 4}, ws[4] = {2, 2, 3, 2};
    double *v = rnd_array(120), *wv = rnd_array(24);
    MfTensor *t = make_tensor(MF_FLOAT64, 4, s, v), *w = make_tensor(MF_FLOAT64, 4, ws, wv);
    MfTensor *xv = NULL, *xc, *y1 = NULL, *y2 = NULL;
    int64_t perm[4] = {0, 3, 2, 1}; /* (2,4,5,3): NHWC with C = 3 */
    assert_int_equal(mf_transpose(t, perm, 4, &xv), MF_OK);
    assert_false(mf_tensor_is_contiguous(xv));
    xc = mf_tensor_clone(xv);
    MfAttrs a = mf_attrs_default();
    MfTensor *in1[2] = {xv, w}, *in2[2] = {xc, w};
    assert_int_equal(mf_op1(MF_OP_CONV2D, 2, in1, &a, &y1), MF_OK);
    assert_int_equal(mf_op1(MF_OP_CONV2D, 2, in2, &a, &y2), MF_OK);
    for (int64_t i = 0; i < mf_tensor_numel(y1); i++)
        assert_true(mf_tensor_get(y1, i) == mf_tensor_get(y2, i));
    mf_tensor_release(y1), mf_tensor_release(y2), mf_tensor_release(xv), mf_tensor_release(xc);
    mf_tensor_release(t), mf_tensor_release(w);
    free(v), free(wv);
}

/* The NCHW composites equal transposing by hand around the NHWC ops. */
static void test_nchw(void **state)
{
    (void)state;
    int64_t xs[4] = {2, 3, 6, 5}, ws[4] = {3, 2, 3, 4}; /* NCHW input, HWIO filter */
    double *v = rnd_array(180), *wv = rnd_array(72);
    MfTensor *x = make_tensor(MF_FLOAT64, 4, xs, v), *w = make_tensor(MF_FLOAT64, 4, ws, wv);
    MfTensor *xn = NULL, *yn = NULL, *y = NULL, *yt = NULL, *dx = NULL, *dxn = NULL, *dw = NULL,
             *dwn = NULL;
    MfAttrs a = mf_attrs_default(), an = mf_attrs_default();
    a.padding = an.padding = 1;
    an.strides[2] = 2, an.dilations[3] = 2; /* NCHW order */
    a.strides[1] = 2, a.dilations[2] = 2;   /* the same in NHWC order */
    assert_int_equal(mf_transpose(x, (int64_t[]){0, 2, 3, 1}, 4, &xn), MF_OK);
    assert_int_equal(mf_conv2d(xn, w, &a, false, &yn), MF_OK);
    assert_int_equal(mf_conv2d(x, w, &an, true, &y), MF_OK);
    check_shape(y, 2, 4, 3, 5);
    assert_int_equal(mf_transpose(yn, (int64_t[]){0, 3, 1, 2}, 4, &yt), MF_OK);
    for (int64_t i = 0; i < mf_tensor_numel(y); i++)
        assert_true(fabs(mf_tensor_get(y, i) - mf_tensor_get(yt, i)) < 1e-12);
    /* backprops: dy = y itself, compared with the NHWC results transposed */
    assert_int_equal(mf_conv2d_backprop_input(xs, w, y, &an, true, &dx), MF_OK);
    assert_int_equal(mf_conv2d_backprop_input(xn->shape, w, yn, &a, false, &dxn), MF_OK);
    check_shape(dx, 2, 3, 6, 5);
    MfTensor *dxt = NULL;
    assert_int_equal(mf_transpose(dxn, (int64_t[]){0, 3, 1, 2}, 4, &dxt), MF_OK);
    for (int64_t i = 0; i < mf_tensor_numel(dx); i++)
        assert_true(fabs(mf_tensor_get(dx, i) - mf_tensor_get(dxt, i)) < 1e-12);
    assert_int_equal(mf_conv2d_backprop_filter(x, ws, y, &an, true, &dw), MF_OK);
    assert_int_equal(mf_conv2d_backprop_filter(xn, ws, yn, &a, false, &dwn), MF_OK);
    for (int64_t i = 0; i < mf_tensor_numel(dw); i++)
        assert_true(fabs(mf_tensor_get(dw, i) - mf_tensor_get(dwn, i)) < 1e-12);
    MfTensor *all[] = {x, w, xn, yn, y, yt, dx, dxn, dxt, dw, dwn};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mf_tensor_release(all[i]);
    free(v), free(wv);
}

/* The profiler sees doc/design.md's GEMMs: M, N, K and transposes per op, and
 * the im2col / col2im steps with their bytes. */
static void test_profiled_gemms(void **state)
{
    (void)state;
    int64_t xs[4] = {2, 5, 5, 3}, ws[4] = {3, 3, 3, 4}, ys[4] = {2, 5, 5, 4};
    MfTensor *x = mf_tensor_zeros(MF_FLOAT32, 4, xs), *w = mf_tensor_zeros(MF_FLOAT32, 4, ws);
    MfTensor *dy = mf_tensor_zeros(MF_FLOAT32, 4, ys), *o[3] = {NULL, NULL, NULL};
    MfAttrs a = mf_attrs_default();
    a.padding = 1;
    a.conv_algorithm = MF_CONV_IM2COL; /* the lowering under test ('auto': direct, Cin 3) */
    mf_prof_start();
    assert_int_equal(mf_conv2d(x, w, &a, false, &o[0]), MF_OK);
    assert_int_equal(mf_conv2d_backprop_input(xs, w, dy, &a, false, &o[1]), MF_OK);
    assert_int_equal(mf_conv2d_backprop_filter(x, ws, dy, &a, false, &o[2]), MF_OK);
    mf_prof_stop();
    int64_t n;
    const MfProfEvent *e = mf_prof_events(&n);
    /* op, M, N, K, trans_a, trans_b for rows 50 = 2*5*5, K 27 = 3*3*3, Cout 4 */
    static const struct { const char *op; int64_t M, N, K; bool ta, tb; } want[3] = {
        {"Conv2D", 50, 4, 27, false, false},
        {"Conv2DBackpropInput", 50, 27, 4, false, true},
        {"Conv2DBackpropFilter", 27, 4, 50, true, false},
    };
    int gemms = 0, im2col = 0, col2im = 0;
    for (int64_t i = 0; i < n; i++) {
        if (e[i].kind == MF_PROF_GEMM) {
            assert_true(gemms < 3);
            assert_string_equal(e[i].op, want[gemms].op);
            assert_int_equal(e[i].M, want[gemms].M);
            assert_int_equal(e[i].N, want[gemms].N);
            assert_int_equal(e[i].K, want[gemms].K);
            assert_int_equal(e[i].trans_a, want[gemms].ta);
            assert_int_equal(e[i].trans_b, want[gemms].tb);
            gemms++;
        } else if (e[i].kind == MF_PROF_STEP) {
            bool is_im2col = strcmp(e[i].name, "im2col") == 0;
            im2col += is_im2col;
            col2im += !is_im2col;
            assert_true(e[i].bytes == 50.0 * 27 * 4);
            assert_string_equal(e[i].op, is_im2col ? (im2col == 1 ? "Conv2D"
                                                                  : "Conv2DBackpropFilter")
                                                   : "Conv2DBackpropInput");
        }
    }
    assert_int_equal(gemms, 3);
    assert_int_equal(im2col, 2);
    assert_int_equal(col2im, 1);
    for (int i = 0; i < 3; i++)
        mf_tensor_release(o[i]);
    mf_tensor_release(x), mf_tensor_release(w), mf_tensor_release(dy);
}

/* ---- errors ----------------------------------------------------------------------- */

/* Runs 'op' on tensors of the given shapes and dtype; expects 'code' and a
 * message containing 'part'. */
static void expect_error(MfOpId op, const int64_t *s0, const int64_t *s1, MfDType dt,
                         const MfAttrs *a, MfStatus code, const char *part)
{
    MfTensor *t0 = mf_tensor_zeros(dt, 4, s0), *t1 = mf_tensor_zeros(dt, 4, s1), *out = NULL;
    MfTensor *in[2] = {t0, t1};
    assert_int_equal(mf_op1(op, 2, in, a, &out), code);
    assert_null(out);
    assert_error_contains(part);
    mf_tensor_release(t0);
    mf_tensor_release(t1);
}

static void test_errors(void **state)
{
    (void)state;
    int64_t x[4] = {1, 5, 5, 3}, w[4] = {3, 3, 3, 2}, wbad[4] = {3, 3, 4, 2};
    int64_t big[4] = {6, 2, 3, 2}, dy[4] = {1, 5, 5, 2}, dybad[4] = {1, 3, 3, 2};
    MfAttrs a = mf_attrs_default();
    expect_error(MF_OP_CONV2D, x, wbad, MF_FLOAT32, &a, MF_ESHAPE,
                 "conv2d: the input has 3 channels but the filter expects 4");
    expect_error(MF_OP_CONV2D, x, big, MF_FLOAT32, &a, MF_ESHAPE,
                 "conv2d: the filter (6 x 2, 6 x 2 with dilations) is larger than the input "
                 "(5 x 5) with VALID padding");
    expect_error(MF_OP_CONV2D, x, w, MF_INT32, &a, MF_EDTYPE,
                 "conv2d: expected float32 or float64, got int32");
    a.padding = 7;
    expect_error(MF_OP_CONV2D, x, w, MF_FLOAT32, &a, MF_EARG,
                 "conv2d: padding must be VALID (0) or SAME (1), got 7");
    a.padding = 1;
    a.strides[0] = 2;
    expect_error(MF_OP_CONV2D, x, w, MF_FLOAT32, &a, MF_EARG,
                 "conv2d: strides on the batch and channel axes must be 1, got {2, 1, 1, 1}");
    a.strides[0] = 1;
    a.dilations[2] = -1;
    expect_error(MF_OP_CONV2D, x, w, MF_FLOAT32, &a, MF_EARG,
                 "conv2d: dilations must be positive");
    a.dilations[2] = 3; /* 7 x 7 dilated: SAME fits, VALID does not */
    MfAttrs v = a;
    v.padding = 0;
    expect_error(MF_OP_CONV2D, x, w, MF_FLOAT32, &v, MF_ESHAPE, "3 x 7 with dilations");
    a.dilations[2] = 1;
    expect_error(MF_OP_CONV2D_BACKPROP_INPUT, w, dy, MF_FLOAT32, &a, MF_EARG,
                 "conv2d_backprop_input: expected 4 input_sizes (N, H, W, C), got 0");
    a.nints = 4;
    memcpy(a.ints, x, sizeof x);
    expect_error(MF_OP_CONV2D_BACKPROP_INPUT, w, dybad, MF_FLOAT32, &a, MF_ESHAPE,
                 "conv2d_backprop_input: out_backprop has shape (1,3,3,2), but the convolution "
                 "of an input (1,5,5,3) with a (3,3,3,2) filter gives (1,5,5,2)");
    memcpy(a.ints, w, sizeof w);
    expect_error(MF_OP_CONV2D_BACKPROP_FILTER, x, dybad, MF_FLOAT32, &a, MF_ESHAPE,
                 "conv2d_backprop_filter: out_backprop has shape (1,3,3,2)");
    memcpy(a.ints, wbad, sizeof wbad);
    expect_error(MF_OP_CONV2D_BACKPROP_FILTER, x, dy, MF_FLOAT32, &a, MF_ESHAPE,
                 "conv2d_backprop_filter: the input has 3 channels but the filter expects 4");
    int64_t r3[3] = {5, 5, 3};
    MfTensor *t3 = mf_tensor_zeros(MF_FLOAT32, 3, r3), *tw = mf_tensor_zeros(MF_FLOAT32, 4, w);
    MfTensor *in[2] = {t3, tw}, *out = NULL;
    assert_int_equal(mf_op1(MF_OP_CONV2D, 2, in, &a, &out), MF_ESHAPE);
    assert_error_contains("conv2d: expected an input of rank 4 (NHWC), got shape (5,5,3)");
    MfAttrs n = mf_attrs_default();
    n.strides[1] = 2;
    assert_int_equal(mf_conv2d(tw, tw, &n, true, &out), MF_EARG);
    assert_error_contains("conv2d: strides on the batch and channel axes must be 1, got "
                          "{1, 2, 1, 1} (NCHW)");
    mf_tensor_release(t3);
    mf_tensor_release(tw);
}

/* Gradients: Conv2D's are the two backprops, with the same values. */
static void test_conv_grad_is_backprops(void **state)
{
    (void)state;
    int64_t xs[4] = {2, 5, 4, 2}, ws[4] = {3, 2, 2, 3}, ys[4] = {2, 3, 2, 3};
    double *xv = rnd_array(80), *wv = rnd_array(36), *dv = rnd_array(36);
    MfTensor *x = make_tensor(MF_FLOAT64, 4, xs, xv), *w = make_tensor(MF_FLOAT64, 4, ws, wv);
    MfTensor *dy = make_tensor(MF_FLOAT64, 4, ys, dv), *y = NULL, *bi = NULL, *bf = NULL;
    MfAttrs a = mf_attrs_default();
    a.padding = 1;
    a.strides[1] = a.strides[2] = 2;
    MfTensor *in[2] = {x, w};
    assert_int_equal(mf_op1(MF_OP_CONV2D, 2, in, &a, &y), MF_OK);
    MfOpCall call = {.op = MF_OP_CONV2D, .ninputs = 2, .inputs = in, .attrs = &a};
    MfTensor *outs[1] = {y}, *douts[1] = {dy}, *din[2] = {NULL, NULL};
    MfGradCall g = {.call = &call, .outputs = outs, .doutputs = douts};
    assert_int_equal(mf_conv2d_grad(&g, din), MF_OK);
    assert_int_equal(mf_conv2d_backprop_input(xs, w, dy, &a, false, &bi), MF_OK);
    assert_int_equal(mf_conv2d_backprop_filter(x, ws, dy, &a, false, &bf), MF_OK);
    for (int64_t i = 0; i < 80; i++)
        assert_true(mf_tensor_get(din[0], i) == mf_tensor_get(bi, i));
    for (int64_t i = 0; i < 36; i++)
        assert_true(mf_tensor_get(din[1], i) == mf_tensor_get(bf, i));
    MfTensor *all[] = {x, w, dy, y, bi, bf, din[0], din[1]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mf_tensor_release(all[i]);
    free(xv), free(wv), free(dv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_many_shapes),
        TEST(test_pointwise),
        TEST(test_tiled),
        TEST(test_same_pads_bottom_right),
        TEST(test_strided_input),
        TEST(test_nchw),
        TEST(test_profiled_gemms),
        TEST(test_errors),
        TEST(test_conv_grad_is_backprops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
