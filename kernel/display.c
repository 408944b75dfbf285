/* display.c — the C side of the notebook's display (display.h): the api
 * table handed to kernel/display.lua and the conversion of its MIME
 * bundles (Lua tables of strings) to JSON. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>

#include "kernel/display.h"
#include "kernel/iopub.h"
#include "kernel/wire.h"
#include "repl/prompt_show.h"

#define KERNEL_TABLE "mf.kernel"

static const char *const display_lua[] = {
#include "kernel_lua.inc"
    NULL,
};

/* The bundle table at 'idx' as a JSON object of strings. */
static cJSON *bundle_json(lua_State *L, int idx)
{
    cJSON *data = cJSON_CreateObject();
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING)
            cJSON_AddStringToObject(data, lua_tostring(L, -2), lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    return data;
}

/* api.publish(msg_type, bundle [, display_id]) */
static int l_publish(lua_State *L)
{
    const char *type = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    const char *id = luaL_optstring(L, 3, NULL);
    cJSON *content = cJSON_CreateObject();
    cJSON_AddItemToObject(content, "data", bundle_json(L, 2));
    cJSON_AddItemToObject(content, "metadata", cJSON_CreateObject());
    cJSON *transient = cJSON_AddObjectToObject(content, "transient");
    if (id)
        cJSON_AddStringToObject(transient, "display_id", id);
    kiopub_drain();   /* what was printed before shows before the picture */
    kiopub_send(type, content);
    return 0;
}

static int l_pid(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)getpid());
    return 1;
}

static int l_now(lua_State *L)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec);
    return 1;
}

/* Loads the embedded lines of display.lua as one chunk. */
static int load_display(lua_State *L)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; display_lua[i]; i++)
        luaL_addstring(&b, display_lua[i]);
    luaL_pushresult(&b);
    size_t len;
    const char *code = lua_tolstring(L, -1, &len);
    int status = luaL_loadbuffer(L, code, len, "@kernel/display.lua");
    lua_remove(L, -2);
    return status;
}

/* Pushes the table of methods of the class 'mt' (the table its __index is,
 * or the upvalue of its __index function that holds 'method': how strict
 * classes keep them, repl/lmf_strict.c), or nil. */
static void push_methods(lua_State *L, const char *mt, const char *method)
{
    int top = lua_gettop(L);
    luaL_getmetatable(L, mt);
    int type = lua_istable(L, -1) ? lua_getfield(L, -1, "__index") : LUA_TNIL;
    int index = lua_gettop(L);
    if (type == LUA_TTABLE) {
        lua_replace(L, top + 1);
        lua_settop(L, top + 1);
        return;
    }
    for (int i = 1; type == LUA_TFUNCTION && lua_getupvalue(L, index, i); i++) {
        if (lua_istable(L, -1) && lua_getfield(L, -1, method) == LUA_TFUNCTION) {
            lua_pop(L, 1);
            lua_replace(L, top + 1);
            lua_settop(L, top + 1);
            return;
        }
        lua_settop(L, index);
    }
    lua_settop(L, top);
    lua_pushnil(L);
}

int kdisplay_open(lua_State *L)
{
    int top = lua_gettop(L);
    int status = load_display(L);
    if (status == LUA_OK) {
        lua_getglobal(L, "mf");
        push_methods(L, "mf.Graph", "render");
        static const luaL_Reg api[] = {
            {"publish", l_publish}, {"show", lmf_show_string}, {"now", l_now},
            {"pid", l_pid}, {NULL, NULL}};
        luaL_newlib(L, api);
        status = lua_pcall(L, 3, 1, 0);
    }
    if (status != LUA_OK || !lua_istable(L, -1)) {
        kwire_log("kernel/display.lua: %s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
        lua_settop(L, top);
        return -1;
    }
    lua_setfield(L, LUA_REGISTRYINDEX, KERNEL_TABLE);
    return 0;
}

cJSON *kdisplay_bundle(lua_State *L, int n)
{
    int top = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, KERNEL_TABLE);
    if (lua_istable(L, -1))
        lua_getfield(L, -1, "bundle");
    else
        lua_pushcfunction(L, lmf_show_string);   /* display.lua failed: the text only */
    for (int i = 1; i <= n; i++)
        lua_pushvalue(L, i);
    cJSON *data;
    if (lua_pcall(L, n, 1, 0) == LUA_OK && lua_istable(L, -1)) {
        data = bundle_json(L, lua_gettop(L));
    } else {
        data = cJSON_CreateObject();
        const char *s = lua_tostring(L, -1);
        cJSON_AddStringToObject(data, "text/plain", s ? s : "(a value that cannot be shown)");
    }
    lua_settop(L, top);
    return data;
}
