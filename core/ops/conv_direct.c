/* conv_direct.c — direct NHWC float32 convolution for few input channels
 * (a network's first layer: Cin 1 to 4), any filter size, stride and
 * dilation (see conv.h).
 *
 * With Cin = 1 a 3x3 layer's im2col GEMM has K = 9: BLAS packs and
 * unpacks for almost no arithmetic (10-20 GFLOP/s). Here each output
 * pixel's Cout values are accumulated in registers, one tap at a time
 * (broadcast an input value, multiply-add a row of the filter), so the
 * work is vectorised over output channels and the patch matrix never
 * exists. The three passes:
 *   forward:         y[p, :]  = sum over taps t, channels c of x[p+t, c] * w[t, c, :]
 *   backprop-input:  dx[q, c] = sum over taps t of dot(dy[q-t, :], w[t, c, :])
 *                    (gathered per input pixel: each dx element has one writer)
 *   backprop-filter: dw[t, c, :] = sum over pixels p of x[p+t, c] * dy[p, :]
 *                    (per tap and channel, registers accumulate over a block of
 *                    output rows; the blocks' partial sums are added in block
 *                    order, so the result does not depend on the thread count)
 * Every pass splits over the worker pool (core/parallel.c) and gives the same
 * bits on any number of threads. */
#include <string.h>

#include "../alloc.h"
#include "../parallel.h"
#include "conv.h"

/* Output channels are taken 32 at a time (NV32 vectors kept in registers),
 * then a vector (VW floats) at a time, then one by one. GCC's vector
 * extension compiles to AVX-512 or AVX2 moves and FMAs under -march=native
 * (16- or 8-float vectors), to SSE or NEON otherwise (4 floats). */
#if defined(__AVX512F__)
#define VW 16
#elif defined(__AVX__)
#define VW 8
#else
#define VW 4
#endif
#define NV32 (32 / VW)
typedef float vf __attribute__((vector_size(VW * sizeof(float))));
#define INLINE static inline __attribute__((always_inline))
/* Output rows per partial sum of backprop-filter: a fixed count of about
 * 2048 pixels, so the sum's order does not depend on the thread count. */
#define FILTER_PIXELS 2048

INLINE vf loadv(const float *p)
{
    vf v;
    memcpy(&v, p, sizeof v);
    return v;
}

INLINE void storev(float *p, vf v)
{
    memcpy(p, &v, sizeof v);
}

typedef struct DirectJob {
    const MfConvGeom *g;
    const float *a, *b; /* the two inputs of the pass */
    float *out;
} DirectJob;

/* y[o0 .. o0 + VW*nv) of output pixel (b, oh, ow). */
INLINE void forward_vectors(const MfConvGeom *g, const float *x, const float *w, int64_t b,
                            int64_t oh, int64_t ow, int64_t o0, int nv, float *y)
{
    vf acc[NV32] = {{0}};
    int64_t C = g->C, O = g->O;
    for (int64_t i = 0; i < g->kh; i++) {
        int64_t ih = oh * g->sh - g->pad_top + i * g->dh;
        if (ih < 0 || ih >= g->H)
            continue;
        for (int64_t j = 0; j < g->kw; j++) {
            int64_t iw = ow * g->sw - g->pad_left + j * g->dw;
            if (iw < 0 || iw >= g->W)
                continue;
            const float *xp = x + ((b * g->H + ih) * g->W + iw) * C;
            const float *wp = w + (i * g->kw + j) * C * O + o0;
            for (int64_t c = 0; c < C; c++)
                _Pragma("GCC unroll 8")
                for (int v = 0; v < nv; v++)
                    acc[v] += xp[c] * loadv(wp + c * O + VW * v);
        }
    }
    _Pragma("GCC unroll 8")
    for (int v = 0; v < nv; v++)
        storev(y + o0 + VW * v, acc[v]);
}

/* y[o0 .. o0 + 32) of output pixels ow and ow + 1, every tap inside the
 * image: two pixels share each filter load, and their 8 accumulators are
 * independent chains, so the FMAs' latency hides (one pixel at a time
 * waited on 4 chains of kh*kw*C dependent FMAs). */
INLINE void forward_pair(const MfConvGeom *g, const float *x, const float *w, int64_t b,
                         int64_t oh, int64_t ow, int64_t o0, float *y, int64_t kh,
                         int64_t kw, int64_t C)
{
    vf p[NV32] = {{0}}, q[NV32] = {{0}};
    int64_t O = g->O, next = g->sw * C;
    for (int64_t i = 0; i < kh; i++) {
        int64_t ih = oh * g->sh - g->pad_top + i * g->dh;
        const float *xr = x + ((b * g->H + ih) * g->W + ow * g->sw - g->pad_left) * C;
        for (int64_t j = 0; j < kw; j++) {
            const float *xp = xr + j * g->dw * C;
            const float *wp = w + (i * kw + j) * C * O + o0;
            for (int64_t c = 0; c < C; c++) {
                _Pragma("GCC unroll 8")
                for (int v = 0; v < NV32; v++) {
                    vf wv = loadv(wp + c * O + VW * v);
                    p[v] += xp[c] * wv;
                    q[v] += xp[next + c] * wv;
                }
            }
        }
    }
    _Pragma("GCC unroll 8")
    for (int v = 0; v < NV32; v++) {
        storev(y + o0 + VW * v, p[v]);
        storev(y + O + o0 + VW * v, q[v]);
    }
}

/* True when every tap of output pixel (oh, ow) lies inside the image. */
static bool inside(const MfConvGeom *g, int64_t oh, int64_t ow)
{
    int64_t ih = oh * g->sh - g->pad_top, iw = ow * g->sw - g->pad_left;
    return ih >= 0 && ih + (g->kh - 1) * g->dh < g->H && iw >= 0 &&
           iw + (g->kw - 1) * g->dw < g->W;
}

/* y[o] of output pixel (b, oh, ow), one channel. */
static void forward_scalar(const MfConvGeom *g, const float *x, const float *w, int64_t b,
                           int64_t oh, int64_t ow, int64_t o, float *y)
{
    float acc = 0;
    for (int64_t i = 0; i < g->kh; i++) {
        int64_t ih = oh * g->sh - g->pad_top + i * g->dh;
        for (int64_t j = 0; j < g->kw && ih >= 0 && ih < g->H; j++) {
            int64_t iw = ow * g->sw - g->pad_left + j * g->dw;
            if (iw < 0 || iw >= g->W)
                continue;
            const float *xp = x + ((b * g->H + ih) * g->W + iw) * g->C;
            for (int64_t c = 0; c < g->C; c++)
                acc += xp[c] * w[((i * g->kw + j) * g->C + c) * g->O + o];
        }
    }
    y[o] = acc;
}

/* Output rows [r0, r1) (a row is (n, oh)). */
static void forward_rows(void *ctx, int64_t r0, int64_t r1)
{
    const DirectJob *j = ctx;
    const MfConvGeom *g = j->g;
    for (int64_t r = r0; r < r1; r++) {
        int64_t b = r / g->Ho, oh = r % g->Ho;
        for (int64_t ow = 0; ow < g->Wo; ow++) {
            float *y = j->out + (r * g->Wo + ow) * g->O;
            int64_t o = 0;
            if (g->O % 32 == 0 && ow + 1 < g->Wo && inside(g, oh, ow) &&
                inside(g, oh, ow + 1)) {
                /* a first layer's 3x3 filter on 1 or 3 channels unrolls completely */
                for (; o < g->O; o += 32) {
                    if (g->kh == 3 && g->kw == 3 && g->C == 1)
                        forward_pair(g, j->a, j->b, b, oh, ow, o, y, 3, 3, 1);
                    else if (g->kh == 3 && g->kw == 3 && g->C == 3)
                        forward_pair(g, j->a, j->b, b, oh, ow, o, y, 3, 3, 3);
                    else
                        forward_pair(g, j->a, j->b, b, oh, ow, o, y, g->kh, g->kw, g->C);
                }
                ow++;
                continue;
            }
            for (; o + 32 <= g->O; o += 32)
                forward_vectors(g, j->a, j->b, b, oh, ow, o, NV32, y);
            for (; o + VW <= g->O; o += VW)
                forward_vectors(g, j->a, j->b, b, oh, ow, o, 1, y);
            for (; o < g->O; o++)
                forward_scalar(g, j->a, j->b, b, oh, ow, o, y);
        }
    }
}

void mf_conv_direct_forward(const MfConvGeom *g, const float *x, const float *w, float *y)
{
    DirectJob job = {g, x, w, y};
    int64_t row_work = g->Wo * g->kh * g->kw * g->C * g->O;
    int64_t min_rows = 1 + (1 << 16) / (row_work > 0 ? row_work : 1);
    mf_parallel_for(g->N * g->Ho, min_rows, forward_rows, &job);
}

/* The output coordinate whose tap k (at dilation d) lands on input 'in':
 * o * s - pad + k * d = in; -1 when it is not a whole in-range position. */
static inline int64_t source(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad,
                             int64_t out)
{
    int64_t t = in + pad - k * d;
    if (t < 0 || t % s != 0 || t / s >= out)
        return -1;
    return t / s;
}

/* sum over taps of dy[source pixel, o0 .. o0 + VW*nv) * w[tap, c, same], as
 * vectors added into 'acc'. */
INLINE void input_vectors(const MfConvGeom *g, const float *w, const float *dy, int64_t b,
                          int64_t ih, int64_t iw, int64_t c, int64_t o0, int nv, vf *acc)
{
    int64_t C = g->C, O = g->O;
    for (int64_t i = 0; i < g->kh; i++) {
        int64_t oh = source(ih, i, g->sh, g->dh, g->pad_top, g->Ho);
        if (oh < 0)
            continue;
        for (int64_t j = 0; j < g->kw; j++) {
            int64_t ow = source(iw, j, g->sw, g->dw, g->pad_left, g->Wo);
            if (ow < 0)
                continue;
            const float *d = dy + ((b * g->Ho + oh) * g->Wo + ow) * O + o0;
            const float *wp = w + ((i * g->kw + j) * C + c) * O + o0;
            _Pragma("GCC unroll 8")
            for (int v = 0; v < nv; v++)
                acc[v] += loadv(d + VW * v) * loadv(wp + VW * v);
        }
    }
}

/* The sum of NV32 vectors' lanes. */
INLINE float hsum(const vf *acc)
{
    vf s = acc[0];
    for (int v = 1; v < NV32; v++)
        s += acc[v];
    float t = 0;
    for (int k = 0; k < VW; k++)
        t += s[k];
    return t;
}

/* dx of input pixels iw and iw + 1 (stride 1, every tap's source inside dy,
 * O a multiple of 32): the pair shares filter loads and runs 8 independent
 * chains of FMAs. */
INLINE void input_pair(const MfConvGeom *g, const float *w, const float *dy, int64_t b,
                       int64_t ih, int64_t iw, float *dx, int64_t kh, int64_t kw, int64_t C,
                       int64_t O)
{
    for (int64_t c = 0; c < C; c++) {
        vf p[NV32] = {{0}}, q[NV32] = {{0}};
        for (int64_t i = 0; i < kh; i++) {
            int64_t oh = ih + g->pad_top - i * g->dh;
            for (int64_t j = 0; j < kw; j++) {
                const float *d = dy + ((b * g->Ho + oh) * g->Wo + iw + g->pad_left - j * g->dw) * O;
                const float *wp = w + ((i * kw + j) * C + c) * O;
                for (int64_t o = 0; o < O; o += 32) {
                    _Pragma("GCC unroll 8")
                    for (int v = 0; v < NV32; v++) {
                        vf wv = loadv(wp + o + VW * v);
                        p[v] += loadv(d + o + VW * v) * wv;
                        q[v] += loadv(d + O + o + VW * v) * wv;
                    }
                }
            }
        }
        dx[c] = hsum(p);
        dx[C + c] = hsum(q);
    }
}

/* True when input pixel (ih, iw) at stride 1 takes every tap from inside dy. */
static bool input_inside(const MfConvGeom *g, int64_t ih, int64_t iw)
{
    int64_t oh = ih + g->pad_top, ow = iw + g->pad_left;
    return g->sh == 1 && g->sw == 1 && oh < g->Ho && oh - (g->kh - 1) * g->dh >= 0 &&
           ow < g->Wo && ow - (g->kw - 1) * g->dw >= 0;
}

/* dx at input pixel (b, ih, iw), every channel. */
static void input_pixel(const MfConvGeom *g, const float *w, const float *dy, int64_t b,
                        int64_t ih, int64_t iw, float *dx)
{
    int64_t C = g->C, O = g->O;
    for (int64_t c = 0; c < C; c++) {
        vf acc[NV32] = {{0}};
        int64_t o = 0;
        for (; o + 32 <= O; o += 32)
            input_vectors(g, w, dy, b, ih, iw, c, o, NV32, acc);
        for (; o + VW <= O; o += VW)
            input_vectors(g, w, dy, b, ih, iw, c, o, 1, acc);
        float total = hsum(acc);
        for (; o < O; o++) /* the last O % VW channels */
            for (int64_t i = 0; i < g->kh; i++) {
                int64_t oh = source(ih, i, g->sh, g->dh, g->pad_top, g->Ho);
                for (int64_t j = 0; j < g->kw && oh >= 0; j++) {
                    int64_t ow = source(iw, j, g->sw, g->dw, g->pad_left, g->Wo);
                    if (ow >= 0)
                        total += dy[((b * g->Ho + oh) * g->Wo + ow) * O + o] *
                                 w[((i * g->kw + j) * C + c) * O + o];
                }
            }
        dx[c] = total;
    }
}

/* Input rows [r0, r1) (a row is (n, ih)). */
static void input_rows(void *ctx, int64_t r0, int64_t r1)
{
    const DirectJob *j = ctx;
    const MfConvGeom *g = j->g;
    for (int64_t r = r0; r < r1; r++)
        for (int64_t iw = 0; iw < g->W; iw++) {
            int64_t b = r / g->H, ih = r % g->H;
            float *dx = j->out + (r * g->W + iw) * g->C;
            bool pair = g->O % 32 == 0 && iw + 1 < g->W && input_inside(g, ih, iw) &&
                        input_inside(g, ih, iw + 1);
            /* a first layer's 3x3 filter to 32 channels unrolls completely */
            if (pair && g->kh == 3 && g->kw == 3 && g->C == 1 && g->O == 32)
                input_pair(g, j->a, j->b, b, ih, iw++, dx, 3, 3, 1, 32);
            else if (pair)
                input_pair(g, j->a, j->b, b, ih, iw++, dx, g->kh, g->kw, g->C, g->O);
            else
                input_pixel(g, j->a, j->b, b, ih, iw, dx);
        }
}

void mf_conv_direct_backprop_input(const MfConvGeom *g, const float *w, const float *dy,
                                   float *dx)
{
    DirectJob job = {g, w, dy, dx};
    int64_t row_work = g->W * g->kh * g->kw * g->C * g->O;
    int64_t min_rows = 1 + (1 << 16) / (row_work > 0 ? row_work : 1);
    mf_parallel_for(g->N * g->H, min_rows, input_rows, &job);
}

/* The output columns [*lo, *hi) whose tap column j lies inside the image. */
static void valid_columns(const MfConvGeom *g, int64_t j, int64_t *lo, int64_t *hi)
{
    int64_t off = j * g->dw - g->pad_left; /* iw = ow * sw + off */
    *lo = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;
    *hi = g->W - off <= 0 ? 0 : (g->W - off - 1) / g->sw + 1;
    *hi = *hi < g->Wo ? *hi : g->Wo;
    *lo = *lo < *hi ? *lo : *hi;
}

/* dw[tap (i, j), c, o0 .. o0 + VW*nv) over output rows [r0, r1), into 'dst'. */
INLINE void filter_vectors(const MfConvGeom *g, const float *x, const float *dy, int64_t r0,
                           int64_t r1, int64_t i, int64_t j, int64_t c, int64_t o0, int nv,
                           float *dst)
{
    /* two accumulator sets (even and odd output columns), added at the end:
     * twice the independent FMA chains (one set waited on FMA latency) */
    vf acc[NV32] = {{0}}, odd[NV32] = {{0}};
    int64_t lo, hi, C = g->C, O = g->O, step = g->sw * C;
    valid_columns(g, j, &lo, &hi);
    for (int64_t r = r0; r < r1; r++) {
        int64_t b = r / g->Ho, ih = r % g->Ho * g->sh - g->pad_top + i * g->dh;
        if (ih < 0 || ih >= g->H)
            continue;
        /* index of tap column j of output column 0 (may be negative: ow >= lo) */
        int64_t xr = ((b * g->H + ih) * g->W + j * g->dw - g->pad_left) * C + c;
        const float *d = dy + r * g->Wo * O + o0;
        int64_t ow = lo;
        for (; ow + 1 < hi; ow += 2) {
            float xv = x[xr + ow * step], xw = x[xr + ow * step + step];
            _Pragma("GCC unroll 8")
            for (int v = 0; v < nv; v++) {
                acc[v] += xv * loadv(d + ow * O + VW * v);
                odd[v] += xw * loadv(d + ow * O + O + VW * v);
            }
        }
        if (ow < hi) {
            float xv = x[xr + ow * step];
            _Pragma("GCC unroll 8")
            for (int v = 0; v < nv; v++)
                acc[v] += xv * loadv(d + ow * O + VW * v);
        }
    }
    _Pragma("GCC unroll 8")
    for (int v = 0; v < nv; v++)
        storev(dst + o0 + VW * v, acc[v] + odd[v]);
}

/* The partial dw (kh*kw*C*O) of output rows [r0, r1) into 'part'. */
static void filter_partial(const MfConvGeom *g, const float *x, const float *dy, int64_t r0,
                           int64_t r1, float *part)
{
    int64_t C = g->C, O = g->O;
    for (int64_t i = 0; i < g->kh; i++)
        for (int64_t j = 0; j < g->kw; j++)
            for (int64_t c = 0; c < C; c++) {
                float *dst = part + ((i * g->kw + j) * C + c) * O;
                int64_t o = 0;
                for (; o + 32 <= O; o += 32)
                    filter_vectors(g, x, dy, r0, r1, i, j, c, o, NV32, dst);
                for (; o + VW <= O; o += VW)
                    filter_vectors(g, x, dy, r0, r1, i, j, c, o, 1, dst);
                for (; o < O; o++) {
                    int64_t lo, hi;
                    float acc = 0;
                    valid_columns(g, j, &lo, &hi);
                    for (int64_t r = r0; r < r1; r++) {
                        int64_t b = r / g->Ho, ih = r % g->Ho * g->sh - g->pad_top + i * g->dh;
                        for (int64_t ow = lo; ow < hi && ih >= 0 && ih < g->H; ow++)
                            acc += x[((b * g->H + ih) * g->W + ow * g->sw + j * g->dw -
                                      g->pad_left) * C + c] * dy[(r * g->Wo + ow) * O + o];
                    }
                    dst[o] = acc;
                }
            }
}

typedef struct FilterJob {
    const MfConvGeom *g;
    const float *x, *dy;
    float *parts; /* one kh*kw*C*O partial per block */
    int64_t rows, per; /* output rows; rows per block */
} FilterJob;

static void filter_blocks(void *ctx, int64_t b0, int64_t b1)
{
    const FilterJob *j = ctx;
    int64_t K = j->g->kh * j->g->kw * j->g->C * j->g->O;
    for (int64_t b = b0; b < b1; b++) {
        int64_t r0 = b * j->per, r1 = r0 + j->per < j->rows ? r0 + j->per : j->rows;
        filter_partial(j->g, j->x, j->dy, r0, r1, j->parts + b * K);
    }
}

MfStatus mf_conv_direct_backprop_filter(const char *op, const MfConvGeom *g, const float *x,
                                        const float *dy, float *dw)
{
    int64_t rows = g->N * g->Ho, K = g->kh * g->kw * g->C * g->O;
    int64_t per = g->Wo > 0 && g->Wo < FILTER_PIXELS ? FILTER_PIXELS / g->Wo : 1;
    int64_t blocks = (rows + per - 1) / per;
    if (blocks <= 1) {
        filter_partial(g, x, dy, 0, rows, dw);
        return MF_OK;
    }
    size_t bytes = (size_t)(blocks * K) * sizeof(float);
    float *parts = mf_alloc(bytes);
    if (!parts)
        return mf_err_nomem(op, bytes);
    FilterJob job = {g, x, dy, parts, rows, per};
    mf_parallel_for(blocks, 1, filter_blocks, &job);
    /* block order, whatever thread made each block */
    memcpy(dw, parts, (size_t)K * sizeof *dw);
    for (int64_t b = 1; b < blocks; b++)
        for (int64_t k = 0; k < K; k++)
            dw[k] += parts[b * K + k];
    mf_dealloc(parts, bytes);
    return MF_OK;
}
