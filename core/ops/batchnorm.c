/* batchnorm.c — batch normalization in training mode, fused (a hot path):
 *
 *   FusedBatchNormV3(x, scale, offset) -> y, batch_mean, batch_variance
 *     x: (..., C), channels on the last axis (NHWC); the statistics run over
 *     every other axis (M = numel / C rows); y = (x - mean) / sqrt(var + eps)
 *     * scale + offset with the biased variance var (divided by M, as
 *     tf.nn.moments), while the batch_variance output has Bessel's
 *     correction, var * M / max(M - 1, 1), as TensorFlow's op returns it
 *     (the value the moving variance averages). An empty x (M = 0) gives an
 *     empty y and NaN statistics, as TensorFlow. Attribute: epsilon in
 *     'scalar[0]'.
 *   FusedBatchNormGradV3(dy, x, scale, batch_mean, batch_variance
 *                        [, dmean, dvariance]) -> dx, dscale, doffset
 *     the whole backward pass of the op above in two passes over memory,
 *     including the gradients that flow into its mean and variance outputs;
 *     batch_variance is the forward op's (corrected) output.
 *
 * Inference (the moving averages) is plain arithmetic with no statistics to
 * differentiate through, and mf.layers.BatchNormalization writes it with ops.
 * Kernels for float32 and float64; sums accumulate in double. */
#include <math.h>
#include <stdlib.h>

#include "../alloc.h"
#include "../grad.h"
#include "../parallel.h"
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

/* ---- kernels ----------------------------------------------------------------
 * Every pass over x is split over the worker pool by blocks of BN_ROWS rows.
 * Sums over rows are taken per block (in double, vectorised over channels)
 * and the blocks' sums added in block order, so the statistics do not
 * depend on the thread count; the elementwise passes write each element
 * once from per-channel constants (y = x * a + b; dx = dy * A + (x - mean)
 * * B + C), in the tensor's dtype. */

#define BN_ROWS 256 /* rows per partial sum */

enum { BN_MEAN, BN_VAR, BN_GRAD_SUMS, BN_APPLY, BN_DX };

typedef struct BnJob {
    int phase;
    int64_t rows, ch;
    const void *x, *dy;
    const double *mean; /* per channel */
    const void *k[3];   /* per channel, the dtype's: BN_APPLY a, b; BN_DX A, B, C */
    const void *kmean;  /* the mean in the dtype (BN_DX) */
    double *part;       /* [block][2][ch] */
    void *out;
    bool f64;           /* float64 data, else float32 */
} BnJob;

#define BN_KERNELS(T)                                                                           \
    static void sums_##T(const BnJob *j, int64_t r0, int64_t r1, double *restrict p0,           \
                         double *restrict p1)                                                   \
    {                                                                                           \
        int64_t ch = j->ch;                                                                     \
        const T *restrict x = j->x, *restrict dy = j->dy;                                       \
        const double *restrict mean = j->mean;                                                  \
        for (int64_t k = 0; k < ch; k++)                                                        \
            p0[k] = p1[k] = 0;                                                                  \
        for (int64_t r = r0; r < r1; r++) {                                                     \
            const T *restrict xr = x + r * ch;                                                  \
            if (j->phase == BN_MEAN)                                                            \
                for (int64_t k = 0; k < ch; k++)                                                \
                    p0[k] += (double)xr[k];                                                     \
            else if (j->phase == BN_VAR)                                                        \
                for (int64_t k = 0; k < ch; k++) {                                              \
                    double d = (double)xr[k] - mean[k];                                         \
                    p0[k] += d * d;                                                             \
                }                                                                               \
            else                                                                                \
                for (int64_t k = 0; k < ch; k++) {                                              \
                    double g = (double)dy[r * ch + k];                                          \
                    p0[k] += g;                                                                 \
                    p1[k] += g * ((double)xr[k] - mean[k]);                                     \
                }                                                                               \
        }                                                                                       \
    }                                                                                           \
    static void elementwise_##T(const BnJob *j, int64_t r0, int64_t r1)                         \
    {                                                                                           \
        int64_t ch = j->ch;                                                                     \
        const T *restrict x = j->x, *restrict dy = j->dy, *restrict m = j->kmean;               \
        const T *restrict k0 = j->k[0], *restrict k1 = j->k[1], *restrict k2 = j->k[2];         \
        T *restrict out = j->out;                                                               \
        for (int64_t r = r0; r < r1; r++)                                                       \
            if (j->phase == BN_APPLY)                                                           \
                for (int64_t k = 0; k < ch; k++)                                                \
                    out[r * ch + k] = x[r * ch + k] * k0[k] + k1[k];                            \
            else                                                                                \
                for (int64_t k = 0; k < ch; k++)                                                \
                    out[r * ch + k] = dy[r * ch + k] * k0[k] + (x[r * ch + k] - m[k]) * k1[k] + \
                                      k2[k];                                                    \
    }
BN_KERNELS(float)
BN_KERNELS(double)

static void bn_blocks(void *ctx, int64_t b0, int64_t b1)
{
    const BnJob *j = ctx;
    bool elementwise = j->phase == BN_APPLY || j->phase == BN_DX;
    for (int64_t b = b0; b < b1; b++) {
        int64_t r0 = b * BN_ROWS, r1 = r0 + BN_ROWS < j->rows ? r0 + BN_ROWS : j->rows;
        double *p0 = elementwise ? NULL : j->part + b * 2 * j->ch;
        if (elementwise && j->f64)
            elementwise_double(j, r0, r1);
        else if (elementwise)
            elementwise_float(j, r0, r1);
        else if (j->f64)
            sums_double(j, r0, r1, p0, p0 + j->ch);
        else
            sums_float(j, r0, r1, p0, p0 + j->ch);
    }
}

/* Runs phase 'phase' of job 'j' over every block; a sum phase leaves its
 * column sums in s0 (and s1), the blocks added in block order. */
static void bn_run(BnJob *j, int phase, double *s0, double *s1)
{
    j->phase = phase;
    int64_t blocks = (j->rows + BN_ROWS - 1) / BN_ROWS;
    mf_parallel_for(blocks, 1 + (1 << 14) / (BN_ROWS * j->ch), bn_blocks, j);
    if (phase == BN_APPLY || phase == BN_DX)
        return;
    for (int64_t k = 0; k < j->ch; k++)
        s0[k] = s1[k] = 0;
    for (int64_t b = 0; b < blocks; b++)
        for (int64_t k = 0; k < j->ch; k++) {
            s0[k] += j->part[b * 2 * j->ch + k];
            s1[k] += j->part[(b * 2 + 1) * j->ch + k];
        }
}

/* Per-channel work space: statistics in double, constants in the dtype. */
typedef struct BnSpace {
    double *d;         /* 6 * ch doubles: mean, var, s0, s1, two spares */
    void *t;           /* 4 * ch values of the dtype */
    double *part;      /* [blocks][2][ch] */
    size_t dbytes, tbytes, pbytes;
} BnSpace;

static MfStatus space_alloc(BnSpace *w, const MfOpCall *c, const MfTensor *x, BnJob *j)
{
    j->f64 = x->dtype == MF_FLOAT64;
    j->ch = x->shape[x->rank - 1];
    j->rows = j->ch > 0 ? mf_tensor_numel(x) / j->ch : 0;
    int64_t blocks = (j->rows + BN_ROWS - 1) / BN_ROWS;
    w->dbytes = (size_t)(6 * j->ch) * sizeof(double);
    w->tbytes = (size_t)(4 * j->ch) * mf_dtype_size(x->dtype);
    w->pbytes = (size_t)(blocks * 2 * j->ch) * sizeof(double);
    w->d = mf_alloc(w->dbytes);
    w->t = mf_alloc(w->tbytes);
    w->part = mf_alloc(w->pbytes);
    j->part = w->part;
    if (!w->d || !w->t || !w->part)
        return mf_err_nomem(op_api(c), w->dbytes + w->tbytes + w->pbytes);
    return MF_OK;
}

static void space_free(BnSpace *w)
{
    mf_dealloc(w->d, w->dbytes);
    mf_dealloc(w->t, w->tbytes);
    mf_dealloc(w->part, w->pbytes);
}

/* Value k of a vector of the job's dtype, as a double; and the reverse. */
static double get(const BnJob *j, const void *v, int64_t k)
{
    return j->f64 ? ((const double *)v)[k] : (double)((const float *)v)[k];
}

static void put(const BnJob *j, void *v, int64_t k, double value)
{
    if (j->f64)
        ((double *)v)[k] = value;
    else
        ((float *)v)[k] = (float)value;
}

/* Slot i (0 to 3) of the space's per-channel vectors of the dtype. */
static void *tslot(const BnJob *j, const BnSpace *w, int i)
{
    return (char *)w->t + (size_t)(i * j->ch) * (j->f64 ? sizeof(double) : sizeof(float));
}

/* Bessel's correction of a biased variance over 'rows' values: TensorFlow's
 * rows / max(rows - 1, 1). */
static double bessel(int64_t rows)
{
    return (double)rows / (double)(rows > 1 ? rows - 1 : 1);
}

/* Fills the C values of vector 't' with 'v'. */
static void fill_vector(MfTensor *t, double v)
{
    for (int64_t k = 0; k < mf_tensor_numel(t); k++)
        mf_tensor_set(t, k, v);
}

static MfStatus bn_forward(const MfOpCall *c, MfTensor **outs)
{
    if (mf_tensor_numel(c->inputs[0]) == 0) {   /* no rows: NaN statistics, as TensorFlow */
        fill_vector(outs[1], NAN);
        fill_vector(outs[2], NAN);
        return MF_OK;
    }
    MfTensor *in[3] = {NULL, NULL, NULL};
    BnSpace w = {0};
    BnJob j = {0};
    MfStatus st = MF_OK;
    for (int i = 0; i < 3 && st == MF_OK; i++)
        if (!(in[i] = mf_tensor_contiguous(c->inputs[i])))
            st = MF_ENOMEM;
    if (st == MF_OK)
        st = space_alloc(&w, c, in[0], &j);
    if (st == MF_OK) {
        double *mean = w.d, *var = w.d + j.ch, *spare = w.d + 2 * j.ch;
        double eps = c->attrs->scalar[0], m = (double)j.rows;
        j.x = mf_tensor_data(in[0]);
        bn_run(&j, BN_MEAN, mean, spare);
        for (int64_t k = 0; k < j.ch; k++)
            mean[k] /= m;
        j.mean = mean;
        bn_run(&j, BN_VAR, var, spare);
        const void *scale = mf_tensor_data(in[1]), *offset = mf_tensor_data(in[2]);
        for (int64_t k = 0; k < j.ch; k++) { /* y = x * a + b */
            var[k] /= m;
            double a = get(&j, scale, k) / sqrt(var[k] + eps);
            put(&j, tslot(&j, &w, 0), k, a);
            put(&j, tslot(&j, &w, 1), k, get(&j, offset, k) - mean[k] * a);
            put(&j, mf_tensor_data(outs[1]), k, mean[k]);
            put(&j, mf_tensor_data(outs[2]), k, var[k] * bessel(j.rows));
        }
        j.k[0] = tslot(&j, &w, 0);
        j.k[1] = tslot(&j, &w, 1);
        j.out = mf_tensor_data(outs[0]);
        bn_run(&j, BN_APPLY, NULL, NULL);
    }
    space_free(&w);
    for (int i = 0; i < 3; i++)
        mf_tensor_release(in[i]);
    return st;
}

/* The backward pass. Pass 1: sums of dy and dy * (x - mean) per channel
 * (the offset's and, times inv, the scale's gradients). Pass 2:
 *   dx = scale * inv * (dy - sum(dy) / M - xhat * sum(dy * xhat) / M)
 *        + dmean / M + dvar * 2 (x - mean) / M
 *      = dy * A + (x - mean) * B + C, per channel:
 *   A = scale * inv, B = 2 dvar / M - A * inv^2 * sum(dy (x - mean)) / M,
 *   C = dmean / M - A * sum(dy) / M,
 * where var is the biased variance (the input is the corrected one, var *
 * bessel(M)) and dvar the gradient of the biased one (bessel(M) times the
 * input's). */
static void grad_constants(const BnJob *j, const void *const *data, int nin, double eps,
                           const double *sdy, const double *sdyx, void *A, void *B, void *C,
                           void *dscale, void *doffset)
{
    double m = (double)j->rows, corr = bessel(j->rows);
    for (int64_t k = 0; k < j->ch; k++) {
        double inv = 1 / sqrt(get(j, data[4], k) / corr + eps), a = get(j, data[2], k) * inv;
        double dm = nin == 7 ? get(j, data[5], k) : 0;
        double dv = nin == 7 ? get(j, data[6], k) * corr : 0;
        put(j, A, k, a);
        put(j, B, k, 2 * dv / m - a * inv * inv * sdyx[k] / m);
        put(j, C, k, dm / m - a * sdy[k] / m);
        put(j, dscale, k, sdyx[k] * inv);
        put(j, doffset, k, sdy[k]);
    }
}

static MfStatus bn_grad_forward(const MfOpCall *c, MfTensor **outs)
{
    if (mf_tensor_numel(c->inputs[1]) == 0) {   /* no rows: nothing reaches scale, offset */
        fill_vector(outs[1], 0);
        fill_vector(outs[2], 0);
        return MF_OK;
    }
    MfTensor *in[7] = {NULL};
    const void *data[7];
    BnSpace w = {0};
    BnJob j = {0};
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
        st = space_alloc(&w, c, in[1], &j);
    if (st == MF_OK) {
        double *mean = w.d, *sdy = w.d + j.ch, *sdyx = w.d + 2 * j.ch;
        for (int64_t k = 0; k < j.ch; k++)
            mean[k] = get(&j, data[3], k);
        j.dy = data[0];
        j.x = data[1];
        j.mean = mean;
        bn_run(&j, BN_GRAD_SUMS, sdy, sdyx);
        grad_constants(&j, data, c->ninputs, c->attrs->scalar[0], sdy, sdyx, tslot(&j, &w, 0),
                       tslot(&j, &w, 1), tslot(&j, &w, 2), mf_tensor_data(outs[1]),
                       mf_tensor_data(outs[2]));
        for (int i = 0; i < 3; i++)
            j.k[i] = tslot(&j, &w, i);
        j.kmean = data[3];
        j.out = mf_tensor_data(outs[0]);
        bn_run(&j, BN_DX, NULL, NULL);
    }
    space_free(&w);
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

/* ---- the gradient of the gradient op (second derivatives) -------------------------
 * FusedBatchNormGradV3 as a function of all its inputs: the statistics are
 * inputs too (the forward op's outputs, whose own dependence on x that op's
 * gradient carries). Per channel, over the M rows, with u = x - mean, corr =
 * bessel(M), r = (variance / corr + eps)^-1/2, abar = mean(dy), P = mean(dy u):
 *   dx = s r (dy - abar) - s r^3 P u + dmean / M + 2 corr dvar u / M,
 *   dscale = M r P,  doffset = M abar.
 * For the upstream gradients g (of dx), gs, go, with gbar = mean(g),
 * Q = mean(g u), G = sum(g (dy - abar)) and k = gs r - s r^3 Q:
 *   d dy = s r (g - gbar) + k u + go,
 *   d x = (2 corr dvar / M - s r^3 P) g + k dy,   d mean = -sum(d x),
 *   d s = r G - M r^3 P Q,
 *   d variance = (s G - 3 M s r^2 P Q + M gs P) (-r^3 / (2 corr)),
 *   d dmean = gbar,   d dvar = 2 corr Q.
 * Written with ops (a tape records them: third derivatives too); the float64
 * gradcheck of tests/unit/grad_cases_nn.h checks each against finite
 * differences, and the forward op's case checks the second order through it. */

typedef struct GG {
    MfTensor *t[64];      /* temporaries (owned) */
    int n;
    MfStatus st;
    const MfTensor *vec;  /* a channel vector: what per-channel sums reduce to */
} GG;

/* Keeps 't' (made with status 'st') among the temporaries; NULL on error. */
static MfTensor *gg_keep(GG *a, MfStatus st, MfTensor *t)
{
    if (a->st == MF_OK)
        a->st = st;
    if (a->st == MF_OK && a->n == (int)(sizeof a->t / sizeof a->t[0]))
        a->st = mf_err_set(MF_EINTERNAL, "FusedBatchNormGradV3 gradient: too many temporaries");
    if (a->st != MF_OK) {
        mf_tensor_release(t);
        return NULL;
    }
    return a->t[a->n++] = t;
}

/* Each helper below runs one step when no step failed; the made tensor is
 * assigned before gg_keep reads it (C leaves argument order unspecified). */
static MfTensor *gg_bin(GG *a, MfOpId op, MfTensor *x, MfTensor *y)
{
    MfTensor *out = NULL;
    MfStatus st = a->st != MF_OK ? a->st : mf_binary(op, x, y, &out);
    return gg_keep(a, st, out);
}

static MfTensor *gg_mul(GG *a, MfTensor *x, MfTensor *y) { return gg_bin(a, MF_OP_MUL, x, y); }

static MfTensor *gg_scale(GG *a, MfTensor *x, double k)
{
    MfTensor *out = NULL;
    MfStatus st = a->st != MF_OK ? a->st : mf_grad_scale(x, k, &out);
    return gg_keep(a, st, out);
}

/* Per-channel sums of 'x' (shaped like x, or a channel vector already). */
static MfTensor *gg_sum(GG *a, MfTensor *x)
{
    MfTensor *out = NULL;
    MfStatus st = a->st != MF_OK ? a->st : mf_grad_unbroadcast(x, a->vec, &out);
    return gg_keep(a, st, out);
}

/* 'given', or zeros shaped like 'like' when it is NULL (no upstream gradient). */
static MfTensor *gg_given(GG *a, MfTensor *given, MfTensor *like)
{
    if (given || a->st != MF_OK)
        return given;
    MfTensor *out = NULL;
    MfStatus st = zeros_like(like, &out);
    return gg_keep(a, st, out);
}

/* r = (variance / corr + eps)^-1/2 */
static MfTensor *gg_inv_std(GG *a, MfTensor *var, double corr, double eps)
{
    MfTensor *e = NULL, *r = NULL;
    MfStatus st = a->st != MF_OK ? a->st : mf_grad_const(var, eps, &e);
    MfTensor *v = gg_bin(a, MF_OP_ADD, gg_scale(a, var, 1 / corr), gg_keep(a, st, e));
    st = a->st != MF_OK ? a->st : mf_unary(MF_OP_RSQRT, v, &r);
    return gg_keep(a, st, r);
}

static MfStatus bn_grad_grad(const MfGradCall *g, MfTensor **dinputs)
{
    const MfOpCall *c = g->call;
    MfTensor *const *in = c->inputs;
    if (mf_grad_unknown_dims(in[1]))
        return mf_err_set(MF_EARG, "FusedBatchNormGradV3 gradient: second derivatives of "
                          "fused_batch_norm need x's shape known, got unknown dims");
    int64_t ch = in[1]->shape[in[1]->rank - 1];
    int64_t rows = ch > 0 ? mf_tensor_numel(in[1]) / ch : 0;
    double m = (double)(rows > 0 ? rows : 1), corr = bessel(rows);
    GG a = {.st = MF_OK, .vec = in[2]};
    MfTensor *gx = gg_given(&a, g->doutputs[0], g->outputs[0]);
    MfTensor *gs = gg_given(&a, g->doutputs[1], g->outputs[1]);
    MfTensor *go = gg_given(&a, g->doutputs[2], g->outputs[2]);
    MfTensor *dy = in[0], *s = in[2], *u = gg_bin(&a, MF_OP_SUB, in[1], in[3]);
    MfTensor *r = gg_inv_std(&a, in[4], corr, c->attrs->scalar[0]);
    MfTensor *r2 = gg_mul(&a, r, r), *sr = gg_mul(&a, s, r);
    MfTensor *r3 = gg_mul(&a, r, r2), *sr3 = gg_mul(&a, sr, r2);
    MfTensor *abar = gg_scale(&a, gg_sum(&a, dy), 1 / m);
    MfTensor *gbar = gg_scale(&a, gg_sum(&a, gx), 1 / m);
    MfTensor *P = gg_scale(&a, gg_sum(&a, gg_mul(&a, dy, u)), 1 / m);
    MfTensor *Q = gg_scale(&a, gg_sum(&a, gg_mul(&a, gx, u)), 1 / m);
    MfTensor *G = gg_sum(&a, gg_mul(&a, gx, gg_bin(&a, MF_OP_SUB, dy, abar)));
    MfTensor *PQ = gg_mul(&a, P, Q);
    MfTensor *k = gg_bin(&a, MF_OP_SUB, gg_mul(&a, gs, r), gg_mul(&a, sr3, Q));
    MfTensor *ddy = gg_bin(&a, MF_OP_ADD, gg_mul(&a, sr, gg_bin(&a, MF_OP_SUB, gx, gbar)),
                           gg_bin(&a, MF_OP_ADD, gg_mul(&a, k, u), go));
    MfTensor *kg = gg_scale(&a, gg_mul(&a, sr3, P), -1);
    if (c->ninputs == 7)
        kg = gg_bin(&a, MF_OP_ADD, kg, gg_scale(&a, in[6], 2 * corr / m));
    MfTensor *dx = gg_bin(&a, MF_OP_ADD, gg_mul(&a, kg, gx), gg_mul(&a, k, dy));
    MfTensor *ds = gg_bin(&a, MF_OP_SUB, gg_mul(&a, r, G), gg_scale(&a, gg_mul(&a, r3, PQ), m));
    MfTensor *dr = gg_bin(&a, MF_OP_SUB, gg_mul(&a, s, G),
                          gg_scale(&a, gg_mul(&a, gg_mul(&a, s, r2), PQ), 3 * m));
    dr = gg_bin(&a, MF_OP_ADD, dr, gg_scale(&a, gg_mul(&a, gs, P), m));
    MfTensor *out[7] = {ddy, dx, ds, gg_scale(&a, gg_sum(&a, dx), -1),
                        gg_mul(&a, dr, gg_scale(&a, r3, -1 / (2 * corr))), gbar,
                        gg_scale(&a, Q, 2 * corr)};
    for (int i = 0; i < c->ninputs && a.st == MF_OK; i++) {
        mf_tensor_retain(out[i]);
        dinputs[i] = out[i];
    }
    if (a.st != MF_OK)
        mf_grad_release_n(dinputs, c->ninputs);
    mf_grad_release_n(a.t, a.n);
    return a.st;
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

const MfOpDesc mf_desc_fused_batch_norm = {
    .name = "FusedBatchNormV3", .api = "fused_batch_norm", .arity = 3,
    .infer = bn_infer, .forward = bn_forward, .backward = bn_grad, .cost = bn_cost,
    .attrs = bn_attrs, .nattrs = MF_NATTRS(bn_attrs), .lua = "nn.fused_batch_norm",
    .inputs = "x, scale, offset",
    .summary = "training-mode batch normalization (channels last): y, the batch mean and "
               "the batch variance (Bessel-corrected, as TensorFlow's)",
    .topic = "nn",
    .details =
        "Batch normalization in training mode as one fused op (TensorFlow's FusedBatchNormV3): "
        "channels on the last axis, statistics over every other axis, y = (x - mean) / "
        "sqrt(variance + epsilon) * scale + offset with the biased batch variance (divided by "
        "n, the values per channel), while the variance it returns has Bessel's correction "
        "(divided by max(n - 1, 1)), as TensorFlow's op: the value a moving variance averages "
        "(mf.layers.BatchNormalization does, as Keras and PyTorch). An empty batch gives an "
        "empty y and NaN statistics, as TensorFlow. Its gradient is one fused op too "
        "(FusedBatchNormGradV3), covering gradients that reach the mean and variance outputs, "
        "and that op's gradient is written with ops, so second derivatives work (a Hessian "
        "through training-mode batch norm; x's shape must be known for them). Unlike "
        "tf.compat.v1.nn.fused_batch_norm there is no is_training = false or data_format "
        "here: for inference apply "
        "mf.nn.batch_normalization with the moving statistics; for NCHW transpose to "
        "channels last (BatchNormalization{axis = 2} does both).",
    .example =
        "x = mf.tensor{{1}, {3}}\n"
        "y, m, v = mf.nn.fused_batch_norm(x, mf.ones{1}, mf.zeros{1}, {epsilon = 0})\n"
        "y                                    --> {{-1}, {1}}\n"
        "m                                    --> {2}\n"
        "v                                    --> {2}",
};

const MfOpDesc mf_desc_fused_batch_norm_grad = {
    .name = "FusedBatchNormGradV3", .api = "fused_batch_norm_grad", .arity = 5,
    .flags = MF_OP_VARIADIC, .infer = bn_grad_infer, .forward = bn_grad_forward,
    .backward = bn_grad_grad, .cost = bn_cost,
};
