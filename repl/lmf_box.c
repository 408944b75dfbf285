/* lmf_box.c — boxes: userdata that hold one pointer to an engine object (a
 * Graph, a Session, a Saver, a profile report, a summary writer...) under
 * the metatable of their class, and the tables bindings register into.
 *
 * A box holds NULL once its object is freed (by __gc, __close or a close
 * method), so every method goes through lmf_box_check, which refuses a
 * freed box with an argument error naming what was freed. */
#include "lmf.h"

void **lmf_box_new(lua_State *L, const char *mt, int nuv)
{
    void **box = lua_newuserdatauv(L, sizeof *box, nuv);
    *box = NULL;
    luaL_setmetatable(L, mt);
    return box;
}

void *lmf_box_check(lua_State *L, int idx, const char *mt, const char *freed)
{
    void *p = lmf_box_get(L, idx, mt);
    if (!p)
        luaL_argerror(L, idx, freed);
    return p;
}

void *lmf_box_get(lua_State *L, int idx, const char *mt)
{
    return *(void **)luaL_checkudata(L, idx, mt);
}

void *lmf_box_take(lua_State *L, int idx, const char *mt)
{
    void **box = luaL_checkudata(L, idx, mt);
    void *p = *box;
    *box = NULL;
    return p;
}

const char *lmf_keep_string(lua_State *L, int keep)
{
    const char *s = lua_tostring(L, -1);
    lua_rawseti(L, keep, (lua_Integer)lua_rawlen(L, keep) + 1);
    return s;
}

void lmf_box_class(lua_State *L, const char *mt, const luaL_Reg *meta, const luaL_Reg *methods)
{
    luaL_newmetatable(L, mt);
    luaL_setfuncs(L, meta, 0);
    if (methods) {
        lua_newtable(L);
        luaL_setfuncs(L, methods, 0);
        lua_setfield(L, -2, "__index");
    }
    lua_pop(L, 1);
}

void lmf_sub_table(lua_State *L, const char *name)
{
    if (lua_getfield(L, -1, name) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, name);
    }
}
