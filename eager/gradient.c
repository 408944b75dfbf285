/* gradient.c — 'mf_tape_gradient': the backward walk over a tape's records.
 *
 * 1. Forward over the records, the ids reachable from the sources ('reach').
 * 2. Seed the target's gradient (ones, or 'output_gradient').
 * 3. Backward over the records: take the gradients of a record's outputs out
 *    of 'grads', run the op's gradient (or the custom function), and add the
 *    input gradients into 'grads' (AddV2 when one is already there).
 * The tape is 'busy' meanwhile, so it records nothing itself, while other
 * recording tapes write the gradient ops down (higher-order gradients).
 * Every tensor in the maps is owned by the walk and released at the end. */
#include "tape_impl.h"

#include <string.h>

#include "core/alloc.h"
#include "core/create.h"
#include "core/grad.h"
#include "core/shape.h"

#define STACK_INPUTS 16

typedef struct Walk {
    MfTape *t;
    MfIdMap reach;    /* ids that depend on a source */
    MfIdMap grads;    /* id -> accumulated gradient (owned) */
    MfIdMap sources;  /* source ids -> marker */
    MfIdMap kept;     /* source ids made by a record -> their final gradient (owned) */
} Walk;

static void release_map(MfIdMap *m)
{
    for (int64_t i = mf_idmap_next(m, 0); i >= 0; i = mf_idmap_next(m, i + 1))
        mf_tensor_release(m->vals[i]);
    mf_idmap_free(m);
}

static void walk_free(Walk *w)
{
    mf_idmap_free(&w->reach);
    mf_idmap_free(&w->sources);
    release_map(&w->grads);
    release_map(&w->kept);
}

static bool any_in(const MfIdMap *m, int n, MfTensor *const *ts)
{
    for (int i = 0; i < n; i++)
        if (mf_idmap_get(m, ts[i]->id))
            return true;
    return false;
}

/* The ids a source stands for: the tensor's, or every value read from the
 * variable on this tape. Returns how many (at most 'cap') through 'ids'. */
static int64_t source_ids(const MfTape *t, const MfTapeSource *s, const int64_t **ids,
                          int64_t *one)
{
    if (s->variable) {
        const MfVarReads *r = mf_idmap_get(&t->vars, s->variable->id);
        *ids = r ? r->ids : NULL;
        return r ? r->n : 0;
    }
    *one = s->tensor->id;
    *ids = one;
    return 1;
}

static MfStatus mark_sources(Walk *w, int n, const MfTapeSource *sources)
{
    for (int i = 0; i < n; i++) {
        const int64_t *ids;
        int64_t one;
        int64_t k = source_ids(w->t, &sources[i], &ids, &one);
        for (int64_t j = 0; j < k; j++) {
            MfStatus st = mf_idmap_put(&w->sources, ids[j], (void *)LIVE_WATCHED, "gradient");
            if (st == MF_OK)
                st = mf_idmap_put(&w->reach, ids[j], (void *)LIVE_WATCHED, "gradient");
            if (st != MF_OK)
                return st;
        }
    }
    const MfTape *t = w->t;
    for (int64_t k = 0; k < t->nrecs; k++) {
        const MfTapeRecord *r = &t->recs[k];
        if (!mf_rec_differentiable(r) || !any_in(&w->reach, r->ninputs, mf_rec_inputs(r)))
            continue;
        for (int j = 0; j < r->noutputs; j++) {
            MfStatus st = mf_idmap_put(&w->reach, r->outputs[j]->id, (void *)LIVE_WATCHED,
                                       "gradient");
            if (st != MF_OK)
                return st;
        }
    }
    return MF_OK;
}

/* Adds 'g' (owned) to the gradient accumulated for 'x'. */
static MfStatus accumulate(Walk *w, const MfTapeRecord *r, int i, MfTensor *x, MfTensor *g)
{
    if (!mf_shape_equal_t(g, x) || g->dtype != x->dtype) {
        char a[64], b[64];
        mf_shape_str(g->rank, g->shape, a, sizeof a);
        mf_shape_str(x->rank, x->shape, b, sizeof b);
        MfDType dt = g->dtype;
        mf_tensor_release(g);
        return mf_err_set(MF_EINTERNAL, "gradient: the gradient of '%s' for input %d has "
                          "shape %s (%s), expected %s (%s)", mf_rec_name(r), i + 1, a,
                          mf_dtype_name(dt), b, mf_dtype_name(x->dtype));
    }
    MfTensor *old = mf_idmap_get(&w->grads, x->id);
    if (old) {
        MfTensor *sum = NULL;
        MfStatus st = mf_binary(MF_OP_ADD, old, g, &sum);
        mf_tensor_release(g);
        if (st != MF_OK)
            return st;
        mf_tensor_release(old);
        g = sum;
    }
    /* Replacing an existing entry cannot fail. */
    MfStatus st = mf_idmap_put(&w->grads, x->id, g, "gradient");
    if (st != MF_OK)
        mf_tensor_release(g);
    return st;
}

/* Runs the gradient of one record: an op's 'backward' or a custom function
 * (which gets zeros for unconnected outputs). */
static MfStatus run_backward(const MfTapeRecord *r, MfTensor **dout, MfTensor **din,
                             const bool *needs)
{
    MfTensor *const *in = mf_rec_inputs(r);
    for (int i = 0; i < r->ninputs; i++)
        din[i] = NULL;
    if (!r->fn) {
        static const MfAttrs no_attrs;
        MfOpCall c = {.op = r->op, .ninputs = r->ninputs, .inputs = in,
                      .attrs = r->attrs ? r->attrs : &no_attrs, .noutputs = r->noutputs};
        for (int j = 0; j < r->noutputs; j++) {
            const MfTensor *o = r->outputs[j];
            c.out[j].dtype = o->dtype;
            c.out[j].rank = o->rank;
            memcpy(c.out[j].shape, o->shape, sizeof o->shape);
        }
        MfGradCall g = {.call = &c, .outputs = r->outputs, .doutputs = dout, .needs = needs,
                        .override = r->override};
        return mf_grad_call(&g, din);
    }
    for (int j = 0; j < r->noutputs; j++) {
        const MfTensor *o = r->outputs[j];
        MfStatus st;
        if (!dout[j] && (st = mf_create_fill(r->fn->name, o->dtype, o->rank, o->shape, 0.0,
                                             &dout[j])) != MF_OK)
            return st;
    }
    MfStatus st = r->fn->backward(r->fn, r->noutputs, dout, r->ninputs, in, din);
    if (st != MF_OK)
        for (int i = 0; i < r->ninputs; i++) {
            mf_tensor_release(din[i]);
            din[i] = NULL;
        }
    return st;
}

/* Takes the output gradients of record 'r' (keeping those of sources). */
static bool take_outputs(Walk *w, const MfTapeRecord *r, MfTensor **dout)
{
    bool any = false;
    for (int j = 0; j < MF_MAX_OUTPUTS; j++)
        dout[j] = NULL;
    for (int j = 0; j < r->noutputs; j++) {
        int64_t id = r->outputs[j]->id;
        dout[j] = mf_idmap_take(&w->grads, id);
        if (dout[j] && mf_idmap_get(&w->sources, id)) {
            mf_tensor_retain(dout[j]);
            if (mf_idmap_put(&w->kept, id, dout[j], "gradient") != MF_OK) {
                mf_tensor_release(dout[j]);
                mf_err_clear();
            }
        }
        any = any || dout[j];
    }
    return any;
}

static MfStatus step(Walk *w, const MfTapeRecord *r, MfTensor **din)
{
    MfTensor *const *in = mf_rec_inputs(r);
    MfTensor *dout[MF_MAX_OUTPUTS];
    if (!any_in(&w->reach, r->ninputs, in) || !take_outputs(w, r, dout))
        return MF_OK;
    /* Only inputs on a path to a source need a gradient (NULL: all, for
     * long input lists). */
    bool needs_buf[8];
    const bool *needs = NULL;
    if (r->ninputs <= 8) {
        for (int i = 0; i < r->ninputs; i++)
            needs_buf[i] = mf_idmap_get(&w->reach, in[i]->id) != NULL;
        needs = needs_buf;
    }
    MfStatus st = run_backward(r, dout, din, needs);
    for (int j = 0; j < r->noutputs; j++)
        mf_tensor_release(dout[j]);
    for (int i = 0; i < r->ninputs; i++) {
        MfTensor *g = din[i];
        din[i] = NULL;
        if (!g)
            continue;
        if (st != MF_OK || !mf_idmap_get(&w->reach, in[i]->id)) {
            mf_tensor_release(g);
            continue;
        }
        st = accumulate(w, r, i, in[i], g);
    }
    return st;
}

static MfStatus walk_back(Walk *w)
{
    MfTensor *stack_din[STACK_INPUTS];
    for (int64_t k = w->t->nrecs - 1; k >= 0; k--) {
        const MfTapeRecord *r = &w->t->recs[k];
        MfTensor **din = stack_din;
        size_t bytes = (size_t)r->ninputs * sizeof *din;
        if (r->ninputs > STACK_INPUTS && !(din = mf_alloc(bytes)))
            return mf_err_nomem("gradient", bytes);
        MfStatus st = step(w, r, din);
        if (din != stack_din)
            mf_dealloc(din, bytes);
        if (st != MF_OK)
            return st;
        if (mf_interrupted)
            return mf_err_set(MF_EINTR, "gradient: interrupted");
    }
    return MF_OK;
}

/* The seed: 'output_gradient' (checked against the target) or ones. */
static MfStatus seed(Walk *w, MfTensor *target, MfTensor *og)
{
    MfTensor *s = NULL;
    MfStatus st;
    if (og) {
        if (!mf_shape_equal_t(og, target) || og->dtype != target->dtype) {
            char a[64], b[64];
            mf_shape_str(og->rank, og->shape, a, sizeof a);
            mf_shape_str(target->rank, target->shape, b, sizeof b);
            return mf_err_set(MF_EARG, "gradient: output_gradients has shape %s (%s) but the "
                              "target has shape %s (%s)", a, mf_dtype_name(og->dtype), b,
                              mf_dtype_name(target->dtype));
        }
        mf_tensor_retain(og);
        s = og;
    } else if ((st = mf_create_fill("gradient", target->dtype, target->rank, target->shape,
                                    1.0, &s)) != MF_OK) {
        return st;
    }
    st = mf_idmap_put(&w->grads, target->id, s, "gradient");
    if (st != MF_OK)
        mf_tensor_release(s);
    return st;
}

/* The gradient of one source: the sum over the ids it stands for, or NULL
 * (zeros when 'zero'). */
static MfStatus collect(Walk *w, const MfTapeSource *s, bool zero, MfTensor **out)
{
    const int64_t *ids;
    int64_t one;
    int64_t n = source_ids(w->t, s, &ids, &one);
    MfTensor *sum = NULL;
    for (int64_t j = 0; j < n; j++) {
        MfTensor *g = mf_idmap_get(&w->kept, ids[j]);
        if (!g)
            g = mf_idmap_get(&w->grads, ids[j]);
        if (!g)
            continue;
        if (!sum) {
            mf_tensor_retain(g);
            sum = g;
            continue;
        }
        MfTensor *next = NULL;
        MfStatus st = mf_binary(MF_OP_ADD, sum, g, &next);
        mf_tensor_release(sum);
        if (st != MF_OK)
            return st;
        sum = next;
    }
    MfTensor *like = s->variable ? s->variable->value : s->tensor;
    if (!sum && zero && like)
        return mf_create_fill("gradient", like->dtype, like->rank, like->shape, 0.0, out);
    *out = sum;
    return MF_OK;
}

static bool is_float(MfDType dt)
{
    return dt == MF_FLOAT32 || dt == MF_FLOAT64;
}

static MfStatus compute(Walk *w, MfTensor *target, int n, const MfTapeSource *sources,
                        MfTensor *og, bool zero, MfTensor **grads)
{
    MfStatus st = mark_sources(w, n, sources);
    if (st == MF_OK && is_float(target->dtype)) {
        if ((st = seed(w, target, og)) == MF_OK) {
            w->t->busy = true;
            st = walk_back(w);
            w->t->busy = false;
        }
    }
    for (int i = 0; i < n && st == MF_OK; i++)
        st = collect(w, &sources[i], zero, &grads[i]);
    return st;
}

MfStatus mf_tape_gradient(MfTape *t, MfTensor *target, int nsources,
                          const MfTapeSource *sources, MfTensor *output_gradient,
                          bool unconnected_zero, MfTensor **grads)
{
    for (int i = 0; i < nsources; i++)
        grads[i] = NULL;
    if (t->used)
        return mf_err_set(MF_EARG, "gradient: a non-persistent GradientTape can only be used "
                          "once; create it with {persistent = true}");
    if (t->busy)
        return mf_err_set(MF_EARG, "gradient: this tape is already computing a gradient");
    if (t->lost_read)
        return mf_err_set(MF_ENOMEM, "gradient: out of memory while recording: a variable "
                          "read could not be watched, so its gradient would be missing");
    Walk w;
    memset(&w, 0, sizeof w);
    w.t = t;
    MfStatus st = compute(&w, target, nsources, sources, output_gradient, unconnected_zero,
                          grads);
    walk_free(&w);
    if (st != MF_OK)
        for (int i = 0; i < nsources; i++) {
            mf_tensor_release(grads[i]);
            grads[i] = NULL;
        }
    if (!t->persistent) {
        t->used = true;
        mf_tape_stop(t);
        mf_tape_clear(t);
    }
    return st;
}
