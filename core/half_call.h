/* half_call.h — the dispatcher's float16/bfloat16 path (half_call.c): ops
 * compute half tensors in float32, as Cast -> op -> Cast. */
#ifndef MF_HALF_CALL_H
#define MF_HALF_CALL_H

#include <stdbool.h>

#include "op.h"

/* Whether a call of 'op' on these inputs takes the half path: an input is
 * float16 or bfloat16 and the op is not Cast (which converts them itself). */
bool mf_half_call_wanted(MfOpId op, int n, MfTensor *const *inputs);

/* mf_op_call's contract, computed in float32. */
MfStatus mf_half_call(MfOpId op, int ninputs, MfTensor *const *inputs, const MfAttrs *attrs,
                      MfTensor **outs, int *noutputs);

#endif
