/* shape.h — broadcasting and axis helpers shared by every op family. */
#ifndef MF_SHAPE_H
#define MF_SHAPE_H

#include <stdint.h>

#include "err.h"
#include "tensor.h"

/* NumPy broadcasting of two shapes (align trailing dims; 1 stretches; an
 * unknown dim -1 stays unknown unless the other side fixes it). On failure:
 * "WHO: shapes (2,3) and (3,2) do not broadcast". */
MfStatus mf_broadcast_shapes(const char *who, int ra, const int64_t *sa, int rb,
                             const int64_t *sb, int *rout, int64_t *sout);

/* Strides (in elements) for reading 't' as if it had shape 'sout' of rank
 * 'rout' (which 't' broadcasts to): stretched dims get stride 0. */
void mf_broadcast_strides(const MfTensor *t, int rout, const int64_t *sout, int64_t *strides);

/* An axis as the Lua face gives it: 1-based (1..n) or negative from the end
 * (-n..-1), where n = rank + 'extra' ('extra' 1: expand_dims and stack take
 * an axis after the last). Returns MF_OK with the 0-based axis in '*out',
 * else MF_EARG "WHO: axis 5 out of range for rank 2 (axes are 1-based:
 * 1..2, or -2..-1)" ("WHO: a scalar has no axes (got axis 1)" when n = 0). */
MfStatus mf_axis_one_based(const char *who, int64_t axis, int rank, int extra, int64_t *out);

/* True when both shapes are equal (ranks and dims). */
int mf_shape_equal(int ra, const int64_t *sa, int rb, const int64_t *sb);

/* True when two tensors have the same shape. */
static inline int mf_shape_equal_t(const MfTensor *a, const MfTensor *b)
{
    return mf_shape_equal(a->rank, a->shape, b->rank, b->shape);
}

#endif
