/* tape.c — gradient tapes: creation, the list of recording tapes, the
 * recorder registered with the dispatcher, watching, and the records.
 *
 * Invariants: a tape is in 'active' exactly while it records; the recorder is
 * registered exactly while 'nactive > 0'. A record retains its inputs and
 * outputs (and its custom function); 'mf_tape_clear' releases them. The
 * backward walk lives in gradient.c, 'explain' in explain.c. */
#include "tape_impl.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/grad.h"
#include "core/grad_registry.h"

static MfTape **active;         /* recording tapes, oldest first */
static int nactive, capactive;
static int suspended;           /* 'mf_tape_suspend' depth */
static int64_t live_tapes;

static MfStatus record_op(void *self, const MfOpCall *c, MfTensor *const *outs);
static void on_variable_read(MfVariable *v);

static const MfRecorder recorder = {.record = record_op, .self = NULL};

static MfStatus activate(MfTape *t)
{
    if (nactive == capactive) {
        int cap = capactive ? capactive * 2 : 8;
        MfTape **a = mf_alloc((size_t)cap * sizeof *a);
        if (!a)
            return mf_err_nomem("GradientTape", (unsigned long long)cap * sizeof *a);
        if (nactive)
            memcpy(a, active, (size_t)nactive * sizeof *a);
        if (capactive)
            mf_dealloc(active, (size_t)capactive * sizeof *a);
        active = a;
        capactive = cap;
    }
    active[nactive++] = t;
    t->active = true;
    if (nactive == 1)
        mf_op_set_recorder(&recorder);
    return MF_OK;
}

static void deactivate(MfTape *t)
{
    if (!t->active)
        return;
    for (int i = 0; i < nactive; i++) {
        if (active[i] == t) {
            memmove(active + i, active + i + 1, (size_t)(nactive - i - 1) * sizeof *active);
            nactive--;
            break;
        }
    }
    t->active = false;
    if (nactive == 0)
        mf_op_set_recorder(NULL);
}

MfTape *mf_tape_new(bool persistent, bool watch_accessed_variables)
{
    static bool hook_installed;
    MfTape *t = mf_alloc_zeroed(sizeof *t);
    if (!t) {
        mf_err_nomem("GradientTape", sizeof *t);
        return NULL;
    }
    t->refcount = 1;
    t->persistent = persistent;
    t->watch_vars = watch_accessed_variables;
    if (activate(t) != MF_OK) {
        mf_dealloc(t, sizeof *t);
        return NULL;
    }
    if (!hook_installed) {
        mf_variable_set_read_hook(on_variable_read);
        hook_installed = true;
    }
    live_tapes++;
    return t;
}

void mf_tape_retain(MfTape *t)
{
    t->refcount++;
}

void mf_tape_release(MfTape *t)
{
    if (!t || --t->refcount > 0)
        return;
    deactivate(t);
    mf_tape_clear(t);
    mf_dealloc(t, sizeof *t);
    live_tapes--;
}

int64_t mf_tape_live_count(void)
{
    return live_tapes;
}

void mf_tape_stop(MfTape *t)
{
    if (t->active)   /* tensors made from now on have larger ids: 'explain' uses this */
        t->stop_id = mf_tensor_next_id();
    deactivate(t);
}

bool mf_tape_recording(const MfTape *t)
{
    return t->active;
}

bool mf_tape_persistent(const MfTape *t)
{
    return t->persistent;
}

void mf_tape_suspend(void)
{
    suspended++;
}

void mf_tape_resume(void)
{
    if (suspended > 0)
        suspended--;
}

bool mf_tape_any_recording(void)
{
    if (suspended)
        return false;
    for (int i = 0; i < nactive; i++)
        if (!active[i]->busy && !active[i]->paused)
            return true;
    return false;
}

MfStatus mf_tape_watch(MfTape *t, MfTensor *x)
{
    if (!mf_grad_is_float(x->dtype) || mf_idmap_get(&t->live, x->id))
        return MF_OK;
    return mf_idmap_put(&t->live, x->id, (void *)LIVE_WATCHED, "watch");
}

/* Remembers that 'value' was read from 'v' on 't' and watches it. */
static MfStatus watch_read(MfTape *t, MfVariable *v, MfTensor *value)
{
    MfVarReads *r = mf_idmap_get(&t->vars, v->id);
    if (!r) {
        if (!(r = mf_alloc_zeroed(sizeof *r)))
            return mf_err_nomem("watch", sizeof *r);
        MfStatus st = mf_idmap_put(&t->vars, v->id, r, "watch");
        if (st != MF_OK) {
            mf_dealloc(r, sizeof *r);
            return st;
        }
        mf_variable_retain(v);
        r->var = v;
    }
    for (int64_t i = 0; i < r->n; i++)
        if (r->ids[i] == value->id)
            return mf_tape_watch(t, value);
    if (r->n == r->cap) {
        int64_t cap = r->cap ? r->cap * 2 : 4;
        int64_t *ids = mf_alloc((size_t)cap * sizeof *ids);
        if (!ids)
            return mf_err_nomem("watch", (unsigned long long)cap * sizeof *ids);
        if (r->n)
            memcpy(ids, r->ids, (size_t)r->n * sizeof *ids);
        if (r->cap)
            mf_dealloc(r->ids, (size_t)r->cap * sizeof *ids);
        r->ids = ids;
        r->cap = cap;
    }
    r->ids[r->n++] = value->id;
    return mf_tape_watch(t, value);
}

MfStatus mf_tape_watch_variable(MfTape *t, MfVariable *v)
{
    MfStatus st = mf_idmap_put(&t->watched_vars, v->id, (void *)LIVE_WATCHED, "watch");
    if (st == MF_OK && v->value)
        st = watch_read(t, v, v->value);
    return st;
}

MfStatus mf_tape_watch_sources(MfTape *t, int n, const MfTapeSource *src)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < n && st == MF_OK; i++)
        st = src[i].variable ? mf_tape_watch_variable(t, src[i].variable)
                             : mf_tape_watch(t, src[i].tensor);
    return st;
}

void mf_tape_drop_integer_grads(int n, const MfTapeSource *src, MfTensor **grads)
{
    for (int i = 0; i < n; i++) {
        const MfTensor *v = src[i].variable ? src[i].variable->value : src[i].tensor;
        if (grads[i] && v && !mf_dtype_is_float(v->dtype)) {
            mf_tensor_release(grads[i]);
            grads[i] = NULL;
        }
    }
}

static void on_variable_read(MfVariable *v)
{
    if (suspended || !v->value)
        return;
    for (int i = 0; i < nactive; i++) {
        MfTape *t = active[i];
        if (t->busy || t->paused)
            continue;
        if ((t->watch_vars && v->trainable) || mf_idmap_get(&t->watched_vars, v->id)) {
            if (v->trainable)
                mf_tape_note_custom_read_(v);
            /* The hook cannot fail: on ENOMEM the read is not watched, and the
             * tape remembers it so 'gradient' reports the out of memory
             * instead of a silently missing gradient. */
            if (watch_read(t, v, v->value) != MF_OK) {
                mf_err_clear();
                t->lost_read = true;
            }
        }
    }
}

static const MfAttrs zero_attrs;

static void release_record(MfTapeRecord *r)
{
    MfTensor *const *in = mf_rec_inputs(r);
    for (int i = 0; i < r->ninputs; i++)
        mf_tensor_release(in[i]);
    for (int i = 0; i < r->noutputs; i++)
        mf_tensor_release(r->outputs[i]);
    if (r->in_heap)
        mf_dealloc(r->in_heap, (size_t)r->ninputs * sizeof *r->in_heap);
    if (r->attrs)
        mf_dealloc(r->attrs, sizeof *r->attrs);
    mf_tape_function_release(r->fn);
}

static MfStatus grow_records(MfTape *t)
{
    int64_t cap = t->caprecs ? t->caprecs * 2 : 16;
    MfTapeRecord *recs = mf_alloc((size_t)cap * sizeof *recs);
    if (!recs)
        return mf_err_nomem("GradientTape", (unsigned long long)cap * sizeof *recs);
    if (t->nrecs)
        memcpy(recs, t->recs, (size_t)t->nrecs * sizeof *recs);
    if (t->caprecs)
        mf_dealloc(t->recs, (size_t)t->caprecs * sizeof *recs);
    t->recs = recs;
    t->caprecs = cap;
    return MF_OK;
}

/* Appends one record to 't' (retaining its tensors) and marks the outputs. */
static MfStatus push_record(MfTape *t, MfOpId op, MfTapeFunction *fn, int nin,
                            MfTensor *const *in, int nout, MfTensor *const *outs,
                            const MfAttrs *attrs)
{
    MfStatus st;
    if (t->nrecs == t->caprecs && (st = grow_records(t)) != MF_OK)
        return st;
    MfTapeRecord *r = &t->recs[t->nrecs];
    r->in_heap = NULL;
    if (nin > REC_INLINE && !(r->in_heap = mf_alloc((size_t)nin * sizeof *in)))
        return mf_err_nomem("GradientTape", (unsigned long long)nin * sizeof *in);
    for (int k = 0; k < nout; k++) {
        uintptr_t mark = LIVE_RECORD + (uintptr_t)t->nrecs;
        if ((st = mf_idmap_put(&t->live, outs[k]->id, (void *)mark, "GradientTape")) != MF_OK) {
            if (r->in_heap)
                mf_dealloc(r->in_heap, (size_t)nin * sizeof *in);
            return st;
        }
    }
    r->op = op;
    r->fn = fn;
    r->override = fn ? NULL : mf_grad_override(op);
    if (fn)
        fn->refcount++;
    r->ninputs = nin;
    r->noutputs = nout;
    MfTensor **dst = r->in_heap ? r->in_heap : r->in_inline;
    for (int k = 0; k < nin; k++) {
        dst[k] = in[k];
        mf_tensor_retain(in[k]);
    }
    for (int k = 0; k < nout; k++) {
        r->outputs[k] = outs[k];
        mf_tensor_retain(outs[k]);
    }
    r->attrs = NULL;
    if (attrs && memcmp(attrs, &zero_attrs, sizeof zero_attrs) != 0) {
        /* Most ops take no attributes: copying 400 bytes per record would
         * cost more than the rest of recording. */
        if (!(r->attrs = mf_alloc(sizeof *attrs))) {
            release_record(r);
            return mf_err_nomem("GradientTape", sizeof *attrs);
        }
        *r->attrs = *attrs;
    }
    t->nrecs++;
    return MF_OK;
}

/* True when an input is watched by 't' or made by one of its records, and
 * no output is an input (an op that hands its input back adds nothing). */
static bool wants(const MfTape *t, int nin, MfTensor *const *in, int nout,
                  MfTensor *const *outs)
{
    bool any = false;
    for (int i = 0; i < nin && !any; i++)
        any = mf_idmap_get(&t->live, in[i]->id) != NULL;
    if (!any)
        return false;
    for (int k = 0; k < nout; k++)
        for (int i = 0; i < nin; i++)
            if (outs[k] == in[i])
                return false;
    return true;
}

static MfStatus record_op(void *self, const MfOpCall *c, MfTensor *const *outs)
{
    (void)self;
    if (suspended)
        return MF_OK;
    for (int i = 0; i < nactive; i++) {
        MfTape *t = active[i];
        if (t->busy || t->paused || !wants(t, c->ninputs, c->inputs, c->noutputs, outs))
            continue;
        MfStatus st = push_record(t, c->op, NULL, c->ninputs, c->inputs, c->noutputs, outs,
                                  c->attrs);
        if (st != MF_OK)
            return st;
    }
    return MF_OK;
}

MfStatus mf_tape_record_function(MfTapeFunction *f, int ninputs, MfTensor *const *inputs,
                                 int noutputs, MfTensor *const *outputs)
{
    if (noutputs > MF_MAX_OUTPUTS)
        return mf_err_set(MF_EARG, "%s: at most %d outputs, got %d", f->name, MF_MAX_OUTPUTS,
                          noutputs);
    if (suspended)
        return MF_OK;
    for (int i = 0; i < nactive; i++) {
        MfTape *t = active[i];
        if (t->busy || t->paused || !wants(t, ninputs, inputs, noutputs, outputs))
            continue;
        MfStatus st = push_record(t, MF_NOPS, f, ninputs, inputs, noutputs, outputs, NULL);
        if (st != MF_OK)
            return st;
    }
    return MF_OK;
}

void mf_tape_function_release(MfTapeFunction *f)
{
    if (f && --f->refcount == 0)
        f->free(f);
}

void mf_tape_pause(MfTape *t)
{
    t->paused++;
}

void mf_tape_unpause(MfTape *t)
{
    if (t->paused > 0)
        t->paused--;
}

void mf_tape_reset(MfTape *t)
{
    mf_tape_clear(t);
    t->used = false;
    t->lost_read = false;
}

void mf_tape_clear_records(MfTape *t)
{
    for (int64_t k = 0; k < t->nrecs; k++)
        release_record(&t->recs[k]);
    if (t->caprecs)
        mf_dealloc(t->recs, (size_t)t->caprecs * sizeof *t->recs);
    t->recs = NULL;
    t->nrecs = t->caprecs = 0;
    mf_idmap_free(&t->live);
}

void mf_tape_clear(MfTape *t)
{
    mf_tape_clear_records(t);
    for (int64_t i = mf_idmap_next(&t->vars, 0); i >= 0; i = mf_idmap_next(&t->vars, i + 1)) {
        MfVarReads *r = t->vars.vals[i];
        mf_variable_release(r->var);
        if (r->cap)
            mf_dealloc(r->ids, (size_t)r->cap * sizeof *r->ids);
        mf_dealloc(r, sizeof *r);
    }
    mf_idmap_free(&t->vars);
    mf_idmap_free(&t->watched_vars);
    mf_idmap_free(&t->exported);
}

void mf_tape_note_export(const MfTensor *x)
{
    for (int i = 0; i < nactive; i++)
        if (mf_idmap_get(&active[i]->live, x->id) &&
            mf_idmap_put(&active[i]->exported, x->id, (void *)LIVE_WATCHED, "item") != MF_OK)
            mf_err_clear();   /* only 'explain' reads it: a lost note costs a hint */
}

int64_t mf_tape_variables(const MfTape *t, MfVariable **out, int64_t cap)
{
    int64_t n = 0;
    for (int64_t i = mf_idmap_next(&t->vars, 0); i >= 0; i = mf_idmap_next(&t->vars, i + 1)) {
        if (n < cap)
            out[n] = ((MfVarReads *)t->vars.vals[i])->var;
        n++;
    }
    for (int64_t i = 1; i < n && n <= cap; i++)   /* insertion sort by id */
        for (int64_t j = i; j > 0 && out[j - 1]->id > out[j]->id; j--) {
            MfVariable *tmp = out[j];
            out[j] = out[j - 1];
            out[j - 1] = tmp;
        }
    return n;
}

int64_t mf_tape_count(const MfTape *t)
{
    return t->nrecs;
}

MfTapeEntry mf_tape_entry(const MfTape *t, int64_t k)
{
    const MfTapeRecord *r = &t->recs[k];
    MfTapeEntry e = {.name = mf_rec_name(r), .ninputs = r->ninputs, .noutputs = r->noutputs,
                     .inputs = mf_rec_inputs(r), .outputs = r->outputs, .custom = r->fn != NULL,
                     .gradient = r->override ? r->override->name : NULL};
    e.attrs[0] = '\0';
    if (r->attrs && r->op < MF_NOPS)
        mf_attrs_format(r->op, r->attrs, e.ninputs ? e.inputs[0]->rank : -1, e.attrs,
                        sizeof e.attrs);
    return e;
}

/* The Variable whose read 'id' is on the tape, or NULL. */
static const MfVariable *reader_of(const MfTape *t, int64_t id)
{
    for (int64_t i = mf_idmap_next(&t->vars, 0); i >= 0; i = mf_idmap_next(&t->vars, i + 1)) {
        const MfVarReads *r = t->vars.vals[i];
        for (int64_t j = 0; j < r->n; j++)
            if (r->ids[j] == id)
                return r->var;
    }
    return NULL;
}

void mf_tape_label(const MfTape *t, const MfTensor *x, char *buf, size_t cap)
{
    uintptr_t mark = (uintptr_t)mf_idmap_get(&t->live, x->id);
    const MfVariable *v = reader_of(t, x->id);
    if (v) {
        snprintf(buf, cap, "%s", v->name ? v->name : "Variable");
    } else if (mark >= LIVE_RECORD && (int64_t)(mark - LIVE_RECORD) < t->nrecs) {
        int64_t k = (int64_t)(mark - LIVE_RECORD);
        const MfTapeRecord *r = &t->recs[k];
        int j = 0;
        while (j < r->noutputs && r->outputs[j]->id != x->id)
            j++;
        if (r->noutputs > 1)
            snprintf(buf, cap, "t%lld:%d", (long long)k + 1, j + 1);
        else
            snprintf(buf, cap, "t%lld", (long long)k + 1);
    } else if (mark == LIVE_WATCHED) {
        snprintf(buf, cap, "watched");
    } else if (x->storage && mf_tensor_numel(x) == 1) {
        snprintf(buf, cap, "%.4g", mf_tensor_get(x, 0));
    } else {
        snprintf(buf, cap, "const");
    }
}
