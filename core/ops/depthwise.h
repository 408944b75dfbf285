/* depthwise.h — the composites behind mf.nn.depthwise_conv2d_backprop_input
 * and _filter (core/ops/depthwise.c has the ops and their layouts). */
#ifndef MF_OPS_DEPTHWISE_H
#define MF_OPS_DEPTHWISE_H

#include <stdbool.h>

#include "../op.h"

/* DepthwiseConv2dNativeBackpropInput of an input of shape 'sizes' (NCHW
 * order with 'nchw') given the filter 'w' [kh, kw, C, M] and 'dy'; with
 * 'nchw', 'dy' and the result are NCHW and the windows in NCHW order (the op
 * runs between Transposes). '*out' is owned on success. */
MfStatus mf_depthwise_conv2d_backprop_input(const int64_t sizes[4], MfTensor *w, MfTensor *dy,
                                            const MfAttrs *a, bool nchw, MfTensor **out);

/* DepthwiseConv2dNativeBackpropFilter: the gradient of a filter of shape
 * 'sizes' ([kh, kw, C, M]) given the input 'x' and 'dy' (NCHW with 'nchw'). */
MfStatus mf_depthwise_conv2d_backprop_filter(MfTensor *x, const int64_t sizes[4], MfTensor *dy,
                                             const MfAttrs *a, bool nchw, MfTensor **out);

#endif
