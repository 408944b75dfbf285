/* lmf_init.c — the engine side of mf.initializers: what lib/initializers.lua
 * needs from C, as the table lib.init (lmf_push_init_helpers):
 * - 'defs': core/init.c's initialisers in order, each {name, keys = {option
 *   names, "seed" last when it draws random values}, defaults = {the
 *   defaults of the options before "seed"}};
 * - 'metatable': "mf.Initializer", whose __call runs init(shape [, dtype])
 *   -> tensor (float32 by default) on the object's fields: 'kind' (the
 *   initialiser's name), its options, or constant's 'value';
 * - 'is_tensor': whether a value is an open tensor or a Variable with a value.
 * The objects, their option checks and printing are lib/initializers.lua's;
 * the table of initialisers, their options and their math are core/init.c's.
 * A seeded initialiser gives the same values at every call (TensorFlow's
 * rule for op seeds, core/rng.h); an unseeded one draws a new seed each call. */
#include <string.h>

#include "core/create.h"
#include "core/init.h"
#include "core/rng.h"
#include "lmf.h"

#define INIT_MT "mf.Initializer"

static const MfInitDef *find_def(lua_State *L, int idx)
{
    luaL_checktype(L, idx, LUA_TTABLE);   /* getmetatable(init).__call(2) */
    lua_getfield(L, idx, "kind");
    const char *kind = lua_tostring(L, -1);
    const MfInitDef *d = mf_init_find(kind);
    if (!d)
        luaL_error(L, "initializer: unknown kind '%s'", kind ? kind : "?");
    lua_pop(L, 1);
    return d;
}

static double field_number(lua_State *L, int idx, const char *key)
{
    lua_getfield(L, idx, key);
    double v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return v;
}

static uint64_t field_seed(lua_State *L, int idx)
{
    lua_getfield(L, idx, "seed");
    int has = lua_isinteger(L, -1);
    lua_Integer s = lua_tointeger(L, -1);
    lua_pop(L, 1);
    return mf_rng_op_seed(has, has ? s : 0);
}

/* constant(value)(shape, dtype): a fill by a Lua number or boolean, or the
 * value as a tensor (mf_init_constant). */
static MfStatus constant_call(lua_State *L, int rank, const int64_t *shape, MfDType dt,
                              MfTensor **out)
{
    lua_getfield(L, 1, "value");
    int top = lua_gettop(L);
    if (lua_isinteger(L, top) && mf_dtype_is_int(dt))
        return mf_create_fill_int("constant", dt, rank, shape, lua_tointeger(L, top), out);
    if (lua_type(L, top) == LUA_TNUMBER || lua_isboolean(L, top))
        return mf_create_fill("constant", dt, rank, shape,
                              lua_isboolean(L, top) ? lua_toboolean(L, top) : lua_tonumber(L, top),
                              out);
    return mf_init_constant(lmf_arg_tensor(L, top, -1, "constant"), rank, shape, dt, out);
}

/* init(shape [, dtype]) */
static int init_call(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    const MfInitDef *d = find_def(L, 1);
    lmf_check_nargs(L, d->name, 3);
    if (lua_isnoneornil(L, 2))
        return luaL_error(L, "%s: expected a shape such as {2, 3}, got %s", d->name,
                          luaL_typename(L, 2));
    int64_t shape[MF_MAX_RANK];
    int rank = lmf_check_shape(L, 2, d->name, shape, 0);
    MfDType dt = lmf_opt_dtype(L, 3, MF_FLOAT32);
    MfTensor *out = NULL;
    MfStatus st;
    if (d->kind == MF_INIT_KIND_CONSTANT) {
        st = constant_call(L, rank, shape, dt, &out);
    } else {
        double opt[3] = {0};
        for (int k = 0; k < 3 && d->keys[k] && strcmp(d->keys[k], "seed") != 0; k++)
            opt[k] = field_number(L, 1, d->keys[k]);
        st = mf_init_run(d, opt, field_seed(L, 1), rank, shape, dt, &out);
    }
    lmf_check_status(L, st);
    lmf_push_tensor(L, out);
    return 1;
}

static int l_is_tensor(lua_State *L)
{
    lua_pushboolean(L, lmf_is_tensor(L, 1));
    return 1;
}

/* Pushes the array of core/init.c's initialisers (see the top of the file). */
static void push_defs(lua_State *L)
{
    lua_createtable(L, mf_init_ndefs, 0);
    for (int i = 0; i < mf_init_ndefs; i++) {
        const MfInitDef *d = &mf_init_defs[i];
        lua_createtable(L, 0, 3);
        lua_pushstring(L, d->name);
        lua_setfield(L, -2, "name");
        lua_createtable(L, 4, 0);   /* keys */
        lua_createtable(L, 3, 0);   /* defaults */
        for (int k = 0; d->keys[k]; k++) {
            lua_pushstring(L, d->keys[k]);
            lua_rawseti(L, -3, k + 1);
            lua_pushnumber(L, k < 3 ? d->dflt[k] : 0.0);   /* "seed" (last) has none */
            lua_rawseti(L, -2, k + 1);
        }
        lua_setfield(L, -3, "defaults");
        lua_setfield(L, -2, "keys");
        lua_rawseti(L, -2, i + 1);
    }
}

void lmf_push_init_helpers(lua_State *L)
{
    lua_createtable(L, 0, 3);
    push_defs(L);
    lua_setfield(L, -2, "defs");
    luaL_newmetatable(L, INIT_MT);
    lua_pushcfunction(L, init_call);
    lua_setfield(L, -2, "__call");
    lua_setfield(L, -2, "metatable");
    lua_pushcfunction(L, l_is_tensor);
    lua_setfield(L, -2, "is_tensor");
}
