/* lstm_cell.c — the elementwise core of an LSTM step, fused (a hot path:
 * unrolled over time, a step of small tensors would otherwise be a dozen
 * ops on strided gate slices):
 *
 *   LSTMCell(z [, c_prev]) -> h, c
 *     z: (batch, 4 units), the gates' pre-activations in Keras's and
 *     PyTorch's order i, f, g, o (x W + h U + b, computed by the caller
 *     with MatMul); c_prev: (batch, units), absent = zero state.
 *     c = sigmoid(f) c_prev + sigmoid(i) tanh(g), h = sigmoid(o) tanh(c).
 *   LSTMCellGrad(z, c, dh, dc [, c_prev]) -> dz [, dc_prev]
 *     the backward pass of one step in one pass over memory.
 *
 * Float64 kernels use libm's exp and tanh. Float32 kernels compute in float
 * with the vectorizable approximations of fast_mathf.h (a few ulp, as
 * PyTorch's float kernels): with libm in double the cells were half of an
 * LSTM training step (bench/layers.lua lstm). */
#include <math.h>

#include "../grad.h"
#include "common.h"
#include "fast_mathf.h"
#include "grads_math.h"

/* ---- shape inference ----------------------------------------------------- */

/* z is (batch, 4 units) of a float dtype; each of 'others' is (batch, units). */
static MfStatus check_cell(const MfOpCall *c, const MfTensor *z, int nothers,
                           MfTensor *const *others)
{
    MfStatus st = mf_check_dtype(c, z, MF_FLOATS, "a float dtype");
    if (st != MF_OK)
        return st;
    if (z->rank != 2 || (z->shape[1] >= 0 && z->shape[1] % 4 != 0)) {
        char s[96];
        return mf_err_set(MF_ESHAPE, "%s: z must be (batch, 4 * units) (gates i, f, g, o), got "
                          "shape %s", op_api(c), mf_shape_str(z->rank, z->shape, s, sizeof s));
    }
    int64_t units = z->shape[1] >= 0 ? z->shape[1] / 4 : -1;
    for (int k = 0; k < nothers; k++) {
        const MfTensor *t = others[k];
        if ((st = mf_check_same_dtype(c, z, t)) != MF_OK)
            return st;
        bool ok = t->rank == 2 && (units < 0 || t->shape[1] < 0 || t->shape[1] == units) &&
                  (z->shape[0] < 0 || t->shape[0] < 0 || t->shape[0] == z->shape[0]);
        if (!ok) {
            char a[96], b[96];
            return mf_err_set(MF_ESHAPE, "%s: states must be (batch, units) = (%lld, %lld), got "
                              "%s for z %s", op_api(c), (long long)z->shape[0], (long long)units,
                              mf_shape_str(t->rank, t->shape, a, sizeof a),
                              mf_shape_str(z->rank, z->shape, b, sizeof b));
        }
    }
    return MF_OK;
}

static void spec_state(MfOpCall *c, int k, const MfTensor *z)
{
    c->out[k] = (MfTensorSpec){.dtype = z->dtype, .rank = 2,
                               .shape = {z->shape[0], z->shape[1] >= 0 ? z->shape[1] / 4 : -1}};
}

static MfStatus cell_infer(MfOpCall *c)
{
    if (c->ninputs > 2)
        return mf_err_set(MF_EARG, "%s: expected z [, c_prev], got %d inputs", op_api(c),
                          c->ninputs);
    MfStatus st = check_cell(c, c->inputs[0], c->ninputs - 1, c->inputs + 1);
    if (st != MF_OK)
        return st;
    spec_state(c, 0, c->inputs[0]);
    spec_state(c, 1, c->inputs[0]);
    c->noutputs = 2;
    return MF_OK;
}

static MfStatus cell_grad_infer(MfOpCall *c)
{
    if (c->ninputs != 4 && c->ninputs != 5)
        return mf_err_set(MF_EARG, "%s: expected z, c, dh, dc [, c_prev], got %d inputs",
                          op_api(c), c->ninputs);
    MfStatus st = check_cell(c, c->inputs[0], c->ninputs - 1, c->inputs + 1);
    if (st != MF_OK)
        return st;
    mf_spec_like(c, c->inputs[0], c->inputs[0]->dtype);
    if (c->ninputs == 5)
        spec_state(c, 1, c->inputs[0]);
    c->noutputs = c->ninputs == 5 ? 2 : 1;
    return MF_OK;
}

/* ---- kernels ---------------------------------------------------------------- */

static double sigm(double v) { return 1 / (1 + exp(-v)); }

/* One step, forward: rows of z (4 u wide), c_prev and the outputs (u wide). */
static void cell_double(const double *z, const double *cp, double *h, double *cc, int64_t rows,
                        int64_t u)
{
    for (int64_t r = 0; r < rows; r++) {
        const double *zr = z + r * 4 * u;
        for (int64_t j = 0; j < u; j++) {
            double i = sigm(zr[j]), f = sigm(zr[u + j]);
            double g = tanh(zr[2 * u + j]), o = sigm(zr[3 * u + j]);
            double c = i * g + (cp ? f * cp[r * u + j] : 0);
            cc[r * u + j] = c;
            h[r * u + j] = o * tanh(c);
        }
    }
}

/* The float32 step on n columns of one row (the gates u apart): a loop GCC
 * vectorizes (no calls, no branches). */
static void cell_cols_float(const float *restrict z, const float *restrict cp, float *restrict h,
                            float *restrict cc, int64_t u, int64_t n)
{
    for (int64_t j = 0; j < n; j++) {
        float i = mf_sigmoidf_fast(z[j]), f = mf_sigmoidf_fast(z[u + j]);
        float g = mf_tanhf_fast(z[2 * u + j]), o = mf_sigmoidf_fast(z[3 * u + j]);
        float c = i * g + f * cp[j];
        cc[j] = c;
        h[j] = o * mf_tanhf_fast(c);
    }
}

#define ZERO_BLOCK 256 /* columns of the zero state passed at a time */

static void cell_float(const float *z, const float *cp, float *h, float *cc, int64_t rows,
                       int64_t u)
{
    static const float zero[ZERO_BLOCK]; /* c_prev of the zero state, a block at a time */
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t j = 0; j < u; j += cp ? u : ZERO_BLOCK) {
            int64_t n = cp ? u : (u - j < ZERO_BLOCK ? u - j : ZERO_BLOCK), k = r * u + j;
            cell_cols_float(z + r * 4 * u + j, cp ? cp + k : zero, h + k, cc + k, u, n);
        }
    }
}

static void cell_grad_double(const double *const *in, double *dz, double *dcp, int64_t rows,
                             int64_t u)
{
    const double *z = in[0], *cc = in[1], *dh = in[2], *dc = in[3], *cp = in[4];
    for (int64_t r = 0; r < rows; r++) {
        const double *zr = z + r * 4 * u;
        double *dzr = dz + r * 4 * u;
        for (int64_t j = 0; j < u; j++) {
            int64_t k = r * u + j;
            double i = sigm(zr[j]), f = sigm(zr[u + j]);
            double g = tanh(zr[2 * u + j]), o = sigm(zr[3 * u + j]);
            double tc = tanh(cc[k]);
            double dct = dc[k] + dh[k] * o * (1 - tc * tc);
            double prev = cp ? cp[k] : 0;
            dzr[j] = dct * g * i * (1 - i);
            dzr[u + j] = dct * prev * f * (1 - f);
            dzr[2 * u + j] = dct * i * (1 - g * g);
            dzr[3 * u + j] = dh[k] * tc * o * (1 - o);
            if (dcp)
                dcp[k] = dct * f;
        }
    }
}

/* The float32 backward step on n columns of one row, vectorized as the
 * forward (it recomputes the gates rather than keeping them: cheaper than
 * the memory of a saved copy at these sizes). */
static void cell_grad_cols_float(const float *restrict z, const float *restrict cc,
                                 const float *restrict dh, const float *restrict dc,
                                 const float *restrict cp, float *restrict dz,
                                 float *restrict dcp, int64_t u, int64_t n)
{
    for (int64_t j = 0; j < n; j++) {
        float i = mf_sigmoidf_fast(z[j]), f = mf_sigmoidf_fast(z[u + j]);
        float g = mf_tanhf_fast(z[2 * u + j]), o = mf_sigmoidf_fast(z[3 * u + j]);
        float tc = mf_tanhf_fast(cc[j]);
        float dct = dc[j] + dh[j] * o * (1 - tc * tc);
        dz[j] = dct * g * i * (1 - i);
        dz[u + j] = dct * cp[j] * f * (1 - f);
        dz[2 * u + j] = dct * i * (1 - g * g);
        dz[3 * u + j] = dh[j] * tc * o * (1 - o);
        dcp[j] = dct * f;
    }
}

static void cell_grad_float(const float *const *in, float *dz, float *dcp, int64_t rows,
                            int64_t u)
{
    static const float zero[ZERO_BLOCK];
    float unused[ZERO_BLOCK]; /* dc_prev of the zero state: not an output */
    const float *z = in[0], *cc = in[1], *dh = in[2], *dc = in[3], *cp = in[4];
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t j = 0; j < u; j += cp ? u : ZERO_BLOCK) {
            int64_t n = cp ? u : (u - j < ZERO_BLOCK ? u - j : ZERO_BLOCK), k = r * u + j;
            cell_grad_cols_float(z + r * 4 * u + j, cc + k, dh + k, dc + k, cp ? cp + k : zero,
                                 dz + r * 4 * u + j, cp ? dcp + k : unused, u, n);
        }
    }
}

/* Contiguous copies of the inputs (NULL past 'n'); false when out of memory. */
static bool contiguous_all(const MfOpCall *c, MfTensor **in, const void **data)
{
    for (int i = 0; i < c->ninputs; i++) {
        if (!(in[i] = mf_tensor_contiguous(c->inputs[i])))
            return false;
        data[i] = mf_tensor_data(in[i]);
    }
    return true;
}

static MfStatus cell_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *in[2] = {NULL, NULL};
    const void *data[2] = {NULL, NULL};
    MfStatus st = contiguous_all(c, in, data) ? MF_OK : MF_ENOMEM;
    int64_t rows = outs[0]->shape[0], u = outs[0]->shape[1];
    if (st == MF_OK && in[0]->dtype == MF_FLOAT32)
        cell_float(data[0], data[1], mf_tensor_data(outs[0]), mf_tensor_data(outs[1]), rows, u);
    else if (st == MF_OK)
        cell_double(data[0], data[1], mf_tensor_data(outs[0]), mf_tensor_data(outs[1]), rows, u);
    for (int i = 0; i < 2; i++)
        mf_tensor_release(in[i]);
    return st;
}

static MfStatus cell_grad_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *in[5] = {NULL};
    const void *data[5] = {NULL};
    MfStatus st = contiguous_all(c, in, data) ? MF_OK : MF_ENOMEM;
    int64_t rows = in[0] ? in[0]->shape[0] : 0, u = in[0] ? in[0]->shape[1] / 4 : 0;
    void *dcp = c->ninputs == 5 ? mf_tensor_data(outs[1]) : NULL;
    if (st == MF_OK && in[0]->dtype == MF_FLOAT32)
        cell_grad_float((const float *const *)data, mf_tensor_data(outs[0]), dcp, rows, u);
    else if (st == MF_OK)
        cell_grad_double((const double *const *)data, mf_tensor_data(outs[0]), dcp, rows, u);
    for (int i = 0; i < 5; i++)
        mf_tensor_release(in[i]);
    return st;
}

/* ---- the gradient, written with the grad op --------------------------------- */

static MfStatus zeros_like(MfTensor *t, MfTensor **out)
{
    MfTensor *zero = mf_tensor_scalar(t->dtype, 0.0);
    if (!zero)
        return MF_ENOMEM;
    MfStatus st = mf_binary(MF_OP_MUL, t, zero, out);
    mf_tensor_release(zero);
    return st;
}

static MfStatus cell_grad(const MfGradCall *g, MfTensor **dinputs)
{
    const MfOpCall *c = g->call;
    MfTensor *made[2] = {NULL, NULL};
    MfTensor *dh = g->doutputs[0], *dc = g->doutputs[1];
    MfStatus st = MF_OK;
    if (!dh)
        st = zeros_like(g->outputs[0], &made[0]), dh = made[0];
    if (st == MF_OK && !dc)
        st = zeros_like(g->outputs[1], &made[1]), dc = made[1];
    if (st == MF_OK) {
        MfTensor *in[5] = {c->inputs[0], g->outputs[1], dh, dc,
                           c->ninputs == 2 ? c->inputs[1] : NULL};
        MfTensor *outs[MF_MAX_OUTPUTS];
        st = mf_op_call(MF_OP_LSTM_CELL_GRAD, c->ninputs == 2 ? 5 : 4, in, c->attrs, outs, NULL);
        for (int i = 0; i < c->ninputs && st == MF_OK; i++)
            dinputs[i] = outs[i];
    }
    mf_grad_release_n(made, 2);
    return st;
}

static MfCost cell_cost(const MfOpCall *c)
{
    double n = (double)mf_tensor_numel(c->inputs[0]);
    return (MfCost){.flops = 10 * n, .bytes = 2 * n * (double)mf_dtype_size(c->inputs[0]->dtype)};
}

const MfOpDesc mf_desc_lstm_cell = {
    .name = "LSTMCell", .api = "lstm_cell", .arity = 1, .flags = MF_OP_VARIADIC,
    .infer = cell_infer, .forward = cell_forward, .backward = cell_grad, .cost = cell_cost,
    .lua = "nn.lstm_cell", .inputs = "z [, c_prev]", .optional_inputs = 1,
    .summary = "one LSTM step: h, c from the gate pre-activations z and the previous cell "
               "state",
    .topic = "nn",
    .details =
        "The elementwise core of one LSTM step as one fused op (and one for its gradient): z is "
        "(batch, 4 units) of gate pre-activations x W + h U + b in the order i, f, g, o (Keras's "
        "and PyTorch's); c = sigmoid(f) * c_prev + sigmoid(i) * tanh(g), h = sigmoid(o) * "
        "tanh(c); without c_prev the state starts at zero. mf.layers.LSTM calls it per step. "
        "Float32 computes in float with vectorized exp/sigmoid/tanh (within about 2 ulp); "
        "float64 with libm.",
    .example =
        "h, c = mf.nn.lstm_cell(mf.zeros{1, 4})\n"
        "c                                    --> {{0}}\n"
        "h                                    --> {{0}}",
};

const MfOpDesc mf_desc_lstm_cell_grad = {
    .name = "LSTMCellGrad", .api = "lstm_cell_grad", .arity = 4,
    .flags = MF_OP_NONDIFF | MF_OP_VARIADIC, .infer = cell_grad_infer,
    .forward = cell_grad_forward, .cost = cell_cost,
};
