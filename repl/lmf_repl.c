/* lmf_repl.c — the shell's part of the mf table: mf.help (also the global
 * help), mf.config(), mf.set_num_threads(n) and mf.__version.
 *
 * mf.config() returns a fresh table whose metatable prints it as a short
 * report, so typing mf.config() at the prompt shows it readably. */
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/ops/conv.h"
#include "core/parallel.h"
#include "graph/graph.h"
#include "help.h"
#include "lmf.h"
#include "version.h"

#define CONFIG_MT "mf.Config"

/* tostring(mf.config()): "moonflow 0.1.0 | Lua 5.4 | ..." on a few lines. */
static int config_tostring(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "version");
    lua_getfield(L, 1, "lua");
    lua_getfield(L, 1, "blas");
    lua_getfield(L, 1, "corename");
    lua_getfield(L, 1, "threads");
    lua_getfield(L, 1, "coretype_env");
    const char *env = lua_tostring(L, -1);
    lua_pushfstring(L,
                    "moonflow %s\nLua:     %s\nBLAS:    %s\ncore:    %s%s%s%s\nthreads: %s",
                    lua_tostring(L, 2), lua_tostring(L, 3), lua_tostring(L, 4),
                    lua_tostring(L, 5), env ? " (OPENBLAS_CORETYPE=" : "", env ? env : "",
                    env ? ")" : "", luaL_tolstring(L, 6, NULL));
    return 1;
}

/* mf.config() -> {version, lua, blas, corename, threads, coretype_env,
 * conv_algorithm, fusion}: coretype_env is the OPENBLAS_CORETYPE variable,
 * or nil when unset. mf.config{conv_algorithm = ..., fusion = bool} sets
 * those two first. */
static int l_config(lua_State *L)
{
    lmf_check_nargs(L, "config", 1);
    const char *env = getenv("OPENBLAS_CORETYPE");
    if (!lua_isnoneornil(L, 1)) {
        static const char *const known[] = {"conv_algorithm", "fusion", NULL};
        luaL_checktype(L, 1, LUA_TTABLE);
        lmf_check_options(L, 1, "config", known);
        lua_getfield(L, 1, "conv_algorithm");
        bool given = !lua_isnil(L, -1);
        lua_pop(L, 1);
        if (given)
            mf_conv_set_algorithm(
                (MfConvAlgo)lmf_conv_algorithm_option(L, 1, "conv_algorithm", "config"));
        int fusion = lmf_opt_bool(L, 1, "config", "fusion", -1);
        if (fusion >= 0)
            mf_fusion_set_enabled(fusion);
    }
    lua_createtable(L, 0, 8);
    lua_pushstring(L, mf_conv_algorithm_names()[mf_conv_get_algorithm()]);
    lua_setfield(L, -2, "conv_algorithm");
    lua_pushboolean(L, mf_fusion_enabled());
    lua_setfield(L, -2, "fusion");
    lua_pushstring(L, MF_VERSION);
    lua_setfield(L, -2, "version");
    lua_pushstring(L, LUA_RELEASE);
    lua_setfield(L, -2, "lua");
    lua_pushstring(L, openblas_get_config());
    lua_setfield(L, -2, "blas");
    lua_pushstring(L, openblas_get_corename());
    lua_setfield(L, -2, "corename");
    lua_pushinteger(L, mf_parallel_threads());
    lua_setfield(L, -2, "threads");
    if (env && *env) {
        lua_pushstring(L, env);
        lua_setfield(L, -2, "coretype_env");
    }
    luaL_setmetatable(L, CONFIG_MT);
    return 1;
}

/* mf.set_num_threads(n): the worker pool's threads (core/parallel.h). */
static int l_set_num_threads(lua_State *L)
{
    lmf_check_nargs(L, "set_num_threads", 1);
    lua_Integer n = lmf_check_integer(L, 1, "set_num_threads", "the thread count");
    lmf_check_status(L, mf_parallel_set_threads(n));
    return 0;
}

void lmf_open_repl(lua_State *L)
{
    if (luaL_newmetatable(L, CONFIG_MT)) {
        lua_pushcfunction(L, config_tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, lmf_help, 1);
    lua_setfield(L, -2, "help");
    lua_pushcfunction(L, l_config);
    lua_setfield(L, -2, "config");
    lua_pushcfunction(L, l_set_num_threads);
    lua_setfield(L, -2, "set_num_threads");
    lua_pushstring(L, MF_VERSION);
    lua_setfield(L, -2, "__version");
}
