/* pool.h — 2-D pooling (core/ops/pool.c): MaxPool and AvgPool on NHWC
 * float tensors, and the ops their gradients are made of, written as ops
 * (as TensorFlow's) so that graph mode builds them as nodes:
 *   MaxPoolGrad(x, y, dy)      -> dx: dy routed to each window's argmax
 *                                 (the first maximum in row-major window
 *                                 order wins);
 *   AvgPoolGrad(x, dy)         -> dx: dy spread evenly over each window
 *                                 ('x' gives only the shape);
 *   MaxPoolGradGrad(x, y, ddx) -> ddy: ddx read at each window's argmax
 *                                 (the gradient of MaxPoolGrad).
 *
 * Attributes: ksize[4] and strides[4] in NHWC order (batch and channel
 * entries must be 1), padding MfPadding, with TensorFlow's rules (window.h):
 * SAME gives ceil(in / stride) outputs and pads max((out - 1) * stride + k
 * - in, 0) in total, the smaller half before; VALID gives
 * (in - k) / stride + 1 and needs k <= in. Average pooling divides by the
 * number of window elements inside the input (padding is not counted). */
#ifndef MF_OPS_POOL_H
#define MF_OPS_POOL_H

#include <stdint.h>

#include "../grad.h"
#include "window.h"

/* Max / average pooling of the rank-4 NHWC 'x'. On success '*out' is
 * owned; errors: MF_EDTYPE, MF_ESHAPE, MF_EARG (bad ksize, strides,
 * padding), MF_ENOMEM. */
MfStatus mf_max_pool(MfTensor *x, const int64_t ksize[4], const int64_t strides[4], MfPadding padding,
                     MfTensor **out);
MfStatus mf_avg_pool(MfTensor *x, const int64_t ksize[4], const int64_t strides[4], MfPadding padding,
                     MfTensor **out);

/* Gradients (nn_grad.c): MfOpDesc 'backward' functions of MaxPool,
 * AvgPool, MaxPoolGrad, AvgPoolGrad and MaxPoolGradGrad. */
MfStatus mf_max_pool_backward(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_avg_pool_backward(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_max_pool_grad_backward(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_avg_pool_grad_backward(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_max_pool_grad_grad_backward(const MfGradCall *g, MfTensor **dinputs);

#endif
