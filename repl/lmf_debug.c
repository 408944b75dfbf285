/* lmf_debug.c — what Lua's debug library may reach in moonflow (issue #35 M4).
 *
 * A binding keeps what it converted or borrowed in its own stack slots and in
 * user values of its boxes (lmf.h "Operand lifetime"). Lua code that runs
 * inside a binding (an options table's __index, a finalizer) could reach
 * them through the debug library: debug.setlocal on the binding's frame
 * replaces the anchoring box, a collection frees the operand, and the
 * binding reads freed memory (reduce_sum(mf.ones{1000}) gave 7000). So:
 *   - debug.getlocal and debug.setlocal see no slots in a C function's frame
 *     (getlocal returns nothing, setlocal raises); Lua frames are as before;
 *   - debug.getuservalue and debug.setuservalue refuse moonflow's userdata
 *     (a metatable named "mf.*"), whose user values hold what they keep.
 * The rest of the debug library is Lua's own. The guards wrap the standard
 * functions (kept as upvalues) in the 'debug' table when moonflow opens. */
#include <string.h>

#include "lmf.h"

/* The thread an argument list starts with, as ldblib.c reads it: '*arg' is
 * 1 when a thread was given, else 0. */
static lua_State *thread_arg(lua_State *L, int *arg)
{
    *arg = lua_type(L, 1) == LUA_TTHREAD;
    return *arg ? lua_tothread(L, 1) : L;
}

/* Calls the standard function (upvalue 1) with the arguments as they are. */
static int call_original(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* True when 'level' of 'L1' (levels as the caller of the guard counts them)
 * is a C function's frame. */
static bool c_frame(lua_State *L1, lua_Integer level)
{
    lua_Debug ar;
    if (level < 0 || level > INT32_MAX || !lua_getstack(L1, (int)level, &ar))
        return false;   /* the standard function reports the range */
    lua_getinfo(L1, "S", &ar);
    return strcmp(ar.what, "C") == 0;
}

/* getlocal / setlocal: a frame given by level may not be a C function's;
 * on the running thread the standard function runs one level deeper than
 * this guard, so the level passed on is one more. */
static int guard_local(lua_State *L, bool set)
{
    int arg;
    lua_State *L1 = thread_arg(L, &arg);
    if (lua_type(L, arg + 1) == LUA_TNUMBER) {   /* a level, not a function */
        lua_Integer level = lua_tointeger(L, arg + 1);
        if (c_frame(L1, level)) {
            if (set)
                return luaL_error(L, "debug.setlocal: level %I is a C function: its slots "
                                  "hold what moonflow's bindings keep alive, and cannot be "
                                  "changed", level);
            return 0;
        }
        if (L1 == L && level < INT32_MAX) {
            lua_pushinteger(L, level + 1);
            lua_replace(L, arg + 1);
        }
    }
    return call_original(L);
}

static int guard_getlocal(lua_State *L)
{
    return guard_local(L, false);
}

static int guard_setlocal(lua_State *L)
{
    return guard_local(L, true);
}

/* getuservalue / setuservalue ('fname'): not on a moonflow userdata. */
static int guard_uservalue(lua_State *L, const char *fname)
{
    if (lua_type(L, 1) == LUA_TUSERDATA && luaL_getmetafield(L, 1, "__name") == LUA_TSTRING) {
        const char *cls = lua_tostring(L, -1);
        if (strncmp(cls, "mf.", 3) == 0)
            return luaL_error(L, "%s: the user values of an %s hold what moonflow keeps "
                              "alive; the debug library may not reach them", fname, cls);
        lua_pop(L, 1);
    }
    return call_original(L);
}

static int guard_getuservalue(lua_State *L)
{
    return guard_uservalue(L, "debug.getuservalue");
}

static int guard_setuservalue(lua_State *L)
{
    return guard_uservalue(L, "debug.setuservalue");
}

void lmf_open_debug_guard(lua_State *L)
{
    static const luaL_Reg guards[] = {{"getlocal", guard_getlocal},
                                      {"setlocal", guard_setlocal},
                                      {"getuservalue", guard_getuservalue},
                                      {"setuservalue", guard_setuservalue},
                                      {NULL, NULL}};
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    if (lua_getfield(L, -1, "debug") == LUA_TTABLE) {
        for (const luaL_Reg *g = guards; g->name; g++) {
            if (lua_getfield(L, -1, g->name) != LUA_TFUNCTION) {
                lua_pop(L, 1);
                continue;
            }
            lua_pushcclosure(L, g->func, 1);   /* the standard function as its upvalue */
            lua_setfield(L, -2, g->name);
        }
    }
    lua_pop(L, 2);
}
