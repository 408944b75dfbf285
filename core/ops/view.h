/* view.h — shorthands for calling the view ops (Transpose, Reshape,
 * ExpandDims, Squeeze) from C, e.g. from composites such as tensordot or from
 * gradient functions. They go through 'mf_op_call', so they work in eager and
 * graph mode and are recorded by tapes.
 *
 * The outputs are views: new headers over the input's storage (Reshape of a
 * non-contiguous input views a contiguous copy instead). Axes here are
 * 0-based; a negative axis counts from the end. Messages reported to the user
 * name axes 1-based, as the Lua API does. On success '*out' is an owned
 * reference; on failure it is NULL and a message is pending (err.h). */
#ifndef MF_OPS_VIEW_H
#define MF_OPS_VIEW_H

#include "../op.h"

/* Transpose: output axis i is input axis 'perm[i]'; 'perm' NULL (or
 * 'nperm' 0) reverses the axes. Errors: MF_EARG (not a permutation of the
 * axes), MF_ENOMEM. */
MfStatus mf_transpose(MfTensor *t, const int64_t *perm, int nperm, MfTensor **out);

/* Reshape to 'shape' (rank 'rank'); one entry may be -1 (inferred).
 * Errors: MF_ESHAPE (element counts differ, two -1, negative dims),
 * MF_ENOMEM. */
MfStatus mf_reshape(MfTensor *t, int rank, const int64_t *shape, MfTensor **out);

/* ExpandDims: inserts a size-1 axis before 'axis' (0..rank; negative:
 * -1 appends). Errors: MF_EARG (axis out of range, rank over 8), MF_ENOMEM. */
MfStatus mf_expand_dims(MfTensor *t, int64_t axis, MfTensor **out);

/* Squeeze: removes the listed size-1 axes, or every size-1 axis when
 * 'naxes' is 0. Errors: MF_EARG (axis out of range or listed twice),
 * MF_ESHAPE (an axis whose size is not 1), MF_ENOMEM. */
MfStatus mf_squeeze(MfTensor *t, const int64_t *axes, int naxes, MfTensor **out);

#endif
