/* cell.c — a chunk of several lines run, checked, completed and explained
 * with the prompt's rules (see cell.h). The compile tries are those of the
 * prompt's add_return and multi_line; completion is prompt_complete.c's;
 * help() prints through the global 'print', which is swapped for a
 * collector while it runs. */
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "cell.h"
#include "prompt_complete.h"

#define EOFMARK "<eof>"

/* Tries "<head>return <tail>;" (head may be empty); on success pushes the
 * function and returns 1, else pushes nothing and returns 0. */
static int try_return(lua_State *L, const char *code, size_t head, size_t len,
                      const char *chunkname)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, code, head);
    luaL_addstring(&b, "return ");
    luaL_addlstring(&b, code + head, len - head);
    luaL_addstring(&b, ";");
    luaL_pushresult(&b);
    size_t n;
    const char *s = lua_tolstring(L, -1, &n);
    if (luaL_loadbuffer(L, s, n, chunkname) == LUA_OK) {
        lua_remove(L, -2);
        return 1;
    }
    lua_pop(L, 2);
    return 0;
}

/* The offset of the cell's last line that has something on it. */
static size_t last_line_start(const char *code, size_t len)
{
    while (len > 0 && (code[len - 1] == '\n' || code[len - 1] == ' ' ||
                       code[len - 1] == '\t' || code[len - 1] == '\r'))
        len--;
    while (len > 0 && code[len - 1] != '\n')
        len--;
    return len;
}

int lmf_cell_load(lua_State *L, const char *code, size_t len, const char *chunkname)
{
    if (try_return(L, code, 0, len, chunkname))
        return LUA_OK;
    /* the last line alone must be an expression: "end" would compile after
     * "return" too, and return from inside the block it closes */
    size_t last = last_line_start(code, len);
    if (last > 0 && try_return(L, code + last, 0, len - last, chunkname)) {
        lua_pop(L, 1);
        if (try_return(L, code, last, len, chunkname))
            return LUA_OK;
    }
    return luaL_loadbuffer(L, code, len, chunkname);
}

const char *lmf_cell_status(lua_State *L, const char *code, size_t len)
{
    int top = lua_gettop(L);
    const char *status = "complete";
    if (lmf_cell_load(L, code, len, "=cell") != LUA_OK) {
        size_t lmsg;
        const char *msg = lua_tolstring(L, -1, &lmsg);
        size_t lmark = sizeof EOFMARK - 1;
        status = msg && lmsg >= lmark && strcmp(msg + lmsg - lmark, EOFMARK) == 0
                     ? "incomplete" : "invalid";
    }
    lua_settop(L, top);
    return status;
}

void lmf_cell_complete(lua_State *L, const char *word)
{
    lua_pushcfunction(L, lmf_complete_collect);
    lua_pushstring(L, word);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
    }
}

/* print(...) while help runs: appends its line to the table upvalue 1. */
static int collect_print(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1)
            luaL_addchar(&b, '\t');
        luaL_tolstring(L, i, NULL);
        luaL_addvalue(&b);
    }
    luaL_addchar(&b, '\n');
    luaL_pushresult(&b);
    lua_rawseti(L, lua_upvalueindex(1), (lua_Integer)lua_rawlen(L, lua_upvalueindex(1)) + 1);
    return 0;
}

int lmf_cell_help(lua_State *L, const char *name)
{
    lua_getglobal(L, "print");
    int saved = lua_gettop(L);
    lua_newtable(L);
    int lines = lua_gettop(L);
    lua_pushvalue(L, lines);
    lua_pushcclosure(L, collect_print, 1);
    lua_setglobal(L, "print");
    lua_getglobal(L, "mf");
    lua_getfield(L, -1, "help");
    lua_remove(L, -2);
    lua_pushstring(L, name);
    int status = lua_pcall(L, 1, 0, 0);   /* an error too when mf.help is gone */
    lua_pushvalue(L, saved);
    lua_setglobal(L, "print");
    if (status != LUA_OK) {
        lua_replace(L, saved);
        lua_settop(L, saved);
        return 0;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, lines); i++) {
        lua_rawgeti(L, lines, i);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    lua_replace(L, saved);
    lua_settop(L, saved);
    return strncmp(lua_tostring(L, -1), "help: no entry", 14) != 0;
}
