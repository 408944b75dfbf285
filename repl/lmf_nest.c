/* lmf_nest.c — nested structures of values, as TensorFlow's nest: the
 * sources and targets of a gradient, mf.grad's table arguments and their
 * gradients, sess:run's fetches and their values. A structure is a table
 * without a metatable, nesting; anything else (a tensor, a Variable, an
 * object with a metatable, a number) is a leaf. Both walks visit a table
 * with 'lua_next', so flattening a structure and rebuilding it from the
 * same unmodified table agree on the order of the leaves. */
#include "lmf.h"

/* Structures nest at most this deep (a table holding itself is a cycle). */
#define NEST_DEPTH 32

bool lmf_nest_is_structure(lua_State *L, int idx)
{
    if (!lua_istable(L, idx))
        return false;
    if (!lua_getmetatable(L, idx))
        return true;
    lua_pop(L, 1);
    return false;
}

static void flatten(lua_State *L, int idx, int out, lua_Integer *n, const char *fname, int depth)
{
    idx = lua_absindex(L, idx);
    if (!lmf_nest_is_structure(L, idx)) {
        lua_pushvalue(L, idx);
        lua_seti(L, out, ++*n);
        return;
    }
    if (depth >= NEST_DEPTH)
        luaL_error(L, "%s: structures nested deeper than %d tables (a cycle?)", fname,
                   NEST_DEPTH);
    luaL_checkstack(L, 4, fname);
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1))
        flatten(L, -1, out, n, fname, depth + 1);
}

void lmf_nest_flatten(lua_State *L, int idx, int out, lua_Integer *n, const char *fname)
{
    flatten(L, idx, lua_absindex(L, out), n, fname, 0);
}

void lmf_nest_rebuild(lua_State *L, int idx, int leaves, lua_Integer *k, bool count)
{
    idx = lua_absindex(L, idx);
    leaves = lua_absindex(L, leaves);
    if (!lmf_nest_is_structure(L, idx)) {
        lua_geti(L, leaves, ++*k);
        return;
    }
    luaL_checkstack(L, 4, "nest");
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    lua_createtable(L, (int)len, len > 0 && count ? 1 : 0);
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
        lua_pushvalue(L, -2);
        lmf_nest_rebuild(L, -2, leaves, k, count);
        lua_rawset(L, -5);
    }
    if (len > 0 && count) {   /* nil leaves leave holes: the array's length */
        lua_pushinteger(L, len);
        lua_setfield(L, -2, "n");
    }
}
