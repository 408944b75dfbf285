/* staged_writes.c — a session run's all-or-nothing variable writes (see
 * staged_writes.h for why and how). */
#include "staged_writes.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/profile/profile.h"

/* One staged write: an ASSIGN's new value, or an in-place op's inputs. */
struct MfStagedWrite {
    const MfNode *n;
    MfTensor *value;     /* ASSIGN: the variable's new value (owned) */
    MfTensor **in;       /* in-place op: its inputs, owned from 'inplace' on (the
                          * buffers it updates are the store's, taken at commit) */
};

enum { PEND_VAR = 1, PEND_OUT = 2 }; /* 'pend': a VARIABLE with a staged write; an
                                       * in-place node whose outputs wait for its commit */

static int slot(MfNodeInput in)
{
    return in.node * MF_MAX_OUTPUTS + in.output;
}

static void write_drop(MfStagedWrite *p)
{
    if (p->in) {
        for (int k = mf_op_table[p->n->op]->inplace; k < p->n->ninputs; k++)
            mf_tensor_release(p->in[k]);
        mf_free(p->in);
    }
    mf_tensor_release(p->value);
    memset(p, 0, sizeof *p);
}

void mf_staged_free(MfStagedWrites *w)
{
    for (int i = 0; i < w->n; i++)
        write_drop(&w->list[i]);
    mf_free(w->list);
    mf_free(w->pend);
    w->list = NULL;
    w->pend = NULL;
    w->n = 0;
}

/* The list and the per-node flags, made by the first write (a run that
 * writes nothing pays nothing). */
static MfStatus need_list(MfStagedWrites *w)
{
    if (!w->pend)
        w->pend = mf_calloc((size_t)w->nn + 1, 1);
    if (!w->list)
        w->list = mf_calloc((size_t)w->cap + 1, sizeof *w->list);
    if (!w->pend || !w->list)
        return mf_err_nomem("run", ((unsigned long long)w->cap + 1) * sizeof *w->list);
    return MF_OK;
}

bool mf_staged_can_stage_op(const MfStagedWrites *w, const MfNode *n, MfTensor *const *fed)
{
    if (!w->vars)
        return false;
    for (int k = 0; k < mf_op_table[n->op]->inplace; k++)
        if (mf_graph_node(n->graph, n->inputs[k].node)->kind != MF_NODE_VARIABLE ||
            fed[slot(n->inputs[k])])
            return false;
    return true;
}

/* Each buffer updated in place is given once, and the op's checks pass. */
static MfStatus check_op(const MfNode *n, MfTensor *const *in)
{
    const MfOpDesc *d = mf_op_table[n->op];
    for (int k = 1; k < d->inplace; k++)
        for (int j = 0; j < k; j++)
            if (in[j] == in[k])
                return mf_err_set(MF_EARG, "%s: inputs %d and %d are the same variable ('%s'); "
                                  "each buffer updated in place must be given once", d->api,
                                  j + 1, k + 1, mf_graph_node(n->graph, n->inputs[k].node)->name);
    MfOpCall c = {.op = n->op, .ninputs = n->ninputs, .inputs = (MfTensor **)in,
                  .attrs = &n->attrs};
    return d->infer(&c);
}

MfStatus mf_staged_add_op(MfStagedWrites *w, const MfNode *n, MfTensor *const *in)
{
    const MfOpDesc *d = mf_op_table[n->op];
    MfStatus st = check_op(n, in);
    if (st == MF_OK)
        st = need_list(w);
    if (st != MF_OK)
        return st;
    MfStagedWrite *p = &w->list[w->n];
    p->n = n;
    p->in = mf_calloc((size_t)n->ninputs, sizeof *p->in);
    if (!p->in)
        st = mf_err_nomem("run", (unsigned long long)n->ninputs * sizeof *p->in);
    for (int k = d->inplace; k < n->ninputs && st == MF_OK; k++)
        if (!(p->in[k] = mf_tensor_contiguous(in[k]))) {
            mf_err_prefix("%s", d->api);
            st = MF_ENOMEM;
        }
    if (st != MF_OK) {
        write_drop(p);
        return st;
    }
    w->n++;
    for (int k = 0; k < d->inplace; k++)
        w->pend[n->inputs[k].node] |= PEND_VAR;
    w->pend[n->index] |= PEND_OUT;
    return MF_OK;
}

MfStatus mf_staged_add_assign(MfStagedWrites *w, const MfNode *n, MfTensor *value,
                              bool *staged)
{
    *staged = false;
    if (!w->vars || n->ref >= w->vars->cap)
        return MF_OK;
    MfStatus st = need_list(w);
    if (st != MF_OK)
        return st;
    MfStagedWrite *p = &w->list[w->n++];
    p->n = n;
    p->value = value;
    mf_tensor_retain(value);
    w->pend[n->ref] |= PEND_VAR;
    *staged = true;
    return MF_OK;
}

bool mf_staged_seen_by(const MfStagedWrites *w, const MfNode *n, MfTensor *const *fed)
{
    if (!w->n)
        return false;
    for (int k = 0; k < n->ninputs; k++)
        if (!fed[slot(n->inputs[k])] && (w->pend[n->inputs[k].node] & PEND_OUT))
            return true;
    switch (n->kind) {
    case MF_NODE_VARIABLE:
        return w->pend[n->index] & PEND_VAR;
    case MF_NODE_READ:
    case MF_NODE_ASSIGN:
        return !n->var && n->ref >= 0 && (w->pend[n->ref] & PEND_VAR);
    case MF_NODE_OP:
        for (int k = 0; k < mf_op_table[n->op]->inplace; k++)
            if (w->pend[n->inputs[k].node] & PEND_VAR)
                return true;
        return false;
    default:
        return false;
    }
}

/* Runs the forward of a staged in-place op on 'c', timed as the profiler
 * times every op ('mf_op_call' is not used: its tape recorder could ask for
 * memory). */
static MfStatus forward_profiled(const MfNode *n, MfOpCall *c, MfTensor **outs)
{
    const MfOpDesc *d = mf_op_table[n->op];
    bool prof = mf_prof_on;
    MfProfSpan span;
    char label[256] = "";
    if (prof) {
        mf_node_label(n, label, sizeof label);
        mf_prof_begin(&span);
    }
    MfStatus st = d->infer(c);
    if (st == MF_OK)
        st = d->forward(c, outs);
    if (prof) {
        MfCost cost = {0, 0};
        if (st == MF_OK && d->cost)
            cost = d->cost(c);
        mf_prof_end_op_call(&span, n->name, d->name, label, cost.flops, cost.bytes);
    }
    return st;
}

/* Runs a staged in-place op on the store's buffers. Its checks passed at
 * staging and nothing has touched the buffers since, so it cannot fail. */
static MfStatus commit_op(MfStagedWrites *w, MfStagedWrite *p, MfTensor **vals,
                          const int *uses)
{
    const MfNode *n = p->n;
    const MfOpDesc *d = mf_op_table[n->op];
    for (int k = 0; k < d->inplace; k++)
        p->in[k] = mf_varstore_get(w->vars, n->inputs[k].node);
    MfOpCall c = {.op = n->op, .ninputs = n->ninputs, .inputs = p->in, .attrs = &n->attrs};
    MfTensor *outs[MF_MAX_OUTPUTS] = {NULL};
    MfStatus st = forward_profiled(n, &c, outs);
    for (int k = 0; k < d->inplace; k++)
        p->in[k] = NULL; /* the store's, not ours */
    for (int k = 0; k < MF_MAX_OUTPUTS; k++) {
        int s = n->index * MF_MAX_OUTPUTS + k;
        if (st == MF_OK && uses[s] > 0)
            vals[s] = outs[k];
        else
            mf_tensor_release(outs[k]);
    }
    if (st != MF_OK) {
        char why[400];
        snprintf(why, sizeof why, "%s", mf_err_msg());
        return mf_err_set(MF_EINTERNAL, "run: node '%s' (%s) failed at its commit, after its "
                          "checks passed (internal error): %s", n->name, d->name, why);
    }
    return MF_OK;
}

MfStatus mf_staged_commit(MfStagedWrites *w, MfTensor **vals, const int *uses)
{
    MfStatus st = MF_OK;
    for (int i = 0; i < w->n; i++) {
        MfStagedWrite *p = &w->list[i];
        MfStatus s = MF_OK;
        if (p->in)
            s = commit_op(w, p, vals, uses);
        else
            mf_varstore_set(w->vars, p->n->ref, p->value); /* cannot fail: the slot exists */
        if (st == MF_OK)
            st = s;
        write_drop(p);
    }
    w->n = 0;
    if (w->pend)
        memset(w->pend, 0, (size_t)w->nn);
    return st;
}
