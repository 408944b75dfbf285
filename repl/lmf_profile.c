/* lmf_profile.c — the profiler from Lua: mf.profile(fn, ...),
 * mf.profiler.start / stop / peak, and the "mf.ProfileReport" userdata
 * (printing as a table, :rows(), :gemms(), :save_trace(path)).
 *
 * Ownership: a report box owns one MfProfReport, freed by __gc. The arrays
 * that :rows() and :gemms() return are plain tables of plain records; their
 * metatable's __tostring keeps the report box as an upvalue to print from. */
#include <stdlib.h>

#include "present/profile_report.h"
#include "lmf_callback.h"
#include "lmf.h"

#define REPORT_MT "mf.ProfileReport"

/* The report in the box (lmf_box.c) at 'idx'. */
static MfProfReport *check_report(lua_State *L, int idx)
{
    return lmf_box_check(L, idx, REPORT_MT, "ProfileReport is freed");
}

/* Pushes a report of the events collected since the last start. */
static void push_report(lua_State *L)
{
    void **box = lmf_box_new(L, REPORT_MT, 0);
    if (!(*box = mf_prof_report_new()))
        lmf_raise(L);
}

/* Pushes 'text' (an owned C string, freed here) or raises when it is NULL. */
static int push_text(lua_State *L, char *text)
{
    if (!text)
        return luaL_error(L, "profiler: out of memory while formatting the report");
    lua_pushstring(L, text);
    free(text);
    return 1;
}

static int r_tostring(lua_State *L)
{
    if (!lmf_box_get(L, 1, REPORT_MT)) {
        lua_pushliteral(L, "<freed mf.ProfileReport>");
        return 1;
    }
    return push_text(L, mf_prof_report_table(check_report(L, 1)));
}

/* __tostring of the :gemms() array: upvalue 1 is the report box. */
static int gemms_tostring(lua_State *L)
{
    return push_text(L, mf_prof_gemm_table(check_report(L, lua_upvalueindex(1))));
}

static int rows_tostring(lua_State *L)
{
    return push_text(L, mf_prof_report_table(check_report(L, lua_upvalueindex(1))));
}

static int r_gc(lua_State *L)
{
    mf_prof_report_free(lmf_box_take(L, 1, REPORT_MT));
    return 0;
}

/* The fields of row 'i' (or, 'events' set, of event 'i') of the report at
 * 1, read from the box again: every push may run the collector, and a
 * finalizer may free the report (issue #35 M2), so no field pointer is kept
 * across a push. Returns how many fields (0 past the end). */
static int fields_at(lua_State *L, bool events, int64_t i, MfProfField *f)
{
    const MfProfReport *r = check_report(L, 1);
    if (events)
        return i < r->nevents ? mf_prof_event_fields(r, &r->events[i], f) : 0;
    return i < r->nrows ? mf_prof_row_fields(r, &r->rows[i], f) : 0;
}

/* Pushes the record of row or event 'i' (present/profile_report.h). */
static void push_record(lua_State *L, bool events, int64_t i)
{
    MfProfField f[MF_PROF_MAX_FIELDS];
    lua_createtable(L, 0, MF_PROF_MAX_FIELDS);
    for (int k = 0; k < fields_at(L, events, i, f); k++) {
        if (f[k].kind == MF_PROF_STRING)
            lua_pushstring(L, f[k].str);   /* copied before the collector runs */
        else if (f[k].kind == MF_PROF_INTEGER)
            lua_pushinteger(L, (lua_Integer)f[k].num);
        else if (f[k].kind == MF_PROF_BOOL)
            lua_pushboolean(L, f[k].num != 0);
        else
            lua_pushnumber(L, f[k].num);
        lua_setfield(L, -2, f[k].key);   /* keys are static */
    }
}

/* Gives the array on top a metatable whose __tostring is 'fn' bound to the
 * report box at 'box'. */
static void set_printer(lua_State *L, int box, lua_CFunction fn)
{
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, box);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, "__tostring");
    lua_setmetatable(L, -2);
}

/* prof:rows() -> {{op, type, label, calls, total_ms, self_ms, avg_ms, flops, bytes, gflops,
 * peak_pct}, ...} */
static int r_rows(lua_State *L)
{
    lmf_check_nargs(L, "rows", 1);
    lua_createtable(L, (int)check_report(L, 1)->nrows, 0);
    for (int64_t i = 0; i < check_report(L, 1)->nrows; i++) {
        push_record(L, false, i);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    set_printer(L, 1, rows_tostring);
    return 1;
}

/* prof:gemms() -> array of GEMM records {op, M, N, K, trans_a, trans_b, ms,
 * gflops, peak_pct, flops, bytes, algorithm ("winograd"; nil for a plain
 * GEMM)} and step records {op, step, ms, bytes},
 * in time order. */
static int r_gemms(lua_State *L)
{
    lmf_check_nargs(L, "gemms", 1);
    check_report(L, 1);
    lua_newtable(L);
    lua_Integer n = 0;
    for (int64_t i = 0; i < check_report(L, 1)->nevents; i++) {
        if (check_report(L, 1)->events[i].kind == MF_PROF_OP)
            continue;
        push_record(L, true, i);
        lua_rawseti(L, -2, ++n);
    }
    set_printer(L, 1, gemms_tostring);
    return 1;
}

/* prof:save_trace(path) */
static int r_save_trace(lua_State *L)
{
    lmf_check_nargs(L, "save_trace", 2);
    check_report(L, 1);
    const char *path = lmf_check_path(L, 2, "save_trace");
    const MfProfReport *r = check_report(L, 1);   /* converting the path runs Lua */
    lmf_check_written(L, mf_prof_save_trace(r, path));
    return 0;
}

/* ---- mf.profile, mf.profiler ------------------------------------------------ */

static void check_not_running(lua_State *L, const char *who)
{
    if (mf_prof_on)
        luaL_error(L, "%s: the profiler is already running (mf.profiler.stop() ends it; "
                   "profiles do not nest)", who);
}

/* mf.profile(fn, ...) -> report, fn's results. Errors in fn propagate after
 * the profiler has stopped. */
static int l_profile(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    check_not_running(L, "mf.profile");
    int nargs = lua_gettop(L) - 1;
    mf_prof_start();
    int st = lmf_pcall(L, nargs, LUA_MULTRET);
    mf_prof_stop();
    if (st != LUA_OK)
        return lua_error(L);
    int nres = lua_gettop(L);
    push_report(L);
    lua_insert(L, 1);
    return nres + 1;
}

static int l_start(lua_State *L)
{
    check_not_running(L, "mf.profiler.start");
    mf_prof_start();
    return 0;
}

static int l_stop(lua_State *L)
{
    lmf_check_nargs(L, "stop", 0);
    if (!mf_prof_on)
        return luaL_error(L, "mf.profiler.stop: the profiler is not running "
                          "(mf.profiler.start() starts it)");
    mf_prof_stop();
    push_report(L);
    return 1;
}

static int l_peak(lua_State *L)
{
    lmf_check_nargs(L, "peak", 0);
    lua_pushnumber(L, mf_prof_peak_gflops());
    return 1;
}

void lmf_open_profile(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"rows", r_rows}, {"gemms", r_gemms}, {"save_trace", r_save_trace}, {NULL, NULL},
    };
    static const luaL_Reg meta[] = {
        {"__tostring", r_tostring}, {"__gc", r_gc}, {NULL, NULL},
    };
    static const luaL_Reg profiler[] = {
        {"start", l_start}, {"stop", l_stop}, {"peak", l_peak}, {NULL, NULL},
    };
    lmf_box_class(L, REPORT_MT, meta, methods);
    lua_pushcfunction(L, l_profile);
    lua_setfield(L, -2, "profile");
    luaL_newlib(L, profiler);
    lua_setfield(L, -2, "profiler");
}
