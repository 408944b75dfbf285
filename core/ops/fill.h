/* fill.h — Fill(dims, value): a tensor of the shape held by the 1-D int
 * tensor 'dims', every element 'value' (a one-element tensor, whose dtype
 * the result takes), as TensorFlow's Fill. The shape is an input, so in a
 * graph it may be known only when the node runs (mf.shape of a placeholder
 * with -1 dims): mf.fill, mf.zeros, mf.ones with a symbolic shape, and
 * zeros_like / ones_like of a tensor with unknown dims, build this op.
 * No gradient flows through it (a constant of run-time shape). */
#ifndef MF_OPS_FILL_H
#define MF_OPS_FILL_H

#include "../op.h"

/* Fill(dims, value); errors name "fill". */
MfStatus mf_fill_by(MfTensor *dims, MfTensor *value, MfTensor **out);

/* A tensor of x's (run-time) shape, every element 'value' in dtype 'dt':
 * Fill(Shape(x), value). */
MfStatus mf_fill_like(MfTensor *x, MfDType dt, double value, MfTensor **out);

/* reshape and broadcast_to with the shape as a tensor 'dims' (1-D int, such
 * as mf.shape(x) of a tensor with unknown dims): ReshapeLike / BroadcastToLike
 * against Fill(dims, 0), so the shape is read when the graph runs (dims
 * must all be >= 0: no -1 to infer). */
MfStatus mf_reshape_by(MfTensor *t, MfTensor *dims, MfTensor **out);
MfStatus mf_broadcast_to_by(MfTensor *t, MfTensor *dims, MfTensor **out);

#endif
