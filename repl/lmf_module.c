/* lmf_module.c — builds the 'mf' table: each binding file registers its
 * functions, and the tensor methods table is shared with the metatable. */
#include <time.h>

#include "core/alloc.h"
#include "interrupt.h"
#include "lmf_callback.h"
#include "lmf_explain.h"
#include "lmf_regrad.h"
#include <stdio.h>

#include "prompt_show.h"
#include "lmf_strict.h"
#include "lmf.h"
#include "lmf_print.h"

/* Adds 'bytes' as a person reads them: "512 B", "1.5 KiB", "12.0 MiB". */
static void add_bytes(luaL_Buffer *b, lua_State *L, lua_Integer bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
        lua_pushfstring(L, "%I B", bytes);
    } else {
        double v = (double)bytes / 1024.0;
        int u = 0;
        while (v >= 1024.0 && u < 3) {
            v /= 1024.0;
            u++;
        }
        char buf[32];
        snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
        lua_pushstring(L, buf);
    }
    luaL_addvalue(b);
}

/* tostring(mf.memory()): "1.5 MiB in 12 tensors, 256.0 KiB cached". */
static int memory_tostring(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "in_use");
    lua_getfield(L, 1, "tensors");
    lua_getfield(L, 1, "cached");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    add_bytes(&b, L, lua_tointeger(L, 2));
    lua_pushfstring(L, " in %I tensor%s, ", lua_tointeger(L, 3), lua_tointeger(L, 3) == 1 ? "" : "s");
    luaL_addvalue(&b);
    add_bytes(&b, L, lua_tointeger(L, 4));
    luaL_addstring(&b, " cached (fields in_use, cached: bytes; tensors)");
    luaL_pushresult(&b);
    return 1;
}

/* mf.memory() -> {in_use, cached, tensors}: engine bytes held by live
 * tensors, bytes kept for reuse by the caching allocator, live tensors;
 * shown in KiB / MiB (memory_tostring). */
static int l_memory(lua_State *L)
{
    lmf_check_nargs(L, "memory", 0);
    lua_createtable(L, 0, 3);
    if (luaL_newmetatable(L, "mf.Memory")) {
        lua_pushcfunction(L, memory_tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_setmetatable(L, -2);
    lua_pushinteger(L, (lua_Integer)mf_alloc_in_use());
    lua_setfield(L, -2, "in_use");
    lua_pushinteger(L, (lua_Integer)mf_alloc_cached());
    lua_setfield(L, -2, "cached");
    lua_pushinteger(L, (lua_Integer)mf_tensor_live_count());
    lua_setfield(L, -2, "tensors");
    return 1;
}

/* mf.clock() -> seconds on a monotonic wall clock: os.clock() counts CPU
 * time of every thread, which overstates multi-threaded (BLAS) work. */
static int l_clock(lua_State *L)
{
    lmf_check_nargs(L, "clock", 0);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
    return 1;
}

/* require "moonflow" (moonflow.so, or the prompt's own copy): the mf table.
 * A library leaves its host's globals alone: the prompt's print, Ctrl-C in
 * coroutines and the collector's mode are set by the prompt (lmf_open_shell).
 * The one change to a standard library is the debug guard below, which keeps
 * the bindings' operands out of debug.getlocal/setlocal's reach (issue #35
 * M4). */
int luaopen_moonflow(lua_State *L)
{
    lua_newtable(L);           /* mf */
    lua_newtable(L);           /* tensor methods */
    int methods = lua_gettop(L);
    lua_pushvalue(L, -2);      /* mf on top for the openers */
    lmf_open_tensor(L, methods);
    lmf_open_ops(L, methods);
    lmf_open_print(L);
    lmf_open_reduce(L, methods);
    lmf_open_linalg(L, methods);
    lmf_open_shape(L, methods);
    lmf_open_create(L, methods);
    lmf_open_variable(L, methods);
    lmf_open_tape(L, methods);
    lmf_open_profile(L);
    lmf_open_nn(L);
    lmf_open_data(L);
    lmf_open_repl(L);
    lmf_open_graph(L);
    lmf_open_graph_grad(L);
    lmf_open_trace(L);
    lmf_open_summary(L);
    lmf_open_onnx(L);          /* after lmf_open_trace: adds fn:export_onnx */
    lmf_open_train(L);
    lmf_open_dist(L);
    lmf_open_ckpt(L);
    lmf_open_saver(L);
    lmf_open_plot(L);
    lmf_open_progress(L);
    lmf_open_callback(L);
    lmf_open_explain(L);
    lmf_open_regrad(L);
    lmf_open_numerics(L);
    lmf_open_forward(L);
    lua_pushcfunction(L, l_memory);
    lua_setfield(L, -2, "memory");
    lua_pushcfunction(L, l_clock);
    lua_setfield(L, -2, "clock");
    lmf_open_lib(L);           /* written on the mf API above: last */
    lua_pop(L, 2);             /* mf copy and methods */
    lmf_open_strict(L);        /* last: every metatable exists */
    lmf_open_debug_guard(L);   /* the debug library may not reach the bindings' anchors */
    return 1;
}

static int preload_moonflow(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, "mf");
    return 1;
}

#define SHELL_GC_MINOR_PERCENT 10

void lmf_open_shell(lua_State *L)
{
    /* Eager code makes many short-lived tensors; Lua's generational collector
     * frees them young (a loop of small ops stays at a few MB instead of
     * hundreds with the incremental default). */
    lua_gc(L, LUA_GCGEN, 0, 0);
    luaL_requiref(L, "mf", luaopen_moonflow, 0);
    lua_pop(L, 1);
    lua_pushcfunction(L, lmf_show_print);   /* several tensors on one line */
    lua_setglobal(L, "print");
    lmf_open_interrupt(L);     /* Ctrl-C reaches code running in coroutines */
    /* require "moonflow" gives the same table; package.loaded keeps the one
     * name 'mf', which tracebacks use ("in function 'mf.zeros'") */
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, preload_moonflow);
    lua_setfield(L, -2, "moonflow");
    lua_pop(L, 1);
    /* Again, now that the library is loaded. Loading it is mostly live
     * data, so a major collection during it frees little: Lua 5.4 counts that
     * a "bad collection" and runs full incremental cycles (perf: atomic,
     * entersweep, sweepstep) instead of young ones; in the shell as started
     * a loop of small eager ops stayed there. Switching to generational mode
     * resets that (young collections: sweepgen). A young collection every
     * 10% of growth (Lua's default 20%) finalizes dead tensors while their
     * headers are still in cache. 400k eager adds of 1-element tensors under
     * a tape (bench/elementwise.lua's tape_add_x100): 1.0-1.1 -> 0.77 us of
     * CPU each; without a tape 0.76 -> 0.58 us. */
    lua_gc(L, LUA_GCGEN, SHELL_GC_MINOR_PERCENT, 0);
}
