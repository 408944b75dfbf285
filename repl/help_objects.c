/* help_objects.c — what help adds for ops and objects: help(mf.add) names
 * the op of the table (AddV2) and says how its gradient is computed (its
 * descriptor's grad_note);
 * help(obj) on any moonflow object (an optimizer, a graph, a session, a
 * tape, a Variable, a Dataset, a Saver, a layer: anything with methods)
 * lists its methods; help "Saver" finds "train.Saver" without the prefix.
 * help.c calls these; the entries themselves are in doc/help/ (and in the
 * ops' descriptors and lib/). */
#include <stdio.h>
#include <string.h>

#include "core/grad.h"
#include "help_objects.h"

bool lmf_help_op_note(const char *entry, char *buf, size_t cap)
{
    for (int i = 0; i < MF_NOPS; i++) {
        const MfOpDesc *d = mf_op_table[i];
        if (strcmp(d->api, entry) != 0 && !(d->lua && strcmp(d->lua, entry) == 0))
            continue;
        const char *how = d->grad_note;
        if (!mf_op_differentiable((MfOpId)i))
            snprintf(buf, cap, "Op: %s (mf.ops() lists the op table). No gradient: it is not "
                     "differentiable (mf.RegisterGradient can give it one).", d->name);
        else
            snprintf(buf, cap, "Op: %s (mf.ops() lists the op table). Gradient: %s. "
                     "mf.RegisterGradient with mf.gradient_override_map({%s = name}, fn) "
                     "replaces it.", d->name, how ? how : "written with other ops (in core/ops, "
                     "beside the op or in a *_grad.c file), so tapes nest", d->name);
        return true;
    }
    return false;
}

/* Adds to the set at 'set' the method names of the table at 'idx' and of
 * the tables its metatables' '__index' chain leads to (class inheritance). */
static void collect_table(lua_State *L, int idx, int set, int depth)
{
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1))
        if (lua_type(L, -2) == LUA_TSTRING && lua_isfunction(L, -1) &&
            lua_tostring(L, -2)[0] != '_') {
            lua_pushvalue(L, -2);
            lua_pushboolean(L, 1);
            lua_rawset(L, set);
        }
    if (depth < 4 && lua_getmetatable(L, idx)) {
        if (lua_getfield(L, -1, "__index") == LUA_TTABLE && !lua_rawequal(L, -1, idx))
            collect_table(L, lua_gettop(L), set, depth + 1);
        lua_pop(L, 2);
    }
}

/* Pushes the sorted, comma-separated methods the value at 'idx' offers
 * through its metatable's '__index' (a table, or the tables among a C
 * function's upvalues); returns 0 (nothing pushed) when it offers none. */
static int push_methods(lua_State *L, int idx)
{
    if (!lua_getmetatable(L, idx))
        return 0;
    int mt = lua_gettop(L);
    lua_newtable(L);
    int set = mt + 1;
    int type = lua_getfield(L, mt, "__index");
    if (type == LUA_TTABLE)
        collect_table(L, set + 1, set, 0);
    for (int i = 1; type == LUA_TFUNCTION && lua_getupvalue(L, set + 1, i); i++) {
        if (lua_istable(L, -1))
            collect_table(L, lua_gettop(L), set, 0);
        lua_pop(L, 1);
    }
    lua_settop(L, set);
    lua_newtable(L);
    for (lua_pushnil(L); lua_next(L, set); lua_pop(L, 1)) {
        lua_pushvalue(L, -2);
        lua_rawseti(L, set + 1, (lua_Integer)lua_rawlen(L, set + 1) + 1);
    }
    int n = (int)lua_rawlen(L, set + 1);
    if (n > 0) {
        lua_getglobal(L, "table");
        lua_getfield(L, -1, "sort");
        lua_pushvalue(L, set + 1);
        lua_call(L, 1, 0);
        lua_getfield(L, -1, "concat");
        lua_pushvalue(L, set + 1);
        lua_pushliteral(L, ", ");
        lua_call(L, 2, 1);
        lua_replace(L, mt);
    }
    lua_settop(L, n > 0 ? mt : mt - 1);
    return n > 0;
}

int lmf_help_methods(lua_State *L, int idx)
{
    if (!push_methods(L, idx))
        return 0;
    int methods = lua_gettop(L);
    const char *cls = "this object";
    if (luaL_getmetafield(L, idx, "__name") == LUA_TSTRING)
        cls = lua_tostring(L, -1);
    lua_pushfstring(L, "%s methods (x:name(...); help(x.name) shows one):\n  %s", cls,
                    lua_tostring(L, methods));
    lua_replace(L, methods);
    lua_settop(L, methods);
    return 1;
}
