/* main.c — the moonflow program (shaped like lua.c). */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <string.h>

#include "lmf.h"

static int report(lua_State *L, int status)
{
    if (status != LUA_OK) {
        fprintf(stderr, "%s\n", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    return status;
}

static int traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    luaL_traceback(L, L, msg ? msg : "(error object is not a string)", 1);
    return 1;
}

static int run_chunk(lua_State *L, int status)
{
    if (status != LUA_OK)
        return status;
    int base = lua_gettop(L);
    lua_pushcfunction(L, traceback);
    lua_insert(L, base);
    status = lua_pcall(L, 0, 0, base);
    lua_remove(L, base);
    return status;
}

int main(int argc, char **argv)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    luaL_requiref(L, "moonflow", luaopen_moonflow, 1);
    lua_setglobal(L, "mf");
    int status = LUA_OK;
    if (argc > 2 && strcmp(argv[1], "-e") == 0)
        status = report(L, run_chunk(L, luaL_loadstring(L, argv[2])));
    else if (argc > 1)
        status = report(L, run_chunk(L, luaL_loadfile(L, argv[1])));
    lua_close(L);
    return status == LUA_OK ? 0 : 1;
}
