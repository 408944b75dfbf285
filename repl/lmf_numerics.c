/* lmf_numerics.c — mf.debugging.enable_check_numerics() and
 * disable_check_numerics(), TensorFlow's names (core/numerics.h does the
 * check), and the hook that tells the engine the user's Lua line: the first
 * frame of the running thread outside moonflow's own lib/ chunks, so an op
 * a layer runs is placed at the line that called the layer. */
#include <string.h>

#include "core/numerics.h"
#include "interrupt.h"
#include "lmf.h"

static lua_State *main_thread;   /* the state mf was opened on */

/* "script.lua:12" of the first Lua frame of 'L' not in a "@lib/" chunk (the
 * first Lua frame when every one is). */
static void lua_where(char *buf, size_t cap)
{
    lua_State *L = lmf_interrupt_running();
    if (!L)
        L = main_thread;
    buf[0] = '\0';
    if (!L)
        return;
    lua_Debug ar;
    for (int level = 0; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0)
            continue;
        bool lib = strncmp(ar.source, "@lib/", 5) == 0;
        if (!buf[0] || !lib)
            snprintf(buf, cap, "%s:%d", ar.short_src, ar.currentline);
        if (!lib)
            return;
    }
}

static int no_arguments(lua_State *L, const char *fname)
{
    if (lua_gettop(L) > 0)
        return luaL_error(L, "mf.debugging.%s: expected no arguments, got %d (TensorFlow's "
                          "stack_height_limit and path_length_limit are not supported)",
                          fname, lua_gettop(L));
    return 0;
}

static int l_enable(lua_State *L)
{
    no_arguments(L, "enable_check_numerics");
    mf_numerics_enable(true);
    return 0;
}

static int l_disable(lua_State *L)
{
    no_arguments(L, "disable_check_numerics");
    mf_numerics_enable(false);
    return 0;
}

void lmf_open_numerics(lua_State *L)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    main_thread = lua_tothread(L, -1);
    lua_pop(L, 1);
    mf_numerics_set_where(lua_where);
    static const luaL_Reg funcs[] = {{"enable_check_numerics", l_enable},
                                     {"disable_check_numerics", l_disable},
                                     {NULL, NULL}};
    lua_getfield(L, -1, "debugging");
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, "debugging");
    }
    luaL_setfuncs(L, funcs, 0);
    lua_pop(L, 1);
}
