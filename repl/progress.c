/* progress.c — mf.progress{total, epochs, ...}: the progress line of a
 * training loop, drawn on stdout by train/progress.c (the line, its timing,
 * rate limiting and redrawing are there); this file reads the arguments.
 *
 * Ownership: the "mf.Progress" userdata holds the MfProgress (no pointers
 * to Lua values). Errors are raised before any output. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lmf.h"
#include "train/progress.h"

#define PROGRESS_MT "mf.Progress"

static MfProgress *check_progress(lua_State *L)
{
    return luaL_checkudata(L, 1, PROGRESS_MT);
}

/* Where the line of the progress at 1 is drawn: stdout, or NULL when it
 * was made with draw = false (its user value). */
static FILE *line_out(lua_State *L)
{
    bool quiet = lua_getiuservalue(L, 1, 1) == LUA_TBOOLEAN && !lua_toboolean(L, -1);
    lua_pop(L, 1);
    return quiet ? NULL : stdout;
}

/* The integer option 'key' of the table at 'idx', or 'dflt' when absent:
 * a count of mf.progress ('p' NULL) or a position of p:update. */
static int64_t opt_count(lua_State *L, int idx, const char *key, int64_t dflt,
                         const MfProgress *p)
{
    lua_Integer v = dflt;
    if (lmf_opt_integer_given(L, idx, p ? "update" : "progress", key, &v))
        lmf_check_status(L, p ? mf_progress_check_position(p, key, v)
                              : mf_progress_check_count(key, v));
    return v;
}

/* A metric value: a Lua number or a one-element tensor (a loss as it comes). */
static double metric_value(lua_State *L, int idx, const char *name)
{
    if (lua_type(L, idx) == LUA_TNUMBER)
        return lua_tonumber(L, idx);
    MfTensor *t = lmf_test_tensor(L, idx);
    if (t && t->storage && mf_tensor_numel(t) == 1)
        return mf_tensor_get(t, 0);
    return luaL_error(L, "update: '%s' must be a number or a one-element tensor, got %s",
                      name, t ? "a tensor with several (or no) values" : luaL_typename(L, idx));
}

/* Every field of the update table other than step and epoch is a metric. */
static void read_metrics(lua_State *L, MfProgress *p, int idx)
{
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            luaL_error(L, "update: fields must be named (step=, epoch=, loss=, ...)");
        const char *name = lua_tostring(L, -2);
        if (strcmp(name, "step") != 0 && strcmp(name, "epoch") != 0)
            lmf_check_status(L, mf_progress_set_metric(p, name, metric_value(L, -1, name)));
        lua_pop(L, 1);
    }
}

/* The step and epoch of this update: given, or the next step
 * (mf_progress_next). */
static void next_position(lua_State *L, MfProgress *p, int idx, int64_t *step, int64_t *epoch)
{
    mf_progress_next(p, step, epoch);
    if (idx) {
        *step = opt_count(L, idx, "step", *step, p);
        *epoch = opt_count(L, idx, "epoch", *epoch, p);
    }
    lmf_check_status(L, mf_progress_check_epoch(p, *epoch));
}

/* p:update([{step =, epoch =, loss =, <metric> = ...} | step]) */
static int l_update(lua_State *L)
{
    lmf_check_nargs(L, "update", 2);
    MfProgress *p = check_progress(L);
    int idx = 0;
    if (lua_type(L, 2) == LUA_TNUMBER) {
        lua_createtable(L, 0, 1);
        lua_pushvalue(L, 2);
        lua_setfield(L, -2, "step");
        lua_replace(L, 2);
    }
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        idx = 2;
    }
    int64_t step, epoch;
    next_position(L, p, idx, &step, &epoch);
    bool named_epoch = false;
    if (idx) {
        read_metrics(L, p, idx);
        named_epoch = lua_getfield(L, idx, "epoch") != LUA_TNIL;
        lua_pop(L, 1);
    }
    lmf_check_status(L, mf_progress_update(p, step, epoch, named_epoch, mf_progress_now(),
                                           line_out(L)));
    return 0;
}

/* p:done(): ends the line (prints the final state with the total time);
 * also the '__close' of p (which Lua calls with the error, if any). */
static int end_line(lua_State *L)
{
    /* self is checked before line_out reads its user value: C leaves the
     * order of a call's arguments open */
    MfProgress *p = check_progress(L);
    mf_progress_done(p, mf_progress_now(), line_out(L));
    return 0;
}

static int l_done(lua_State *L)
{
    lmf_check_nargs(L, "done", 1);
    return end_line(L);
}

static int l_tostring(lua_State *L)
{
    char line[512];
    mf_progress_line(check_progress(L), mf_progress_now(), line, sizeof line);
    lua_pushstring(L, line);
    return 1;
}

/* mf.progress{total, epochs, interval, tty, draw} */
static int l_progress(lua_State *L)
{
    lmf_check_nargs(L, "progress", 1);
    static const char *const known[] = {"total", "epochs", "interval", "tty", "draw", NULL};
    if (!lua_isnoneornil(L, 1))
        luaL_checktype(L, 1, LUA_TTABLE);
    lmf_check_options(L, 1, "progress", known);
    lua_settop(L, 1);
    MfProgress *p = lua_newuserdatauv(L, sizeof *p, 1);
    int64_t total = 0, epochs = 0;
    if (lua_istable(L, 1)) {
        total = opt_count(L, 1, "total", 0, NULL);
        epochs = opt_count(L, 1, "epochs", 0, NULL);
    }
    double interval = lmf_opt_number(L, 1, "progress", "interval", 1.0);
    bool tty = lmf_opt_bool(L, 1, "progress", "tty", isatty(fileno(stdout)));
    lua_pushboolean(L, lmf_opt_bool(L, 1, "progress", "draw", true));
    lua_setiuservalue(L, 2, 1);
    lmf_check_status(L, mf_progress_init(p, total, epochs, interval, tty, mf_progress_now()));
    luaL_setmetatable(L, PROGRESS_MT);
    return 1;
}

void lmf_open_progress(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"update", l_update}, {"done", l_done}, {NULL, NULL},
    };
    luaL_newmetatable(L, PROGRESS_MT);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, end_line);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, l_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    lua_pushcfunction(L, l_progress);
    lua_setfield(L, -2, "progress");
}
