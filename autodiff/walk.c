/* walk.c — the one backward walk (see walk.h). */
#include "walk.h"

#include <string.h>

#include "core/alloc.h"
#include "core/numerics.h"
#include "core/op.h"

#define STACK_INPUTS 16
#define MARK ((void *)(uintptr_t)1)

void mf_ad_walk_init(MfAdWalk *w, const MfAdRecordsOps *ops, void *self, int64_t n)
{
    *w = (MfAdWalk){.ops = ops, .self = self, .nrecords = n};
}

static void release_map(MfIdMap *m)
{
    for (int64_t i = mf_idmap_next(m, 0); i >= 0; i = mf_idmap_next(m, i + 1))
        mf_tensor_release(m->vals[i]);
    mf_idmap_free(m);
}

void mf_ad_walk_free(MfAdWalk *w)
{
    mf_idmap_free(&w->reach);
    mf_idmap_free(&w->sources);
    release_map(&w->grads);
    release_map(&w->kept);
}

MfStatus mf_ad_walk_source(MfAdWalk *w, MfAdKey key)
{
    MfStatus st = mf_idmap_put(&w->sources, key, MARK, w->ops->who);
    return st == MF_OK ? mf_idmap_put(&w->reach, key, MARK, w->ops->who) : st;
}

bool mf_ad_walk_reached(const MfAdWalk *w, MfAdKey key)
{
    return mf_idmap_get(&w->reach, key) != NULL;
}

static bool any_reached(const MfAdWalk *w, const MfAdRecord *r)
{
    for (int i = 0; i < r->ninputs; i++)
        if (mf_ad_walk_reached(w, r->inputs[i]))
            return true;
    return false;
}

MfStatus mf_ad_walk_mark(MfAdWalk *w)
{
    for (int64_t k = 0; k < w->nrecords; k++) {
        MfAdRecord r;
        MfStatus st = w->ops->describe(w->self, k, &r);
        if (st != MF_OK)
            return st;
        if (!r.passes || !any_reached(w, &r))
            continue;
        for (int j = 0; j < r.noutputs; j++)
            if ((st = mf_idmap_put(&w->reach, r.outputs[j], MARK, w->ops->who)) != MF_OK)
                return st;
    }
    return MF_OK;
}

MfStatus mf_ad_walk_add(MfAdWalk *w, MfAdKey key, MfTensor *g)
{
    MfTensor *old = mf_idmap_get(&w->grads, key);
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
    MfStatus st = mf_idmap_put(&w->grads, key, g, w->ops->who);
    if (st != MF_OK)
        mf_tensor_release(g);
    return st;
}

MfTensor *mf_ad_walk_gradient(const MfAdWalk *w, MfAdKey key)
{
    MfTensor *g = mf_idmap_get(&w->kept, key);
    return g ? g : mf_idmap_get(&w->grads, key);
}

MfTensor *mf_ad_walk_held(const MfAdWalk *w, MfAdKey key)
{
    return mf_idmap_get(&w->grads, key);
}

MfStatus mf_ad_walk_hold(MfAdWalk *w, MfAdKey key, MfTensor *fresh)
{
    return mf_idmap_put(&w->grads, key, fresh, w->ops->who);
}

/* Takes the gradients of the outputs of 'r' out of the table (a source's
 * is kept as well); false when there is none. */
static bool take_outputs(MfAdWalk *w, const MfAdRecord *r, MfTensor **dout)
{
    bool any = false;
    for (int j = 0; j < MF_MAX_OUTPUTS; j++)
        dout[j] = NULL;
    for (int j = 0; j < r->noutputs; j++) {
        MfAdKey key = r->outputs[j];
        dout[j] = mf_idmap_take(&w->grads, key);
        if (dout[j] && mf_idmap_get(&w->sources, key)) {
            mf_tensor_retain(dout[j]);
            if (mf_idmap_put(&w->kept, key, dout[j], w->ops->who) != MF_OK) {
                mf_tensor_release(dout[j]);
                mf_err_clear();
            }
        }
        any = any || dout[j];
    }
    return any;
}

/* Checks and adds the input gradients 'din' (owned) of record 'k'; those of
 * inputs no source reaches, and all after an error, are released. */
static MfStatus add_inputs(MfAdWalk *w, int64_t k, const MfAdRecord *r, MfTensor **din,
                           MfStatus st)
{
    for (int i = 0; i < r->ninputs; i++) {
        MfTensor *g = din[i];
        din[i] = NULL;
        if (!g)
            continue;
        if (st != MF_OK || !mf_ad_walk_reached(w, r->inputs[i])) {
            mf_tensor_release(g);
            continue;
        }
        if (w->ops->check && (st = w->ops->check(w, w->self, k, r, i, &g)) != MF_OK)
            continue;
        if (g)
            st = mf_ad_walk_add(w, r->inputs[i], g);
    }
    return st;
}

/* ops->backward of record 'k', the ops it runs or builds named for
 * check_numerics as "in the gradient of Log" (a tape's record numbered). */
static MfStatus backward_named(MfAdWalk *w, int64_t k, const MfAdRecord *r, MfTensor **dout,
                               const bool *needs, MfTensor **din)
{
    const char *what = r->op < MF_NOPS ? mf_op_table[r->op]->name
                       : r->custom     ? "a custom_gradient function"
                                       : "a function";
    bool tape = strcmp(w->ops->who, "gradient") == 0;
    MfNumericsScope prev = mf_numerics_enter_backward(what, tape ? (long long)k : -1);
    MfStatus st = w->ops->backward(w, w->self, k, r, dout, needs, din);
    mf_numerics_leave_backward(prev);
    return st;
}

/* The gradient of record 'k' ('din' and 'needs' have room for its inputs). */
static MfStatus step(MfAdWalk *w, int64_t k, const MfAdRecord *r, MfTensor **din, bool *needs)
{
    const MfAdRecordsOps *ops = w->ops;
    MfTensor *dout[MF_MAX_OUTPUTS];
    MfStatus st;
    if (!r->passes || !any_reached(w, r))
        return MF_OK;
    if (ops->before && (st = ops->before(w, w->self, k, r)) != MF_OK)
        return st;
    if (!take_outputs(w, r, dout))
        return MF_OK;
    /* Only inputs on a path to a source need a gradient. */
    for (int i = 0; i < r->ninputs; i++) {
        needs[i] = mf_ad_walk_reached(w, r->inputs[i]);
        din[i] = NULL;
    }
    if (ops->shortcut && ops->shortcut(w, w->self, k, r, dout, needs)) {
        st = MF_OK;
    } else {
        st = backward_named(w, k, r, dout, needs, din);
        st = add_inputs(w, k, r, din, st);
    }
    for (int j = 0; j < r->noutputs; j++)
        mf_tensor_release(dout[j]);
    return st;
}

/* One record: its step with room for its inputs, then 'after'. */
static MfStatus visit(MfAdWalk *w, int64_t k)
{
    MfTensor *stack_din[STACK_INPUTS];
    bool stack_needs[STACK_INPUTS];
    MfAdRecord r;
    MfStatus st = w->ops->describe(w->self, k, &r);
    if (st != MF_OK)
        return st;
    MfTensor **din = stack_din;
    bool *needs = stack_needs;
    size_t bytes = (size_t)r.ninputs * (sizeof *din + sizeof *needs);
    if (r.ninputs > STACK_INPUTS) {
        if (!(din = mf_alloc(bytes)))
            return mf_err_nomem(w->ops->who, bytes);
        needs = (bool *)(din + r.ninputs);
    }
    st = step(w, k, &r, din, needs);
    if (din != stack_din)
        mf_dealloc(din, bytes);
    if (st == MF_OK && w->ops->after)
        st = w->ops->after(w, w->self, k);
    return st;
}

MfStatus mf_ad_walk_back(MfAdWalk *w)
{
    for (int64_t k = w->nrecords - 1; k >= 0; k--) {
        MfStatus st = visit(w, k);
        if (st != MF_OK)
            return st;
        if (mf_interrupted)
            return mf_err_set(MF_EINTR, "%s: interrupted", w->ops->who);
    }
    return MF_OK;
}
