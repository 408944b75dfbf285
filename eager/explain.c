/* explain.c — 'mf_tape_explain': why a gradient is nil (or that it is not).
 *
 * The reasoning is the one of both modes, over the tape's records
 * (autodiff/explain.h); here it is worded for a tape: the record that cut
 * the path by its number, and when the target does not depend on the
 * source, whether the tape was stopped before it or a value on the path
 * left the tape as a Lua number. */
#include "tape_impl.h"

#include <stdio.h>

#include "autodiff/explain.h"
#include "core/grad.h"

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

/* Why record 'k' (-1: none found) cut the path. */
static void describe_cut(const MfTape *t, int64_t k, char *buf, size_t cap)
{
    if (k < 0) {
        snprintf(buf, cap, "a non-differentiable op cut the path from the source to the target");
        return;
    }
    const MfTapeRecord *rec = &t->recs[k];
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
    else if (!any_float(rec->noutputs, rec->outputs))
        snprintf(buf, cap, "the op '%s' (%s, record %lld) gives %s tensor, and no "
                 "gradient flows through integer or bool tensors", d->api, d->name,
                 (long long)k + 1, dtype_with_article(rec->outputs[0]->dtype));
    else
        snprintf(buf, cap, "the op '%s' (%s, record %lld) has no gradient defined yet, so "
                 "it cut the path from the source to the target", d->api, d->name,
                 (long long)k + 1);
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

/* When a tensor that the source reached had its value taken out to Lua
 * (item, totable) while the tape recorded, says so into 'buf'. */
static bool exported_on_path(const MfTape *t, const MfAdExplain *e, char *buf, size_t cap)
{
    for (int64_t k = 0; k < t->nrecs; k++) {
        const MfTapeRecord *rec = &t->recs[k];
        for (int i = 0; i < rec->noutputs; i++) {
            const MfTensor *o = rec->outputs[i];
            if (!mf_idmap_get(&e->all, o->id) || !mf_idmap_get(&t->exported, o->id))
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

static void conclude(const MfTape *t, const MfTensor *target, const MfAdExplain *e, char *buf,
                     size_t cap)
{
    if (e->verdict == MF_AD_CONNECTED)
        snprintf(buf, cap, "connected: the gradient flows from the target back to the source "
                 "through the recorded ops");
    else if (e->verdict == MF_AD_CUT)
        describe_cut(t, e->cut, buf, cap);
    else if (!mf_idmap_get(&t->live, target->id) && t->stop_id && target->id >= t->stop_id)
        snprintf(buf, cap, "the tape was stopped (tape:stop()) before the op that computed "
                 "the target ran, so that op was not recorded");
    else if (!exported_on_path(t, e, buf, cap))
        snprintf(buf, cap, "the source was never used in computing the target");
}

/* The ids the source stands for: the tensor's, or the variable's reads. */
static int64_t source_keys(const MfTape *t, const MfTapeSource *s, const MfAdKey **keys)
{
    if (!s->variable) {
        *keys = &s->tensor->id;
        return 1;
    }
    const MfVarReads *reads = mf_idmap_get(&t->vars, s->variable->id);
    *keys = reads ? reads->ids : NULL;
    return reads ? reads->n : 0;
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
    static const MfAdRecordsOps ops = {.who = "explain", .describe = mf_tape_describe};
    MfTapeRecords recs;
    mf_tape_records_init(&recs, t);
    const MfAdKey *keys;
    int64_t nkeys = source_keys(t, source, &keys);
    MfAdExplain e;
    MfStatus st = mf_ad_explain(&ops, &recs, t->nrecs, (int)nkeys, keys, target->id, &e);
    if (st == MF_OK)
        conclude(t, target, &e, buf, cap);
    else {
        snprintf(buf, cap, "explain: %s", mf_err_msg());
        mf_err_clear();
    }
    mf_ad_explain_free(&e);
    mf_tape_records_free(&recs);
}
