/* lmf_lib.c — the Lua library above the face (doc/design.md): the
 * files of lib/ (mf.layers, models and fit, mf.losses, mf.metrics, the
 * learning-rate schedules, AdamW, mf.data.Dataset), written in Lua on the public mf API and
 * embedded at build time: the Makefile runs tools/embed_lua.sh on each file
 * in LIB_LUA's order into $(BUILD)/gen/lib_lua.inc, one entry per file.
 *
 * Each file runs once, as chunk "@lib/<file>.lua", with two arguments: the
 * mf table and a table private to the library ('lib'), through which the
 * files share helpers; a later file may use what an earlier one defined. */
#include <string.h>

#include "graph/graph.h"
#include "help.h"
#include "lmf.h"
#include "lmf_callback.h"

typedef struct LibFile {
    const char *chunkname;
    const char *const *lines;
} LibFile;

static const LibFile lib_files[] = {
#include "lib_lua.inc"
    {NULL, NULL},
};

/* lib.eager(fn, ...) -> fn(...) run eagerly, whatever graph is being built
 * (g:as_default or mf.trace): a layer's initial values are computed once, as
 * concrete tensors (an orthogonal initializer needs them), and a graph
 * Variable takes them as its Const initializer. Private to lib/. */
static int l_eager(lua_State *L)
{
    luaL_checkany(L, 1); /* a function or a callable (an mf.Initializer) */
    lmf_check_status(L, mf_graph_push_default(NULL));
    int st = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
    mf_graph_pop_default();
    if (st != LUA_OK)
        return lua_error(L);
    return lua_gettop(L);
}

/* lib.call(obj, fn, ...) -> fn(...), as a C binding calls the user's
 * function: it may not yield, and when it raises, 'obj' is closed (its
 * __close) before the error goes on. Lua code of lib/ that opens a scope
 * (mf.grad's tape) so leaves nothing open even in a coroutine that ends
 * with the error (a to-be-closed variable waits there for
 * coroutine.close) or is never resumed. Private to lib/. */
static int l_call(lua_State *L)
{
    if (lmf_pcall(L, lua_gettop(L) - 2, LUA_MULTRET) == LUA_OK)
        return lua_gettop(L) - 1;
    if (luaL_callmeta(L, 1, "__close"))
        lua_pop(L, 1);
    return lua_error(L);
}

/* lib.numeric_values(x) -> whether x is an open tensor or Variable with
 * numbers to read now: not symbolic (a graph tensor or Variable), not bool.
 * Private to lib/ (TensorBoard's histograms). */
static int l_numeric_values(lua_State *L)
{
    MfTensor *t = lmf_test_tensor(L, 1);   /* a Variable gives its value */
    lua_pushboolean(L, t && !t->node && t->dtype != MF_BOOL);
    return 1;
}

const char *const *lmf_lib_source(const char *name)
{
    for (const LibFile *f = lib_files; f->chunkname; f++)
        if (strcmp(f->chunkname + 1, name) == 0)
            return f->lines;
    return NULL;
}

void lmf_open_lib(lua_State *L)
{
    int mf = lua_gettop(L);
    lua_newtable(L); /* lib: the files' shared helpers */
    int lib = lua_gettop(L);
    lua_pushcfunction(L, l_eager);
    lua_setfield(L, lib, "eager");
    lua_pushcfunction(L, l_call);
    lua_setfield(L, lib, "call");
    lua_pushcfunction(L, l_numeric_values);
    lua_setfield(L, lib, "numeric_values");
    lua_pushcfunction(L, lmf_vmap_run);
    lua_setfield(L, lib, "vmap_run");
    lmf_push_data_helpers(L);
    lua_setfield(L, lib, "data");
    lmf_push_init_helpers(L);
    lua_setfield(L, lib, "init");
    for (const LibFile *f = lib_files; f->chunkname; f++) {
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (int i = 0; f->lines[i]; i++)
            luaL_addstring(&b, f->lines[i]);
        luaL_pushresult(&b);
        size_t len;
        const char *code = lua_tolstring(L, -1, &len);
        if (luaL_loadbuffer(L, code, len, f->chunkname) != LUA_OK)
            lua_error(L);
        lua_remove(L, -2);
        lua_pushvalue(L, mf);
        lua_pushvalue(L, lib);
        lua_call(L, 2, 0);
    }
    lua_getfield(L, lib, "help_entries"); /* lib.help's entries, for help() */
    lua_setfield(L, LUA_REGISTRYINDEX, LMF_LIB_HELP);
    lua_getfield(L, lib, "publish");   /* lib/util.lua: argument counts, error names */
    lua_pushvalue(L, mf);
    lua_call(L, 1, 0);
    lua_settop(L, mf);
}
