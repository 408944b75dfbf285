/* explain.h — why a gradient is nil (or that it is not), over the records
 * of the backward walk (walk.h), for tape:explain and mf.explain_gradients.
 *
 * Two passes forward from the sources' keys: 'all' follows every record,
 * 'diff' only the records a gradient passes through, into their float
 * outputs (gradients live on float tensors only: a cast to int cuts the
 * path, as in TensorFlow). One pass backward from the target: 'leads', the
 * keys it depends on. The target in 'diff': connected. In 'all' only: a
 * record cut the path; the first one that reads 'diff', passes no gradient
 * (or gives no float output) and leads to the target is named. In neither:
 * the target does not depend on the sources. Each mode words the answer
 * (eager/explain.c, graph/explain.c). */
#ifndef MF_AUTODIFF_EXPLAIN_H
#define MF_AUTODIFF_EXPLAIN_H

#include "walk.h"

typedef enum MfAdVerdict {
    MF_AD_CONNECTED,   /* the gradient flows from the target to a source */
    MF_AD_CUT,         /* the target depends on a source, but a record cut the path */
    MF_AD_UNREACHED    /* the target does not depend on any source */
} MfAdVerdict;

typedef struct MfAdExplain {
    MfAdVerdict verdict;
    int64_t cut;        /* MF_AD_CUT: the record that cut the path (-1: none found) */
    MfIdMap all;        /* keys the sources reach through any record */
    MfIdMap diff;       /* keys the sources reach through records passing gradients */
    MfIdMap leads;      /* keys the target depends on */
} MfAdExplain;

/* Explains the gradient of 'target' for the 'nsources' keys 'sources' over
 * the 'n' records of 'ops' / 'self' (only 'describe' is called). 'e' is
 * filled on success; free it with mf_ad_explain_free in every case. */
MfStatus mf_ad_explain(const MfAdRecordsOps *ops, void *self, int64_t n, int nsources,
                       const MfAdKey *sources, MfAdKey target, MfAdExplain *e);
void mf_ad_explain_free(MfAdExplain *e);

#endif
