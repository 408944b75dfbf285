/* pool.c — MaxPool, AvgPool and their gradient ops MaxPoolGrad,
 * AvgPoolGrad and MaxPoolGradGrad on NHWC float tensors (see pool.h for
 * the attributes and TensorFlow's SAME / VALID rules).
 *
 * Kernels walk the output positions (n, oh, ow) and, inside each window,
 * whole rows of C channels, which are contiguous in NHWC: the innermost
 * loops run over channels with unit stride. */
#include <math.h>
#include <string.h>

#include "pool.h"

#include "../alloc.h"
#include "../parallel.h"
#include "common.h"
#include "view.h"
#include "window.h"

/* The geometry of one pooling call. */
typedef struct Geom {
    int64_t n, h, w, c;         /* input */
    int64_t kh, kw, sh, sw;     /* window and strides */
    int64_t oh, ow;             /* output */
    int64_t pt, pl;             /* padding before (top, left) */
} Geom;

/* Output size and padding before along one axis (window.h); -1 for an
 * unknown input size. VALID with a window larger than the input is an
 * error. */
static MfStatus axis_size(const MfOpCall *c, const char *axis, int64_t in, int64_t k, int64_t s,
                          int64_t *out, int64_t *pad)
{
    if (c->attrs->padding == MF_PADDING_VALID && in >= 0 && k > in)
        return mf_err_set(MF_ESHAPE, "%s: window %lld is larger than the input %s %lld with "
                          "VALID padding (use SAME, or a smaller ksize)", op_api(c),
                          (long long)k, axis, (long long)in);
    mf_window_axis(c->attrs->padding, in, k, s, 1, out, pad, NULL);
    return MF_OK;
}

static MfStatus check_attrs(const MfOpCall *c)
{
    const MfAttrs *a = c->attrs;
    for (int i = 0; i < 4; i++)
        if (a->ksize[i] < 1 || a->strides[i] < 1)
            return mf_err_set(MF_EARG, "%s: ksize and strides must be >= 1, got ksize "
                              "{%lld,%lld,%lld,%lld} and strides {%lld,%lld,%lld,%lld}",
                              op_api(c), (long long)a->ksize[0], (long long)a->ksize[1],
                              (long long)a->ksize[2], (long long)a->ksize[3],
                              (long long)a->strides[0], (long long)a->strides[1],
                              (long long)a->strides[2], (long long)a->strides[3]);
    if (a->ksize[0] != 1 || a->ksize[3] != 1 || a->strides[0] != 1 || a->strides[3] != 1)
        return mf_err_set(MF_EARG, "%s: pooling over the batch or channel axis is not "
                          "supported: ksize and strides must be {1, h, w, 1} (NHWC)", op_api(c));
    return mf_window_check_padding(op_api(c), a->padding);
}

/* Checks the NHWC input 'x' and fills 'g'. */
static MfStatus geometry(const MfOpCall *c, const MfTensor *x, Geom *g)
{
    MfStatus st = mf_check_dtype(c, x, MF_FLOATS,
                                 "a float dtype (float32 or float64; use mf.cast)");
    if (st != MF_OK)
        return st;
    if (x->rank != 4)
        return mf_err_set(MF_ESHAPE, "%s: expected a rank-4 NHWC input (batch, height, width, "
                          "channels), got rank %d", op_api(c), x->rank);
    if ((st = check_attrs(c)) != MF_OK)
        return st;
    const MfAttrs *a = c->attrs;
    *g = (Geom){.n = x->shape[0], .h = x->shape[1], .w = x->shape[2], .c = x->shape[3],
                .kh = a->ksize[1], .kw = a->ksize[2], .sh = a->strides[1], .sw = a->strides[2]};
    st = axis_size(c, "height", g->h, g->kh, g->sh, &g->oh, &g->pt);
    if (st == MF_OK)
        st = axis_size(c, "width", g->w, g->kw, g->sw, &g->ow, &g->pl);
    return st;
}

static void set_spec(MfOpCall *c, MfDType dt, const int64_t *shape)
{
    c->noutputs = 1;
    c->out[0].dtype = dt;
    c->out[0].rank = 4;
    memcpy(c->out[0].shape, shape, 4 * sizeof *shape);
}

/* Input 'k' has the given shape (unknown dims match). */
static MfStatus check_shape(const MfOpCall *c, int k, const char *what, const int64_t *shape)
{
    const MfTensor *t = c->inputs[k];
    MfStatus st = mf_check_same_dtype(c, c->inputs[0], t);
    if (st != MF_OK)
        return st;
    bool ok = t->rank == 4;
    for (int i = 0; ok && i < 4; i++)
        ok = t->shape[i] < 0 || shape[i] < 0 || t->shape[i] == shape[i];
    if (ok)
        return MF_OK;
    char a[96], b[96];
    return mf_err_set(MF_ESHAPE, "%s: %s must have shape %s, got %s", op_api(c), what,
                      mf_shape_str(4, shape, a, sizeof a), mf_shape_str(t->rank, t->shape, b, 96));
}

/* MaxPool, AvgPool: x -> y. */
static MfStatus pool_infer(MfOpCall *c)
{
    Geom g;
    MfStatus st = geometry(c, c->inputs[0], &g);
    if (st == MF_OK)
        set_spec(c, c->inputs[0]->dtype, (int64_t[]){g.n, g.oh, g.ow, g.c});
    return st;
}

/* MaxPoolGrad (x, y, dy), AvgPoolGrad (x, dy): -> dx shaped like x. */
static MfStatus pool_grad_infer(MfOpCall *c)
{
    Geom g;
    MfStatus st = geometry(c, c->inputs[0], &g);
    const int64_t *xs = c->inputs[0]->shape, ys[4] = {g.n, g.oh, g.ow, g.c};
    for (int k = 1; st == MF_OK && k < c->ninputs; k++)
        st = check_shape(c, k, k + 1 < c->ninputs ? "the pooled output" : "the gradient", ys);
    if (st == MF_OK)
        set_spec(c, c->inputs[0]->dtype, xs);
    return st;
}

/* MaxPoolGradGrad (x, y, ddx): -> ddy shaped like y. */
static MfStatus pool_grad_grad_infer(MfOpCall *c)
{
    Geom g;
    MfStatus st = geometry(c, c->inputs[0], &g);
    const int64_t ys[4] = {g.n, g.oh, g.ow, g.c};
    if (st == MF_OK)
        st = check_shape(c, 1, "the pooled output", ys);
    if (st == MF_OK)
        st = check_shape(c, 2, "the input gradient", c->inputs[0]->shape);
    if (st == MF_OK)
        set_spec(c, c->inputs[0]->dtype, ys);
    return st;
}

/* The window of output (oh, ow), clipped to the input: rows [*h0, *h1),
 * columns [*w0, *w1). */
static void window(const Geom *g, int64_t oh, int64_t ow, int64_t *h0, int64_t *h1, int64_t *w0,
                   int64_t *w1)
{
    int64_t hs = oh * g->sh - g->pt, ws = ow * g->sw - g->pl;
    *h0 = hs > 0 ? hs : 0;
    *h1 = hs + g->kh < g->h ? hs + g->kh : g->h;
    *w0 = ws > 0 ? ws : 0;
    *w1 = ws + g->kw < g->w ? ws + g->kw : g->w;
}

/* The larger of 'a' and the running maximum 'm', NaN winning (a window with
 * a NaN pools to NaN, whatever its position, as in PyTorch and TensorFlow). */
#define MAX_NAN(a, m) ((a) > (m) || (a) != (a) ? (a) : (m))
/* Whether 'a' takes over as the window's maximum 'm': larger, or the first
 * NaN (routing then goes to the element MAX_NAN kept). */
#define TAKES_OVER(a, m) ((a) > (m) || ((a) != (a) && (m) == (m)))

/* The kernels: MODE 0 max forward, 1 average forward, 2 average gradient. */
#define POOL_KERNEL(T, SUF)                                                              \
    static void pool_##SUF(const Geom *g, const T *x, T *y, int mode, int64_t b0,        \
                           int64_t b1)                                                   \
    {                                                                                    \
        int64_t C = g->c;                                                                \
        for (int64_t b = b0; b < b1; b++)                                                \
            for (int64_t oh = 0; oh < g->oh; oh++)                                       \
                for (int64_t ow = 0; ow < g->ow; ow++) {                                 \
                    int64_t h0, h1, w0, w1, o = ((b * g->oh + oh) * g->ow + ow) * C;     \
                    window(g, oh, ow, &h0, &h1, &w0, &w1);                               \
                    T *yr = y + o, r = (T)1 / (T)((h1 - h0) * (w1 - w0));                \
                    const T *dr = x + o;                                                 \
                    bool first = true;                                                   \
                    for (int64_t h = h0; h < h1; h++)                                    \
                        for (int64_t w = w0; w < w1; w++) {                              \
                            int64_t i = ((b * g->h + h) * g->w + w) * C;                 \
                            if (mode == 2) {                                             \
                                for (int64_t k = 0; k < C; k++)                          \
                                    y[i + k] += dr[k] * r;                               \
                            } else if (first) {                                          \
                                memcpy(yr, x + i, (size_t)C * sizeof(T));                \
                            } else if (mode == 0) {                                      \
                                for (int64_t k = 0; k < C; k++)                          \
                                    yr[k] = MAX_NAN(x[i + k], yr[k]);                    \
                            } else {                                                     \
                                for (int64_t k = 0; k < C; k++)                          \
                                    yr[k] += x[i + k];                                   \
                            }                                                            \
                            first = false;                                               \
                        }                                                                \
                    for (int64_t k = 0; k < C && mode == 1; k++)                         \
                        yr[k] *= r;                                                      \
                }                                                                        \
    }

POOL_KERNEL(float, f32)
POOL_KERNEL(double, f64)

/* Routing by argmax. For each window, 'at[k]' becomes the input offset of
 * channel k's first maximum; then MODE 0 (MaxPoolGrad) adds y[o + k] into
 * d[at[k]], MODE 1 (MaxPoolGradGrad) writes d[o + k] = y[at[k]]. The running
 * maximum is kept in 'm' rather than re-read through 'at': a compare and two
 * selects per lane, which the compiler vectorizes (a gather per element was
 * the op's whole cost). */
#define ARGMAX_KERNEL(T, SUF)                                                            \
    static void route_##SUF(const Geom *g, const T *x, const T *y, T *d, int mode,       \
                            int64_t *at, T *m, int64_t b0, int64_t b1)                   \
    {                                                                                    \
        int64_t C = g->c;                                                                \
        for (int64_t b = b0; b < b1; b++)                                                \
            for (int64_t oh = 0; oh < g->oh; oh++)                                       \
                for (int64_t ow = 0; ow < g->ow; ow++) {                                 \
                    int64_t h0, h1, w0, w1, o = ((b * g->oh + oh) * g->ow + ow) * C;     \
                    window(g, oh, ow, &h0, &h1, &w0, &w1);                               \
                    int64_t i0 = ((b * g->h + h0) * g->w + w0) * C;                      \
                    for (int64_t k = 0; k < C; k++) {                                    \
                        at[k] = i0 + k;                                                  \
                        m[k] = x[i0 + k];                                                \
                    }                                                                    \
                    for (int64_t h = h0; h < h1; h++)                                    \
                        for (int64_t w = w0; w < w1; w++) {                              \
                            int64_t i = ((b * g->h + h) * g->w + w) * C;                 \
                            for (int64_t k = 0; k < C; k++) {                            \
                                bool gt = TAKES_OVER(x[i + k], m[k]);                    \
                                m[k] = gt ? x[i + k] : m[k];                             \
                                at[k] = gt ? i + k : at[k];                              \
                            }                                                            \
                        }                                                                \
                    for (int64_t k = 0; k < C; k++) {                                    \
                        if (mode == 0)                                                   \
                            d[at[k]] += y[o + k];                                        \
                        else                                                             \
                            d[o + k] = y[at[k]];                                         \
                    }                                                                    \
                }                                                                        \
    }

ARGMAX_KERNEL(float, f32)
ARGMAX_KERNEL(double, f64)

/* MaxPoolGrad when the windows tile the input exactly (ksize == strides, no
 * padding, no leftover rows or columns: the common 2x2 / stride 2 case), so
 * every element of 'd' belongs to one window and is written once. Per window:
 * the maximum 'm' (as MaxPool computes it), then one pass in window order
 * that hands the gradient 'r' to the first element equal to the maximum and
 * zero to the rest. No offsets and no scatter: every loop runs over the
 * channels and vectorizes. A NaN maximum goes to the window's first NaN. */
#define TILE_KERNEL(T, SUF)                                                              \
    static void route_tiles_##SUF(const Geom *g, const T *x, const T *dy, T *d, T *m,     \
                                  T *r, int64_t b0, int64_t b1)                          \
    {                                                                                    \
        int64_t C = g->c;                                                                \
        for (int64_t b = b0; b < b1; b++)                                                \
            for (int64_t oh = 0; oh < g->oh; oh++)                                       \
                for (int64_t ow = 0; ow < g->ow; ow++) {                                 \
                    int64_t o = ((b * g->oh + oh) * g->ow + ow) * C;                     \
                    int64_t h0 = oh * g->kh, w0 = ow * g->kw;                            \
                    const T *x0 = x + ((b * g->h + h0) * g->w + w0) * C;                 \
                    memcpy(m, x0, (size_t)C * sizeof(T));                                \
                    memcpy(r, dy + o, (size_t)C * sizeof(T));                            \
                    for (int64_t h = h0; h < h0 + g->kh; h++)                            \
                        for (int64_t w = w0; w < w0 + g->kw; w++) {                      \
                            const T *xi = x + ((b * g->h + h) * g->w + w) * C;           \
                            for (int64_t k = 0; k < C; k++)                              \
                                m[k] = TAKES_OVER(xi[k], m[k]) ? xi[k] : m[k];           \
                        }                                                                \
                    for (int64_t h = h0; h < h0 + g->kh; h++)                            \
                        for (int64_t w = w0; w < w0 + g->kw; w++) {                      \
                            int64_t i = ((b * g->h + h) * g->w + w) * C;                 \
                            for (int64_t k = 0; k < C; k++) {                            \
                                bool hit = x[i + k] == m[k] ||                           \
                                           (m[k] != m[k] && x[i + k] != x[i + k]);       \
                                d[i + k] = hit ? r[k] : (T)0;                            \
                                r[k] = hit ? (T)0 : r[k];                                \
                            }                                                            \
                        }                                                                \
                }                                                                        \
    }

TILE_KERNEL(float, f32)
TILE_KERNEL(double, f64)

/* Contiguous copies of the first 'n' inputs, into 't' (owned). */
static MfStatus contiguous_inputs(const MfOpCall *c, int n, MfTensor **t)
{
    for (int i = 0; i < n; i++) {
        t[i] = mf_tensor_contiguous(c->inputs[i]);
        if (!t[i]) {
            for (int j = 0; j < i; j++)
                mf_tensor_release(t[j]);
            return MF_ENOMEM;
        }
    }
    return MF_OK;
}

static void release_inputs(MfTensor **t, int n)
{
    for (int i = 0; i < n; i++)
        mf_tensor_release(t[i]);
}

/* A share of pool_run: whole images (each writes only its own image). */
typedef struct PoolJob {
    const Geom *g;
    const void *src;
    void *y;
    int mode;
    bool f64;
} PoolJob;

static void pool_chunk(void *ctx, int64_t b0, int64_t b1)
{
    const PoolJob *j = ctx;
    if (j->f64)
        pool_f64(j->g, j->src, j->y, j->mode, b0, b1);
    else
        pool_f32(j->g, j->src, j->y, j->mode, b0, b1);
}

/* Images per share of a pooling kernel: at least 64K input elements. */
static int64_t images_per_share(const Geom *g)
{
    int64_t image = g->h * g->w * g->c > 0 ? g->h * g->w * g->c : 1;
    return (65536 + image - 1) / image;
}

/* MaxPool / AvgPool (mode 0 / 1) and AvgPoolGrad (mode 2, reading dy). */
static MfStatus pool_run(const MfOpCall *c, MfTensor **outs, int mode)
{
    Geom g;
    MfTensor *t[2] = {0}, *y = outs[0];
    MfStatus st = geometry(c, c->inputs[0], &g);
    if (st == MF_OK)
        st = contiguous_inputs(c, c->ninputs, t);
    if (st != MF_OK)
        return st;
    const MfTensor *src = mode == 2 ? t[1] : t[0];
    if (mode == 2)
        memset(mf_tensor_data(y), 0, (size_t)mf_tensor_numel(y) * mf_dtype_size(y->dtype));
    PoolJob job = {&g, mf_tensor_data(src), mf_tensor_data(y), mode, y->dtype == MF_FLOAT64};
    mf_parallel_for(g.n, images_per_share(&g), pool_chunk, &job);
    release_inputs(t, c->ninputs);
    return MF_OK;
}

static MfStatus max_pool_forward(const MfOpCall *c, MfTensor **outs)
{
    return pool_run(c, outs, 0);
}

static MfStatus avg_pool_forward(const MfOpCall *c, MfTensor **outs)
{
    return pool_run(c, outs, 1);
}

static MfStatus avg_pool_grad_forward(const MfOpCall *c, MfTensor **outs)
{
    return pool_run(c, outs, 2);
}

/* The windows cover every input element exactly once (ksize == strides, no
 * padding, no leftover rows or columns): the common 2x2 / stride 2 case. */
static bool tiles_exactly(const Geom *g)
{
    return g->kh == g->sh && g->kw == g->sw && g->pt == 0 && g->pl == 0 &&
           g->oh * g->kh == g->h && g->ow * g->kw == g->w;
}

/* A share of the routing: whole images, whose windows write only their own
 * image of 'd'. Each share keeps its scratch on its stack. */
#define ROUTE_STACK_C 512

typedef struct RouteJob {
    const Geom *g;
    const void *x, *y;
    void *d;
    int mode;
    bool f64;
} RouteJob;

/* Images [b0, b1) of a routing job, with scratch 'at' and 'm' of C int64_t
 * each (the tiling kernel uses them as its two arrays of C values). */
static void route_share(const RouteJob *j, int64_t *at, int64_t *m, int64_t b0, int64_t b1)
{
    if (j->mode == 2 && j->f64)
        route_tiles_f64(j->g, j->x, j->y, j->d, (double *)m, (double *)at, b0, b1);
    else if (j->mode == 2)
        route_tiles_f32(j->g, j->x, j->y, j->d, (float *)m, (float *)at, b0, b1);
    else if (j->f64)
        route_f64(j->g, j->x, j->y, j->d, j->mode, at, (double *)m, b0, b1);
    else
        route_f32(j->g, j->x, j->y, j->d, j->mode, at, (float *)m, b0, b1);
}

static void route_chunk(void *ctx, int64_t b0, int64_t b1)
{
    int64_t at[ROUTE_STACK_C], m[ROUTE_STACK_C];
    route_share(ctx, at, m, b0, b1);
}

/* MaxPoolGrad (mode 0, or 2 when the windows tile the input) and
 * MaxPoolGradGrad (mode 1): inputs x, y, and the gradient to route (input 2). */
static MfStatus route_run(const MfOpCall *c, MfTensor **outs, int mode)
{
    Geom g;
    MfTensor *t[3] = {0}, *d = outs[0];
    MfStatus st = geometry(c, c->inputs[0], &g);
    if (st == MF_OK)
        st = contiguous_inputs(c, 3, t);
    if (st != MF_OK)
        return st;
    /* scratch for many channels: 'at' (int64 offsets), then the running maxima */
    size_t nbytes = (size_t)(g.c > 0 ? g.c : 1) * 2 * sizeof(int64_t);
    int64_t *at = mf_alloc(nbytes);
    if (!at) {
        release_inputs(t, 3);
        return mf_err_nomem(op_api(c), nbytes);
    }
    if (mode == 0 && tiles_exactly(&g))
        mode = 2;
    else if (mode == 0)
        memset(mf_tensor_data(d), 0, (size_t)mf_tensor_numel(d) * mf_dtype_size(d->dtype));
    RouteJob job = {&g, mf_tensor_data(t[0]), mf_tensor_data(t[2]), mf_tensor_data(d), mode,
                    d->dtype == MF_FLOAT64};
    if (g.c <= ROUTE_STACK_C) /* images in parallel */
        mf_parallel_for(g.n, images_per_share(&g), route_chunk, &job);
    else
        route_share(&job, at, at + g.c, 0, g.n);
    mf_dealloc(at, nbytes);
    release_inputs(t, 3);
    return MF_OK;
}

static MfStatus max_pool_grad_forward(const MfOpCall *c, MfTensor **outs)
{
    return route_run(c, outs, 0);
}

static MfStatus max_pool_grad_grad_forward(const MfOpCall *c, MfTensor **outs)
{
    return route_run(c, outs, 1);
}

/* One compare or add per window element per output (or per input gradient). */
static MfCost pool_cost(const MfOpCall *c)
{
    MfCost cost = mf_cost_elementwise(c);
    const MfAttrs *a = c->attrs;
    int64_t pooled = c->op == MF_OP_MAX_POOL || c->op == MF_OP_AVG_POOL ||
                     c->op == MF_OP_MAX_POOL_GRAD_GRAD
                         ? mf_shape_numel(c->out[0].rank, c->out[0].shape)
                         : mf_tensor_numel(c->inputs[c->ninputs - 1]);
    cost.flops = (double)pooled * (double)a->ksize[1] * (double)a->ksize[2]; /* may be huge */
    return cost;
}


/* ksize and strides: n, {h, w} or four entries in the data format's order */
static const MfAttrDef pool_attrs[] = {
    {"ksize", MF_ATTR_WINDOW, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(ksize), 0, 0,
     NULL, NULL},
    {"strides", MF_ATTR_WINDOW, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(strides), 0,
     0, NULL, NULL},
    {"padding", MF_ATTR_ENUM, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(padding), 0, 0,
     mf_padding_names, NULL},
    {"data_format", MF_ATTR_ENUM, 0, MF_ATTR_AT(data_format), 0, 0, mf_data_format_names,
     NULL},
};

/* Lua's max_pool / avg_pool: with data_format NCHW, the NHWC op runs
 * between two transposes (so gradients flow), as conv2d does. */
static MfStatus pool_entry(MfOpId op, MfTensor *x, const MfAttrs *a, MfTensor **outs)
{
    if (a->data_format != MF_NCHW || x->rank != 4) /* the op reports a wrong rank */
        return mf_op1(op, 1, &x, a, outs);
    MfAttrs at = mf_window_nhwc_attrs(a, MF_NCHW);
    MfTensor *xt = NULL, *y = NULL;
    MfStatus st = mf_transpose(x, mf_nchw_to_nhwc, 4, &xt);
    if (st == MF_OK)
        st = mf_op1(op, 1, &xt, &at, &y);
    if (st != MF_OK)
        mf_err_suffix("data_format NCHW: shapes shown after transposing to NHWC");
    else
        st = mf_transpose(y, mf_nhwc_to_nchw, 4, outs);
    mf_tensor_release(xt);
    mf_tensor_release(y);
    return st;
}

static MfStatus max_pool_entry(int n, MfTensor *const *in, const MfAttrs *a, MfTensor **outs,
                               int *nout)
{
    (void)n;
    *nout = 1;
    return pool_entry(MF_OP_MAX_POOL, in[0], a, outs);
}

static MfStatus avg_pool_entry(int n, MfTensor *const *in, const MfAttrs *a, MfTensor **outs,
                               int *nout)
{
    (void)n;
    *nout = 1;
    return pool_entry(MF_OP_AVG_POOL, in[0], a, outs);
}

#define POOL_OP(sym, tfname, apiname, nin, inf, fwd, bwd, face, front, ...)              \
    const MfOpDesc sym = {                                                               \
        .name = tfname, .api = apiname, .arity = nin, .flags = 0, .infer = inf,          \
        .forward = fwd, .backward = bwd, .cost = pool_cost, .attrs = pool_attrs,         \
        .nattrs = MF_NATTRS(pool_attrs), .lua = face, .inputs = "x", .entry = front,     \
        .summary = __VA_ARGS__,                                                          \
    }

POOL_OP(mf_desc_max_pool, "MaxPool", "max_pool", 1, pool_infer, max_pool_forward,
        mf_max_pool_backward, "nn.max_pool", max_pool_entry,
        "the largest value of each ksize window, windows strides apart",
    .topic = "nn",
    .details =
        "The maximum of each window of a 4-D NHWC float tensor. 'ksize' and 'strides' are a "
        "number k (1, k, k, 1), a pair {kh, kw} or 4 entries {1, kh, kw, 1}; 'padding' is "
        "\"SAME\" (output ceil(H / stride), padding ignored) or \"VALID\" (windows inside the "
        "input). The gradient goes to the first maximum of each window.",
    .example =
        "x = mf.reshape(mf.range(1, 17, 1, {dtype = \"float32\"}), {1, 4, 4, 1})\n"
        "mf.nn.max_pool(x, 2, 2, \"VALID\")               --> {{{{6}, {8}}, {{14}, {16}}}}");
POOL_OP(mf_desc_avg_pool, "AvgPool", "avg_pool", 1, pool_infer, avg_pool_forward,
        mf_avg_pool_backward, "nn.avg_pool", avg_pool_entry,
        "the mean of each ksize window (SAME: of the values inside), windows strides apart",
    .topic = "nn",
    .details =
        "The mean of each window of a 4-D NHWC float tensor; arguments as mf.nn.max_pool. With "
        "\"SAME\" padding a window at the border averages only the elements inside the input, "
        "as TensorFlow.",
    .example =
        "x = mf.reshape(mf.range(1, 17, 1, {dtype = \"float32\"}), {1, 4, 4, 1})\n"
        "mf.nn.avg_pool(x, 2, 2, \"VALID\")               --> {{{{3.5}, {5.5}}, {{11.5}, "
        "{13.5}}}}");
POOL_OP(mf_desc_max_pool_grad, "MaxPoolGrad", "max_pool_grad", 3, pool_grad_infer,
        max_pool_grad_forward, mf_max_pool_grad_backward, NULL, NULL, NULL);
POOL_OP(mf_desc_avg_pool_grad, "AvgPoolGrad", "avg_pool_grad", 2, pool_grad_infer,
        avg_pool_grad_forward, mf_avg_pool_grad_backward, NULL, NULL, NULL);
POOL_OP(mf_desc_max_pool_grad_grad, "MaxPoolGradGrad", "max_pool_grad_grad", 3,
        pool_grad_grad_infer, max_pool_grad_grad_forward, mf_max_pool_grad_grad_backward, NULL,
        NULL, NULL);

static MfStatus pool_call(MfOpId op, MfTensor *x, const int64_t ksize[4],
                          const int64_t strides[4], MfPadding padding, MfTensor **out)
{
    MfAttrs a = mf_attrs_default();
    memcpy(a.ksize, ksize, sizeof a.ksize);
    memcpy(a.strides, strides, sizeof a.strides);
    a.padding = padding;
    return mf_op1(op, 1, &x, &a, out);
}

MfStatus mf_max_pool(MfTensor *x, const int64_t ksize[4], const int64_t strides[4], MfPadding padding,
                     MfTensor **out)
{
    return pool_call(MF_OP_MAX_POOL, x, ksize, strides, padding, out);
}

MfStatus mf_avg_pool(MfTensor *x, const int64_t ksize[4], const int64_t strides[4], MfPadding padding,
                     MfTensor **out)
{
    return pool_call(MF_OP_AVG_POOL, x, ksize, strides, padding, out);
}
