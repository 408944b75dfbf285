/* linalg_grad.h — the gradients of the linear algebra and view ops
 * (MatMul, BatchMatMulV2, Trace, Transpose, Reshape, ExpandDims, Squeeze),
 * set as 'backward' in their descriptors (linalg.c, view.c).
 *
 * Each follows MfOpDesc.backward: it writes owned gradients for the inputs
 * into 'dinputs' and computes them only by calling ops (mf_op_call and the
 * C shorthands), so tapes record them and graph mode can build them. On
 * failure it releases what it made, leaves 'dinputs' NULL and returns the
 * status with a message pending. */
#ifndef MF_OPS_LINALG_GRAD_H
#define MF_OPS_LINALG_GRAD_H

#include "../op.h"

MfStatus mf_matmul_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_batch_matmul_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_trace_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_transpose_grad(const MfGradCall *g, MfTensor **dinputs);

/* Reshape, ExpandDims and Squeeze: the gradient is 'dy' reshaped back to
 * the input's shape. */
MfStatus mf_reshape_back_grad(const MfGradCall *g, MfTensor **dinputs);

#endif
