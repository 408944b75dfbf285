/* depthwise.c — depthwise 2-D convolution, TensorFlow's
 * DepthwiseConv2dNative and its two backprops
 * DepthwiseConv2dNativeBackpropInput / DepthwiseConv2dNativeBackpropFilter,
 * float32 and float64, with their gradients and descriptors.
 *
 * Layouts as TensorFlow: input NHWC [N, H, W, C], filter [kh, kw, C, M]
 * (M the depth multiplier), output NHWC [N, Ho, Wo, C * M] where output
 * channel c * M + m is input channel c convolved with filter[:, :, c, m].
 * Attributes as Conv2D's (conv.h): 'strides' and 'dilations' in NHWC order
 * (1 on the batch and channel axes; 0 means 1), 'padding' (MfPadding:
 * TensorFlow's output sizes and padding split, window.h), and for the
 * backprops 'ints[0..3]': input_sizes (NHWC; a -1 batch or channel entry
 * is taken from out_backprop and the filter, so graph gradients work with
 * an unknown batch) or filter_sizes ([kh, kw, C, M]).
 *
 * The kernels are direct loops, not per-channel Conv2D calls: each output
 * pixel reads its taps' input rows of C channels and the filter rows of
 * C * M, contiguous, so the inner loop runs over channels. The forward
 * pass and the input backprop gather (each output row is written by one
 * chunk), split over rows with mf_parallel_for; the filter backprop is
 * split over filter taps. The three ops are bilinear and each one's
 * gradients are the other two (as conv_grad.c):
 *   y  = Dw(x, w):          dx = BackpropInput(shape x, w, dy), dw = BackpropFilter(x, shape w, dy)
 *   dx = BPInput(w, d):     dw = BackpropFilter(g, shape w, d), dd = Dw(g, w)
 *   dw = BPFilter(x, d):    dx = BackpropInput(shape x, g, d),  dd = Dw(x, g).
 * The Lua face mf.nn.depthwise_conv2d (NCHW by transposing around the op)
 * is bound from the descriptor's schema. */
#include <string.h>

#include "../grad.h"
#include "../parallel.h"
#include "common.h"
#include "conv.h"
#include "depthwise.h"
#include "view.h"

#define SHAPE_BUF 160

/* One depthwise convolution: MfConvGeom with O = C * M, and M. */
typedef struct DwGeom {
    MfConvGeom g;
    int64_t M;
} DwGeom;

/* The input and filter shapes of the call (see the file comment). */
static void dw_shapes(const MfOpCall *c, int64_t xs[4], int64_t ws[4])
{
    const MfTensor *a = c->inputs[0], *b = c->inputs[1];
    const int64_t *at = c->attrs->ints;
    for (int i = 0; i < 4; i++) {
        xs[i] = c->op == MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT ? at[i] : a->shape[i];
        ws[i] = c->op == MF_OP_DEPTHWISE_CONV2D ? b->shape[i]
                : c->op == MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT ? a->shape[i] : at[i];
    }
    if (c->op == MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT) {
        xs[0] = xs[0] < 0 ? b->shape[0] : xs[0];
        xs[3] = xs[3] < 0 ? a->shape[2] : xs[3];
    } else if (c->op == MF_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER) {
        ws[2] = ws[2] < 0 ? a->shape[3] : ws[2];
        ws[3] = ws[3] < 0 && ws[2] > 0 && b->shape[3] >= 0 ? b->shape[3] / ws[2] : ws[3];
    }
}

static DwGeom dw_geom(const MfOpCall *c)
{
    int64_t xs[4], ws[4];
    dw_shapes(c, xs, ws);
    const MfAttrs *a = c->attrs;
    DwGeom d = {.g = {.N = xs[0], .H = xs[1], .W = xs[2], .C = xs[3], .kh = ws[0],
                      .kw = ws[1], .sh = mf_window_one_if_zero(a->strides[1]),
                      .sw = mf_window_one_if_zero(a->strides[2]),
                      .dh = mf_window_one_if_zero(a->dilations[1]),
                      .dw = mf_window_one_if_zero(a->dilations[2])},
                .M = ws[3]};
    d.g.O = xs[3] >= 0 && ws[3] >= 0 ? xs[3] * ws[3] : -1;
    mf_window_axis(a->padding, d.g.H, d.g.kh, d.g.sh, d.g.dh, &d.g.Ho, &d.g.pad_top, NULL);
    mf_window_axis(a->padding, d.g.W, d.g.kw, d.g.sw, d.g.dw, &d.g.Wo, &d.g.pad_left, NULL);
    return d;
}

/* ---- checks -------------------------------------------------------------------- */

static MfStatus check_attrs(const MfOpCall *c)
{
    const MfAttrs *a = c->attrs;
    MfStatus st = mf_window_check_padding(op_api(c), a->padding);
    if (st != MF_OK)
        return st;
    if (c->op != MF_OP_DEPTHWISE_CONV2D && a->nints != 4)
        return mf_err_set(MF_EARG, "%s: expected 4 %s, got %d", op_api(c),
                          c->op == MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT
                              ? "input_sizes (N, H, W, C)" : "filter_sizes (kh, kw, C, M)",
                          a->nints);
    st = mf_window_check_steps(op_api(c), a->strides, "strides", MF_NHWC);
    return st != MF_OK ? st : mf_window_check_steps(op_api(c), a->dilations, "dilations", MF_NHWC);
}

static MfStatus check_inputs(const MfOpCall *c)
{
    static const char *const what[3][2] = {
        {"an input", "a filter"}, {"a filter", "out_backprop"}, {"an input", "out_backprop"}};
    static const char *const layout[3][2] = {
        {"NHWC", "kh, kw, C, M"}, {"kh, kw, C, M", "NHWC"}, {"NHWC", "NHWC"}};
    int k = c->op == MF_OP_DEPTHWISE_CONV2D ? 0
            : c->op == MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT ? 1 : 2;
    MfStatus st = MF_OK;
    for (int i = 0; i < 2 && st == MF_OK; i++)
        st = mf_window_check_rank4(op_api(c), c->inputs[i], what[k][i], layout[k][i]);
    if (st == MF_OK)
        st = mf_check_same_dtype(c, c->inputs[0], c->inputs[1]);
    if (st == MF_OK)
        st = mf_check_dtype(c, c->inputs[0], MF_FLOATS, "float32 or float64");
    return st != MF_OK ? st : check_attrs(c);
}

static bool same(int64_t a, int64_t b)
{
    return a < 0 || b < 0 || a == b;
}

/* Channels agree, the filter is at least 1x1 and, with VALID padding, fits. */
static MfStatus check_fit(const MfOpCall *c, const DwGeom *d, const int64_t *xs,
                          const int64_t *ws)
{
    const MfConvGeom *g = &d->g;
    char sx[SHAPE_BUF], sw[SHAPE_BUF];
    if (!same(xs[3], ws[2]))
        return mf_err_set(MF_ESHAPE, "%s: the input has %lld channels but the filter expects "
                          "%lld (input %s NHWC, filter %s [kh, kw, C, M])", op_api(c),
                          (long long)xs[3], (long long)ws[2], mf_shape_str(4, xs, sx, sizeof sx),
                          mf_shape_str(4, ws, sw, sizeof sw));
    if ((g->kh >= 0 && g->kh < 1) || (g->kw >= 0 && g->kw < 1) || (d->M >= 0 && d->M < 1))
        return mf_err_set(MF_ESHAPE, "%s: the filter's height, width and depth multiplier must "
                          "be at least 1, got filter %s", op_api(c),
                          mf_shape_str(4, ws, sw, sizeof sw));
    return mf_window_check_fit(op_api(c), c->attrs->padding, (int64_t[2]){g->H, g->W},
                               (int64_t[2]){g->kh, g->kw}, (int64_t[2]){g->dh, g->dw});
}

/* out_backprop has the shape the forward op would give. */
static MfStatus check_dy(const MfOpCall *c, const DwGeom *d, const MfTensor *dy)
{
    const MfConvGeom *g = &d->g;
    int64_t want[4] = {g->N, g->Ho, g->Wo, g->O};
    bool ok = true;
    for (int i = 0; i < 4; i++)
        ok = ok && same(dy->shape[i], want[i]);
    if (ok)
        return MF_OK;
    char sd[SHAPE_BUF], sw[SHAPE_BUF];
    return mf_err_set(MF_ESHAPE, "%s: out_backprop has shape %s, but the depthwise convolution "
                      "of an input (%lld,%lld,%lld,%lld) with a (%lld,%lld,%lld,%lld) filter "
                      "gives %s with these strides, dilations and %s padding", op_api(c),
                      mf_shape_str(4, dy->shape, sd, sizeof sd), (long long)g->N,
                      (long long)g->H, (long long)g->W, (long long)g->C, (long long)g->kh,
                      (long long)g->kw, (long long)g->C, (long long)d->M,
                      mf_shape_str(4, want, sw, sizeof sw),
                      mf_padding_names[c->attrs->padding]);
}

static MfStatus dw_infer(MfOpCall *c)
{
    MfStatus st = check_inputs(c);
    if (st != MF_OK)
        return st;
    int64_t xs[4], ws[4];
    dw_shapes(c, xs, ws);
    DwGeom d = dw_geom(c);
    st = check_fit(c, &d, xs, ws);
    if (st == MF_OK && c->op != MF_OP_DEPTHWISE_CONV2D)
        st = check_dy(c, &d, c->inputs[1]);
    if (st != MF_OK)
        return st;
    const int64_t *o = c->op == MF_OP_DEPTHWISE_CONV2D ? (int64_t[4]){d.g.N, d.g.Ho, d.g.Wo,
                                                                       d.g.O}
                       : c->op == MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT ? xs : ws;
    c->noutputs = 1;
    c->out[0].dtype = c->inputs[0]->dtype;
    c->out[0].rank = 4;
    memcpy(c->out[0].shape, o, 4 * sizeof *o);
    return MF_OK;
}

/* ---- kernels --------------------------------------------------------------------
 * One job per call: the geometry and three contiguous buffers. Each kernel
 * is written once per dtype by one macro line below (dw_forward_f32, ...). */
typedef struct DwJob {
    DwGeom d;
    const void *a, *b; /* forward: x, w; input backprop: w, dy; filter backprop: x, dy */
    void *out;
} DwJob;

/* Forward, rows [b, e) of the N * Ho output rows: y[n, oh, ow, :] is the
 * sum over taps of x[n, ih, iw, c] * w[i, j, c, m]. */
#define DW_FORWARD(T, NAME)                                                                  \
    static void NAME(void *ctx, int64_t b, int64_t e)                                        \
    {                                                                                        \
        const DwJob *j = ctx;                                                                \
        const MfConvGeom *g = &j->d.g;                                                       \
        const int64_t M = j->d.M, C = g->C, CM = g->O;                                       \
        const T *x = j->a, *w = j->b;                                                        \
        for (int64_t r = b; r < e; r++) {                                                    \
            int64_t n = r / g->Ho, oh = r % g->Ho;                                           \
            T *y = (T *)j->out + r * g->Wo * CM;                                             \
            memset(y, 0, (size_t)(g->Wo * CM) * sizeof(T));                                 \
            for (int64_t i = 0; i < g->kh; i++) {                                            \
                int64_t ih = oh * g->sh - g->pad_top + i * g->dh;                            \
                if (ih < 0 || ih >= g->H)                                                    \
                    continue;                                                                \
                for (int64_t ow = 0; ow < g->Wo; ow++)                                       \
                    for (int64_t jj = 0; jj < g->kw; jj++) {                                 \
                        int64_t iw = ow * g->sw - g->pad_left + jj * g->dw;                  \
                        if (iw < 0 || iw >= g->W)                                            \
                            continue;                                                        \
                        const T *xp = x + ((n * g->H + ih) * g->W + iw) * C;                 \
                        const T *wp = w + (i * g->kw + jj) * CM;                             \
                        T *yp = y + ow * CM;                                                 \
                        for (int64_t c = 0; c < C; c++)                                      \
                            for (int64_t m = 0; m < M; m++)                                  \
                                yp[c * M + m] += xp[c] * wp[c * M + m];                      \
                    }                                                                        \
            }                                                                                \
        }                                                                                    \
    }

/* Input backprop, rows [b, e) of the N * H rows of dx: each dx pixel
 * gathers the output pixels whose taps read it. */
#define DW_BACKPROP_INPUT(T, NAME)                                                           \
    static void NAME(void *ctx, int64_t b, int64_t e)                                        \
    {                                                                                        \
        const DwJob *j = ctx;                                                                \
        const MfConvGeom *g = &j->d.g;                                                       \
        const int64_t M = j->d.M, C = g->C, CM = g->O;                                       \
        const T *w = j->a, *dy = j->b;                                                       \
        for (int64_t r = b; r < e; r++) {                                                    \
            int64_t n = r / g->H, ih = r % g->H;                                             \
            T *dx = (T *)j->out + r * g->W * C;                                              \
            memset(dx, 0, (size_t)(g->W * C) * sizeof(T));                                   \
            for (int64_t i = 0; i < g->kh; i++) {                                            \
                int64_t t = ih + g->pad_top - i * g->dh, oh = t / g->sh;                     \
                if (t < 0 || t % g->sh != 0 || oh >= g->Ho)                                  \
                    continue;                                                                \
                for (int64_t iw = 0; iw < g->W; iw++)                                        \
                    for (int64_t jj = 0; jj < g->kw; jj++) {                                 \
                        int64_t u = iw + g->pad_left - jj * g->dw, ow = u / g->sw;           \
                        if (u < 0 || u % g->sw != 0 || ow >= g->Wo)                          \
                            continue;                                                        \
                        const T *dp = dy + ((n * g->Ho + oh) * g->Wo + ow) * CM;             \
                        const T *wp = w + (i * g->kw + jj) * CM;                             \
                        T *xp = dx + iw * C;                                                 \
                        for (int64_t c = 0; c < C; c++)                                      \
                            for (int64_t m = 0; m < M; m++)                                  \
                                xp[c] += dp[c * M + m] * wp[c * M + m];                      \
                    }                                                                        \
            }                                                                                \
        }                                                                                    \
    }

/* Filter backprop, taps [b, e) of the kh * kw taps: dw[i, j, :] sums
 * x[n, ih, iw, c] * dy[n, oh, ow, c * M + m] over every output pixel. */
#define DW_BACKPROP_FILTER(T, NAME)                                                          \
    static void NAME(void *ctx, int64_t b, int64_t e)                                        \
    {                                                                                        \
        const DwJob *j = ctx;                                                                \
        const MfConvGeom *g = &j->d.g;                                                       \
        const int64_t M = j->d.M, C = g->C, CM = g->O;                                       \
        const T *x = j->a, *dy = j->b;                                                       \
        for (int64_t tap = b; tap < e; tap++) {                                              \
            int64_t i = tap / g->kw, jj = tap % g->kw;                                       \
            T *dw = (T *)j->out + tap * CM;                                                  \
            memset(dw, 0, (size_t)CM * sizeof(T));                                           \
            for (int64_t n = 0; n < g->N; n++)                                               \
                for (int64_t oh = 0; oh < g->Ho; oh++) {                                     \
                    int64_t ih = oh * g->sh - g->pad_top + i * g->dh;                        \
                    if (ih < 0 || ih >= g->H)                                                \
                        continue;                                                            \
                    for (int64_t ow = 0; ow < g->Wo; ow++) {                                 \
                        int64_t iw = ow * g->sw - g->pad_left + jj * g->dw;                  \
                        if (iw < 0 || iw >= g->W)                                            \
                            continue;                                                        \
                        const T *xp = x + ((n * g->H + ih) * g->W + iw) * C;                 \
                        const T *dp = dy + ((n * g->Ho + oh) * g->Wo + ow) * CM;             \
                        for (int64_t c = 0; c < C; c++)                                      \
                            for (int64_t m = 0; m < M; m++)                                  \
                                dw[c * M + m] += xp[c] * dp[c * M + m];                      \
                    }                                                                        \
                }                                                                            \
        }                                                                                    \
    }

DW_FORWARD(float, dw_forward_f32)
DW_FORWARD(double, dw_forward_f64)
DW_BACKPROP_INPUT(float, dw_backprop_input_f32)
DW_BACKPROP_INPUT(double, dw_backprop_input_f64)
DW_BACKPROP_FILTER(float, dw_backprop_filter_f32)
DW_BACKPROP_FILTER(double, dw_backprop_filter_f64)

/* Runs the kernel pair 'f32' / 'f64' over 'n' units of the call's inputs. */
static MfStatus dw_run(const MfOpCall *c, MfTensor *out, int64_t n, MfParallelFn f32,
                       MfParallelFn f64)
{
    MfTensor *a = mf_tensor_contiguous(c->inputs[0]);
    MfTensor *b = a ? mf_tensor_contiguous(c->inputs[1]) : NULL;
    if (!b) {
        mf_tensor_release(a);
        return mf_err_set(MF_ENOMEM, "%s: out of memory", op_api(c));
    }
    DwJob job = {dw_geom(c), mf_tensor_data(a), mf_tensor_data(b), mf_tensor_data(out)};
    /* a chunk of about 16K multiply-adds pays for a thread's wake-up */
    int64_t per = job.d.g.kh * job.d.g.kw * job.d.g.O * (job.d.g.Wo > 0 ? job.d.g.Wo : 1);
    int64_t min_chunk = per > 0 && per < 16384 ? 16384 / per : 1;
    mf_parallel_for(n, min_chunk, out->dtype == MF_FLOAT32 ? f32 : f64, &job);
    mf_tensor_release(a);
    mf_tensor_release(b);
    return mf_interrupted ? mf_err_set(MF_EINTR, "%s: interrupted", op_api(c)) : MF_OK;
}

static MfStatus dw_forward(const MfOpCall *c, MfTensor **outs)
{
    DwGeom d = dw_geom(c);
    return dw_run(c, outs[0], d.g.N * d.g.Ho, dw_forward_f32, dw_forward_f64);
}

static MfStatus dw_backprop_input_forward(const MfOpCall *c, MfTensor **outs)
{
    DwGeom d = dw_geom(c);
    return dw_run(c, outs[0], d.g.N * d.g.H, dw_backprop_input_f32, dw_backprop_input_f64);
}

static MfStatus dw_backprop_filter_forward(const MfOpCall *c, MfTensor **outs)
{
    DwGeom d = dw_geom(c);
    return dw_run(c, outs[0], d.g.kh * d.g.kw, dw_backprop_filter_f32, dw_backprop_filter_f64);
}

/* 2 * N*Ho*Wo * kh*kw * C*M FLOPs for each of the three. */
static MfCost dw_cost(const MfOpCall *c)
{
    DwGeom d = dw_geom(c);
    MfCost cost = mf_cost_elementwise(c);
    double taps = (double)d.g.N * (double)d.g.Ho * (double)d.g.Wo * (double)d.g.kh *
                  (double)d.g.kw;
    cost.flops = taps > 0 && d.g.O > 0 ? 2.0 * taps * (double)d.g.O : 0;
    return cost;
}

/* ---- gradients ------------------------------------------------------------------ */

/* Calls 'op' on (a, b) with the forward call's window attributes and, for
 * the backprops, the shape of 'like' as sizes (its unknown batch stays -1:
 * the op takes it from out_backprop at run time). Skipped when not needed. */
static MfStatus dw_call(const MfGradCall *g, int k, MfOpId op, MfTensor *a, MfTensor *b,
                        const MfTensor *like, MfTensor **out)
{
    *out = NULL;
    if (!mf_grad_needs(g, k))
        return MF_OK;
    MfAttrs at = *g->call->attrs;
    at.nints = like ? 4 : 0;
    for (int i = 0; like && i < 4; i++)
        at.ints[i] = like->shape[i];
    MfTensor *in[2] = {a, b};
    return mf_op1(op, 2, in, &at, out);
}

/* Both gradients of one of the three ops: the one of input 0 by 'op0' on
 * (a0, b0) shaped like 'like0', the one of input 1 by 'op1' on (a1, b1). */
static MfStatus dw_grads(const MfGradCall *g, MfTensor **dinputs, MfOpId op0, MfTensor *a0,
                         MfTensor *b0, const MfTensor *like0, MfOpId op1, MfTensor *a1,
                         MfTensor *b1, const MfTensor *like1)
{
    MfStatus st = dw_call(g, 0, op0, a0, b0, like0, &dinputs[0]);
    if (st == MF_OK)
        st = dw_call(g, 1, op1, a1, b1, like1, &dinputs[1]);
    if (st != MF_OK) {
        mf_tensor_release(dinputs[0]);
        dinputs[0] = NULL;
    }
    return st;
}

static MfStatus dw_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = g->call->inputs[0], *w = g->call->inputs[1], *dy = g->doutputs[0];
    return dw_grads(g, dinputs, MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT, w, dy, x,
                    MF_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER, x, dy, w);
}

/* Inputs (filter, out_backprop). */
static MfStatus dw_backprop_input_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *w = g->call->inputs[0], *d = g->call->inputs[1], *gz = g->doutputs[0];
    return dw_grads(g, dinputs, MF_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER, gz, d, w,
                    MF_OP_DEPTHWISE_CONV2D, gz, w, NULL);
}

/* Inputs (input, out_backprop). */
static MfStatus dw_backprop_filter_grad(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = g->call->inputs[0], *d = g->call->inputs[1], *gz = g->doutputs[0];
    return dw_grads(g, dinputs, MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT, gz, d, x,
                    MF_OP_DEPTHWISE_CONV2D, x, gz, NULL);
}

/* ---- the Lua face: NCHW by transposing -------------------------------------------- */

/* mf.nn.depthwise_conv2d: with data_format NCHW, the windows (given in
 * NCHW order) are reordered and the op runs between two Transposes, so
 * gradients flow. */
static MfStatus dw_entry(int n, MfTensor *const *in, const MfAttrs *a, MfTensor **outs,
                         int *nout)
{
    (void)n;
    *nout = 1;
    MfAttrs at = mf_window_nhwc_attrs(a, a->data_format);
    if (a->data_format != MF_NCHW)
        return mf_op1(MF_OP_DEPTHWISE_CONV2D, 2, in, &at, outs);
    MfTensor *xt = NULL, *y = NULL;
    MfStatus st = in[0]->rank == 4 ? mf_transpose(in[0], mf_nchw_to_nhwc, 4, &xt) : MF_OK;
    MfTensor *args[2] = {xt ? xt : in[0], in[1]};
    if (st == MF_OK)
        st = mf_op1(MF_OP_DEPTHWISE_CONV2D, 2, args, &at, &y);
    if (st == MF_OK)
        st = mf_transpose(y, mf_nhwc_to_nchw, 4, outs);
    else
        mf_err_suffix("data_format NCHW: shapes shown after transposing to NHWC");
    mf_tensor_release(xt);
    mf_tensor_release(y);
    return st;
}

/* Runs the backprop 'op' on (a, b) with sizes 'sizes' (input_sizes in the
 * caller's order, or filter_sizes); with 'nchw', transposes the activations
 * 'a'/'b' named by 'ta'/'tb' to NHWC and, with 'back', the result to NCHW. */
static MfStatus backprop_nchw(MfOpId op, MfTensor *a, MfTensor *b, const int64_t sizes[4],
                              const MfAttrs *at, bool nchw, MfTensor **out)
{
    MfAttrs n = mf_window_nhwc_attrs(at, nchw ? MF_NCHW : MF_NHWC);
    n.nints = 4;
    bool input = op == MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT;
    for (int i = 0; i < 4; i++)
        n.ints[i] = nchw && input ? sizes[mf_nchw_to_nhwc[i]] : sizes[i];
    MfTensor *t[3] = {0}, *args[2] = {a, b};
    MfStatus st = MF_OK;
    for (int k = input ? 1 : 0; nchw && k < 2 && st == MF_OK; k++)
        if (args[k]->rank == 4 && (st = mf_transpose(args[k], mf_nchw_to_nhwc, 4, &t[k])) == MF_OK)
            args[k] = t[k];
    if (st == MF_OK)
        st = mf_op1(op, 2, args, &n, nchw && input ? &t[2] : out);
    if (st == MF_OK && nchw && input)
        st = mf_transpose(t[2], mf_nhwc_to_nchw, 4, out);
    if (st != MF_OK && nchw)
        mf_err_suffix("data_format NCHW: shapes shown after transposing to NHWC");
    for (int k = 0; k < 3; k++)
        mf_tensor_release(t[k]);
    return st;
}

MfStatus mf_depthwise_conv2d_backprop_input(const int64_t sizes[4], MfTensor *w, MfTensor *dy,
                                            const MfAttrs *a, bool nchw, MfTensor **out)
{
    *out = NULL;
    return backprop_nchw(MF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT, w, dy, sizes, a, nchw, out);
}

MfStatus mf_depthwise_conv2d_backprop_filter(MfTensor *x, const int64_t sizes[4], MfTensor *dy,
                                             const MfAttrs *a, bool nchw, MfTensor **out)
{
    *out = NULL;
    return backprop_nchw(MF_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER, x, dy, sizes, a, nchw, out);
}

/* the forward op's attributes; the backprops add their sizes in front */
#define DW_ATTRS                                                                                \
    {"strides", MF_ATTR_WINDOW, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(strides), 0,  \
     0, NULL, NULL},                                                                            \
    {"padding", MF_ATTR_ENUM, MF_ATTR_POSITIONAL | MF_ATTR_REQUIRED, MF_ATTR_AT(padding), 0, 0, \
     mf_padding_names, NULL},                                                                   \
    {"data_format", MF_ATTR_ENUM, 0, MF_ATTR_AT(data_format), 0, 0, mf_data_format_names,       \
     NULL},                                                                                     \
    {"dilations", MF_ATTR_WINDOW, 0, MF_ATTR_AT(dilations), 0, 0, NULL, NULL}

static const MfAttrDef dw_attrs[] = {DW_ATTRS};

/* The backprops' sizes: a Lua array of 4 (or a 1-D int tensor) given among
 * the inputs, in the data format's order (filter_sizes [kh, kw, C, M]). */
static const MfAttrDef dw_input_attrs[] = {
    {"input_sizes", MF_ATTR_INTS, MF_ATTR_ARG | MF_ATTR_REQUIRED | MF_ATTR_SHAPE,
     MF_ATTR_AT(ints), MF_ATTR_AT(nints), 0, NULL, NULL},
    DW_ATTRS,
};
static const MfAttrDef dw_filter_attrs[] = {
    {"filter_sizes", MF_ATTR_INTS, MF_ATTR_ARG | MF_ATTR_REQUIRED | MF_ATTR_SHAPE,
     MF_ATTR_AT(ints), MF_ATTR_AT(nints), 0, NULL, NULL},
    DW_ATTRS,
};

/* Lua's backprops: NCHW by transposing around the NHWC op, the sizes from
 * the attributes. */
static MfStatus dw_backprop_input_entry(int n, MfTensor *const *in, const MfAttrs *a,
                                        MfTensor **outs, int *nout)
{
    (void)n;
    MfAttrs at;
    MfStatus st = mf_conv_entry_begin("depthwise_conv2d_backprop_input", "input_sizes", a, &at,
                                      nout);
    return st != MF_OK ? st : mf_depthwise_conv2d_backprop_input(a->ints, in[0], in[1], &at,
                                                                 a->data_format == MF_NCHW, outs);
}

static MfStatus dw_backprop_filter_entry(int n, MfTensor *const *in, const MfAttrs *a,
                                         MfTensor **outs, int *nout)
{
    (void)n;
    MfAttrs at;
    MfStatus st = mf_conv_entry_begin("depthwise_conv2d_backprop_filter", "filter_sizes", a, &at,
                                      nout);
    return st != MF_OK ? st : mf_depthwise_conv2d_backprop_filter(in[0], a->ints, in[1], &at,
                                                                  a->data_format == MF_NCHW, outs);
}

const MfOpDesc mf_desc_depthwise_conv2d = {
    .name = "DepthwiseConv2dNative", .api = "depthwise_conv2d", .arity = 2, .infer = dw_infer,
    .forward = dw_forward, .backward = dw_grad, .cost = dw_cost, .attrs = dw_attrs,
    .nattrs = MF_NATTRS(dw_attrs), .lua = "nn.depthwise_conv2d", .inputs = "input, filter",
    .entry = dw_entry,
    .summary = "depthwise 2-D convolution: each input channel with its own M filters "
               "(filter [kh, kw, C, M], output C * M channels)",
    .topic = "nn",
    .details =
        "Depthwise 2-D convolution as TensorFlow's DepthwiseConv2dNative: each input channel c "
        "is convolved with its own filters filter[:, :, c, m], m = 1..M (the depth multiplier); "
        "input NHWC [N, H, W, C] (or NCHW), filter [kh, kw, C, M], output C * M channels "
        "ordered c * M + m. Strides, dilations, padding and data_format as mf.nn.conv2d. "
        "float32 or float64, a direct kernel (not a loop of conv2d calls) split over rows; "
        "differentiable (DepthwiseConv2dNativeBackpropInput / BackpropFilter), also twice.",
    .example =
        "x = mf.ones{1, 3, 3, 2}\n"
        "w = mf.ones{2, 2, 2, 3}\n"
        "mf.nn.depthwise_conv2d(x, w, 1, \"VALID\").shape   --> {1, 2, 2, 6}\n"
        "mf.nn.depthwise_conv2d(x, w, 2, \"VALID\")         --> {{{{4, 4, 4, 4, 4, 4}}}}",
};

/* The sizes come first, as Lua arrays; in the op they are attributes, as
 * Conv2D's backprops. */
const MfOpDesc mf_desc_depthwise_conv2d_backprop_input = {
    .name = "DepthwiseConv2dNativeBackpropInput", .api = "depthwise_conv2d_backprop_input",
    .arity = 2, .lua = "nn.depthwise_conv2d_backprop_input",
    .infer = dw_infer, .forward = dw_backprop_input_forward,
    .backward = dw_backprop_input_grad, .cost = dw_cost, .attrs = dw_input_attrs,
    .nattrs = MF_NATTRS(dw_input_attrs), .inputs = "input_sizes, filter, out_backprop",
    .entry = dw_backprop_input_entry,
    .summary = "the gradient of depthwise_conv2d with respect to its input",
    .topic = "nn",
    .details =
        "The gradient of mf.nn.depthwise_conv2d with respect to its input, of shape "
        "'input_sizes' (4 sizes in the data format's order), given the filter [kh, kw, C, M] "
        "and the gradient of the output (C * M channels); options as mf.nn.depthwise_conv2d. "
        "TensorFlow's DepthwiseConv2dNativeBackpropInput: a direct kernel, each input pixel "
        "gathering the output pixels that read it.",
    .example =
        "w = mf.ones{2, 2, 1, 1}\n"
        "dy = mf.ones{1, 2, 2, 1}\n"
        "mf.nn.depthwise_conv2d_backprop_input({1, 3, 3, 1}, w, dy, 1, \"VALID\")   "
        "--> {{{{1}, {2}, {1}}, {{2}, {4}, {2}}, {{1}, {2}, {1}}}}",
};

const MfOpDesc mf_desc_depthwise_conv2d_backprop_filter = {
    .name = "DepthwiseConv2dNativeBackpropFilter", .api = "depthwise_conv2d_backprop_filter",
    .arity = 2, .lua = "nn.depthwise_conv2d_backprop_filter",
    .infer = dw_infer, .forward = dw_backprop_filter_forward,
    .backward = dw_backprop_filter_grad, .cost = dw_cost, .attrs = dw_filter_attrs,
    .nattrs = MF_NATTRS(dw_filter_attrs), .inputs = "input, filter_sizes, out_backprop",
    .entry = dw_backprop_filter_entry,
    .summary = "the gradient of depthwise_conv2d with respect to its filter",
    .topic = "nn",
    .details =
        "The gradient of mf.nn.depthwise_conv2d with respect to its filter, of shape "
        "'filter_sizes' ([kh, kw, C, M]), given the input and the gradient of the output; "
        "options as mf.nn.depthwise_conv2d. TensorFlow's DepthwiseConv2dNativeBackpropFilter: "
        "a direct kernel split over the filter taps.",
    .example =
        "x = mf.ones{1, 3, 3, 2}\n"
        "dy = mf.ones{1, 2, 2, 2}\n"
        "mf.nn.depthwise_conv2d_backprop_filter(x, {2, 2, 2, 1}, dy, 1, \"VALID\")  "
        "--> {{{{4}, {4}}, {{4}, {4}}}, {{{4}, {4}}, {{4}, {4}}}}",
};
