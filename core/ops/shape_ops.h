/* shape_ops.h — composite shape functions built from the shape ops of
 * core/ops/shape_ops.c (as TensorFlow composes them in Python): split and
 * unstack, which return a variable number of tensors, and one_hot with
 * TensorFlow's defaults.
 *
 * Axes are 0-based (negative counts from the end); error messages show them
 * 1-based, as a Lua user typed them. On failure no output is left over
 * (the caller has nothing to release). */
#ifndef MF_SHAPE_OPS_H
#define MF_SHAPE_OPS_H

#include <stdint.h>

#include "../op.h"

/* Splits 't' along 'axis' into 'n' parts: of equal size when 'sizes' is
 * NULL (then 'n' must divide the dim), else of sizes[0..n), where one entry
 * may be -1 (the rest). Every part is a Slice of 't' (a view). Fills
 * 'outs[0..n)' with owned references. Errors: MF_EARG (axis, n, sizes),
 * MF_ESHAPE (sizes that do not add up), MF_ENOMEM. */
MfStatus mf_split(MfTensor *t, int64_t axis, int64_t n, const int64_t *sizes, MfTensor **outs);

/* Unstacks 't' along 'axis': fills 'outs[0..t->shape[axis])' with owned
 * tensors of rank t->rank - 1 (each a GatherV2 with a scalar index). Errors:
 * MF_EARG (a scalar, a bad axis, an unknown dim), MF_ENOMEM. */
MfStatus mf_unstack(MfTensor *t, int64_t axis, MfTensor **outs);

/* OneHot of 0-based int 'indices' with 'depth' classes, float32 1/0 values,
 * the class axis last. '*out' is owned on success. */
MfStatus mf_one_hot(MfTensor *indices, int64_t depth, MfTensor **out);

#endif
