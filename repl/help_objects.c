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

/* A private name of lib/ or of a binding: a leading or trailing '_'
 * (apply_, describe_, layers_list_). */
static bool private_name(const char *name)
{
    size_t n = strlen(name);
    return n == 0 || name[0] == '_' || name[n - 1] == '_';
}

/* Adds to the set at 'set' the method names of the table at 'idx' and of
 * the tables its metatables' '__index' chain leads to (class inheritance). */
static void collect_table(lua_State *L, int idx, int set, int depth)
{
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1))
        if (lua_type(L, -2) == LUA_TSTRING && lua_isfunction(L, -1) &&
            !private_name(lua_tostring(L, -2))) {
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

/* Pushes the keys of the set at 'set' as a sorted array. */
static void push_sorted(lua_State *L, int set)
{
    set = lua_absindex(L, set);
    lua_newtable(L);
    for (lua_pushnil(L); lua_next(L, set); lua_pop(L, 1)) {
        lua_pushvalue(L, -2);
        lua_rawseti(L, -4, (lua_Integer)lua_rawlen(L, -4) + 1);
    }
    lua_getglobal(L, "table");
    lua_getfield(L, -1, "sort");
    lua_pushvalue(L, -3);
    lua_call(L, 1, 0);
    lua_pop(L, 1);
}

/* Pushes the strings of the array at 'idx' joined by ", ". */
static void push_joined(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, idx); i++) {
        if (i > 1)
            luaL_addstring(&b, ", ");
        lua_rawgeti(L, idx, i);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
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
    push_sorted(L, set);
    int n = (int)lua_rawlen(L, -1);
    if (n > 0) {
        push_joined(L, -1);
        lua_replace(L, mt);
    }
    lua_settop(L, n > 0 ? mt : mt - 1);
    return n > 0;
}

/* Adds the public string keys of the table at 'idx' to the set at 'set'
 * (functions only, none, or all: 'want' 1, -1, 0), leaving out private
 * names and the keys of the table at 'private' (0: none). */
static void add_keys(lua_State *L, int idx, int set, int want, int private)
{
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
        int fn = lua_isfunction(L, -1);
        int hidden = 0;
        if (private && lua_type(L, -2) == LUA_TSTRING) {
            lua_pushvalue(L, -2);
            hidden = lua_rawget(L, private) != LUA_TNIL;
            lua_pop(L, 1);
        }
        if (lua_type(L, -2) == LUA_TSTRING && !private_name(lua_tostring(L, -2)) && !hidden &&
            (want == 0 || (want > 0) == (fn != 0))) {
            lua_pushvalue(L, -2);
            lua_pushboolean(L, 1);
            lua_rawset(L, set);
        }
    }
}

int lmf_object_members(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    if (!lua_getmetatable(L, idx))
        return 0;
    int cls = lua_gettop(L);
    lua_pushliteral(L, "__properties");
    if (lua_rawget(L, cls) != LUA_TTABLE) {
        lua_settop(L, cls - 1);
        return 0;
    }
    int props = cls + 1;
    lua_newtable(L);   /* methods: the class's functions, then its bases' */
    lua_newtable(L);   /* properties: the getters, then the object's own fields */
    int mset = props + 1, pset = props + 2;
    lua_pushliteral(L, "__private");   /* helpers of lib/ that are no API */
    int private = lua_rawget(L, cls) == LUA_TTABLE ? pset + 1 : 0;
    add_keys(L, props, pset, 0, private);
    if (lua_type(L, idx) == LUA_TTABLE)
        add_keys(L, idx, pset, -1, private);
    lua_pushvalue(L, cls);
    for (int depth = 0; depth < 8 && lua_istable(L, -1); depth++) {
        add_keys(L, lua_gettop(L), mset, 1, private);
        if (!lua_getmetatable(L, -1))
            break;
        lua_pushliteral(L, "__index");
        lua_rawget(L, -2);
        lua_remove(L, -2);
        lua_remove(L, -2);
    }
    lua_settop(L, pset);
    push_sorted(L, mset);
    push_sorted(L, pset);
    lua_replace(L, cls + 1);
    lua_replace(L, cls);
    lua_settop(L, cls + 1);
    return 1;
}

/* help(obj) for an object of lib/: its methods and its properties apart. */
static int help_members(lua_State *L, int idx)
{
    if (!lmf_object_members(L, idx))
        return 0;
    int props = lua_gettop(L);   /* the methods just below */
    const char *cls = "this object";
    if (luaL_getmetafield(L, idx, "__name") == LUA_TSTRING)
        cls = lua_tostring(L, -1);
    push_joined(L, props - 1);
    push_joined(L, props);
    lua_pushfstring(L, "%s methods (x:name(...); help(x.name) shows one):\n  %s\n"
                    "properties (x.name):\n  %s", cls, lua_tostring(L, -2), lua_tostring(L, -1));
    lua_replace(L, props - 1);
    lua_settop(L, props - 1);
    return 1;
}

int lmf_help_methods(lua_State *L, int idx)
{
    if (help_members(L, idx))
        return 1;
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
