/* forward.c — forward accumulators (see forward.h): the list of active
 * ones, the dispatcher's hook, and the tangents. */
#include "forward.h"

#include <string.h>

#include "autodiff/idmap.h"
#include "core/alloc.h"
#include "core/grad.h"
#include "core/shape.h"
#include "jvp.h"

struct MfForwardAcc {
    int64_t refcount;
    bool active;
    int paused;
    MfIdMap tangents;   /* tensor id -> tangent (a reference held) */
    /* A graph node's output has many tensors (the walk of mf.gradients
     * makes its own): its slot -> the first one stored (a reference held,
     * which keeps the node alive), whose id keys its tangent. */
    MfIdMap by_slot;
    MfForwardAcc *prev, *next;      /* the list of live accumulators */
};

#define MAX_ACTIVE 64
static MfForwardAcc *active[MAX_ACTIVE];   /* oldest first */
static int nactive;
static int64_t live;
static MfForwardAcc *all;   /* every live accumulator, active or closed */

/* A freed tensor's tangent goes: nobody can ask for it any more (as
 * TensorFlow's accumulator forgets a tangent when its primal dies). */
static void on_free(int64_t id)
{
    for (MfForwardAcc *a = all; a; a = a->next)
        mf_tensor_release(mf_idmap_take(&a->tangents, id));
}

static MfStatus on_op(void *self, const MfOpCall *c, MfTensor *const *outs);
static const MfRecorder hook = {.record = on_op, .self = NULL};

MfForwardAcc *mf_forward_new(void)
{
    if (nactive == MAX_ACTIVE) {
        mf_err_set(MF_EARG, "ForwardAccumulator: more than %d active at once", MAX_ACTIVE);
        return NULL;
    }
    MfForwardAcc *a = mf_calloc(1, sizeof *a);
    if (!a) {
        mf_err_nomem("ForwardAccumulator", sizeof *a);
        return NULL;
    }
    a->refcount = 1;
    a->active = true;
    active[nactive++] = a;
    if (!all)
        mf_tensor_set_free_hook(on_free);
    a->next = all;
    if (all)
        all->prev = a;
    all = a;
    if (nactive == 1)
        mf_op_set_forward(&hook);
    live++;
    return a;
}

void mf_forward_close(MfForwardAcc *a)
{
    if (!a || !a->active)
        return;
    a->active = false;
    int k = 0;
    for (int i = 0; i < nactive; i++)
        if (active[i] != a)
            active[k++] = active[i];
    nactive = k;
    if (nactive == 0)
        mf_op_set_forward(NULL);
}

bool mf_forward_active(const MfForwardAcc *a)
{
    return a->active;
}

void mf_forward_retain(MfForwardAcc *a)
{
    a->refcount++;
}

void mf_forward_release(MfForwardAcc *a)
{
    if (!a || --a->refcount > 0)
        return;
    mf_forward_close(a);
    /* unlinked first: releasing its tangents below does not come back to it */
    if (a->prev)
        a->prev->next = a->next;
    else
        all = a->next;
    if (a->next)
        a->next->prev = a->prev;
    if (!all)
        mf_tensor_set_free_hook(NULL);
    for (int64_t i = mf_idmap_next(&a->tangents, 0); i >= 0;
         i = mf_idmap_next(&a->tangents, i + 1))
        mf_tensor_release(a->tangents.vals[i]);
    for (int64_t i = mf_idmap_next(&a->by_slot, 0); i >= 0;
         i = mf_idmap_next(&a->by_slot, i + 1))
        mf_tensor_release(a->by_slot.vals[i]);
    mf_idmap_free(&a->tangents);
    mf_idmap_free(&a->by_slot);
    mf_free(a);
    live--;
}

int64_t mf_forward_ntangents(const MfForwardAcc *a)
{
    return a->tangents.count;
}

int64_t mf_forward_live_count(void)
{
    return live;
}

void mf_forward_pause(MfForwardAcc *a)
{
    a->paused++;
}

void mf_forward_unpause(MfForwardAcc *a)
{
    a->paused--;
}

/* The key of a symbolic tensor's node output (nodes are allocated one by
 * one, so their addresses are distinct while they live). */
static int64_t slot_key(const MfTensor *x)
{
    return (int64_t)((uintptr_t)x->node * MF_MAX_OUTPUTS + (uintptr_t)x->node_output);
}

/* The tensor whose id keys the tangent of 'x': 'x' itself, or for a
 * symbolic one the first tensor of its node output stored (NULL: none). */
static const MfTensor *keyed(const MfForwardAcc *a, const MfTensor *x)
{
    return x->node ? mf_idmap_get(&a->by_slot, slot_key(x)) : x;
}

MfTensor *mf_forward_tangent(const MfForwardAcc *a, const MfTensor *x)
{
    const MfTensor *k = x ? keyed(a, x) : NULL;
    return k ? mf_idmap_get(&a->tangents, k->id) : NULL;
}

/* Stores 't' (a reference taken) as the tangent of 'x', replacing any. */
static MfStatus store(MfForwardAcc *a, MfTensor *x, MfTensor *t)
{
    if (x->node && !keyed(a, x)) {
        MfStatus st = mf_idmap_put(&a->by_slot, slot_key(x), x, "ForwardAccumulator");
        if (st != MF_OK)
            return st;
        mf_tensor_retain(x);
    }
    int64_t id = keyed(a, x)->id;
    MfTensor *old = mf_idmap_get(&a->tangents, id);
    MfStatus st = mf_idmap_put(&a->tangents, id, t, "ForwardAccumulator");
    if (st != MF_OK)
        return st;
    mf_tensor_retain(t);
    mf_tensor_release(old);
    return MF_OK;
}

MfStatus mf_forward_watch(MfForwardAcc *a, MfTensor *primal, MfTensor *tangent, int which)
{
    char ps[MF_MAX_RANK * 24 + 8], ts[MF_MAX_RANK * 24 + 8];
    if (!mf_grad_is_float(primal->dtype))
        return mf_err_set(MF_EARG, "ForwardAccumulator: primal %d is %s; forward mode needs "
                          "float32 or float64", which, mf_dtype_name(primal->dtype));
    if (tangent->dtype != primal->dtype || !mf_shape_equal_t(tangent, primal)) {
        mf_shape_str(primal->rank, primal->shape, ps, sizeof ps);
        mf_shape_str(tangent->rank, tangent->shape, ts, sizeof ts);
        return mf_err_set(MF_EARG, "ForwardAccumulator: tangent %d must match its primal "
                          "(%s %s), got %s %s", which, mf_dtype_name(primal->dtype), ps,
                          mf_dtype_name(tangent->dtype), ts);
    }
    return store(a, primal, tangent);
}

/* The rule of 'c' for 'a', when an input has a tangent there. */
static MfStatus propagate(MfForwardAcc *a, const MfOpCall *c, MfTensor *const *outs)
{
    MfTensor *small[16], **tan = small;
    bool any = false;
    if (c->ninputs > 16 && !(tan = mf_calloc((size_t)c->ninputs, sizeof *tan)))
        return mf_err_nomem("forward mode", (unsigned long long)c->ninputs * sizeof *tan);
    for (int i = 0; i < c->ninputs; i++) {
        tan[i] = mf_grad_is_float(c->inputs[i]->dtype) ? mf_forward_tangent(a, c->inputs[i])
                                                        : NULL;
        any = any || tan[i];
    }
    MfStatus st = MF_OK;
    if (any && mf_op_differentiable(c->op)) {
        MfTensor *dout[MF_MAX_OUTPUTS];
        MfJvpCall j = {.call = c, .outputs = outs, .tangents = tan};
        mf_forward_pause(a);
        st = mf_jvp_call(&j, dout);
        mf_forward_unpause(a);
        for (int k = 0; k < MF_MAX_OUTPUTS; k++) {
            if (st == MF_OK && dout[k] && k < c->noutputs && outs[k])
                st = store(a, outs[k], dout[k]);
            mf_tensor_release(dout[k]);
        }
    }
    if (tan != small)
        mf_free(tan);
    return st;
}

static MfStatus on_op(void *self, const MfOpCall *c, MfTensor *const *outs)
{
    (void)self;
    /* a copy: a rule may open or close accumulators */
    MfForwardAcc *list[MAX_ACTIVE];
    int n = nactive;
    memcpy(list, active, (size_t)n * sizeof *list);
    for (int i = 0; i < n; i++) {
        if (!list[i]->active || list[i]->paused)
            continue;
        mf_forward_retain(list[i]);
        MfStatus st = propagate(list[i], c, outs);
        mf_forward_release(list[i]);
        if (st != MF_OK)
            return st;
    }
    return MF_OK;
}
