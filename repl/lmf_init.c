/* lmf_init.c — mf.initializers: zeros, ones, constant, random_normal,
 * truncated_normal, random_uniform and the variance-scaling family
 * (glorot_uniform, glorot_normal, he_normal, he_uniform, lecun_normal,
 * lecun_uniform) and orthogonal.
 *
 * Each constructor returns an initialiser object: a table holding its
 * options (and 'kind', its name) with metatable "mf.Initializer", callable as
 * init(shape [, dtype]) -> tensor (dtype float32 by default). A seeded
 * initialiser gives the same values at every call (TensorFlow's rule for op
 * seeds, core/rng.h); an unseeded one draws a new seed each call. The
 * table of initialisers, their options and their math are in core/init.c. */
#include <string.h>

#include "core/create.h"
#include "core/init.h"
#include "core/rng.h"
#include "lmf.h"
#include "lmf_init.h"

#define INIT_MT "mf.Initializer"

/* Lists the options of 'd' as "a, b, c" into 'buf'. */
static const char *key_list(const MfInitDef *d, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int i = 0; d->keys[i]; i++) {
        if (i)
            strncat(buf, ", ", cap - strlen(buf) - 1);
        strncat(buf, d->keys[i], cap - strlen(buf) - 1);
    }
    return buf[0] ? buf : "none";
}

/* Checks the type of the option whose key (known, lmf_check_options ran)
 * and value lua_next pushed; pops the value. */
static void check_option(lua_State *L, const MfInitDef *d)
{
    const char *name = lua_tostring(L, -2);
    int is_seed = strcmp(name, "seed") == 0;
    if (lua_type(L, -1) != LUA_TNUMBER || (is_seed && !lua_isinteger(L, -1)))
        luaL_error(L, "%s: option '%s' must be %s, got %s", d->name, name,
                   is_seed ? "an integer" : "a number", luaL_typename(L, -1));
    lua_pop(L, 1);
}

/* Copies the options at 'idx' (nil or a table) into the table on top,
 * checking names and types and filling defaults. */
static void copy_options(lua_State *L, int idx, const MfInitDef *d)
{
    char keys[64];
    if (!lua_isnoneornil(L, idx) && !lua_istable(L, idx))
        luaL_error(L, "%s: expected an options table {%s}, got %s", d->name,
                   key_list(d, keys, sizeof keys), luaL_typename(L, idx));
    if (!lua_isnoneornil(L, idx)) {
        lmf_check_options(L, idx, d->name, d->keys);
        lua_pushnil(L);
        while (lua_next(L, idx))
            check_option(L, d);
    }
    for (int k = 0; d->keys[k]; k++) {
        if (lua_istable(L, idx))
            lua_getfield(L, idx, d->keys[k]);
        else
            lua_pushnil(L);
        if (lua_isnil(L, -1) && strcmp(d->keys[k], "seed") != 0) {
            lua_pop(L, 1);
            lua_pushnumber(L, d->dflt[k]);
        }
        lua_setfield(L, -2, d->keys[k]);
    }
}

/* mf.initializers.NAME([opts]) / constant(value): the initialiser object. */
static int l_make(lua_State *L)
{
    const MfInitDef *d = &mf_init_defs[lua_tointeger(L, lua_upvalueindex(1))];
    lmf_check_nargs(L, d->name, 1);
    lua_settop(L, 1);
    lua_newtable(L);
    if (d->kind == MF_INIT_KIND_CONSTANT) {
        int ty = lua_type(L, 1);
        if (ty != LUA_TNIL && ty != LUA_TNUMBER && ty != LUA_TBOOLEAN && ty != LUA_TTABLE &&
            !lmf_is_tensor(L, 1))
            return lmf_arg_error(L, 1, "constant", "a number, boolean, array or tensor");
        if (ty == LUA_TTABLE && lua_rawlen(L, 1) == 0 && (lua_pushnil(L), lua_next(L, 1)))
            return luaL_error(L, "constant: the value must be an array, got a table with the "
                              "key '%s'", luaL_tolstring(L, -2, NULL));
        if (lua_isnil(L, 1))
            lua_pushinteger(L, 0);
        else
            lua_pushvalue(L, 1);
        lua_setfield(L, -2, "value");
    } else {
        copy_options(L, 1, d);
    }
    lua_pushstring(L, d->name);
    lua_setfield(L, -2, "kind");
    luaL_setmetatable(L, INIT_MT);
    return 1;
}

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
    return mf_init_constant(lmf_to_tensor(L, top, -1), rank, shape, dt, out);
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

/* mf.initializers.glorot_uniform{seed=1}, mf.initializers.constant(3) */
static int init_tostring(lua_State *L)
{
    lua_settop(L, 1);   /* extra arguments would end up in the concatenation */
    const MfInitDef *d = find_def(L, 1);
    int n = 1, opened = 0;
    lua_pushfstring(L, "mf.initializers.%s", d->name);
    if (d->kind == MF_INIT_KIND_CONSTANT) {
        lua_getfield(L, 1, "value");
        int num = lua_type(L, -1) == LUA_TNUMBER || lua_isboolean(L, -1);
        lua_pushfstring(L, "(%s)", num ? luaL_tolstring(L, -1, NULL) : luaL_typename(L, -1));
        lua_replace(L, -2 - num);
        lua_settop(L, 3);
        n++;
    }
    for (int k = 0; d->keys[k]; k++) {
        lua_getfield(L, 1, d->keys[k]);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            continue;
        }
        lua_pushfstring(L, "%s%s=%s", opened ? ", " : "{", d->keys[k],
                        luaL_tolstring(L, -1, NULL));
        lua_replace(L, -3);
        lua_pop(L, 1);
        opened = 1;
        n++;
    }
    if (opened) {
        lua_pushliteral(L, "}");
        n++;
    }
    lua_concat(L, n);
    return 1;
}

void lmf_open_init(lua_State *L)
{
    luaL_newmetatable(L, INIT_MT);
    lua_pushcfunction(L, init_call);
    lua_setfield(L, -2, "__call");
    lua_pushcfunction(L, init_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    lua_createtable(L, 0, mf_init_ndefs);
    for (int i = 0; i < mf_init_ndefs; i++) {
        lua_pushinteger(L, i);
        lua_pushcclosure(L, l_make, 1);
        lua_setfield(L, -2, mf_init_defs[i].name);
    }
    lua_setfield(L, -2, "initializers");
}
