/* explain.c — 'mf_tape_explain': why a gradient is nil (or that it is not).
 *
 * Two forward passes from the source ids over the records: 'all' follows
 * every record, 'diff' only the differentiable ones. The target in 'diff':
 * connected. In 'all' only: some non-differentiable record cut the path; the
 * first one that both touches 'diff' and leads to the target is named. In
 * neither: the source was not watched, never used, or the tape had stopped.
 * Gradients live on float tensors only, so 'diff' skips integer and bool
 * outputs (a cast to int cuts the path, as in TensorFlow). */
#include "tape_impl.h"

#include <stdio.h>

#include "core/grad.h"

typedef struct Reach {
    MfIdMap all, diff, leads;
} Reach;

static bool any_in(const MfIdMap *m, int n, MfTensor *const *ts)
{
    for (int i = 0; i < n; i++)
        if (mf_idmap_get(m, ts[i]->id))
            return true;
    return false;
}

static MfStatus put_all(MfIdMap *m, int n, MfTensor *const *ts)
{
    for (int i = 0; i < n; i++) {
        MfStatus st = mf_idmap_put(m, ts[i]->id, (void *)LIVE_WATCHED, "explain");
        if (st != MF_OK)
            return st;
    }
    return MF_OK;
}

/* The float outputs of 'rec' into 'm': the only ones a gradient reaches. */
static MfStatus put_float(MfIdMap *m, const MfTapeRecord *rec)
{
    for (int i = 0; i < rec->noutputs; i++) {
        if (!mf_dtype_is_float(rec->outputs[i]->dtype))
            continue;
        MfStatus st = mf_idmap_put(m, rec->outputs[i]->id, (void *)LIVE_WATCHED, "explain");
        if (st != MF_OK)
            return st;
    }
    return MF_OK;
}

/* "an int32", "a bool": for messages. */
static const char *dtype_with_article(MfDType dt)
{
    switch (dt) {
    case MF_INT32: return "an int32";
    case MF_INT64: return "an int64";
    case MF_BOOL: return "a bool";
    default: return mf_dtype_name(dt);
    }
}

static bool any_float(int n, MfTensor *const *ts)
{
    for (int i = 0; i < n; i++)
        if (mf_dtype_is_float(ts[i]->dtype))
            return true;
    return false;
}

static MfStatus forward(const MfTape *t, Reach *r)
{
    for (int64_t k = 0; k < t->nrecs; k++) {
        const MfTapeRecord *rec = &t->recs[k];
        MfTensor *const *in = mf_rec_inputs(rec);
        MfStatus st = MF_OK;
        if (any_in(&r->all, rec->ninputs, in))
            st = put_all(&r->all, rec->noutputs, rec->outputs);
        if (st == MF_OK && mf_rec_differentiable(rec) && any_in(&r->diff, rec->ninputs, in))
            st = put_float(&r->diff, rec);
        if (st != MF_OK)
            return st;
    }
    return MF_OK;
}

/* Ids the target depends on, walking backwards. */
static MfStatus backward(const MfTape *t, const MfTensor *target, Reach *r)
{
    MfStatus st = mf_idmap_put(&r->leads, target->id, (void *)LIVE_WATCHED, "explain");
    for (int64_t k = t->nrecs - 1; k >= 0 && st == MF_OK; k--) {
        const MfTapeRecord *rec = &t->recs[k];
        if (any_in(&r->leads, rec->noutputs, rec->outputs))
            st = put_all(&r->leads, rec->ninputs, mf_rec_inputs(rec));
    }
    return st;
}

static void describe_cut(const MfTape *t, const Reach *r, char *buf, size_t cap)
{
    for (int64_t k = 0; k < t->nrecs; k++) {
        const MfTapeRecord *rec = &t->recs[k];
        bool to_int = !any_float(rec->noutputs, rec->outputs);
        if ((mf_rec_differentiable(rec) && !to_int) ||
            !any_in(&r->diff, rec->ninputs, mf_rec_inputs(rec)) ||
            !any_in(&r->leads, rec->noutputs, rec->outputs))
            continue;
        const MfOpDesc *d = rec->op < MF_NOPS ? mf_op_table[rec->op] : NULL;
        if (!d)
            snprintf(buf, cap, "a custom gradient (record %lld) cut the path from the source to "
                     "the target", (long long)k + 1);
        else if (rec->op == MF_OP_STOP_GRADIENT)
            snprintf(buf, cap, "a stop_gradient (record %lld) cut the path from the source to "
                     "the target", (long long)k + 1);
        else if (d->flags & MF_OP_NONDIFF)
            snprintf(buf, cap, "the non-differentiable op '%s' (%s, record %lld) cut the path "
                     "from the source to the target", d->api, d->name, (long long)k + 1);
        else if (to_int)
            snprintf(buf, cap, "the op '%s' (%s, record %lld) gives %s tensor, and no "
                     "gradient flows through integer or bool tensors", d->api, d->name,
                     (long long)k + 1, dtype_with_article(rec->outputs[0]->dtype));
        else
            snprintf(buf, cap, "the op '%s' (%s, record %lld) has no gradient defined yet, so "
                     "it cut the path from the source to the target", d->api, d->name,
                     (long long)k + 1);
        return;
    }
    snprintf(buf, cap, "a non-differentiable op cut the path from the source to the target");
}

/* True when the tape watches the source (or, for a Variable, read it);
 * otherwise writes the reason into 'buf' and returns false. */
static bool source_watched(const MfTape *t, const MfTapeSource *s, char *buf, size_t cap)
{
    if (s->variable) {
        const MfVariable *v = s->variable;
        if (mf_idmap_get(&t->vars, v->id))
            return true;
        if (!v->trainable && !mf_idmap_get(&t->watched_vars, v->id))
            snprintf(buf, cap, "the Variable '%s' is not trainable, so the tape does not watch "
                     "it; call tape:watch(v) to watch it", v->name ? v->name : "?");
        else if (!t->watch_vars && !mf_idmap_get(&t->watched_vars, v->id))
            snprintf(buf, cap, "the Variable '%s' is not watched: the tape was created with "
                     "watch_accessed_variables = false; call tape:watch(v)",
                     v->name ? v->name : "?");
        else
            snprintf(buf, cap, "the Variable '%s' was never read while the tape was recording, "
                     "so it was not used in computing the target", v->name ? v->name : "?");
        return false;
    }
    if (mf_idmap_get(&t->live, s->tensor->id))
        return true;
    snprintf(buf, cap, "the source is not watched by this tape: call tape:watch(x) before "
             "computing with it (trainable Variables are watched automatically)");
    return false;
}

static MfStatus mark_source(const MfTape *t, const MfTapeSource *s, Reach *r)
{
    if (!s->variable) {
        MfStatus st = mf_idmap_put(&r->all, s->tensor->id, (void *)LIVE_WATCHED, "explain");
        return st == MF_OK ? put_all(&r->diff, 1, &s->tensor) : st;
    }
    const MfVarReads *reads = mf_idmap_get(&t->vars, s->variable->id);
    for (int64_t j = 0; reads && j < reads->n; j++) {
        MfStatus st = mf_idmap_put(&r->all, reads->ids[j], (void *)LIVE_WATCHED, "explain");
        if (st == MF_OK)
            st = mf_idmap_put(&r->diff, reads->ids[j], (void *)LIVE_WATCHED, "explain");
        if (st != MF_OK)
            return st;
    }
    return MF_OK;
}

/* When a tensor that the source reached had its value taken out to Lua
 * (item, totable) while the tape recorded, says so into 'buf'. */
static bool exported_on_path(const MfTape *t, const Reach *r, char *buf, size_t cap)
{
    for (int64_t k = 0; k < t->nrecs; k++) {
        const MfTapeRecord *rec = &t->recs[k];
        for (int i = 0; i < rec->noutputs; i++) {
            const MfTensor *o = rec->outputs[i];
            if (!mf_idmap_get(&r->all, o->id) || !mf_idmap_get(&t->exported, o->id))
                continue;
            snprintf(buf, cap, "the source reached the output of '%s' (record %lld), whose "
                     "value left the tape as a Lua number (:item() or :totable()); a tensor "
                     "made from that number starts a new history, so no gradient flows back: "
                     "keep the computation in tensor ops", mf_rec_name(rec), (long long)k + 1);
            return true;
        }
    }
    return false;
}

static void conclude(const MfTape *t, const MfTensor *target, const Reach *r, char *buf,
                     size_t cap)
{
    if (mf_idmap_get(&r->diff, target->id))
        snprintf(buf, cap, "connected: the gradient flows from the target back to the source "
                 "through the recorded ops");
    else if (mf_idmap_get(&r->all, target->id))
        describe_cut(t, r, buf, cap);
    else if (!mf_idmap_get(&t->live, target->id) && t->stop_id && target->id >= t->stop_id)
        snprintf(buf, cap, "the tape was stopped (tape:stop()) before the op that computed "
                 "the target ran, so that op was not recorded");
    else if (!exported_on_path(t, r, buf, cap))
        snprintf(buf, cap, "the source was never used in computing the target");
}

void mf_tape_explain(const MfTape *t, const MfTensor *target, const MfTapeSource *source,
                     char *buf, size_t cap)
{
    if (t->used) {
        snprintf(buf, cap, "this non-persistent tape gave its gradient already and released "
                 "its records; create it with {persistent = true} to ask again");
        return;
    }
    if (!source_watched(t, source, buf, cap))
        return;
    const MfTensor *sv = source->variable ? source->variable->value : source->tensor;
    if (sv && !mf_dtype_is_float(sv->dtype)) {
        snprintf(buf, cap, "the source is %s tensor: gradients are defined for float "
                 "tensors only (cast it to float32 or float64 first)",
                 dtype_with_article(sv->dtype));
        return;
    }
    Reach r = {{0}, {0}, {0}};
    MfStatus st = mark_source(t, source, &r);
    if (st == MF_OK)
        st = forward(t, &r);
    if (st == MF_OK)
        st = backward(t, target, &r);
    if (st == MF_OK)
        conclude(t, target, &r, buf, cap);
    else {
        snprintf(buf, cap, "explain: %s", mf_err_msg());
        mf_err_clear();
    }
    mf_idmap_free(&r.all);
    mf_idmap_free(&r.diff);
    mf_idmap_free(&r.leads);
}
