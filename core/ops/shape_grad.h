/* shape_grad.h — the gradients of the shape ops (ConcatV2, Pack, Slice,
 * GatherV2, ReverseV2, Tile, Pad, BroadcastTo, Identity), set as 'backward'
 * in their descriptors (shape_ops.c).
 *
 * Each follows MfOpDesc.backward: it writes owned gradients for the inputs
 * into 'dinputs' (GatherV2's integer indices get none: NULL) and computes
 * them only by calling ops, so tapes record them and graph mode can build
 * them. On failure it releases what it made, leaves 'dinputs' NULL and
 * returns the status with a message pending. */
#ifndef MF_OPS_SHAPE_GRAD_H
#define MF_OPS_SHAPE_GRAD_H

#include "../op.h"

MfStatus mf_concat_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_stack_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_slice_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_gather_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_reverse_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_tile_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_pad_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_broadcast_to_grad(const MfGradCall *g, MfTensor **dinputs);
MfStatus mf_identity_grad(const MfGradCall *g, MfTensor **dinputs);

#endif
