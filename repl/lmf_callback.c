/* lmf_callback.c — calling user Lua functions from bindings without losing
 * the user's traceback.
 *
 * A binding that calls a user function (a loss for 'minimize', 'f' for
 * 'mf.grad', a traced function, a profiled one...) calls it protected, so it
 * can release what it holds, and then raises the same error again. The
 * traceback a handler builds after that second raise starts at the binding
 * ("[C]: in method 'minimize'"): the user's frames are gone. So the handler
 * of 'lmf_pcall' records the whole stack at the first raise, with the error
 * message, in the registry; the prompt's handler and 'debug.traceback' use
 * that record when the same message arrives and the record's tail is the
 * stack they see (the record was taken deeper on this same stack), and
 * build a fresh traceback otherwise. Nothing else depends on the record: a
 * stale one is never shown because its tail would not match.
 *
 * Frames of moonflow's own embedded Lua chunks (chunk names "@repl/...",
 * "@lib/...", e.g. the Dataset pipeline, and the notebook's
 * "@kernel/display.lua") are dropped from what users see. */
#include <stdbool.h>
#include <string.h>

#include "lmf_callback.h"

#define REC_MSG "mf.traceback.msg"
#define REC_TEXT "mf.traceback.text"

/* Pushes the raw traceback (without its message) of 'L' from 'level' on. */
static const char *push_raw(lua_State *L, int level)
{
    luaL_traceback(L, L, NULL, level);
    return lua_tostring(L, -1);
}

/* The record's text when it belongs to the error 'msg' seen at a stack
 * whose raw traceback is 'now' (pushed), else nil (pushed). */
static void push_record(lua_State *L, const char *msg, const char *now)
{
    lua_getfield(L, LUA_REGISTRYINDEX, REC_MSG);
    const char *rmsg = lua_tostring(L, -1);
    lua_getfield(L, LUA_REGISTRYINDEX, REC_TEXT);
    const char *text = lua_tostring(L, -1);
    /* a binding may put its name before the message it raises again */
    size_t lm = msg ? strlen(msg) : 0, lr = rmsg ? strlen(rmsg) : 0;
    bool match = rmsg && text && msg && lr <= lm && strcmp(msg + lm - lr, rmsg) == 0;
    if (match) {
        /* 'now' begins "stack traceback:"; its frames must end the record */
        const char *body = strchr(now, '\n');
        size_t n = body ? strlen(body) : 0, m = strlen(text);
        match = body && n <= m && strcmp(text + m - n, body) == 0;
    }
    lua_remove(L, -2);
    if (!match) {
        lua_pop(L, 1);
        lua_pushnil(L);
    }
}

/* Whether a traceback line shows a frame of moonflow's own Lua code. */
static bool internal_line(const char *line, size_t len)
{
    static const char *const prefixes[] = {"\trepl/", "\tlib/", "\tkernel/"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        size_t p = strlen(prefixes[i]);
        if (len > p && memcmp(line, prefixes[i], p) == 0 && memchr(line, ':', len))
            return true;
    }
    return false;
}

/* Pushes 'text' without its internal lines (each line after the first one
 * starts with "\n"). */
static void push_filtered(lua_State *L, const char *text)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    const char *p = text;
    while (*p) {
        const char *end = strchr(p + 1, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (!(p[0] == '\n' && internal_line(p + 1, len - 1)))
            luaL_addlstring(&b, p, len);
        p += len;
    }
    luaL_pushresult(&b);
}

void lmf_push_traceback(lua_State *L, const char *msg, int level)
{
    int top = lua_gettop(L);
    const char *now = push_raw(L, level);
    push_record(L, msg, now);
    const char *text = lua_isnil(L, -1) ? now : lua_tostring(L, -1);
    push_filtered(L, text);
    if (msg)
        lua_pushfstring(L, "%s\n%s", msg, lua_tostring(L, -1));
    else
        lua_pushvalue(L, -1);
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
}

/* The handler of 'lmf_pcall': records the stack unless the record already
 * belongs to this error (a binding raising again what a deeper callback
 * raised). Returns the error object unchanged. */
static int record_handler(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg || lua_type(L, 1) != LUA_TSTRING)
        return 1;
    const char *now = push_raw(L, 1);
    push_record(L, msg, now);
    if (lua_isnil(L, -1)) {
        lua_pushvalue(L, 1);
        lua_setfield(L, LUA_REGISTRYINDEX, REC_MSG);
        lua_pushvalue(L, 2);
        lua_setfield(L, LUA_REGISTRYINDEX, REC_TEXT);
    }
    lua_settop(L, 1);
    return 1;
}

int lmf_pcall(lua_State *L, int nargs, int nres)
{
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, record_handler);
    lua_insert(L, base);
    int st = lua_pcall(L, nargs, nres, base);
    lua_remove(L, base);
    return st;
}

/* debug.traceback([thread,] [msg [, level]]) as Lua's, plus the recorded
 * frames of an error that crossed a binding, minus internal frames. */
static int db_traceback(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TTHREAD || (!lua_isnoneornil(L, 1) && !lua_isstring(L, 1))) {
        lua_pushvalue(L, lua_upvalueindex(1));   /* Lua's own */
        lua_insert(L, 1);
        lua_call(L, lua_gettop(L) - 1, 1);
        return 1;
    }
    const char *msg = lua_tostring(L, 1);
    int level = (int)luaL_optinteger(L, 2, 1);
    lmf_push_traceback(L, msg, level);
    return 1;
}

void lmf_open_callback(lua_State *L)
{
    if (lua_getglobal(L, "debug") == LUA_TTABLE) {
        lua_getfield(L, -1, "traceback");
        lua_pushcclosure(L, db_traceback, 1);
        lua_setfield(L, -2, "traceback");
    }
    lua_pop(L, 1);
}
