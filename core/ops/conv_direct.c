/* conv_direct.c — direct NHWC float32 convolution for few input channels
 * (a network's first layer: Cin 1 to 4), any filter size, stride and
 * dilation (see conv.h).
 *
 * With Cin = 1 a 3x3 layer's im2col GEMM has K = 9: BLAS packs and
 * unpacks for almost no arithmetic (10-20 GFLOP/s). Here the work is
 * vectorised over output channels, 32 at a time (a register block), and the
 * patch matrix never exists. The three passes:
 *   forward:         y[p, :]  = sum over taps t, channels c of x[p+t, c] * w[t, c, :]
 *                    (a block of PB output pixels shares each filter load)
 *   backprop-input:  dx[q, c] = sum over taps t of dot(dy[q-t, :], w[t, c, :])
 *                    (gathered per input pixel: each dx element has one writer)
 *   backprop-filter: dw[t, c, :] = sum over pixels p of x[p+t, c] * dy[p, :]
 *                    (up to TG taps' sums in registers while dy streams past once;
 *                    the sums of fixed blocks of output rows are added in block
 *                    order, so the result does not depend on the thread count)
 * Forward and backprop-filter read a copy of x with its padding written out
 * as zeros (small: Cin <= 4), so their inner loops test no bounds;
 * backprop-input at stride 1 reads dy's rows through a ring of zero-padded
 * row copies for the same reason, except the first layer's (3x3 SAME, 1 -> 32
 * channels), which reads dy in place with its two edge pixels known at compile
 * time (the copy was ~20% of the pass). A first layer's 3x3 filter on 1 or 3
 * channels gets loops the compiler unrolls completely.
 * Every pass splits over the worker pool (core/parallel.c) and gives the same
 * bits on any number of threads. */
#include <string.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

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
/* Pixels per register block (PB * NV32 = 8 accumulators: independent FMA
 * chains enough to hide the FMA latency) and taps per register block of
 * backprop-filter (TG * NV32 = 24 accumulators, within 32 vector registers). */
#define PB (8 / NV32 > 0 ? 8 / NV32 : 1)
#define TG (24 / NV32)
typedef float vf __attribute__((vector_size(VW * sizeof(float))));
typedef float v4 __attribute__((vector_size(4 * sizeof(float))));
#define INLINE static inline __attribute__((always_inline))
/* Output rows per partial sum of backprop-filter: a fixed count of about
 * 2048 pixels, so the sum's order does not depend on the thread count. */
#define FILTER_PIXELS 2048
/* Filter heights up to this take backprop-input's row ring. */
#define RING_MAX_KH 32
/* The most rings (one per thread) backprop-input makes: mf_conv_direct_fits
 * checks their bytes. */
#define MAX_RING_THREADS 64

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

/* The sum of a vector's lanes: halves added as vectors, then four floats. */
INLINE float hsum1(vf s)
{
    v4 q[VW / 4];
    memcpy(q, &s, sizeof s);
    v4 t = q[0];
    for (int k = 1; k < VW / 4; k++)
        t += q[k];
    return (t[0] + t[2]) + (t[1] + t[3]);
}

/* The sum of NV32 vectors' lanes. */
INLINE float hsum(const vf *acc)
{
    vf s = acc[0];
    for (int v = 1; v < NV32; v++)
        s += acc[v];
    return hsum1(s);
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The filter geometry the kernels' loops run over: constant (so unrolled
 * completely) for the common first layers, from MfConvGeom otherwise. */
typedef struct Shape {
    int64_t kh, kw, C, sw, dh, dw;
} Shape;

static const Shape SHAPE_3X3X1 = {3, 3, 1, 1, 1, 1}, SHAPE_3X3X3 = {3, 3, 3, 1, 1, 1};

static Shape shape_of(const MfConvGeom *g)
{
    return (Shape){g->kh, g->kw, g->C, g->sw, g->dh, g->dw};
}

static bool same_shape(const Shape *a, const Shape *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* ---- the padded input (forward, backprop-filter) ---------------------------- */

/* x with its padding written out as zeros: Hp x Wp pixels per image, exactly
 * the rows and columns the taps reach, so every tap of every output pixel
 * reads inside it. */
typedef struct Padded {
    const MfConvGeom *g;
    const float *x;
    float *p;
    int64_t Hp, Wp, rs; /* rows, columns, floats per row */
    size_t bytes;
} Padded;

static void pad_rows(void *ctx, int64_t r0, int64_t r1)
{
    const Padded *q = ctx;
    const MfConvGeom *g = q->g;
    int64_t C = g->C, lo = clamp64(g->pad_left, 0, q->Wp);
    int64_t hi = clamp64(g->W + g->pad_left, lo, q->Wp);
    for (int64_t r = r0; r < r1; r++) {
        int64_t b = r / q->Hp, ih = r % q->Hp - g->pad_top;
        float *dst = q->p + r * q->rs;
        if (ih < 0 || ih >= g->H) {
            memset(dst, 0, (size_t)q->rs * sizeof *dst);
            continue;
        }
        memset(dst, 0, (size_t)(lo * C) * sizeof *dst);
        memcpy(dst + lo * C, q->x + ((b * g->H + ih) * g->W + lo - g->pad_left) * C,
               (size_t)((hi - lo) * C) * sizeof *dst);
        memset(dst + hi * C, 0, (size_t)((q->Wp - hi) * C) * sizeof *dst);
    }
}

/* a * b into '*r'; false when it overflows or passes 'limit'. */
static bool product_fits(int64_t a, int64_t b, int64_t limit, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r) && *r <= limit;
}

/* The padded side (out - 1) * s + (k - 1) * d + 1 of pad_input, checked. */
static bool padded_side_fits(int64_t out, int64_t s, int64_t k, int64_t d, int64_t *side)
{
    int64_t steps, span = mf_window_extent(k, d);
    return product_fits(out > 0 ? out - 1 : 0, s, INT64_MAX, &steps) && span != INT64_MAX &&
           !__builtin_add_overflow(steps, span, side);
}

bool mf_conv_direct_fits(const MfConvGeom *g)
{
    const int64_t limit = MF_MAX_TENSOR_BYTES / (int64_t)sizeof(float);
    int64_t hp, wp, rs, rows, all, step, taps, row_work, wq, ring;
    /* the padded input (forward, backprop-filter) and its strides */
    if (!padded_side_fits(g->Ho, g->sh, g->kh, g->dh, &hp) ||
        !padded_side_fits(g->Wo, g->sw, g->kw, g->dw, &wp) ||
        !product_fits(wp, g->C, limit, &rs) || !product_fits(g->N, hp, limit, &rows) ||
        !product_fits(rows, rs, limit, &all) || !product_fits(g->sh, rs, INT64_MAX, &step) ||
        !product_fits(g->sw, g->C, INT64_MAX, &step))
        return false;
    /* the work per row (split over threads) and the rings of backprop-input:
     * per thread (at most MAX_RING_THREADS) R + 1 rows of Wq * O floats,
     * R = (kh - 1) * dh + 1 and Wq = W + (kw - 1) * dw */
    int64_t wide = g->W > g->Wo ? g->W : g->Wo, R = mf_window_extent(g->kh, g->dh);
    int64_t span_w = mf_window_extent(g->kw, g->dw);
    return product_fits(g->kh * g->kw * g->C, g->O, INT64_MAX, &taps) &&
           product_fits(wide, taps, INT64_MAX, &row_work) && R < limit && span_w < limit &&
           product_fits(g->W + span_w - 1, g->O, limit, &wq) &&
           product_fits(wq, R + 1, limit, &ring) &&
           product_fits(ring, MAX_RING_THREADS, limit, &ring);
}

static MfStatus pad_input(const char *op, const MfConvGeom *g, const float *x, Padded *q)
{
    q->g = g;
    q->x = x;
    q->Hp = (g->Ho - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    q->Wp = (g->Wo - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    q->rs = q->Wp * g->C;
    q->bytes = (size_t)(g->N * q->Hp * q->rs) * sizeof(float);
    q->p = mf_alloc(q->bytes);
    if (!q->p)
        return mf_err_nomem(op, q->bytes);
    mf_parallel_for(g->N * q->Hp, 1 + (1 << 12) / q->rs, pad_rows, q);
    return MF_OK;
}

/* ---- forward ------------------------------------------------------------------ */

typedef struct DirectJob {
    const MfConvGeom *g;
    const Padded *q;
    const float *a, *b; /* the two inputs of the pass */
    float *out;
} DirectJob;

/* Output pixels [0, pb) of 'y' (a row's pixel ow, channel o0), channels
 * [o0, o0 + VW*nv): 'xr' is the padded input at the pixel's first tap,
 * 'w' the filter at channel o0. */
INLINE void forward_block(const MfConvGeom *g, const Padded *q, const float *xr,
                          const float *w, float *y, int pb, int nv, const Shape *k)
{
    vf acc[PB][NV32] = {{{0}}};
    int64_t O = g->O, kh = k->kh, kw = k->kw, C = k->C, step = k->sw * C;
    _Pragma("GCC unroll 9")
    for (int64_t i = 0; i < kh; i++)
        _Pragma("GCC unroll 9")
        for (int64_t j = 0; j < kw; j++)
            _Pragma("GCC unroll 4")
            for (int64_t c = 0; c < C; c++) {
                const float *xp = xr + i * k->dh * q->rs + j * k->dw * C + c;
                const float *wp = w + ((i * kw + j) * C + c) * O;
                vf wv[NV32];
                _Pragma("GCC unroll 8")
                for (int v = 0; v < nv; v++)
                    wv[v] = loadv(wp + VW * v);
                _Pragma("GCC unroll 8")
                for (int p = 0; p < pb; p++)
                    _Pragma("GCC unroll 8")
                    for (int v = 0; v < nv; v++)
                        acc[p][v] += xp[p * step] * wv[v];
            }
    _Pragma("GCC unroll 8")
    for (int p = 0; p < pb; p++)
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++)
            storev(y + p * O + VW * v, acc[p][v]);
}

/* Channels [o0, o0 + VW*nv) of every pixel of output row 'y'. */
INLINE void forward_run(const MfConvGeom *g, const Padded *q, const float *xr, const float *w,
                        float *y, int nv, const Shape *k)
{
    int64_t ow = 0, O = g->O, step = k->sw * k->C;
    for (; ow + PB <= g->Wo; ow += PB)
        forward_block(g, q, xr + ow * step, w, y + ow * O, PB, nv, k);
    for (; ow < g->Wo; ow++)
        forward_block(g, q, xr + ow * step, w, y + ow * O, 1, nv, k);
}

/* Output row 'y', every channel; 'xr' is the padded input row of its first tap. */
INLINE void forward_row(const MfConvGeom *g, const Padded *q, const float *xr, const float *w,
                        float *y, const Shape *k)
{
    int64_t o = 0, O = g->O, step = k->sw * k->C;
    for (; o + 32 <= O; o += 32)
        forward_run(g, q, xr, w + o, y + o, NV32, k);
    for (; o + VW <= O; o += VW)
        forward_run(g, q, xr, w + o, y + o, 1, k);
    for (; o < O; o++) /* the last O % VW channels */
        for (int64_t ow = 0; ow < g->Wo; ow++) {
            float acc = 0;
            for (int64_t i = 0; i < k->kh; i++)
                for (int64_t j = 0; j < k->kw; j++)
                    for (int64_t c = 0; c < k->C; c++)
                        acc += xr[ow * step + i * k->dh * q->rs + j * k->dw * k->C + c] *
                               w[((i * k->kw + j) * k->C + c) * O + o];
            y[ow * O + o] = acc;
        }
}

/* Output rows [r0, r1) (a row is (n, oh)). */
static void forward_rows(void *ctx, int64_t r0, int64_t r1)
{
    const DirectJob *j = ctx;
    const MfConvGeom *g = j->g;
    const Padded *q = j->q;
    for (int64_t r = r0; r < r1; r++) {
        int64_t b = r / g->Ho, oh = r % g->Ho;
        const float *xr = q->p + (b * q->Hp + oh * g->sh) * q->rs;
        float *y = j->out + r * g->Wo * g->O;
        Shape k = shape_of(g);
        /* a first layer's 3x3 filter on 1 or 3 channels unrolls completely */
        if (same_shape(&k, &SHAPE_3X3X1))
            forward_row(g, q, xr, j->b, y, &SHAPE_3X3X1);
        else if (same_shape(&k, &SHAPE_3X3X3))
            forward_row(g, q, xr, j->b, y, &SHAPE_3X3X3);
        else
            forward_row(g, q, xr, j->b, y, &k);
    }
}

MfStatus mf_conv_direct_forward(const char *op, const MfConvGeom *g, const float *x,
                                const float *w, float *y)
{
    Padded q;
    MfStatus st = pad_input(op, g, x, &q);
    if (st != MF_OK)
        return st;
    DirectJob job = {g, &q, x, w, y};
    int64_t row_work = g->Wo * g->kh * g->kw * g->C * g->O;
    int64_t min_rows = 1 + (1 << 16) / (row_work > 0 ? row_work : 1);
    mf_parallel_for(g->N * g->Ho, min_rows, forward_rows, &job);
    mf_dealloc(q.p, q.bytes);
    return MF_OK;
}

/* ---- backprop-input ----------------------------------------------------------- */

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

/* Input rows [r0, r1) (a row is (n, ih)), any stride: pixel by pixel. */
static void input_rows(void *ctx, int64_t r0, int64_t r1)
{
    const DirectJob *j = ctx;
    const MfConvGeom *g = j->g;
    for (int64_t r = r0; r < r1; r++)
        for (int64_t iw = 0; iw < g->W; iw++)
            input_pixel(g, j->a, j->b, r / g->H, r % g->H, iw, j->out + (r * g->W + iw) * g->C);
}

/* Backprop-input at stride 1 reads dy through a ring of row copies: dy row
 * (b, oh) is copied once into slot oh % R (R = the dy rows one dx row reads),
 * with zero columns where the taps of the image's edge pixels fall outside
 * dy; taps on rows outside dy read a zero row. The kernels then test no
 * bounds. Each of the job's row ranges (chunks) has its own ring. */
typedef struct RingJob {
    const MfConvGeom *g;
    const float *w, *dy;
    float *dx;
    float *rings;       /* per chunk: R + 1 rows of Wq * O floats (the last: zeros) */
    int64_t *tags;      /* per chunk: the dy row (b * Ho + oh) in each slot, -1 none */
    int64_t R, Wq, per; /* ring rows, padded row pixels, dx rows per chunk */
} RingJob;

/* dy row 'src' (Wo pixels) into 'dst' (Wq pixels): dst's pixel s is dy's
 * pixel s - off, zeros outside dy. */
static void ring_fill(const MfConvGeom *g, const float *src, int64_t Wq, float *dst)
{
    int64_t O = g->O, off = (g->kw - 1) * g->dw - g->pad_left;
    int64_t lo = clamp64(off, 0, Wq), hi = clamp64(off + g->Wo, lo, Wq);
    memset(dst, 0, (size_t)(lo * O) * sizeof *dst);
    memcpy(dst + lo * O, src + (lo - off) * O, (size_t)((hi - lo) * O) * sizeof *dst);
    memset(dst + hi * O, 0, (size_t)((Wq - hi) * O) * sizeof *dst);
}

/* dx[p * C + c] for the pb pixels from dx row pixel iw: 'rows' are the ring
 * rows of the taps i. Dot products over O, vectorised: each pixel sums its
 * products into one vector (pb independent chains of FMAs), reduced once. */
INLINE void input_block(const float *const *rows, const float *w, int64_t iw, int64_t c,
                        float *dx, int pb, const Shape *k, int64_t O)
{
    int64_t kh = k->kh, kw = k->kw, C = k->C;
    vf acc[8] = {{0}};
    float tail[8] = {0};
    _Pragma("GCC unroll 9")
    for (int64_t i = 0; i < kh; i++)
        _Pragma("GCC unroll 9")
        for (int64_t j = 0; j < kw; j++) {
            const float *d = rows[i] + (iw + (kw - 1 - j) * k->dw) * O;
            const float *wp = w + ((i * kw + j) * C + c) * O;
            int64_t o = 0;
            for (; o + 32 <= O; o += 32)
                _Pragma("GCC unroll 8")
                for (int v = 0; v < NV32; v++) {
                    vf wv = loadv(wp + o + VW * v);
                    _Pragma("GCC unroll 8")
                    for (int p = 0; p < pb; p++)
                        acc[p] += loadv(d + p * O + o + VW * v) * wv;
                }
            for (; o + VW <= O; o += VW)
                _Pragma("GCC unroll 8")
                for (int p = 0; p < pb; p++)
                    acc[p] += loadv(d + p * O + o) * loadv(wp + o);
            for (; o < O; o++)
                for (int p = 0; p < pb; p++)
                    tail[p] += d[p * O + o] * wp[o];
        }
    _Pragma("GCC unroll 8")
    for (int p = 0; p < pb; p++)
        dx[p * C + c] = hsum1(acc[p]) + tail[p];
}

/* input_block for a filter known at compile time (kw <= 3) and O a multiple
 * of 32: tap row i's kw filter vectors stay in registers while each dy vector
 * of the row is loaded once and multiplied into the (up to kw) pixels whose
 * taps it is, instead of one load per tap and pixel. */
INLINE void input_block_sliding(const float *const *rows, const float *w, int64_t iw,
                                int64_t c, float *dx, int pb, const Shape *k, int64_t O)
{
    int64_t kh = k->kh, kw = k->kw, C = k->C, span = pb + (kw - 1) * k->dw;
    vf acc[8] = {{0}};
    _Pragma("GCC unroll 9")
    for (int64_t i = 0; i < kh; i++)
        for (int64_t o = 0; o < O; o += 32)
            _Pragma("GCC unroll 8")
            for (int v = 0; v < NV32; v++) {
                vf wv[3];
                _Pragma("GCC unroll 3")
                for (int64_t j = 0; j < kw; j++)
                    wv[j] = loadv(w + ((i * kw + j) * C + c) * O + o + VW * v);
                _Pragma("GCC unroll 3")
                for (int64_t j = 0; j < kw; j++)
                    __asm__("" : "+v"(wv[j]));
                _Pragma("GCC unroll 16")
                for (int64_t s = 0; s < span; s++) {
                    vf dv = loadv(rows[i] + (iw + s) * O + o + VW * v);
                    __asm__("" : "+v"(dv)); /* one load, kept in a register */
                    _Pragma("GCC unroll 3")
                    for (int64_t j = 0; j < kw; j++) {
                        int64_t p = s - (kw - 1 - j) * k->dw;
                        if (p >= 0 && p < pb)
                            acc[p] += dv * wv[j];
                    }
                }
            }
    _Pragma("GCC unroll 8")
    for (int p = 0; p < pb; p++)
        dx[p * C + c] = hsum1(acc[p]);
}

/* dx[0 .. pb) = the lane sums of acc[0 .. pb). With 16-float vectors a
 * block of 8 folds each vector to 8 lanes, then sums the 8 in one tree of
 * 256-bit horizontal adds (measured: 0.227 -> 0.215 ms for layer a's pass
 * against a 512-bit shuffle tree, 0.219 against a sum per pixel). */
INLINE void store_sums(const vf *acc, int pb, float *dx)
{
#if defined(__AVX512F__)
    if (pb == 8) {
        __m256 h[8];
        for (int p = 0; p < 8; p++) /* 16 lanes -> 8: the two halves added */
            h[p] = _mm256_add_ps(_mm512_castps512_ps256((__m512)acc[p]),
                                 _mm512_extractf32x8_ps((__m512)acc[p], 1));
        __m256 t0 = _mm256_hadd_ps(h[0], h[1]), t1 = _mm256_hadd_ps(h[2], h[3]);
        __m256 t2 = _mm256_hadd_ps(h[4], h[5]), t3 = _mm256_hadd_ps(h[6], h[7]);
        __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
        _mm256_storeu_ps(dx, _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20),
                                           _mm256_permute2f128_ps(u0, u1, 0x31)));
        return;
    }
#endif
    for (int p = 0; p < pb; p++)
        dx[p] = hsum1(acc[p]);
}

/* The first layer's backprop-input (3x3 SAME, stride 1, C = 1, O = 32) read
 * straight from dy: dx pixels [iw, iw + pb) of one row, 'rows' the dy rows
 * of taps 0..2 (NULL: outside dy, skipped). dx pixel q takes dy pixel
 * q + 1 - j for tap column j; the dy vectors s = 0 .. pb + 1 of the block
 * are dy pixels iw - 1 + s, of which the first (left edge) or the last
 * (right edge) may lie outside the row: 'first', 'last' say whether to read
 * them. A tap row outside dy is a row of zeros (a branch there would make
 * GCC keep the sums in memory). Each dy vector is loaded once and
 * multiplied into the (up to 3) pixels it is a tap of, the tap row's 3
 * filter vectors in registers. */
INLINE void input_block_first(const float *const *rows, const float *w, int64_t iw, float *dx,
                              int pb, bool first, bool last)
{
    enum { O = 32 };
    vf acc[8] = {{0}};
    int span = pb + 2;
    _Pragma("GCC unroll 3")
    for (int i = 0; i < 3; i++) {
        _Pragma("GCC unroll 8")
        for (int v = 0; v < NV32; v++) {
            const float *rp = rows[i] + iw * O + VW * v; /* dy pixel iw, vector v */
            vf wv[3];
            _Pragma("GCC unroll 3")
            for (int j = 0; j < 3; j++)
                wv[j] = loadv(w + (i * 3 + j) * O + VW * v);
            _Pragma("GCC unroll 3")
            for (int j = 0; j < 3; j++)
                __asm__("" : "+v"(wv[j]));
            _Pragma("GCC unroll 16")
            for (int t = 0; t < span; t++) {
                if ((t == 0 && !first) || (t == span - 1 && !last))
                    continue;
                vf dv = loadv(rp + (t - 1) * O);
                __asm__("" : "+v"(dv)); /* one load, kept in a register */
                _Pragma("GCC unroll 3")
                for (int j = 0; j < 3; j++) {
                    int p = t - 2 + j;
                    if (p >= 0 && p < pb)
                        acc[p] += dv * wv[j];
                }
            }
        }
    }
    store_sums(acc, pb, dx);
}

/* One dx row of the first layer (W >= 2) from the dy rows of its taps:
 * blocks of 8, 4 or 1 pixels, each with its edges known at compile time. */
static void input_row_first(int64_t W, const float *const *rows, const float *w, float *dx)
{
#define BLOCK(n, f, l)                                                          \
    case n * 4 + f * 2 + l:                                                     \
        input_block_first(rows, w, iw, dx + iw, n, f, l);                       \
        break;
    for (int64_t iw = 0; iw < W;) {
        int pb = W - iw >= 8 ? 8 : W - iw >= 4 ? 4 : 1;
        switch (pb * 4 + (iw > 0) * 2 + (iw + pb < W)) {
            BLOCK(8, 0, 1) BLOCK(8, 1, 1) BLOCK(8, 1, 0) BLOCK(8, 0, 0)
            BLOCK(4, 0, 1) BLOCK(4, 1, 1) BLOCK(4, 1, 0) BLOCK(4, 0, 0)
            BLOCK(1, 0, 1) BLOCK(1, 1, 1) BLOCK(1, 1, 0)
        default:
            break;
        }
        iw += pb;
    }
#undef BLOCK
}

typedef struct FirstJob {
    const MfConvGeom *g;
    const float *w, *dy, *zeros; /* zeros: a dy row of zeros */
    float *dx;
} FirstJob;

/* dx rows [r0, r1) of the first layer (see input_block_first). */
static void first_rows(void *ctx, int64_t r0, int64_t r1)
{
    const FirstJob *j = ctx;
    const MfConvGeom *g = j->g;
    for (int64_t r = r0; r < r1; r++) {
        int64_t b = r / g->H, ih = r % g->H;
        const float *rows[3];
        for (int i = 0; i < 3; i++) {
            int64_t oh = ih + 1 - i;
            rows[i] = oh >= 0 && oh < g->Ho ? j->dy + (b * g->Ho + oh) * g->Wo * 32 : j->zeros;
        }
        input_row_first(g->W, rows, j->w, j->dx + r * g->W);
    }
}

/* The geometry input_block_first is written for. */
static bool first_layer_input(const MfConvGeom *g)
{
    Shape s = shape_of(g);
    return same_shape(&s, &SHAPE_3X3X1) && g->O == 32 && g->sh == 1 && g->dh == 1 &&
           g->pad_top == 1 && g->pad_left == 1 && g->Ho == g->H && g->Wo == g->W && g->W >= 2;
}

/* One dx row, every pixel and channel, of the compile-time filter 'k'. */
INLINE void input_row_sliding(const MfConvGeom *g, const float *const *rows, const float *w,
                              float *dx, const Shape *k, int64_t O)
{
    for (int64_t c = 0; c < k->C; c++) {
        int64_t iw = 0;
        for (; iw + 8 <= g->W; iw += 8)
            input_block_sliding(rows, w, iw, c, dx + iw * k->C, 8, k, O);
        for (; iw + 4 <= g->W; iw += 4)
            input_block_sliding(rows, w, iw, c, dx + iw * k->C, 4, k, O);
        for (; iw < g->W; iw++)
            input_block_sliding(rows, w, iw, c, dx + iw * k->C, 1, k, O);
    }
}

/* One dx row (every pixel and channel) from the ring rows of its taps. */
INLINE void input_row(const MfConvGeom *g, const float *const *rows, const float *w, float *dx,
                      const Shape *k, int64_t O)
{
    for (int64_t c = 0; c < k->C; c++) {
        int64_t iw = 0;
        for (; iw + 8 <= g->W; iw += 8)
            input_block(rows, w, iw, c, dx + iw * k->C, 8, k, O);
        for (; iw + 4 <= g->W; iw += 4)
            input_block(rows, w, iw, c, dx + iw * k->C, 4, k, O);
        for (; iw < g->W; iw++)
            input_block(rows, w, iw, c, dx + iw * k->C, 1, k, O);
    }
}

/* The ring rows of dx row (b, ih)'s taps into 'rows', copying the dy rows
 * the ring lacks. */
static void ring_rows(const RingJob *j, float *ring, int64_t *tags, int64_t b, int64_t ih,
                      const float **rows)
{
    const MfConvGeom *g = j->g;
    int64_t rowlen = j->Wq * g->O;
    for (int64_t i = 0; i < g->kh; i++) {
        int64_t oh = ih + g->pad_top - i * g->dh;
        if (oh < 0 || oh >= g->Ho) {
            rows[i] = ring + j->R * rowlen; /* the zero row */
            continue;
        }
        int64_t slot = oh % j->R;
        if (tags[slot] != b * g->Ho + oh) {
            ring_fill(g, j->dy + (b * g->Ho + oh) * g->Wo * g->O, j->Wq, ring + slot * rowlen);
            tags[slot] = b * g->Ho + oh;
        }
        rows[i] = ring + slot * rowlen;
    }
}

static void ring_chunks(void *ctx, int64_t k0, int64_t k1)
{
    const RingJob *j = ctx;
    const MfConvGeom *g = j->g;
    int64_t rowlen = j->Wq * g->O, total = g->N * g->H;
    const float *rows[RING_MAX_KH];
    for (int64_t k = k0; k < k1; k++) {
        float *ring = j->rings + k * (j->R + 1) * rowlen;
        int64_t *tags = j->tags + k * j->R;
        for (int64_t s = 0; s < j->R; s++)
            tags[s] = -1;
        memset(ring + j->R * rowlen, 0, (size_t)rowlen * sizeof *ring);
        for (int64_t r = k * j->per; r < total && r < (k + 1) * j->per; r++) {
            ring_rows(j, ring, tags, r / g->H, r % g->H, rows);
            float *dx = j->dx + r * g->W * g->C;
            /* a first layer's 3x3 filter to 32 channels unrolls completely */
            Shape s = shape_of(g);
            if (same_shape(&s, &SHAPE_3X3X1) && g->O == 32)
                input_row_sliding(g, rows, j->w, dx, &SHAPE_3X3X1, 32);
            else
                input_row(g, rows, j->w, dx, &s, g->O);
        }
    }
}

MfStatus mf_conv_direct_backprop_input(const char *op, const MfConvGeom *g, const float *w,
                                       const float *dy, float *dx)
{
    int64_t rows = g->N * g->H, row_work = g->W * g->kh * g->kw * g->C * g->O;
    int64_t min_rows = 1 + (1 << 16) / (row_work > 0 ? row_work : 1);
    if (first_layer_input(g)) {
        size_t zbytes = (size_t)(g->Wo * g->O) * sizeof(float);
        FirstJob job = {g, w, dy, mf_alloc(zbytes), dx};
        if (!job.zeros)
            return mf_err_nomem(op, zbytes);
        memset((float *)job.zeros, 0, zbytes);
        mf_parallel_for(rows, min_rows, first_rows, &job);
        mf_dealloc((float *)job.zeros, zbytes);
        return MF_OK;
    }
    if (g->sh != 1 || g->sw != 1 || g->kh > RING_MAX_KH) {
        DirectJob job = {g, NULL, w, dy, dx};
        mf_parallel_for(rows, min_rows, input_rows, &job);
        return MF_OK;
    }
    int64_t chunks = mf_parallel_threads(), most = (rows + min_rows - 1) / min_rows;
    chunks = chunks < most ? chunks : most;
    chunks = chunks < MAX_RING_THREADS ? chunks : MAX_RING_THREADS;
    chunks = chunks > 0 ? chunks : 1;
    RingJob job = {.g = g, .w = w, .dy = dy, .dx = dx, .R = (g->kh - 1) * g->dh + 1,
                   .Wq = g->W + (g->kw - 1) * g->dw, .per = (rows + chunks - 1) / chunks};
    size_t ring_bytes = (size_t)(chunks * (job.R + 1) * job.Wq * g->O) * sizeof(float);
    size_t tag_bytes = (size_t)(chunks * job.R) * sizeof(int64_t);
    job.rings = mf_alloc(ring_bytes);
    job.tags = mf_alloc(tag_bytes);
    MfStatus st = job.rings && job.tags ? MF_OK : mf_err_nomem(op, ring_bytes + tag_bytes);
    if (st == MF_OK)
        mf_parallel_for(chunks, 1, ring_chunks, &job);
    mf_dealloc(job.rings, ring_bytes);
    mf_dealloc(job.tags, tag_bytes);
    return st;
}

/* ---- backprop-filter ---------------------------------------------------------- */

#define TG_MAX 12 /* TG on AVX-512; the 'switch' below has a case for each count */

typedef struct FilterJob {
    const MfConvGeom *g;
    const Padded *q;
    const float *dy;
    const int64_t *off; /* tap t = (i, j, c): its offset in q from the pixel's first tap */
    float *parts;       /* one kh*kw*C*O partial per block */
    int64_t rows, per;  /* output rows; rows per block */
} FilterJob;

/* dw of the n taps from 'off', channels [o0, o0 + VW*nv), summed over
 * output rows [r0, r1), into 'dst' (tap off[0]'s row at channel o0): dy
 * streams past once while the n * nv sums stay in registers. */
INLINE void filter_taps(const FilterJob *j, const int64_t *off, int n, int nv, int64_t o0,
                        int64_t r0, int64_t r1, float *dst)
{
    const MfConvGeom *g = j->g;
    const Padded *q = j->q;
    vf acc[TG_MAX][NV32] = {{{0}}};
    int64_t O = g->O, step = g->sw * g->C;
    for (int64_t r = r0; r < r1; r++) {
        const float *xr = q->p + (r / g->Ho * q->Hp + r % g->Ho * g->sh) * q->rs;
        const float *d = j->dy + r * g->Wo * O + o0;
        for (int64_t ow = 0; ow < g->Wo; ow++) {
            vf dv[NV32];
            _Pragma("GCC unroll 8")
            for (int v = 0; v < nv; v++)
                dv[v] = loadv(d + ow * O + VW * v);
            const float *xp = xr + ow * step;
            _Pragma("GCC unroll 12")
            for (int t = 0; t < n; t++) {
                float xv = xp[off[t]];
                _Pragma("GCC unroll 8")
                for (int v = 0; v < nv; v++)
                    acc[t][v] += xv * dv[v];
            }
        }
    }
    _Pragma("GCC unroll 12")
    for (int t = 0; t < n; t++)
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++)
            storev(dst + t * O + VW * v, acc[t][v]);
}

/* filter_taps with the tap count n (1 .. TG) and nv (NV32 or 1) constant. */
static void filter_group(const FilterJob *j, const int64_t *off, int n, int nv, int64_t o0,
                         int64_t r0, int64_t r1, float *dst)
{
#define TAPS(k)                                                \
    case k:                                                    \
        if (nv == NV32)                                        \
            filter_taps(j, off, k, NV32, o0, r0, r1, dst);     \
        else                                                   \
            filter_taps(j, off, k, 1, o0, r0, r1, dst);        \
        break;
    switch (n) {
        TAPS(1) TAPS(2) TAPS(3) TAPS(4) TAPS(5) TAPS(6)
        TAPS(7) TAPS(8) TAPS(9) TAPS(10) TAPS(11) TAPS(12)
    default:
        break;
    }
#undef TAPS
}

/* The partial dw (kh*kw*C*O) of output rows [r0, r1) into 'part'. */
static void filter_partial(const FilterJob *j, int64_t r0, int64_t r1, float *part)
{
    const MfConvGeom *g = j->g;
    int64_t T = g->kh * g->kw * g->C, O = g->O, o = 0;
    for (; o + 32 <= O; o += 32)
        for (int64_t t = 0; t < T; t += TG)
            filter_group(j, j->off + t, (int)(T - t < TG ? T - t : TG), NV32, o, r0, r1,
                         part + t * O + o);
    for (; o + VW <= O; o += VW)
        for (int64_t t = 0; t < T; t += TG)
            filter_group(j, j->off + t, (int)(T - t < TG ? T - t : TG), 1, o, r0, r1,
                         part + t * O + o);
    for (; o < O; o++) /* the last O % VW channels */
        for (int64_t t = 0; t < T; t++) {
            float acc = 0;
            for (int64_t r = r0; r < r1; r++) {
                const float *xr = j->q->p + (r / g->Ho * j->q->Hp + r % g->Ho * g->sh) * j->q->rs;
                for (int64_t ow = 0; ow < g->Wo; ow++)
                    acc += xr[ow * g->sw * g->C + j->off[t]] * j->dy[(r * g->Wo + ow) * O + o];
            }
            part[t * O + o] = acc;
        }
}

static void filter_blocks(void *ctx, int64_t b0, int64_t b1)
{
    const FilterJob *j = ctx;
    int64_t K = j->g->kh * j->g->kw * j->g->C * j->g->O;
    for (int64_t b = b0; b < b1; b++) {
        int64_t r0 = b * j->per, r1 = r0 + j->per < j->rows ? r0 + j->per : j->rows;
        filter_partial(j, r0, r1, j->parts + b * K);
    }
}

/* Tap t = (i, j, c)'s offset in the padded input from a pixel's first tap. */
static void tap_offsets(const MfConvGeom *g, const Padded *q, int64_t *off)
{
    for (int64_t i = 0; i < g->kh; i++)
        for (int64_t j = 0; j < g->kw; j++)
            for (int64_t c = 0; c < g->C; c++)
                off[(i * g->kw + j) * g->C + c] = i * g->dh * q->rs + j * g->dw * g->C + c;
}

MfStatus mf_conv_direct_backprop_filter(const char *op, const MfConvGeom *g, const float *x,
                                        const float *dy, float *dw)
{
    int64_t rows = g->N * g->Ho, T = g->kh * g->kw * g->C, K = T * g->O;
    /* about FILTER_PIXELS pixels a block, an even count of equal blocks (2
     * threads get the same work): fixed by the shape, not the thread count */
    int64_t per = g->Wo > 0 && g->Wo < FILTER_PIXELS ? FILTER_PIXELS / g->Wo : 1;
    int64_t pairs = (rows + 2 * per - 1) / (2 * per);
    per = pairs > 0 ? (rows + 2 * pairs - 1) / (2 * pairs) : 1;
    int64_t blocks = (rows + per - 1) / per;
    Padded q;
    MfStatus st = pad_input(op, g, x, &q);
    if (st != MF_OK)
        return st;
    size_t off_bytes = (size_t)T * sizeof(int64_t);
    size_t bytes = blocks > 1 ? (size_t)(blocks * K) * sizeof(float) : 0;
    int64_t *off = mf_alloc(off_bytes);
    float *parts = blocks > 1 ? mf_alloc(bytes) : dw;
    if (!off || !parts) {
        st = mf_err_nomem(op, off_bytes + bytes);
    } else {
        tap_offsets(g, &q, off);
        FilterJob job = {g, &q, dy, off, parts, rows, per};
        mf_parallel_for(blocks, 1, filter_blocks, &job);
    }
    if (st == MF_OK && blocks > 1) { /* block order, whatever thread made each block */
        memcpy(dw, parts, (size_t)K * sizeof *dw);
        for (int64_t b = 1; b < blocks; b++)
            for (int64_t k = 0; k < K; k++)
                dw[k] += parts[b * K + k];
    }
    if (blocks > 1)
        mf_dealloc(parts, bytes);
    mf_dealloc(off, off_bytes);
    mf_dealloc(q.p, q.bytes);
    return st;
}
