/* lmf_graph_fns.c — Lua functions that belong to a graph: the gradient
 * functions of graph-mode mf.custom_gradient, which hang on a node and run
 * whenever a gradient graph is built through it.
 *
 * Why not the registry: a gradient function often captures a tensor of its
 * own graph (function(dy) return dy * y end), and a registry reference
 * would keep it, so that tensor, so the graph, alive for ever (graph ->
 * node -> registry -> closure -> tensor -> graph: 50 dropped graphs kept
 * 250 MB). Here a graph's functions live in one Lua table ("its
 * functions"), found by the graph's address in a weak-valued table, and
 * kept alive by every Lua object that holds the graph: each box of a
 * symbolic tensor, of the graph, of one of its operations or Variables is
 * a key of an ephemeron table whose value is the graph's functions. The
 * collector then sees the cycle (an ephemeron's value does not keep its
 * key alive) and frees it once no Lua object holds the graph; while one
 * does, every function its gradients may call is there. */
#include "lmf.h"

#include "graph/graph.h"

/* Registry keys: {[graph address] = its functions} (weak values) and
 * {[box] = functions of the box's graph} (weak keys: an ephemeron table). */
static const char fns_key = 0;
static const char anchors_key = 0;

/* Pushes the registry table at 'key', made with weak 'mode' on first use. */
static void push_registry_table(lua_State *L, const char *key, const char *mode)
{
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, key) == LUA_TTABLE)
        return;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushstring(L, mode);
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, key);
}

/* Pushes the functions of 'g' (made when 'make'); false (nothing pushed)
 * when it has none. */
static bool push_fns(lua_State *L, const MfGraph *g, bool make)
{
    push_registry_table(L, &fns_key, "v");
    if (lua_rawgetp(L, -1, g) == LUA_TTABLE || !make) {
        bool found = lua_istable(L, -1);
        lua_remove(L, -2);
        if (!found)
            lua_pop(L, 1);
        return found;
    }
    lua_pop(L, 1);
    lua_createtable(L, 1, 0);
    lua_pushinteger(L, 0);   /* [0]: the last key handed out */
    lua_rawseti(L, -2, 0);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, -3, g);
    lua_remove(L, -2);
    return true;
}

void lmf_graph_anchor(lua_State *L, int idx, const MfGraph *g)
{
    if (!g)
        return;
    idx = lua_absindex(L, idx);
    push_registry_table(L, &anchors_key, "k");
    lua_pushvalue(L, idx);
    push_fns(L, g, true);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

lua_Integer lmf_graph_keep_fn(lua_State *L, const MfGraph *g)
{
    push_fns(L, g, true);
    lua_rawgeti(L, -1, 0);
    lua_Integer key = lua_tointeger(L, -1) + 1;
    lua_pop(L, 1);
    lua_pushinteger(L, key);
    lua_rawseti(L, -2, 0);
    lua_pushvalue(L, -2);
    lua_rawseti(L, -2, key);
    lua_pop(L, 2);   /* the table and the function */
    return key;
}

bool lmf_graph_push_fn(lua_State *L, const MfGraph *g, lua_Integer key)
{
    if (!push_fns(L, g, false))
        return false;
    lua_rawgeti(L, -1, key);
    lua_remove(L, -2);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return false;
    }
    return true;
}

void lmf_graph_drop_fn(lua_State *L, const MfGraph *g, lua_Integer key)
{
    if (!push_fns(L, g, false))
        return;
    lua_pushnil(L);
    lua_rawseti(L, -2, key);
    lua_pop(L, 1);
}
