/* matmul_accumulate.h — a MatMul's weight gradient added in place by one
 * GEMM (matmul_accumulate.c). */
#ifndef MF_EAGER_MATMUL_ACCUMULATE_H
#define MF_EAGER_MATMUL_ACCUMULATE_H

#include <stdbool.h>

#include "core/op.h"
#include "core/tensor.h"

/* For a record of 'op' with 'attrs' (NULL: none set) computing y = op(a) op(b): when it is a
 * MatMul the walk may handle in place, adds the gradient of b (from 'dy')
 * into 'acc' (the gradient held for b, owned by the walk alone) with one
 * GEMM and returns true. False: nothing changed, take the op's gradient. */
bool mf_matmul_accumulate(MfOpId op, const MfAttrs *attrs, bool higher_order, MfTensor *a,
                          MfTensor *dy, MfTensor *acc);

#endif
