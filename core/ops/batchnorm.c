/* batchnorm.c — batch normalization in training mode, fused (a hot path):
 *
 *   FusedBatchNormV3(x, scale, offset) -> y, batch_mean, batch_variance
 *     x: (..., C), channels on the last axis (NHWC); the statistics run over
 *     every other axis (M = numel / C rows); batch_variance is the biased
 *     one (divided by M, as tf.nn.moments); y = (x - mean) / sqrt(var + eps)
 *     * scale + offset. Attribute: epsilon in 'scalar[0]'.
 *   FusedBatchNormGradV3(dy, x, scale, batch_mean, batch_variance
 *                        [, dmean, dvariance]) -> dx, dscale, doffset
 *     the whole backward pass of the op above in two passes over memory,
 *     including the gradients that flow into its mean and variance outputs.
 *
 * Inference (the moving averages) is plain arithmetic with no statistics to
 * differentiate through, and mf.layers.BatchNormalization writes it with ops.
 * Kernels for float32 and float64; sums accumulate in double. */
#include <math.h>
#include <stdlib.h>

#include "../grad.h"
#include "common.h"
#include "grads_math.h"

/* ---- shape inference ----------------------------------------------------- */

static MfStatus check_channels(const MfOpCall *c, const MfTensor *x, const MfTensor *v,
                               const char *what)
{
    int64_t ch = x->shape[x->rank - 1];
    if (v->rank != 1 || (ch >= 0 && v->shape[0] >= 0 && v->shape[0] != ch)) {
        char a[96], b[96];
        return mf_err_set(MF_ESHAPE, "%s: %s must be 1-D with the size of x's last (channel) "
                          "axis (%lld), got %s for x %s", op_api(c), what, (long long)ch,
                          mf_shape_str(v->rank, v->shape, a, sizeof a),
                          mf_shape_str(x->rank, x->shape, b, sizeof b));
    }
    return mf_check_same_dtype(c, x, v);
}

/* Outputs: one like input 'like', then 'nvec' vectors of C channels. */
static void spec_outputs(MfOpCall *c, const MfTensor *like, const MfTensor *vec, int nvec)
{
    mf_spec_like(c, like, like->dtype);
    int64_t ch = like->shape[like->rank - 1] >= 0 ? like->shape[like->rank - 1] : vec->shape[0];
    for (int k = 1; k <= nvec; k++)
        c->out[k] = (MfTensorSpec){.dtype = like->dtype, .rank = 1, .shape = {ch}};
    c->noutputs = 1 + nvec;
}

static MfStatus check_epsilon(const MfOpCall *c)
{
    double eps = c->attrs->scalar[0];
    if (!(eps >= 0) || isinf(eps))
        return mf_err_set(MF_EARG, "%s: epsilon must be a finite number >= 0, got %g", op_api(c),
                          eps);
    return MF_OK;
}

static MfStatus bn_infer(MfOpCall *c)
{
    const MfTensor *x = c->inputs[0];
    MfStatus st = mf_check_dtype(c, x, MF_FLOATS, "a float dtype");
    if (st == MF_OK && x->rank < 1)
        st = mf_err_set(MF_ESHAPE, "%s: x must have rank >= 1 (channels last), got a scalar",
                        op_api(c));
    if (st == MF_OK)
        st = check_channels(c, x, c->inputs[1], "scale");
    if (st == MF_OK)
        st = check_channels(c, x, c->inputs[2], "offset");
    if (st == MF_OK)
        st = check_epsilon(c);
    if (st == MF_OK)
        spec_outputs(c, x, c->inputs[1], 2);
    return st;
}

static MfStatus bn_grad_infer(MfOpCall *c)
{
    if (c->ninputs != 5 && c->ninputs != 7)
        return mf_err_set(MF_EARG, "%s: expected 5 or 7 inputs, got %d", op_api(c), c->ninputs);
    const MfTensor *x = c->inputs[1];
    MfStatus st = mf_check_dtype(c, x, MF_FLOATS, "a float dtype");
    if (st == MF_OK && x->rank < 1)
        st = mf_err_set(MF_ESHAPE, "%s: x must have rank >= 1, got a scalar", op_api(c));
    if (st == MF_OK)
        st = mf_check_same_dtype(c, c->inputs[0], x);
    for (int i = 2; st == MF_OK && i < c->ninputs; i++)
        st = check_channels(c, x, c->inputs[i], "a channel vector");
    if (st == MF_OK)
        st = check_epsilon(c);
    if (st == MF_OK)
        spec_outputs(c, x, c->inputs[2], 2);
    return st;
}

/* ---- kernels ---------------------------------------------------------------- */

/* Per-channel statistics and the affine form y = x * a + b. */
typedef struct BnStats {
    int64_t rows, ch;
    double *mean, *var, *a, *b; /* one block of 4 * ch doubles */
} BnStats;

static MfStatus stats_alloc(BnStats *s, const MfOpCall *c, const MfTensor *x)
{
    s->ch = x->shape[x->rank - 1];
    s->rows = s->ch > 0 ? mf_tensor_numel(x) / s->ch : 0;
    if (s->rows < 1)
        return mf_err_set(MF_ESHAPE, "%s: no rows to take statistics over (x has %lld elements)",
                          op_api(c), (long long)mf_tensor_numel(x));
    s->mean = calloc((size_t)(4 * s->ch), sizeof *s->mean);
    if (!s->mean)
        return mf_err_nomem(op_api(c), (size_t)(4 * s->ch) * sizeof *s->mean);
    s->var = s->mean + s->ch;
    s->a = s->var + s->ch;
    s->b = s->a + s->ch;
    return MF_OK;
}

/* Mean and biased variance of each channel, in two passes (stable). */
#define BN_MOMENTS(T)                                                                           \
    static void moments_##T(const T *x, BnStats *s)                                             \
    {                                                                                           \
        for (int64_t r = 0; r < s->rows; r++)                                                   \
            for (int64_t k = 0; k < s->ch; k++)                                                 \
                s->mean[k] += (double)x[r * s->ch + k];                                         \
        for (int64_t k = 0; k < s->ch; k++)                                                     \
            s->mean[k] /= (double)s->rows;                                                      \
        for (int64_t r = 0; r < s->rows; r++)                                                   \
            for (int64_t k = 0; k < s->ch; k++) {                                               \
                double d = (double)x[r * s->ch + k] - s->mean[k];                               \
                s->var[k] += d * d;                                                             \
            }                                                                                   \
        for (int64_t k = 0; k < s->ch; k++)                                                     \
            s->var[k] /= (double)s->rows;                                                       \
    }
BN_MOMENTS(float)
BN_MOMENTS(double)

/* y = x * a + b with a = scale / sqrt(var + eps), b = offset - mean * a. */
#define BN_APPLY(T)                                                                             \
    static void apply_##T(const T *x, const T *scale, const T *offset, double eps,              \
                          BnStats *s, T *y, T *mean_out, T *var_out)                            \
    {                                                                                           \
        for (int64_t k = 0; k < s->ch; k++) {                                                   \
            s->a[k] = (double)scale[k] / sqrt(s->var[k] + eps);                                 \
            s->b[k] = (double)offset[k] - s->mean[k] * s->a[k];                                 \
            mean_out[k] = (T)s->mean[k];                                                        \
            var_out[k] = (T)s->var[k];                                                          \
        }                                                                                       \
        for (int64_t r = 0; r < s->rows; r++)                                                   \
            for (int64_t k = 0; k < s->ch; k++)                                                 \
                y[r * s->ch + k] = (T)((double)x[r * s->ch + k] * s->a[k] + s->b[k]);           \
    }
BN_APPLY(float)
BN_APPLY(double)

static MfStatus bn_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *in[3] = {NULL, NULL, NULL};
    BnStats s = {0};
    MfStatus st = MF_OK;
    for (int i = 0; i < 3 && st == MF_OK; i++)
        if (!(in[i] = mf_tensor_contiguous(c->inputs[i])))
            st = MF_ENOMEM;
    if (st == MF_OK)
        st = stats_alloc(&s, c, in[0]);
    if (st == MF_OK && in[0]->dtype == MF_FLOAT32) {
        moments_float(mf_tensor_data(in[0]), &s);
        apply_float(mf_tensor_data(in[0]), mf_tensor_data(in[1]), mf_tensor_data(in[2]),
                    c->attrs->scalar[0], &s, mf_tensor_data(outs[0]), mf_tensor_data(outs[1]),
                    mf_tensor_data(outs[2]));
    } else if (st == MF_OK) {
        moments_double(mf_tensor_data(in[0]), &s);
        apply_double(mf_tensor_data(in[0]), mf_tensor_data(in[1]), mf_tensor_data(in[2]),
                     c->attrs->scalar[0], &s, mf_tensor_data(outs[0]), mf_tensor_data(outs[1]),
                     mf_tensor_data(outs[2]));
    }
    free(s.mean);
    for (int i = 0; i < 3; i++)
        mf_tensor_release(in[i]);
    return st;
}

/* The backward pass. Pass 1: sums of dy and dy * xhat per channel (the
 * offset's and scale's gradients). Pass 2:
 *   dx = scale * inv * (dy - sum(dy) / M - xhat * sum(dy * xhat) / M)
 *        + dmean / M + dvar * 2 (x - mean) / M. */
#define BN_GRAD(T)                                                                              \
    static void grad_##T(const T *const *in, int nin, double eps, BnStats *s, T *dx,            \
                         T *dscale, T *doffset)                                                 \
    {                                                                                           \
        const T *dy = in[0], *x = in[1], *scale = in[2], *mean = in[3], *var = in[4];           \
        double *inv = s->mean, *sdy = s->var, *sdyx = s->a, m = (double)s->rows;                \
        for (int64_t k = 0; k < s->ch; k++)                                                     \
            inv[k] = 1 / sqrt((double)var[k] + eps);                                            \
        for (int64_t r = 0; r < s->rows; r++)                                                   \
            for (int64_t k = 0; k < s->ch; k++) {                                               \
                int64_t i = r * s->ch + k;                                                      \
                sdy[k] += (double)dy[i];                                                        \
                sdyx[k] += (double)dy[i] * ((double)x[i] - (double)mean[k]) * inv[k];           \
            }                                                                                   \
        for (int64_t k = 0; k < s->ch; k++) {                                                   \
            dscale[k] = (T)sdyx[k];                                                             \
            doffset[k] = (T)sdy[k];                                                             \
        }                                                                                       \
        const T *dm = nin == 7 ? in[5] : NULL, *dv = nin == 7 ? in[6] : NULL;                   \
        for (int64_t r = 0; r < s->rows; r++)                                                   \
            for (int64_t k = 0; k < s->ch; k++) {                                               \
                int64_t i = r * s->ch + k;                                                      \
                double xc = (double)x[i] - (double)mean[k], xhat = xc * inv[k];                 \
                double g = (double)dy[i] - sdy[k] / m - xhat * sdyx[k] / m;                     \
                g *= (double)scale[k] * inv[k];                                                 \
                if (dm)                                                                         \
                    g += (double)dm[k] / m + (double)dv[k] * 2 * xc / m;                        \
                dx[i] = (T)g;                                                                   \
            }                                                                                   \
    }
BN_GRAD(float)
BN_GRAD(double)

static MfStatus bn_grad_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *in[7] = {NULL};
    const void *data[7];
    BnStats s = {0};
    MfStatus st = MF_OK;
    for (int i = 0; i < c->ninputs && st == MF_OK; i++) {
        if (!(in[i] = mf_tensor_contiguous(c->inputs[i])))
            st = MF_ENOMEM;
        else
            data[i] = mf_tensor_data(in[i]);
    }
    if (st == MF_OK && mf_tensor_numel(in[0]) != mf_tensor_numel(in[1]))
        st = mf_err_set(MF_ESHAPE, "%s: dy and x differ in size", op_api(c));
    if (st == MF_OK)
        st = stats_alloc(&s, c, in[1]);
    if (st == MF_OK && in[1]->dtype == MF_FLOAT32)
        grad_float((const float *const *)data, c->ninputs, c->attrs->scalar[0], &s,
                   mf_tensor_data(outs[0]), mf_tensor_data(outs[1]), mf_tensor_data(outs[2]));
    else if (st == MF_OK)
        grad_double((const double *const *)data, c->ninputs, c->attrs->scalar[0], &s,
                    mf_tensor_data(outs[0]), mf_tensor_data(outs[1]), mf_tensor_data(outs[2]));
    free(s.mean);
    for (int i = 0; i < c->ninputs; i++)
        mf_tensor_release(in[i]);
    return st;
}

/* ---- the gradient, written with the grad op --------------------------------- */

/* Zeros shaped like 't' (a missing output gradient), as t * 0. */
static MfStatus zeros_like(MfTensor *t, MfTensor **out)
{
    MfTensor *zero = mf_tensor_scalar(t->dtype, 0.0);
    if (!zero)
        return MF_ENOMEM;
    MfStatus st = mf_binary(MF_OP_MUL, t, zero, out);
    mf_tensor_release(zero);
    return st;
}

static MfStatus bn_grad(const MfGradCall *g, MfTensor **dinputs)
{
    const MfOpCall *c = g->call;
    MfTensor *made[3] = {NULL, NULL, NULL};
    MfStatus st = MF_OK;
    MfTensor *dy = g->doutputs[0];
    if (!dy)
        st = zeros_like(g->outputs[0], &made[0]), dy = made[0];
    int n = 5;
    MfTensor *dm = g->doutputs[1], *dv = g->doutputs[2];
    if (st == MF_OK && (dm || dv)) {
        n = 7;
        if (!dm)
            st = zeros_like(g->outputs[1], &made[1]), dm = made[1];
        if (st == MF_OK && !dv)
            st = zeros_like(g->outputs[2], &made[2]), dv = made[2];
    }
    if (st == MF_OK) {
        MfTensor *in[7] = {dy, c->inputs[0], c->inputs[1], g->outputs[1], g->outputs[2], dm, dv};
        MfAttrs a = *c->attrs;
        MfTensor *outs[MF_MAX_OUTPUTS];
        st = mf_op_call(MF_OP_FUSED_BATCH_NORM_GRAD, n, in, &a, outs, NULL);
        for (int i = 0; i < 3 && st == MF_OK; i++)
            dinputs[i] = outs[i];
    }
    mf_grad_release_n(made, 3);
    return st;
}

static MfCost bn_cost(const MfOpCall *c)
{
    double n = (double)mf_tensor_numel(c->inputs[0]), size = (double)mf_dtype_size(
        c->inputs[0]->dtype);
    return (MfCost){.flops = 6 * n, .bytes = 3 * n * size};
}

static const MfAttrDef bn_attrs[] = {
    {"epsilon", MF_ATTR_FLOAT, 0, MF_ATTR_AT(scalar[0]), 0, 1e-3, NULL, NULL},
};

/* MF_OP_OWN_BINDING: bound by repl/lmf_fused.c for now */
const MfOpDesc mf_desc_fused_batch_norm = {
    .name = "FusedBatchNormV3", .api = "fused_batch_norm", .arity = 3,
    .flags = MF_OP_OWN_BINDING,
    .infer = bn_infer, .forward = bn_forward, .backward = bn_grad, .cost = bn_cost,
    .attrs = bn_attrs, .nattrs = MF_NATTRS(bn_attrs), .lua = "nn.fused_batch_norm",
    .inputs = "x, scale, offset",
    .summary = "y, batch mean, biased batch variance of training-mode batch normalization "
               "(channels last)",
};

const MfOpDesc mf_desc_fused_batch_norm_grad = {
    .name = "FusedBatchNormGradV3", .api = "fused_batch_norm_grad", .arity = 5,
    .flags = MF_OP_NONDIFF | MF_OP_VARIADIC, .infer = bn_grad_infer, .forward = bn_grad_forward,
    .cost = bn_cost,
};
