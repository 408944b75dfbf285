/* lmf_graph_box.c — the boxes of graph mode: "mf.Graph", "mf.Operation"
 * and "mf.Session" userdata (repl/lmf_box.c's boxes, each holding a graph
 * retained and anchoring the graph's Lua functions, lmf_graph_fns.c). What
 * they do in Lua is lmf_graph.c, a floor above (doc/design.md, "The floors
 * of repl/"). */
#include "graph/graph.h"
#include "lmf.h"

MfGraph *lmf_check_graph(lua_State *L, int idx)
{
    return lmf_box_check(L, idx, LMF_GRAPH_MT, "Graph is freed");
}

void lmf_push_graph(lua_State *L, MfGraph *g)
{
    mf_graph_retain(g);
    *lmf_box_new(L, LMF_GRAPH_MT, 0) = g;
    lmf_graph_anchor(L, -1, g);
}

void lmf_push_operation(lua_State *L, MfNode *n)
{
    mf_graph_retain(n->graph);
    *lmf_box_new(L, LMF_OPERATION_MT, 0) = n;
    lmf_graph_anchor(L, -1, n->graph);
}

MfSession *lmf_test_session(lua_State *L, int idx)
{
    if (!luaL_testudata(L, idx, LMF_SESSION_MT))
        return NULL;
    return lmf_box_check(L, idx, LMF_SESSION_MT, "Session is freed");
}
