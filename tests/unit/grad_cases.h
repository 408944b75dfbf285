/* grad_cases.h — the format of gradient-check cases for tests/unit/test_grad.c.
 *
 * Each case names an op, its inputs (shapes, dtypes, value ranges) and its
 * attributes. test_grad.c runs the op in float64, compares its 'backward'
 * against central finite differences, and walks the op table to fail when a
 * differentiable op has no case. Engineers add cases in their own files:
 * grad_cases_math.h (elementwise, compare/select/cast, reductions) and
 * grad_cases_shape.h (linalg, views, shape ops). */
#ifndef MF_GRAD_CASES_H
#define MF_GRAD_CASES_H

#include <stdbool.h>

#include "core/op.h"

#define GC_MAX_INPUTS 10 /* ApplyAdam takes 10 */

typedef struct GradCase {
    MfOpId op;
    const char *label;                           /* what the case covers, for messages */
    int ninputs;
    int rank[GC_MAX_INPUTS];
    int64_t shape[GC_MAX_INPUTS][MF_MAX_RANK];
    MfDType dtype[GC_MAX_INPUTS];                /* MF_FLOAT64 for checked inputs; ints (indices) are not checked */
    double lo, hi;                               /* random float inputs are drawn in [lo, hi) */
    void (*attrs)(MfAttrs *a);                   /* fills attributes; NULL = defaults */
    void (*values)(int input, MfTensor *t);      /* optional: overrides input values (indices, bools) */
    bool second_order;                           /* also check the gradient of the gradient */
} GradCase;

#endif
