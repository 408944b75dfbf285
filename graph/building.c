/* building.c — is a graph being built: the one answer (graph.h).
 *
 * Ops become nodes of the default graph while one is set (g:as_default,
 * mf.trace) and the executor is not running nodes (their ops run on
 * values; core/op.c keeps that flag). The builder hook core/ asks
 * (mf_graph_building_, installed by hooks.c), the capture of eager
 * Variables (hooks.c), train/ and mode/ all ask mf_mode_graph. */
#include "graph_impl.h"

MfGraph *mf_mode_graph(void)
{
    return mf_op_exec_running() ? NULL : mf_graph_default();
}

MfNode *mf_mode_variable_node(const MfVariable *v)
{
    MfNode *n = v->value && v->value->node ? v->value->node : NULL;
    return n && n->kind == MF_NODE_VARIABLE ? n : NULL;
}

bool mf_mode_variable_here(const MfVariable *v)
{
    const MfGraph *g = mf_mode_graph();
    const MfTensor *t = v->value;
    return g ? t && t->node && mf_tensor_graph(t) == g : !(t && t->node);
}

bool mf_graph_building_(void *self)
{
    (void)self;
    return mf_mode_graph() != NULL;
}
