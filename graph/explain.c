/* explain.c — 'mf_graph_explain': why mf.gradients(y, x) is nil (or that it
 * is not), the graph-mode twin of eager/explain.c.
 *
 * Nodes are in creation order, so every data input comes before its
 * consumer and one pass forward finds what the source reaches: 'all'
 * through every node, 'diff' only through nodes a gradient passes (ops
 * with a gradient and float outputs, custom gradients, variable reads).
 * One pass backward finds what the target depends on. The conclusion names
 * the first node that cut the path: a stop_gradient, a non-differentiable
 * op, an op with integer or bool outputs, an assign (no gradient flows
 * through assign ops, as in TensorFlow). */
#include <stdio.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/grad.h"
#include "graph.h"

/* The inputs a gradient could follow: the data inputs, and for a read of a
 * graph variable (no data input) the VARIABLE node. */
static bool reads(const MfNode *n, const bool *set)
{
    for (int i = 0; i < n->ninputs; i++)
        if (set[n->inputs[i].node])
            return true;
    return n->kind == MF_NODE_READ && n->ninputs == 0 && n->ref >= 0 && set[n->ref];
}

static bool float_outputs(const MfNode *n)
{
    for (int i = 0; i < n->noutputs; i++)
        if (mf_dtype_is_float(n->out[i].dtype))
            return true;
    return false;
}

static bool passes_gradient(const MfNode *n)
{
    if (n->grad || n->kind == MF_NODE_READ)
        return true;
    return n->kind == MF_NODE_OP && mf_op_differentiable(n->op) && float_outputs(n);
}

/* Why node 'n' (on the path, not passing gradients) cut it. */
static void describe_cut(const MfNode *n, char *buf, size_t cap)
{
    const MfOpDesc *d = n->kind == MF_NODE_OP ? mf_op_table[n->op] : NULL;
    if (n->kind == MF_NODE_ASSIGN)
        snprintf(buf, cap, "the assign op '%s' cut the path from the source to the target: no "
                 "gradient flows through assign, assign_add or assign_sub (TensorFlow gives "
                 "None); differentiate the value before it is assigned", n->name);
    else if (d && n->op == MF_OP_STOP_GRADIENT)
        snprintf(buf, cap, "the stop_gradient '%s' cut the path from the source to the target",
                 n->name);
    else if (d && !float_outputs(n))
        snprintf(buf, cap, "the op '%s' (%s) gives a tensor of dtype %s, and no gradient flows "
                 "through integer or bool tensors", n->name, d->name,
                 mf_dtype_name(n->out[0].dtype));
    else if (d)
        snprintf(buf, cap, "the op '%s' (%s) has no gradient, so it cut the path from the "
                 "source to the target", n->name, d->name);
    else
        snprintf(buf, cap, "the node '%s' cut the path from the source to the target",
                 n->name);
}

static void conclude(const MfGraph *g, const bool *all, const bool *diff, const bool *leads,
                     int target, char *buf, size_t cap)
{
    if (diff[target]) {
        snprintf(buf, cap, "connected: the gradient flows from the target back to the source "
                 "through the graph (mf.gradients builds it under gradients/)");
        return;
    }
    if (!all[target]) {
        snprintf(buf, cap, "the target does not depend on the source: no path of data edges "
                 "leads from the source to the target");
        return;
    }
    for (int i = 0; i < mf_graph_nnodes(g); i++) {
        const MfNode *n = mf_graph_node(g, i);
        if (leads[i] && all[i] && !diff[i] && reads(n, diff)) {
            describe_cut(n, buf, cap);
            return;
        }
    }
    snprintf(buf, cap, "a node without a gradient cut the path from the source to the target");
}

MfStatus mf_graph_explain(const MfTensor *y, const MfTensor *x, char *buf, size_t cap)
{
    MfGraph *g = y->node ? mf_tensor_graph(y) : NULL;
    if (!g || !x->node || mf_tensor_graph(x) != g)
        return mf_err_set(MF_EARG, "explain_gradients: y and x must be tensors of one graph "
                          "(for eager tensors use tape:explain(y, x))");
    if (!mf_dtype_is_float(x->dtype)) {
        snprintf(buf, cap, "the source is a %s tensor: gradients are defined for float "
                 "tensors only (cast it to float32 or float64 first)", mf_dtype_name(x->dtype));
        return MF_OK;
    }
    int n = mf_graph_nnodes(g);
    size_t bytes = 3 * (size_t)n * sizeof(bool);
    bool *mem = mf_alloc(bytes);
    if (!mem)
        return mf_err_nomem("explain_gradients", bytes);
    bool *all = mem, *diff = mem + n, *leads = mem + 2 * n;
    for (int i = 0; i < 3 * n; i++)
        mem[i] = false;
    int source = ((const MfNode *)x->node)->index, target = ((const MfNode *)y->node)->index;
    all[source] = diff[source] = true;
    for (int i = source + 1; i < n; i++) {
        const MfNode *nd = mf_graph_node(g, i);
        all[i] = reads(nd, all);
        diff[i] = passes_gradient(nd) && reads(nd, diff);
    }
    leads[target] = true;
    for (int i = target; i >= 0; i--) {
        const MfNode *nd = mf_graph_node(g, i);
        for (int k = 0; leads[i] && k < nd->ninputs; k++)
            leads[nd->inputs[k].node] = true;
        if (leads[i] && nd->kind == MF_NODE_READ && nd->ninputs == 0 && nd->ref >= 0)
            leads[nd->ref] = true;
    }
    conclude(g, all, diff, leads, target, buf, cap);
    mf_dealloc(mem, bytes);
    return MF_OK;
}
