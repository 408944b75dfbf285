/* vmap.c — mf.vmap's engine (mode.h): a graph built from one example (f
 * called on placeholders shaped as one example) runs over a whole batch,
 * node by node in creation order, each op through its batching rule
 * (eager/batching.h), never a loop over examples. A value that depends on a
 * batched input carries the batch along its first axis; the others are
 * computed once. The ops run as any op runs here: eagerly, into the graph
 * being built (vmap inside mf.trace), recorded by tapes (a gradient
 * through vmap).
 *
 * Ownership: the graph, the placeholders and the values are borrowed; the
 * node values are owned here until the results, owned by the caller, are
 * handed over. */
#include "core/alloc.h"
#include "eager/batching.h"
#include "mode.h"

typedef struct Value {
    MfTensor *t[MF_MAX_OUTPUTS];
    bool batched[MF_MAX_OUTPUTS];
} Value;

typedef struct Run {
    const MfVmapFeeds *feeds;
    int64_t size;
    Value *vals;   /* one per node */
} Run;

/* needed[i]: node i is an ancestor of a fetch (data inputs). */
static MfStatus mark_needed(MfGraph *g, int nfetch, MfTensor *const *fetches, bool *needed)
{
    int n = mf_graph_nnodes(g);
    for (int k = 0; k < nfetch; k++)
        if (fetches[k]->node)
            needed[((const MfNode *)fetches[k]->node)->index] = true;
    for (int i = n - 1; i >= 0; i--) {   /* inputs come before their users */
        const MfNode *nd = mf_graph_node(g, i);
        for (int k = 0; needed[i] && k < nd->ninputs; k++)
            needed[nd->inputs[k].node] = true;
    }
    return MF_OK;
}

static MfStatus eval_placeholder(const Run *r, const MfNode *nd, Value *v)
{
    const MfVmapFeeds *f = r->feeds;
    for (int i = 0; i < f->n; i++)
        if (f->placeholders[i]->node == nd) {
            mf_tensor_retain(v->t[0] = f->values[i]);
            v->batched[0] = f->batched[i];
            return MF_OK;
        }
    return mf_err_set(MF_EARG, "vmap: placeholder '%s' is not one of f's arguments; f may "
                      "not read placeholders of its own", nd->name);
}

static MfStatus eval_op(const Run *r, const MfNode *nd, Value *v)
{
    MfTensor *small[8], **in = small;
    bool bsmall[8], *batched = bsmall;
    if (nd->ninputs > 8) {
        in = mf_calloc((size_t)nd->ninputs, sizeof *in);
        batched = mf_calloc((size_t)nd->ninputs, sizeof *batched);
        if (!in || !batched) {
            mf_free(in);
            mf_free(batched);
            return mf_err_nomem("vmap", (unsigned long long)nd->ninputs * sizeof *in);
        }
    }
    for (int k = 0; k < nd->ninputs; k++) {
        const Value *u = &r->vals[nd->inputs[k].node];
        in[k] = u->t[nd->inputs[k].output];
        batched[k] = u->batched[nd->inputs[k].output];
    }
    MfOpCall c = {.op = nd->op, .ninputs = nd->ninputs, .inputs = in, .attrs = &nd->attrs};
    MfBatchCall b = {&c, batched, r->size};
    MfStatus st = mf_batch_call(&b, v->t, v->batched);
    if (st != MF_OK)
        mf_err_suffix("node '%s' of f", nd->name);
    if (in != small) {
        mf_free(in);
        mf_free(batched);
    }
    return st;
}

static MfStatus eval_node(const Run *r, const MfNode *nd, Value *v)
{
    static const char *const kinds[] = {"op", "placeholder", "constant", "group",
                                        "Variable", "Variable read", "assign"};
    switch (nd->kind) {
    case MF_NODE_OP:
        return eval_op(r, nd, v);
    case MF_NODE_PLACEHOLDER:
        return eval_placeholder(r, nd, v);
    case MF_NODE_CONST:
        mf_tensor_retain(v->t[0] = nd->value);
        return MF_OK;
    case MF_NODE_READ:
        if (nd->var && (v->t[0] = mf_variable_read(nd->var))) {
            mf_tensor_retain(v->t[0]);
            return MF_OK;
        }
        break;
    default:
        break;
    }
    return mf_err_set(MF_EARG, "vmap: f made a %s node ('%s'), which vmap does not run (it "
                      "reads eager Variables, never writes them)",
                      (unsigned)nd->kind < sizeof kinds / sizeof kinds[0] ? kinds[nd->kind] : "?",
                      nd->name);
}

/* The value of fetch 'f' (owned) and whether it is batched. */
static MfStatus take_result(const Run *r, MfGraph *g, MfTensor *f, MfTensor **out, bool *batched)
{
    *batched = false;
    if (!f->node) {   /* f returned a tensor it did not compute */
        mf_tensor_retain(*out = f);
        return MF_OK;
    }
    const MfNode *nd = f->node;
    if (nd->graph != g)
        return mf_err_set(MF_EARG, "vmap: f returned a tensor of another graph");
    mf_tensor_retain(*out = r->vals[nd->index].t[f->node_output]);
    *batched = r->vals[nd->index].batched[f->node_output];
    return MF_OK;
}

MfStatus mf_vmap_run(MfGraph *g, const MfVmapFeeds *feeds, int nfetch, MfTensor *const *fetches,
                     MfTensor **results, bool *batched)
{
    int n = mf_graph_nnodes(g);
    Run r = {feeds, feeds->size, mf_calloc((size_t)n + 1, sizeof *r.vals)};
    bool *needed = mf_calloc((size_t)n + 1, sizeof *needed);
    MfStatus st = r.vals && needed ? MF_OK : mf_err_nomem("vmap", (unsigned long long)n *
                                                                        sizeof *r.vals);
    for (int k = 0; k < nfetch; k++)
        results[k] = NULL;
    if (st == MF_OK)
        st = mark_needed(g, nfetch, fetches, needed);
    for (int i = 0; i < n && st == MF_OK; i++)
        if (needed[i])
            st = eval_node(&r, mf_graph_node(g, i), &r.vals[i]);
    for (int k = 0; k < nfetch && st == MF_OK; k++)
        st = take_result(&r, g, fetches[k], &results[k], &batched[k]);
    for (int i = 0; r.vals && i < n; i++)
        for (int k = 0; k < MF_MAX_OUTPUTS; k++)
            mf_tensor_release(r.vals[i].t[k]);
    for (int k = 0; k < nfetch && st != MF_OK; k++) {
        mf_tensor_release(results[k]);
        results[k] = NULL;
    }
    mf_free(r.vals);
    mf_free(needed);
    return st;
}
