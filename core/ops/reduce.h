/* reduce.h — shorthands for calling the reduction ops (Sum, Mean, Max, Min,
 * Prod) and the arg-reductions (ArgMax, ArgMin) from C, e.g. from composite
 * functions such as clip_by_norm. They go through 'mf_op_call', so they work
 * in eager and graph mode and are recorded by tapes.
 *
 * Axes here are 0-based (a negative axis counts from the end). Messages
 * reported to the user name axes 1-based, as the Lua API does. */
#ifndef MF_OPS_REDUCE_H
#define MF_OPS_REDUCE_H

#include <stdbool.h>

#include "../op.h"

/* Reduces 't' with 'op' (MF_OP_SUM, MF_OP_MEAN, MF_OP_MAX, MF_OP_MIN or
 * MF_OP_PROD) over the 'naxes' axes in 'axes', or over every axis when
 * 'axes' is NULL. On success '*out' is an owned reference. Errors: MF_EARG
 * (bad or repeated axis, max/min/argmax of an empty axis), MF_EDTYPE (bool),
 * MF_ENOMEM. */
MfStatus mf_reduce(MfOpId op, MfTensor *t, const int64_t *axes, int naxes, bool keepdims,
                   MfTensor **out);

/* ArgMax / ArgMin ('op') of 't' along 'axis': an owned int64 tensor of
 * 1-based positions (the first one wins on ties; the first NaN wins). */
MfStatus mf_argreduce(MfOpId op, MfTensor *t, int64_t axis, MfTensor **out);

/* For reductions defined elsewhere (reduce_logic.c), reading the same
 * attributes (axes, naxes, all_axes, keepdims) of input 0: which dims are
 * reduced (errors name the op, axes 1-based), and the output spec (input
 * 0's dtype and shape with those dims dropped, or kept as 1). */
MfStatus mf_reduce_dims(const MfOpCall *c, bool *reduced);
void mf_reduce_spec(MfOpCall *c, const bool *reduced);

/* Their schema: axis (positional, absent: every axis), keepdims. */
#define MF_REDUCE_NATTRS 2
extern const MfAttrDef mf_reduce_attrs[MF_REDUCE_NATTRS];

#endif
