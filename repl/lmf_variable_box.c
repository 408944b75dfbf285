/* lmf_variable_box.c — the "mf.Variable" box: making and checking Variable
 * userdata (lmf_check_tensor reads a Variable's value through here), and the
 * one box per graph VARIABLE node. What a Variable does in Lua (mf.Variable,
 * assign, properties, operators) is lmf_variable.c, a floor above
 * (doc/design.md, "The floors of repl/"). */
#include "graph/graph.h"
#include "lmf.h"

/* The metatable, kept in the registry under this address;
 * 'graph_vars_key': a weak-valued table, VARIABLE node -> its Variable box,
 * so mf.trainable_variables() gives back the very objects mf.Variable made. */
static const char metatable_key = 0;
static const char graph_vars_key = 0;

void lmf_push_variable(lua_State *L, MfVariable *v)
{
    LmfVariableBox *box = lua_newuserdatauv(L, sizeof *box, 0);
    box->v = v;
    box->tag = LMF_VARIABLE_TAG;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &metatable_key);
    lua_setmetatable(L, -2);
}

LmfVariableBox *lmf_variable_box(lua_State *L, int idx)
{
    LmfVariableBox *box = lua_touserdata(L, idx);
    if (!box || lua_rawlen(L, idx) != sizeof *box || box->tag != LMF_VARIABLE_TAG ||
        !lua_getmetatable(L, idx))
        return NULL;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &metatable_key);
    int same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return same ? box : NULL;
}

bool lmf_is_closed_variable(lua_State *L, int idx)
{
    LmfVariableBox *box = lmf_variable_box(L, idx);
    return box && !box->v;
}

MfVariable *lmf_test_variable(lua_State *L, int idx)
{
    LmfVariableBox *box = lmf_variable_box(L, idx);
    return box ? box->v : NULL;
}

MfVariable *lmf_check_variable(lua_State *L, int idx)
{
    LmfVariableBox *box = lmf_variable_box(L, idx);
    if (!box)
        luaL_typeerror(L, idx, LMF_VARIABLE_MT);
    if (!box->v)
        luaL_argerror(L, idx, "variable is closed");
    return box->v;
}

MfTensor *lmf_check_variable_value(lua_State *L, int idx)
{
    LmfVariableBox *box = lmf_variable_box(L, idx);
    if (!box)
        luaL_typeerror(L, idx, LMF_TENSOR_MT);
    if (!box->v)
        luaL_argerror(L, idx, "variable is closed");
    MfTensor *t = mf_variable_read(box->v);
    if (!t)
        luaL_argerror(L, idx, lua_pushfstring(L, "variable '%s' has no value yet",
                                              box->v->name));
    return t;
}

/* Pushes the Variable box of VARIABLE node 'n': the one already made, or a
 * new handle (an MfVariable whose value is the node's symbolic output). */
void lmf_push_graph_variable(lua_State *L, MfNode *n)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &graph_vars_key);
    if (lua_rawgetp(L, -1, n) != LUA_TNIL) {
        lua_remove(L, -2);
        return;
    }
    lua_pop(L, 1);
    MfTensor *sym = mf_graph_output(n, 0);
    MfVariable *v = sym ? mf_variable_new(sym, n->name, n->trainable) : NULL;
    mf_tensor_release(sym);
    if (!v)
        lmf_raise(L);
    lmf_push_variable(L, v);
    lmf_graph_anchor(L, -1, n->graph);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, -3, n);
    lua_remove(L, -2);
}

void lmf_variable_box_class(lua_State *L)
{
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &metatable_key);
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &graph_vars_key);
}
