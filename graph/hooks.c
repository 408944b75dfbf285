/* hooks.c — where graph/ plugs into core/'s hooks, installed when the first
 * graph is made: the dispatcher's builder (graph.c's mf_graph_build_, asked
 * while a graph is being built), the node hooks that make a symbolic tensor
 * retain its graph, and the Variable read hook that captures an eager
 * Variable read while a graph is being built (variables.c).
 *
 * The hooks live here, above graph.c and variables.c, so that neither
 * calls the other back: graph.c is the IR, variables.c builds on it. */
#include "graph_impl.h"

static void node_retain_hook(void *node)
{
    mf_graph_retain(((MfNode *)node)->graph);
}

static void node_release_hook(void *node)
{
    mf_graph_release(((MfNode *)node)->graph);
}

/* While a graph is being built (and not run), an eager Variable reads as
 * its capture in that graph. */
static MfTensor *capture_hook(MfVariable *v)
{
    MfGraph *g = mf_mode_graph();
    if (!g)
        return NULL;
    MfTensor *t = NULL;
    return mf_graph_capture(g, v, &t) == MF_OK ? t : NULL;
}

static const MfBuilder graph_builder = {mf_graph_building_, mf_graph_build_, NULL};

MfGraph *mf_graph_new(void)
{
    static bool hooked;
    if (!hooked) {
        mf_tensor_set_node_hooks(node_retain_hook, node_release_hook);
        mf_op_set_builder(&graph_builder);
        mf_variable_set_value_hook(capture_hook);
        hooked = true;
    }
    return mf_graph_alloc_();
}
