/* layer_norm.c — LayerNorm(x) = (x - mean) / sqrt(var + epsilon) over the
 * last axis (the biased variance, as Keras's LayerNormalization and
 * torch.nn.functional.layer_norm), and its gradient op LayerNormGrad(x, dy):
 *   dx = rstd * (dy - mean(dy) - xhat * mean(dy * xhat)),
 *   xhat = (x - mean) * rstd, rstd = 1 / sqrt(var + epsilon),
 * the means over the last axis. A layer's scale and offset are a Mul and
 * an Add after it, whose gradients sum over the leading axes (reduce_walk.c's
 * column pass). (mf.layers.LayerNormalization still composes the formula
 * from reductions and elementwise ops: ONNX export has no LayerNorm
 * mapping yet.)
 *
 * Each row is read once from memory and written once: its mean (the row
 * sum of reduce_walk.h: at most 8 terms in float, then double), the squares
 * of the deviations summed the same way (float32: as they are made, with
 * the bits of writing them out first; float64: written to the output), then
 * the output; the later passes find the row in cache. LayerNormGrad sums a
 * float32 row of x and of dy together (mf_sum_rows2_f32), and sums its first
 * dx as it writes it (mf_scaled_dev_row_f32). The roundings are the
 * composition's (Mean, Sub, Square, Mean, Add, Rsqrt, Mul in float32), so
 * the two agree to float32 rounding. Rows are split over the worker pool; a
 * row's result does not depend on the thread count.
 *
 * LayerNormGrad's own gradient: its Jacobian in dy is LayerNorm's (which is
 * symmetric), so d dy = LayerNormGrad(x, g); d x is written with ops
 * (ln_grad_x below), so higher-order gradients work. */
#include <assert.h>
#include <math.h>

#include "nn.h"

#include "../parallel.h"
#include "common.h"
#include "grads_math.h"
#include "reduce.h"
#include "reduce_walk.h"

/* ---- row kernels ---------------------------------------------------------------- */

/* 1 / sqrt(var + eps), with var the row's mean square deviation. */
#define RSTD(T, var, eps) ((T)(1 / sqrt((double)((var) + (T)(eps)))))

/* The mean and 1 / sqrt(var + eps) of a row. A float32 row's squared
 * deviations are summed as they are made (mf_sqdev_row_f32: the bits of
 * writing them out and summing them); a float64 row's are written to 'tmp',
 * a row of scratch. */
static void stats_f32(const float *x, float *tmp, int64_t n, double eps, float *mean,
                      float *rstd)
{
    (void)tmp;
    float m = (float)(mf_sum_row_f32(x, n) / (double)n);
    float var = (float)(mf_sqdev_row_f32(x, n, m) / (double)n);
    *mean = m;
    *rstd = RSTD(float, var, eps);
}

static void stats_f64(const double *x, double *tmp, int64_t n, double eps, double *mean,
                      double *rstd)
{
    double m = mf_sum_row_f64(x, n) / (double)n;
    for (int64_t i = 0; i < n; i++) {
        double d = x[i] - m;
        tmp[i] = d * d;
    }
    double var = mf_sum_row_f64(tmp, n) / (double)n;
    *mean = m;
    *rstd = RSTD(double, var, eps);
}

/* A gradient row's mean and rstd of x and mean of dy; a float32 row sums
 * x and dy together (mf_sum_rows2_f32, the same bits). */
static void grad_stats_f32(const float *x, const float *dy, float *tmp, int64_t n, double eps,
                           float *mean, float *rstd, float *mean_dy)
{
    (void)tmp;
    double sx, sdy;
    mf_sum_rows2_f32(x, dy, n, &sx, &sdy);
    float m = (float)(sx / (double)n);
    float var = (float)(mf_sqdev_row_f32(x, n, m) / (double)n);
    *mean = m;
    *rstd = RSTD(float, var, eps);
    *mean_dy = (float)(sdy / (double)n);
}

static void grad_stats_f64(const double *x, const double *dy, double *tmp, int64_t n,
                           double eps, double *mean, double *rstd, double *mean_dy)
{
    stats_f64(x, tmp, n, eps, mean, rstd);
    *mean_dy = mf_sum_row_f64(dy, n) / (double)n;
}

/* dx = dy * ((x - m) * r) and its sum: a float32 row makes and sums it in
 * one pass (mf_scaled_dev_row_f32, the bits of writing it and summing). */
static double scaled_dev_sum_f32(const float *x, const float *dy, float *dx, int64_t n, float m,
                                 float r)
{
    return mf_scaled_dev_row_f32(x, dy, dx, n, m, r);
}

static double scaled_dev_sum_f64(const double *x, const double *dy, double *dx, int64_t n,
                                 double m, double r)
{
    for (int64_t i = 0; i < n; i++)
        dx[i] = dy[i] * ((x[i] - m) * r);
    return mf_sum_row_f64(dx, n);
}

#define LN_ROWS(T, SUF)                                                                 \
    static void ln_row_##SUF(const T *x, T *y, int64_t n, double eps)                   \
    {                                                                                   \
        T m, r;                                                                         \
        stats_##SUF(x, y, n, eps, &m, &r);                                              \
        for (int64_t i = 0; i < n; i++)                                                 \
            y[i] = (x[i] - m) * r;                                                      \
    }                                                                                   \
    static void ln_grad_row_##SUF(const T *x, const T *dy, T *dx, int64_t n, double eps) \
    {                                                                                   \
        T m, r, mdy;                                                                    \
        grad_stats_##SUF(x, dy, dx, n, eps, &m, &r, &mdy);                              \
        T mdx = (T)(scaled_dev_sum_##SUF(x, dy, dx, n, m, r) / (double)n);              \
        for (int64_t i = 0; i < n; i++)                                                 \
            dx[i] = r * (dy[i] - mdy - (x[i] - m) * r * mdx);                           \
    }

LN_ROWS(float, f32)
LN_ROWS(double, f64)

typedef struct LnJob {
    MfDType dtype;
    const void *x, *dy; /* dy NULL: the forward */
    void *out;
    int64_t n;
    double eps;
} LnJob;

static void ln_rows(void *ctx, int64_t b, int64_t e)
{
    const LnJob *j = ctx;
    size_t es = mf_dtype_size(j->dtype);
    for (int64_t r = b; r < e; r++) {
        size_t at = (size_t)(r * j->n) * es;
        const char *x = (const char *)j->x + at, *dy = j->dy ? (const char *)j->dy + at : NULL;
        char *out = (char *)j->out + at;
        if (j->dtype == MF_FLOAT32 && dy)
            ln_grad_row_f32((const float *)x, (const float *)dy, (float *)out, j->n, j->eps);
        else if (j->dtype == MF_FLOAT32)
            ln_row_f32((const float *)x, (float *)out, j->n, j->eps);
        else if (dy)
            ln_grad_row_f64((const double *)x, (const double *)dy, (double *)out, j->n, j->eps);
        else
            ln_row_f64((const double *)x, (double *)out, j->n, j->eps);
    }
}

/* Elements per thread below which a wake-up costs more than it saves. */
#define LN_CHUNK 32768

static MfStatus ln_run(const MfOpCall *c, MfTensor *out)
{
    MfTensor *x = mf_tensor_contiguous(c->inputs[0]);
    MfTensor *dy = x && c->ninputs > 1 ? mf_tensor_contiguous(c->inputs[1]) : NULL;
    if (!x || (c->ninputs > 1 && !dy)) {
        mf_tensor_release(x);
        return MF_ENOMEM;
    }
    int64_t n = x->shape[x->rank - 1], rows = n > 0 ? mf_tensor_numel(x) / n : 0;
    LnJob j = {x->dtype, mf_tensor_data(x), dy ? mf_tensor_data(dy) : NULL, mf_tensor_data(out),
               n, c->attrs->scalar[0]};
    mf_parallel_for(rows, LN_CHUNK / (n + 1) + 1, ln_rows, &j);
    mf_tensor_release(x);
    mf_tensor_release(dy);
    return MF_OK;
}

/* ---- the ops ------------------------------------------------------------------------ */

static MfStatus check_input(MfOpCall *c, const MfTensor *x)
{
    MfStatus st = mf_check_dtype(c, x, MF_FLOATS, "a float dtype (float32 or float64; use "
                                 "mf.cast)");
    if (st == MF_OK && x->rank < 1)
        st = mf_err_set(MF_ESHAPE, "%s: expected a tensor of rank >= 1 (features last), got a "
                        "scalar", op_api(c));
    double eps = c->attrs->scalar[0];
    if (st == MF_OK && (!(eps >= 0) || isinf(eps)))
        st = mf_err_set(MF_EARG, "%s: epsilon must be a finite number >= 0, got %g", op_api(c),
                        eps);
    return st;
}

static MfStatus ln_infer(MfOpCall *c)
{
    MfStatus st = check_input(c, c->inputs[0]);
    if (st == MF_OK)
        mf_spec_like(c, c->inputs[0], c->inputs[0]->dtype);
    return st;
}

/* x and dy of one float dtype and one shape (a known dim wins). */
static MfStatus ln_grad_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0], *dy = c->inputs[1];
    MfStatus st = check_input(c, x);
    if (st == MF_OK)
        st = mf_check_same_dtype(c, x, dy);
    if (st != MF_OK)
        return st;
    bool same = dy->rank == x->rank;
    for (int i = 0; same && i < x->rank; i++)
        same = dy->shape[i] < 0 || x->shape[i] < 0 || dy->shape[i] == x->shape[i];
    if (!same)
        return mf_err_set(MF_ESHAPE, "%s: x and its gradient must have one shape", op_api(c));
    mf_spec_like(c, x, x->dtype);
    for (int i = 0; i < x->rank; i++)
        if (c->out[0].shape[i] < 0)
            c->out[0].shape[i] = dy->shape[i];
    return MF_OK;
}

static MfStatus ln_forward(const MfOpCall *c, MfTensor **outs)
{
    return ln_run(c, outs[0]);
}

static MfStatus ln_grad_op(MfTensor *x, MfTensor *dy, const MfAttrs *attrs, MfTensor **out)
{
    MfTensor *in[2] = {x, dy};
    return mf_op1(MF_OP_LAYER_NORM_GRAD, 2, in, attrs, out);
}

static MfStatus ln_backward(const MfGradCall *g, MfTensor **dinputs)
{
    return ln_grad_op(g->call->inputs[0], g->doutputs[0], g->call->attrs, &dinputs[0]);
}

/* A list of temporaries, released together; 'st' keeps the first error. */
#define MAX_TEMPS 32 /* ln_grad_x makes 28 */

typedef struct Temps {
    MfTensor *t[MAX_TEMPS];
    int n;
    MfStatus st;
} Temps;

/* 't', the result of an op call that returned 'st', kept as the next
 * temporary (callers make the call first: the order in which a call's
 * arguments are evaluated is unspecified). */
static MfTensor *keep(Temps *a, MfStatus st, MfTensor *t)
{
    if (a->st == MF_OK && st != MF_OK)
        a->st = st;
    assert(a->n < MAX_TEMPS);
    a->t[a->n++] = t;
    return t;
}

static MfTensor *bin(Temps *a, MfOpId op, MfTensor *x, MfTensor *y)
{
    MfTensor *out = NULL;
    MfStatus st = a->st == MF_OK ? mf_binary(op, x, y, &out) : a->st;
    return keep(a, st, out);
}

static MfTensor *mean_last(Temps *a, MfTensor *x)
{
    MfTensor *out = NULL;
    int64_t axis = -1;
    MfStatus st = a->st == MF_OK ? mf_reduce(MF_OP_MEAN, x, &axis, 1, true, &out) : a->st;
    return keep(a, st, out);
}

static MfTensor *constant(Temps *a, MfTensor *like, double v)
{
    MfTensor *out = NULL;
    MfStatus st = a->st == MF_OK ? mf_grad_const(like, v, &out) : a->st;
    return keep(a, st, out);
}

static MfTensor *unary(Temps *a, MfOpId op, MfTensor *x)
{
    MfTensor *out = NULL;
    MfStatus st = a->st == MF_OK ? mf_unary(op, x, &out) : a->st;
    return keep(a, st, out);
}

/* d x of <g, LayerNormGrad(x, dy)>, with the means M over the last axis,
 * a = dy - M(dy), c = M(a xhat), Gm = M(g a), Hm = M(g xhat):
 *   rstd^2 (xhat (3 c Hm - Gm) - Hm a - c (g - M(g)))
 * (the derivative of rstd (a - xhat c) in x, dotted with g). */
static MfStatus ln_grad_x(MfTensor *x, MfTensor *dy, MfTensor *g, double eps, MfTensor **out)
{
    Temps t = {.n = 0, .st = MF_OK};
    MfTensor *xc = bin(&t, MF_OP_SUB, x, mean_last(&t, x));
    MfTensor *var = mean_last(&t, bin(&t, MF_OP_MUL, xc, xc));
    MfTensor *r2 = unary(&t, MF_OP_RECIPROCAL, bin(&t, MF_OP_ADD, var, constant(&t, x, eps)));
    MfTensor *xhat = bin(&t, MF_OP_MUL, xc, unary(&t, MF_OP_SQRT, r2));
    MfTensor *ad = bin(&t, MF_OP_SUB, dy, mean_last(&t, dy));
    MfTensor *c = mean_last(&t, bin(&t, MF_OP_MUL, ad, xhat));
    MfTensor *gm = mean_last(&t, bin(&t, MF_OP_MUL, g, ad));
    MfTensor *hm = mean_last(&t, bin(&t, MF_OP_MUL, g, xhat));
    MfTensor *k = bin(&t, MF_OP_SUB, bin(&t, MF_OP_MUL, constant(&t, x, 3),
                                         bin(&t, MF_OP_MUL, c, hm)), gm);
    MfTensor *sum = bin(&t, MF_OP_SUB, bin(&t, MF_OP_MUL, xhat, k), bin(&t, MF_OP_MUL, hm, ad));
    MfTensor *gc = bin(&t, MF_OP_SUB, g, mean_last(&t, g));
    sum = bin(&t, MF_OP_SUB, sum, bin(&t, MF_OP_MUL, c, gc));
    *out = NULL;
    if (t.st == MF_OK)
        t.st = mf_binary(MF_OP_MUL, r2, sum, out);
    mf_grad_release_n(t.t, t.n);
    return t.st;
}

static MfStatus ln_grad_backward(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = g->call->inputs[0], *dy = g->call->inputs[1], *gg = g->doutputs[0];
    MfStatus st = MF_OK;
    if (mf_grad_needs(g, 1))
        st = ln_grad_op(x, gg, g->call->attrs, &dinputs[1]);
    if (st == MF_OK && mf_grad_needs(g, 0))
        st = ln_grad_x(x, dy, gg, g->call->attrs->scalar[0], &dinputs[0]);
    if (st != MF_OK)
        mf_grad_release_n(dinputs, 2);
    return st;
}

static MfStatus ln_grad_forward(const MfOpCall *c, MfTensor **outs)
{
    return ln_run(c, outs[0]);
}

/* Mean, deviations, variance, scale: about 8 FLOPs per element. */
static MfCost ln_cost(const MfOpCall *c)
{
    MfCost cost = mf_cost_elementwise(c);
    cost.flops *= 8;
    return cost;
}

static const MfAttrDef ln_attrs[] = {
    {"epsilon", MF_ATTR_FLOAT, 0, MF_ATTR_AT(scalar[0]), 0, 1e-3, NULL, NULL},
};

const MfOpDesc mf_desc_layer_norm = {
    .name = "LayerNorm", .api = "layer_norm", .arity = 1, .flags = 0,
    .infer = ln_infer, .forward = ln_forward, .backward = ln_backward, .cost = ln_cost,
    .attrs = ln_attrs, .nattrs = MF_NATTRS(ln_attrs), .lua = "nn.layer_norm", .inputs = "x",
    .summary = "(x - mean) / sqrt(variance + epsilon) over the last axis",
    .topic = "nn",
    .grad_note = "dx = LayerNormGrad(x, dy) = rstd * (dy - mean(dy) - xhat * mean(dy * xhat)), "
                 "one op",
    .details =
        "Layer normalization without scale and offset, over the last axis: (x - mean) / "
        "sqrt(variance + epsilon) with the biased variance, as "
        "torch.nn.functional.layer_norm(x, {n}) (whose eps defaults to 1e-5; here epsilon "
        "defaults to 1e-3, Keras's LayerNormalization's). One pass per row, the sums in "
        "double; float dtypes. Its gradient is one op "
        "(LayerNormGrad), whose gradient is written with ops, so second derivatives work.",
    .example =
        "mf.nn.layer_norm(mf.tensor{{1, 3}}, {epsilon = 0})     --> {{-1, 1}}",
};

const MfOpDesc mf_desc_layer_norm_grad = {
    .name = "LayerNormGrad", .api = "layer_norm_grad", .arity = 2, .flags = 0,
    .infer = ln_grad_infer, .forward = ln_grad_forward, .backward = ln_grad_backward,
    .cost = ln_cost, .attrs = ln_attrs, .nattrs = MF_NATTRS(ln_attrs),
};
