/* grad.h — what gradient functions share.
 *
 * Gradients are written in ops (doc/design.md "Gradients are written in ops"):
 * each op's 'backward' (MfOpDesc) receives the forward call, its outputs and
 * the gradients flowing into them, and computes input gradients by calling
 * ops through 'mf_op_call'. So one definition serves eager tapes (it runs at
 * once, and an outer tape records it: higher-order gradients) and graph
 * 'gradients()' (it adds backward nodes).
 *
 * Broadcasting is undone here, once, not per op. */
#ifndef MF_GRAD_H
#define MF_GRAD_H

#include "op.h"

/* Reduces 'grad' (shaped like a broadcast result) to the shape of 'input':
 * sums over the axes 'input' was stretched along, then reshapes. Returns
 * 'grad' itself (retained) when the shapes already match. '*out' is owned.
 * When a shape has unknown (-1) dims (graph mode), the axes are known only
 * at run time: it adds the op SumToLike(grad, input) instead. */
MfStatus mf_grad_unbroadcast(MfTensor *grad, const MfTensor *input, MfTensor **out);

/* 't' reshaped to the shape of 'like' (ReshapeLike when that shape has
 * unknown dims); 't' itself, retained, when the shapes already match. */
MfStatus mf_grad_reshape_like(MfTensor *t, const MfTensor *like, MfTensor **out);

/* True when 't' has an unknown (-1) dim (a symbolic tensor). */
bool mf_grad_unknown_dims(const MfTensor *t);

/* True when the op has a gradient (not MF_OP_NONDIFF and 'backward' set). */
bool mf_op_differentiable(MfOpId op);

/* Runs the op's gradient: 'dinputs[0..ninputs)' receive owned gradients or
 * NULL (unconnected: a non-differentiable op, or an input whose gradient is
 * not defined, such as an integer index). */
MfStatus mf_grad_call(const MfGradCall *g, MfTensor **dinputs);

/* Helpers for gradient functions. Each computes with ops (so tapes record
 * it and graphs build it) and hands '*out' to the caller (NULL on error). */

/* A rank-0 constant 'v' of 'like's dtype (broadcasts against 'like'). */
MfStatus mf_grad_const(const MfTensor *like, double v, MfTensor **out);

/* 't * k', with 'k' a constant of 't's dtype. */
MfStatus mf_grad_scale(MfTensor *t, double k, MfTensor **out);

/* 't' broadcast to the shape of 'like' (the op BroadcastTo, or
 * BroadcastToLike when 'like' has unknown dims); 't' itself, retained, when
 * the shapes already match. */
MfStatus mf_grad_broadcast_like(MfTensor *t, const MfTensor *like, MfTensor **out);

/* Zeros shaped like 'like' (a constant broadcast to it: works on symbolic
 * tensors with unknown dims too). */
MfStatus mf_grad_zeros_like(const MfTensor *like, MfTensor **out);

/* True for float32, float64, float16 and bfloat16: the dtypes gradients
 * flow through (the half ones computed in float32, core/half_call.c). */
bool mf_grad_is_float(MfDType dt);

#endif
