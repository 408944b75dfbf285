/* case_inputs.h — the inputs of a GradCase (grad_cases.h): a seeded
 * generator and the owned input tensors, shared by test_grad.c (gradient
 * checks) and graph_cases.h (graph versus eager walks). Included once per
 * test program. */
#ifndef MF_TEST_CASE_INPUTS_H
#define MF_TEST_CASE_INPUTS_H

#include <stdint.h>

#include "grad_cases.h"

static uint64_t gn_rng_state;

static double gn_rnd(double lo, double hi)
{
    uint64_t z = (gn_rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return lo + (hi - lo) * (double)(z >> 11) / 9007199254740992.0;
}

typedef struct GnInputs {
    int n;
    MfTensor *t[GC_MAX_INPUTS];
    MfAttrs attrs;
} GnInputs;

/* The case's inputs (owned, release with gn_release_n) and attributes. */
static void gn_inputs(const GradCase *gc, uint64_t seed, GnInputs *in)
{
    gn_rng_state = seed;
    in->n = gc->ninputs;
    in->attrs = mf_attrs_default();
    if (gc->attrs)
        gc->attrs(&in->attrs);
    for (int i = 0; i < gc->ninputs; i++) {
        MfTensor *t = mf_tensor_zeros(gc->dtype[i], gc->rank[i], gc->shape[i]);
        assert_non_null(t);
        if (gc->dtype[i] == MF_FLOAT64) {
            double *p = mf_tensor_data(t);
            for (int64_t j = 0; j < mf_tensor_numel(t); j++)
                p[j] = gn_rnd(gc->lo, gc->hi);
        }
        if (gc->values)
            gc->values(i, t);
        in->t[i] = t;
    }
}

static void gn_release_n(MfTensor **t, int n)
{
    for (int i = 0; i < n; i++) {
        mf_tensor_release(t[i]);
        t[i] = NULL;
    }
}

#endif
