/* slice_accumulate.h — a Slice's gradient added in place (slice_accumulate.c). */
#ifndef MF_EAGER_SLICE_ACCUMULATE_H
#define MF_EAGER_SLICE_ACCUMULATE_H

#include <stdbool.h>

#include "core/op.h"
#include "core/tensor.h"

/* For a record of 'op' with 'attrs' reading 'x': when it is a Slice the walk
 * may handle in place, adds 'dy' into the window of '*acc' (the gradient
 * held for 'x', owned by the walk; NULL: a new zero tensor is made there)
 * and returns true. False: nothing changed, take the op's gradient. */
bool mf_slice_accumulate(MfOpId op, const MfAttrs *attrs, bool higher_order, MfTensor *x,
                         MfTensor *dy, MfTensor **acc);

/* True when the walk alone owns 't' (one reference to it and to its
 * storage, contiguous from offset 0): it may be written in place. */
bool mf_accumulator_owned(const MfTensor *t);

#endif
