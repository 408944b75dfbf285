/* compare.h — helpers over the compare family (core/ops/compare.c) for other
 * families and gradient code: a cast and a select without filling MfAttrs.
 * Both go through 'mf_op_call', so they work in eager and graph mode. */
#ifndef MF_OPS_COMPARE_H
#define MF_OPS_COMPARE_H

#include "../op.h"

/* 'x' converted to 'dt' (the op Cast). On success '*out' is owned by the
 * caller; errors: MF_EARG (bad target), MF_ENOMEM. */
MfStatus mf_cast(MfTensor *x, MfDType dt, MfTensor **out);

/* Elementwise 'cond ? x : y' with broadcasting among all three (the op
 * SelectV2). On success '*out' is owned by the caller; errors: MF_EDTYPE
 * (cond not bool, x and y of different dtypes), MF_ESHAPE, MF_ENOMEM. */
MfStatus mf_where(MfTensor *cond, MfTensor *x, MfTensor *y, MfTensor **out);

#endif
