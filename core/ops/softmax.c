/* softmax.c — Softmax and LogSoftmax (numerically stable: the row maximum
 * is subtracted first) and their gradient ops, as TensorFlow's nn_grad.py
 * defines them:
 *   SoftmaxGrad(y, dy)    = (dy - sum(dy * y, axis)) * y      (y = softmax)
 *   LogSoftmaxGrad(y, dy) = dy - exp(y) * sum(dy, axis)       (y = log_softmax)
 * Each is one op, so a training step makes one pass over a row where the
 * composition made four or five ops with their temporaries; their own
 * gradients are written with ops (below), so higher-order gradients work.
 *
 * Kernels work on contiguous copies of their inputs, viewed as (outer, n,
 * inner) around the axis. Along the last axis (inner 1, the default) each
 * row is read once from memory and written once: its maximum (reduce_walk.h's
 * row maximum, in 8-float vectors), then exp(x - max) written to the output,
 * then the sum of those (reduce_walk.h's row sum: at most 8 terms in float,
 * then double), then the scale by 1 / sum (log-softmax: x - max - log(sum)),
 * the later passes finding the row in cache; float32 exponentials by
 * mf_expf_fast (fast_mathf.h, about 1 ulp; this file is compiled with
 * multiply-adds contracted into FMAs, which made rows of 64 1.2x faster),
 * float64 by libm. Rows are split over the worker pool; a row's result does not depend
 * on the thread count. Another axis (inner > 1) runs the same steps across
 * the inner elements, one output row of accumulators at a time. */
#include <math.h>
#include <stdatomic.h>

#include "nn.h"

#include "../alloc.h"
#include "../parallel.h"
#include "common.h"
#include "fast_mathf.h"
#include "grads_math.h"
#include "reduce.h"
#include "reduce_walk.h"

/* ---- row kernels (the last axis) ----------------------------------------------- */

static double max_f64(const double *x, int64_t n)
{
    double m = -INFINITY;
    for (int64_t i = 0; i < n; i++)
        m = x[i] > m ? x[i] : m;
    return m;
}

/* y = exp(x - m) for the row; a max of +-inf or NaN (the row holds one)
 * falls back to libm so that special values come out as the composition's
 * (a NaN anywhere in the row makes the whole row NaN, as before). */
static void exp_row_f32(const float *x, float *y, int64_t n, float m)
{
    if (isfinite(m))
        for (int64_t i = 0; i < n; i++)
            y[i] = mf_expf_fast(x[i] - m);
    else
        for (int64_t i = 0; i < n; i++)
            y[i] = expf(x[i] - m);
}

static void softmax_row_f32(const float *x, float *y, int64_t n, bool logarithm)
{
    float m = (float)mf_max_row_f32(x, n);
    exp_row_f32(x, y, n, m);
    double s = mf_sum_row_f32(y, n);
    if (logarithm) {
        float ls = (float)log(s);
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] - m - ls;
    } else {
        float r = (float)(1 / s);
        for (int64_t i = 0; i < n; i++)
            y[i] *= r;
    }
}

static void softmax_row_f64(const double *x, double *y, int64_t n, bool logarithm)
{
    double m = max_f64(x, n);
    for (int64_t i = 0; i < n; i++)
        y[i] = exp(x[i] - m);
    double s = mf_sum_row_f64(y, n);
    if (logarithm) {
        double ls = log(s);
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] - m - ls;
    } else {
        double r = 1 / s;
        for (int64_t i = 0; i < n; i++)
            y[i] *= r;
    }
}

/* ---- other axes ------------------------------------------------------------------ */

/* Softmax of x viewed as (outer, n, inner) along n, inner > 1, with 'acc'
 * scratch of 'inner' doubles: the same steps, elementwise across rows. */
#define SOFTMAX_STRIDED(T, SUF, EXPF, LOGF)                                             \
    static void softmax_strided_##SUF(const T *x, T *y, int64_t n, int64_t inner,       \
                                      bool logarithm, double *acc, T *m)                 \
    {                                                                                   \
        for (int64_t i = 0; i < inner; i++) {                                           \
            m[i] = -INFINITY;                                                           \
            acc[i] = 0;                                                                 \
        }                                                                               \
        for (int64_t j = 0; j < n; j++)                                                 \
            for (int64_t i = 0; i < inner; i++)                                         \
                m[i] = x[j * inner + i] > m[i] ? x[j * inner + i] : m[i];               \
        for (int64_t j = 0; j < n; j++)                                                 \
            for (int64_t i = 0; i < inner; i++) {                                       \
                T e = EXPF(x[j * inner + i] - m[i]);                                    \
                y[j * inner + i] = e;                                                   \
                acc[i] += (double)e;                                                    \
            }                                                                           \
        for (int64_t i = 0; i < inner; i++)                                             \
            acc[i] = logarithm ? log(acc[i]) : 1 / acc[i];                              \
        for (int64_t j = 0; j < n; j++)                                                 \
            for (int64_t i = 0; i < inner; i++) {                                       \
                int64_t k = j * inner + i;                                              \
                y[k] = logarithm ? x[k] - m[i] - (T)acc[i] : y[k] * (T)acc[i];          \
            }                                                                           \
    }

SOFTMAX_STRIDED(float, f32, expf, logf)
SOFTMAX_STRIDED(double, f64, exp, log)

/* ---- gradient kernels ------------------------------------------------------------ */

/* dx = (dy - sum(dy * y)) * y along a row: the products go through dx
 * first, rounded as the composition's Mul rounds them. In float32 they
 * are summed as they are written (reduce_walk.h: dy * ((y - 0) * 1) is
 * dy * y exactly), the bits of summing dx afterwards in one pass fewer:
 * rows of 256 in L2 took 0.83x the time. */
static void softmax_grad_row_f32(const float *y, const float *dy, float *dx, int64_t n)
{
    float dot = (float)mf_scaled_dev_row_f32(y, dy, dx, n, 0.0f, 1.0f);
    for (int64_t i = 0; i < n; i++)
        dx[i] = (dy[i] - dot) * y[i];
}

static void softmax_grad_row_f64(const double *y, const double *dy, double *dx, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dx[i] = dy[i] * y[i];
    double dot = mf_sum_row_f64(dx, n);
    for (int64_t i = 0; i < n; i++)
        dx[i] = (dy[i] - dot) * y[i];
}

/* dx = dy - exp(y) * sum(dy) along a row. */
static void log_softmax_grad_row_f32(const float *y, const float *dy, float *dx, int64_t n)
{
    float s = (float)mf_sum_row_f32(dy, n);
    for (int64_t i = 0; i < n; i++)
        dx[i] = dy[i] - mf_expf_fast(y[i]) * s;
}

static void log_softmax_grad_row_f64(const double *y, const double *dy, double *dx, int64_t n)
{
    double s = mf_sum_row_f64(dy, n);
    for (int64_t i = 0; i < n; i++)
        dx[i] = dy[i] - exp(y[i]) * s;
}

/* Both gradients of a block (n, inner), inner > 1, with 'acc' scratch of
 * 'inner' doubles: the row sums taken elementwise across rows. */
#define GRAD_STRIDED(T, SUF, EXPF)                                                      \
    static void grad_strided_##SUF(const T *y, const T *dy, T *dx, int64_t n,           \
                                   int64_t inner, bool logarithm, double *acc)          \
    {                                                                                   \
        for (int64_t i = 0; i < inner; i++)                                             \
            acc[i] = 0;                                                                 \
        for (int64_t j = 0; j < n; j++)                                                 \
            for (int64_t i = 0; i < inner; i++) {                                       \
                int64_t k = j * inner + i;                                              \
                acc[i] += logarithm ? (double)dy[k] : (double)(dy[k] * y[k]);           \
            }                                                                           \
        for (int64_t j = 0; j < n; j++)                                                 \
            for (int64_t i = 0; i < inner; i++) {                                       \
                int64_t k = j * inner + i;                                              \
                T s = (T)acc[i];                                                        \
                dx[k] = logarithm ? dy[k] - EXPF(y[k]) * s : (dy[k] - s) * y[k];        \
            }                                                                           \
    }

GRAD_STRIDED(float, f32, expf)
GRAD_STRIDED(double, f64, exp)

/* ---- the split over rows ------------------------------------------------------------ */

typedef enum Kernel { FORWARD, FORWARD_LOG, GRAD, GRAD_LOG } Kernel;

typedef struct RowsJob {
    Kernel kernel;
    MfDType dtype;
    const void *a, *b; /* x; or y and dy */
    void *out;
    int64_t n, inner;
    atomic_bool failed; /* a thread could not allocate its scratch */
} RowsJob;

/* Block 'o' (n x inner elements at offset o * n * inner) of the job. */
static void run_block(const RowsJob *j, int64_t o, double *acc)
{
    size_t es = mf_dtype_size(j->dtype), at = (size_t)(o * j->n * j->inner) * es;
    const char *a = (const char *)j->a + at, *b = j->b ? (const char *)j->b + at : NULL;
    char *out = (char *)j->out + at;
    bool lg = j->kernel == FORWARD_LOG || j->kernel == GRAD_LOG, f32 = j->dtype == MF_FLOAT32;
    int64_t n = j->n, inner = j->inner;
    if (j->kernel == FORWARD || j->kernel == FORWARD_LOG) {
        if (inner == 1 && f32)
            softmax_row_f32((const float *)a, (float *)out, n, lg);
        else if (inner == 1)
            softmax_row_f64((const double *)a, (double *)out, n, lg);
        else if (f32)
            softmax_strided_f32((const float *)a, (float *)out, n, inner, lg, acc,
                                (float *)(acc + inner));
        else
            softmax_strided_f64((const double *)a, (double *)out, n, inner, lg, acc,
                                acc + inner);
    } else if (inner == 1) {
        if (f32)
            (lg ? log_softmax_grad_row_f32 : softmax_grad_row_f32)(
                (const float *)a, (const float *)b, (float *)out, n);
        else
            (lg ? log_softmax_grad_row_f64 : softmax_grad_row_f64)(
                (const double *)a, (const double *)b, (double *)out, n);
    } else if (f32) {
        grad_strided_f32((const float *)a, (const float *)b, (float *)out, n, inner, lg, acc);
    } else {
        grad_strided_f64((const double *)a, (const double *)b, (double *)out, n, inner, lg,
                         acc);
    }
}

static void run_blocks(void *ctx, int64_t b, int64_t e)
{
    RowsJob *j = ctx;
    size_t nbytes = j->inner > 1 ? (size_t)j->inner * 16 : 0;
    double *acc = nbytes ? mf_alloc(nbytes) : NULL;
    if (nbytes && !acc) {
        atomic_store(&j->failed, true);
        return;
    }
    for (int64_t o = b; o < e; o++)
        run_block(j, o, acc);
    if (acc)
        mf_dealloc(acc, nbytes);
}

/* Elements per thread below which a wake-up costs more than it saves. */
#define ROWS_CHUNK 32768

/* Runs 'kernel' over 'a' (and 'b') viewed around 'axis' into 'out'. */
static MfStatus run_rows(const MfOpCall *c, Kernel kernel, MfTensor *out)
{
    MfTensor *a = mf_tensor_contiguous(c->inputs[0]);
    MfTensor *b = a && c->ninputs > 1 ? mf_tensor_contiguous(c->inputs[1]) : NULL;
    if (!a || (c->ninputs > 1 && !b)) {
        mf_tensor_release(a);
        return MF_ENOMEM;
    }
    int ax = (int)(c->attrs->axis < 0 ? c->attrs->axis + a->rank : c->attrs->axis);
    int64_t outer = 1, inner = 1, n = a->shape[ax];
    for (int i = 0; i < ax; i++)
        outer *= a->shape[i];
    for (int i = ax + 1; i < a->rank; i++)
        inner *= a->shape[i];
    RowsJob j = {kernel, a->dtype, mf_tensor_data(a), b ? mf_tensor_data(b) : NULL,
                 mf_tensor_data(out), n, inner, false};
    if (n > 0 && mf_tensor_numel(out) > 0)
        mf_parallel_for(outer, ROWS_CHUNK / (n * inner) + 1, run_blocks, &j);
    mf_tensor_release(a);
    mf_tensor_release(b);
    return atomic_load(&j.failed) ? mf_err_nomem(op_api(c), (unsigned long long)inner * 16) : MF_OK;
}

/* ---- the ops ------------------------------------------------------------------------ */

/* Checks 'axis' against x's rank; 'what' names the input for messages. */
static MfStatus check_axis(const MfOpCall *c, const MfTensor *x)
{
    if (x->rank < 1)
        return mf_err_set(MF_ESHAPE, "%s: expected a tensor of rank >= 1, got a scalar", op_api(c));
    int64_t ax = c->attrs->axis < 0 ? c->attrs->axis + x->rank : c->attrs->axis;
    if (ax < 0 || ax >= x->rank)
        return mf_err_set(MF_EARG, "%s: axis %lld out of range for rank %d (axes are 1-based: "
                          "1..%d, or negative from the end)", op_api(c),
                          (long long)(c->attrs->axis + 1), x->rank, x->rank);
    return MF_OK;
}

static MfStatus softmax_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    MfStatus st = mf_check_dtype(c, x, MF_FLOATS,
                                 "a float dtype (float32 or float64; use mf.cast)");
    if (st == MF_OK)
        st = check_axis(c, x);
    if (st == MF_OK)
        mf_spec_like(c, x, x->dtype);
    return st;
}

static MfStatus softmax_forward(const MfOpCall *c, MfTensor **outs)
{
    return run_rows(c, FORWARD, outs[0]);
}

static MfStatus log_softmax_forward(const MfOpCall *c, MfTensor **outs)
{
    return run_rows(c, FORWARD_LOG, outs[0]);
}

/* exp, sum and divide (or subtract) per element. */
static MfCost softmax_cost(const MfOpCall *c)
{
    MfCost cost = mf_cost_elementwise(c);
    cost.flops *= 4;
    return cost;
}

/* The gradient ops: y and dy of one float dtype and one shape (a known dim
 * wins over an unknown one). */
static MfStatus grad_infer(MfOpCall *c)
{
    const MfTensor *y = c->inputs[0], *dy = c->inputs[1];
    MfStatus st = mf_check_dtype(c, y, MF_FLOATS, "a float dtype (float32 or float64)");
    if (st == MF_OK)
        st = mf_check_same_dtype(c, y, dy);
    if (st == MF_OK)
        st = check_axis(c, y);
    if (st != MF_OK)
        return st;
    bool same = dy->rank == y->rank;
    for (int i = 0; same && i < y->rank; i++)
        same = dy->shape[i] < 0 || y->shape[i] < 0 || dy->shape[i] == y->shape[i];
    if (!same) {
        char a[96], b[96];
        return mf_err_set(MF_ESHAPE, "%s: the output and its gradient must have one shape, got "
                          "%s and %s", op_api(c), mf_shape_str(y->rank, y->shape, a, sizeof a),
                          mf_shape_str(dy->rank, dy->shape, b, sizeof b));
    }
    mf_spec_like(c, y, y->dtype);
    for (int i = 0; i < y->rank; i++)
        if (c->out[0].shape[i] < 0)
            c->out[0].shape[i] = dy->shape[i];
    return MF_OK;
}

static MfStatus softmax_grad_forward(const MfOpCall *c, MfTensor **outs)
{
    return run_rows(c, GRAD, outs[0]);
}

static MfStatus log_softmax_grad_forward(const MfOpCall *c, MfTensor **outs)
{
    return run_rows(c, GRAD_LOG, outs[0]);
}

/* SoftmaxGrad or LogSoftmaxGrad ('op') of (y, dy) along the call's axis. */
static MfStatus grad_op(MfOpId op, MfTensor *y, MfTensor *dy, const MfAttrs *attrs,
                        MfTensor **out)
{
    MfTensor *in[2] = {y, dy};
    return mf_op1(op, 2, in, attrs, out);
}

MfStatus mf_softmax_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return grad_op(MF_OP_SOFTMAX_GRAD, g->outputs[0], g->doutputs[0], g->call->attrs,
                   &dinputs[0]);
}

MfStatus mf_log_softmax_grad(const MfGradCall *g, MfTensor **dinputs)
{
    return grad_op(MF_OP_LOG_SOFTMAX_GRAD, g->outputs[0], g->doutputs[0], g->call->attrs,
                   &dinputs[0]);
}

/* SoftmaxGrad's own gradient, for g = d(loss)/d(dx), with S the sum over
 * the axis (kept):
 *   d dy = (g - S(g * y)) * y  = SoftmaxGrad(y, g)
 *   d y  = g * (dy - S(dy * y)) - dy * S(g * y) */
static MfStatus softmax_grad_backward(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *y = g->call->inputs[0], *dy = g->call->inputs[1], *gg = g->doutputs[0];
    MfTensor *t[7] = {0};
    int64_t axis = g->call->attrs->axis;
    MfStatus st = MF_OK;
    if (mf_grad_needs(g, 1))
        MF_GRAD_TRY(grad_op(MF_OP_SOFTMAX_GRAD, y, gg, g->call->attrs, &dinputs[1]));
    if (mf_grad_needs(g, 0)) {
        MF_GRAD_TRY(mf_binary(MF_OP_MUL, gg, y, &t[0]));
        MF_GRAD_TRY(mf_reduce(MF_OP_SUM, t[0], &axis, 1, true, &t[1]));
        MF_GRAD_TRY(mf_binary(MF_OP_MUL, dy, t[1], &t[2]));
        MF_GRAD_TRY(mf_binary(MF_OP_MUL, dy, y, &t[3]));
        MF_GRAD_TRY(mf_reduce(MF_OP_SUM, t[3], &axis, 1, true, &t[4]));
        MF_GRAD_TRY(mf_binary(MF_OP_SUB, dy, t[4], &t[5]));
        MF_GRAD_TRY(mf_binary(MF_OP_MUL, gg, t[5], &t[6]));
        MF_GRAD_TRY(mf_binary(MF_OP_SUB, t[6], t[2], &dinputs[0]));
    }
done:
    mf_grad_release_n(t, 7);
    if (st != MF_OK)
        mf_grad_release_n(dinputs, 2);
    return st;
}

/* LogSoftmaxGrad's own gradient, for g = d(loss)/d(dx):
 *   d dy = g - S(g * exp(y))
 *   d y  = -(g * exp(y) * S(dy)) */
static MfStatus log_softmax_grad_backward(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *y = g->call->inputs[0], *dy = g->call->inputs[1], *gg = g->doutputs[0];
    MfTensor *t[6] = {0};
    int64_t axis = g->call->attrs->axis;
    MfStatus st = MF_OK;
    MF_GRAD_TRY(mf_unary(MF_OP_EXP, y, &t[0]));
    MF_GRAD_TRY(mf_binary(MF_OP_MUL, gg, t[0], &t[1]));
    if (mf_grad_needs(g, 1)) {
        MF_GRAD_TRY(mf_reduce(MF_OP_SUM, t[1], &axis, 1, true, &t[2]));
        MF_GRAD_TRY(mf_binary(MF_OP_SUB, gg, t[2], &dinputs[1]));
    }
    if (mf_grad_needs(g, 0)) {
        MF_GRAD_TRY(mf_reduce(MF_OP_SUM, dy, &axis, 1, true, &t[3]));
        MF_GRAD_TRY(mf_binary(MF_OP_MUL, t[1], t[3], &t[4]));
        MF_GRAD_TRY(mf_unary(MF_OP_NEG, t[4], &dinputs[0]));
    }
done:
    mf_grad_release_n(t, 6);
    if (st != MF_OK)
        mf_grad_release_n(dinputs, 2);
    return st;
}

/* The default axis is the last. */
static const MfAttrDef softmax_attrs[] = {
    {"axis", MF_ATTR_AXIS, MF_ATTR_POSITIONAL, MF_ATTR_AT(axis), 0, -1, NULL, NULL},
};

const MfOpDesc mf_desc_softmax = {
    .name = "Softmax", .api = "softmax", .arity = 1, .flags = 0,
    .infer = softmax_infer, .forward = softmax_forward, .backward = mf_softmax_grad,
    .cost = softmax_cost, .attrs = softmax_attrs, .nattrs = MF_NATTRS(softmax_attrs),
    .lua = "nn.softmax", .inputs = "logits",
    .summary = "exp(x) / sum(exp(x)) along axis (the last by default)",
    .topic = "nn",
    .grad_note = "dx = SoftmaxGrad(s, dy) = (dy - sum(dy * s, axis)) * s with s the output, "
                 "one op",
    .details =
        "exp(logits) / sum(exp(logits)) along 'axis' (1-based, negative from the end; default "
        "-1, the last axis; also {axis = n}). The row maximum is subtracted first, so large "
        "logits do not overflow. Float dtypes; float32 takes a vectorised exp (about 1 ulp) "
        "and sums each row as reduce_sum does (at most 8 terms in float, then double), so "
        "it matches exp(x - max) / sum to float32 rounding.",
    .example =
        "mf.nn.softmax(mf.tensor{1, 1})                   --> {0.5, 0.5}\n"
        "mf.nn.softmax(mf.tensor{{0, math.log(3)}})       --> {{0.25, 0.75}}",
};

const MfOpDesc mf_desc_log_softmax = {
    .name = "LogSoftmax", .api = "log_softmax", .arity = 1, .flags = 0,
    .infer = softmax_infer, .forward = log_softmax_forward, .backward = mf_log_softmax_grad,
    .cost = softmax_cost, .attrs = softmax_attrs, .nattrs = MF_NATTRS(softmax_attrs),
    .lua = "nn.log_softmax", .inputs = "logits",
    .summary = "x - log(sum(exp(x))) along axis, computed stably",
    .topic = "nn",
    .grad_note = "dx = LogSoftmaxGrad(y, dy) = dy - exp(y) * sum(dy, axis), one op",
    .details =
        "log(softmax(logits)) along 'axis' (default the last), computed as logits - max - "
        "log(sum(exp(logits - max))): accurate where softmax underflows.",
    .example =
        "mf.nn.log_softmax(mf.tensor{0, 0})               --> {-0.6931, -0.6931}",
};

/* Internal: the gradient ops (no Lua face). */
const MfOpDesc mf_desc_softmax_grad = {
    .name = "SoftmaxGrad", .api = "softmax_grad", .arity = 2, .flags = 0,
    .infer = grad_infer, .forward = softmax_grad_forward, .backward = softmax_grad_backward,
    .cost = softmax_cost, .attrs = softmax_attrs, .nattrs = MF_NATTRS(softmax_attrs),
};

const MfOpDesc mf_desc_log_softmax_grad = {
    .name = "LogSoftmaxGrad", .api = "log_softmax_grad", .arity = 2, .flags = 0,
    .infer = grad_infer, .forward = log_softmax_grad_forward,
    .backward = log_softmax_grad_backward, .cost = softmax_cost, .attrs = softmax_attrs,
    .nattrs = MF_NATTRS(softmax_attrs),
};
