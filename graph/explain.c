/* explain.c — 'mf_graph_explain': why mf.gradients(y, x) is nil (or that it
 * is not).
 *
 * The reasoning is the one of both modes, over the graph's nodes as the
 * walk's records (autodiff/explain.h: a variable read passes gradients to
 * the variable, a custom gradient's node to the inputs f was called with);
 * here it is worded for a graph, naming the node that cut the path: a
 * stop_gradient, a non-differentiable op, an op with integer or bool
 * outputs, an assign (no gradient flows through assign ops, as in
 * TensorFlow). */
#include <limits.h>
#include <stdio.h>

#include "autodiff/explain.h"
#include "core/grad.h"
#include "graph_impl.h"

static bool float_outputs(const MfNode *n)
{
    for (int i = 0; i < n->noutputs; i++)
        if (mf_dtype_is_float(n->out[i].dtype))
            return true;
    return false;
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

static void conclude(const MfGraph *g, const MfAdExplain *e, char *buf, size_t cap)
{
    if (e->verdict == MF_AD_CONNECTED)
        snprintf(buf, cap, "connected: the gradient flows from the target back to the source "
                 "through the graph (mf.gradients builds it under gradients/)");
    else if (e->verdict == MF_AD_UNREACHED)
        snprintf(buf, cap, "the target does not depend on the source: no path of data edges "
                 "leads from the source to the target");
    else if (e->cut >= 0)
        describe_cut(mf_graph_node(g, (int)e->cut), buf, cap);
    else
        snprintf(buf, cap, "a node without a gradient cut the path from the source to the "
                 "target");
}

static MfAdKey tensor_key(const MfTensor *t)
{
    return mf_graph_key((MfNodeInput){((const MfNode *)t->node)->index, t->node_output});
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
    static const MfAdRecordsOps ops = {.who = "explain_gradients",
                                       .describe = mf_graph_describe};
    MfGraphRecords recs;
    mf_graph_records_init(&recs, g, 0, INT_MAX);
    MfAdKey source = tensor_key(x);
    MfAdExplain e;
    MfStatus st = mf_ad_explain(&ops, &recs, mf_graph_nnodes(g), 1, &source, tensor_key(y),
                                &e);
    if (st == MF_OK)
        conclude(g, &e, buf, cap);
    mf_ad_explain_free(&e);
    mf_graph_records_free(&recs);
    return st;
}
