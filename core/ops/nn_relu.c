/* nn_relu.c — ReluGrad(gradients, features): the gradient of Relu as one
 * fused op, gradients where features > 0 and 0 elsewhere (TensorFlow's
 * ReluGrad). Relu's backward used Greater + SelectV2, which wrote a bool
 * mask and a zero tensor and read everything twice; in a CNN training step
 * that pair cost as much as a convolution GEMM.
 *
 * Both inputs have one numeric dtype (the dtypes Relu takes) and one shape
 * (no broadcasting: the gradient is always shaped like the activation).
 * Its own gradient (TensorFlow's _ReluGradGrad): ReluGrad(ddx, features)
 * for 'gradients', and zeros for 'features' (the mask is piecewise
 * constant). */
#include "nn.h"

#include "../parallel.h"
#include "common.h"
#include "grads_math.h"

static MfStatus relu_grad_infer(MfOpCall *c)
{
    return mf_infer_grad_pair(c, MF_NUMERIC, "a numeric dtype");
}

/* A select written as a multiply-free blend so that the compiler
 * vectorizes it (compare + and-mask per lane). A NaN feature passes: Relu's
 * forward (ReluGrad(x, x)) gives NaN for NaN, and its gradient passes the
 * incoming one there, as PyTorch's threshold_backward does. */
#define RELU_GRAD_KERNEL(T, SUF)                                                         \
    static void relu_grad_##SUF(int64_t n, const T *dy, const T *x, T *dx)               \
    {                                                                                    \
        for (int64_t i = 0; i < n; i++)                                                  \
            dx[i] = x[i] > (T)0 || x[i] != x[i] ? dy[i] : (T)0;                          \
    }

RELU_GRAD_KERNEL(float, f32)
RELU_GRAD_KERNEL(double, f64)
RELU_GRAD_KERNEL(int32_t, i32)
RELU_GRAD_KERNEL(int64_t, i64)

/* One chunk of the elementwise loop, for mf_parallel_for. */
typedef struct ReluGradJob {
    MfDType dt;
    const char *dy, *x;
    char *dx;
} ReluGradJob;

static void relu_grad_chunk(void *ctx, int64_t b, int64_t e)
{
    const ReluGradJob *j = ctx;
    size_t off = (size_t)b * mf_dtype_size(j->dt);
    const void *d = j->dy + off, *xs = j->x + off;
    void *o = j->dx + off;
    switch (j->dt) {
    case MF_FLOAT32: relu_grad_f32(e - b, d, xs, o); break;
    case MF_FLOAT64: relu_grad_f64(e - b, d, xs, o); break;
    case MF_INT32: relu_grad_i32(e - b, d, xs, o); break;
    default: relu_grad_i64(e - b, d, xs, o); break;
    }
}

/* Below this many elements per thread a wake-up costs more than it saves. */
#define RELU_GRAD_CHUNK 65536

/* max(x, 0) is ReluGrad(x, x): x where x > 0, else 0 (NaN and -0 give 0,
 * as Relu's own loop does). */
bool mf_relu_forward_split(const MfTensor *x, MfTensor *out)
{
    if (!mf_tensor_is_contiguous(x) || !mf_tensor_is_contiguous(out))
        return false;
    ReluGradJob job = {x->dtype, mf_tensor_data(x), mf_tensor_data(x), mf_tensor_data(out)};
    mf_parallel_for(mf_tensor_numel(x), RELU_GRAD_CHUNK, relu_grad_chunk, &job);
    return true;
}

static MfStatus relu_grad_forward(const MfOpCall *c, MfTensor **outs)
{
    MfTensor *dy = mf_tensor_contiguous(c->inputs[0]);
    MfTensor *x = dy ? mf_tensor_contiguous(c->inputs[1]) : NULL;
    if (!x) {
        mf_tensor_release(dy);
        return MF_ENOMEM;
    }
    ReluGradJob job = {x->dtype, mf_tensor_data(dy), mf_tensor_data(x), mf_tensor_data(outs[0])};
    mf_parallel_for(mf_tensor_numel(x), RELU_GRAD_CHUNK, relu_grad_chunk, &job);
    mf_tensor_release(dy);
    mf_tensor_release(x);
    return MF_OK;
}

static MfStatus relu_grad_backward(const MfGradCall *g, MfTensor **dinputs)
{
    MfTensor *x = g->call->inputs[1];
    MfStatus st = MF_OK;
    if (mf_grad_needs(g, 0))
        st = mf_relu_backprop(g->doutputs[0], x, &dinputs[0]);
    if (st == MF_OK && mf_grad_needs(g, 1))
        st = mf_grad_zeros_like(x, &dinputs[1]);
    if (st != MF_OK)
        mf_grad_release_n(dinputs, 2);
    return st;
}

const MfOpDesc mf_desc_relu_grad = {
    .name = "ReluGrad", .api = "relu_grad", .arity = 2, .flags = 0,
    .infer = relu_grad_infer, .forward = relu_grad_forward, .backward = relu_grad_backward,
    .cost = mf_cost_elementwise,
};

MfStatus mf_relu_backprop(MfTensor *dy, MfTensor *x, MfTensor **out)
{
    MfTensor *in[2] = {dy, x};
    return mf_op1(MF_OP_RELU_GRAD, 2, in, NULL, out);
}
