/* case_lists.h — every GradCase of the grad_cases_*.h files as one list of
 * lists, for the walks that run each case another way (test_jvp.c: forward
 * rules; test_batching.c: batching rules). Included once per test program. */
#ifndef MF_TEST_CASE_LISTS_H
#define MF_TEST_CASE_LISTS_H

#include "case_inputs.h"
#include "grad_cases.h"
#include "grad_cases_math.h"
#include "grad_cases_shape.h"
#include "grad_cases_nn.h"
#include "grad_cases_conv.h"
#include "grad_cases_more.h"
#include "grad_cases_linalg.h"

typedef struct CaseList {
    const GradCase *cases;
    size_t n;
} CaseList;

#define LIST(a) {a, sizeof a / sizeof a[0]}
static const CaseList lists[] = {LIST(cases_math), LIST(cases_shape), LIST(cases_nn),
                                 LIST(cases_conv), LIST(cases_more), LIST(cases_linalg)};
#undef LIST

#endif
