/* explain.c — why a gradient is nil, over the walk's records (explain.h). */
#include "explain.h"

#include <string.h>

#define MARK ((void *)(uintptr_t)1)

static bool any_in(const MfIdMap *m, int n, const MfAdKey *keys)
{
    for (int i = 0; i < n; i++)
        if (mf_idmap_get(m, keys[i]))
            return true;
    return false;
}

static bool float_output(const MfAdRecord *r, int j)
{
    return (r->float_outputs >> j) & 1u;
}

/* Marks the outputs of 'r' in 'm' (only the float ones when 'floats'). */
static MfStatus put_outputs(MfIdMap *m, const MfAdRecord *r, bool floats, const char *who)
{
    for (int j = 0; j < r->noutputs; j++) {
        MfStatus st = floats && !float_output(r, j) ? MF_OK
                      : mf_idmap_put(m, r->outputs[j], MARK, who);
        if (st != MF_OK)
            return st;
    }
    return MF_OK;
}

static MfStatus forward(const MfAdRecordsOps *ops, void *self, int64_t n, MfAdExplain *e)
{
    for (int64_t k = 0; k < n; k++) {
        MfAdRecord r;
        MfStatus st = ops->describe(self, k, &r);
        if (st == MF_OK && any_in(&e->all, r.ninputs, r.inputs))
            st = put_outputs(&e->all, &r, false, ops->who);
        if (st == MF_OK && r.passes && any_in(&e->diff, r.ninputs, r.inputs))
            st = put_outputs(&e->diff, &r, true, ops->who);
        if (st != MF_OK)
            return st;
    }
    return MF_OK;
}

static bool any_output_in(const MfIdMap *m, const MfAdRecord *r)
{
    for (int j = 0; j < r->noutputs; j++)
        if (mf_idmap_get(m, r->outputs[j]))
            return true;
    return false;
}

/* The keys the target depends on, walking backwards. */
static MfStatus backward(const MfAdRecordsOps *ops, void *self, int64_t n, MfAdKey target,
                         MfAdExplain *e)
{
    MfStatus st = mf_idmap_put(&e->leads, target, MARK, ops->who);
    for (int64_t k = n - 1; k >= 0 && st == MF_OK; k--) {
        MfAdRecord r;
        if ((st = ops->describe(self, k, &r)) != MF_OK || !any_output_in(&e->leads, &r))
            continue;
        for (int i = 0; i < r.ninputs && st == MF_OK; i++)
            st = mf_idmap_put(&e->leads, r.inputs[i], MARK, ops->who);
    }
    return st;
}

/* The first record that reads 'diff', passes no gradient (or gives no
 * float output) and leads to the target; -1 when none. */
static MfStatus find_cut(const MfAdRecordsOps *ops, void *self, int64_t n, MfAdExplain *e)
{
    e->cut = -1;
    for (int64_t k = 0; k < n; k++) {
        MfAdRecord r;
        MfStatus st = ops->describe(self, k, &r);
        if (st != MF_OK)
            return st;
        if ((r.passes && r.float_outputs) || !any_in(&e->diff, r.ninputs, r.inputs) ||
            !any_output_in(&e->leads, &r))
            continue;
        e->cut = k;
        return MF_OK;
    }
    return MF_OK;
}

MfStatus mf_ad_explain(const MfAdRecordsOps *ops, void *self, int64_t n, int nsources,
                       const MfAdKey *sources, MfAdKey target, MfAdExplain *e)
{
    memset(e, 0, sizeof *e);
    MfStatus st = MF_OK;
    for (int i = 0; i < nsources && st == MF_OK; i++) {
        st = mf_idmap_put(&e->all, sources[i], MARK, ops->who);
        if (st == MF_OK)
            st = mf_idmap_put(&e->diff, sources[i], MARK, ops->who);
    }
    if (st == MF_OK)
        st = forward(ops, self, n, e);
    if (st == MF_OK)
        st = backward(ops, self, n, target, e);
    if (st != MF_OK)
        return st;
    if (mf_idmap_get(&e->diff, target))
        e->verdict = MF_AD_CONNECTED;
    else if (mf_idmap_get(&e->all, target))
        e->verdict = MF_AD_CUT;
    else
        e->verdict = MF_AD_UNREACHED;
    return e->verdict == MF_AD_CUT ? find_cut(ops, self, n, e) : MF_OK;
}

void mf_ad_explain_free(MfAdExplain *e)
{
    mf_idmap_free(&e->all);
    mf_idmap_free(&e->diff);
    mf_idmap_free(&e->leads);
}
