/* lmf_ckpt.c — checkpoint files from Lua: mf.save and mf.load over the
 * safetensors reader and writer of core/io/safetensors.c.
 *
 *   mf.save(path, {name = tensor_or_Variable, ...} [, metadata])
 *   mf.load(path [, {metadata = true}]) -> {name = tensor, ...} [, metadata]
 *
 * The C arrays handed to the writer live in userdata on the Lua stack, and
 * the names are the table's own key strings, so a raised error leaks nothing. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/io/safetensors.h"

#include "lmf.h"

/* Number of entries of the table at 'idx'. */
static int count_entries(lua_State *L, int idx)
{
    int n = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (n == INT32_MAX - 1)
            luaL_error(L, "save: too many tensors");
        n++;
    }
    return n;
}

/* Fills names/tensors from {name = tensor_or_Variable}; names are held by
 * the table at 'idx', the slots owning the tensors by the userdata at
 * 'holder'. */
static void collect_tensors(lua_State *L, int idx, int holder, const char **names,
                            MfTensor **tensors)
{
    int i = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            luaL_error(L, "save: the table's keys must be tensor names (strings), got a %s key",
                       luaL_typename(L, -2));
        size_t klen;
        names[i] = lua_tolstring(L, -2, &klen);
        if (strlen(names[i]) != klen)
            luaL_error(L, "save: the tensor name '%s\\0...' holds a NUL byte; names cannot",
                       names[i]);
        MfVariable *v = lmf_test_variable(L, -1);
        if (v && !v->value)
            luaL_error(L, "save: Variable '%s' has no value yet (graph mode: run its "
                       "initializer in a Session first)", names[i]);
        tensors[i] = lmf_test_tensor(L, -1);
        if (!tensors[i])
            luaL_error(L, "save: '%s' is a %s; expected a tensor or Variable", names[i],
                       luaL_typename(L, -1));
        lmf_keep(L, holder);   /* the slot that owns tensors[i] */
        i++;
    }
}

/* Key/value strings of the metadata table at 'idx' (strings or numbers),
 * NULL-terminated; converted values are anchored in the table at 'anchor'. */
static const char **collect_metadata(lua_State *L, int idx, int anchor)
{
    int k = count_entries(L, idx);
    const char **meta = lua_newuserdatauv(L, sizeof *meta * (2 * (size_t)k + 1), 0);
    lua_rawseti(L, anchor, 1);
    int i = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            luaL_error(L, "save: metadata keys must be strings, got a %s key",
                       luaL_typename(L, -2));
        int t = lua_type(L, -1);
        if (t != LUA_TSTRING && t != LUA_TNUMBER)
            luaL_error(L, "save: metadata '%s' is a %s; expected a string or number",
                       lua_tostring(L, -2), luaL_typename(L, -1));
        meta[i] = lua_tostring(L, -2);
        meta[i + 1] = luaL_tolstring(L, -1, NULL);
        lua_rawseti(L, anchor, i + 2);
        lua_pop(L, 1);
        i += 2;
    }
    meta[i] = NULL;
    return meta;
}

/* mf.save(path, {name = tensor_or_Variable, ...} [, metadata]) */
static int l_save(lua_State *L)
{
    const char *path = lmf_check_path(L, 1, "save");
    luaL_checktype(L, 2, LUA_TTABLE);
    if (!lua_isnoneornil(L, 3))
        luaL_checktype(L, 3, LUA_TTABLE);
    lua_settop(L, 3);
    lua_newtable(L); /* 4: anchors */
    int n = count_entries(L, 2);
    const char **names = lua_newuserdatauv(L, sizeof *names * ((size_t)n + 1), 0);
    MfTensor **tensors = lua_newuserdatauv(L, sizeof *tensors * ((size_t)n + 1), 1);
    collect_tensors(L, 2, lua_gettop(L), names, tensors);
    const char **meta = lua_isnil(L, 3) ? NULL : collect_metadata(L, 3, 4);
    lmf_check_written(L, mf_safetensors_write(path, n, (const char *const *)names, tensors,
                                             (const char *const *)meta));
    return 0;
}

/* Pushes {key = value} of a NULL-terminated key/value array. */
static void push_metadata(lua_State *L, char **meta)
{
    lua_newtable(L);
    for (int i = 0; meta && meta[i]; i += 2) {
        lua_pushstring(L, meta[i + 1]);
        lua_setfield(L, -2, meta[i]);
    }
}

/* mf.load(path [, {metadata = true}]) -> {name = tensor, ...}
 * [, {metadata key = value}]: the table alone unless the metadata is asked
 * for, so print(mf.load(p)) and f(mf.load(p)) see only the tensors. */
static int l_load(lua_State *L)
{
    static const char *const known[] = {"metadata", NULL};
    const char *path = lmf_check_path(L, 1, "load");
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TTABLE);
    lmf_check_options(L, 2, "load", known);
    bool with_meta = lmf_opt_bool(L, 2, "load", "metadata", 0);
    int n;
    char **names, **meta;
    MfTensor **tensors;
    MfStatus st = mf_safetensors_read_meta(path, &n, &names, &tensors, &meta);
    if (st != MF_OK)
        return lmf_raise(L);
    lua_createtable(L, 0, n);
    for (int i = 0; i < n; i++) {
        lmf_push_tensor(L, tensors[i]); /* steals the reference */
        tensors[i] = NULL;
        lua_setfield(L, -2, names[i]);
    }
    if (with_meta)
        push_metadata(L, meta);
    mf_safetensors_free(n, names, tensors);
    mf_safetensors_free_metadata(meta);
    return with_meta ? 2 : 1;
}

void lmf_open_ckpt(lua_State *L)
{
    lua_pushcfunction(L, l_save);
    lua_setfield(L, -2, "save");
    lua_pushcfunction(L, l_load);
    lua_setfield(L, -2, "load");
}
